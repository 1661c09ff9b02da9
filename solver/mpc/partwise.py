"""PartwiseMPC's recombination of body-part plans (Khoshsiyar et al. 2024) over predictive
sampling: for each part of each partitioning the rollout with the least cost *seen by that part*
is found, and a candidate is composed part by part from those rollouts' knots; it competes in the
next iteration, noise-free, in place of a random sample."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInput
from ..scene import GROUPS
from .objectives import Costs
from .sampling import SamplingPlanner


class PartwisePlanner(SamplingPlanner):
    def __init__(self, space, settings, options, rng):
        super().__init__(space, settings, options, rng)
        self.partitionings = [[[GROUPS.index(g) for g in part] for part in p]
                              for p in settings.partitionings_or_default()]
        self.part_columns = {tuple(part): np.isin(space.act_group, part) for p in self.partitionings for part in p}
        self.composed: list[np.ndarray] = []

    @classmethod
    def check(cls, settings, options, path):
        composed = len(settings.partitionings_or_default())
        if settings.rollouts < composed + 2:
            raise InvalidInput(f"{path}.rollouts", f"need at least {composed + 2} rollouts (nominal, {composed} "
                               f"composed candidates and one sample), got {settings.rollouts}")

    def get_state(self):
        shape = (0,) + self.nominal.shape
        return dict(super().get_state(), composed=np.array(self.composed).reshape(-1, *self.nominal.shape)
                    if self.composed else np.zeros(shape))

    def set_state(self, state):
        super().set_state(state)
        self.composed = [np.array(c) for c in state["composed"]]

    def guided(self, t: float) -> list[np.ndarray]:
        return [self.shifted(c, t) for c in self.composed]

    def learn(self, candidates: np.ndarray, costs: Costs) -> None:
        self.composed = [self.compose(candidates, costs, p) for p in self.partitionings]

    def compose(self, candidates: np.ndarray, costs: Costs, partitioning) -> np.ndarray:
        """A candidate whose every part takes its knots from the rollout best for that part."""
        out = np.empty_like(candidates[0])
        for part in partitioning:
            r = int(np.argmin(costs.part(part)))  # +inf for excluded (diverged) rollouts
            cols = self.part_columns[tuple(part)]
            out[:, cols] = candidates[r][:, cols]
        return out
