"""The agent: the simulated character advances under the current plan while the planner replans,
and keyframes are checked off in order — contact keyframes, or a reference motion's track keyframes
(the agent's `jobs.ContactJob` or `jobs.TrackingJob` says which).

Effort: adaptive (`effort.Effort`: iterations until the cost stops improving; deterministic per
seed), or `budget` planning iterations per control step, or with `slowdown` Γ as many iterations as
fit in control_dt / Γ of wall time (interactive preview). The run ends when the last keyframe is
sustained (success) or a keyframe's time limit passes (failure, reported with the keyframe), or if
the agent's own simulation diverges: a MuJoCo warning (bad qpos/qvel/qacc, after which MuJoCo resets
the data), time not advancing by one timestep, or a non-finite state. The run then stops; it is
reported `unstable` with the time the diverging step started, and its trajectory ends with the last
good state.

The agent's complete state — MuJoCo's integration state, the planner's, the keyframe tracker's,
the effort's, the RNG's and everything recorded so far — is a `checkpoint.Checkpoint` at any
control step; a run resumed from one continues byte for byte as the uninterrupted run.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import mujoco
import numpy as np

from ..formats.contact_keyframes import ContactKeyframe
from ..formats.perturbations import Perturber
from ..formats.settings import ContactSettings, TrackSettings
from ..formats.solution import Progress
from ..physics.features import Features
from ..physics.grasp import Grasper
from ..physics.model import BuiltModel
from ..physics.posture import Posture
from ..physics.rollout import RolloutEngine, Trajectories, get_state, step_divergence
from .effort import Effort
from .iteration import Scorer, plan_iteration
from .jobs import ContactJob, TrackingJob
from .planners.base import FULL_NOISE, ControlSpace, Noise, make_planner
from .planners.hold import pose_holder
from .recovery.checkpoint import Checkpoint, fingerprint
from .stumble import FloorCatch

INTEGRATION = int(mujoco.mjtState.mjSTATE_INTEGRATION)


@dataclass
class AgentRun:
    times: np.ndarray
    qpos: np.ndarray
    ctrl: np.ndarray
    keyframe_index: np.ndarray  # active keyframe per step
    distance: np.ndarray  # its pair distance per step
    control_times: np.ndarray
    cost_per_step: np.ndarray  # objective of the agent's own state per control step
    origins: np.ndarray  # per planning iteration: where its best candidate came from (planner.ORIGINS)
    reached: list
    success: bool
    failed_keyframe: int | None
    failure: str | None  # why it failed: "time limit", "style", "fell", "stalled" or "stumbled" (the tracker's), None
    # on success
    failure_detail: str | None  # for "style": what of it did not hold ("head at 81% of its standing height"); for
    # "stumbled": what caught the character ("shin_left on the floor at 1.10 s")
    unstable_at: float | None  # time the diverging step started (= the last recorded time)
    unstable_reason: str | None
    iterations: int
    plan_wall_s: float
    grasps: list = field(default_factory=list)  # sticky hands: per weld its force and hold time (grasp.py)


# What the agent records as it goes, per simulation step and per control step (checkpointed).
RECORDS = ("times", "qpos", "ctrls", "kf_idx", "dist", "ctl_t", "ctl_states", "ctl_sensors", "ctl_ctrl", "ctl_kf",
           "origins")


Settings = ContactSettings | TrackSettings
Job = ContactJob | TrackingJob


class Agent:
    """One seed's run of its `job` (contact keyframes unless told otherwise): `step()` advances one
    control step."""

    def __init__(self, built: BuiltModel, plan: BuiltModel, keyframes: list[ContactKeyframe], settings: Settings,
                 seed: int, engine: RolloutEngine, job: Job | None = None):
        self.built, self.plan, self.settings = built, plan, settings
        self.job = job = job or ContactJob()
        m = self.m = built.model
        self.data = mujoco.MjData(m)
        self.data.qpos[:] = built.initial_qpos()
        self.data.qvel[:] = built.initial_qvel()
        mujoco.mj_forward(m, self.data)
        self.objective = job.objective(plan, keyframes, settings)
        self.tracker = job.tracker(keyframes, settings)
        self.space = ControlSpace.of(plan, self.objective.act_group, settings.sampling)
        job.prepare(self.space)
        self.space.hold = pose_holder(plan)
        self.planner = make_planner(self.space, settings.sampling, np.random.default_rng(seed))
        self.scorer = Scorer(plan, self.objective, self.space, engine)
        self.substeps = max(1, int(round(settings.sampling.planning_timestep / m.opt.timestep)))
        self.control_dt = self.substeps * m.opt.timestep
        self.effort = Effort(settings.effort, self.control_dt)
        # The contact term's weight × (a retry's: `retry_with`; not a checkpoint's: a resumed segment
        # gets its own from its job).
        self.contact_press = 1.0
        head = built.roles.get("head")
        self.head = m.body(head).id if head is not None else None
        self.root_body = m.body(built.scene.character.bodies[0].name).id
        self.posture = Posture(m, built.roles, self.root_body)
        self.floor_catch = FloorCatch(m, built.character_bodies, built.roles)
        self.perturber = Perturber(m, built.perturbations)
        self.grasper = Grasper(m, [plan.model], built.grasps)
        self.fingerprint = fingerprint(built, settings, keyframes)
        self.planned_for = -1  # the keyframe index the last control step planned for
        self.placements: dict[int, list] = {}  # keyframe index → its (object, support) body ids
        self.horizon_total = longest_motion(keyframes, settings)
        self.rec = {name: [] for name in RECORDS}
        self.rec["times"].append(0.0)
        self.rec["qpos"].append(self.data.qpos.copy())
        self.rec["ctrls"].append(np.zeros(m.nu))
        self.rec["kf_idx"].append(0)
        self.rec["dist"].append(self.distance(self.tracker.current))
        self.unstable_at, self.unstable_reason = None, None
        self.plan_wall, self.iterations = 0.0, 0
        self.warnings0 = int(self.data.warning.number.sum())
        self.last_cost = None  # the latest finite best cost, for progress reports (JSON carries no inf)

    def distance(self, kf) -> float:
        """How far the character is from keyframe `kf` now, as its job measures it."""
        return self.job.distance(self, kf)

    def met_within(self, d: float) -> bool:
        """Whether the current keyframe, at distance `d` now, would be met were `d` within its
        tolerance: its last keyframe only once the last perturbation has struck (a hit reaction), a
        box only once it rests on its shelf, a clip's end only with the head up, a keyframe only in its
        style (checked only within the tolerance, where they matter)."""
        tracker, i = self.tracker, self.tracker.index
        if i == len(tracker.keyframes) - 1 and self.perturber.pending(self.data.time):
            return False
        if d > tracker.current.tolerance:
            tracker.style_short = None  # a keyframe whose pairs are not met fails for them, not for its style
            return True
        return self.placed(i) and self.ends_up(i) and self.job.holds_style(self, i)

    def ends_up(self, index: int) -> bool:
        """Whether keyframe `index` may end the clip now (`jobs.ContactJob.may_end`)."""
        return self.job.may_end(self, index)

    def placed(self, index: int) -> bool:
        """Whether every object keyframe `index` puts on something rests on it now."""
        return self.job.placed(self, index)

    @property
    def done(self) -> bool:
        return self.tracker.done or self.unstable_at is not None

    # -- one control step --------------------------------------------------------------------------
    def step(self, progress=None, poll_keyframes=None) -> None:
        m, data, tracker, rec = self.m, self.data, self.tracker, self.rec
        if poll_keyframes is not None:
            new = poll_keyframes()
            if new:
                self.extend_keyframes(new)
        mujoco.mj_forward(m, data)
        held = tracker.within_since is not None
        kf = self.job.aim(tracker.current, self.contact_press, held and tracker.index == len(tracker.keyframes) - 1,
                          held)
        if self.grasper:  # sticky hands: welds on where this keyframe holds what a hand touches
            self.grasper.update(m, data, kf)
            self.scorer.eq_active = data.eq_active.astype(float)
        state = get_state(m, data)
        rec["ctl_t"].append(data.time)
        rec["ctl_states"].append(state)
        rec["ctl_sensors"].append(data.sensordata.copy())
        rec["ctl_kf"].append(tracker.index)
        best_cost = self._plan(state, kf)
        rec["ctl_ctrl"].append(self._advance())
        if self.unstable_at is None:
            self._watch(best_cost, progress)

    def _plan(self, state: np.ndarray, kf) -> float:
        """Plan this control step towards `kf` for as many iterations as the effort (or, with `slowdown`,
        the wall time) gives; the best cost of the last iteration."""
        data, effort, slowdown = self.data, self.effort, self.settings.effort.slowdown
        t0 = time.perf_counter()
        n_iter = 0
        head = None if self.head is None else float(data.xpos[self.head, 2])
        effort.begin_step(data.time, self.tracker.index != self.planned_for, head)
        self.planned_for = self.tracker.index
        self.space.look_ahead(getattr(kf, "horizon", None) or self.settings.sampling.horizon)
        while True:
            noise = FULL_NOISE if slowdown is not None else Noise(effort.noise_scale(n_iter), effort.wide_fraction())
            info = plan_iteration(self.planner, self.scorer, state, data.time, kf, noise)
            self.rec["origins"].append(info.origin)
            n_iter += 1
            elapsed = time.perf_counter() - t0
            if slowdown is None:
                if not effort.more(n_iter, float(info.costs[0]), info.best_cost):
                    break
            # Γ: the agent advances at Γ × real time, so plan while another iteration (as long as the
            # last ones took) still fits in control_dt / Γ; at least one.
            elif elapsed * (n_iter + 1) / n_iter > self.control_dt / slowdown:
                break
        effort.end_step()
        self.plan_wall += time.perf_counter() - t0
        self.iterations += n_iter
        return info.best_cost

    def _advance(self) -> np.ndarray | None:
        """Simulate one control step under the plan, checking the keyframe off at every simulation
        step; stops early where the step diverges or the last keyframe is done. The last control."""
        m, data, tracker, rec = self.m, self.data, self.tracker, self.rec
        u = None
        for _ in range(self.substeps):
            u = self.planner.action(data.time)
            data.ctrl[:self.space.nu] = u
            t_before = data.time
            self.perturber.before_step(m, data)
            mujoco.mj_step(m, data)
            self.grasper.measure(m, data, m.opt.timestep)
            self.unstable_reason = step_divergence(data, t_before, m.opt.timestep, self.warnings0)
            if self.unstable_reason is not None:
                self.unstable_at = float(t_before)
                break
            before = tracker.index
            self.job.watch_stumble(self)
            self.job.watch_rest(self)
            d = self.distance(tracker.current)
            tracker.update(data.time, d if self.met_within(d) else np.inf,
                           lambda: self.job.steady(self, tracker.index))
            rec["times"].append(data.time)
            rec["qpos"].append(data.qpos.copy())
            rec["ctrls"].append(data.ctrl.copy())
            # Record the distance of the keyframe active from now on (the next one after a success).
            rec["kf_idx"].append(min(tracker.index, len(tracker.keyframes) - 1))
            if tracker.index != before and tracker.index < len(tracker.keyframes):
                d = self.distance(tracker.current)
            rec["dist"].append(d)
            if tracker.done:
                break
        return u

    def _watch(self, best_cost: float, progress) -> None:
        """After a control step: a keyframe failed early (a fall, a stall, a style that stays short), the progress
        reported."""
        data, tracker, recovery = self.data, self.tracker, self.settings.recovery
        if self.head is not None:
            tracker.watch_fall(data.time, float(data.xpos[self.head, 2]), recovery.give_up_fallen_s,
                               lying=self.posture.lying(data))
        if self.job.approaches:
            d = self.rec["dist"][-1]
            tracker.watch_stall(data.time, d, recovery.give_up_stalled_s, held=self.met_within(d))
        short = tracker.style_short is not None  # its pairs met, its style not
        gap = self.posture.style_gap(tracker.current.style, data) if short else 0.0
        tracker.watch_style(data.time, gap, recovery.give_up_style_s)
        if np.isfinite(best_cost):
            self.last_cost = best_cost
        if progress is not None and self.last_cost is not None:
            frac = ((tracker.index + min(1.0, (data.time - tracker.start) / tracker.current.time_limit))
                    / len(tracker.keyframes))
            progress(Progress(min(frac, 1.0), self.last_cost, reached=tracker.index,
                              keyframes=len(tracker.keyframes), iterations=self.iterations,
                              motion_time=float(data.time), motion=(self.rec["times"], self.rec["qpos"]),
                              reached_times=list(tracker.reached)))
        if data.time > self.horizon_total + 1.0:  # cannot happen with time limits; a guard against loops
            tracker.failed, tracker.failure = True, "time limit"

    def extend_keyframes(self, new: list[ContactKeyframe]) -> None:
        """Keyframes appended while running (a finished run resumes with them); its checkpoints are
        then valid for the keyframes with them."""
        self.tracker.append(list(new), self.data.time)
        self.horizon_total += longest_motion(new, self.settings)
        self.fingerprint = fingerprint(self.built, self.settings, self.tracker.keyframes)

    def may_replace(self, index: int) -> bool:
        """Whether keyframe `index` may still be edited in this run: it has not planned for it yet."""
        tracker = self.tracker
        return tracker.index <= index < len(tracker.keyframes) and not (
            index == tracker.index and self.planned_for >= index)

    def replace_keyframe(self, index: int, keyframe: ContactKeyframe) -> bool:
        """Keyframe `index` edited while running: taken (True) where this run may still take it (`may_replace`);
        one it has started or reached keeps the keyframe it had. Its checkpoints are then valid for the
        keyframes with the edit. Distances already recorded stay as they were measured."""
        tracker = self.tracker
        if not self.may_replace(index):
            return False
        old = tracker.keyframes[index]
        tracker.keyframes[index] = keyframe
        self.horizon_total += longest_motion([keyframe], self.settings) - longest_motion([old], self.settings)
        if index == tracker.index:  # the next to plan for: measured from here against the edited one
            tracker.within_since, tracker.progress_mark, tracker.progress_since = None, None, None
            tracker.style_short, tracker.style_lost_at = None, None
            if self.rec["kf_idx"][-1] == index:
                self.rec["dist"][-1] = self.distance(keyframe)
        self.fingerprint = fingerprint(self.built, self.settings, tracker.keyframes)
        return True

    def retry_with(self, stream: dict | None, escalation: int, press: float) -> None:
        """Plan on as a retry of a failed segment: the planner's noise from the RNG state `stream`
        (None: its own, as checkpointed), `escalation` times the effort, the contact term weighed
        `press` times (1: the keyframe's own)."""
        if stream is not None:
            self.planner.rng.bit_generator.state = stream
            self.effort.escalation = escalation
        self.contact_press = press

    def run(self, progress=None, poll_keyframes=None) -> AgentRun:
        """Step until done."""
        while not self.done:
            self.step(progress, poll_keyframes)
        return self.result()

    # -- checkpoints -------------------------------------------------------------------------------
    def checkpoint(self) -> Checkpoint:
        """The agent's complete state now (between control steps)."""
        mj = np.empty(mujoco.mj_stateSize(self.m, INTEGRATION))
        mujoco.mj_getState(self.m, self.data, mj, INTEGRATION)
        meta = {"fingerprint": self.fingerprint, "rng": self.planner.rng.bit_generator.state,
                "tracker": self.tracker.get_state(), "effort": self.effort.get_state(), "planned_for": self.planned_for,
                "horizon_total": self.horizon_total, "iterations": self.iterations, "last_cost": self.last_cost,
                "plan_wall_s": self.plan_wall, "unstable_at": self.unstable_at, "unstable_reason": self.unstable_reason}
        arrays = {"mujoco_state": mj}
        arrays.update({f"planner.{k}": v for k, v in self.planner.get_state().items()})
        arrays.update({f"grasp.{k}": v for k, v in self.grasper.get_state().items()})
        for name in RECORDS:
            arrays[f"record.{name}"] = np.asarray(self.rec[name])
        return Checkpoint(meta, arrays)

    @classmethod
    def resume(cls, checkpoint: Checkpoint, built: BuiltModel, plan: BuiltModel, keyframes: list[ContactKeyframe],
               settings: Settings, engine: RolloutEngine, job: Job | None = None) -> Agent:
        """The agent of `checkpoint`, ready to step on; InvalidInput if it was made for another model,
        settings or keyframes."""
        agent = cls(built, plan, keyframes, settings, 0, engine, job)
        checkpoint.check(agent.fingerprint)
        meta, arrays = checkpoint.meta, checkpoint.arrays
        mujoco.mj_setState(agent.m, agent.data, arrays["mujoco_state"], INTEGRATION)
        agent.warnings0 = int(agent.data.warning.number.sum())
        agent.planner.rng.bit_generator.state = meta["rng"]
        agent.planner.set_state({k.removeprefix("planner."): v for k, v in arrays.items() if k.startswith("planner.")})
        agent.grasper.set_state({k.removeprefix("grasp."): v for k, v in arrays.items() if k.startswith("grasp.")})
        agent.tracker.set_state(meta["tracker"])
        agent.effort.set_state(meta["effort"])
        agent.planned_for, agent.horizon_total = meta["planned_for"], meta["horizon_total"]
        agent.iterations, agent.last_cost, agent.plan_wall = meta["iterations"], meta["last_cost"], meta["plan_wall_s"]
        agent.unstable_at, agent.unstable_reason = meta.get("unstable_at"), meta.get("unstable_reason")
        for name in RECORDS:
            agent.rec[name] = list(arrays[f"record.{name}"])
        return agent

    # -- the outcome -------------------------------------------------------------------------------
    def result(self) -> AgentRun:
        rec, tracker = self.rec, self.tracker
        cost = _agent_costs(self.plan, self.objective, tracker.keyframes, rec["ctl_states"], rec["ctl_sensors"],
                            rec["ctl_ctrl"], rec["ctl_kf"])
        success = self.unstable_at is None and not tracker.failed and tracker.index >= len(tracker.keyframes)
        return AgentRun(times=np.asarray(rec["times"]), qpos=np.asarray(rec["qpos"]), ctrl=np.asarray(rec["ctrls"]),
                        keyframe_index=np.asarray(rec["kf_idx"], dtype=np.int32), distance=np.asarray(rec["dist"]),
                        control_times=np.asarray(rec["ctl_t"]), cost_per_step=cost,
                        origins=np.asarray(rec["origins"], dtype=np.uint8), reached=tracker.reached, success=success,
                        failed_keyframe=tracker.index if tracker.failed else None,
                        failure=tracker.failure if tracker.failed else None,
                        failure_detail=_failure_detail(tracker),
                        unstable_at=self.unstable_at,
                        unstable_reason=self.unstable_reason, iterations=self.iterations,
                        plan_wall_s=self.plan_wall, grasps=self.grasper.summary(self.m) if self.grasper else [])


def _failure_detail(tracker) -> str | None:
    """What a failed keyframe's reason leaves out: the style that did not hold, the body that caught the
    character; None otherwise."""
    if not tracker.failed:
        return None
    return {"style": tracker.style_short, "stumbled": tracker.stumbled_on}.get(tracker.failure)


def longest_motion(keyframes: list[ContactKeyframe], settings: Settings) -> float:
    """The most seconds of motion a run of `keyframes` can take: every time limit with its overtime,
    and every sustain."""
    return sum(k.time_limit * (1.0 + settings.recovery.overtime) + k.sustain for k in keyframes)


@dataclass(frozen=True)
class AgentSetup:
    """What every agent of one solve is made from — the model and its planning twin, the keyframes,
    the settings and the job — so particles, segments and a resumed checkpoint make their agents in
    one place."""
    built: BuiltModel
    plan: BuiltModel
    keyframes: list
    settings: Settings
    job: Job = field(default_factory=ContactJob)

    def agent(self, seed: int, engine: RolloutEngine) -> Agent:
        """A fresh agent at the scene's start."""
        return Agent(self.built, self.plan, self.keyframes, self.settings, seed, engine, self.job)

    def resume(self, checkpoint: Checkpoint, engine: RolloutEngine, keyframes: list | None = None) -> Agent:
        """The agent of `checkpoint`, with `keyframes` where keyframes were appended since the start."""
        return Agent.resume(checkpoint, self.built, self.plan, self.keyframes if keyframes is None else keyframes,
                            self.settings, engine, self.job)


def run_agent(built: BuiltModel, plan: BuiltModel, keyframes: list[ContactKeyframe], settings: Settings,
              seed: int, engine: RolloutEngine, progress=None, poll_keyframes=None, job: Job | None = None) -> AgentRun:
    """One seed's whole run."""
    return Agent(built, plan, keyframes, settings, seed, engine, job).run(progress, poll_keyframes)


def _agent_costs(plan, objective, keyframes, states, sensors, ctrls, kf_index) -> np.ndarray:
    """The objective of the agent's own trajectory, one value per control step, under the keyframe
    active at that step."""
    if not len(states):
        return np.zeros(0)
    st = np.asarray(states)[None]
    se = np.asarray(sensors)[None]
    u = np.asarray([c if c is not None else np.zeros(objective.nu) for c in ctrls])[None][..., :objective.nu]
    feat = Features(plan, Trajectories(st, se), aligned=True)
    bodies = sorted({b for kf in keyframes for b in objective.bodies_for(kf)})
    fd = feat.as_dict(bodies)
    out = np.zeros(st.shape[1])
    idx = np.asarray(kf_index)
    for k in np.unique(idx):
        kf = keyframes[min(int(k), len(keyframes) - 1)]
        sel = idx == k
        sub = {key: {b: v[:, sel] for b, v in val.items()} if isinstance(val, dict) else val[:, sel]
               for key, val in fd.items()}
        out[sel] = objective.evaluate(sub, feat.qvel[:, sel], u[:, sel], kf).per_step[0]
    return out
