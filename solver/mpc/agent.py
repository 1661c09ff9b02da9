"""The agent loop: the simulated character advances under the current plan while the planner
replans, and contact keyframes are checked off in order.

Budget: `budget` planning iterations per control step (offline; deterministic per seed), or with
`slowdown` Γ as many iterations as fit in control_dt / Γ of wall time (interactive preview). The
run ends when the last keyframe is sustained (success) or a keyframe's time limit passes (failure,
reported with the keyframe), or if the agent's own simulation diverges: a MuJoCo warning (bad
qpos/qvel/qacc, after which MuJoCo resets the data), time not advancing by one timestep, or a
non-finite state. The run then stops; it is reported `unstable` with the time the diverging step
started, and its trajectory ends with the last good state.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import mujoco
import numpy as np

from ..contact_keyframes import WORLD, ContactKeyframe
from ..features import Features
from ..model import BuiltModel
from ..rollout import RolloutEngine, Trajectories, get_state, step_divergence
from ..settings import PlannerSettings
from ..solution import Progress
from .objectives import Objective
from .planner import ControlSpace, Planner, make_planner


@dataclass
class KeyframeTracker:
    """Success/failure bookkeeping of an ordered keyframe list (MuJoCo MPC's transition logic)."""
    keyframes: list[ContactKeyframe]
    index: int = 0
    start: float = 0.0
    within_since: float | None = None  # first instant of the current stretch within tolerance
    reached: list = field(default_factory=list)
    failed: bool = False

    def __post_init__(self):
        self.reached = [None] * len(self.keyframes)

    @property
    def done(self) -> bool:
        return self.failed or self.index >= len(self.keyframes)

    @property
    def current(self) -> ContactKeyframe:
        return self.keyframes[min(self.index, len(self.keyframes) - 1)]

    def update(self, t: float, distance: float) -> None:
        """Advance with the current keyframe's distance (norm of stacked pair displacements) at t."""
        if self.done:
            return
        kf = self.current
        if distance > kf.tolerance:
            self.within_since = None
            if t - self.start > kf.time_limit + 1e-9:
                self.failed = True
            return
        if self.within_since is None:
            self.within_since = t
        if t - self.within_since >= kf.sustain - 1e-9:
            self.reached[self.index] = t
            self.index += 1
            self.start, self.within_since = t, None

    def append(self, keyframes: list[ContactKeyframe], t: float) -> None:
        """Keyframes added while running; a finished (successful) run resumes with them."""
        if self.index >= len(self.keyframes):
            self.start, self.within_since = t, None
        self.keyframes.extend(keyframes)
        self.reached.extend([None] * len(keyframes))


def pair_distance(model: mujoco.MjModel, data: mujoco.MjData, kf: ContactKeyframe) -> float:
    """Norm of the stacked pair displacements at the data's current kinematics."""
    total = 0.0
    for p in kf.pairs:
        a = data.xpos[model.body(p.body1).id] + data.xmat[model.body(p.body1).id].reshape(3, 3) @ p.pos1
        if p.body2 == WORLD:
            b = np.asarray(p.pos2)
        else:
            b = data.xpos[model.body(p.body2).id] + data.xmat[model.body(p.body2).id].reshape(3, 3) @ p.pos2
        total += float(np.sum((a - b) ** 2))
    return float(np.sqrt(total))


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
    unstable_at: float | None  # time the diverging step started (= the last recorded time)
    unstable_reason: str | None
    iterations: int
    plan_wall_s: float


@dataclass
class IterationInfo:
    """One planning iteration: the best candidate's total cost (+inf when every candidate diverged;
    the previous plan is then kept), index and origin (planner.ORIGINS), and every candidate's
    total (+inf for diverged rollouts) and divergence."""
    best_cost: float
    best_index: int
    origin: int
    costs: np.ndarray
    diverged: np.ndarray


class Scorer:
    """The agent's half of a planning iteration: roll a planner's candidates out from the current
    state on the planning model and score them with the objective under the active keyframe."""

    def __init__(self, plan: BuiltModel, objective: Objective, space: ControlSpace, settings: PlannerSettings,
                 engine: RolloutEngine):
        self.plan, self.objective, self.space, self.engine = plan, objective, space, engine
        self.dt = plan.model.opt.timestep
        self.nstep = int(np.ceil(settings.horizon / self.dt - 1e-9))

    def score(self, state: np.ndarray, t: float, kf: ContactKeyframe, candidates: np.ndarray):
        """(costs, diverged) of candidate knots (N, knots, nu) on the horizon starting at t. A
        rollout that blew up (MuJoCo reset or stopped it) ends in a calm reset pose that can look
        cheap: it scores +inf, so it can neither become the nominal nor lend a part."""
        step_t = t + np.arange(self.nstep) * self.dt
        ctrl = self.space.controls(t, candidates, step_t)
        nu = self.plan.model.nu
        full = ctrl if nu == self.space.nu else np.concatenate(
            [ctrl, np.zeros(ctrl.shape[:2] + (nu - self.space.nu,))], axis=2)
        traj = self.engine.run(state, full, copy=False)
        feat = Features(self.plan, traj)
        costs = self.objective.evaluate(feat.as_dict(self.objective.bodies_for(kf)), feat.qvel, ctrl, kf)
        return costs.exclude(traj.diverged), traj.diverged


def plan_iteration(planner: Planner, scorer: Scorer, state: np.ndarray, t: float, kf: ContactKeyframe) -> IterationInfo:
    """One ask/tell iteration of `planner` from `state` at time t."""
    candidates = planner.propose(state, t, kf)
    costs, diverged = scorer.score(state, t, kf, candidates)
    outcome = planner.tell(costs)
    return IterationInfo(best_cost=outcome.best_cost, best_index=outcome.best_index, origin=outcome.origin,
                         costs=costs.total, diverged=diverged)


def run_agent(built: BuiltModel, plan: BuiltModel, keyframes: list[ContactKeyframe], settings: PlannerSettings,
              seed: int, engine: RolloutEngine, progress=None, poll_keyframes=None) -> AgentRun:
    m = built.model
    data = mujoco.MjData(m)
    data.qpos[:] = built.initial_qpos()
    mujoco.mj_forward(m, data)
    objective = Objective(plan)
    space = ControlSpace.of(plan, objective.act_group, settings)
    planner = make_planner(space, settings, np.random.default_rng(seed))
    scorer = Scorer(plan, objective, space, settings, engine)
    tracker = KeyframeTracker(list(keyframes))
    substeps = max(1, int(round(settings.planning_timestep / m.opt.timestep)))
    control_dt = substeps * m.opt.timestep
    horizon_total = sum(k.time_limit for k in keyframes)
    times, qpos, ctrls, kf_idx, dist = [0.0], [data.qpos.copy()], [np.zeros(m.nu)], [0], []
    dist.append(pair_distance(m, data, tracker.current))
    ctl_t, ctl_states, ctl_sensors, ctl_ctrl, ctl_kf, origins = [], [], [], [], [], []
    unstable_at, unstable_reason, plan_wall, iterations = None, None, 0.0, 0
    warnings0 = int(data.warning.number.sum())
    last_cost = None  # the latest finite best cost, for progress reports (JSON carries no inf)
    while not tracker.done:
        if poll_keyframes is not None:
            new = poll_keyframes()
            if new:
                tracker.append(new, data.time)
                horizon_total += sum(k.time_limit for k in new)
        mujoco.mj_forward(m, data)
        state = get_state(m, data)
        kf = tracker.current
        ctl_t.append(data.time)
        ctl_states.append(state)
        ctl_sensors.append(data.sensordata.copy())
        ctl_kf.append(tracker.index)
        t0 = time.perf_counter()
        n_iter = 0
        while True:
            info = plan_iteration(planner, scorer, state, data.time, kf)
            origins.append(info.origin)
            n_iter += 1
            elapsed = time.perf_counter() - t0
            if settings.slowdown is None and n_iter >= settings.budget:
                break
            # Γ: the agent advances at Γ × real time, so plan while another iteration (as long as the
            # last ones took) still fits in control_dt / Γ; at least one.
            if settings.slowdown is not None and elapsed * (n_iter + 1) / n_iter > control_dt / settings.slowdown:
                break
        plan_wall += time.perf_counter() - t0
        iterations += n_iter
        u = None
        for _ in range(substeps):
            u = planner.action(data.time)
            data.ctrl[:space.nu] = u
            t_before = data.time
            mujoco.mj_step(m, data)
            unstable_reason = step_divergence(data, t_before, m.opt.timestep, warnings0)
            if unstable_reason is not None:
                unstable_at = float(t_before)
                break
            before = tracker.index
            d = pair_distance(m, data, tracker.current)
            tracker.update(data.time, d)
            times.append(data.time)
            qpos.append(data.qpos.copy())
            ctrls.append(data.ctrl.copy())
            # Record the distance of the keyframe active from now on (the next one after a success).
            kf_idx.append(min(tracker.index, len(tracker.keyframes) - 1))
            if tracker.index != before and tracker.index < len(tracker.keyframes):
                d = pair_distance(m, data, tracker.current)
            dist.append(d)
            if tracker.done:
                break
        ctl_ctrl.append(u)
        if unstable_at is not None:
            break
        if np.isfinite(info.best_cost):
            last_cost = info.best_cost
        if progress is not None and last_cost is not None:
            frac = ((tracker.index + min(1.0, (data.time - tracker.start) / tracker.current.time_limit))
                    / len(tracker.keyframes))
            progress(Progress(min(frac, 1.0), last_cost))
        if data.time > horizon_total + 1.0:  # cannot happen with time limits; a guard against loops
            tracker.failed = True
    cost = _agent_costs(plan, objective, tracker.keyframes, ctl_states, ctl_sensors, ctl_ctrl, ctl_kf)
    success = unstable_at is None and not tracker.failed and tracker.index >= len(tracker.keyframes)
    return AgentRun(times=np.asarray(times), qpos=np.asarray(qpos), ctrl=np.asarray(ctrls),
                    keyframe_index=np.asarray(kf_idx, dtype=np.int32), distance=np.asarray(dist),
                    control_times=np.asarray(ctl_t), cost_per_step=cost, origins=np.asarray(origins, dtype=np.uint8),
                    reached=tracker.reached, success=success,
                    failed_keyframe=tracker.index if tracker.failed else None, unstable_at=unstable_at,
                    unstable_reason=unstable_reason, iterations=iterations, plan_wall_s=plan_wall)


def _agent_costs(plan, objective, keyframes, states, sensors, ctrls, kf_index) -> np.ndarray:
    """The objective of the agent's own trajectory, one value per control step, under the keyframe
    active at that step."""
    if not states:
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
        sub = {"pos": {b: v[:, sel] for b, v in fd["pos"].items()},
               "quat": {b: v[:, sel] for b, v in fd["quat"].items()},
               "com": fd["com"][:, sel], "comvel": fd["comvel"][:, sel]}
        out[sel] = objective.evaluate(sub, feat.qvel[:, sel], u[:, sel], kf).per_step[0]
    return out
