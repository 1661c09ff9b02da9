"""The cross-entropy method (MuJoCo MPC's `CrossEntropyPlanner`): sample around the nominal plan
with a per-knot, per-actuator spread, keep the elite (the lowest-cost candidates) and refit the
nominal to the elite's mean and the spread to its standard deviation, floored at `min_std`.

MuJoCo MPC's defaults: elite = max(10% of the samples, 2); the initial spread is the sampling
exploration; the floor is 0.1 of the control (here `min_std` × half the control range, default
0.05, the exploration, so the spread never narrows below predictive sampling's).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import InvalidInput
from ...formats.settings import setting
from ..objectives.contact import Costs
from .base import FULL_NOISE, NOMINAL, SAMPLED, Noise, Outcome, Planner


@dataclass
class CrossEntropyOptions:
    elite_fraction: float = setting(0.1, "Share of the samples kept as the elite", positive=True, max=1.0)
    min_elites: int = setting(2, "The fewest elite samples", min=2)
    min_std: float = setting(0.05, "Floor of the sampling spread, × half the control range", nonneg=True)


class CrossEntropyPlanner(Planner):
    Options = CrossEntropyOptions

    def __init__(self, space, settings, options, rng):
        super().__init__(space, settings, options, rng)
        half = 0.5 * (space.hi - space.lo)
        self.std = np.broadcast_to(self.sigma, self.nominal.shape).copy()  # spread per knot and actuator
        self.std_min = options.min_std * half

    @classmethod
    def check(cls, settings, options, path):
        if settings.rollouts < options.min_elites + 1:
            raise InvalidInput(f"{path}.rollouts", f"need at least {options.min_elites + 1} rollouts (the nominal "
                               f"and {options.min_elites} elite samples), got {settings.rollouts}")

    def get_state(self):
        return dict(super().get_state(), std=self.std.copy())

    def set_state(self, state):
        super().set_state(state)
        self.std = np.array(state["std"], dtype=float)

    def elites(self) -> int:
        return min(max(int(round(self.options.elite_fraction * self.s.rollouts)), self.options.min_elites),
                   self.s.rollouts)

    def propose(self, state, t, noise: Noise = FULL_NOISE) -> np.ndarray:
        nominal = self.shifted(self.nominal, t)
        spread = np.maximum(self.std, self.std_min)
        draws = self.rng.standard_normal((self.s.rollouts - 1,) + nominal.shape) * spread
        scales = noise.scales(self.s.rollouts - 1)
        samples = nominal[None] + (draws if scales is None else draws * scales)
        self._candidates = np.clip(np.concatenate([nominal[None], samples]), self.space.lo, self.space.hi)
        self._t = t
        return self._candidates

    def tell(self, costs: Costs) -> Outcome:
        total = costs.total
        order = np.argsort(total, kind="stable")
        best = int(order[0])
        elite = order[: self.elites()]
        elite = elite[np.isfinite(total[elite])]  # diverged rollouts never join the elite
        if len(elite) >= 2:
            knots = self._candidates[elite]
            self.nominal = knots.mean(axis=0)
            self.std = knots.std(axis=0, ddof=1)
            self.planned_at(self._t)
        elif len(elite) == 1:  # a single stable candidate: adopt it, keep the spread
            self.nominal = self._candidates[best].copy()
            self.planned_at(self._t)
        else:  # every candidate diverged: keep the previous plan (shifted, candidate 0)
            self.nominal = self._candidates[0].copy()
            self.planned_at(self._t)
        return Outcome(best_index=best, best_cost=float(total[best]), origin=NOMINAL if best == 0 else SAMPLED)
