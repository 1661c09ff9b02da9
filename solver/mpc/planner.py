"""Predictive sampling (MuJoCo MPC) with PartwiseMPC's recombination of body-part plans.

Each iteration rolls out N candidates from the current state over the horizon: the noise-free
nominal, the partwise candidates composed in the previous iteration, and noisy copies of the
nominal (Gaussian noise of std exploration × half control range on the spline knots, clamped). The
best rollout becomes the nominal. Partwise: for each part of each partitioning the rollout with the
least cost *seen by that part* is found, and a candidate is composed part by part from those
rollouts' knots; it competes in the next iteration in place of a random sample.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .. import splines
from ..characters import SCENES_DIR
from ..errors import InvalidInput
from ..features import Features
from ..model import BuiltModel
from ..rollout import RolloutEngine
from ..scene import GROUPS
from .keyframes import ContactKeyframe
from .objectives import Objective


def default_partitionings() -> list[list[list[str]]]:
    with open(os.path.join(SCENES_DIR, "planner", "partitionings.json"), encoding="utf-8") as f:
        return json.load(f)["partitionings"]


@dataclass
class PlannerSettings:
    rollouts: int = field(default=45, metadata={"positive": True})
    horizon: float = field(default=0.35, metadata={"positive": True})
    knots: int = field(default=3, metadata={"positive": True})
    planning_timestep: float = field(default=0.015, metadata={"positive": True})
    exploration: float = field(default=0.05, metadata={"nonneg": True})
    spline: str = field(default="cubic", metadata={"choices": splines.KINDS})
    planner: str = field(default="partwise", metadata={"choices": ("partwise", "baseline")})
    budget: int = field(default=1, metadata={"positive": True})  # planning iterations per control step
    slowdown: Optional[float] = field(default=None, metadata={"positive": True})  # Γ: wall-clock budget instead
    partitionings: Optional[list[list[list[str]]]] = None

    def check(self, path):
        if self.horizon < 2 * self.planning_timestep:
            raise InvalidInput(f"{path}.horizon", f"{self.horizon} s is shorter than two planning steps "
                               f"({2 * self.planning_timestep} s)")
        if self.planning_timestep > 0.05:
            raise InvalidInput(f"{path}.planning_timestep", f"must be at most 0.05 s, got {self.planning_timestep}")
        if self.knots < 2 and self.spline != "zero":
            raise InvalidInput(f"{path}.knots", f"a {self.spline} spline needs at least 2 knots")
        if self.rollouts > 4096:
            raise InvalidInput(f"{path}.rollouts", f"at most 4096 rollouts, got {self.rollouts}")
        parts = self.partitionings if self.partitionings is not None else default_partitionings()
        for i, partitioning in enumerate(parts):
            seen = [g for part in partitioning for g in part]
            for g in seen:
                if g not in GROUPS:
                    raise InvalidInput(f"{path}.partitionings[{i}]", f"unknown group '{g}' (have: {', '.join(GROUPS)})")
            if sorted(seen) != sorted(GROUPS):
                raise InvalidInput(f"{path}.partitionings[{i}]", "must cover every group exactly once")
        composed = len(parts) if self.planner == "partwise" else 0
        if self.rollouts < composed + 2:
            raise InvalidInput(f"{path}.rollouts", f"need at least {composed + 2} rollouts (nominal, {composed} "
                               f"composed candidates and one sample), got {self.rollouts}")


@dataclass
class IterationInfo:
    best_cost: float  # +inf when every candidate diverged (the previous plan is then kept)
    partwise_won: bool
    best_index: int
    costs: np.ndarray | None = None  # (N,) every candidate's total, +inf for diverged rollouts
    diverged: np.ndarray | None = None  # (N,) bool


class Planner:
    """One character's sampling planner over a planning model (timestep = planning_timestep)."""

    def __init__(self, plan: BuiltModel, objective: Objective, settings: PlannerSettings, rng: np.random.Generator,
                 engine: RolloutEngine):
        self.plan, self.objective, self.s, self.rng, self.engine = plan, objective, settings, rng, engine
        m = plan.model
        self.nu = plan.nu_character
        self.dt = m.opt.timestep
        self.nstep = int(np.ceil(settings.horizon / self.dt - 1e-9))
        self.offsets = np.linspace(0.0, settings.horizon, settings.knots)
        lo, hi = m.actuator_ctrlrange[:self.nu, 0], m.actuator_ctrlrange[:self.nu, 1]
        self.lo, self.hi = lo, hi
        self.sigma = settings.exploration * 0.5 * (hi - lo)
        self.nominal = np.clip(np.zeros((settings.knots, self.nu)), lo, hi)
        self.knot_start = 0.0
        self.composed: list[np.ndarray] = []
        parts = settings.partitionings if settings.partitionings is not None else default_partitionings()
        self.partitionings = [[[GROUPS.index(g) for g in part] for part in p] for p in parts] \
            if settings.planner == "partwise" else []
        self.part_columns = {tuple(part): np.isin(objective.act_group, part)
                             for p in self.partitionings for part in p}

    # -- knots -------------------------------------------------------------------------------------
    def _shift(self, knots: np.ndarray, t: float) -> np.ndarray:
        """Knots re-sampled on the horizon starting at t (the plan so far, shifted)."""
        old = self.knot_start + self.offsets
        return splines.evaluate(old, knots, t + self.offsets, self.s.spline)

    def action(self, t: float) -> np.ndarray:
        """The nominal plan's control at time t."""
        u = splines.evaluate(self.knot_start + self.offsets, self.nominal, np.array([t]), self.s.spline)[0]
        return np.clip(u, self.lo, self.hi)

    # -- one planning iteration ----------------------------------------------------------------------
    def iterate(self, state: np.ndarray, t: float, kf: ContactKeyframe) -> IterationInfo:
        n = self.s.rollouts
        nominal = self._shift(self.nominal, t)
        composed = [self._shift(c, t) for c in self.composed][: max(0, n - 2)]
        nnoisy = n - 1 - len(composed)
        noisy = nominal[None] + self.rng.standard_normal((nnoisy,) + nominal.shape) * self.sigma
        candidates = np.concatenate([nominal[None], np.asarray(composed).reshape(-1, *nominal.shape), noisy])
        candidates = np.clip(candidates, self.lo, self.hi)
        step_t = t + np.arange(self.nstep) * self.dt
        ctrl = np.clip(splines.evaluate(t + self.offsets, candidates, step_t, self.s.spline), self.lo, self.hi)
        full = ctrl if self.plan.model.nu == self.nu else np.concatenate(
            [ctrl, np.zeros(ctrl.shape[:2] + (self.plan.model.nu - self.nu,))], axis=2)
        traj = self.engine.run(state, full, copy=False)
        feat = Features(self.plan, traj)
        costs = self.objective.evaluate(feat.as_dict(self.objective.bodies_for(kf)), feat.qvel, ctrl, kf)
        # A rollout that blew up (MuJoCo reset or stopped it) ends in a calm reset pose that can
        # look cheap: it scores +inf, so it can neither become the nominal nor lend a part.
        costs.exclude(traj.diverged)
        total = costs.total
        best = int(np.argmin(total))  # all +inf: index 0, the previous nominal (shifted), is kept
        self.nominal = candidates[best].copy()
        self.knot_start = t
        self.composed = [self._compose(candidates, costs, p) for p in self.partitionings]
        won = bool(np.isfinite(total[best])) and 1 <= best <= len(composed)
        return IterationInfo(best_cost=float(total[best]), partwise_won=won, best_index=best, costs=total,
                             diverged=traj.diverged)

    def _compose(self, candidates: np.ndarray, costs, partitioning) -> np.ndarray:
        """A candidate whose every part takes its knots from the rollout best for that part."""
        out = np.empty_like(candidates[0])
        for part in partitioning:
            seen = costs.part(part)  # +inf for excluded (diverged) rollouts
            r = int(np.argmin(seen))
            cols = self.part_columns.get(tuple(part))
            if cols is None:
                cols = np.isin(self.objective.act_group, part)
            out[:, cols] = candidates[r][:, cols]
        return out
