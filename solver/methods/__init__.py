"""Solve methods, looked up by the task's `method` name.

A method turns a validated task into a `Prepared` job (its settings, keyframes and compiled model,
built once per worker process) and solves one seed of it, returning the simulated trajectory and
its summary. Contact keyframes (PartwiseMPC) and assisted keyframes (CMA-ES) plug in here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import InvalidInput

ProgressFn = Callable[[float, float], None]  # (fraction done, current cost)


@dataclass
class Solution:
    """One seed's outcome. `times`/`qpos` are per simulation step (t = 0 included); `arrays` holds
    method-specific per-step or per-keyframe arrays for result.npz; `summary` extra result.json fields.

    `unstable_time` is set when the simulation of this solution diverged (MuJoCo warned and reset
    it, or its state went non-finite): the time the diverging step started; `times`/`qpos` then end
    there, with the last good state, and the solution is never a success."""
    times: np.ndarray
    qpos: np.ndarray
    success: bool
    cost: float
    keyframes_reached: list = field(default_factory=list)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    unstable_time: float | None = None
    unstable_reason: str | None = None


# Imported on first use only: a contact solve should not pay for importing pycma (and through it
# scipy), which costs ≈ 0.6 s of every solver start-up.
_MODULES = {"simulate": "simulate", "contact": "contact", "assist": "assist"}


def get_method(name: str):
    if name not in _MODULES:
        raise InvalidInput("method", f"unknown method '{name}' (have: {', '.join(_MODULES)})")
    import importlib
    return importlib.import_module(f"{__name__}.{_MODULES[name]}")
