"""Bake: a solution's frames become a new Action whose evaluated pose is the solution's, fast."""

import mujoco
import numpy as np
import pytest
from blender_env import addon, fcurves, installed_extension, python_calls
from test_rig import _rotation_angle


@pytest.fixture(scope="module")
def rig_and_model(tmp_path_factory):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.add_character()
    obj = bpy.context.active_object
    path = tmp_path_factory.mktemp("bake") / "h.xml"
    bpy.ops.physkey.export_mjcf(filepath=str(path))
    return bpy, module, obj, mujoco.MjModel.from_xml_path(str(path))


def _random_motion(model, n, seed=0):
    rng = np.random.default_rng(seed)
    q = np.tile(model.qpos0, (n, 1))
    t = np.linspace(0, 1, n)
    for j in range(model.njnt):
        a = model.jnt_qposadr[j]
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE:
            lo, hi = model.jnt_range[j]
            q[:, a] = lo + (hi - lo) * (0.5 + 0.4 * np.sin(2 * np.pi * (t + rng.uniform())))
        elif model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            q[:, a:a + 3] += np.stack([t, 0.3 * t, 0.1 * np.sin(3 * t)], 1)
            ang = 3.0 * t
            q[:, a + 3:a + 7] = np.stack([np.cos(ang / 2), 0 * t, 0 * t, np.sin(ang / 2)], 1)
    return q


def _plays(bpy, rig, obj, model, qpos, frames, turn_tolerance):
    """At each of `frames` (after the first, 1), every bone of `obj` where MuJoCo's forward kinematics puts
    its body in `qpos` (0.01 mm, and turned by at most `turn_tolerance` rad); yields each frame checked."""
    data = mujoco.MjData(model)
    for k in frames:
        bpy.context.scene.frame_set(1 + k)
        data.qpos[:] = qpos[k]
        mujoco.mj_kinematics(model, data)
        for name, (pos, rot) in rig.world_bone_poses(obj).items():
            b = model.body(name).id
            np.testing.assert_allclose(pos, data.xpos[b], atol=1e-5, err_msg=f"{name} frame {k}")
            assert _rotation_angle(rot, data.xmat[b].reshape(3, 3)) < turn_tolerance, f"{name} frame {k}"
        yield k


@pytest.mark.every_blender
def test_baked_action_plays_the_solution(rig_and_model):
    bpy, module, obj, model = rig_and_model
    bake = addon(module, "bake")
    rig = addon(module, "rig")
    fps, n = 30.0, 31
    times = np.arange(n) / fps
    qpos = _random_motion(model, n)
    action, slot = bake.bake_action(obj, bake.Clip(model, times, qpos, 1, fps), "test_bake",
                                    extra={"physkey_beta": (times, np.linspace(0, 1, n))})
    bake.assign(obj, action, slot)
    for k in _plays(bpy, rig, obj, model, qpos, (0, 7, 30), 1e-5):
        assert obj["physkey_beta"] == pytest.approx(k / 30, abs=1e-6)


@pytest.mark.every_blender
def test_a_physics_character_keyed_in_euler_keeps_its_rotation_modes(rig_and_model):
    """The animator keyed the physics character's bones in XYZ Euler: Keep bakes Euler curves and leaves
    every bone's mode as it was (on Blender 4.2 it switched them to quaternion, the Euler curves then
    playing nothing), and the baked motion plays (MuJoCo forward kinematics)."""
    bpy, module, obj, model = rig_and_model
    bake = addon(module, "bake")
    rig = addon(module, "rig")
    modes = {pb.name: pb.rotation_mode for pb in obj.pose.bones}
    for pb in obj.pose.bones:
        pb.rotation_mode = "XYZ"
    try:
        qpos = _random_motion(model, 8, seed=3)
        action, slot = bake.bake_action(obj, bake.Clip(model, np.arange(8) / 30.0, qpos, 1, 30.0), "euler")
        assert {pb.rotation_mode for pb in obj.pose.bones} == {"XYZ"}
        assert any(fc.data_path.endswith("rotation_euler") for fc in fcurves(module, action))
        bake.assign(obj, action, slot)
        list(_plays(bpy, rig, obj, model, qpos, (0, 7), 1e-4))
    finally:
        for pb in obj.pose.bones:
            pb.rotation_mode = modes[pb.name]


def test_bake_does_its_python_work_per_curve_never_per_frame(rig_and_model):
    """Ten times the frames, the same Python calls: the keys go in through foreach_set."""
    bpy, module, obj, model = rig_and_model
    bake = addon(module, "bake")
    qpos = _random_motion(model, 1000, seed=1)
    calls = {}
    for n in (100, 1000):
        calls[n], (action, slot) = python_calls(
            lambda n=n: bake.bake_action(obj, bake.Clip(model, np.arange(n) / 30.0, qpos[:n], 1, 30.0), "big"))
    assert calls[1000] <= calls[100] * 1.01 + 10, calls
    assert len(fcurves(module, action)) == 3 + 16 * 4
    again, _ = bake.bake_action(obj, bake.Clip(model, np.arange(2) / 30.0, qpos[:2], 1, 30.0), "big")
    assert again.name != action.name and action.name in bpy.data.actions  # never overwrites


def test_keep_replaces_the_last_kept_solutions_markers_and_never_the_animators(rig_and_model):
    """Keep marks the frames its solution reached each keyframe. Keeping another solution replaces those
    markers (they are not piled up solution after solution); Solve from Here's Keep replaces them only
    from the frame it was solved from (the kept part keeps its own); the animator's markers stay."""
    bpy, module, _, _ = rig_and_model
    bake = addon(module, "bake")
    scene = bpy.context.scene
    scene.timeline_markers.clear()
    scene.timeline_markers.new("blocking pass", frame=5)
    scene.timeline_markers.new("Scene_contact_seed3 kf1", frame=9)  # as a Keep before markers were named
    bake.add_markers(scene, [0.5, 1.0], 1, 30.0, "Scene_contact_seed0", ["sit", "stand"])
    bake.add_markers(scene, [0.4, None, 1.2], 1, 30.0, "Scene_contact_seed1", ["lean", "sit", "rise"])
    names = sorted((m.name, m.frame) for m in scene.timeline_markers)
    assert names == [("blocking pass", 5), ("lean · Scene_contact_seed1", 13), ("rise · Scene_contact_seed1", 37)]
    bake.add_markers(scene, [0.2], 20, 30.0, "Scene_contact_seed2_physical", keep_before=20)  # no names: numbered
    names = sorted((m.name, m.frame) for m in scene.timeline_markers)
    assert names == [("Scene_contact_seed2_physical kf0", 26), ("blocking pass", 5), ("lean · Scene_contact_seed1", 13)]
