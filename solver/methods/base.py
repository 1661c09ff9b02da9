"""The contract every solve method keeps (`Method`), what it hands the pool and the CLI
(`Prepared`, `Batch`) and what it reports while solving (`Progress`).

A method turns a validated task into a `Prepared` job once per worker process (settings, keyframes,
compiled model) and then solves seeds of it, each an alternative `Solution`. What a method can do
beyond that is declared in `capabilities`, never probed. Methods are registered by name in
`solver/core/registry.py` (`METHODS`), which points at the module-level instance of the subclass.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

import mujoco

from ..builders.roles import missing_terms
from ..core.errors import InvalidInput
from ..formats.scene import SceneDesc
from ..formats.solution import Progress, Solution
from ..formats.task import Task
from ..physics.model import BuiltModel
from ..physics.rollout import RolloutEngine


@dataclass(frozen=True)
class Capabilities:
    """What a method offers beyond `prepare` and `solve`.

    appended_keyframes: `--jsonl` runs take more keyframes on stdin while solving (`feed.py`);
    the method checks each line (`check_appended`) and its solve polls the new ones.
    partial_solutions: the solve reports playable intermediate solutions (`Progress.partial`).
    reference: the task's `reference` motion is what the method solves from (others refuse one).
    perturbations: the solve reacts to the task's pushes and thrown balls (others refuse them).
    particles: the solve is made of particles' keyframe segments (`mpc/recovery/segments.py`), which `solve`
    runs wherever its `segments` says (a Ray cluster); its `Prepared` has `resumer`."""
    appended_keyframes: bool = False
    partial_solutions: bool = False
    reference: bool = False
    perturbations: bool = False
    particles: bool = False


@dataclass(frozen=True)
class Batch:
    """The biggest batched rollout a solve makes (what the memory check sizes): `rollouts` ×
    `steps` of `model`, set by the setting at path `setting`."""
    setting: str
    model: mujoco.MjModel
    rollouts: int
    steps: int


@dataclass
class Prepared:
    """A task made ready to solve: its settings and the compiled model the solution plays on
    (written as model.xml and baked in Blender). Methods extend it with what they need."""
    task: Task
    settings: object
    built: BuiltModel

    def engine_model(self) -> mujoco.MjModel:
        """The model the rollout engine runs."""
        return self.built.model

    def batch(self) -> Optional[Batch]:
        """The biggest batched rollout of one seed, or None where the method makes only small ones."""
        return None

    def notes(self) -> list[str]:
        """What the user should know before the solve starts: terms off for a role no body of the
        character plays (and what a method finds in its input, e.g. a reference no body can follow)."""
        return missing_terms(self.built.roles)

    def retained(self) -> Optional[tuple[str, str, int]]:
        """What one seed keeps in memory beyond its batch, where that can grow large: (the setting's
        path, what it is, bytes), or None."""
        return None


ProgressFn = Callable[[Progress], None]
# Keyframes appended while a solve runs: each call returns the raw keyframe items (task-file JSON)
# appended since the last call.
AppendedFn = Callable[[], list]


class Method(ABC):
    """A solve method. Subclasses set `name`, `settings_type` and, where they offer more,
    `capabilities`, and implement `prepare` and `solve`."""

    name: str
    settings_type: type
    capabilities = Capabilities()

    @abstractmethod
    def prepare(self, task: Task) -> Prepared:
        """Check the task's settings and keyframes against its scene and build the model; bad input
        raises InvalidInput naming the field."""

    @abstractmethod
    def solve(self, prepared: Prepared, seed: int, engine: RolloutEngine, progress: Optional[ProgressFn] = None,
              appended: Optional[AppendedFn] = None, segments=None) -> Solution:
        """Solve one seed on `engine` (a rollout engine of `prepared.engine_model()`). `appended` is
        given only to methods with `capabilities.appended_keyframes`, `segments` (an
        `mpc.recovery.segments.Segments`; None: here) only to methods with `capabilities.particles`."""

    def check_task(self, task: Task) -> None:
        """What every method refuses alike, before `prepare`: a reference motion or perturbations it has no
        use for."""
        if task.reference is not None and not self.capabilities.reference:
            raise InvalidInput("reference", f"the {self.name} method takes no reference motion (the track "
                               "method follows one)")
        if task.perturbations and not self.capabilities.perturbations:
            raise InvalidInput("perturbations", f"the {self.name} method does not react to perturbations (the "
                               "contact method does)")

    def check_appended(self, items: list, scene: SceneDesc, path: str, sampling=None) -> int:
        """Check keyframe items appended (or edited) on stdin (InvalidInput if bad) — against the solve's
        `sampling` settings where given — : how many keyframes they make; for methods with
        `capabilities.appended_keyframes`."""
        raise NotImplementedError(f"the {self.name} method takes no appended keyframes")
