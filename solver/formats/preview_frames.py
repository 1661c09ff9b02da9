"""The frames of a `preview` event (`run/preview.py` sends them, Blender's live ghost reads them): qpos rows as
little-endian float32 in base64, from `first_frame` on, replacing any frames from there; a quaternion and its
negative are the same turn, so rows carry them with w ≥ 0."""
from __future__ import annotations

import base64

import mujoco
import numpy as np

from ..core.resample import quaternion_columns


def canonical(model: mujoco.MjModel, qpos: np.ndarray) -> np.ndarray:
    """float32 rows with every quaternion's w ≥ 0 (q and −q are the same turn)."""
    out = np.array(qpos, dtype=np.float32)
    for c in quaternion_columns(model):
        out[:, c:c + 4] *= np.where(out[:, c:c + 1] < 0, -1.0, 1.0).astype(np.float32)
    return out


def encode(frames: np.ndarray) -> str:
    """float32 rows as the event's `qpos` text."""
    return base64.b64encode(np.asarray(frames, dtype="<f4").tobytes()).decode("ascii")


def apply(frames: np.ndarray | None, event: dict) -> np.ndarray:
    """The preview after `event`: `frames` up to its first frame, then its rows."""
    rows = np.frombuffer(base64.b64decode(event["qpos"]), dtype="<f4").reshape(-1, int(event["nq"]))
    kept = frames[:int(event["first_frame"])] if frames is not None else np.zeros((0, rows.shape[1]), np.float32)
    return np.concatenate([kept, rows])
