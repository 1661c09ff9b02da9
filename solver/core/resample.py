"""Resample a qpos trajectory at the output frame rate (linear for positions and angles, normalised
linear interpolation for the quaternions of free and ball joints)."""
from __future__ import annotations

import mujoco
import numpy as np


def quaternion_columns(model: mujoco.MjModel) -> list[int]:
    """First qpos column of every quaternion (free-joint rotation, ball joint)."""
    cols = []
    for j in range(model.njnt):
        a = int(model.jnt_qposadr[j])
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            cols.append(a + 3)
        elif model.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            cols.append(a)
    return cols


def frame_times(duration: float, fps: float) -> np.ndarray:
    n = int(np.floor(duration * fps + 1e-9)) + 1
    return np.arange(n) / fps


def resample_qpos(model: mujoco.MjModel, times: np.ndarray, qpos: np.ndarray, at: np.ndarray) -> np.ndarray:
    times = np.asarray(times, dtype=float)
    qpos = np.array(qpos, dtype=float)
    quats = quaternion_columns(model)
    for c in quats:  # keep consecutive quaternions in one hemisphere before blending
        q = qpos[:, c:c + 4]
        flip = np.cumprod(np.where(np.sum(q[1:] * q[:-1], axis=1) < 0, -1.0, 1.0))
        q[1:] *= flip[:, None]
    out = np.stack([np.interp(at, times, qpos[:, k]) for k in range(qpos.shape[1])], axis=1)
    for c in quats:
        out[:, c:c + 4] /= np.linalg.norm(out[:, c:c + 4], axis=1, keepdims=True)
    return out


def good_prefix(qpos: np.ndarray) -> np.ndarray:
    """Mask of the poses before the first non-finite one (an unstable run's usable motion)."""
    finite = np.all(np.isfinite(qpos), axis=1)
    return finite if finite.all() else np.arange(len(finite)) < np.argmin(finite)
