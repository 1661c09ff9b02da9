"""Baking onto a rig Rigify generated: through its controls, as Rigify's own bake tools do.

A generated rig's deform and ORG bones follow its controls through constraints, so keys on them do
nothing; the motion goes on the controls an animator would key — every one that moves a mapped deform
bone, so the deform bones land on the bodies whatever those controls held before. `torso` carries the
root motion (rigid with the pelvis); the spine's tweak controls put each ORG spine bone where its
physics body is (the pelvis, the lower back, the chest, the upper chest welded to the chest); `neck`
stays welded to the upper chest and `head` turns with the physics head; each limb goes on its FK
controls (`thigh_fk`, `shin_fk`, `foot_fk`, `upper_arm_fk`, `forearm_fk`, `hand_fk`) and on its IK
controls snapped to the same pose (`rigify_ik`), so the limb lands on its bodies whichever way its IK/FK
switch stands: the switches are left as the animator keyed them, and a limb animated in IK stays in IK.
The toes go on `toe_fk` and `toe_ik`, rigid with the foot or bent up off the floor (`toe_bend`). The
controls that would add to that (`hips`, `chest`, the FK spine, the shoulders, the limbs' tweaks, the foot
roll) are keyed at rest, and `head_follow` to 1 (the head follows the neck).

The bones between a control and its parent control (Rigify's MCH mechanism) are rigid with the
nearest keyed control above them when every control is keyed as here; their offsets are measured
once, with the rig evaluated in that configuration, and the animator's pose is put back after.
"""
from __future__ import annotations

import re

import numpy as np

from .bone_math import offset_from_parent, quaternions, rigid_inverse
from .rigify_ik import held_still

SIDES = ("L", "R")
FK = {f'pose.bones["{limb}_parent.{s}"]["IK_FK"]': 1.0 for limb in ("thigh", "upper_arm") for s in SIDES}
HEAD_FOLLOW = {'pose.bones["torso"]["head_follow"]': 1.0}
# control → the ORG bone it puts in place
_TRUNK = [("torso", "ORG-spine"), ("tweak_spine", "ORG-spine"), ("tweak_spine.001", "ORG-spine.001"),
          ("tweak_spine.002", "ORG-spine.002"), ("tweak_spine.003", "ORG-spine.003"), ("neck", "ORG-spine.004"),
          ("head", "ORG-spine.006")]
_LIMBS = [(f"{fk}_fk.{s}", f"ORG-{org}.{s}") for s in SIDES for fk, org in (
    ("thigh", "thigh"), ("shin", "shin"), ("foot", "foot"), ("upper_arm", "upper_arm"), ("forearm", "forearm"),
    ("hand", "hand"))]
CONTROLS = _TRUNK + _LIMBS
# The toes' FK controls, where the rig has them: keyed with the toes bent off the floor (`toe_bend`).
TOES = [(f"toe_fk.{s}", f"ORG-toe.{s}") for s in SIDES]
# Controls that move a mapped deform bone besides those the motion goes on: held at rest over a bake.
_HELD = re.compile(r"^(hips|chest|spine_fk(\.\d+)?|tweak_spine(\.\d+)?|shoulder\.[LR]|toe_(fk|ik)\.[LR]|"
                   r"(thigh|shin|foot|upper_arm|forearm|hand)_tweak\.[LR](\.\d+)?)$")
SPINE = [f"ORG-spine{suffix}" for suffix in ("", ".001", ".002", ".003", ".004", ".005", ".006")]
_LOCATED = {"torso", "tweak_spine", "tweak_spine.001", "tweak_spine.002", "tweak_spine.003", "neck", "head"}


def is_rigify_generated(rig) -> bool:
    """A rig Rigify generated (its data carries Rigify's `rig_id`) with the controls baked onto."""
    bones = rig.data.bones
    return bool(rig.data.get("rig_id")) and all(c in bones and o in bones for c, o in CONTROLS)


def _rest(rig, name) -> np.ndarray:
    return np.array(rig.data.bones[name].matrix_local)


def held_controls(rig) -> list[str]:
    """The controls of the rig that a bake holds at rest (see the module doc)."""
    keyed = {c for c, _ in CONTROLS}
    return [pb.name for pb in rig.pose.bones if _HELD.match(pb.name) and pb.name not in keyed]


def _evaluated_with_controls_at_rest(rig) -> dict[str, np.ndarray]:
    """Armature-space matrices of every bone with the baked and held controls at rest and the switches
    as the bake keys them (FK, to measure the FK controls' offsets); the rig's pose and switches are
    put back."""
    with held_still(rig, [c for c, _ in CONTROLS] + held_controls(rig), FK | HEAD_FOLLOW):
        return {pb.name: np.array(pb.matrix) for pb in rig.pose.bones}


def rigify_channels(rig, targets: dict[str, np.ndarray]) -> tuple[dict, dict]:
    """({control: (location (F, 3) or None, rotation quaternions (F, 4)[, scale (F, 3)])}, {property path:
    value held over the range}) putting the mapped ORG bones on their `targets` (armature space,
    F × 4 × 4) whichever way the limbs' IK/FK switches stand."""
    evaluated = _evaluated_with_controls_at_rest(rig)
    goal = dict(targets)
    for k, org in enumerate(SPINE):  # spine bones welded in the physics character: rigid with the one below
        if org not in goal and k > 0:
            below = SPINE[k - 1]
            goal[org] = goal[below] @ rigid_inverse(_rest(rig, below)) @ _rest(rig, org)
    nf = len(next(iter(goal.values())))
    controls = CONTROLS + [(c, o) for c, o in TOES if c in rig.data.bones and o in goal]
    keyed = {c for c, _ in controls}
    posed: dict[str, np.ndarray] = {}
    out = {}
    for control, org in sorted(controls, key=lambda c: len(rig.data.bones[c[0]].parent_recursive)):
        # where the control must be for its ORG bone to be on target (the torso: rigid with the pelvis)
        target = goal[org] @ rigid_inverse(_rest(rig, org)) @ _rest(rig, control)
        bone = rig.data.bones[control]
        parent = bone.parent
        anchor = parent
        while anchor is not None and anchor.name not in keyed:
            anchor = anchor.parent
        if parent is None:
            parent_posed = np.broadcast_to(np.eye(4), (nf, 4, 4))
        elif anchor is None:
            parent_posed = np.broadcast_to(evaluated[parent.name], (nf, 4, 4))
        else:
            parent_posed = posed[anchor.name] @ rigid_inverse(evaluated[anchor.name]) @ evaluated[parent.name]
        base = offset_from_parent(bone) if parent is None else parent_posed @ offset_from_parent(bone)
        basis = rigid_inverse(base) @ target
        loc = basis[:, :3, 3].copy() if control in _LOCATED and not bone.use_connect else None
        if loc is None:
            basis[:, :3, 3] = 0.0
        out[control] = (loc, quaternions(basis[:, :3, :3]))
        posed[control] = base @ basis
    for control in (c for c in held_controls(rig) if c not in keyed):
        connected = rig.data.bones[control].use_connect
        out[control] = (None if connected else np.zeros((nf, 3)), np.tile([1.0, 0.0, 0.0, 0.0], (nf, 1)))
    from .rigify_ik import ik_channels, ik_root_twists
    out.update(ik_channels(rig, goal, posed, [c for c, _ in CONTROLS] + held_controls(rig)))
    for root, (turn, scale) in ik_root_twists(rig, out, goal).items():
        out[root] = (out[root][0], turn, scale)
    return out, dict(HEAD_FOLLOW)
