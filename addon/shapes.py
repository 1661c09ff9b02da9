"""Visible meshes for physics shapes (capsule, sphere, ellipsoid, box, cylinder), parented to their bones so
they follow the pose; what the animator sees and renders."""
from __future__ import annotations

import bmesh
import bpy
from mathutils import Matrix, Quaternion, Vector

from .i18n import rpt_


def shape_mesh(name: str, gtype: str, size) -> bpy.types.Mesh:
    """A mesh of a MuJoCo shape in its own frame (half-sizes; capsules and cylinders along Z)."""
    bm = bmesh.new()
    try:
        if gtype in ("capsule", "sphere", "ellipsoid"):
            r = size[0]
            bmesh.ops.create_uvsphere(bm, u_segments=16, v_segments=8, radius=r)
            if gtype == "ellipsoid":  # a sphere of the first half-size, stretched to the others
                for v in bm.verts:
                    v.co.y *= size[1] / r
                    v.co.z *= size[2] / r
            if gtype == "capsule":
                for v in bm.verts:  # stretch the hemispheres apart into a capsule
                    v.co.z += size[1] if v.co.z > 1e-9 else (-size[1] if v.co.z < -1e-9 else 0.0)
        elif gtype == "box":
            bmesh.ops.create_cube(bm, size=2.0, matrix=Matrix.Diagonal((size[0], size[1], size[2], 1.0)))
        elif gtype == "cylinder":
            bmesh.ops.create_cone(bm, cap_ends=True, segments=16, radius1=size[0], radius2=size[0],
                                  depth=2.0 * size[1])
        else:
            raise ValueError(rpt_("no mesh for shape type '{}'").format(gtype))
        mesh = bpy.data.meshes.new(name)
        bm.to_mesh(mesh)
    finally:
        bm.free()
    for poly in mesh.polygons:
        poly.use_smooth = True
    return mesh


def add_bone_shapes(context, obj, material=None) -> list:
    """One mesh object per geom of every bone, parented to the bone at the geom's place."""
    created = []
    context.view_layer.update()
    for bone in obj.data.bones:
        for g in bone.physkey.geoms:
            if g.type == "mesh":
                continue
            mesh = shape_mesh(f"{obj.name}_{g.name}", g.type, list(g.size))
            child = bpy.data.objects.new(f"{obj.name}_{g.name}", mesh)
            context.collection.objects.link(child)
            if material is not None:
                mesh.materials.append(material)
            child.parent = obj
            child.parent_type = "BONE"
            child.parent_bone = bone.name
            local = pose_matrix(g.pos, g.quat)
            # Bone parenting measures from the bone's tail; cancel that in the parent inverse.
            child.matrix_parent_inverse = Matrix.Translation((0.0, -bone.length, 0.0))
            child.matrix_basis = local
            child.hide_select = True
            created.append(child)
    return created


def pose_matrix(pos, quat) -> Matrix:
    """The 4×4 transform of a position and a (w, x, y, z) quaternion (MuJoCo's pose of a body or geom)."""
    return Matrix.Translation(Vector(pos)) @ Quaternion(quat).normalized().to_matrix().to_4x4()


def named_material(name: str, color) -> bpy.types.Material:
    """The material `name` (made with viewport colour `color` the first time it is needed)."""
    mat = bpy.data.materials.get(name)
    if mat is None:
        mat = bpy.data.materials.new(name)
        mat.diffuse_color = color
    return mat


def character_material():
    return named_material("PhysKey Character", (0.8, 0.6, 0.4, 1.0))


def furniture_material():
    return named_material("PhysKey Furniture", (0.45, 0.3, 0.2, 1.0))
