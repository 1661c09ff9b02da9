"""One seed's outcome, as every method returns it and `result.write_solution` writes it, and the
progress reports a solve makes on the way."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np


@dataclass
class Solution:
    """`times`/`qpos` are per simulation step (t = 0 included); `arrays` holds method-specific
    per-step or per-keyframe arrays for result.npz; `summary` extra result.json fields.

    `unstable_time` is set when the simulation of this solution diverged (MuJoCo warned and reset
    it, or its state went non-finite): the time the diverging step started; `times`/`qpos` then end
    there, with the last good state, and the solution is never a success.

    `variants` are other versions of the same solution, written beside it (`<name>.npz`) and listed
    in its result.json entry under their name: an assisted solution's `physical` version."""
    times: np.ndarray
    qpos: np.ndarray
    success: bool
    cost: float
    keyframes_reached: list = field(default_factory=list)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    unstable_time: float | None = None
    unstable_reason: str | None = None
    variants: dict[str, Solution] = field(default_factory=dict)


@dataclass
class Progress:
    """A progress report of one seed: the fraction done and the best cost so far (+inf or NaN
    when nothing stable exists yet); with `partial`, a playable intermediate solution (a
    curriculum stage's best motion, `stage` its index). Keyframe methods say how many of their
    `keyframes` are `reached` and the planning `iterations` spent so far; solves over particles,
    how many `retries` (a segment tried again at raised effort) and `backups` (the segment before
    it redone) they have needed so far, so a struggling solve says so while it works; MPC methods,
    the `motion_time` their simulation has reached and the `motion` committed so far."""
    fraction: float
    cost: float
    stage: Optional[int] = None
    partial: Optional[Solution] = None
    reached: Optional[int] = None
    keyframes: Optional[int] = None
    iterations: Optional[int] = None
    retries: Optional[int] = None
    backups: Optional[int] = None
    motion_time: Optional[float] = None  # s of motion simulated so far (MPC methods: where in the clip it is)
    motion: Optional[tuple] = None  # (times, qpos) sequences of the motion committed so far, for a live preview
    reached_times: Optional[list] = None  # with `motion`: when in it each keyframe was reached (None: not yet)
    attempt: Optional[int] = None  # MPC: the try at the current keyframe's segment (0: the first; 1: its first retry)
