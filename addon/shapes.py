"""Visible meshes for physics shapes (capsule, sphere, box, cylinder), parented to their bones so
they follow the pose; what the animator sees and renders."""
from __future__ import annotations

import bmesh
import bpy
from mathutils import Matrix, Quaternion, Vector


def shape_mesh(name: str, gtype: str, size) -> bpy.types.Mesh:
    """A mesh of a MuJoCo shape in its own frame (half-sizes; capsules and cylinders along Z)."""
    bm = bmesh.new()
    try:
        if gtype in ("capsule", "sphere"):
            r = size[0]
            bmesh.ops.create_uvsphere(bm, u_segments=16, v_segments=8, radius=r)
            if gtype == "capsule":
                for v in bm.verts:  # stretch the hemispheres apart into a capsule
                    v.co.z += size[1] if v.co.z > 1e-9 else (-size[1] if v.co.z < -1e-9 else 0.0)
        elif gtype == "box":
            bmesh.ops.create_cube(bm, size=2.0, matrix=Matrix.Diagonal((size[0], size[1], size[2], 1.0)))
        elif gtype == "cylinder":
            bmesh.ops.create_cone(bm, cap_ends=True, segments=16, radius1=size[0], radius2=size[0],
                                  depth=2.0 * size[1])
        else:
            raise ValueError(f"no mesh for shape type '{gtype}'")
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
            local = Matrix.Translation(Vector(g.pos)) @ Quaternion(g.quat).normalized().to_matrix().to_4x4()
            # Bone parenting measures from the bone's tail; cancel that in the parent inverse.
            child.matrix_parent_inverse = Matrix.Translation((0.0, -bone.length, 0.0))
            child.matrix_basis = local
            child.hide_select = True
            created.append(child)
    return created


def character_material():
    mat = bpy.data.materials.get("PhysKey Character") or bpy.data.materials.new("PhysKey Character")
    mat.diffuse_color = (0.8, 0.6, 0.4, 1.0)
    return mat
