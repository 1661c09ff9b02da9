"""Predictive sampling (MuJoCo MPC), the baseline planner: the noise-free nominal and noisy copies
of it (Gaussian noise of std exploration × half the control range on the knots, clamped); the
best candidate becomes the nominal."""
from __future__ import annotations

import numpy as np

from ..objectives.contact import Costs
from .base import COMPOSED, FULL_NOISE, NOMINAL, SAMPLED, Noise, Outcome, Planner


class SamplingPlanner(Planner):
    """Predictive sampling. Subclasses may add guided candidates (`guided`), evaluated noise-free
    in place of that many samples, and learn from each iteration's costs (`learn`)."""

    def guided(self, t: float) -> list[np.ndarray]:
        """Extra candidates for the horizon starting at t (none here)."""
        return []

    def learn(self, candidates: np.ndarray, costs: Costs) -> None:
        """Called by `tell` after the nominal is updated (nothing here)."""

    def propose(self, state, t, noise: Noise = FULL_NOISE) -> np.ndarray:
        n = self.s.rollouts
        nominal = self.shifted(self.nominal, t)
        guided = self.guided(t)[: max(0, n - 2)]
        nnoisy = n - 1 - len(guided)
        draws = self.rng.standard_normal((nnoisy,) + nominal.shape) * self.sigma
        scales = noise.scales(nnoisy)
        noisy = nominal[None] + (draws if scales is None else draws * scales)
        candidates = np.concatenate([nominal[None], np.asarray(guided).reshape(-1, *nominal.shape), noisy])
        self._candidates = np.clip(candidates, self.space.lo, self.space.hi)
        self._origins = np.array([NOMINAL] + [COMPOSED] * len(guided) + [SAMPLED] * nnoisy)
        self._t = t
        return self._candidates

    def tell(self, costs: Costs) -> Outcome:
        total = costs.total
        best = int(np.argmin(total))  # all +inf: index 0, the previous nominal (shifted), is kept
        self.nominal = self._candidates[best].copy()
        self.planned_at(self._t)
        self.learn(self._candidates, costs)
        return Outcome(best_index=best, best_cost=float(total[best]), origin=int(self._origins[best]))
