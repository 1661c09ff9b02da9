"""Objects marked as colliders → SceneDesc environment bodies, in world units.

The object's rotation and translation become the body frame; its scale (uniform or not) is applied
to the shape's sizes, and its modifiers to its mesh (the shape is what the viewport shows), so
nothing needs to be applied first.
"""
from __future__ import annotations

import numpy as np

from ..solver.formats.scene import EnvBody, Geom
from .i18n import rpt_

MAX_HULL_VERTICES = 5000  # beyond this a hull is too costly: fall back to the bounding box


def collider_geom(obj, frame, warn) -> Geom:
    """The collider shape of mesh `obj`, expressed in the (unscaled) world matrix `frame`."""
    body = collider_body(obj, warn)
    geom = body.geoms[0]
    rel = frame.inverted() @ obj.matrix_world.normalized()
    local = np.array(rel.to_3x3())
    geom.pos = list(np.array(rel.to_translation()) + local @ np.asarray(geom.pos))
    geom.quat = list(rel.to_quaternion())
    return geom


def _evaluated_vertices(obj) -> np.ndarray:
    """The mesh's vertices as the viewport shows them: modifiers (array, mirror, solidify…) applied."""
    import bpy
    if obj.type != "MESH" or obj.data is None:
        return np.zeros((0, 3))
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    try:
        verts = np.empty(len(mesh.vertices) * 3)
        mesh.vertices.foreach_get("co", verts)
    finally:
        evaluated.to_mesh_clear()
    return verts.reshape(-1, 3)


def collider_body(obj, warn) -> EnvBody:
    props = obj.physkey
    verts = _evaluated_vertices(obj)
    if len(verts) == 0:
        raise ValueError(rpt_("collider '{}' has no mesh geometry").format(obj.name))
    m3 = np.array(obj.matrix_world.to_3x3())
    scale = np.linalg.norm(m3, axis=0) * np.sign(np.linalg.det(m3) or 1.0)
    if np.any(scale <= 1e-9):
        raise ValueError(rpt_("collider '{}' has a zero or negative scale "
                              "{}").format(obj.name, tuple(np.round(scale, 4))))
    verts = verts * scale
    lo, hi = verts.min(axis=0), verts.max(axis=0)
    center, half = (lo + hi) / 2, np.maximum((hi - lo) / 2, 1e-4)
    shape = props.shape
    if shape == "auto":  # a hull, unless the mesh is flat (a hull needs volume)
        shape = "box" if np.any(hi - lo < 2e-3) else "hull"
    if shape == "hull" and len(verts) > MAX_HULL_VERTICES:
        warn(rpt_("'{}' has {} vertices, too many for a convex hull: using its bounding "
                  "box").format(obj.name, len(verts)))
        shape = "box"
    geom = Geom(name=f"{obj.name}", type="box", size=list(half), pos=list(center), friction=props.friction,
                mass=props.mass if props.dynamic else None)
    if shape == "sphere":
        geom.type, geom.size = "sphere", [float(np.max(np.linalg.norm(verts - center, axis=1)))]
    elif shape == "cylinder":
        geom.type, geom.size = "cylinder", [float(max(half[0], half[1])), float(half[2])]
    elif shape == "capsule":
        r = float(max(half[0], half[1]))
        geom.type, geom.size = "capsule", [r, float(max(half[2] - r, 1e-4))]
    elif shape == "hull":
        geom.type, geom.size, geom.pos, geom.vertices = "mesh", [], [0.0, 0.0, 0.0], verts.tolist()
    world = obj.matrix_world.normalized()
    return EnvBody(name=obj.name, kind="free" if props.dynamic else "static",
                   pos=list(world.to_translation()), quat=list(world.to_quaternion()), geoms=[geom])


def collider_bodies(scene, warn) -> list[EnvBody]:
    """One body per collider object, except colliders parented to an environment-body Empty
    (a preset's chair, bed …), which become that body's geoms so its name and frame — what contact
    keyframes refer to — are kept."""
    bodies, grouped = [], {}
    for o in scene.objects:
        if not o.physkey.collider:
            continue
        if o.parent is not None and o.parent.physkey.is_body:
            grouped.setdefault(o.parent.name, (o.parent, []))[1].append(o)
        else:
            bodies.append(collider_body(o, warn))
    for name, (empty, members) in sorted(grouped.items()):
        frame = empty.matrix_world.normalized()
        geoms = [collider_geom(o, frame, warn) for o in sorted(members, key=lambda m: m.name)]
        dynamic = any(o.physkey.dynamic for o in members)
        for g in geoms:
            g.mass = None if not dynamic else (g.mass or 1.0)
        bodies.append(EnvBody(name=name, kind="free" if dynamic else "static", pos=list(frame.to_translation()),
                              quat=list(frame.to_quaternion()), geoms=geoms))
    return bodies
