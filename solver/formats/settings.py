"""Every method's settings: the fields a task's `settings` object may hold, their defaults, bounds
and descriptions.

Plain data on the ground floor, so the one source of each default is read alike by the solver, the
CLI and Blender's properties (which take default, bounds and description from the field metadata;
see `schema` for the keys). What a setting means is said in its `description`.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import MISSING, dataclass, field
from typing import Any, Optional

from ..core import splines
from ..core.errors import InvalidInput
from ..core.limits import MAX_MOTION_S, MAX_ROLLOUTS
from ..core.paths import PARTITIONINGS_FILE
from ..core.registry import PLANNERS, check_name
from .scene import GROUPS, MIN_TIMESTEP


def setting(default, description: str, **meta):
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
    """The default of setting `name` of a settings dataclass or of a method's settings (its groups')."""
    return setting_field(settings_class, name)[1]


# -- simulate ------------------------------------------------------------------------------------
SIMULATE_ACTUATION = {"passive": "motor", "hold": "position"}  # mode → the character's actuators


@dataclass
class SimulateSettings:
    duration: float = setting(2.0, "Seconds of motion to simulate", positive=True, max=MAX_MOTION_S)
    mode: str = setting("passive", "passive: limp; hold: servos hold the initial pose",
                        choices=tuple(SIMULATE_ACTUATION))
    perturb: float = setting(0.2, "Std of the initial joint speeds (rad/s); seeds differ by it", nonneg=True)
    chunk: float = setting(0.25, "Seconds of motion per progress report", positive=True)


# -- contact keyframes (sampling MPC) --------------------------------------------------------------
MAX_PLAN_STEPS = 1000  # planning steps per horizon (and knots): what one iteration's rollouts allocate
MIN_SLOWDOWN = 1e-3  # Γ: at most 1000 control steps' worth of wall time spent planning each control step


def default_partitionings() -> list[list[list[str]]]:
    """The five partitionings of PartwiseMPC (scenes/planner/partitionings.json)."""
    with open(PARTITIONINGS_FILE, encoding="utf-8") as f:
        return json.load(f)["partitionings"]


GRASP_MODES = ("friction", "sticky")


# Each group below is what one part of the sampling MPC reads; a method's settings compose the groups
# it uses (`ContactSettings`, `TrackSettings`). A task file keeps them flat — every name is unique
# across the groups of a method — and `method_settings` routes each name to its group.
@dataclass
class SamplingSettings:
    """The planner and what it samples: read by the planners, the control space and the planning model."""
    rollouts: int = setting(45, "Rollouts per planning iteration (N)", positive=True, min=2, max=MAX_ROLLOUTS)
    horizon: float = setting(0.35, "Planning horizon", unit="s", positive=True)
    knots: int = setting(3, "Spline knots over the horizon", positive=True, max=MAX_PLAN_STEPS)
    planning_timestep: float = setting(0.015, "Timestep of the planning model and the control step", unit="s",
                                       positive=True, min=MIN_TIMESTEP, max=0.05)
    exploration: float = setting(0.05, "Sampling noise, as a fraction of half the control range", nonneg=True)
    spline: str = setting("cubic", "Interpolation of the knots", choices=splines.KINDS)
    planner: str = setting("partwise", "The sampling planner", choices=tuple(PLANNERS))
    partitionings: Optional[list[list[list[str]]]] = setting(None, "Body-part partitionings of the partwise "
                                                                   "planner (default: the paper's five)")
    planner_options: dict[str, Any] = setting({}, "Settings of the chosen planner beyond these (its `Options`)")

    def check(self, path):
        check_name("planner", PLANNERS, self.planner, f"{path}.planner")
        self.check_horizon(self.horizon, f"{path}.horizon")
        if self.knots < 2 and self.spline != "zero":
            raise InvalidInput(f"{path}.knots", f"a {self.spline} spline needs at least 2 knots")
        for i, partitioning in enumerate(self.partitionings_or_default()):
            seen = [g for part in partitioning for g in part]
            for g in seen:
                if g not in GROUPS:
                    raise InvalidInput(f"{path}.partitionings[{i}]", f"unknown group '{g}' (have: {', '.join(GROUPS)})")
            if sorted(seen) != sorted(GROUPS):
                raise InvalidInput(f"{path}.partitionings[{i}]", "must cover every group exactly once")

    def check_horizon(self, horizon: float, path: str) -> None:
        """Refuse a planning horizon (the settings', or a keyframe's own) these planning steps cannot cover."""
        if horizon < 2 * self.planning_timestep:
            raise InvalidInput(path, f"{horizon} s is shorter than two planning steps ({2 * self.planning_timestep} s)")
        steps = horizon / self.planning_timestep
        if steps > MAX_PLAN_STEPS:
            raise InvalidInput(path, f"{horizon} s is {steps:.4g} planning steps of {self.planning_timestep} s; "
                               f"at most {MAX_PLAN_STEPS}")

    def partitionings_or_default(self) -> list[list[list[str]]]:
        return self.partitionings if self.partitionings is not None else default_partitionings()


@dataclass
class EffortSettings:
    """How many planning iterations each control step gets: read by `mpc.effort` and the agent."""
    budget: Optional[int] = setting(None, "Planning iterations per control step, fixed; unset: adaptive effort "
                                          "(plan until the cost stops improving)", positive=True, soft_max=100)
    max_iterations: int = setting(6, "Adaptive effort: the most planning iterations per control step (twice as "
                                     "many after a keyframe switch or while the state degrades)", positive=True,
                                  max=1000)
    improvement: float = setting(0.02, "Adaptive effort: plan again while an iteration improves the plan's cost by "
                                       "more than this fraction", nonneg=True)
    boost_s: float = setting(0.5, "Adaptive effort: seconds of extra effort after a keyframe switch", unit="s",
                             nonneg=True)
    degrade_rise: float = setting(0.1, "Adaptive effort: extra effort when the best cost rises by more than this "
                                       "fraction from one control step to the next", nonneg=True)
    fall_speed: float = setting(0.5, "Adaptive effort: extra effort while the head drops faster than this",
                                unit="m/s", nonneg=True)
    anneal: float = setting(0.6, "Adaptive effort: sampling noise × this per extra iteration of a control step",
                            positive=True, max=1.0)
    wide_fraction: float = setting(0.2, "Adaptive effort: share of the samples that keep the full noise",
                                   nonneg=True, max=1.0)
    slowdown: Optional[float] = setting(None, "Γ: plan each control step for its duration (planning_timestep) / Γ "
                                              "of wall time instead of a number of iterations (interactive "
                                              "preview)", positive=True, min=MIN_SLOWDOWN)


@dataclass
class RecoverySettings:
    """What a solve does when a keyframe is not reached: read by `mpc.recovery` and the keyframe watch."""
    particles: int = setting(1, "Particles: whole runs attempting each keyframe segment from the last one's "
                                "checkpoints; those that reach it are resampled by cost (1: a single run)",
                             positive=True, max=64, soft_max=8)
    segment_retries: int = setting(2, "Retries of a failed keyframe segment from the last reached keyframe, each "
                                      "with twice the effort and fresh noise, before backing up one keyframe",
                                   nonneg=True, max=8)
    backups: int = setting(6, "How often a solve may back up one keyframe and redo the previous segment with fresh "
                              "noise before it gives up (the first segment starts over)", nonneg=True, max=16)
    retry_contact: float = setting(1.0, "From the second retry of a contact keyframe's segment on, each retry "
                                        "weighs its contact term this much more than the keyframe does, per retry "
                                        "past the first (1: the second retry ×2, a third ×3), so that it presses on "
                                        "to the mark where the tries settled short of it (0: the keyframe's own "
                                        "weight)", nonneg=True, max=10.0)
    give_up_fallen_s: float = setting(0.1, "A keyframe fails once the head has been below 0.5 m, the torso lying, "
                                           "this long where the keyframe asks the character to stay up, and at once "
                                           "where a knee, a hand or any body but the feet catches it on the floor, "
                                           "so the retry starts sooner and a clip that falls is not kept (0: only "
                                           "the time limit)", unit="s", nonneg=True, max=MAX_MOTION_S)
    give_up_stalled_s: float = setting(0.0, "A keyframe fails once its distance has gone this long without coming "
                                            "a tenth of its tolerance closer, so the retry starts sooner (0: only "
                                            "the time limit)", unit="s", nonneg=True, max=MAX_MOTION_S)
    give_up_style_s: float = setting(1.0, "A keyframe whose pairs are met but not its style (a stand met in a "
                                          "crouch) fails once its posture has gone this long without coming closer "
                                          "to the style, so the retry starts sooner (0: only the time limit)",
                                     unit="s", nonneg=True, max=MAX_MOTION_S)
    overtime: float = setting(1.0, "A keyframe still closing in at its time limit (a tenth of its tolerance closer "
                                   "within the last 2 s) runs on, up to this fraction of its time limit longer, "
                                   "before it fails (0: the time limit is final)", nonneg=True, max=10.0)


@dataclass
class ContactTermSettings:
    """The contact objective's own terms beyond the keyframes' (`mpc.objectives.contact`)."""
    speed_limit: float = setting(2.5, "Speed limit of the character's bodies: faster ones cost (speed_weight), "
                                      "so that limbs do not whip into the scene", unit="m/s", positive=True)
    speed_weight: float = setting(10.0, "Weight of the speed-limit term: ½ (speed − speed_limit)² per body over the "
                                        "limit, in the body's group (0: off)", nonneg=True)


@dataclass
class GraspSettings:
    """How the planning model lets hands hold free objects (`methods.contact.planning_models`)."""
    grasp: str = setting("friction", "How hands hold free objects: 'friction' (honest physics) or 'sticky' (a weld "
                                     "while a keyframe pairs the hand with the object it touches)",
                         choices=GRASP_MODES)


@dataclass
class ContactSettings:
    """Contact keyframes: the sampling MPC's groups and the contact objective's terms."""
    sampling: SamplingSettings = field(default_factory=SamplingSettings)
    effort: EffortSettings = field(default_factory=EffortSettings)
    recovery: RecoverySettings = field(default_factory=RecoverySettings)
    terms: ContactTermSettings = field(default_factory=ContactTermSettings)
    grasp: GraspSettings = field(default_factory=GraspSettings)

# -- assisted keyframes (CMA-ES) -------------------------------------------------------------------
BETA_MODES = ("time", "global", "none")


@dataclass
class AssistSettings:
    population: int = setting(48, "CMA-ES population: rollouts per generation", positive=True, min=4,
                              max=MAX_ROLLOUTS)
    pieces: int = setting(10, "n_a: pieces of the residual and of β(t) over the motion", positive=True, min=2,
                          max=100)  # CMA-ES keeps a covariance over pieces × joints parameters
    lambda_beta: float = setting(1.0, "λ_β: penalty on assist forces", nonneg=True)
    lambda_dtheta: float = setting(0.01, "λ_Δθ: penalty on the residual PD targets", nonneg=True)
    lambda_dt: float = setting(0.1, "λ_Δt: penalty on keyframe timing changes", nonneg=True)
    w_apex: float = setting(10.0, "Weight, × the key's own, of an airborne key's apex falling short: the square of "
                                  "how far (m) the root's highest point between the keys around it (up to the key "
                                  "itself while it is the last one scored) stays below the keyed root height (0: "
                                  "off)", nonneg=True)
    beta_mode: str = setting("time", "Assist modulation: time-indexed β(t), one global β, or none",
                             choices=BETA_MODES)
    curriculum: bool = setting(True, "Show early keyframes first (horizon curriculum)")
    samples: int = setting(12000, "Rollout budget per alternative (max_wall_s caps it)", positive=True,
                           soft_min=48)
    # The sample budget decides, the wall time only guards: a search capped by wall time ends where the
    # machine's speed and load let it, so a slower or busier machine finds worse motions and the same
    # seed another motion in another run. The guard leaves a full budget room on a slow machine beside
    # other work (figures: benchmarks/RESULTS.md, "Assisted keyframes: CMA-ES").
    max_wall_s: float = setting(600.0, "Time budget per alternative (s)", positive=True, soft_min=1.0)
    # A search that settles on a wrong motion (an arm caught between thigh and chest) stays there; a
    # fresh start with noise of its own rarely does (benchmarks/RESULTS.md, "Assisted keyframes: CMA-ES").
    search_restarts: int = setting(1, "Searches started over with fresh noise when one misses 5% of the "
                                      "unoptimized keyframe error, each with the full budget; the closest is kept",
                                   nonneg=True, max=4)
    # Separable CMA-ES: over ~220 parameters in ~200 generations a full covariance barely adapts, a
    # diagonal one learns far faster (benchmarks/RESULTS.md, "Assisted keyframes: CMA-ES").
    cma_diagonal: bool = setting(True, "Separable CMA-ES (diagonal covariance)")
    sigma0: float = setting(0.15, "CMA-ES initial step: the residual only corrects, the lead removes the lag",
                            positive=True)
    theta_scale: float = setting(1.0, "Radians of residual per unit of the search vector", positive=True)
    # Clamped at the limit, a servo brakes an extension before the joint gets there (its damping
    # outweighs its spring) and the character cannot jump; the paper allows Δθ ∈ [−π, π].
    target_margin: float = setting(3.141592653589793, "How far (rad) PD targets may lie past a joint's limits",
                                   nonneg=True)
    assist_kp_per_kg: float = setting(400.0, "Assist spring stiffness per kg of link mass", nonneg=True)
    assist_kv_per_kg: float = setting(40.0, "Assist spring damping per kg of link mass", nonneg=True)
    reference_lead: bool = setting(True, "Servos and assist springs damp towards the reference's velocity "
                                         "(targets read kv/kp ahead) instead of towards rest")
    lambda_beta_start: float = setting(1.0, "The final stage starts at λ_β × this and raises it to λ_β over "
                                            "its first part: assist finds the motion, then is priced out "
                                            "(1 = off)", positive=True, max=1.0)
    physical: bool = setting(True, "Also make each solution physical: sampling MPC tracks it with no assist "
                                   "(the track method's settings less its balance and contact terms and back-ups) "
                                   "and each keyframe gets a verdict")
    physical_settings: dict[str, Any] = setting({}, "The physical version's tracking: the track method's settings, by "
                                                    "name, over those it takes for an assisted motion (fewer "
                                                    "`rollouts` for a quicker look, say)")
    physical_retries: int = setting(1, "Physical versions that stop short of a keyframe or end further than 10% of "
                                       "the unoptimized keyframe error from the sketch are tracked again from the "
                                       "start with fresh noise and the keyframes pulled three times as hard, at "
                                       "most this many times; the best is kept",
                                    nonneg=True, max=4)
    # Whether physics can follow an assisted motion is the motion's doing more than the tracker's: the
    # same get-up tracked with other settings or noise mostly lands the same, another search's get-up
    # often does not. Two plans whose physical versions stop at the same keyframe say it is beyond the
    # character: no more plans there (the jumps plan twice, as with 1); a get-up whose two plans both
    # land past 10% gets a third (benchmarks/RESULTS.md, "The tracking defaults and why").
    replans: int = setting(2, "Assisted searches done anew (with fresh noise) where the search reached the sketch "
                              "but its physical version still stops short or ends further than 10% from it after "
                              "its retries, unless two plans' physical versions stopped at the same keyframe; the "
                              "plan with the better physical version is kept", nonneg=True, max=4)


# -- tracking a reference motion (sampling MPC) -----------------------------------------------------
@dataclass
class TrackingTermSettings:
    """What the tracking objective weighs (`mpc.objectives.tracking`)."""
    w_joint: float = setting(3.0, "Weight of each hinge angle's error (smooth-abs, rad)", nonneg=True)
    w_body: float = setting(12.0, "Weight of each body's position error (smooth-abs, m): a capture's swinging "
                                  "feet and hands where it has them, not flung to keep balance", nonneg=True)
    w_root_pos: float = setting(40.0, "Weight of the root's position error (smooth-abs, m)", nonneg=True)
    w_root_rot: float = setting(4.0, "Weight of the root's orientation error (smooth-abs, rad)", nonneg=True)
    w_contact: float = setting(10.0, "Extra weight of a body's position error while it touches the scene in the "
                                     "reference (smooth-abs, m): feet stay where the reference plants them",
                               nonneg=True)
    w_slip: float = setting(20.0, "Weight of the horizontal speed of a body the reference has at rest on the scene, "
                                  "once it is down there (within 2 cm of the reference's height; ½ square, m/s): a "
                                  "planted foot set down a little off stays where it is set down rather than "
                                  "sliding onto the reference's spot", nonneg=True)
    w_anchor: float = setting(100.0, "Weight of how far a body the reference keeps planted gets, over the plan, from "
                                      "where it is down at the plan's start: its geoms' centres moved, on average "
                                      "(smooth-abs, m): a planted foot's slow creep, or its toes or heel lifting, "
                                      "costs as a quick slide does", nonneg=True)
    w_com: float = setting(20.0, "Weight of the horizontal error of the centre of mass (smooth-abs, m): the weight "
                                 "where the reference puts it", nonneg=True)
    w_com_vel: float = setting(0.5, "Weight of the horizontal centre-of-mass velocity error (½ square, m/s)",
                               nonneg=True)
    com_on_support: bool = setting(True, "The centre of mass is held where the reference has it relative to the "
                                         "bodies it plants (a foot set down 2 cm off moves the balance point with "
                                         "it), not at its place in the world")
    w_joint_vel: float = setting(0.01, "Weight of the joint velocity error (½ square, rad/s)", nonneg=True)
    w_root_vel: float = setting(0.1, "Weight of the root velocity error (½ square, m/s)", nonneg=True)
    w_penetration: float = setting(30.0, "Weight of each body's sinking into anything past 1 cm (square, cm) while "
                                         "the reference keeps it off the scene: a foot set down, not slammed, a foot "
                                         "kept out of the other (0: off, and the planning model carries no contact "
                                         "sensors)", nonneg=True)
    w_control: float = setting(1.0, "Weight of the planner's correction — of the PD targets' offsets from the "
                                    "reference (½ square, rad), or of the torques (MuJoCo MPC's cosh norm)",
                               nonneg=True)
    key_boost: float = setting(10.0, "Near a keyframe's time, the pose and position terms count again, × this × "
                                     "its weight, towards the keyframe's own pose", nonneg=True)


@dataclass
class ServoSettings:
    """How the tracked character is driven (the planning model's actuators)."""
    actuation: str = setting("position", "position — PD servos whose targets are the reference's joint angles, the "
                                          "planner correcting them; motor — the planner's torques alone",
                             choices=("position", "motor"))
    target_margin: float = setting(0.5, "With PD servos: how far targets may lie past a joint's limits", unit="rad",
                                   nonneg=True)


@dataclass
class TrackedKeyframeSettings:
    """The keyframes a tracking is judged by (`methods.track.track_keyframes`, the objective's boost)."""
    key_window: float = setting(0.25, "A keyframe counts as reached up to this long after its time", unit="s",
                                positive=True, max=MAX_MOTION_S)
    key_every: float = setting(1.0, "A keyframe at the reference's pose every this many seconds (and at its end), "
                                    "where the task names none or between its own (stand_ins)", unit="s",
                               positive=True, max=MAX_MOTION_S)
    stand_ins: bool = setting(True, "Between the task's own keyframes too (the frames marked Must Hit), the "
                                    "reference's pose every key_every seconds is a keyframe: a capture with a few "
                                    "frames marked is still tracked in short segments, each checkpointed and "
                                    "retried on its own. Never for a sketch reference (its in-betweens are "
                                    "interpolation, not poses to hit); Blender turns it off for keyed poses")
    pos_tolerance: float = setting(0.15, "A keyframe's root position tolerance", unit="m", positive=True)
    angle_tolerance: float = setting(0.35, "A keyframe's root orientation tolerance", unit="rad", positive=True)
    joint_tolerance: float = setting(0.25, "A keyframe's RMS hinge angle tolerance", unit="rad", positive=True)


@dataclass
class TrackSettings:
    """Make physical: the sampling MPC's groups with tracking's own defaults, and what tracking weighs.

    A tracked motion is told where to go, so it gets fewer retries and back-ups (where physics cannot
    go, more tries rarely help), plans on only while an iteration gains 5% (more buys no success, only
    wall time) and sees 0.6 s ahead: a standing body tips over in about √(0.85 m / g) ≈ 0.3 s, and a
    horizon of 0.35 s barely sees a tip it could still stop. It plans on a 10 ms step, not 15: a capture's
    swinging foot moves several centimetres a step, and the coarser planning model puts a landing foot
    twice as far from where the simulation puts it (benchmarks/RESULTS.md, "The tracking defaults and why")."""
    sampling: SamplingSettings = field(default_factory=lambda: SamplingSettings(horizon=0.6, planning_timestep=0.01))
    effort: EffortSettings = field(default_factory=lambda: EffortSettings(improvement=0.05))
    recovery: RecoverySettings = field(default_factory=lambda: RecoverySettings(segment_retries=1, backups=1))
    terms: TrackingTermSettings = field(default_factory=TrackingTermSettings)
    servos: ServoSettings = field(default_factory=ServoSettings)
    keyframes: TrackedKeyframeSettings = field(default_factory=TrackedKeyframeSettings)


# -- flat task files ----------------------------------------------------------------------------------
# Names an earlier task file may use for a setting since renamed (one meaning per name).
RENAMED = {
    "ContactSettings": {"retries": "segment_retries"},
    "TrackSettings": {"retries": "segment_retries"},
    "AssistSettings": {"retries": "search_restarts"},
}


def groups_of(settings_class) -> dict[str, dataclasses.Field]:
    """Group name → its field in a method's settings (each field a settings dataclass); empty for a
    method whose settings are one flat class."""
    fields = dataclasses.fields(settings_class)
    if fields and all(f.default_factory is not MISSING and dataclasses.is_dataclass(f.default_factory())
                      for f in fields):
        return {f.name: f for f in fields}
    return {}


def setting_field(settings_class, name: str) -> tuple[dataclasses.Field, Any]:
    """The field that declares setting `name` of a method's settings, and its default for that method."""
    for group in groups_of(settings_class).values():
        default = group.default_factory()
        for f in dataclasses.fields(default):
            if f.name == name:
                return f, getattr(default, name)
    f = settings_class.__dataclass_fields__[name]
    return f, field_default(f)


def setting_names(settings_class) -> list[str]:
    """Every setting a method's task file may name, in declaration order."""
    groups = groups_of(settings_class)
    if not groups:
        return [f.name for f in dataclasses.fields(settings_class)]
    return [f.name for g in groups.values() for f in dataclasses.fields(g.default_factory())]


def method_settings(settings_class, data, path: str = "settings"):
    """A method's settings from a task file's flat `settings` object: each name routed to the group
    that declares it, checked there (errors name the key as the file has it), the rest the method's
    defaults. Names renamed since (`RENAMED`) are read as their new name."""
    from ..core import schema
    if not isinstance(data, dict):
        raise InvalidInput(path, f"must be an object, got {schema.describe(data)}")
    renamed = RENAMED.get(settings_class.__name__, {})
    data = {renamed.get(k, k): v for k, v in data.items()}
    groups = groups_of(settings_class)
    if not groups:
        return schema.from_dict(settings_class, data, path)
    names = setting_names(settings_class)
    for key in data:
        if key not in names:
            raise InvalidInput(f"{path}.{key}", f"unknown field (expected one of: {', '.join(names)})")
    built = {}
    for name, group in groups.items():
        default = group.default_factory()
        mine = {f.name for f in dataclasses.fields(default)}
        merged = dict(schema.to_dict(default), **{k: v for k, v in data.items() if k in mine})
        built[name] = schema.from_dict(type(default), merged, path)
    return settings_class(**built)


def flat_settings(settings) -> dict[str, Any]:
    """A method's settings as the flat object of a task file (every setting, by name)."""
    from ..core import schema
    if not groups_of(type(settings)):
        return schema.to_dict(settings)
    return {k: v for f in dataclasses.fields(settings) for k, v in schema.to_dict(getattr(settings, f.name)).items()}


def contact_settings(**flat) -> ContactSettings:
    """ContactSettings from flat names (scripts, tests): `contact_settings(rollouts=16, planner="cem")`."""
    return method_settings(ContactSettings, flat)


def track_settings(**flat) -> TrackSettings:
    """TrackSettings from flat names (scripts, tests)."""
    return method_settings(TrackSettings, flat)


# Quality: Final is every method's defaults, for the clip to keep; Draft is a plausible first motion quickly, for
# a look (`solver run --draft`, Blender's Quality menu): fewer samples, no retries, no back-ups, no physical
# versions (benchmarks/RESULTS.md, "Draft and Final"). A task's own settings are overridden where Draft sets them.
DRAFT: dict[str, dict[str, Any]] = {
    "contact": {"rollouts": 20, "max_iterations": 3, "segment_retries": 0, "backups": 0},
    "track": {"rollouts": 20, "max_iterations": 3, "segment_retries": 0, "backups": 0, "planning_timestep": 0.015},
    "assist": {"samples": 2000, "search_restarts": 0, "replans": 0, "physical": False},
    "simulate": {},
}


def draft(method: str, settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` (a task's, flat) at Draft quality: DRAFT's for `method` over them."""
    return dict(settings, **DRAFT.get(method, {}))


def draft_words(method: str) -> str:
    """What Draft sets for `method`, as the run's note and the Solve panel say it ("" where nothing)."""
    return ", ".join(f"{k} {v}" for k, v in DRAFT.get(method, {}).items())
