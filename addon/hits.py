"""Hits in the scene (`scene.physkey.hits`): pushes and thrown balls that strike the character while
it solves contact keyframes. Here they become the task file's `perturbations` (and back, for a
preset), the marks the viewport draws for them, and the ball objects a solution's thrown balls are
baked onto."""
from __future__ import annotations

import bpy
import numpy as np
from mathutils import Vector

from .i18n import rpt_
from .timeline import scene_fps

BALL_OBJECT = "PhysKey Ball {}"
HITS_COLLECTION = "PhysKey Hits"
PUSH_COLOR = (1.0, 0.55, 0.1, 1.0)
BALL_COLOR = (0.9, 0.25, 0.2, 1.0)
ACTIVE_COLOR = (1.0, 1.0, 1.0, 1.0)


def perturbations_from_hits(scene, bones, start_frame: int) -> dict | None:
    """The task file's `perturbations` for the scene's hits, timed from `start_frame` (where the solve
    starts); hits before it are left out (they struck an earlier part of the motion). None without
    hits. ValueError naming the hit when it names no bone of the character or a ball cannot arrive
    in time (the solver checks the rest, naming the field)."""
    props, fps = scene.physkey, scene_fps(scene)
    impulses, balls = [], []
    for n, hit in enumerate(props.hits, 1):
        t = (hit.frame - start_frame) / fps
        if t < 0:
            continue
        if hit.body not in bones:
            raise ValueError(rpt_("hit {}: the character has no bone '{}'").format(n, hit.body))
        direction = Vector(hit.direction)
        if direction.length < 1e-9:
            raise ValueError(rpt_("hit {}: its direction is zero").format(n))
        direction.normalize()
        if hit.kind == "push":
            impulses.append({"time": t, "body": hit.body, "impulse": list(direction * hit.magnitude),
                             "point": list(hit.point)})
            continue
        flight = hit.distance / hit.speed
        if t < flight - 1e-9:
            raise ValueError(rpt_("hit {}: the ball needs {:.2f} s to arrive from {:g} m: strike at frame {} or "
                                  "later").format(n, flight, hit.distance, start_frame + int(np.ceil(flight * fps))))
        balls.append({"time": t, "aim": hit.body, "direction": list(direction), "aim_point": list(hit.point),
                      "speed": hit.speed, "mass": hit.mass, "radius": hit.radius, "distance": hit.distance,
                      "friction": hit.friction})
    if not impulses and not balls:
        return None
    return {"impulses": impulses, "balls": balls}


def store_hits(scene, perturbations, start_frame: int) -> None:
    """The scene's hits become `perturbations` (a task's, solver.formats.perturbations.Perturbations or None),
    with times from `start_frame`, in the order they strike."""
    props, fps = scene.physkey, scene_fps(scene)
    props.hits.clear()
    items = []
    if perturbations:
        items = [("push", i.time, i) for i in perturbations.impulses] + \
                [("ball", b.time, b) for b in perturbations.balls]
    for kind, t, p in sorted(items, key=lambda e: e[1]):
        hit = props.hits.add()
        hit.kind, hit.frame = kind, start_frame + int(round(t * fps))
        if kind == "push":
            impulse = Vector(p.impulse)
            hit.body, hit.point, hit.magnitude = p.body, p.point, impulse.length
            hit.direction = impulse.normalized() if impulse.length > 0 else (-1.0, 0.0, 0.0)
        else:
            hit.body, hit.point, hit.direction = p.aim, p.aim_point, Vector(p.direction).normalized()
            hit.speed, hit.mass, hit.radius, hit.distance, hit.friction = \
                p.speed, p.mass, p.radius, p.distance, p.friction
        hit.name = f"{kind} {len(props.hits)}"
    props.active_hit = 0


def push_arrow_length(magnitude: float) -> float:
    """How long a push's arrow is drawn (m): longer for a harder push, readable at any size."""
    return float(np.clip(0.05 * magnitude, 0.15, 1.0))


def hit_marks(context, point_of) -> list:
    """What the viewport draws for each hit: (tail, head, colour, label), the arrow ending where it
    strikes — a push's arrow along its direction, a ball's line from where it is thrown. `point_of(body,
    pos)` is the world position of a point in a bone's frame (in the pose shown now), or None."""
    scene = context.scene
    props = scene.physkey
    if props.method != "contact":
        return []
    out = []
    for n, hit in enumerate(props.hits):
        at = point_of(hit.body, hit.point)
        direction = Vector(hit.direction)
        if at is None or direction.length < 1e-9:
            continue
        direction.normalize()
        if hit.kind == "push":
            tail = at - direction * push_arrow_length(hit.magnitude)
            label = rpt_("push {:g} N·s · frame {}").format(round(hit.magnitude, 2), hit.frame)
        else:
            tail = at - direction * hit.distance
            label = rpt_("ball {:g} kg {:g} m/s · frame {}").format(round(hit.mass, 2), round(hit.speed, 2),
                                                                      hit.frame)
        color = ACTIVE_COLOR if n == props.active_hit else PUSH_COLOR if hit.kind == "push" else BALL_COLOR
        out.append((tail, at, color, label))
    return out


def arrow_lines(tail: Vector, head: Vector) -> list:
    """The line segments (pairs of points) of an arrow from `tail` to `head`: its shaft and a head of
    two barbs, 15% of its length (at most 0.1 m)."""
    shaft = head - tail
    if shaft.length < 1e-9:
        return []
    along = shaft.normalized()
    side = along.cross(Vector((0.0, 0.0, 1.0)))
    if side.length < 1e-6:  # vertical: barbs in the x–z plane
        side = along.cross(Vector((1.0, 0.0, 0.0)))
    side.normalize()
    barb = min(0.15 * shaft.length, 0.1)
    back = head - along * barb
    return [(tail, head), (head, back + side * barb * 0.5), (head, back - side * barb * 0.5)]


def ball_objects(scene) -> list:
    """The scene's ball objects (those solutions' thrown balls were baked onto)."""
    collection = bpy.data.collections.get(HITS_COLLECTION)
    return [o for o in collection.objects if o.name in scene.objects] if collection is not None else []


def _ball_object(scene, index: int, radius: float):
    """The scene's object for the solution's ball `index`: a UV sphere of the ball's radius in the
    'PhysKey Hits' collection, made the first time it is needed."""
    name = BALL_OBJECT.format(index + 1)
    obj = scene.objects.get(name)
    if obj is None:
        obj = bpy.data.objects.get(name)
        if obj is None:
            import bmesh
            mesh = bpy.data.meshes.new(name)
            bm = bmesh.new()
            bmesh.ops.create_uvsphere(bm, u_segments=24, v_segments=12, radius=1.0)
            bm.to_mesh(mesh)
            bm.free()
            for poly in mesh.polygons:
                poly.use_smooth = True
            obj = bpy.data.objects.new(name, mesh)
        collection = bpy.data.collections.get(HITS_COLLECTION)
        if collection is None:
            collection = bpy.data.collections.new(HITS_COLLECTION)
        if collection.name not in scene.collection.children:
            scene.collection.children.link(collection)
        if obj.name not in collection.objects:
            collection.objects.link(obj)
    obj.scale = (radius, radius, radius)
    return obj


def bake_balls(scene, clip, name: str) -> list:
    """A solution's thrown balls onto ball objects (made when missing): location and rotation per
    frame, hidden (viewport and render) while a ball waits on the rack, before it is thrown. Returns
    the new actions, named `name` + ball number."""
    import mujoco

    from ..solver.formats.perturbations import BALL_PREFIX, RACK_X
    from .actions import assign, new_channels
    from .bake import free_joint_curves
    model, q, frames = clip.model, np.asarray(clip.qpos, float), clip.frames()
    actions = []
    for j in range(model.njnt):
        body = model.body(int(model.jnt_bodyid[j])).name
        if model.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE or not body.startswith(BALL_PREFIX):
            continue
        index = int(body[len(BALL_PREFIX):])
        geom = int(model.body_geomadr[model.body(body).id])
        obj = _ball_object(scene, index, float(model.geom_size[geom, 0]))
        a = int(model.jnt_qposadr[j])
        action = bpy.data.actions.new(f"{name} {index + 1}")
        slot, bag = new_channels(action, obj)
        free_joint_curves(bag, frames, q[:, a:a + 7])
        waiting = q[:, a] > RACK_X - 1.0  # on the rack: not thrown yet
        for path in ("hide_viewport", "hide_render"):
            fc = bag.fcurves.new(path)
            change = np.flatnonzero(np.diff(waiting.astype(int))) + 1
            for k in [0, *change.tolist()]:
                key = fc.keyframe_points.insert(float(frames[k]), float(waiting[k]))
                key.interpolation = "CONSTANT"
        obj.rotation_mode = "QUATERNION"
        action.use_fake_user = True
        assign(obj, action, slot)
        actions.append(action)
    return actions
