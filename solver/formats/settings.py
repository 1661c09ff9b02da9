"""Every method's settings: the fields a task's `settings` object may hold, their defaults, bounds
and descriptions.

Plain data on the ground floor, so the one source of each default is read alike by the solver, the
CLI and Blender's properties (which take default, bounds and description from the field metadata;
see `schema` for the keys). What a setting means is said in its `description`.
"""
from __future__ import annotations

import json
from dataclasses import MISSING, dataclass, field
from typing import Any, Optional

from ..core import splines
from ..core.errors import InvalidInput
from ..core.limits import MAX_MOTION_S, MAX_ROLLOUTS
from ..core.paths import PARTITIONINGS_FILE
from ..core.registry import PLANNERS, check_name
from .scene import GROUPS, MIN_TIMESTEP


def _setting(default, description: str, **meta):
    """A settings field: its default and the metadata users and Blender read."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: json.loads(json.dumps(default)),
                     metadata=dict(meta, description=description))
    return field(default=default, metadata=dict(meta, description=description))


def field_default(f):
    """A dataclass field's default (a fresh one from its factory), or MISSING for a required field."""
    if f.default is not MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not MISSING else MISSING


def default_of(settings_class, name: str):
    """The default of setting `name` of a settings dataclass (for command-line defaults)."""
    return field_default(settings_class.__dataclass_fields__[name])


# -- simulate ------------------------------------------------------------------------------------
SIMULATE_ACTUATION = {"passive": "motor", "hold": "position"}  # mode → the character's actuators


@dataclass
class SimulateSettings:
    duration: float = _setting(2.0, "Seconds of motion to simulate", positive=True, max=MAX_MOTION_S)
    mode: str = _setting("passive", "passive: limp; hold: servos hold the initial pose",
                         choices=tuple(SIMULATE_ACTUATION))
    perturb: float = _setting(0.2, "Std of the initial joint speeds (rad/s); seeds differ by it", nonneg=True)
    chunk: float = _setting(0.25, "Seconds of motion per progress report", positive=True)


# -- contact keyframes (sampling MPC) --------------------------------------------------------------
MAX_PLAN_STEPS = 1000  # planning steps per horizon (and knots): what one iteration's rollouts allocate
MIN_SLOWDOWN = 1e-3  # Γ: at most 1000 control steps' worth of wall time spent planning each control step


def default_partitionings() -> list[list[list[str]]]:
    """The five partitionings of PartwiseMPC (scenes/planner/partitionings.json)."""
    with open(PARTITIONINGS_FILE, encoding="utf-8") as f:
        return json.load(f)["partitionings"]


GRASP_MODES = ("friction", "sticky")


@dataclass
class PlannerSettings:
    rollouts: int = _setting(45, "Rollouts per planning iteration (N)", positive=True, min=2, max=MAX_ROLLOUTS)
    horizon: float = _setting(0.35, "Planning horizon (s)", positive=True)
    knots: int = _setting(3, "Spline knots over the horizon", positive=True, max=MAX_PLAN_STEPS)
    planning_timestep: float = _setting(0.015, "Timestep of the planning model and the control step (s)",
                                        positive=True, min=MIN_TIMESTEP, max=0.05)
    exploration: float = _setting(0.05, "Sampling noise, as a fraction of half the control range", nonneg=True)
    spline: str = _setting("cubic", "Interpolation of the knots", choices=splines.KINDS)
    planner: str = _setting("partwise", "The sampling planner (see `python -m solver run --help`)")
    grasp: str = _setting("friction", "How hands hold free objects: 'friction' (honest physics) or 'sticky' (a weld "
                                      "while a keyframe pairs the hand with the object it touches)",
                          choices=GRASP_MODES)
    budget: Optional[int] = _setting(None, "Planning iterations per control step, fixed; unset: adaptive effort "
                                           "(plan until the cost stops improving)", positive=True, soft_max=100)
    max_iterations: int = _setting(6, "Adaptive effort: the most planning iterations per control step (twice as "
                                      "many after a keyframe switch or while the state degrades)", positive=True,
                                   max=1000)
    improvement: float = _setting(0.02, "Adaptive effort: plan again while an iteration improves the plan's cost by "
                                        "more than this fraction", nonneg=True)
    boost_s: float = _setting(0.5, "Adaptive effort: seconds of extra effort after a keyframe switch", nonneg=True)
    degrade_rise: float = _setting(0.1, "Adaptive effort: extra effort when the best cost rises by more than this "
                                        "fraction from one control step to the next", nonneg=True)
    fall_speed: float = _setting(0.5, "Adaptive effort: extra effort while the head drops faster than this (m/s)",
                                 nonneg=True)
    anneal: float = _setting(0.6, "Adaptive effort: sampling noise × this per extra iteration of a control step",
                             positive=True, max=1.0)
    wide_fraction: float = _setting(0.2, "Adaptive effort: share of the samples that keep the full noise",
                                    nonneg=True, max=1.0)
    speed_limit: float = _setting(2.5, "Speed limit of the character's bodies (m/s): faster ones cost (speed_weight), "
                                       "so that limbs do not whip into the scene", positive=True)
    speed_weight: float = _setting(10.0, "Weight of the speed-limit term: ½ (speed − speed_limit)² per body over the "
                                         "limit, in the body's group (0: off; measured in benchmarks/RESULTS.md)",
                                   nonneg=True)
    particles: int = _setting(1, "Particles: whole runs attempting each keyframe segment from the last one's "
                                 "checkpoints; those that reach it are resampled by cost (1: a single run)",
                              positive=True, max=64, soft_max=8)
    retries: int = _setting(2, "Retries of a failed keyframe segment from the last reached keyframe, each with "
                               "twice the effort and fresh noise, before backing up one keyframe", nonneg=True, max=8)
    backups: int = _setting(6, "How often a solve may back up one keyframe and redo the previous segment with fresh "
                               "noise before it gives up (the first segment starts over)", nonneg=True, max=16)
    retry_contact: float = _setting(1.0, "From the second retry of a contact keyframe's segment on, each retry "
                                         "weighs its contact term this much more than the keyframe does, per retry "
                                         "past the first (1: the second retry ×2, a third ×3), so that it presses on "
                                         "to the mark where the tries settled short of it (0: the keyframe's own "
                                         "weight)", nonneg=True, max=10.0)
    give_up_fallen_s: float = _setting(1.0, "A keyframe fails once the head has been below 0.5 m this long where "
                                            "the keyframe asks the character to stay up, so the retry starts sooner "
                                            "(0: only the time limit)", nonneg=True, max=MAX_MOTION_S)
    give_up_stalled_s: float = _setting(0.0, "A keyframe fails once its distance has gone this long without coming "
                                             "a tenth of its tolerance closer, so the retry starts sooner (0: only "
                                             "the time limit)", nonneg=True, max=MAX_MOTION_S)
    overtime: float = _setting(1.0, "A keyframe still closing in at its time limit (a tenth of its tolerance closer "
                                    "within the last 2 s) runs on, up to this fraction of its time limit longer, "
                                    "before it fails (0: the time limit is final)", nonneg=True, max=10.0)
    slowdown: Optional[float] = _setting(None, "Γ: plan for control_dt / Γ of wall time per control step instead "
                                               "of a fixed budget (interactive preview)", positive=True,
                                         min=MIN_SLOWDOWN)
    partitionings: Optional[list[list[list[str]]]] = _setting(None, "Body-part partitionings of the partwise "
                                                                    "planner (default: the paper's five)")
    planner_options: dict[str, Any] = _setting({}, "Settings of the chosen planner beyond these (its `Options`)")

    def check(self, path):
        check_name("planner", PLANNERS, self.planner, f"{path}.planner")
        if self.horizon < 2 * self.planning_timestep:
            raise InvalidInput(f"{path}.horizon", f"{self.horizon} s is shorter than two planning steps "
                               f"({2 * self.planning_timestep} s)")
        steps = self.horizon / self.planning_timestep
        if steps > MAX_PLAN_STEPS:
            raise InvalidInput(f"{path}.horizon", f"{self.horizon} s is {steps:.4g} planning steps of "
                               f"{self.planning_timestep} s; at most {MAX_PLAN_STEPS}")
        if self.knots < 2 and self.spline != "zero":
            raise InvalidInput(f"{path}.knots", f"a {self.spline} spline needs at least 2 knots")
        for i, partitioning in enumerate(self.partitionings_or_default()):
            seen = [g for part in partitioning for g in part]
            for g in seen:
                if g not in GROUPS:
                    raise InvalidInput(f"{path}.partitionings[{i}]", f"unknown group '{g}' (have: {', '.join(GROUPS)})")
            if sorted(seen) != sorted(GROUPS):
                raise InvalidInput(f"{path}.partitionings[{i}]", "must cover every group exactly once")

    def partitionings_or_default(self) -> list[list[list[str]]]:
        return self.partitionings if self.partitionings is not None else default_partitionings()


# -- assisted keyframes (CMA-ES) -------------------------------------------------------------------
BETA_MODES = ("time", "global", "none")


@dataclass
class AssistSettings:
    population: int = _setting(48, "CMA-ES population: rollouts per generation", positive=True, min=4,
                               max=MAX_ROLLOUTS)
    pieces: int = _setting(10, "n_a: pieces of the residual and of β(t) over the motion", positive=True, min=2,
                           max=100)  # CMA-ES keeps a covariance over pieces × joints parameters
    lambda_beta: float = _setting(1.0, "λ_β: penalty on assist forces", nonneg=True)
    lambda_dtheta: float = _setting(0.01, "λ_Δθ: penalty on the residual PD targets", nonneg=True)
    lambda_dt: float = _setting(0.1, "λ_Δt: penalty on keyframe timing changes", nonneg=True)
    beta_mode: str = _setting("time", "Assist modulation: time-indexed β(t), one global β, or none",
                              choices=BETA_MODES)
    curriculum: bool = _setting(True, "Show early keyframes first (horizon curriculum)")
    samples: int = _setting(12000, "Rollout budget per alternative (max_wall_s caps it)", positive=True,
                            soft_min=48)
    # The sample budget decides, the wall time only guards: a search capped by wall time ends where the
    # machine's speed and load let it, so a slower or busier machine finds worse motions and the same
    # seed another motion in another run. The guard leaves a full budget room on a slow machine beside
    # other work (figures: benchmarks/RESULTS.md, "Assisted keyframes: CMA-ES").
    max_wall_s: float = _setting(600.0, "Time budget per alternative (s)", positive=True, soft_min=1.0)
    # A search that settles on a wrong motion (an arm caught between thigh and chest) stays there; a
    # fresh start with noise of its own rarely does (benchmarks/RESULTS.md, "Assisted keyframes: CMA-ES").
    retries: int = _setting(1, "Searches started over with fresh noise when one misses 5% of the unoptimized "
                               "keyframe error, each with the full budget; the closest is kept", nonneg=True, max=4)
    # Separable CMA-ES: over ~220 parameters in ~200 generations a full covariance barely adapts, a
    # diagonal one learns far faster (benchmarks/RESULTS.md, "Assisted keyframes: CMA-ES").
    cma_diagonal: bool = _setting(True, "Separable CMA-ES (diagonal covariance)")
    sigma0: float = _setting(0.15, "CMA-ES initial step: the residual only corrects, the lead removes the lag",
                             positive=True)
    theta_scale: float = _setting(1.0, "Radians of residual per unit of the search vector", positive=True)
    # Clamped at the limit, a servo brakes an extension before the joint gets there (its damping
    # outweighs its spring) and the character cannot jump; the paper allows Δθ ∈ [−π, π].
    target_margin: float = _setting(3.141592653589793, "How far (rad) PD targets may lie past a joint's limits",
                                    nonneg=True)
    assist_kp_per_kg: float = _setting(400.0, "Assist spring stiffness per kg of link mass", nonneg=True)
    assist_kv_per_kg: float = _setting(40.0, "Assist spring damping per kg of link mass", nonneg=True)
    reference_lead: bool = _setting(True, "Servos and assist springs damp towards the reference's velocity "
                                          "(targets read kv/kp ahead) instead of towards rest")
    lambda_beta_start: float = _setting(1.0, "The final stage starts at λ_β × this and raises it to λ_β over "
                                             "its first part: assist finds the motion, then is priced out "
                                             "(1 = off)", positive=True, max=1.0)
    physical: bool = _setting(True, "Also make each solution physical: sampling MPC tracks it with no assist "
                                    "(the track method's settings less its balance and contact terms and back-ups) "
                                    "and each keyframe gets a verdict")
    physical_retries: int = _setting(1, "Physical versions that stop short of a keyframe or end further than 10% of "
                                        "the unoptimized keyframe error from the sketch are tracked again from the "
                                        "start with fresh noise and the keyframes pulled three times as hard, at "
                                        "most this many times; the best is kept",
                                     nonneg=True, max=4)
    # Whether physics can follow an assisted motion is the motion's doing more than the tracker's: the
    # same get-up tracked with other settings or noise mostly lands the same, another search's get-up
    # often does not. Two plans whose physical versions stop at the same keyframe say it is beyond the
    # character: no more plans there (the jumps plan twice, as with 1); a get-up whose two plans both
    # land past 10% gets a third (benchmarks/RESULTS.md, "The tracking defaults and why").
    replans: int = _setting(2, "Assisted searches done anew (with fresh noise) where the search reached the sketch "
                               "but its physical version still stops short or ends further than 10% from it after "
                               "its retries, unless two plans' physical versions stopped at the same keyframe; the "
                               "plan with the better physical version is kept", nonneg=True, max=4)


# -- tracking a reference motion (sampling MPC) -----------------------------------------------------
@dataclass
class TrackSettings(PlannerSettings):
    """The contact solve's planner settings (fewer retries and back-ups by default: a tracked motion
    is told where to go, and where physics cannot go more tries rarely help), and what the tracking
    objective weighs."""
    # A standing body tips over in about √(0.85 m / g) ≈ 0.3 s: a horizon of 0.35 s barely sees a tip it
    # could still stop, and the keyed step-up is lost to such tips (benchmarks/RESULTS.md, "The tracking
    # defaults and why").
    horizon: float = _setting(0.6, "Planning horizon (s)", positive=True)
    retries: int = _setting(1, "Retries of a failed keyframe segment from the last reached keyframe, each with "
                               "twice the effort and fresh noise, before backing up one keyframe", nonneg=True, max=8)
    backups: int = _setting(1, "How often a solve may back up one keyframe and redo the previous segment with fresh "
                               "noise before it gives up (the first segment starts over)", nonneg=True, max=16)
    # A reference already says where to go: planning on while an iteration gains 2-5% buys no success,
    # only wall time (benchmarks/RESULTS.md, "The tracking defaults and why").
    improvement: float = _setting(0.05, "Adaptive effort: plan again while an iteration improves the plan's cost by "
                                        "more than this fraction", nonneg=True)
    w_joint: float = _setting(3.0, "Tracking: weight of each hinge angle's error (smooth-abs, rad)", nonneg=True)
    w_body: float = _setting(2.0, "Tracking: weight of each body's position error (smooth-abs, m)", nonneg=True)
    w_root_pos: float = _setting(40.0, "Tracking: weight of the root's position error (smooth-abs, m)", nonneg=True)
    w_root_rot: float = _setting(4.0, "Tracking: weight of the root's orientation error (smooth-abs, rad)",
                                 nonneg=True)
    w_contact: float = _setting(10.0, "Tracking: extra weight of a body's position error while it touches the scene "
                                      "in the reference (smooth-abs, m): feet stay where the reference plants them",
                                nonneg=True)
    w_com: float = _setting(20.0, "Tracking: weight of the horizontal error of the centre of mass (smooth-abs, m): "
                                  "the weight where the reference puts it", nonneg=True)
    w_com_vel: float = _setting(0.5, "Tracking: weight of the horizontal centre-of-mass velocity error (½ square, "
                                     "m/s)", nonneg=True)
    com_on_support: bool = _setting(True, "Tracking: the centre of mass is held where the reference has it relative "
                                          "to the bodies it plants (a foot set down 2 cm off moves the balance point "
                                          "with it), not at its place in the world")
    w_joint_vel: float = _setting(0.01, "Tracking: weight of the joint velocity error (½ square, rad/s)",
                                  nonneg=True)
    w_root_vel: float = _setting(0.1, "Tracking: weight of the root velocity error (½ square, m/s)", nonneg=True)
    w_penetration: float = _setting(0.0, "Tracking: weight of each body's sinking into anything past 1 cm (square, "
                                         "cm) while the reference keeps it off the scene: a foot set down, not "
                                         "slammed. 30 in an assisted motion's physical version; 0 by default, as it "
                                         "is measured there only", nonneg=True)
    w_control: float = _setting(1.0, "Tracking: weight of the planner's correction — of the PD targets' offsets "
                                     "from the reference (½ square, rad), or of the torques (MuJoCo MPC's cosh norm)",
                                nonneg=True)
    actuation: str = _setting("position", "Tracking: position — PD servos whose targets are the reference's joint "
                                          "angles, the planner correcting them; motor — the planner's torques alone",
                              choices=("position", "motor"))
    target_margin: float = _setting(0.5, "Tracking with PD servos: how far (rad) targets may lie past a joint's "
                                         "limits", nonneg=True)
    key_boost: float = _setting(10.0, "Tracking: near a keyframe's time, the pose and position terms count again, "
                                     "× this × its weight, towards the keyframe's own pose", nonneg=True)
    key_window: float = _setting(0.25, "Tracking: a keyframe counts as reached up to this long after its time (s)",
                                 positive=True, max=MAX_MOTION_S)
    key_every: float = _setting(1.0, "Tracking: where the task names no keyframes, one at the reference's pose "
                                     "every this many seconds (and at its end)", positive=True, max=MAX_MOTION_S)
    pos_tolerance: float = _setting(0.15, "Tracking: a keyframe's root position tolerance (m)", positive=True)
    angle_tolerance: float = _setting(0.35, "Tracking: a keyframe's root orientation tolerance (rad)",
                                      positive=True)
    joint_tolerance: float = _setting(0.25, "Tracking: a keyframe's RMS hinge angle tolerance (rad)",
                                      positive=True)
