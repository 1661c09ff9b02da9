"""Rigify's IK controls keyed with a baked motion, so the animator's IK hands and feet follow it too.

`rigify_bake` keys the FK controls, which the baked range plays (the IK/FK switches keyed to FK). Each
limb's IK end control (`foot_ik`, `hand_ik`) is keyed as well, at every frame, where it puts the limb's
end bone on the same target with the limb switched to IK: the IK target under it follows it rigidly
while the foot's roll controls (`foot_spin_ik`, `foot_heel_ik`) rest, which they are keyed to; the
chain's root (`thigh_ik`, `upper_arm_ik`) is keyed at rest. The offsets are measured once, with the rig
evaluated in IK with these controls at rest (the end control's parent fixed, or carried by `torso` where
the rig's IK parent follows it) — no frame is evaluated, so a bake stays a few array operations per frame.
Switched to IK, the hands and feet land on their bodies; the knees and elbows bend in the plane Blender's
IK solver gives the chain (Rigify's own IK↔FK snapping matches them by evaluating every frame and keying
the chain's twist and scale, which a bake here does not do).
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from .bone_math import quaternions, rigid_inverse

SIDES = ("L", "R")
# limb: (end ORG, IK end control, IK chain root, switch bone, roll controls)
LIMBS = {"leg": ("foot", "foot_ik", "thigh_ik", "thigh_parent", ("foot_spin_ik", "foot_heel_ik")),
         "arm": ("hand", "hand_ik", "upper_arm_ik", "upper_arm_parent", ())}


def set_path(rig, path: str, value) -> None:
    """Set the custom property at `path` (e.g. 'pose.bones["thigh_parent.L"]["IK_FK"]')."""
    owner, _, key = path.rpartition("[")
    rig.path_resolve(owner)[key.strip('"]')] = value
    rig.update_tag()  # set from Python, a custom property tags nothing: the drivers reading it must see it


def ik_limbs(rig) -> list[tuple[str, str, str, str, list[str]]]:
    """(end ORG, IK end control, IK chain root, switch bone, roll controls) of each limb with Rigify's IK."""
    bones = rig.pose.bones
    out = []
    for end, ik_end, ik_root, switch, rolls in LIMBS.values():
        for s in SIDES:
            names = (f"ORG-{end}.{s}", f"{ik_end}.{s}", f"{ik_root}.{s}", f"{switch}.{s}")
            if all(n in bones for n in names):
                out.append((*names, [f"{r}.{s}" for r in rolls if f"{r}.{s}" in bones]))
    return out


@contextmanager
def held_still(rig, rest: list[str], switches: dict[str, float]):
    """The rig with the controls `rest` at rest and the custom properties `switches` ({path: value}) set,
    its action set aside (its curves would override the pose) and the depsgraph updated — to measure
    offsets in; the pose, properties and action are put back after."""
    import bpy
    from mathutils import Matrix
    bones = rig.pose.bones
    saved = {name: bones[name].matrix_basis.copy() for name in rest}
    before = {path: rig.path_resolve(path) for path in switches}
    action = rig.animation_data.action if rig.animation_data else None
    if action is not None:
        rig.animation_data.action = None
    try:
        for name in rest:
            bones[name].matrix_basis = Matrix.Identity(4)
        for path, value in switches.items():
            set_path(rig, path, value)
        bpy.context.view_layer.update()
        yield
    finally:
        for name, basis in saved.items():
            bones[name].matrix_basis = basis
        for path, value in before.items():
            set_path(rig, path, value)
        if action is not None:
            rig.animation_data.action = action
        bpy.context.view_layer.update()


def _evaluated_in_ik(rig, rest: list[str], torso_shift: np.ndarray | None = None) -> tuple[dict, dict]:
    """Armature-space matrices of every bone with the controls `rest` at rest and the limbs in IK (the
    torso moved by `torso_shift` when given), and per IK end control the 3×3 map from its location
    channels to its armature-space head (Rigify's end controls move in their parent's space, not their
    own: Blender's `convert_space` says how)."""
    import bpy
    from mathutils import Matrix
    bones = rig.pose.bones
    in_ik = {f'pose.bones["{limb[3]}"]["IK_FK"]': 0.0 for limb in ik_limbs(rig)}
    with held_still(rig, rest, in_ik):
        if torso_shift is not None:
            bones["torso"].matrix = Matrix(torso_shift.tolist()) @ bones["torso"].bone.matrix_local
            bpy.context.view_layer.update()
        maps = {}
        for limb in ik_limbs(rig):
            pb = bones[limb[1]]
            origin = np.array(rig.convert_space(pose_bone=pb, matrix=Matrix.Identity(4), from_space="LOCAL",
                                                to_space="POSE").translation)
            heads = [rig.convert_space(pose_bone=pb, matrix=Matrix.Translation(axis), from_space="LOCAL",
                                       to_space="POSE").translation for axis in np.eye(3)]
            maps[limb[1]] = np.array([np.array(head) - origin for head in heads]).T
        return {pb.name: np.array(pb.matrix) for pb in bones}, maps


def ik_channels(rig, goal: dict[str, np.ndarray], posed: dict[str, np.ndarray], rest: list[str]) -> dict:
    """{IK control: (location (F, 3) or None, quaternions (F, 4))} putting each limb's end bone on `goal`
    (armature space, F × 4 × 4) in IK; `posed` holds the keyed controls' armature matrices per frame
    (`torso` among them), `rest` the controls the bake holds at rest (the IK ones are added to them)."""
    limbs = ik_limbs(rig)
    if not limbs or "torso" not in posed:
        return {}
    held = list(rest) + [n for limb in limbs for n in (limb[1], limb[2], *limb[4])]
    at_rest, moves = _evaluated_in_ik(rig, held)
    shift = np.eye(4)
    shift[2, 3] = 0.1
    moved, _ = _evaluated_in_ik(rig, held, shift)  # which end controls' parents the torso carries
    torso = posed["torso"] @ rigid_inverse(at_rest["torso"])  # (F, 4, 4): the torso's motion from rest
    nf = len(torso)
    identity = np.tile([1.0, 0.0, 0.0, 0.0], (nf, 1))
    out = {}
    for end, ik_end, ik_root, _, rolls in limbs:
        offset = rigid_inverse(at_rest[end]) @ at_rest[ik_end]  # the end control, rigid with the end bone
        carried = not np.allclose(moved[ik_end], at_rest[ik_end], atol=1e-6)
        want = goal[end] @ offset
        if carried:
            want = rigid_inverse(torso) @ want  # as the control's parent sees it: the torso's motion taken off
        turn = np.einsum("ji,fjk->fik", at_rest[ik_end][:3, :3], want[:, :3, :3])  # about its own axes
        location = np.einsum("ij,fj->fi", np.linalg.inv(moves[ik_end]), want[:, :3, 3] - at_rest[ik_end][:3, 3])
        out[ik_end] = (location, quaternions(turn))
        for name in (ik_root, *rolls):
            out[name] = (None if rig.data.bones[name].use_connect else np.zeros((nf, 3)), identity)
    return out
