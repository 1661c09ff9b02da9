"""Solutions in the scene: events from a solve become entries; selecting one previews it on the
rig (in a scratch action — the animator's own action is set aside, never edited); *Keep* bakes it
into a new Action named after scene, method and seed, with timeline markers and β / contact
distance curves — and, for a physics humanoid made from the animator's own rig, a new Action on
that rig too. A solution whose simulation blew up (`status: "unstable"` in result.json) is listed
as unstable with the time; it previews up to then but is never kept."""
from __future__ import annotations

import json
import os

import bpy
import numpy as np

from ..solver.formats.events import Event
from .actions import assign
from .bake import Clip, add_markers, bake_action, bake_free_bodies
from .continuation import KEYS, pose_keys_action, remember, splice
from .hits import bake_balls
from .i18n import rpt_
from .session import active_character
from .solve_context import apply as apply_context
from .timeline import scene_fps

# Ghost colours (`ghosts.py`): distinct from one another and from the contact pairs'; a solution keeps its own.
GHOST_COLORS = [(1.0, 0.55, 0.1, 1.0), (0.2, 0.85, 0.95, 1.0), (0.95, 0.3, 0.85, 1.0), (0.55, 0.95, 0.25, 1.0),
                (1.0, 0.9, 0.2, 1.0), (0.6, 0.5, 1.0, 1.0), (1.0, 0.45, 0.45, 1.0), (0.3, 0.6, 1.0, 1.0)]
PREVIEW_ACTION = "PhysKey Preview"
PREVIEW_RIG_ACTION = "PhysKey Preview (your rig)"
PREVIEW_BALLS = "PhysKey Preview ball"


def add_from_event(scene, event: dict, context: dict) -> None:
    """List a solution the solver announced, and its variants right under it: its physical version
    (an assisted solution tracked with no assist), its other lineages (particles that got there
    another way). Each carries `context`, its solve's (`solve_context`)."""
    entry = event["solution"]
    _add(scene, entry, event, event["result_path"], context)
    if event["event"] == Event.STAGE:
        return
    keys = entry.get("variants", ["physical"] if "physical" in entry else [])  # results from before the list
    for key in keys:
        variant = entry.get(key)
        if isinstance(variant, dict) and "npz" in variant:
            path = os.path.join(os.path.dirname(event["result_path"]), os.path.basename(variant["npz"]))
            _add(scene, variant, event, path, context, variant=key)


def add_unfinished(scene, seed: int, result_path: str, duration: float, context: dict,
                   reached: list | None = None) -> None:
    """List the motion a cancelled seed had found (`live_preview.keep_unfinished`): not a success, with the
    keyframes it had reached (`reached`: a time or None per keyframe; none known for methods without
    keyframes), named "seed k · unfinished"."""
    entry = {"seed": seed, "success": False, "cost": float("nan"), "duration_s": duration,
             "keyframes_reached": list(reached or []),
             "words": [rpt_("unfinished: cancelled at {:.2f} s of motion").format(duration)]}
    _add(scene, entry, {"event": Event.SOLUTION}, result_path, context, variant="unfinished")


def _add(scene, entry: dict, event: dict, result_path: str, context: dict, variant: str = "") -> None:
    item = scene.physkey.solutions.add()
    apply_context(item, context)
    item.seed, item.stage = entry["seed"], event.get("stage", -1) if event["event"] == Event.STAGE else -1
    item.success, item.cost, item.duration = bool(entry["success"]), float(entry["cost"]), float(entry["duration_s"])
    item.assist = float(entry.get("assist_mean_beta2", 0.0))
    item.result_path = result_path
    item.variant = variant
    reached = entry.get("keyframes_reached", [])
    item.reached_json = json.dumps(reached)
    item.keys_reached, item.keys_total = sum(t is not None for t in reached), len(reached)
    item.unstable = entry.get("status") == "unstable"
    if item.unstable:
        item.success = False
        item.unstable_time = float(entry.get("unstable_time") or entry.get("duration_s") or 0.0)
    quality = entry.get("quality")
    if quality:
        item.has_quality = True
        item.penetration, item.foot_sliding = quality["max_penetration_m"], quality["foot_sliding_m"]
        item.jerk = quality["jerk_rms"]
        at = quality.get("max_penetration_at")  # absent from results written before it was measured
        item.penetration_bodies = json.dumps(at["bodies"]) if at else ""
        item.penetration_time = at["time_s"] if at else -1.0
        item.fall = -1.0 if quality.get("fall_s") is None else quality["fall_s"]
        item.stumbled = bool(quality.get("stumble"))
        item.object_penetration = quality.get("object_penetration_m", -1.0)
        item.object_loose = quality.get("object_unsupported_s", -1.0)
    item.words = ", ".join(entry.get("words", []))
    item.grasps_json = json.dumps(entry.get("grasps", []))
    fid = entry.get("fidelity")
    item.fidelity_json = json.dumps({k: v for k, v in fid.items() if k != "per_body_cm"}) if fid else ""
    item.name = (f"{item.solve} · " if item.solve else "") + f"seed {item.seed}" + \
        (f" · stage {item.stage}" if item.stage >= 0 else "") + (f" · {variant.replace('_', ' ')}" if variant else "")
    item.ghost_color = GHOST_COLORS[(len(scene.physkey.solutions) - 1) % len(GHOST_COLORS)]


def _keyframe_names(item, count: int) -> list[str] | None:
    """The names of the `count` keyframes a solution's reached times are of, from the task its solver ran
    (`task.json` beside its `seed_<k>/` folder); None where it cannot be read or names other keyframes (Make
    physical's poses between marked frames, a preset's included keyframes)."""
    folder = os.path.dirname(os.path.dirname(bpy.path.abspath(item.result_path)))
    try:
        with open(os.path.join(folder, "task.json"), encoding="utf-8") as f:
            names = [str(k.get("name") or "") for k in json.load(f).get("keyframes", [])]
    except (OSError, ValueError, AttributeError):
        return None
    return names if len(names) == count and all(names) else None


def unstable_message(item) -> str:
    """The one line that says why an unstable solution cannot be kept."""
    return (rpt_("{} is unstable: its simulation blew up at {:.3f} s, so it cannot be kept (preview shows it up "
                 "to then; make the scene less stiff or lower the timestep)").format(item.name, item.unstable_time))


def _load(item):
    import zipfile

    import mujoco
    path = bpy.path.abspath(item.result_path)
    if not os.path.exists(path):
        raise ValueError(rpt_("the solution's file is gone: {}").format(path))
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        for key in ("frame_times", "frame_qpos"):
            if key not in arrays:
                raise ValueError(rpt_("it has no '{}'").format(key))
        result_dir = os.path.dirname(os.path.dirname(path))
        model = mujoco.MjModel.from_xml_path(os.path.join(result_dir, "model.xml"))
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(rpt_("the solution's file {} cannot be read ({}); solve again").format(path, e)) from None
    if arrays["frame_qpos"].ndim != 2 or arrays["frame_qpos"].shape[1] != model.nq:
        raise ValueError(rpt_("the solution's file {} does not match its model.xml; solve again").format(path))
    return arrays, model


def _clip(arrays, model, fps: float, start: int) -> Clip:
    """The solution as it is baked at `fps` from frame `start`."""
    times, frames = _frames_at(arrays, model, fps)
    return Clip(model, times, frames, start, fps)


def _frames_at(arrays, model, fps: float) -> tuple[np.ndarray, np.ndarray]:
    """The solution's frames at `fps`: its own when it was solved at that rate, else resampled from
    its simulation steps (the scene's fps changed since the solve: the motion is re-timed, its
    keys stay on whole frames)."""
    from ..solver.core.resample import frame_times, good_prefix, resample_qpos
    times, frames = arrays["frame_times"], arrays["frame_qpos"]
    if len(times) < 2 or abs((times[1] - times[0]) * fps - 1.0) < 1e-6:
        return times, frames
    usable = good_prefix(arrays["qpos"])
    sim_t, sim_q = arrays["times"][usable], arrays["qpos"][usable]
    at = frame_times(float(sim_t[-1]), fps)
    at = at[at <= sim_t[-1] + 1e-9]
    return at, resample_qpos(model, sim_t, sim_q, at)


def _character(context):
    obj = active_character(context)
    if obj is None:
        raise ValueError(rpt_("no character in the scene to show the solution on"))
    return obj


def _curves(arrays) -> dict:
    extra = {}
    if "beta" in arrays:
        extra["physkey_beta"] = (arrays["times"], arrays["beta"])
    if "contact_distance" in arrays:
        extra["physkey_contact_distance"] = (arrays["times"], arrays["contact_distance"])
    return extra


def preview(context, index: int) -> None:
    """Show solution `index` on the rig (errors go to the status line: this runs from a property update)."""
    try:
        _preview(context, index)
    except ValueError as e:
        context.scene.physkey.status = str(e)


def _preview(context, index: int) -> None:
    scene = context.scene
    if index < 0 or index >= len(scene.physkey.solutions):
        return
    obj = _character(context)
    arrays, model = _load(scene.physkey.solutions[index])
    rig = _own_rig(scene, obj)
    for target in _previewed(scene, obj):
        _set_aside(target)
    _remove_previews()
    fps, start = scene_fps(scene), scene.physkey.solutions[index].start_frame
    clip = _clip(arrays, model, fps, start)
    action, slot = bake_action(obj, clip, PREVIEW_ACTION)
    assign(obj, action, slot)
    bake_balls(scene, clip, PREVIEW_BALLS)
    if rig is not None:  # the animator looks at their own character
        from .retarget import bake_onto_rig
        bake_onto_rig(rig, obj, clip, PREVIEW_RIG_ACTION)


def _own_rig(scene, obj):
    """The animator's rig the physics humanoid `obj` was made from, when it is in the scene."""
    rig = obj.physkey.animator_rig
    return rig if rig is not None and rig.name in scene.objects else None


def _characters(scene, obj) -> list:
    """The physics character and, where it was made from one, the animator's rig: what a preview shows on."""
    rig = _own_rig(scene, obj)
    return [obj] if rig is None else [obj, rig]


def _previewed(scene, obj) -> list:
    """What a preview changes the animation of: the characters and the balls of earlier solutions."""
    from .hits import ball_objects
    return _characters(scene, obj) + ball_objects(scene)


def _is_preview(action) -> bool:
    return action.name in (PREVIEW_ACTION, PREVIEW_RIG_ACTION) or action.name.startswith(PREVIEW_BALLS + " ")


def _set_aside(obj) -> None:
    """Remember the animator's action (fake user: never lost) before a preview replaces it."""
    ad = obj.animation_data
    current = ad.action if ad else None
    if current is not None and not _is_preview(current) and obj.physkey.animator_action is None:
        obj.physkey.animator_action = current
        current.use_fake_user = True


def _remove_previews() -> None:
    for old in [a for a in bpy.data.actions if _is_preview(a)]:
        bpy.data.actions.remove(old)


def showing_preview(context) -> bool:
    """Whether a solution's preview plays on the character (or its rig) in place of the animator's action."""
    obj = active_character(context)
    if obj is None:
        return False
    return any(target.physkey.animator_action is not None
               or (target.animation_data and target.animation_data.action and _is_preview(target.animation_data.action))
               for target in _previewed(context.scene, obj))


def end_preview(context) -> None:
    obj = _character(context)
    for target in _previewed(context.scene, obj):
        own = target.physkey.animator_action
        if own is not None:
            target.animation_data.action = own
        elif target.animation_data and target.animation_data.action and _is_preview(target.animation_data.action):
            target.animation_data.action = None
        target.physkey.animator_action = None
    _remove_previews()


def kept_stem(method: str) -> str:
    """A kept action's name for its method, as the Method menu says it ("make_physical", "contact_keyframes"),
    so the Action Editor names the button the animator pressed."""
    from ..solver.core.registry import METHODS
    label = METHODS[method].label if method in METHODS else (method or "solution")
    return "_".join(label.lower().split())


def keep(context, index: int):
    """Bake solution `index` into a new Action and make it the character's; returns the action.
    An unstable solution is refused (ValueError, reported by the operator) before anything changes."""
    scene = context.scene
    item = scene.physkey.solutions[index]
    if item.unstable:
        raise ValueError(unstable_message(item))
    obj = _character(context)
    arrays, model = _load(item)
    fps, start = scene_fps(scene), item.start_frame  # the solution's own context, not the scene's last solve
    name = f"{scene.name}_{kept_stem(item.method)}_seed{item.seed}" + (f"_{item.variant}" if item.variant else "")
    for target in _characters(scene, obj):  # their own actions kept (fake user), then given back
        _set_aside(target)
    end_preview(context)
    keys = pose_keys_action(_own_rig(scene, obj) or obj)
    clip = _clip(arrays, model, fps, start)
    times = clip.times
    action, slot = bake_action(obj, clip, name, extra=_curves(arrays))
    action.use_fake_user = True
    remember(action, bpy.path.abspath(item.result_path), start, item.splice_skipped,  # Solve from Here reads them
             item.splice_action)
    if keys is not None:
        action[KEYS] = keys
    if item.splice_action is not None:  # solved from a frame of an earlier Keep: its keys before that frame
        splice(action, item.splice_action, start)
    assign(obj, action, slot)
    bake_free_bodies(scene, clip, action.name)
    bake_balls(scene, clip, f"{action.name} ball")
    rig = _own_rig(scene, obj)
    if rig is not None:  # the animator's own rig, the physics humanoid made from it
        from .retarget import bake_onto_rig
        rig_action, _ = bake_onto_rig(rig, obj, clip, f"{action.name}_{rig.name}")
        if item.splice_rig_action is not None:
            splice(rig_action, item.splice_rig_action, start)
    # the timeline shows the kept solution's keyframes: an earlier Keep's markers go (before the frame it
    # was solved from, Solve from Here's kept part keeps its own)
    reached = json.loads(item.reached_json)
    add_markers(scene, reached, start, fps, name, _keyframe_names(item, len(reached)),
                keep_before=start if item.splice_action is not None else None)
    last = start + int(np.ceil(float(times[-1]) * fps - 1e-6)) if len(times) else start
    if last > scene.frame_end:  # the whole clip plays and renders
        scene.frame_end = last
    return action
