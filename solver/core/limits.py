"""Bounds that keep every solve finite in memory and time, checked on input. The one place each
is written; error messages and Blender's property ranges read them from here."""
from __future__ import annotations

MAX_SEEDS = 10_000  # seeds (alternatives) one task may list or --num-seeds ask for
MAX_MOTION_S = 600.0  # seconds of motion a solve may be asked for (simulate duration, keyframe times)
MAX_ROLLOUTS = 4096  # rollouts per batch (MPC rollouts, CMA-ES population)
