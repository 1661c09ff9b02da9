"""Solving from Blender: the installed extension runs the solver as a subprocess, streams
solutions into the scene, previews without touching the animator's action, and keeps one as a new
Action."""
import json

import pytest

from blender_env import installed_extension


def _preset(bpy, name):
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset=name) == {"FINISHED"}
    return bpy.context.active_object


def test_solve_preview_keep(tmp_path):
    bpy, module = installed_extension()
    arm = _preset(bpy, "drop_onto_armchair")
    scene = bpy.context.scene
    scene.physkey.settings_json = json.dumps({"duration": 0.5})
    scene.physkey.num_seeds = 2
    mine = bpy.data.actions.new("animators_own")
    arm.animation_data_create()
    arm.animation_data.action = mine
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    sols = scene.physkey.solutions
    assert sorted(s.seed for s in sols) == [0, 1] and all(s.success for s in sols)
    scene.physkey.active_solution = 1  # preview
    assert arm.animation_data.action.name == "PhysKey Preview"
    assert "animators_own" in bpy.data.actions and arm.physkey.animator_action == "animators_own"
    assert bpy.ops.physkey.keep_solution() == {"FINISHED"}
    kept = arm.animation_data.action
    assert kept.name.startswith(f"{scene.name}_simulate_seed") and kept.name in bpy.data.actions
    assert "PhysKey Preview" not in bpy.data.actions and "animators_own" in bpy.data.actions
    assert len(kept.layers[0].strips[0].channelbags[0].fcurves) == 3 + 16 * 4
    assert bpy.ops.physkey.keep_solution() == {"FINISHED"}  # again: a second action, the first untouched
    assert arm.animation_data.action.name != kept.name


def test_solve_reports_bad_input_from_the_solver(tmp_path):
    bpy, module = installed_extension()
    arm = _preset(bpy, "armchair_stand_sit_stand")
    scene = bpy.context.scene
    scene.physkey.contact_keyframes[0].pairs[0].body1 = "pelvsi"  # a renamed bone
    with pytest.raises(RuntimeError, match=r"keyframes\[0\]\.pairs\[0\]\.body1: no body 'pelvsi'"):
        bpy.ops.physkey.solve(wait=True)
    assert not scene.physkey.running and len(scene.physkey.solutions) == 0


def test_solve_without_character_or_keyframes():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    with pytest.raises(RuntimeError, match="no armature"):
        bpy.ops.physkey.solve(wait=True)
    _preset(bpy, "armchair_stand_sit_stand")
    bpy.context.scene.physkey.contact_keyframes.clear()
    with pytest.raises(RuntimeError, match="no keyframes"):
        bpy.ops.physkey.solve(wait=True)


def test_second_solve_is_refused_and_file_load_stops_a_running_solve(tmp_path):
    bpy, module = installed_extension()
    _preset(bpy, "armchair_stand_sit_stand")
    ops = __import__(f"{module.__name__}.addon.operators", fromlist=["operators"])
    taskio = __import__(f"{module.__name__}.addon.taskio", fromlist=["taskio"])
    job_mod = __import__(f"{module.__name__}.addon.job", fromlist=["job"])
    ctx = bpy.context
    task = taskio.task_from_scene(ctx, ops.extract_scene(ctx))
    job = job_mod.SolveJob(task, str(tmp_path / "job"), 1)
    ops._JOBS[ctx.scene.name] = job
    with pytest.raises(RuntimeError, match="already running"):
        bpy.ops.physkey.solve(wait=True)
    bpy.ops.wm.read_homefile(use_empty=True)  # loading a file stops the solver process
    assert not ops._JOBS
    job.proc.wait(timeout=10)
    assert job.proc.returncode != 0
