"""Colliders: object transforms and shapes reach MuJoCo as the animator set them."""
import math

import mujoco
import numpy as np
import pytest
from blender_env import installed_extension


@pytest.fixture()
def scene_with_character(tmp_path):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.add_character()
    return bpy, bpy.context.active_object


def _cube(bpy, name, location, rotation, scale):
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=location, rotation=rotation, scale=scale)
    obj = bpy.context.active_object
    obj.name = name
    obj.physkey.collider = True
    return obj


def _export(bpy, armature, path):
    bpy.context.view_layer.objects.active = armature
    assert bpy.ops.physkey.export_mjcf(filepath=str(path)) == {"FINISHED"}
    return mujoco.MjModel.from_xml_path(str(path))


def test_box_collider_keeps_scale_rotation_and_place(scene_with_character, tmp_path):
    bpy, arm = scene_with_character
    box = _cube(bpy, "crate", (1.0, 0.5, 0.3), (0.0, 0.0, math.radians(30)), (0.5, 0.25, 0.3))
    box.physkey.shape = "box"
    box.physkey.friction = 0.9
    model = _export(bpy, arm, tmp_path / "s.xml")
    g = model.geom("crate").id
    np.testing.assert_allclose(model.geom_size[g], [0.5, 0.25, 0.3], atol=1e-5)
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    np.testing.assert_allclose(data.geom_xpos[g], [1.0, 0.5, 0.3], atol=1e-5)
    np.testing.assert_allclose(data.geom_xmat[g].reshape(3, 3),
                               np.array(box.matrix_world.to_3x3().normalized()), atol=1e-5)
    assert model.geom_friction[g][0] == pytest.approx(0.9)


@pytest.mark.every_blender
def test_free_hull_collider_with_mass(scene_with_character, tmp_path):
    bpy, arm = scene_with_character
    bpy.ops.mesh.primitive_cone_add(vertices=12, radius1=0.3, depth=0.6, location=(2.0, 0.0, 0.3))
    cone = bpy.context.active_object
    cone.name = "cone"
    cone.physkey.collider, cone.physkey.dynamic, cone.physkey.mass = True, True, 3.0
    model = _export(bpy, arm, tmp_path / "s.xml")
    b = model.body("cone").id
    assert model.body_mass[b] == pytest.approx(3.0)
    assert model.body_jntnum[b] == 1  # a free joint: it can be pushed
    g = model.geom("cone").id
    assert model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH


@pytest.mark.parametrize("shape,want", [("sphere", [math.sqrt(3) * 0.2]), ("cylinder", [0.2, 0.2]),
                                        ("capsule", [0.2, 1e-4])])
def test_primitive_shapes_bound_the_object(scene_with_character, tmp_path, shape, want):
    bpy, arm = scene_with_character
    obj = _cube(bpy, "thing", (0.0, 2.0, 0.2), (0, 0, 0), (0.2, 0.2, 0.2))
    obj.physkey.shape = shape
    model = _export(bpy, arm, tmp_path / "s.xml")
    np.testing.assert_allclose(model.geom_size[model.geom("thing").id][:len(want)], want, atol=1e-5)


def test_bad_colliders_are_reported_and_nothing_is_written(scene_with_character, tmp_path):
    bpy, arm = scene_with_character
    empty = bpy.data.objects.new("marker", None)
    bpy.context.collection.objects.link(empty)
    empty.physkey.collider = True
    with pytest.raises(RuntimeError, match="no mesh geometry"):
        _export(bpy, arm, tmp_path / "a.xml")
    empty.physkey.collider = False
    flat = _cube(bpy, "flat", (0, 3, 0), (0, 0, 0), (1.0, 1.0, 1.0))
    flat.scale = (1.0, 1.0, 0.0)
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError, match="zero or negative scale"):
        _export(bpy, arm, tmp_path / "b.xml")
    flat.physkey.collider = False
    assert not (tmp_path / "a.xml").exists() and not (tmp_path / "b.xml").exists()


def test_no_armature_is_reported(tmp_path):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    with pytest.raises(RuntimeError, match="no armature"):
        bpy.ops.physkey.export_mjcf(filepath=str(tmp_path / "x.xml"))


def test_mesh_too_large_for_a_hull_falls_back_to_its_box(scene_with_character, tmp_path, capfd):
    bpy, arm = scene_with_character
    bpy.ops.mesh.primitive_uv_sphere_add(segments=128, ring_count=64, radius=0.4, location=(0, 2, 0.4))
    ball = bpy.context.active_object
    ball.name = "big_ball"
    ball.physkey.collider = True
    assert len(ball.data.vertices) > 5000
    model = _export(bpy, arm, tmp_path / "s.xml")
    g = model.geom("big_ball").id
    assert model.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX
    np.testing.assert_allclose(model.geom_size[g], [0.4, 0.4, 0.4], atol=1e-3)
    assert "too many for a convex hull" in capfd.readouterr().out


def test_export_of_humanoid_and_armchair_is_fast(tmp_path):
    import time
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand")
    times = []
    for i in range(3):
        start = time.perf_counter()
        bpy.ops.physkey.export_mjcf(filepath=str(tmp_path / f"s{i}.xml"))
        times.append(time.perf_counter() - start)
    assert min(times) < 0.3, times


@pytest.mark.every_blender
def test_a_colliders_modifiers_shape_it(scene_with_character, tmp_path):
    """The collider is what the viewport shows: an Array modifier that makes a 2 m bench of a 1 m
    cube gives a 2 m box (the mesh data alone is the 1 m cube)."""
    bpy, arm = scene_with_character
    bench = _cube(bpy, "bench", (3.0, 0.0, 0.5), (0.0, 0.0, 0.0), (0.5, 0.5, 0.5))
    bench.physkey.shape = "box"
    array = bench.modifiers.new("Array", "ARRAY")
    array.count, array.relative_offset_displace = 2, (1.0, 0.0, 0.0)
    model = _export(bpy, arm, tmp_path / "m.xml")
    np.testing.assert_allclose(model.geom_size[model.geom("bench").id], [1.0, 0.5, 0.5], atol=1e-5)
