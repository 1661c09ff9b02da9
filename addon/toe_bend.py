"""The rig's toes bent up off the floor in a baked motion.

The physics foot is one rigid body, so a rig's toe bone, carried rigidly with it, goes through the floor
wherever the physics foot stands on its ball or tip with the heel raised — centimetres under the floor,
seen in every render. A person's toes bend up there and stay on the floor. Each toe bone under a mapped
foot is bent up about its head, as far as it takes for its tip to stay as high above the floor as it is
when the character stands flat (or level with its base where that is lower), and no further than a toe
bends; a toe above the floor, or pointing down in the air, is left rigid with its foot.
"""
from __future__ import annotations

import numpy as np

from .bone_math import rigid_inverse

MAX_BEND = np.radians(70.0)  # how far a person's toes bend up at the ball of the foot
FEET = ("foot_left", "foot_right")


def toe_bone(rig, foot: str) -> str | None:
    """The bone that carries the toes of the rig's foot bone `foot`: its child named for the toes, or its
    one connected child (Rigify's ORG-toe, Mixamo's ToeBase, a BVH's Toe); None where it has none."""
    children = [b for b in rig.data.bones[foot].children if not b.name.startswith(("MCH-", "DEF-"))]
    named = [b for b in children if "toe" in b.name.lower()]
    connected = [b for b in children if b.use_connect]
    found = named or connected
    return found[0].name if len(found) == 1 else None


def _lowest(model, data, body: int) -> float:
    """The lowest point of the geoms of `body`, as posed in `data` (capsules, boxes and spheres exactly, other
    shapes by their bounding sphere)."""
    import mujoco
    low = np.inf
    for g in np.flatnonzero(model.geom_bodyid == body):
        rot, centre, size = data.geom_xmat[g].reshape(3, 3), data.geom_xpos[g], model.geom_size[g]
        kind = model.geom_type[g]
        if kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
            reach = size[0] + abs(rot[2, 2]) * size[1]
        elif kind == mujoco.mjtGeom.mjGEOM_BOX:
            reach = float(np.abs(rot[2]) @ size)
        elif kind == mujoco.mjtGeom.mjGEOM_SPHERE:
            reach = size[0]
        else:
            reach = model.geom_rbound[g]
        low = min(low, float(centre[2] - reach))
    return low


def _toe_points(rig, foot: str, toe: str, foot_targets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The toe bone rigid with its foot: its armature-space matrices (F, 4, 4), and its head and tip in the world
    (F, 3) each."""
    bones = rig.data.bones
    rigid = foot_targets @ (rigid_inverse(np.array(bones[foot].matrix_local)) @ np.array(bones[toe].matrix_local))
    world = np.array(rig.matrix_world)
    tip = rigid @ np.array([0.0, bones[toe].length, 0.0, 1.0])
    head = rigid[:, :, 3]
    return rigid, (head @ world.T)[:, :3], (tip @ world.T)[:, :3]


def _about(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """(F, 3, 3) rotations by `angle` (F,) about the unit `axis` (F, 3) (Rodrigues)."""
    k = np.zeros((len(axis), 3, 3))
    k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -axis[:, 2], axis[:, 1], -axis[:, 0]
    k -= np.transpose(k, (0, 2, 1))
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def bent_toes(rig, model, rest_targets: dict[str, np.ndarray], targets: dict[str, np.ndarray],
              mapping: dict[str, str], floor_z: float = 0.0) -> dict[str, np.ndarray]:
    """{toe bone: armature-space matrices (F, 4, 4)} for each toe under a mapped foot: rigid with its foot
    (`targets`, the mapped bones' armature matrices per frame), bent up about its head where its tip would
    be lower than it is above the sole in the physics character's rest (`rest_targets`: the same at the
    model's `qpos0`), relative to the floor at `floor_z`."""
    import mujoco
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    rot_obj = np.array(rig.matrix_world.normalized())[:3, :3]
    out = {}
    for slot in FEET:
        foot = mapping.get(slot)
        toe = toe_bone(rig, foot) if foot in targets and foot in rest_targets else None
        if toe is None or toe in targets:
            continue
        _, _, rest_tip = _toe_points(rig, foot, toe, rest_targets[foot])
        clearance = max(0.0, float(rest_tip[0, 2]) - _lowest(model, data, model.body(slot).id))
        rigid, head, tip = _toe_points(rig, foot, toe, targets[foot])
        along = tip - head
        length = np.linalg.norm(along, axis=1)
        flat = np.linalg.norm(along[:, :2], axis=1)
        want = np.minimum(head[:, 2], floor_z + clearance)
        elevation = np.arcsin(np.clip(along[:, 2] / np.maximum(length, 1e-9), -1.0, 1.0))
        aim = np.arcsin(np.clip((want - head[:, 2]) / np.maximum(length, 1e-9), -1.0, 1.0))
        angle = np.where((tip[:, 2] < want) & (flat > 1e-6 * length), np.clip(aim - elevation, 0.0, MAX_BEND), 0.0)
        side = np.cross(along / np.maximum(flat, 1e-12)[:, None], [0.0, 0.0, 1.0])  # tip turned toward up
        side /= np.maximum(np.linalg.norm(side, axis=1, keepdims=True), 1e-12)
        bent = rigid.copy()
        bent[:, :3, :3] = _about(side @ rot_obj, angle) @ rigid[:, :3, :3]  # the world axis in armature space
        out[toe] = bent
    return out
