"""PartwiseMPC's recombination of body-part plans (Khoshsiyar et al. 2024) over predictive
sampling: for each part of each partitioning the rollout with the least cost *seen by that part*
is found, and a candidate is composed part by part from those rollouts' knots; it competes in the
next iteration, noise-free, in place of a random sample."""
from __future__ import annotations

import numpy as np

from ...core.errors import InvalidInput
from ...formats.scene import GROUPS
from ..objectives.contact import Costs
from .sampling import SamplingPlanner


def partitionings_of(settings) -> list[list[list[int]]]:
    """The settings' partitionings as group indices (scene.GROUPS)."""
    return [[[GROUPS.index(g) for g in part] for part in p] for p in settings.partitionings_or_default()]


def part_columns_of(space, partitionings) -> dict[tuple, np.ndarray]:
    """Per part (its group indices), which actuators (columns of a knot) it plans."""
    return {tuple(part): np.isin(space.act_group, part) for p in partitionings for part in p}


def compose(candidates: np.ndarray, costs: Costs, partitioning, part_columns: dict) -> np.ndarray:
    """A candidate whose every part takes its knots from the rollout best for that part."""
    out = np.empty_like(candidates[0])
    for part in partitioning:
        r = int(np.argmin(costs.part(part)))  # +inf for excluded (diverged) rollouts
        cols = part_columns[tuple(part)]
        out[:, cols] = candidates[r][:, cols]
    return out


class PartwisePlanner(SamplingPlanner):
    def __init__(self, space, settings, options, rng):
        super().__init__(space, settings, options, rng)
        self.partitionings = partitionings_of(settings)
        self.part_columns = part_columns_of(space, self.partitionings)
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
        self.composed = [compose(candidates, costs, p, self.part_columns) for p in self.partitionings]
