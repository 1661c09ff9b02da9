"""Auto-fill: physics for an ordinary armature (a lamp, a quadruped: humanoids are better served by
Make Physics Character), guessed from what the rig already says.

Each deform bone gets a capsule along it (radius from its envelope, else 12% of its length, density
of water), hinges about the bone's own X/Y/Z axes limited as its Limit Rotation constraint (in Local
space) says (±90° where it says nothing), strength from the mass it carries, and a body-part group
from its name. Made safe to simulate: bones that do not deform and mechanism bones (`MCH-`, IK
targets, poles…) get nothing (welded, massless); tiny bones (under 4% of the rig's size: fingers,
face) get a capsule but no joint (welded to their parent); bones whose capsules overlap at rest
never collide with each other (MuJoCo would otherwise push them apart violently in the first step).
Bones that already have physics are left alone. Returns what it did, for the report.
"""
from __future__ import annotations

import math

from ..solver.builders.mjcf_read import guess_group
from .i18n import rpt_

DENSITY = 1000.0
STRENGTH_PER_KG = 20.0  # N·m of joint strength per kg carried (the humanoid's hips: ≈ 15–20)
TINY = 0.04  # a bone shorter than this fraction of the rig's size is welded (fingers, face)


def _capsule_radius(bone) -> float:
    env = max(bone.head_radius, bone.tail_radius)
    return min(max(env, 0.12 * bone.length), 0.45 * bone.length) if bone.length > 0 else env


def _limits(pose_bone):
    """(axis index, min, max) of each limited axis of the bone's Limit Rotation constraint, last
    rotation of its Euler order first (XYZ: Z, Y, X): hinges applied one after the other in that order
    compose to the Euler rotation the constraint limits (XYZ: R = Rz·Ry·Rx) — so a pose within the
    hinge ranges is one the constraint leaves alone."""
    from .joint_limits import CONSTRAINT
    for c in pose_bone.constraints:
        if c.type == "LIMIT_ROTATION" and c.mute is False and c.owner_space == "LOCAL" and c.name != CONSTRAINT:
            order = c.euler_order
            if order == "AUTO":  # the bone's own Euler order, XYZ for quaternion and axis-angle bones
                order = pose_bone.rotation_mode if len(pose_bone.rotation_mode) == 3 else "XYZ"
            out = []
            for axis in reversed(order):
                ax = axis.lower()
                if getattr(c, f"use_limit_{ax}"):
                    out.append(("xyz".index(ax), getattr(c, f"min_{ax}"), getattr(c, f"max_{ax}")))
            return out, True
    return [(2, -math.pi / 2, math.pi / 2), (1, -math.pi / 2, math.pi / 2), (0, -math.pi / 2, math.pi / 2)], False


def _mechanism(bone) -> bool:
    from .humanoid_map import is_helper
    return not bone.use_deform or bone.name.startswith(("MCH-", "WGT-", "ORG-")) or is_helper(bone.name)


def _rig_size(obj) -> float:
    points = [p for b in obj.data.bones for p in (b.head_local, b.tail_local)]
    return max(max(p[i] for p in points) - min(p[i] for p in points) for i in range(3))


def _overlapping_at_rest(obj) -> list[tuple[str, str]]:
    """Pairs of bones whose shapes touch or overlap in the rest pose (MuJoCo's collision check)."""
    import mujoco

    from ..solver.builders.mjcf import compile_spec, scene_to_spec
    from ..solver.formats.scene import SCHEMA_VERSION, Environment, SceneDesc
    from .rig import read_character
    character = read_character(obj)
    character.exclude_contacts = []
    model = compile_spec(scene_to_spec(SceneDesc(schema_version=SCHEMA_VERSION, name="rest", character=character,
                                                 environment=Environment(floor=False))))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    pairs = set()
    for c in data.contact[: data.ncon]:
        if c.dist < 0.002:
            a, b = (model.body(model.geom_bodyid[g]).name for g in c.geom)
            pairs.add(tuple(sorted((a, b))))
    return sorted(pairs)


def autofill(obj) -> list[str]:
    if obj is None or obj.type != "ARMATURE":
        raise ValueError(rpt_("no armature selected: select the armature to auto-fill"))
    roots = [b for b in obj.data.bones if b.parent is None]
    if len(roots) != 1:
        raise ValueError(rpt_("the rig has {} root bones; PhysKey needs exactly one").format(len(roots)))
    for b in obj.data.bones:
        if b.length <= 1e-6:
            raise ValueError(rpt_("bone '{}' has zero length").format(b.name))
    notes, filled, from_constraints, defaulted = [], 0, 0, 0
    tiny = TINY * _rig_size(obj)
    skipped = [b.name for b in obj.data.bones
               if _mechanism(b) and not len(b.physkey.geoms) and not len(b.physkey.joints)]
    welded = []
    masses = {}
    for bone in obj.data.bones:
        props = bone.physkey
        r = _capsule_radius(bone)
        half = bone.length / 2
        masses[bone.name] = 0.0 if bone.name in skipped else DENSITY * math.pi * r * r * (2 * half + 4 / 3 * r)
        if len(props.geoms) or len(props.joints) or bone.name in skipped:
            continue
        g = props.geoms.add()
        g.name, g.type = f"{bone.name}_capsule", "capsule"
        g.size = (r, max(half - r, 1e-3), 0.0)
        g.pos = (0.0, half, 0.0)
        g.quat = (math.sqrt(0.5), -math.sqrt(0.5), 0.0, 0.0)  # capsule axis (Z) along the bone (Y)
        g.density = DENSITY
        filled += 1
    for bone in obj.data.bones:
        props = bone.physkey
        if bone.parent is None or len(props.joints) or bone.name in skipped:
            continue
        if bone.length < tiny:
            welded.append(bone.name)
            continue
        carried = sum(masses[b.name] for b in [bone, *bone.children_recursive])
        limits, constrained = _limits(obj.pose.bones[bone.name])
        from_constraints += constrained
        defaulted += not constrained
        for i, lo, hi in limits:
            j = props.joints.add()
            j.name = f"{bone.name}_{'xyz'[i]}"
            j.type = "hinge"
            j.axis = tuple(1.0 if k == i else 0.0 for k in range(3))
            j.range_min, j.range_max = lo, hi
            j.group = guess_group(bone.name)
            j.strength = max(STRENGTH_PER_KG * carried, 1.0)
            j.kp, j.kv = 5.0 * j.strength, 0.5 * j.strength
    other = [b.name for b in obj.pose.bones for c in b.constraints
             if c.type == "LIMIT_ROTATION" and not c.mute and c.owner_space != "LOCAL"]
    if other:
        notes.append(rpt_("Limit Rotation not in Local space ignored on {} (it still acts in "
                          "Blender)").format(', '.join(other)))
    notes.append(rpt_("capsules on {} bones (radius from envelopes or 12% of length, density "
                      "{:g})").format(filled, DENSITY))
    notes.append(rpt_("joints from Limit Rotation on {} bones; ±90° hinges guessed on "
                      "{}").format(from_constraints, defaulted))
    if skipped:
        notes.append(rpt_("{} bones that do not deform or are mechanism left without physics "
                          "(welded)").format(len(skipped)))
    if welded:
        notes.append(rpt_("{} tiny bones (under {:.1f} cm) welded to their parents").format(len(welded), tiny * 100))
    existing = {(p.body1, p.body2) for p in obj.physkey.exclude_contacts}
    overlapping = [p for p in _overlapping_at_rest(obj) if p not in existing]
    for b1, b2 in overlapping:
        pair = obj.physkey.exclude_contacts.add()
        pair.body1, pair.body2 = b1, b2
    if overlapping:
        notes.append(rpt_("{} pairs of bones overlapping at rest never collide with each "
                          "other").format(len(overlapping)))
    obj.physkey.is_character = True
    notes.extend(_store_roles(obj))
    from .joint_limits import CONSTRAINT, limit_bone
    for pb in obj.pose.bones:  # bones limited by the animator already keep their own constraint
        if not any(c.type == "LIMIT_ROTATION" and c.name != CONSTRAINT for c in pb.constraints):
            limit_bone(pb)
    return notes


def _store_roles(obj) -> list[str]:
    """The parts the rig's bones play (`solver/builders/roles.py`: by their names, else the skeleton's
    shape), stored on it for the animator to check and change in Character ▸ Roles; what was found and
    the terms off for a part no bone plays, for the report. Roles the animator set are kept."""
    from ..solver.builders.roles import missing_terms, roles_of
    from ..solver.formats.roles import ROLES
    from .rig import read_character
    if len(obj.physkey.roles):
        return []
    roles = roles_of(read_character(obj))
    for role in ROLES:
        if role in roles:
            item = obj.physkey.roles.add()
            item.name, item.bone = role, roles[role]
    return [rpt_("bones found for {} of the {} parts a humanoid's terms read (Character ▸ Roles)").format(
        len(roles), len(ROLES))] + missing_terms(roles)

