"""Ghosts: several solutions seen at once in the 3D viewport, each in its own colour, beside the one
previewed on the rig — to compare alternatives without baking any (and, drawn by the same handler, a
running solve's motion as it is found: `live_preview`).

A ghost is the character's skeleton (a line from each body to each child) and its capsules' axes,
drawn by a viewport draw handler at the scene's current frame. Nothing is added to the animator's
scene (no duplicated rigs to clean up, nothing for undo to carry); each solution's geometry for every
frame is computed once with MuJoCo's forward kinematics and cached, so a redraw only picks a frame."""
from __future__ import annotations

import bpy
import numpy as np

from .timeline import scene_fps

LIVE_COLOR = (1.0, 0.55, 0.1, 0.9)  # a running solve's live ghost: orange, not any solution's colour
_cache: dict = {}  # (result path, fps) → (frame times (F,), segment end points (F, S, 2, 3) float32)
_handles: list = []


def segments(model, frame_qpos) -> np.ndarray:
    """(F, S, 2, 3) line segments of the character at every row of `frame_qpos`: each body to each of its
    children, then each capsule's (or cylinder's) axis."""
    import mujoco

    from .continuation import character_bodies
    axial = (int(mujoco.mjtGeom.mjGEOM_CAPSULE), int(mujoco.mjtGeom.mjGEOM_CYLINDER))  # ints: a numpy geom
    # type is never `in` a tuple of MuJoCo's enum values
    bodies = character_bodies(model)
    inside = set(bodies)
    sticks = [(int(model.body_parentid[b]), b) for b in bodies if int(model.body_parentid[b]) in inside]
    rods = [g for g in range(model.ngeom) if int(model.geom_bodyid[g]) in inside
            and int(model.geom_type[g]) in axial]
    data = mujoco.MjData(model)
    out = np.empty((len(frame_qpos), len(sticks) + len(rods), 2, 3), dtype=np.float32)
    parent = np.array([p for p, _ in sticks], dtype=int)
    child = np.array([c for _, c in sticks], dtype=int)
    half = model.geom_size[rods, 1][:, None]
    for f, qpos in enumerate(frame_qpos):  # once per solution, not per redraw
        data.qpos[:] = qpos
        mujoco.mj_kinematics(model, data)
        out[f, :len(sticks), 0] = data.xpos[parent]
        out[f, :len(sticks), 1] = data.xpos[child]
        axis = data.geom_xmat[rods].reshape(-1, 3, 3)[:, :, 2]
        out[f, len(sticks):, 0] = data.geom_xpos[rods] - half * axis
        out[f, len(sticks):, 1] = data.geom_xpos[rods] + half * axis
    return out


def _geometry(item, fps: float):
    """The cached (frame times, segments) of a solution at `fps` (computed on first use)."""
    from .solutions import _frames_at, _load
    key = (item.result_path, round(fps, 6))
    if key not in _cache:
        arrays, model = _load(item)
        times, frames = _frames_at(arrays, model, fps)
        _cache[key] = (np.asarray(times, float), segments(model, frames))
    return _cache[key]


def ghost_lines(scene) -> tuple[np.ndarray, np.ndarray]:
    """(coords (N, 3), colors (N, 4)) of every ghosted solution at the scene's current frame: the
    solution's pose at that time from its start frame (its last pose after its end, its first before
    its start); solutions whose files are gone are skipped."""
    fps = scene_fps(scene)
    coords, colors = [], []
    for item in scene.physkey.solutions:
        if not item.ghost:
            continue
        t = (scene.frame_current + scene.frame_subframe - item.start_frame) / fps
        try:
            times, segs = _geometry(item, fps)
        except ValueError:
            continue
        f = int(np.clip(np.searchsorted(times, t + 1e-9) - 1, 0, len(times) - 1))
        pts = segs[f].reshape(-1, 3)
        coords.append(pts)
        colors.append(np.broadcast_to(np.asarray(item.ghost_color, np.float32), (len(pts), 4)))
    if not coords:
        return np.zeros((0, 3), np.float32), np.zeros((0, 4), np.float32)
    return np.concatenate(coords), np.concatenate(colors)


def live_lines(scene) -> tuple[np.ndarray, np.ndarray]:
    """(coords, colors) of the live ghosts of the solve running in `scene` (its `live_preview.LivePreview`;
    none: empty)."""
    from .session import job_for
    job = job_for(scene)
    live = getattr(job, "live", None) if job is not None else None
    coords = live.lines(scene.frame_current + scene.frame_subframe, scene_fps(scene)) if live else \
        np.zeros((0, 3), np.float32)
    return coords.astype(np.float32), np.broadcast_to(np.asarray(LIVE_COLOR, np.float32), (len(coords), 4))


def forget() -> None:
    """Drop the cached geometry (a new solve, a loaded file: the files may have changed)."""
    _cache.clear()


def _draw():
    import gpu
    from gpu_extras.batch import batch_for_shader

    coords, colors = ghost_lines(bpy.context.scene)
    live, live_colors = live_lines(bpy.context.scene)  # the running solve's motion as it is found
    if len(live):
        coords, colors = np.concatenate([coords, live]), np.concatenate([colors, live_colors])
    if not len(coords):
        return
    shader = gpu.shader.from_builtin("FLAT_COLOR")
    width, depth = gpu.state.line_width_get(), gpu.state.depth_test_get()
    gpu.state.line_width_set(3.0)
    gpu.state.depth_test_set("LESS_EQUAL")
    try:
        batch_for_shader(shader, "LINES", {"pos": coords, "color": colors}).draw(shader)
    finally:  # other draw handlers (and Blender's own) find the state as it was
        gpu.state.line_width_set(width)
        gpu.state.depth_test_set(depth)


def register() -> None:
    if not _handles:
        _handles.append(bpy.types.SpaceView3D.draw_handler_add(_draw, (), "WINDOW", "POST_VIEW"))


def unregister() -> None:
    while _handles:
        bpy.types.SpaceView3D.draw_handler_remove(_handles.pop(), "WINDOW")
    forget()
