"""Checkpoints of a contact-keyframes run: the agent's complete state between two control steps,
as plain arrays and JSON (an npz file, no pickles), so a run resumed from one — in this process or
another — continues byte for byte as the uninterrupted run.

A checkpoint carries the fingerprint of what it was made for (the compiled model, the planner
settings and the keyframes); resuming it anywhere else is refused.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from ...core import schema
from ...core.errors import InvalidInput
from ...core.fileio import write_npz_atomic

META = "meta"


def fingerprint(built, settings, keyframes) -> str:
    """What a checkpoint is only valid for: the model's MJCF, the planner settings, the keyframes and
    the perturbations."""
    h = hashlib.sha256(built.xml.encode("utf-8"))
    if built.perturbations:
        h.update(schema.dumps(built.perturbations).encode("utf-8"))
    h.update(schema.dumps(settings).encode("utf-8"))
    h.update(json.dumps([schema.to_dict(k) for k in keyframes], sort_keys=True).encode("utf-8"))
    return h.hexdigest()


@dataclass
class Checkpoint:
    meta: dict
    arrays: dict[str, np.ndarray]

    def check(self, expected: str, path: str = "checkpoint") -> None:
        if self.meta.get("fingerprint") != expected:
            raise InvalidInput(path, "was made for another model, planner settings or keyframes")

    def save(self, path) -> None:
        """Write atomically as an npz (the meta as JSON text)."""
        write_npz_atomic(path, dict(self.arrays, **{META: np.array(json.dumps(self.meta))}))

    @classmethod
    def load(cls, path) -> Checkpoint:
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        except (OSError, ValueError) as e:
            raise InvalidInput(str(path), f"is not a checkpoint: {e}") from None
        if META not in arrays:
            raise InvalidInput(str(path), "is not a checkpoint (no meta)")
        return cls(json.loads(str(arrays.pop(META).reshape(-1)[0])), arrays)
