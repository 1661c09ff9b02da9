"""Bake a solution into a new Action: root location/rotation and every bone's rotation at the
scene's frame rate, written through the action's channels (`actions`: slotted or not, per Blender) with
`keyframe_points.add` +
`foreach_set` (no per-key Python), plus custom-property curves (β(t), contact distance) the Graph
Editor can plot and timeline markers at the keyframes' reached times."""
from __future__ import annotations

import re
from dataclasses import dataclass

import bpy
import numpy as np

from ..solver.core.rotations import from_matrices, quat_mul, rotate
from .actions import assign, new_channels
from .rig import frames_of

LINEAR = 1  # bpy keyframe interpolation enum value of 'LINEAR'
BAKED = "physkey_baked"  # custom property marking the actions PhysKey bakes


@dataclass(frozen=True)
class Clip:
    """A solution's motion as it is baked: the model it plays on, its rows' times (s) and qpos, and
    where it lands on the timeline (its first frame and the scene's frame rate)."""
    model: object
    times: np.ndarray
    qpos: np.ndarray
    start: int
    fps: float

    def frames(self, times=None) -> np.ndarray:
        """The timeline frames of `times` (s; the clip's own rows' by default)."""
        return self.start + np.asarray(self.times if times is None else times, float) * self.fps


def continuous_quaternions(q):
    """Flip quaternions onto one hemisphere frame to frame, so interpolation never takes the long way."""
    q = q.copy()
    flips = np.cumprod(np.where(np.sum(q[1:] * q[:-1], axis=1) < 0, -1.0, 1.0))
    q[1:] *= flips[:, None]
    return q


def bone_channels(obj, model, qpos: np.ndarray) -> dict:
    """Per bone: (location (F, 3) or None, rotation_quaternion (F, 4)) for every row of qpos (a
    location where a joint turns the bone about another point than its head)."""
    nf = len(qpos)
    out = {}
    scale = obj.matrix_world.to_scale()[0]
    inv_obj = np.array(obj.matrix_world.inverted())
    root_turn, own_axes = frames_of(obj, model, "root")  # a model in other body frames than the rig's
    for pb in obj.pose.bones:
        bone = pb.bone
        if bone.parent is None:
            a = int(model.jnt_qposadr[model.joint("root").id])
            rest_inv = np.array(bone.matrix_local.inverted())
            world = np.zeros((nf, 4, 4))
            q = qpos[:, a + 3:a + 7] / np.linalg.norm(qpos[:, a + 3:a + 7], axis=1, keepdims=True)
            if root_turn is not None:
                q = quat_mul(q, root_turn)
            w, x, y, z = q.T
            world[:, :3, :3] = np.stack([
                np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], 1) * scale
            world[:, :3, 3] = qpos[:, a:a + 3]
            world[:, 3, 3] = 1.0
            basis = rest_inv @ inv_obj @ world
            loc = basis[:, :3, 3]
            rotation = basis[:, :3, :3] / np.linalg.norm(basis[:, :3, :3], axis=1, keepdims=True)  # unit columns
            out[pb.name] = (loc, continuous_quaternions(from_matrices(rotation)))
            continue
        rot = np.tile([1.0, 0.0, 0.0, 0.0], (nf, 1))
        loc = None  # a joint turning about another point than the head moves the bone's head
        for j in bone.physkey.joints:
            jid = model.joint(j.name).id
            adr = model.jnt_qposadr[jid]
            if j.type == "ball":
                r = qpos[:, adr:adr + 4]
            else:
                h = 0.5 * qpos[:, adr]
                axis = (np.asarray(j.axis, float) / np.linalg.norm(j.axis)) if own_axes else model.jnt_axis[jid]
                r = np.concatenate([np.cos(h)[:, None], np.sin(h)[:, None] * axis], axis=1)
            pivot = np.array(j.pos, float)
            if pivot.any():
                loc = (np.zeros((nf, 3)) if loc is None else loc) + rotate(rot, pivot - rotate(r, pivot))
            rot = quat_mul(rot, r)
        out[pb.name] = (loc, continuous_quaternions(rot))
    return out


def _fcurve(channels, data_path, index, frames, values, group=None):
    fc = channels.fcurves.new(data_path, index=index)
    if group is not None:
        fc.group = group
    fc.keyframe_points.add(len(frames))
    co = np.empty(2 * len(frames), dtype=np.float32)
    co[0::2], co[1::2] = frames, values
    fc.keyframe_points.foreach_set("co", co)
    fc.keyframe_points.foreach_set("interpolation", np.full(len(frames), LINEAR, dtype=np.int32))
    fc.update()
    return fc


def rotation_curves(mode: str, quats: np.ndarray) -> tuple[str, np.ndarray]:
    """The channel (`rotation_quaternion`, `rotation_euler` or `rotation_axis_angle`) and its values
    (F, 4 or 3) that give rotations `quats` on a bone in rotation mode `mode` — the rig's own mode,
    so an Euler-keyed rig stays Euler-keyed (Euler angles kept continuous frame to frame)."""
    from mathutils import Euler, Quaternion
    if mode == "QUATERNION":
        return "rotation_quaternion", quats
    if len(quats) > 1 and not np.ptp(quats, axis=0).any():  # held still (a control at rest): one conversion
        channel, first = rotation_curves(mode, quats[:1])
        return channel, np.repeat(first, len(quats), axis=0)
    if mode == "AXIS_ANGLE":
        out = np.empty((len(quats), 4))
        for f, q in enumerate(quats):
            axis, angle = Quaternion(q).to_axis_angle()
            out[f] = (angle, *axis)
        return "rotation_axis_angle", out
    out = np.empty((len(quats), 3))
    previous = Euler((0.0, 0.0, 0.0), mode)
    for f, q in enumerate(quats):
        previous = Quaternion(q).to_euler(mode, previous)
        out[f] = previous
    return "rotation_euler", out


def write_action(obj, channels: dict, name: str, frames, properties: dict | None = None):
    """A new Action (never replacing one: Blender uniquifies the name) for `obj` holding `channels`
    {bone: (location (F, 3) or None, rotation quaternions (F, 4)[, scale (F, 3)])} at `frames`, each bone's rotation
    in its own rotation mode, and `properties` {data path: value held over the range, or one per frame}; returns
    (action, slot, channels) — slot None on Blenders without slotted actions."""
    action = bpy.data.actions.new(name)
    action[BAKED] = True  # a solved motion: never read back as the animator's pose keys
    slot, bag = new_channels(action, obj)
    for bone, (loc, rot, *scale) in channels.items():
        group = bag.groups.new(bone)
        base = f'pose.bones["{bone}"]'
        if loc is not None:
            for i in range(3):
                _fcurve(bag, f"{base}.location", i, frames, loc[:, i], group)
        for i in range(3 if scale else 0):
            _fcurve(bag, f"{base}.scale", i, frames, scale[0][:, i], group)
        channel, values = rotation_curves(obj.pose.bones[bone].rotation_mode, rot)
        for i in range(values.shape[1]):
            _fcurve(bag, f"{base}.{channel}", i, frames, values[:, i], group)
    ends = np.array([frames[0], frames[-1]]) if len(frames) else np.zeros(0)
    for path, value in (properties or {}).items():
        if np.ndim(value):
            _fcurve(bag, path, 0, frames, value)
        else:
            _fcurve(bag, path, 0, ends, np.full(len(ends), value))
    return action, slot, bag


def bake_action(obj, clip: Clip, name: str, extra: dict | None = None):
    """A new Action holding the clip on the physics character, with `extra` {property name:
    (times, values)} as custom-property curves on the object."""
    action, slot, bag = write_action(obj, bone_channels(obj, clip.model, np.asarray(clip.qpos, float)), name,
                                     clip.frames())
    for prop, (times, values) in (extra or {}).items():
        obj[prop] = float(values[0]) if len(values) else 0.0
        _fcurve(bag, f'["{prop}"]', 0, clip.frames(times), np.asarray(values, float))
    return action, slot  # every bone keyed in its own rotation mode, which stays as the animator set it


# A Keep's markers: "<keyframe> · <action name>" (or "<action name> kf<k>" where the keyframes have no names)
KEPT_MARKER = re.compile(r"(.+ · .*_seed\d+(_\w+)?|.*_seed\d+(_\w+)? kf\d+)$")


def add_markers(scene, reached, frame_start: int, fps: float, action: str, names: list[str] | None = None,
                keep_before: int | None = None) -> list:
    """Timeline markers at the frames the keyframes were reached, named after the keyframes (`names`, as many
    as `reached`) and the kept `action`; the markers an earlier Keep left (of this solution or another) are
    replaced, not piled up — but for those before `keep_before` (Solve from Here's kept part). The
    animator's own markers are never touched."""
    for old in [m for m in scene.timeline_markers if KEPT_MARKER.match(m.name)
                and (keep_before is None or m.frame >= keep_before)]:
        scene.timeline_markers.remove(old)
    markers = []
    for k, t in enumerate(reached):
        if t is not None:
            label = f"{names[k]} · {action}" if names else f"{action} kf{k}"
            markers.append(scene.timeline_markers.new(label, frame=int(round(frame_start + t * fps))))
    return markers


def free_joint_curves(channels, frames, q7) -> None:
    """An object's location and quaternion curves from a free joint's qpos per frame (position,
    then quaternion w, x, y, z), the quaternion kept on one side so that it interpolates the short way."""
    rot = continuous_quaternions(q7[:, 3:7] / np.linalg.norm(q7[:, 3:7], axis=1, keepdims=True))
    for i in range(3):
        _fcurve(channels, "location", i, frames, q7[:, i])
    for i in range(4):
        _fcurve(channels, "rotation_quaternion", i, frames, rot[:, i])


def bake_free_bodies(scene, clip: Clip, name: str) -> list:
    """Furniture the character pushed around: each free environment body whose object is in the
    scene gets a new action with its location and rotation."""
    import mujoco
    actions = []
    model, frames = clip.model, clip.frames()
    for j in range(model.njnt):
        if model.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE or model.joint(j).name == "root":
            continue
        body = model.body(int(model.jnt_bodyid[j])).name
        obj = scene.objects.get(body)
        if obj is None:
            continue
        a = int(model.jnt_qposadr[j])
        q = np.asarray(clip.qpos, float)
        action = bpy.data.actions.new(f"{name}_{body}")
        slot, bag = new_channels(action, obj)
        free_joint_curves(bag, frames, q[:, a:a + 7])
        obj.rotation_mode = "QUATERNION"
        action.use_fake_user = True
        previous = obj.animation_data.action if obj.animation_data else None
        if previous is not None:  # the furniture's own animation is set aside, never lost
            previous.use_fake_user = True
        assign(obj, action, slot)
        actions.append(action)
    return actions
