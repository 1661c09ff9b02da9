"""The reference motion: pose keyframes interpolated in time (linear joint angles and root position,
slerp for the root orientation), and the reference keypoints (each link's centre of mass) the
assist forces pull towards.

Keyframe timing differs per candidate, so keypoints are precomputed by forward kinematics on a dense
phase grid per keyframe interval once; each candidate's step times are then mapped to (interval,
phase) and the grid is interpolated, all in numpy.
"""
from __future__ import annotations

import mujoco
import numpy as np

from ..formats.pose_keyframes import Keyframes
from ..physics.model import BuiltModel

GRID = 48  # phases per interval


def slerp(q0, q1, s: float) -> np.ndarray:
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    if np.dot(q0, q1) < 0:
        q1 = -q1
    out = np.zeros(4)
    diff = np.zeros(3)
    mujoco.mju_subQuat(diff, q1, q0)  # rotation from q0 to q1 as a 3-vector (axis × angle)
    mujoco.mju_copy(out, q0)
    mujoco.mju_quatIntegrate(out, diff, s)
    return out


def interpolate_pose(kfs: Keyframes, k: int, s: float) -> np.ndarray:
    """Character qpos between keyframes k and k+1 at phase s ∈ [0, 1]."""
    a, b = kfs.qpos[k], kfs.qpos[k + 1]
    out = a + s * (b - a)
    out[3:7] = slerp(a[3:7], b[3:7], s)
    return out


class Reference:
    """Reference joint angles and keypoints for any keyframe timing."""

    def __init__(self, built: BuiltModel, kfs: Keyframes, keypoint_bodies: list[str]):
        m = built.model
        self.kfs = kfs
        self.root_adr = int(m.jnt_qposadr[m.joint("root").id])
        nq_char = kfs.qpos.shape[1]
        self.char_qpos = slice(self.root_adr, self.root_adr + nq_char)
        data = mujoco.MjData(m)
        data.qpos[:] = built.initial_qpos()
        ids = [m.body(b).id for b in keypoint_bodies]
        nint = len(kfs.qpos) - 1
        self.keypoints = np.zeros((nint, GRID, len(ids), 3))
        for k in range(nint):
            for g in range(GRID):
                data.qpos[self.char_qpos] = interpolate_pose(kfs, k, g / (GRID - 1))
                mujoco.mj_kinematics(m, data)
                self.keypoints[k, g] = data.xipos[ids]
        self.angles = kfs.qpos[:, 7:]  # (K, nhinge)

    @staticmethod
    def locate(keyframe_times: np.ndarray, times: np.ndarray):
        """Interval index and phase of every step time for every candidate.
        keyframe_times (P, K) with column 0 = 0; times (T,). Returns (P, T) int and float."""
        P, K = keyframe_times.shape
        t = np.minimum(times[None, :], keyframe_times[:, -1:])  # hold the last keyframe afterwards
        k = np.empty((P, len(times)), dtype=int)
        for p in range(P):
            k[p] = np.searchsorted(keyframe_times[p], t[p], side="right") - 1
        k = np.clip(k, 0, K - 2)
        t0 = np.take_along_axis(keyframe_times, k, axis=1)
        t1 = np.take_along_axis(keyframe_times, k + 1, axis=1)
        phase = np.clip((t - t0) / np.maximum(t1 - t0, 1e-9), 0.0, 1.0)
        return k, phase

    def joint_angles(self, k: np.ndarray, phase: np.ndarray) -> np.ndarray:
        """(P, T, nhinge) reference hinge angles."""
        a, b = self.angles[k], self.angles[k + 1]
        return a + phase[..., None] * (b - a)

    def keypoint_targets(self, k: np.ndarray, phase: np.ndarray) -> np.ndarray:
        """(P, T, nkeypoints, 3) reference keypoint positions."""
        g = phase * (GRID - 1)
        g0 = np.minimum(np.floor(g).astype(int), GRID - 2)
        f = (g - g0)[..., None, None]
        return (1 - f) * self.keypoints[k, g0] + f * self.keypoints[k, g0 + 1]
