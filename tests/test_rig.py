"""The rig invariant: posing the Blender rig from a joint configuration q and reading Blender's
world bone matrices gives MuJoCo's body poses for the exported model at q (1e-5 m, 1e-5 rad)."""
import math

import mujoco
import numpy as np
import pytest
from blender_env import addon, installed_extension


@pytest.fixture(scope="module")
def humanoid_rig(tmp_path_factory):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.add_character() == {"FINISHED"}
    obj = bpy.context.active_object
    return bpy, module, obj


def _export(bpy, path):
    assert bpy.ops.physkey.export_mjcf(filepath=str(path)) == {"FINISHED"}
    return mujoco.MjModel.from_xml_path(str(path))


def _rotation_angle(a, b):
    """Angle between two rotations, from ‖A − B‖_F = 2√2·sin(θ/2) (well conditioned near 0,
    unlike acos of the trace; Blender's matrices are float32)."""
    return 2.0 * math.asin(min(1.0, np.linalg.norm(np.asarray(a, float) - b) / (2.0 * math.sqrt(2.0))))


def check_reverse(bpy, module, obj, model):
    """The pose Blender shows → q → MuJoCo: every body lands on its bone."""
    rig = addon(module, "rig")
    shown = rig.world_bone_poses(obj)
    data = mujoco.MjData(model)
    data.qpos[:] = rig.qpos_from_pose(obj, model)
    mujoco.mj_kinematics(model, data)
    for name, (pos, rot) in shown.items():
        b = model.body(name).id
        np.testing.assert_allclose(data.xpos[b], pos, atol=1e-5, err_msg=name)
        assert _rotation_angle(rot, data.xmat[b].reshape(3, 3)) < 1e-5, name


def _check_invariant(bpy, module, obj, model, rng, trials=5):
    rig = addon(module, "rig")
    data = mujoco.MjData(model)
    for _ in range(trials):
        q = model.qpos0.copy()
        for j in range(model.njnt):
            a = model.jnt_qposadr[j]
            if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE:
                lo, hi = model.jnt_range[j]
                q[a] = rng.uniform(lo, hi)
            elif model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                q[a:a + 3] += rng.normal(0, 0.5, 3)
                quat = rng.normal(size=4)
                q[a + 3:a + 7] = quat / np.linalg.norm(quat)
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        rig.pose_from_qpos(obj, model, q)
        bpy.context.view_layer.update()
        poses = rig.world_bone_poses(obj)
        for name, (pos, rot) in poses.items():
            b = model.body(name).id
            np.testing.assert_allclose(pos, data.xpos[b], atol=1e-5, err_msg=name)
            assert _rotation_angle(rot, data.xmat[b].reshape(3, 3)) < 1e-5, name


def test_export_compiles_with_the_rigs_masses_and_ranges(humanoid_rig, tmp_path):
    bpy, module, obj = humanoid_rig
    model = _export(bpy, tmp_path / "humanoid.xml")
    assert model.nbody == 17 and model.nu == 21
    assert model.body_subtreemass[1] == pytest.approx(40.844, abs=0.01)
    knee = obj.data.bones["shin_right"].physkey.joints["knee_right"]
    assert model.jnt_range[model.joint("knee_right").id] == pytest.approx([knee.range_min, knee.range_max], abs=1e-5)
    knee.range_min = -2.0
    geom = obj.data.bones["thigh_left"].physkey.geoms[0]
    geom.use_mass, geom.mass = True, 7.5
    changed = _export(bpy, tmp_path / "changed.xml")
    assert changed.jnt_range[changed.joint("knee_right").id][0] == pytest.approx(-2.0, abs=1e-5)
    assert changed.body_mass[changed.body("thigh_left").id] == pytest.approx(7.5, abs=1e-4)
    knee.range_min = model.jnt_range[model.joint("knee_right").id][0]
    geom.use_mass = False


def test_invariant_default_humanoid(humanoid_rig, tmp_path):
    bpy, module, obj = humanoid_rig
    model = _export(bpy, tmp_path / "humanoid.xml")
    _check_invariant(bpy, module, obj, model, np.random.default_rng(0))


def test_invariant_with_the_armature_moved_rotated_and_scaled(humanoid_rig, tmp_path):
    bpy, module, obj = humanoid_rig
    from mathutils import Euler
    obj.location = (1.5, -0.7, 0.3)
    obj.rotation_euler = Euler((0.3, -0.2, 1.1))
    obj.scale = (1.7, 1.7, 1.7)
    bpy.context.view_layer.update()
    try:
        model = _export(bpy, tmp_path / "moved.xml")
        assert model.body_subtreemass[1] == pytest.approx(40.844 * 1.7 ** 3, rel=1e-4)  # world units
        _check_invariant(bpy, module, obj, model, np.random.default_rng(1))
    finally:
        obj.location, obj.rotation_euler, obj.scale = (0, 0, 0), (0, 0, 0), (1, 1, 1)
        bpy.context.view_layer.update()


def test_export_reports_bad_input(humanoid_rig, tmp_path):
    bpy, module, obj = humanoid_rig
    with pytest.raises(RuntimeError, match="cannot write"):
        bpy.ops.physkey.export_mjcf(filepath="/proc/no/such/dir/x.xml")
    obj.scale = (1.0, 2.0, 1.0)
    bpy.context.view_layer.update()
    try:
        with pytest.raises(RuntimeError, match="non-uniformly"):
            bpy.ops.physkey.export_mjcf(filepath=str(tmp_path / "x.xml"))
    finally:
        obj.scale = (1, 1, 1)
        bpy.context.view_layer.update()
    assert not (tmp_path / "x.xml").exists()


@pytest.mark.every_blender
def test_reverse_direction_blender_pose_to_q_to_mujoco(humanoid_rig, tmp_path):
    """Pose bones the way an animator would (rotations about their joint axes), read q back and
    let MuJoCo place the bodies: they land where Blender shows the bones."""
    bpy, module, obj = humanoid_rig
    from mathutils import Euler, Quaternion, Vector
    model = _export(bpy, tmp_path / "humanoid.xml")
    rng = np.random.default_rng(2)
    obj.location = (0.4, 0.2, -0.1)
    obj.rotation_euler = Euler((0.0, 0.0, 0.8))
    bpy.context.view_layer.update()
    try:
        for _ in range(4):
            for pb in obj.pose.bones:
                pb.rotation_mode = "QUATERNION"
                if pb.bone.parent is None:
                    pb.location = Vector(rng.normal(0, 0.2, 3))
                    pb.rotation_quaternion = Quaternion(rng.normal(size=4)).normalized()
                    continue
                rot = Quaternion()
                for j in pb.bone.physkey.joints:
                    rot = rot @ Quaternion(Vector(j.axis).normalized(), rng.uniform(j.range_min, j.range_max))
                pb.rotation_quaternion = rot
            bpy.context.view_layer.update()
            check_reverse(bpy, module, obj, model)
    finally:
        obj.location, obj.rotation_euler = (0, 0, 0), (0, 0, 0)
        for pb in obj.pose.bones:
            pb.location, pb.rotation_quaternion = (0, 0, 0), (1, 0, 0, 0)
        bpy.context.view_layer.update()


@pytest.mark.every_blender
def test_character_meshes_follow_their_bones(humanoid_rig, tmp_path):
    """Every capsule/sphere mesh sits where MuJoCo puts its geom, at rest and posed."""
    bpy, module, obj = humanoid_rig
    rig = addon(module, "rig")
    model = _export(bpy, tmp_path / "humanoid.xml")
    data = mujoco.MjData(model)
    meshes = {o.name.removeprefix(f"{obj.name}_"): o for o in bpy.data.objects if o.parent == obj}
    assert len(meshes) == model.ngeom - 1  # every geom but the floor
    q = model.qpos0.copy()
    rng = np.random.default_rng(3)
    for j in range(model.njnt):
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE:
            q[model.jnt_qposadr[j]] = rng.uniform(*model.jnt_range[j])
    for qpos in (model.qpos0, q):
        data.qpos[:] = qpos
        mujoco.mj_kinematics(model, data)
        rig.pose_from_qpos(obj, model, qpos)
        bpy.context.view_layer.update()
        for name, mesh_obj in meshes.items():
            g = model.geom(name).id
            m = mesh_obj.matrix_world
            np.testing.assert_allclose(np.array(m.to_translation()), data.geom_xpos[g], atol=1e-5, err_msg=name)
            assert _rotation_angle(np.array(m.to_3x3().normalized()), data.geom_xmat[g].reshape(3, 3)) < 1e-5, name
    # A capsule mesh spans its radius and half-length.
    thigh = meshes["thigh_right"]
    zs = [v.co.z for v in thigh.data.vertices]
    r, h = model.geom_size[model.geom("thigh_right").id][:2]
    assert max(zs) == pytest.approx(r + h, abs=1e-6) and min(zs) == pytest.approx(-(r + h), abs=1e-6)


def test_zero_scale_armature_is_refused(humanoid_rig, tmp_path):
    bpy, module, obj = humanoid_rig
    obj.scale = (0.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    try:
        bpy.context.view_layer.objects.active = obj
        with pytest.raises(RuntimeError, match="zero or negative scale"):
            bpy.ops.physkey.export_mjcf(filepath=str(tmp_path / "x.xml"))
    finally:
        obj.scale = (1, 1, 1)
        bpy.context.view_layer.update()
    assert not (tmp_path / "x.xml").exists()
