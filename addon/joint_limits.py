"""Limit Rotation constraints on the physics character's bones, so posing it the usual way (R) stays
within its joints' ranges, as the solver will read the pose.

Blender's Limit Rotation clamps Euler angles about the bone's own axes (Local space). A body's hinges
turn about axes in its frame, which is the bone's rest frame: where they lie along the bone's axes
(pelvis, waist, hips, knees) the Euler limits are the hinge ranges; where they are oblique (shoulders,
elbows, ankles: 15–44° off) no Euler limit can express the range exactly. Each bone gets the smallest
Euler box holding every rotation its hinges reach in range (sampled over the range grid), in the Euler
order that matches the hinges' order: never a pose the joints allow is changed, and the joints'
ranges hold exactly where the axes are the bone's own. Keys beyond a box are still flagged before a
solve (`taskio._out_of_range`)."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..solver.core.rotations import quat_mul

CONSTRAINT = "PhysKey joint limits"
_SUSPENDED = []  # non-empty while a whole character's joints are being written
MARGIN = math.radians(1.0)  # beyond the box of allowed rotations: MuJoCo's soft limits let solutions touch them
SAMPLES = 13  # per hinge, over its range


def euler_order(axes) -> str:
    """Blender's Euler order for hinges (unit axes in the bone's frame, applied first to last: R = R1·R2·R3):
    the bone axes nearest the hinges, last hinge first (Blender names the order the rotations apply in),
    bone axes no hinge is near first."""
    nearest = []
    for axis in axes:
        for k in np.argsort(-np.abs(axis)):
            if int(k) not in nearest:
                nearest.append(int(k))
                break
    rest = [k for k in range(3) if k not in nearest]
    return "".join("XYZ"[k] for k in rest + nearest[::-1])


def euler_box(axes, ranges, order: str) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) Euler angles about X, Y, Z in `order` holding every rotation of hinges `axes` within
    `ranges` (a grid of SAMPLES per hinge), widened by MARGIN."""
    from mathutils import Quaternion
    axes = np.asarray(axes, float)
    grids = [np.linspace(lo, hi, SAMPLES) for lo, hi in ranges]
    angles = np.array(list(itertools.product(*grids)))
    q = np.tile([1.0, 0.0, 0.0, 0.0], (len(angles), 1))
    for k, axis in enumerate(axes):
        half = 0.5 * angles[:, k]
        q = quat_mul(q, np.concatenate([np.cos(half)[:, None], np.sin(half)[:, None] * axis], axis=1))
    eulers = np.array([tuple(Quaternion(row).to_euler(order)) for row in q])
    return eulers.min(axis=0) - MARGIN, eulers.max(axis=0) + MARGIN


def limit_bone(pb) -> bool:
    """Give pose bone `pb` of a physics character a Limit Rotation constraint (Local space, also
    limiting the transform tools) matching its hinges, replacing one added before; False (and no
    constraint) for a bone with no hinges or a ball joint, and on a physics character that follows an
    animator's rig (it is posed from their rig, never by hand: a constraint would silently move it off
    their pose, where an out-of-range key is flagged in their bone's terms instead)."""
    old = pb.constraints.get(CONSTRAINT)
    if old is not None:
        pb.constraints.remove(old)
    if pb.id_data.physkey.animator_rig is not None:
        return False
    hinges = [j for j in pb.bone.physkey.joints if j.type == "hinge"]
    if not hinges or len(hinges) != len(pb.bone.physkey.joints):
        return False  # the root (free) and ball joints have no Euler range
    axes = [np.asarray(j.axis, float) / max(float(np.linalg.norm(j.axis)), 1e-12) for j in hinges]
    order = euler_order(axes)
    low, high = euler_box(axes, [(j.range_min, j.range_max) for j in hinges], order)
    c = pb.constraints.new("LIMIT_ROTATION")
    c.name = CONSTRAINT
    c.owner_space = "LOCAL"
    c.euler_order = order
    c.use_transform_limit = True  # R in the viewport stops at the limits, so keys stay in range
    for k, name in enumerate("xyz"):
        setattr(c, f"use_limit_{name}", True)
        setattr(c, f"min_{name}", float(max(low[k], -math.pi)))
        setattr(c, f"max_{name}", float(min(high[k], math.pi)))
    return True


def add_joint_limits(obj) -> int:
    """Limit every bone of the physics character `obj`; returns how many bones have a constraint."""
    return sum(limit_bone(pb) for pb in obj.pose.bones)


class suspended:
    """Joint edits inside `with suspended():` leave the constraints alone (a character being built:
    `add_joint_limits` once at the end, not once per property set)."""

    def __enter__(self):
        _SUSPENDED.append(True)

    def __exit__(self, *exc):
        _SUSPENDED.pop()


def joint_changed(joint, context) -> None:
    """Update callback of a joint's type, axis and range: its bone's constraint follows, on every
    object showing the armature."""
    import bpy
    if _SUSPENDED:
        return
    arm = joint.id_data
    bone = next((b for b in arm.bones if any(j == joint for j in b.physkey.joints)), None)
    if bone is None:
        return  # the armature is being built in Edit Mode; build_armature limits it when done
    for obj in bpy.data.objects:
        if obj.data == arm and obj.physkey.is_character:
            limit_bone(obj.pose.bones[bone.name])
