"""The animator's own rig ↔ PhysKey's physics humanoid.

`make_physics_character` maps the rig (`humanoid_map`), builds the default humanoid with the rig's
proportions (`solver.builders.proportions`; limb thickness from the meshes the rig deforms, where there are
any) as a PhysKey character overlaid on the rig, and links the two.
`bake_onto_rig` puts a solved motion onto the rig's mapped bones as a new Action: each mapped bone
turns with its physics body, offset by the fixed rotation between the two at the *aligned rest* —
the rig's rest with each limb bone that has a limb bone below it swung onto the physics limb's
direction (the physics humanoid keeps the default's rest posture, arms down, whatever the rig's T- or
A-pose), the feet and hands carried as they are at rest (a foot flat at the rig's rest is flat on the
physics foot's sole) — and the rig's
pelvis follows the physics pelvis. The spine bones between mapped ones are welded in the physics
character, so the bake holds them at rest; every bone head of a mapped bone then lands on the point
of its physics body that it marks at rest; the toes bend up off the floor (`toe_bend`). Bones outside
the mapping (fingers, face, twist bones) are not keyed and keep the animator's pose.
"""
from __future__ import annotations

import numpy as np
from mathutils import Matrix

from .bone_math import offset_from_parent, quaternions, rigid_inverse
from .humanoid_map import SLOTS, BoneInfo, MappingError, hand_at_forearm_end, map_humanoid
from .i18n import rpt_

LIMB_NEXT = {"thigh": "shin", "shin": "foot", "upper_arm": "lower_arm", "lower_arm": "hand"}


def bone_infos(obj) -> list[BoneInfo]:
    return [BoneInfo(b.name, b.parent.name if b.parent else None, tuple(b.head_local), tuple(b.tail_local),
                     b.use_deform) for b in obj.data.bones]


def stored_mapping(obj) -> dict[str, str]:
    return {item.name: item.bone for item in obj.physkey.humanoid_map}


def store_mapping(obj, mapping: dict[str, str]) -> None:
    obj.physkey.humanoid_map.clear()
    for slot in SLOTS:
        item = obj.physkey.humanoid_map.add()
        item.name, item.bone = slot, mapping.get(slot, "")


def mapping_of(obj) -> dict[str, str]:
    """The rig's stored mapping where it has one (the animator may have fixed slots), else the one
    found now; MappingError when it is incomplete or wrong."""
    from .humanoid_map import check_mapping
    stored = stored_mapping(obj)
    if stored:
        check_mapping(stored, bone_infos(obj))
        return stored
    return map_humanoid(bone_infos(obj))


def _world(obj, bone_name: str) -> tuple[np.ndarray, np.ndarray]:
    """World (head, tail) of a bone at rest."""
    b = obj.data.bones[bone_name]
    m = obj.matrix_world
    return np.array(m @ b.head_local), np.array(m @ b.tail_local)


HAND_PER_FOREARM = 0.7  # a hand's length per forearm length, where a skeleton ends at the wrist
# A bone whose head lies within this share of the body's height (pelvis to head) of a mapped bone's segment lies on
# it: a Rigify control starts on its ORG bone (0 apart), a finger a few centimetres past the hand's end.
ALONG_SHARE = 0.08


def _slot_world(obj, mapping, slot: str) -> tuple[np.ndarray, np.ndarray]:
    """World (head, tail) at rest of the bone mapped to `slot`; for a hand at its forearm's end, from
    the forearm's tail on along it, a hand's length."""
    head, tail = _world(obj, mapping[slot])
    if hand_at_forearm_end(mapping, slot):
        head, tail = tail, tail + HAND_PER_FOREARM * (tail - head)
    return head, tail


def _facing(obj, mapping) -> Matrix:
    """The rotation about world Z that turns the rig to face +X with its left at +Y (PhysKey's
    standing frame), from where its left hip is."""
    left = _world(obj, mapping["thigh_left"])[0] - _world(obj, mapping["thigh_right"])[0]
    left[2] = 0.0
    if np.linalg.norm(left) < 1e-6:
        raise MappingError(rpt_("the thighs '{}' and '{}' are at the same place: the rig's left and right "
                                "cannot be told apart").format(mapping['thigh_left'], mapping['thigh_right']))
    angle = np.pi / 2 - np.arctan2(left[1], left[0])
    return Matrix.Rotation(float(angle), 3, "Z")


def rig_points(obj, mapping) -> tuple[dict, Matrix, np.ndarray]:
    """({body: (head, tail)} in PhysKey's standing frame, the facing rotation, the origin used)."""
    from .rig import check_uniform_scale
    try:
        check_uniform_scale(obj)
    except ValueError as e:
        raise MappingError(str(e)) from None
    turn = _facing(obj, mapping)
    origin = np.array(obj.matrix_world.to_translation())
    r = np.array(turn)
    points = {}
    for slot in SLOTS:
        head, tail = _slot_world(obj, mapping, slot)
        points[slot] = (r @ (head - origin), r @ (tail - origin))
    return points, turn, origin


def ankle_heights(obj, mapping) -> dict[str, float]:
    """{side: how far the rig's ankle (the foot bone's head) is above its sole at rest}: the sole is the
    lowest end of the foot bone and the bones under it (toes, heel) that deform or are Rigify's ORG
    bones (not its controls and mechanism, which lie anywhere)."""
    m = obj.matrix_world
    out = {}
    for side in ("left", "right"):
        foot = obj.data.bones[mapping[f"foot_{side}"]]
        under = [b for b in foot.children_recursive if b.use_deform or b.name.startswith("ORG-")]
        ends = [foot.tail_local] + [v for b in under for v in (b.head_local, b.tail_local)]
        out[side] = float((m @ foot.head_local).z - min((m @ v).z for v in ends))
    return out


def _deforming_meshes(rig) -> list:
    import bpy
    return [o for o in bpy.data.objects if o.type == "MESH" and any(
        m.type == "ARMATURE" and m.object == rig for m in o.modifiers)]


def _weighted_vertices(mesh) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """World positions of a mesh's vertices and, per vertex group name, the vertices weighted ≥ 0.5."""
    n = len(mesh.data.vertices)
    co = np.empty(3 * n)
    mesh.data.vertices.foreach_get("co", co)
    world = np.array(mesh.matrix_world)
    points = co.reshape(n, 3) @ world[:3, :3].T + world[:3, 3]
    members: dict[int, list[int]] = {}
    for v in mesh.data.vertices:
        for g in v.groups:
            if g.weight >= 0.5:
                members.setdefault(g.group, []).append(v.index)
    names = {g.index: g.name for g in mesh.vertex_groups}
    return points, {names[i]: np.array(vs) for i, vs in members.items() if i in names}


def mesh_radii(rig, mapping) -> dict[str, float]:
    """{body: radius} from the meshes the rig deforms: the median distance from the mapped bone's
    axis of the vertices weighted ≥ 0.5 to its vertex group (a Rigify-generated rig's `DEF-` group
    and its twist segments for an `ORG-` bone); bodies with fewer than 8 such vertices are left out."""
    meshes = [_weighted_vertices(m) for m in _deforming_meshes(rig)]
    out = {}
    for slot, bone in mapping.items():
        if hand_at_forearm_end(mapping, slot):
            continue  # no bone of its own: a hand's default thickness
        base = "DEF-" + bone[4:] if bone.startswith("ORG-") else bone
        head, tail = _world(rig, bone)
        axis = tail - head
        distances = []
        for points, groups in meshes:
            for name, index in groups.items():
                if name == base or name.startswith(base + ".0"):
                    p = points[index] - head
                    t = np.clip(p @ axis / max(float(axis @ axis), 1e-12), 0.0, 1.0)
                    distances.extend(np.linalg.norm(p - t[:, None] * axis, axis=1))
        if len(distances) >= 8:
            out[slot] = float(np.median(distances))
    return out


def convert_units(context, rig, mapping) -> str:
    """PhysKey works in metres. A rig a hundred times a person's height (a BVH imported at Blender's
    default scale, centimetres read as metres) has its object scaled by 0.01, as the importers' own scale
    option would; returns what was done ('' when nothing was) — the rig's units are said, never guessed
    silently. A rig of any other size is left for `check_height` to refuse with its height."""
    from ..solver.builders.proportions import HEIGHT_RANGE
    points, _, _ = rig_points(rig, mapping)
    z = [float(p[2]) for ends in points.values() for p in ends]
    height = max(z) - min(z)
    low, high = HEIGHT_RANGE
    if low <= height <= high or not low <= height / 100 <= high:
        return ""
    rig.scale = rig.scale * 0.01
    context.view_layer.update()
    return rpt_("'{}' was {:.0f} m tall: its units are centimetres, so it is scaled by 0.01 to {:.2f} m (Ctrl+Z "
                "undoes)").format(rig.name, height, height / 100)


def make_physics_character(context, rig, mass: float | None = None):
    """A PhysKey character with the rig's proportions, overlaid on the rig and linked to it; one made from
    the rig before (at another scale, or proportions since changed) is replaced, never doubled."""
    import bpy

    from ..solver.builders.proportions import proportioned_humanoid
    from .joint_limits import add_joint_limits
    from .rig import build_armature
    if rig is None or rig.type != "ARMATURE":
        raise MappingError(rpt_("select the armature of your character"))
    if rig.physkey.is_character:
        raise MappingError(rpt_("'{}' is a PhysKey physics character already; select your own rig").format(rig.name))
    mapping = mapping_of(rig)
    note = convert_units(context, rig, mapping)
    old = linked_physics(rig)
    points, turn, origin = rig_points(rig, mapping)
    character = proportioned_humanoid(points, mass=mass, name=f"{rig.name} physics", radii=mesh_radii(rig, mapping),
                                      ankle_heights=ankle_heights(rig, mapping))
    name = old.name if old is not None else f"{rig.name} physics"
    if old is not None:  # made again (the rig rescaled, its proportions changed): one physics character
        data = old.data
        bpy.data.objects.remove(old)
        if data.users == 0:
            bpy.data.armatures.remove(data)
    obj = build_armature(context, character, name=name)
    obj.matrix_world = Matrix.Translation(origin) @ turn.inverted().to_4x4()
    obj.physkey.animator_rig = rig
    obj.physkey.linked_scale = float(rig.matrix_world.to_scale()[0])
    rig.physkey.units_note = note
    add_joint_limits(obj)  # none: it follows the animator's rig, where out-of-range keys are flagged instead
    obj.show_in_front = True
    store_mapping(rig, mapping)
    return obj, mapping, note


def check_link(rig, physics) -> None:
    """ValueError when the rig was rescaled since its physics character was made from it (the bodies
    would no longer be the rig's size): Make Physics Character again re-links it."""
    made = physics.physkey.linked_scale
    now = float(rig.matrix_world.to_scale()[0])
    if made > 0 and abs(now - made) > 1e-4 * made:
        raise ValueError(rpt_("'{}' was scaled from {:.4g} to {:.4g} since '{}' was made from it: select it and Make "
                              "Physics Character again").format(rig.name, made, now, physics.name))


# ------------------------------------------------------------------------------------------------
# Baking a solved motion onto the rig

def _swing(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The smallest rotation (3×3) turning unit vector a onto unit vector b."""
    v, c = np.cross(a, b), float(np.dot(a, b))
    if c < -1 + 1e-12:
        axis = np.cross(a, [1.0, 0.0, 0.0] if abs(a[0]) < 0.9 else [0.0, 1.0, 0.0])
        axis /= np.linalg.norm(axis)
        return 2 * np.outer(axis, axis) - np.eye(3)
    k = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + k + k @ k / (1 + c)


def _rest(obj, name):
    """World rest matrix (4×4, scale removed) of a bone."""
    m = obj.matrix_world @ obj.data.bones[name].matrix_local
    out = np.array(m.normalized())
    out[:3, 3] = np.array(m.to_translation())
    return out


def _slot_rest(obj, mapping, slot: str) -> np.ndarray:
    """World rest matrix of the bone mapped to `slot`; a hand at its forearm's end: the forearm's,
    moved to its tail."""
    out = _rest(obj, mapping[slot])
    if hand_at_forearm_end(mapping, slot):
        out[:3, 3] = _world(obj, mapping[slot])[1]
    return out


def alignment(rig, physics, mapping) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per slot: (C, p) — the mapped bone's rotation relative to its physics body (3×3) and the
    bone head's position in the body's frame, both at the aligned rest (see the module doc)."""
    aligned: dict[str, np.ndarray] = {}
    out = {}
    for slot in SLOTS:  # trunk first, then each limb root to tip
        rest = _slot_rest(rig, mapping, slot)
        limb, side = _split(slot)
        body = _rest(physics, slot)
        above = _limb_parent(limb, side)
        if above is None:
            carried = rest
        else:  # carried rigidly by the mapped bone above (the bones between at rest)
            carried = aligned[above] @ rigid_inverse(_slot_rest(rig, mapping, above)) @ rest
            if limb == "foot":  # but turned as at rest: a foot flat on the rig's floor is flat on the sole
                carried[:3, :3] = rest[:3, :3]
        nxt = LIMB_NEXT.get(limb)
        if nxt is not None:  # swung onto the physics limb, so the next joint is where the physics one is
            head_rest = rest[:3, 3]
            end = _slot_world(rig, mapping, f"{nxt}_{side}")[0]
            d_local = rest[:3, :3].T @ (end - head_rest)
            d_now = carried[:3, :3] @ (d_local / np.linalg.norm(d_local))
            turn = _swing(d_now, body[:3, 1])
            carried = carried.copy()
            carried[:3, :3] = turn @ carried[:3, :3]
        aligned[slot] = carried
        out[slot] = (body[:3, :3].T @ carried[:3, :3], body[:3, :3].T @ (carried[:3, 3] - body[:3, 3]))
    return out


def _split(slot: str) -> tuple[str, str]:
    """('upper_arm', 'left') for 'upper_arm_left'; (slot, '') for the trunk's slots."""
    for side in ("left", "right"):
        if slot.endswith("_" + side):
            return slot[: -len(side) - 1], side
    return slot, ""


def _limb_parent(limb: str, side: str) -> str | None:
    for upper, lower in LIMB_NEXT.items():
        if lower == limb:
            return f"{upper}_{side}"
    return None


def _body_frames(model, frame_qpos, bodies: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """World positions (F, B, 3) and rotations (F, B, 3, 3) of `bodies` at every frame (MuJoCo's
    forward kinematics, one call per frame)."""
    import mujoco
    data = mujoco.MjData(model)
    ids = [model.body(b).id for b in bodies]
    pos = np.empty((len(frame_qpos), len(ids), 3))
    rot = np.empty((len(frame_qpos), len(ids), 3, 3))
    for f, q in enumerate(frame_qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        pos[f] = data.xpos[ids]
        rot[f] = data.xmat[ids].reshape(-1, 3, 3)
    return pos, rot


def mapped_targets(rig, physics, model, frame_qpos, mapping) -> dict[str, np.ndarray]:
    """Per mapped bone: its armature-space matrix (F, 4, 4; rotation and head, unit scale) at every
    frame — on its physics body, offset as at the aligned rest."""
    align = alignment(rig, physics, mapping)
    pos, rot = _body_frames(model, frame_qpos, list(SLOTS))
    inv_obj = rigid_inverse(np.array(rig.matrix_world.normalized()))
    scale = rig.matrix_world.to_scale()[0]
    out = {}
    for k, slot in enumerate(SLOTS):
        if hand_at_forearm_end(mapping, slot):
            continue  # the forearm's bone is keyed for the forearm
        c, p = align[slot]
        world = np.zeros((len(frame_qpos), 4, 4))
        world[:, :3, :3] = rot[:, k] @ c
        world[:, :3, 3] = pos[:, k] + rot[:, k] @ p
        world[:, 3, 3] = 1.0
        target = inv_obj @ world
        target[:, :3, 3] /= scale
        out[mapping[slot]] = target
    return out


def rig_targets(rig, physics, model, frame_qpos, mapping) -> dict[str, np.ndarray]:
    """`mapped_targets`, and the toes under the feet bent up off the floor (`toe_bend`)."""
    from .toe_bend import bent_toes
    targets = mapped_targets(rig, physics, model, frame_qpos, mapping)
    rest = mapped_targets(rig, physics, model, model.qpos0[None], mapping)
    return targets | bent_toes(rig, model, rest, targets, mapping)


def rig_channels(rig, targets: dict[str, np.ndarray], mapping) -> dict:
    """Per bone of a plain rig (deform bones driven directly): (location (F, 3) or None,
    rotation (F, 4) quaternions) putting the bones on their `targets` (`rig_targets`); the bones
    between mapped bones at rest."""
    nf = len(next(iter(targets.values())))
    keyed = set(targets)
    for bone in list(keyed):  # the chain between mapped bones: welded, held at rest
        b = rig.data.bones[bone].parent
        chain = []
        while b is not None and b.name not in keyed:
            chain.append(b.name)
            b = b.parent
        if b is not None:
            keyed.update(chain)
    root = mapping[_root_slot(mapping, rig)]
    posed: dict[str, np.ndarray] = {}  # armature-space posed matrices (F, 4, 4)
    out = {}
    for b in rig.data.bones:  # parents before children
        if b.name not in keyed:
            continue
        parent_posed = None if b.parent is None else posed.get(b.parent.name)
        if b.parent is not None and parent_posed is None:  # above the mapping: as the animator posed it
            parent_posed = np.broadcast_to(np.array(rig.pose.bones[b.parent.name].matrix), (nf, 4, 4))
        base = offset_from_parent(b) if parent_posed is None else parent_posed @ offset_from_parent(b)
        if b.name in targets:
            basis = rigid_inverse(base) @ targets[b.name]
            loc = basis[:, :3, 3].copy() if b.name == root and not b.use_connect else None
            if loc is None:  # the head follows from the parent's pose
                basis[:, :3, 3] = 0.0
            out[b.name] = (loc, quaternions(basis[:, :3, :3]))
            posed[b.name] = base @ basis
        else:
            out[b.name] = (None, np.tile([1.0, 0.0, 0.0, 0.0], (nf, 1)))
            posed[b.name] = base
    return out


def _root_slot(mapping, rig) -> str:
    """The mapped slot highest in the rig's hierarchy: it carries the root motion."""
    depth = {slot: len(rig.data.bones[bone].parent_recursive) for slot, bone in mapping.items()}
    return min(SLOTS, key=lambda s: (depth[s], SLOTS.index(s)))


def bake_onto_rig(rig, physics, clip, name: str):
    """A new Action on the animator's rig with the clip (`bake.Clip`) solved on `physics`, each bone keyed
    in its own rotation mode (the rig's current action is kept with a fake user, never edited); returns
    (action, slot)."""
    from .actions import assign
    from .bake import write_action
    from .rigify_bake import is_rigify_generated, rigify_channels
    check_link(rig, physics)
    mapping = mapping_of(rig)
    model, frame_qpos = clip.model, np.asarray(clip.qpos, float)
    if is_rigify_generated(rig):
        from .rigify_ik import switch_curves
        channels, switches = rigify_channels(rig, rig_targets(rig, physics, model, frame_qpos, mapping))
        switches.update(switch_curves(rig, clip.frames()))
    else:
        channels, switches = rig_channels(rig, rig_targets(rig, physics, model, frame_qpos, mapping), mapping), {}
    current = rig.animation_data.action if rig.animation_data else None
    if current is not None:
        current.use_fake_user = True
    action, slot, _ = write_action(rig, channels, name, clip.frames(), properties=switches)
    action.use_fake_user = True
    assign(rig, action, slot)
    return action, slot


# ------------------------------------------------------------------------------------------------
# Poses between the animator's rig and its physics humanoid

def linked_physics(rig):
    """The physics humanoid made from `rig` (None when it has none, or `rig` is not an animator's rig)."""
    if rig is None or rig.type != "ARMATURE" or rig.physkey.is_character:
        return None
    import bpy
    return next((o for o in bpy.data.objects if o.physkey.is_character and o.physkey.animator_rig == rig), None)


def body_of(rig, bone_name: str, mapping: dict[str, str]) -> str:
    """The physics body a bone of the rig belongs to: its slot; else the slot whose bone it starts on as posed now
    (a Rigify control: `hand_ik.R` at `ORG-hand.R`'s head, `foot_fk.L` at `ORG-foot.L`'s, parented to neither —
    the parent chain had put a leg's FK controls on the pelvis and refused the IK hands) where its nearest mapped
    ancestor's bone is farther; else that ancestor's (a finger belongs to the hand, a prop to the hand holding
    it); ValueError for a bone with neither."""
    slot_of = {bone: slot for slot, bone in mapping.items() if not hand_at_forearm_end(mapping, slot)}
    b = rig.data.bones[bone_name]
    while b is not None and b.name not in slot_of:
        b = b.parent
    gaps = {bone: _gap(rig, bone_name, bone) for bone in slot_of}
    nearest = min(gaps, key=gaps.get)
    pose, world = rig.pose.bones, rig.matrix_world
    height = (world @ pose[mapping["head"]].head - world @ pose[mapping["pelvis"]].head).length \
        if mapping.get("head") in pose and mapping.get("pelvis") in pose else 0.0
    if gaps[nearest][0] <= ALONG_SHARE * height and (b is None or gaps[nearest] < gaps[b.name]):
        return slot_of[nearest]
    if b is None:
        raise ValueError(rpt_("bone '{}' is not part of the humanoid (neither on nor below one of its bones): pick "
                              "a bone of the body").format(bone_name))
    return slot_of[b.name]


def _gap(rig, bone_name: str, other: str) -> tuple[float, float]:
    """How far (world units) the head of bone `bone_name` is from bone `other`'s segment, then from its head, both
    as posed now: at a joint, the bone that starts there comes first (the foot's at the ankle, not the shin's)."""
    pose, world = rig.pose.bones, rig.matrix_world
    at = world @ pose[bone_name].head
    head, tail = world @ pose[other].head, world @ pose[other].tail
    seg = tail - head
    t = 0.0 if seg.length_squared == 0.0 else min(max((at - head).dot(seg) / seg.length_squared, 0.0), 1.0)
    return round((head + seg * t - at).length, 6), (head - at).length


def to_body_frame(rig, physics, bone_name: str, point_world) -> tuple[str, np.ndarray]:
    """(body, the point in that body's frame) for a world point on the rig's bone as posed now."""
    mapping = mapping_of(rig)
    slot = body_of(rig, bone_name, mapping)
    c, p = alignment(rig, physics, mapping)[slot]
    m = rig.matrix_world @ rig.pose.bones[mapping[slot]].matrix
    frame = np.array(m.normalized())
    frame[:3, 3] = np.array(m.to_translation())
    local = rigid_inverse(frame) @ np.append(np.asarray(point_world, float), 1.0)
    return slot, c @ local[:3] + p


def pose_rig_from_qpos(rig, physics, model, qpos) -> dict:
    """Pose the rig at the physics configuration `qpos` (as a bake's single frame would); returns the
    channels set, {bone: (location or None, quaternion)}."""
    from .bake import rotation_curves
    from .rigify_bake import is_rigify_generated, rigify_channels
    mapping = mapping_of(rig)
    q = np.asarray(qpos, float)[None]
    if is_rigify_generated(rig):
        from .rigify_ik import set_path
        channels, switches = rigify_channels(rig, rig_targets(rig, physics, model, q, mapping))
        for path, value in switches.items():
            set_path(rig, path, value)
    else:
        channels = rig_channels(rig, rig_targets(rig, physics, model, q, mapping), mapping)
    for name, (loc, rot, *scale) in channels.items():
        pb = rig.pose.bones[name]
        if loc is not None:
            pb.location = loc[0]
        if scale:
            pb.scale = scale[0][0]
        channel, values = rotation_curves(pb.rotation_mode, rot)
        setattr(pb, channel, values[0])
    return channels
