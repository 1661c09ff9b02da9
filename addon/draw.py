"""Contact pairs and hits drawn in the 3D viewport (gpu module): for the selected contact keyframe,
both points of every pair and the line between them, one colour per pair, with the current
distance; for every hit, an arrow to where it strikes (a push's along its direction, a thrown
ball's from where it is thrown), labelled with its strength and frame."""
from __future__ import annotations

import bpy
from mathutils import Vector

from .session import active_character

COLORS = [(0.95, 0.3, 0.3, 1.0), (0.3, 0.8, 0.35, 1.0), (0.3, 0.55, 0.95, 1.0), (0.95, 0.8, 0.25, 1.0),
          (0.8, 0.4, 0.9, 1.0)]
_handles: list = []


def _point(context, arm, body: str, pos) -> Vector | None:
    """World position of a pair point given in body `body`'s frame."""
    if body == "world":
        return Vector(pos)
    if arm is not None and body in arm.pose.bones:
        return (arm.matrix_world @ arm.pose.bones[body].matrix).normalized() @ Vector(pos)
    obj = context.scene.objects.get(body)
    if obj is not None:
        return obj.matrix_world.normalized() @ Vector(pos)
    return None


def pair_segments(context) -> list:
    """(point on the character, point on the target, colour) of each pair of the selected keyframe."""
    props = context.scene.physkey
    i = props.active_contact_keyframe
    if not (0 <= i < len(props.contact_keyframes)):
        return []
    arm = active_character(context)
    out = []
    for k, pair in enumerate(props.contact_keyframes[i].pairs):
        p, q = _point(context, arm, pair.body1, pair.pos1), _point(context, arm, pair.body2, pair.pos2)
        if p is not None and q is not None:
            out.append((p, q, COLORS[k % len(COLORS)]))
    return out


def hit_marks(context) -> list:
    """(tail, head, colour, label) of each hit's arrow (addon.hits.hit_marks on the pose shown now)."""
    from .hits import hit_marks as marks
    arm = active_character(context)
    return marks(context, lambda body, pos: _point(context, arm, body, pos) if arm is not None else None)


def _draw_3d():
    import gpu
    from gpu_extras.batch import batch_for_shader

    from .hits import arrow_lines
    segments = pair_segments(bpy.context)
    arrows = hit_marks(bpy.context)
    if not segments and not arrows:
        return
    shader = gpu.shader.from_builtin("FLAT_COLOR")
    coords, colors = [], []
    for p, q, c in segments:
        coords += [p, q]
        colors += [c, c]
    lines, line_colors = list(coords), list(colors)
    for tail, head, c, _ in arrows:
        for a, b in arrow_lines(tail, head):
            lines += [a, b]
            line_colors += [c, c]
    width = gpu.state.line_width_get()
    gpu.state.point_size_set(8.0)
    gpu.state.line_width_set(2.0)
    try:
        batch_for_shader(shader, "LINES", {"pos": lines, "color": line_colors}).draw(shader)
        if coords:
            batch_for_shader(shader, "POINTS", {"pos": coords, "color": colors}).draw(shader)
    finally:  # other draw handlers (and Blender's own) find the state as it was
        gpu.state.line_width_set(width)
        gpu.state.point_size_set(1.0)


def _draw_text():
    import blf
    from bpy_extras.view3d_utils import location_3d_to_region_2d
    context = bpy.context
    for p, q, c in pair_segments(context):
        xy = location_3d_to_region_2d(context.region, context.region_data, (p + q) / 2)
        if xy is not None:
            blf.color(0, *c)
            blf.position(0, xy.x + 6, xy.y + 6, 0)
            blf.draw(0, f"{(p - q).length:.3f} m")
    for tail, _, c, label in hit_marks(context):
        xy = location_3d_to_region_2d(context.region, context.region_data, tail)
        if xy is not None:
            blf.color(0, *c)
            blf.position(0, xy.x + 6, xy.y - 14, 0)
            blf.draw(0, label)


def register() -> None:
    if not _handles:
        _handles.append(bpy.types.SpaceView3D.draw_handler_add(_draw_3d, (), "WINDOW", "POST_VIEW"))
        _handles.append(bpy.types.SpaceView3D.draw_handler_add(_draw_text, (), "WINDOW", "POST_PIXEL"))


def unregister() -> None:
    while _handles:
        bpy.types.SpaceView3D.draw_handler_remove(_handles.pop(), "WINDOW")
