"""One planning iteration, ask/tell: the planner proposes candidate plans, the agent's `Scorer`
rolls them out on the planning model and scores them with the objective, and the planner is told
the costs."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..formats.contact_keyframes import ContactKeyframe
from ..physics.features import Features
from ..physics.model import BuiltModel
from ..physics.rollout import RolloutEngine
from .objectives.contact import Objective
from .planners.base import FULL_NOISE, ControlSpace, Noise, Planner


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

    def __init__(self, plan: BuiltModel, objective: Objective, space: ControlSpace, engine: RolloutEngine):
        self.plan, self.objective, self.space, self.engine = plan, objective, space, engine
        self.dt = plan.model.opt.timestep
        self.eq_active = None  # the agent's equality switches now (sticky grasps), held over the horizon

    def score(self, state: np.ndarray, t: float, kf: ContactKeyframe, candidates: np.ndarray):
        """(costs, diverged) of candidate knots (N, knots, nu) on the horizon starting at t. A
        rollout that blew up (MuJoCo reset or stopped it) ends in a calm reset pose that can look
        cheap: it scores +inf, so it can neither become the nominal nor lend a part."""
        step_t = t + np.arange(plan_steps(self.space.offsets[-1], self.dt)) * self.dt
        ctrl = self.space.controls(t, candidates, step_t)
        nu = self.plan.model.nu
        full = ctrl if nu == self.space.nu else np.concatenate(
            [ctrl, np.zeros(ctrl.shape[:2] + (nu - self.space.nu,))], axis=2)
        traj = self.engine.run(state, full, copy=False, eq_active=self.eq_active)
        feat = Features(self.plan, traj)
        costs = self.objective.evaluate(feat.as_dict(self.objective.bodies_for(kf)), feat.qvel, ctrl, kf)
        return costs.exclude(traj.diverged), traj.diverged


def plan_steps(horizon: float, dt: float) -> int:
    """Planning steps of `dt` that cover `horizon`."""
    return int(np.ceil(horizon / dt - 1e-9))


def plan_iteration(planner: Planner, scorer: Scorer, state: np.ndarray, t: float, kf: ContactKeyframe,
                   noise: Noise = FULL_NOISE) -> IterationInfo:
    """One ask/tell iteration of `planner` from `state` at time t, its samples spread as `noise` says."""
    candidates = planner.propose(state, t, noise)
    costs, diverged = scorer.score(state, t, kf, candidates)
    outcome = planner.tell(costs)
    return IterationInfo(best_cost=outcome.best_cost, best_index=outcome.best_index, origin=outcome.origin,
                         costs=costs.total, diverged=diverged)
