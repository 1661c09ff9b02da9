"""Character ↔ armature: build a rig from a SceneDesc character (one bone per body, the bone's
rest frame = the body frame) and read a rig back into a SceneDesc character; pose a rig from a
MuJoCo qpos. Pure data conversion; operators live in `operators.py`."""
from __future__ import annotations

import bpy
import numpy as np
from mathutils import Matrix, Quaternion, Vector

from ..solver.core.rotations import quat_mul
from ..solver.formats.scene import GEOM_SIZE_COUNT, Actuator, Body, Character, Geom, Joint, Site
from .i18n import rpt_
from .joint_limits import add_joint_limits, suspended
from .shapes import pose_matrix


def build_armature(context, character: Character, name: str | None = None):
    """A new armature object for `character` in the active collection, at the world origin."""
    name = name or character.name
    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    context.collection.objects.link(obj)
    obj.physkey.is_character = True
    rest = {}
    previous = context.view_layer.objects.active
    context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        for b in character.bodies:
            local = pose_matrix(b.pos, b.quat)
            rest[b.name] = rest[b.parent] @ local if b.parent else local
            eb = arm.edit_bones.new(b.name)
            eb.head, eb.tail = (0.0, 0.0, 0.0), (0.0, b.length, 0.0)
            eb.matrix = rest[b.name]
            if b.parent:
                eb.parent = arm.edit_bones[b.parent]
                eb.use_connect = False
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        context.view_layer.objects.active = previous or obj
    drives = {a.joint: a for a in character.actuators}
    with suspended():
        _write_physics(arm, character, drives)
    for pair in character.exclude_contacts:
        item = obj.physkey.exclude_contacts.add()
        item.body1, item.body2 = pair
    for role, body in character.roles.items():
        item = obj.physkey.roles.add()
        item.name, item.bone = role, body
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"
    add_joint_limits(obj)
    return obj


def _write_physics(arm, character: Character, drives: dict) -> None:
    """Each bone's joints, shapes and sites from its body."""
    for b in character.bodies:
        props = arm.bones[b.name].physkey
        for j in b.joints:
            pj = props.joints.add()
            pj.name, pj.type, pj.axis, pj.pos = j.name, j.type, j.axis, j.pos
            pj.range_min, pj.range_max, pj.group = j.range[0], j.range[1], j.group
            pj.damping, pj.stiffness, pj.armature = j.damping, j.stiffness, j.armature
            pj.own_limit_softness = _store_softness(pj, "solref_limit", j.solref_limit, "solimp_limit", j.solimp_limit)
            a = drives.get(j.name)
            pj.actuated = a is not None
            if a is not None:
                pj.strength, pj.kp, pj.kv = a.gear, a.kp, a.kv
        for g in b.geoms:
            pg = props.geoms.add()
            pg.name, pg.type = g.name, g.type
            pg.size = list(g.size) + [0.0] * (3 - len(g.size))
            pg.pos, pg.quat = g.pos, g.quat
            pg.use_mass = g.mass is not None
            pg.mass = g.mass or 0.0
            pg.density, pg.friction, pg.condim = g.density, g.friction, str(g.condim)
            pg.own_softness = _store_softness(pg, "solref", g.solref, "solimp", g.solimp)
        for s in b.sites:
            ps = props.sites.add()
            ps.name, ps.pos = s.name, s.pos


def _store_softness(props, ref_name: str, solref, imp_name: str, solimp) -> bool:
    """Store a shape's or a limit's own MuJoCo softness on its properties; whether it has one. A file that
    gives only one of solref and solimp keeps the other as the property's default (PhysKey's)."""
    if solref is not None:
        setattr(props, ref_name, solref)
    if solimp is not None:
        setattr(props, imp_name, solimp)
    return solref is not None or solimp is not None


def _softness(own: bool, ref_name: str, solref, imp_name: str, solimp) -> dict:
    """The scene fields of a shape's or a limit's own softness (none where it has PhysKey's)."""
    return {ref_name: list(solref), imp_name: list(solimp)} if own else {}


def check_uniform_scale(obj) -> float:
    scale = obj.matrix_world.to_scale()
    if min(scale) <= 0:
        raise ValueError(rpt_("'{}' has a zero or negative scale "
                              "{}").format(obj.name, tuple(round(s, 4) for s in scale)))
    if max(scale) - min(scale) > 1e-6 * max(scale):
        raise ValueError(rpt_("'{}' is scaled non-uniformly {}; apply the "
                              "scale").format(obj.name, tuple(round(s, 4) for s in scale)))
    return float(scale[0])


def read_character(obj) -> Character:
    """The armature as a SceneDesc character in world units (object transform and uniform scale
    applied to the root; bone frames as they are at rest)."""
    if obj is None or obj.type != "ARMATURE":
        raise ValueError(rpt_("the active object is not an armature"))
    arm = obj.data
    roots = [b for b in arm.bones if b.parent is None]
    if len(roots) != 1:
        raise ValueError(rpt_("'{}' has {} root bones; a physics character has one: for your own rig, select it and "
                              "click Make Physics Character").format(obj.name, len(roots)))
    scale = check_uniform_scale(obj)
    unscale = obj.matrix_world.normalized()  # rotation + translation of the object, scale removed
    bodies, actuators = [], []

    def visit(bone):
        if bone.length <= 1e-9:
            raise ValueError(rpt_("bone '{}' has zero length").format(bone.name))
        if bone.parent is None:
            world = obj.matrix_world @ bone.matrix_local
            pos = world.to_translation()
            quat = (unscale.to_quaternion() @ bone.matrix_local.to_quaternion())
        else:
            rel = bone.parent.matrix_local.inverted() @ bone.matrix_local
            pos = rel.to_translation() * scale
            quat = rel.to_quaternion()
        props = bone.physkey
        joints = []
        for j in props.joints:
            joints.append(Joint(name=j.name, type=j.type, axis=list(j.axis), pos=[p * scale for p in j.pos],
                                range=[j.range_min, j.range_max], group=j.group, damping=j.damping,
                                stiffness=j.stiffness, armature=j.armature,
                                **_softness(j.own_limit_softness, "solref_limit", j.solref_limit, "solimp_limit",
                                            j.solimp_limit)))
            if j.actuated:
                actuators.append(Actuator(joint=j.name, gear=j.strength, kp=j.kp, kv=j.kv))
        geoms = [Geom(name=g.name, type=g.type, size=[s * scale for s in list(g.size)[:GEOM_SIZE_COUNT[g.type]]],
                      pos=[p * scale for p in g.pos], quat=list(g.quat), mass=g.mass if g.use_mass else None,
                      density=g.density, friction=g.friction, condim=int(g.condim),
                      **_softness(g.own_softness, "solref", g.solref, "solimp", g.solimp)) for g in props.geoms]
        sites = [Site(name=s.name, pos=[p * scale for p in s.pos]) for s in props.sites]
        bodies.append(Body(name=bone.name, parent=bone.parent.name if bone.parent else None,
                           pos=[float(v) for v in pos], quat=[float(v) for v in quat],
                           length=float(bone.length * scale), joints=joints, geoms=geoms, sites=sites))
        for child in bone.children:
            visit(child)

    visit(roots[0])
    massless = [b.name for i, b in enumerate(bodies) if not b.geoms and (i == 0 or b.joints)]
    if massless:  # MuJoCo's own word for it names a body, not what to do
        if not any(b.geoms for b in bodies):
            raise ValueError(rpt_("'{}' has no physics shapes on its bones: select it and click Make Physics "
                                  "Character, or give its bones shapes").format(obj.name))
        raise ValueError(rpt_("bone '{}' of '{}' moves but has no physics shape, so no mass: give it a shape "
                              "(Physics, for the active bone)").format(massless[0], obj.name))
    names = {b.name for b in bodies}
    excludes = [[p.body1, p.body2] for p in obj.physkey.exclude_contacts if p.body1 in names and p.body2 in names]
    roles = {r.name: r.bone for r in obj.physkey.roles if r.bone}
    return Character(name=obj.name, bodies=bodies, actuators=actuators, exclude_contacts=excludes, roles=roles)


def pose_from_qpos(obj, model, qpos, root_joint: str = "root") -> None:
    """Pose the rig at MuJoCo configuration `qpos` of `model`: the root bone takes the free joint's
    world pose, every other bone the product of its joints' turns, each about its pivot. `model` is
    mostly the rig's own export; a model of the same character in other body frames (the MJCF file the
    rig was imported from, as `solver run --character` writes it) is read in the rig's frames: its
    hinges turn about the rig's axes, its root by the constant turn between its rest frame and the
    root bone's (`frames_of`)."""
    inv_obj = obj.matrix_world.inverted()
    scale = check_uniform_scale(obj)
    root_turn, own_axes = frames_of(obj, model, root_joint)
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"
        bone = pb.bone
        if bone.parent is None:
            a = int(model.jnt_qposadr[model.joint(root_joint).id])
            quat = qpos[a + 3:a + 7] if root_turn is None else quat_mul(np.asarray(qpos[a + 3:a + 7], float), root_turn)
            world = pose_matrix(qpos[a:a + 3], quat) @ Matrix.Scale(scale, 4)
            basis = bone.matrix_local.inverted() @ (inv_obj @ world)
            pb.location = basis.to_translation()
            pb.rotation_quaternion = basis.to_quaternion()
            continue
        basis = Matrix.Identity(4)
        for j in bone.physkey.joints:  # each turns about its pivot (the head unless the joint says)
            jid = model.joint(j.name).id
            a = model.jnt_qposadr[jid]
            if j.type == "ball":
                turn = Quaternion(qpos[a:a + 4]).normalized()
            else:
                axis = Vector(j.axis).normalized() if own_axes else Vector(model.jnt_axis[jid])
                turn = Quaternion(axis, float(qpos[a]))
            pivot = Vector(j.pos)
            basis = basis @ Matrix.Translation(pivot) @ turn.to_matrix().to_4x4() @ Matrix.Translation(-pivot)
        pb.location = basis.to_translation()
        pb.rotation_quaternion = basis.to_quaternion()


def frames_of(obj, model, root_joint: str):
    """(the turn to apply after `model`'s root quaternion; whether to turn the hinges about the rig's own
    axes): None and False for the rig's own export, whose body frames are its bones' (every hinge axis
    the rig's); for another model of the character, the turn from its root's rest frame (its `qpos0`)
    to the root bone's, and True."""
    own = all(np.linalg.norm(np.asarray(j.axis, float) / max(np.linalg.norm(j.axis), 1e-12)
                             - model.jnt_axis[model.joint(j.name).id]) <= 1e-6
              for bone in obj.data.bones for j in bone.physkey.joints if j.type == "hinge")
    if own:
        return None, False
    a = int(model.jnt_qposadr[model.joint(root_joint).id])
    theirs = np.asarray(model.qpos0[a + 3:a + 7], float)
    root = next(b for b in obj.data.bones if b.parent is None)
    rest = (obj.matrix_world @ root.matrix_local).to_quaternion().normalized()
    mine = np.array([rest.w, rest.x, rest.y, rest.z])
    return quat_mul(theirs * np.array([1.0, -1.0, -1.0, -1.0]), mine), True  # their rest frame to the bone's


def world_bone_poses(obj) -> dict:
    """World position and rotation matrix (scale removed) of every posed bone."""
    out = {}
    for pb in obj.pose.bones:
        m = obj.matrix_world @ pb.matrix
        out[pb.name] = (np.array(m.to_translation()), np.array(m.to_3x3().normalized()))
    return out


def _quat_angle_axis_product(axes, angles) -> np.ndarray:
    """The rotation of successive hinges (unit `axes`) turned by `angles`."""
    q = np.array([1.0, 0.0, 0.0, 0.0])
    for axis, angle in zip(axes, angles):
        q = quat_mul(q, np.concatenate([[np.cos(0.5 * angle)], np.sin(0.5 * angle) * axis]))
    return q


def hinge_angles(axes: np.ndarray, target: np.ndarray, start=None) -> np.ndarray:
    """Angles of successive hinges (unit `axes`, in order) whose rotations compose to the unit
    quaternion `target` (least squares when it is not exactly reachable; Gauss–Newton)."""
    n = len(axes)
    if n == 0:
        return np.zeros(0)
    if n == 1:
        v = np.dot(target[1:], axes[0])
        return np.array([2.0 * np.arctan2(v, target[0])])
    x = np.zeros(n) if start is None else np.asarray(start, float).copy()
    target = target if target[0] >= 0 else -target
    for _ in range(50):
        q = _quat_angle_axis_product(axes, x)
        if q @ target < 0:
            q = -q
        err = q - target
        if np.linalg.norm(err) < 1e-13:
            break
        jac = np.empty((4, n))
        for k in range(n):
            dx = np.zeros(n)
            dx[k] = 1e-7
            qk = _quat_angle_axis_product(axes, x + dx)
            jac[:, k] = ((qk if qk @ target >= 0 else -qk) - q) / 1e-7
        step = np.linalg.lstsq(jac, -err, rcond=None)[0]
        x += step
        if np.linalg.norm(step) < 1e-12:
            break
    return (x + np.pi) % (2 * np.pi) - np.pi


def qpos_from_pose(obj, model, root_joint: str = "root") -> np.ndarray:
    """The MuJoCo configuration of the rig's current pose (the reverse of `pose_from_qpos`)."""
    qpos = model.qpos0.copy()
    for pb in obj.pose.bones:
        bone = pb.bone
        if bone.parent is None:
            world = obj.matrix_world @ pb.matrix
            a = int(model.jnt_qposadr[model.joint(root_joint).id])
            qpos[a:a + 3] = np.array(world.to_translation())
            qpos[a + 3:a + 7] = np.array(world.to_3x3().normalized().to_quaternion())
            continue
        rel = (bone.parent.matrix_local.inverted() @ bone.matrix_local).inverted() @ \
            (pb.parent.matrix.inverted() @ pb.matrix)
        target = np.array(rel.to_quaternion().normalized(), dtype=float)
        kinds = [j.type for j in bone.physkey.joints]
        if kinds == ["ball"]:
            a = int(model.jnt_qposadr[model.joint(bone.physkey.joints[0].name).id])
            qpos[a:a + 4] = target
            continue
        if "ball" in kinds:
            raise ValueError(rpt_("bone '{}' mixes a ball joint with hinges; PhysKey reads poses of either, not "
                                  "both").format(bone.name))
        joints = [model.joint(j.name).id for j in bone.physkey.joints]
        if not joints:
            continue
        axes = np.array([model.jnt_axis[j] for j in joints], dtype=float)
        start = [qpos[model.jnt_qposadr[j]] for j in joints]
        for j, angle in zip(joints, hinge_angles(axes, target, start)):
            qpos[model.jnt_qposadr[j]] = angle
    return qpos
