"""Rigify's IK controls snapped to a baked motion, so the animator's IK controls follow it too.

`rigify_bake` keys the FK controls, which the baked range plays. Each limb's IK controls are keyed as
well, at every frame, where they put the limb's ORG bones on the same targets with the limb switched to
IK: the IK end control (`foot_ik`, `hand_ik`) rigid with the end bone (the IK target under it follows it
rigidly while the foot's roll controls rest), and the chain's bend plane — by the chain root's twist
about the hip–ankle (shoulder–wrist) line (`thigh_ik`, `upper_arm_ik`), or by the pole control where
the limb uses one (`pole_vector`) — turned until the knee or elbow is in the target's plane. Blender's
own IK solves the chain, so each frame is evaluated in the depsgraph (as Rigify's own IK↔FK snapping
does) and the twist corrected from what it measures; the rig's pose, switches and action are put back
after. The hands and feet land exactly; the knees and elbows only as near as Blender's IK solver puts
them with Rigify's IK stretch on (it shortens the chain rather than bend it, where Rigify's own snapping
also keys the chain root's scale, which a bake here does not key), which is why the bake plays FK.
"""
from __future__ import annotations

import numpy as np
from mathutils import Matrix, Quaternion, Vector

from .bone_math import quaternions, rigid_inverse

SIDES = ("L", "R")
# limb: (upper ORG, lower ORG, end ORG, IK end control, IK chain root, pole control, switch bone, roll controls)
LIMBS = {
    "leg": ("thigh", "shin", "foot", "foot_ik", "thigh_ik", "thigh_ik_target", "thigh_parent",
            ("foot_spin_ik", "foot_heel_ik")),
    "arm": ("upper_arm", "forearm", "hand", "hand_ik", "upper_arm_ik", "upper_arm_ik_target", "upper_arm_parent", ()),
}
TWIST_PASSES = 2


def ik_controls(rig) -> list[tuple]:
    """The limbs of the rig that have Rigify's IK controls: (limb, side) with their bones' names."""
    bones = rig.pose.bones
    out = []
    for upper, lower, end, ik_end, ik_root, pole, switch, rolls in LIMBS.values():
        for s in SIDES:
            names = [f"ORG-{upper}.{s}", f"ORG-{lower}.{s}", f"ORG-{end}.{s}", f"{ik_end}.{s}", f"{ik_root}.{s}",
                     f"{pole}.{s}", f"{switch}.{s}"]
            if all(n in bones for n in names):
                out.append((names, [f"{r}.{s}" for r in rolls if f"{r}.{s}" in bones]))
    return out


def _set_basis(pb, basis: np.ndarray) -> None:
    pb.matrix_basis = Matrix(basis.tolist())


def _basis_for(pb, armature: np.ndarray) -> np.ndarray:
    """The basis that puts pose bone `pb` at `armature` (4×4, armature space) under its parent as posed:
    Blender's own conversion, which knows the bone's inheritance settings (Rigify's IK controls do not
    all inherit their parent's rotation and scale)."""
    rig = pb.id_data
    return np.array(rig.convert_space(pose_bone=pb, matrix=Matrix(armature.tolist()), from_space="POSE",
                                      to_space="LOCAL"))


def _twist(hip, end, knee_now, knee_goal) -> float:
    """The angle about the hip→end line that turns the knee as it is onto where it should be."""
    axis = end - hip
    axis /= max(np.linalg.norm(axis), 1e-12)
    a = knee_now - hip
    b = knee_goal - hip
    a -= axis * (a @ axis)
    b -= axis * (b @ axis)
    if np.linalg.norm(a) < 1e-6 or np.linalg.norm(b) < 1e-6:
        return 0.0  # a straight limb: any twist bends it the same
    return float(np.arctan2(axis @ np.cross(a, b), a @ b))


def ik_channels(rig, goal: dict[str, np.ndarray], trunk: dict) -> dict:
    """{IK control: (location (F, 3) or None, quaternions (F, 4))} putting each limb's ORG bones on `goal`
    (armature space, F × 4 × 4) in IK, with the trunk controls posed as `trunk` ({control: (location or
    None, quaternions)}, the FK bake's) at every frame."""
    import bpy
    limbs = ik_controls(rig)
    if not limbs:
        return {}
    bones = rig.pose.bones
    nf = len(next(iter(goal.values())))
    saved = {pb.name: pb.matrix_basis.copy() for pb in bones}
    switches = {names[6]: bones[names[6]]["IK_FK"] for names, _ in limbs}
    action = rig.animation_data.action if rig.animation_data else None
    keyed: dict[str, list] = {}
    try:
        if action is not None:
            rig.animation_data.action = None  # its curves would override the pose set here
        for names, rolls in limbs:
            bones[names[6]]["IK_FK"] = 0.0
            for name in rolls:
                bones[name].matrix_basis = Matrix.Identity(4)
        rig.update_tag()  # a custom property set from Python tags nothing: the switches' drivers must see it
        for f in range(nf):
            for control, (loc, rot) in trunk.items():
                pb = bones[control]
                basis = Quaternion(rot[f]).to_matrix().to_4x4()
                if loc is not None:
                    basis.translation = Vector(loc[f])
                pb.matrix_basis = basis
            for names, _ in limbs:
                for name in names[3:6]:
                    bones[name].matrix_basis = Matrix.Identity(4)
            bpy.context.view_layer.update()
            for names, _ in limbs:  # the end control rigid with the end bone, as they are at rest
                end, ik_end = bones[names[2]], bones[names[3]]
                offset = rigid_inverse(np.array(end.matrix)) @ np.array(ik_end.matrix)
                _set_basis(ik_end, _basis_for(ik_end, goal[names[2]][f] @ offset))
            bpy.context.view_layer.update()
            for _ in range(TWIST_PASSES):
                for names, _ in limbs:
                    _bend_plane(bones, names, goal, f)
                bpy.context.view_layer.update()
            for names, rolls in limbs:
                for name in [*names[3:6], *rolls]:
                    keyed.setdefault(name, []).append(np.array(bones[name].matrix_basis))
    finally:
        for name, basis in saved.items():
            bones[name].matrix_basis = basis
        for bone, value in switches.items():
            bones[bone]["IK_FK"] = value
        rig.update_tag()
        if action is not None:
            rig.animation_data.action = action
        bpy.context.view_layer.update()
    out = {}
    for name, mats in keyed.items():
        m = np.array(mats)
        located = not rig.data.bones[name].use_connect and np.abs(m[:, :3, 3]).max() > 1e-9
        out[name] = (m[:, :3, 3].copy() if located else None, quaternions(m[:, :3, :3]))
    return out


def _bend_plane(bones, names, goal, f) -> None:
    """Turn the limb's bend plane (its pole where it uses one, else its chain root's twist) so the knee
    or elbow comes onto its target."""
    upper, lower, end, _, ik_root, pole, switch = (bones[n] for n in names)
    hip, ankle = np.array(upper.head), np.array(end.head)
    knee_goal = goal[names[1]][f][:3, 3]
    if switch.get("pole_vector", False):
        mid = hip + (ankle - hip) * ((knee_goal - hip) @ (ankle - hip)) / max((ankle - hip) @ (ankle - hip), 1e-12)
        out = knee_goal - mid
        length = np.linalg.norm(np.array(lower.head) - hip)
        if np.linalg.norm(out) > 1e-6:
            target = np.eye(4)
            target[:3, :3] = np.array(pole.matrix)[:3, :3]
            target[:3, 3] = knee_goal + out / np.linalg.norm(out) * length
            _set_basis(pole, _basis_for(pole, target))
        return
    angle = _twist(hip, ankle, np.array(lower.head), knee_goal)
    if abs(angle) < 1e-7:
        return
    axis = (ankle - hip) / max(np.linalg.norm(ankle - hip), 1e-12)
    turn = np.eye(4)
    turn[:3, :3] = np.array(Matrix.Rotation(angle, 3, Vector(axis)))
    now = np.array(ik_root.matrix)
    turned = turn @ now
    turned[:3, 3] = now[:3, 3]
    basis = _basis_for(ik_root, turned)
    basis[:3, 3] = np.array(ik_root.matrix_basis)[:3, 3]
    _set_basis(ik_root, basis)
