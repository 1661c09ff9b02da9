"""Scene presets: every task builds in Blender, and the armchair comes back out as the solver's own."""
import json
import time
from pathlib import Path

import mujoco
import numpy as np
import pytest

from blender_env import ROOT, installed_extension

TASKS = sorted(p.stem for p in (ROOT / "scenes" / "tasks").glob("*.json"))


@pytest.mark.parametrize("name", TASKS)
def test_every_preset_loads(name, tmp_path):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    start = time.perf_counter()
    assert bpy.ops.physkey.load_preset(preset=name) == {"FINISHED"}
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0, f"load_preset took {elapsed:.2f} s"
    arm = bpy.context.active_object
    assert arm.type == "ARMATURE" and len(arm.data.bones) == 16
    task = json.loads(bpy.context.scene.physkey.task_json)
    assert task["name"] == name and (task["keyframes"] or task["method"] == "simulate")
    assert bpy.ops.physkey.export_mjcf(filepath=str(tmp_path / "s.xml")) == {"FINISHED"}
    mujoco.MjModel.from_xml_path(str(tmp_path / "s.xml"))


def test_armchair_preset_exports_the_solvers_scene(tmp_path):
    """Furniture and the character's start pose go through Blender unchanged: the exported world
    geometry equals the solver's own model of the task, geom by geom."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand")
    arm = bpy.context.active_object
    rig = __import__(f"{module.__name__}.addon.rig", fromlist=["rig"])
    bpy.ops.physkey.export_mjcf(filepath=str(tmp_path / "blender.xml"))
    ours = mujoco.MjModel.from_xml_path(str(tmp_path / "blender.xml"))
    from solver.mjcf import initial_qpos, scene_to_xml
    from solver.task import load_task, build_scene
    scene = build_scene(load_task(ROOT / "scenes" / "tasks" / "armchair_stand_sit_stand.json").scene)
    ref = mujoco.MjModel.from_xml_string(scene_to_xml(scene))
    d_ours, d_ref = mujoco.MjData(ours), mujoco.MjData(ref)
    d_ours.qpos[:] = rig.qpos_from_pose(arm, ours)
    d_ref.qpos[:] = initial_qpos(scene, ref)
    mujoco.mj_kinematics(ours, d_ours)
    mujoco.mj_kinematics(ref, d_ref)
    for g in range(ref.ngeom):
        name = ref.geom(g).name
        o = ours.geom(name).id
        np.testing.assert_allclose(d_ours.geom_xpos[o], d_ref.geom_xpos[g], atol=1e-4, err_msg=name)
        np.testing.assert_allclose(ours.geom_size[o], ref.geom_size[g], atol=1e-4, err_msg=name)
    assert ours.body_jntnum[ours.body("chair").id] == 0  # static furniture stays static


def test_unknown_preset_is_refused():
    bpy, module = installed_extension()
    with pytest.raises(TypeError):
        bpy.ops.physkey.load_preset(preset="spaceship")
