"""Small quaternion helpers (w, x, y, z) on top of MuJoCo's own functions."""
from __future__ import annotations

import math

import mujoco
import numpy as np


def normalize(q) -> np.ndarray:
    """Unit vector along q, exact for any finite q: scaled by its largest entry first, so that entries
    near 1e±308 neither overflow nor underflow the norm."""
    q = np.asarray(q, dtype=float)
    scale = np.max(np.abs(q), axis=-1, keepdims=True)
    q = q / scale
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def mul(a, b) -> np.ndarray:
    out = np.zeros(4)
    mujoco.mju_mulQuat(out, np.asarray(a, float), np.asarray(b, float))
    return out


def from_axis_angle(axis, angle: float) -> np.ndarray:
    out = np.zeros(4)
    mujoco.mju_axisAngle2Quat(out, normalize(axis), float(angle))
    return out


def to_matrix(q) -> np.ndarray:
    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, normalize(q))
    return out.reshape(3, 3)


def from_matrix(m) -> np.ndarray:
    out = np.zeros(4)
    mujoco.mju_mat2Quat(out, np.ascontiguousarray(m, dtype=float).reshape(9))
    return out


def from_matrices(m) -> np.ndarray:
    """Unit quaternions (N, 4; w, x, y, z, w ≥ 0) of rotation matrices (N, 3, 3), all at once
    (Shepperd's method: from the largest of the trace and the diagonal, never near a division by 0)."""
    m = np.asarray(m, dtype=float)
    n = np.arange(len(m))
    t = np.stack([m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2], m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]], axis=1)
    k = np.argmax(t, axis=1)
    r = np.sqrt(np.maximum(1.0 + 2.0 * t[n, k] - t[:, 0], 1e-300))  # 2 |q_k| of the largest component
    d = 2.0 * r
    skew = [m[:, 2, 1] - m[:, 1, 2], m[:, 0, 2] - m[:, 2, 0], m[:, 1, 0] - m[:, 0, 1]]  # 4 w x, 4 w y, 4 w z
    sym = {(1, 2): m[:, 0, 1] + m[:, 1, 0], (1, 3): m[:, 0, 2] + m[:, 2, 0], (2, 3): m[:, 1, 2] + m[:, 2, 1]}
    q = np.empty((len(m), 4))
    for i in range(4):
        rows = k == i
        for j in range(4):  # component j from the largest, i
            if j == i:
                value = r / 2
            elif 0 in (i, j):
                value = skew[max(i, j) - 1] / d
            else:
                value = sym[(min(i, j), max(i, j))] / d
            q[rows, j] = value[rows]
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return np.where(q[:, :1] < 0, -q, q)


def tilt(tilt_deg) -> np.ndarray:
    """World-axes tilt [about x, about y] in degrees, applied x first."""
    qx = from_axis_angle((1, 0, 0), math.radians(tilt_deg[0]))
    qy = from_axis_angle((0, 1, 0), math.radians(tilt_deg[1]))
    return mul(qy, qx)


def y_to(direction) -> np.ndarray:
    """The smallest rotation taking +Y onto `direction` (Blender's bone frame with roll 0)."""
    d = normalize(direction)
    y = np.array([0.0, 1.0, 0.0])
    c = float(np.dot(y, d))
    if c < -1 + 1e-12:
        return np.array([0.0, 0.0, 0.0, 1.0])  # 180° about Z, as Blender does for bones along -Y
    axis = np.cross(y, d)
    s = np.linalg.norm(axis)
    if s < 1e-12:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return from_axis_angle(axis, math.atan2(s, c))


def from_euler_xyz_deg(angles) -> np.ndarray:
    """World-axes rotation: about x, then y, then z (degrees)."""
    qx = from_axis_angle((1, 0, 0), math.radians(angles[0]))
    qy = from_axis_angle((0, 1, 0), math.radians(angles[1]))
    qz = from_axis_angle((0, 0, 1), math.radians(angles[2]))
    return mul(qz, mul(qy, qx))


def angle_between(q, target) -> np.ndarray:
    """The rotation angle (rad, 0..π) between orientations q (…, 4, any length: normalized here) and
    unit quaternions `target` (…, 4), broadcasting; q and −q are the same orientation."""
    q = np.asarray(q, float)
    dot = np.abs(np.sum(q * np.asarray(target, float), axis=-1)) / np.maximum(np.linalg.norm(q, axis=-1), 1e-12)
    return 2.0 * np.arccos(np.clip(dot, 0.0, 1.0))


def quat_mul(a, b) -> np.ndarray:
    """Quaternion products of whole arrays (…, 4) × (…, 4), broadcasting."""
    w1, x1, y1, z1 = np.moveaxis(np.asarray(a, float), -1, 0)
    w2, x2, y2, z2 = np.moveaxis(np.asarray(b, float), -1, 0)
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=-1)


def rotate(quat, v) -> np.ndarray:
    """Vectors v (…, 3) rotated by unit quaternions (…, 4), broadcasting (v + 2w(q×v) + 2q×(q×v))."""
    quat = np.asarray(quat, float)
    qv = quat[..., 1:]
    t = 2.0 * np.cross(qv, np.broadcast_to(np.asarray(v, float), qv.shape))
    return v + quat[..., :1] * t + np.cross(qv, t)
