"""*Solve from Here*: a new solve that starts at the current frame of a kept solution — from its pose
*and* its velocity there — and whose Keep splices the new motion in after that frame, keeping the kept
solution's keys before it.

A kept action remembers the solutions it was baked from (`remember`: one segment per solution, a
spliced action several, each with its result file, start frame and how many contact keyframes its solve
skipped); the velocity at the frame is
the difference of the solution's simulated configurations at that step and the one before
(`mj_differentiatePos`: world-frame linear and body-frame angular root velocity, as MuJoCo's qvel) —
exactly the velocity MuJoCo had there, as its Euler-type integrators move qpos by the new velocity.
Contact keyframes the kept solution had already reached by then are not solved again; for assisted
keyframes the pose keys after the frame are solved towards, from the pose there."""
from __future__ import annotations

import os

import numpy as np

from .i18n import rpt_
from .timeline import scene_fps

RESULTS = "physkey_results"  # on a kept action: its segments' result.npz files, one per line
STARTS = "physkey_starts"  # on a kept action: the frame each segment starts at
SKIPPED = "physkey_skipped"  # on a kept action: contact keyframes each segment's solve did not solve again
KEYS = "physkey_pose_keys"  # on a kept action: the animator's action with the pose keys it was solved from


def segments(action) -> list[tuple[str, int, int]]:
    """(result file, start frame, keyframes skipped) of each solution `action` was baked from, in order."""
    if action is None or not action.get(RESULTS):
        return []
    return list(zip(action[RESULTS].split("\n"), (int(s) for s in action[STARTS]),
                    (int(k) for k in action[SKIPPED])))


def remember(action, result_path: str, start: int, skipped: int = 0, earlier=None) -> None:
    """Record on a kept `action` the solution it was baked from — after the segments of `earlier` (the
    kept action it was spliced onto) that start before it."""
    kept = [seg for seg in segments(earlier) if seg[1] < start] + [(result_path, start, skipped)]
    action[RESULTS] = "\n".join(path for path, _, _ in kept)
    action[STARTS] = [first for _, first, _ in kept]
    action[SKIPPED] = [k for _, _, k in kept]


def _segment_at(action, frame: int) -> tuple[str, int, int]:
    """The segment playing at `frame`: the last one starting at or before it."""
    segs = segments(action)
    return next((seg for seg in reversed(segs) if seg[1] <= frame), segs[0])


class Continuation:
    """Where a kept solution is continued from: `frame`, the velocity there (a scene `Velocity`), how many
    contact keyframes it had reached by then, and the actions a Keep splices into."""

    def __init__(self, frame: int, velocity, reached: int, action, rig_action=None):
        self.frame, self.velocity, self.reached = frame, velocity, reached
        self.action, self.rig_action = action, rig_action
        self.keys_action = action.get(KEYS)


def pose_keys_action(source):
    """The action holding the animator's pose keys on `source` (their rig, or the physics character):
    the one it plays, or — where it plays a kept solution — the one that solution was solved from."""
    from .bake import BAKED
    ad = source.animation_data
    action = ad.action if ad else None
    if action is not None and action.get(BAKED):
        return action.get(KEYS)
    return action


def kept_action(obj):
    """The kept PhysKey action `obj` plays, or None."""
    ad = obj.animation_data if obj is not None else None
    action = ad.action if ad else None
    return action if action is not None and action.get(RESULTS) else None


def why_not(scene, obj) -> str:
    """Why *Solve from Here* cannot run now ('' when it can)."""
    action = kept_action(obj)
    if action is None:
        return rpt_("the character does not play a kept solution: Keep one, then go to the frame to solve from")
    if scene.physkey.method == "assist" and action.get(KEYS) is None:
        return rpt_("the kept solution does not say which pose keys it was solved from: solve from the first key")
    path = _segment_at(action, scene.frame_current)[0]
    if not os.path.exists(path):
        return rpt_("the kept solution's file is gone: {}").format(path)
    first, last = action.frame_range
    if not first <= scene.frame_current < last:
        return rpt_("the current frame is outside the kept motion (frames {:.0f}–{:.0f})").format(first, last)
    return ""


def continuation(scene, obj) -> Continuation:
    """The state of the kept solution `obj` plays at the scene's current frame (ValueError naming why
    there is none)."""
    import mujoco

    from ..solver.formats.scene import Velocity
    reason = why_not(scene, obj)
    if reason:
        raise ValueError(reason)
    action = kept_action(obj)
    fps = scene_fps(scene)
    path, start, skipped = _segment_at(action, scene.frame_current)
    t = (scene.frame_current - start) / fps
    model = mujoco.MjModel.from_xml_path(os.path.join(os.path.dirname(os.path.dirname(path)), "model.xml"))
    with np.load(path, allow_pickle=False) as z:
        times, qpos = z["times"], z["qpos"]
        reached = z["keyframes_reached"] if "keyframes_reached" in z.files else np.zeros(0)
    qvel = np.zeros(model.nv)
    if len(times) > 1:
        i = int(np.clip(np.searchsorted(times, t - 1e-9), 1, len(times) - 1))
        mujoco.mj_differentiatePos(model, qvel, float(times[i] - times[i - 1]), qpos[i - 1], qpos[i])
    dof = int(model.jnt_dofadr[model.joint("root").id])
    character = set(character_bodies(model))
    joints = {model.joint(j).name: float(qvel[model.jnt_dofadr[j]]) for j in range(model.njnt)
              if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE and int(model.jnt_bodyid[j]) in character}
    velocity = Velocity(root_linear=[float(v) for v in qvel[dof:dof + 3]],
                        root_angular=[float(v) for v in qvel[dof + 3:dof + 6]], joints=joints)
    done = skipped + int(np.sum(np.isfinite(reached) & (reached <= t + 1e-9)))
    rig = obj.physkey.animator_rig
    rig_action = rig.animation_data.action if rig is not None and rig.animation_data else None
    return Continuation(scene.frame_current, velocity, done, action, rig_action)


def character_bodies(model) -> list[int]:
    """The character's bodies in a solved model: the body with the free joint named `root`, and every
    body below it (bodies come after their parents in a MuJoCo model)."""
    root = int(model.jnt_bodyid[model.joint("root").id])
    inside = {root}
    for b in range(root + 1, model.nbody):
        if int(model.body_parentid[b]) in inside:
            inside.add(b)
    return sorted(inside)


def splice(new_action, old_action, frame: int) -> None:
    """Put `old_action`'s keys before `frame` in front of `new_action`'s (which start at `frame`): the
    earlier solution up to the frame solved from, the new one after it. Curves only the old action has
    are carried over up to the frame too."""
    from .actions import channels_for, fcurves
    new = {(fc.data_path, fc.array_index): fc for fc in fcurves(new_action)}
    channels = channels_for(new_action)
    for old in fcurves(old_action):
        co = np.zeros(2 * len(old.keyframe_points), dtype=np.float32)
        old.keyframe_points.foreach_get("co", co)
        co = co.reshape(-1, 2)
        before = co[co[:, 0] < frame - 1e-4]
        if not len(before):
            continue
        fc = new.get((old.data_path, old.array_index))
        if fc is None:
            fc = channels.fcurves.new(old.data_path, index=old.array_index)
            if old.group is not None:
                fc.group = channels.groups.get(old.group.name) or channels.groups.new(old.group.name)
            mine = np.zeros((0, 2), dtype=np.float32)
        else:
            mine = np.zeros(2 * len(fc.keyframe_points), dtype=np.float32)
            fc.keyframe_points.foreach_get("co", mine)
            mine = mine.reshape(-1, 2)
        both = np.concatenate([before, mine])
        fc.keyframe_points.add(len(before))
        fc.keyframe_points.foreach_set("co", both.ravel())
        fc.keyframe_points.foreach_set("interpolation", np.ones(len(both), dtype=np.int32))  # LINEAR
        fc.update()


def assist_keyframes(context, desc, cont: Continuation) -> list[dict]:
    """The assisted-keyframes task's keyframes from `cont`: the pose at the frame (the start, time 0),
    then the animator's pose keys after it, read from the action they were keyed in (played for the
    reading, then the kept motion is given back) with their times counted from the frame."""
    from .actions import assign, slotted
    from .session import active_character
    from .taskio import pose_keyframes_from_action, sync_pose_keys
    scene = context.scene
    obj = active_character(context)
    source = obj.physkey.animator_rig or obj
    ad = source.animation_data
    kept = (ad.action, ad.action_slot if slotted() else None)
    fps = scene_fps(scene)
    try:
        ad.action = cont.keys_action
        sync_pose_keys(scene, obj)
        keys = sorted(scene.physkey.pose_keys, key=lambda k: k.frame)
        items = pose_keyframes_from_action(context, desc)
    finally:
        assign(source, *kept)
        scene.frame_set(cont.frame)
    later = [(k, item) for k, item in zip(keys, items) if k.frame > cont.frame]
    if not later:
        raise ValueError(rpt_("no pose key after frame {}: key a pose after it to solve towards").format(cont.frame))
    pose = desc.initial_pose
    out = [{"name": f"frame_{cont.frame}", "root_pos": list(pose.root_pos), "root_quat": list(pose.root_quat),
            "weight": 1.0, "joints": dict(pose.joints)}]
    for key, item in later:
        if not key.free:
            item["time"] = (key.frame - cont.frame) / fps
        out.append(item)
    return out
