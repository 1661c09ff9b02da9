"""Bone matrices as numpy arrays, many frames at once: rigid inverses, rest offsets, quaternions."""
from __future__ import annotations

import numpy as np
from mathutils import Matrix

from .bake import continuous_quaternions


def rigid_inverse(m: np.ndarray) -> np.ndarray:
    """Inverse of rigid transforms (..., 4, 4) — rotation and translation only, as bone matrices
    are here — without a general (and, batched, slow) matrix inverse."""
    out = np.zeros_like(m)
    rt = np.swapaxes(m[..., :3, :3], -1, -2)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", rt, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def offset_from_parent(bone) -> np.ndarray:
    """The bone's rest matrix relative to its parent's (its armature-space rest without a parent)."""
    rest = np.array(bone.matrix_local)
    return rest if bone.parent is None else rigid_inverse(np.array(bone.parent.matrix_local)) @ rest


def quaternions(rot: np.ndarray) -> np.ndarray:
    """Unit quaternions (F, 4) of rotation matrices (F, 3, 3), continuous frame to frame."""
    return continuous_quaternions(np.array([list(Matrix(m.tolist()).to_quaternion()) for m in rot]))
