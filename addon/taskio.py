"""The task in the Blender scene ↔ the solver's task: contact keyframes live in
`scene.physkey.contact_keyframes`; pose keyframes are the keyed frames of the character's action,
with their weight and timing in `scene.physkey.pose_keys`; the character and the colliders are
`extract_scene`'s. `task_from_scene` is what a solve sends."""
from __future__ import annotations

import json

import bpy
import numpy as np

from ..solver.formats.objective_terms import TERM_NAMES
from .colliders import collider_bodies
from .i18n import rpt_
from .rig import pose_from_qpos, qpos_from_pose, read_character
from .session import active_character
from .timeline import scene_fps
from .track_range import track_range


def checked_character(obj):
    """The physics character `obj` as a solve reads it (`read_character`); ValueError, as for a rig without
    shapes, where the animator's rig it was made from was rescaled since (`check_link`)."""
    if obj.physkey.animator_rig is not None:
        from .retarget import check_link
        check_link(obj.physkey.animator_rig, obj)
    return read_character(obj)


def extract_scene(context, warn=None, frame: int | None = None):
    """The current scene as a SceneDesc: the active (or only) PhysKey character, a floor and every
    object marked as a collider, starting in its pose at `frame` (the current frame where not given)."""
    from ..solver.formats.scene import SCHEMA_VERSION, Environment, Pose, SceneDesc, check_references
    obj = active_character(context)
    if obj is None:
        raise ValueError(rpt_("no armature selected: select the character's armature"))
    character = checked_character(obj)
    root = character.bodies[0]
    bodies = collider_bodies(context.scene, warn or (lambda msg: None))
    scene = SceneDesc(schema_version=SCHEMA_VERSION, name=context.scene.name or "scene", character=character,
                      environment=Environment(floor=True, bodies=bodies),
                      initial_pose=Pose(root_pos=root.pos, root_quat=root.quat))
    check_references(scene)
    # The motion starts from the pose the rig shows now, not from its rest pose (the animator's own
    # rig's pose, where the character was made from one: fitted, and the physics character shown so).
    import mujoco

    from ..solver.builders.mjcf import compile_spec, scene_to_spec
    model = compile_spec(scene_to_spec(scene))
    q, problems, _ = poses_at(context, obj, model, [context.scene.frame_current if frame is None else frame])
    q = q[0]
    if problems[0] and warn is not None and obj.physkey.animator_rig is not None:  # fitted: what it could not take
        warn(rpt_("the start pose: {}").format(problems[0]))
    a = int(model.jnt_qposadr[model.joint("root").id])
    scene.initial_pose = Pose(root_pos=[float(v) for v in q[a:a + 3]], root_quat=[float(v) for v in q[a + 3:a + 7]],
                              joints={model.joint(j).name: float(q[model.jnt_qposadr[j]]) for j in range(model.njnt)
                                      if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE and model.joint(j).name in
                                      {jt.name for b in character.bodies for jt in b.joints}})
    return scene


def poses_at(context, obj, model, frames: list[int], clip: bool = False) -> tuple[list, list[str], np.ndarray]:
    """The character's configurations (F, nq) at `frames`, per frame what of the pose it cannot take ('' for
    none), and per frame and mapped slot how far it was lowered onto the floor (m). On the animator's own
    rig: one whole-body fit of the evaluated rig (`pose_reading`), the physics character then posed as the
    fit of the last frame — `clip`: the frames are a clip, put on the floor where the rig stands above or
    in it (`grounding`). On a physics character: its bones' hinges, a joint beyond its range named,
    nothing lowered."""
    rig = obj.physkey.animator_rig
    if rig is not None:
        from .pose_reading import fitted_poses, misfit
        from .retarget import mapping_of
        from .rig_names import animator_names
        fit = fitted_poses(context, rig, obj, model, frames, clip_dt=1.0 / scene_fps(context.scene) if clip else None)
        names = animator_names(rig, mapping_of(rig))  # a Rigify rig's controls, not its ORG bones
        pose_from_qpos(obj, model, fit.qpos[-1])
        context.view_layer.update()
        return fit.qpos, [misfit(fit, f, names) for f in range(len(frames))], fit.lowered
    scene = context.scene
    current = scene.frame_current
    rows, problems = [], []
    try:
        for frame in frames:
            if frame != scene.frame_current:
                scene.frame_set(frame)
            q = qpos_from_pose(obj, model)
            rows.append(q)
            problems.append(_out_of_range(obj, model, q))
    finally:
        if scene.frame_current != current:
            scene.frame_set(current)
    return rows, problems, np.zeros((len(frames), 0))


def store_contact_keyframes(scene, keyframes) -> None:
    scene.physkey.contact_keyframes.clear()
    for kf in keyframes:
        item = scene.physkey.contact_keyframes.add()
        item.name, item.tolerance, item.sustain, item.time_limit = kf.name, kf.tolerance, kf.sustain, kf.time_limit
        item.weights = [kf.weight(t) for t in TERM_NAMES]
        item.style = kf.style or ""
        item.horizon = kf.horizon or 0.0
        item.use_facing = kf.facing_target is not None
        if kf.facing_target is not None:
            item.facing = kf.facing_target
        for p in kf.pairs:
            pair = item.pairs.add()
            pair.body1, pair.pos1, pair.body2, pair.pos2 = p.body1, p.pos1, p.body2, p.pos2


def key_pose_keyframes(context, obj, model, kfs, items, fps: float, frame_start: int) -> None:
    """Key each pose keyframe on a new action of `obj` at its (mid-range) time; remember weights and
    timing freedom per keyed frame."""
    scene = context.scene
    scene.physkey.pose_keys.clear()
    obj.animation_data_create()
    obj.animation_data.action = bpy.data.actions.new(f"{scene.name} keys")
    t = 0.0
    root = int(model.jnt_qposadr[model.joint("root").id])
    for k, item in enumerate(items):
        if k > 0:
            t = item["time"] if "time" in item else t + 0.5 * sum(item["time_range"])
        frame = frame_start + int(round(t * fps))
        qpos = model.qpos0.copy()
        qpos[root:root + kfs.qpos.shape[1]] = kfs.qpos[k]
        pose_from_qpos(obj, model, qpos)
        for pb in obj.pose.bones:
            pb.keyframe_insert("rotation_quaternion", frame=frame)
            if pb.bone.parent is None:
                pb.keyframe_insert("location", frame=frame)
        key = scene.physkey.pose_keys.add()
        key.frame, key.weight = frame, float(kfs.weights[k])
        key.free = "time_range" in item
        if key.free:
            key.range_min, key.range_max = item["time_range"]
    scene.frame_set(frame_start)


# The panel's fields of each method: scene property → settings key (properties.py takes each
# property's default, bounds and description from the solver's settings field of that key).
_MPC_FIELDS = {"mpc_rollouts": "rollouts", "mpc_planner": "planner", "mpc_particles": "particles"}
FIELDS = {"contact": dict(_MPC_FIELDS, mpc_grasp="grasp"), "track": _MPC_FIELDS,
          "assist": {"assist_population": "population", "assist_lambda_beta": "lambda_beta",
                     "assist_samples": "samples", "assist_max_wall_s": "max_wall_s",
                     "assist_curriculum": "curriculum", "assist_physical": "physical"}}


def shadowed_settings(props) -> list[str]:
    """The settings `settings_json` (drawn as More) sets that a field of the Solve panel also holds:
    the JSON wins, so the panel names them beside the fields."""
    try:
        extra = json.loads(props.settings_json or "{}")
    except ValueError:
        return []
    drawn = set(FIELDS.get(props.method, {}).values()) | ({"budget"} if props.method in ("contact", "track") else set())
    return sorted(k for k in extra if k in drawn) if isinstance(extra, dict) else []


def settings_from_scene(props) -> dict:
    """The method's settings: the panel's fields, Draft's over them (`quality`), then anything in
    `settings_json` (the panel's More, which names the fields it overrides: `shadowed_settings`) on top."""
    out = {key: getattr(props, field) for field, key in FIELDS.get(props.method, {}).items()}
    if props.method in ("contact", "track") and props.mpc_effort == "fixed":  # no budget: adaptive effort
        out["budget"] = props.mpc_budget
    if props.quality == "draft":  # over the fields, under More
        from ..solver.formats.settings import draft
        out = draft(props.method, out)
    out.update(json.loads(props.settings_json or "{}"))
    return out


def settings_to_scene(props, method: str, settings: dict) -> None:
    """Fill the panel's fields from a task's settings; the rest (and a value a field cannot hold,
    e.g. a planner the menu does not list) stays as JSON, which overrides the fields."""
    rest = dict(settings)
    for field, key in FIELDS.get(method, {}).items():
        if key in rest:
            try:
                setattr(props, field, rest[key])
            except (TypeError, ValueError):
                continue
            del rest[key]
    if method in ("contact", "track"):
        props.mpc_effort = "fixed" if rest.get("budget") is not None else "adaptive"
        if rest.get("budget") is not None:
            try:
                props.mpc_budget = rest["budget"]
                del rest["budget"]
            except (TypeError, ValueError):
                pass
    props.settings_json = json.dumps(rest)


def contact_keyframe_dict(item) -> dict:
    """One contact keyframe of the scene's list as the solver's JSON."""
    kf = {"name": item.name, "tolerance": item.tolerance, "sustain": item.sustain, "time_limit": item.time_limit,
          "weights": dict(zip(TERM_NAMES, [float(w) for w in item.weights])),
          "pairs": [{"body1": p.body1, "pos1": list(p.pos1), "body2": p.body2, "pos2": list(p.pos2)}
                    for p in item.pairs]}
    if item.use_facing:
        kf["facing_target"] = list(item.facing)
    if item.style:
        kf["style"] = item.style
    if item.horizon > 0.0:
        kf["horizon"] = item.horizon
    return kf


def task_from_scene(context, scene_desc, keyframes: list | None = None, start_frame: int | None = None,
                    warn=None) -> dict:
    """The solver task for what the animator set up in this scene (`keyframes`: these instead of the
    scene's, e.g. Solve from Here's; `start_frame`: where the motion starts, when not at the scene's
    start frame — hits are timed from it; `warn`: told what of the keyed poses the character cannot
    take)."""
    from ..solver.core import schema
    scene = context.scene
    props = scene.physkey
    task = {"schema_version": 1, "name": scene.name or "scene", "method": props.method,
            "scene": {"desc": schema.to_dict(scene_desc)}, "settings": settings_from_scene(props),
            "keyframes": [], "seeds": [0], "output_fps": scene_fps(scene)}
    if keyframes is not None:
        task["keyframes"] = keyframes
    elif props.method == "contact":
        empty = next((item.name for item in props.contact_keyframes if not item.pairs), None)
        if empty is not None:  # said here, not by the solver after it started ("keyframes[3].pairs: …")
            raise ValueError(rpt_("contact keyframe '{}' has no pairs: add one (Add Pair) or remove the "
                                  "keyframe").format(empty))
        task["keyframes"] = [contact_keyframe_dict(item) for item in props.contact_keyframes]
    elif props.method == "assist":
        sync_pose_keys(scene, active_character(context))
        task["keyframes"] = pose_keyframes_from_action(context, scene_desc, warn=warn)
    elif props.method == "track":  # Make Physical: the animation over the frame range is the reference
        if not sync_pose_keys(scene, active_character(context)):  # keyed poses: they alone are the keyframes
            task["settings"].setdefault("stand_ins", False)  # (their in-betweens are interpolation)
        whole_first, last = track_range(scene, active_character(context), warn)
        first = whole_first
        if start_frame is not None:  # Solve from Here: the rest of the range
            first = start_frame
            if first >= last:
                raise ValueError(rpt_("frame {} is at the end of the frame range: nothing is left to follow").format(
                    first))
        task["reference"], poses = reference_from_action(context, scene_desc, first, last, warn,
                                                         read_from=min(whole_first, first))
        task["keyframes"] = pose_keyframes_from_action(context, scene_desc, keyed_times=True, warn=warn,
                                                       start=first, end=last, poses=poses)
    if props.method == "contact":  # pushes and balls, timed from where the motion starts
        from .hits import perturbations_from_hits
        hits = perturbations_from_hits(scene, {b.name for b in scene_desc.character.bodies},
                                       scene.frame_start if start_frame is None else start_frame)
        if hits is not None:
            task["perturbations"] = hits
    return task


def reference_from_action(context, scene_desc, first: int, last: int, warn=None,
                          read_from: int | None = None) -> tuple[dict, dict[int, tuple]]:
    """The character's evaluated animation from frame `first` to `last`, one pose per frame, as the track
    method's reference (times from `first`): a capture, a kept solve, keys with their interpolation —
    whatever drives the bones, put on the floor (said to `warn`) as the clip from `read_from` (Solve from
    Here: the whole range, so the rest is grounded as the whole was); and per frame its (configuration,
    what of the pose it cannot take)."""
    from ..solver.builders.mjcf import compile_spec, scene_to_spec
    model = compile_spec(scene_to_spec(scene_desc))
    fps = scene_fps(context.scene)
    read = list(range(first if read_from is None else read_from, last + 1))
    obj = active_character(context)
    rows, problems, lowered = poses_at(context, obj, model, read, clip=True)
    if warn is not None and np.abs(lowered).max(initial=0.0) > 0.0:
        from .humanoid_map import SLOTS
        from .retarget import mapping_of
        mapping = mapping_of(obj.physkey.animator_rig)
        said = grounding_words(lowered, [mapping.get(slot) or slot for slot in SLOTS])
        if said:
            warn(said)
    kept = [k for k, f in enumerate(read) if f >= first]
    return ({"times": [(read[k] - first) / fps for k in kept], "qpos": [[float(v) for v in rows[k]] for k in kept]},
            {read[k]: (rows[k], problems[k]) for k in kept})


def grounding_words(lowered: np.ndarray, bones: list[str]) -> str:
    """What putting a clip on the floor did (`lowered`: per frame and mapped slot, m), for the animator:
    the whole pose lowered and raised by how much at most, then the bones (`bones`, per slot) set down by
    themselves."""
    whole = lowered.min(axis=1)
    above, into = 100 * whole.max(), -100 * whole.min()
    parts = []
    if above >= 0.5 and into >= 0.5:
        parts.append(rpt_("the animation stands up to {:.1f} cm above the floor and up to {:.1f} cm into it: followed "
                          "on it").format(above, into))
    elif above >= 0.5:
        parts.append(rpt_("the animation stands up to {:.1f} cm above the floor: followed on it").format(above))
    elif into >= 0.5:
        parts.append(rpt_("the animation stands up to {:.1f} cm into the floor: followed on it").format(into))
    own = (lowered - whole[:, None]).max(axis=0)
    set_down = [f"{bones[b]} {100 * own[b]:.1f} cm" for b in np.argsort(-own) if own[b] >= 0.005]
    if set_down:
        parts.append(rpt_("set down on the floor where still above it: {}").format(", ".join(set_down)))
    return "; ".join(parts)


def pose_keyframes_from_action(context, scene_desc, keyed_times: bool = False, warn=None, start: int | None = None,
                               end: int | None = None, poses: dict[int, tuple] | None = None) -> list[dict]:
    """The keyed poses as pose keyframes, timed from the first key: a free key's arrival range as
    the animator set it, or (`keyed_times`: the animation is followed as keyed) where it is keyed.
    With `start` and `end` (Make Physical's frame range): the pose at `start` first, then the keys after
    it up to `end`, timed from `start` (keys outside the range are said to `warn`); none but the start
    is no keyframes at all (the reference's own poses stand in); `poses`: per frame, the reference's
    (configuration, problem) — the keys are the reference's poses at their frames.
    A pose the character cannot take is said on its key and to `warn`: on the animator's own rig the fit
    takes the nearest pose it can; on the physics character a joint up to 10° beyond its range is clamped
    into it, and further beyond is an error."""
    import mujoco

    from ..solver.builders.mjcf import compile_spec, scene_to_spec
    scene = context.scene
    obj = active_character(context)
    model = compile_spec(scene_to_spec(scene_desc))
    fps = scene_fps(scene)
    keys = sorted(scene.physkey.pose_keys, key=lambda k: k.frame)
    if start is not None:
        outside = [k.frame for k in keys if not start < k.frame <= end]
        keys = [k for k in keys if start < k.frame <= end]
        if outside and warn is not None:
            warn(rpt_("pose keys at frames {} are outside the frame range {}–{}: not used").format(
                ", ".join(map(str, outside[:5])), start, end))
        if not keys:
            return []
        keys = [_StartKey(start)] + keys
    root = int(model.jnt_qposadr[model.joint("root").id])
    hinges = [model.joint(j).name for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    if poses is not None:
        rows, found = [poses[k.frame][0] for k in keys], [poses[k.frame][1] for k in keys]
    else:
        rows, found, _ = poses_at(context, obj, model, [k.frame for k in keys]) if keys else ([], [], [])
    out, problems = [], []
    for i, (key, q, problem) in enumerate(zip(keys, rows, found)):
        key.problem = problem
        key.refused = bool(problem) and obj.physkey.animator_rig is None and not problem.startswith(CLAMPED)
        if problem:
            problems.append(rpt_("frame {}: {}").format(key.frame, problem))
        item = {"name": f"frame_{key.frame}", "root_pos": [float(v) for v in q[root:root + 3]],
                "root_quat": [float(v) for v in q[root + 3:root + 7]], "weight": key.weight,
                "joints": {n: float(q[model.jnt_qposadr[model.joint(n).id]]) for n in hinges}}
        if i > 0:
            if key.free and not keyed_times:
                item["time_range"] = [key.range_min, key.range_max]
            else:
                item["time"] = (key.frame - keys[0].frame) / fps
        out.append(item)
    if problems:
        more = rpt_(" (and {} more keys)").format(len(problems) - 3) if len(problems) > 3 else ""
        text = "; ".join(problems[:3]) + more
        if any(key.refused for key in keys):
            raise ValueError(text)
        if warn is not None:  # the fit's nearest pose, or joints clamped: the solve goes on, and says so
            warn(text)
    return out


class _StartKey:
    """Where Make Physical's range starts, standing in for a pose key there (its problem is not shown
    on any key)."""

    def __init__(self, frame: int):
        self.frame, self.weight, self.free, self.problem, self.refused = frame, 1.0, False, "", False


CLAMPED = "clamped"  # the start of a problem the solve goes on with (a joint clamped into its range)


def _out_of_range(obj, model, qpos) -> str:
    """What of a keyed pose of the physics character is beyond its joints' ranges, in the bone's terms:
    beyond the range by more than the solver accepts (10°), the first such joint — the solve is refused;
    else the joints within 10° beyond it, which the solve clamps into it (said, starting CLAMPED); '' if
    none."""
    import math

    import mujoco

    from ..solver.formats.pose_keyframes import ANGLE_SLACK
    clamped = []
    for j in range(model.njnt):
        if model.jnt_type[j] != mujoco.mjtJoint.mjJNT_HINGE or not model.jnt_limited[j]:
            continue
        angle = float(qpos[model.jnt_qposadr[j]])
        lo, hi = model.jnt_range[j]
        bone = model.body(int(model.jnt_bodyid[j])).name
        if angle < lo - ANGLE_SLACK or angle > hi + ANGLE_SLACK:
            return rpt_("bone '{}' is turned {:.0f}° at its joint '{}', which bends {:.0f}°…{:.0f}°: turn it back "
                        "into that range").format(bone, math.degrees(angle), model.joint(j).name, math.degrees(lo),
                                                  math.degrees(hi))
        if angle < lo or angle > hi:
            edge = lo if angle < lo else hi
            clamped.append(rpt_("'{}' {:.1f}° to {:.0f}°").format(model.joint(j).name, math.degrees(angle),
                                                                   math.degrees(edge)))
    if clamped:
        return CLAMPED + rpt_(" into the joint range: {}").format(", ".join(clamped))
    return ""


def keyed_frames(obj) -> list[int]:
    """Frames where the character's action has keys (any channel of any bone)."""
    from .actions import played_fcurves
    frames = set()
    for fc in played_fcurves(obj):
        co = [0.0] * (2 * len(fc.keyframe_points))
        fc.keyframe_points.foreach_get("co", co)
        frames.update(int(round(x)) for x in co[0::2])
    return sorted(frames)


# An action keyed on more than this share of the frames it spans (and on at least DENSE_MIN_KEYS) is a
# motion — a capture, a baked or kept solve — not key poses.
DENSE_SHARE = 0.5
DENSE_MIN_KEYS = 12


def is_dense(frames: list[int]) -> bool:
    """Whether keys on `frames` (sorted) are a motion rather than key poses."""
    return len(frames) >= DENSE_MIN_KEYS and len(frames) > DENSE_SHARE * (frames[-1] - frames[0] + 1)


def sync_pose_keys(scene, obj) -> bool:
    """Make `scene.physkey.pose_keys` list exactly the action's keyed frames, keeping the weight and
    timing already set for frames that stay keyed (new frames: weight 1, fixed time). Make Physical
    follows a motion (a capture, a kept solve — keyed on nearly every frame) as its reference: then the
    pose keys are only the frames the animator marked as ones it must hit (`physkey.mark_pose_key`);
    the other methods refuse such a motion, naming it. Whether the action is such a motion."""
    from .bake import BAKED
    keys = scene.physkey.pose_keys
    source = obj.physkey.animator_rig or obj  # the animator's own rig holds the keys
    action = source.animation_data.action if source.animation_data else None
    track = scene.physkey.method == "track"
    if action is not None and action.get(BAKED) and not track:
        raise ValueError(rpt_("'{}' plays '{}', a solved motion, not your pose keys: assign the action with "
                              "your keyed poses, then solve (Make Physical follows it as it is)").format(
                                  source.name, action.name))
    frames = keyed_frames(source)
    motion = is_dense(frames) or bool(action is not None and action.get(BAKED))
    if motion:
        if not track:
            raise ValueError(rpt_("'{}' is keyed on {} of the {} frames it spans — a motion (a capture?), not key "
                                  "poses: Make Physical follows it; for this method key a few poses").format(
                                      source.name, len(frames), frames[-1] - frames[0] + 1))
        frames = []
    if track:  # marked frames are hit whatever is keyed there
        frames = sorted(set(frames) | {k.frame for k in keys if k.marked})
    known = {k.frame: (k.weight, k.free, k.range_min, k.range_max, k.marked) for k in keys}
    keys.clear()
    for f in frames:
        k = keys.add()
        k.frame = f
        if f in known:
            k.weight, k.free, k.range_min, k.range_max, k.marked = known[f]
    return motion
