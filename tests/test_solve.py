"""Solving from Blender: the installed extension runs the solver as a subprocess, streams
solutions into the scene, previews without touching the animator's action, and keeps one as a new
Action."""
import json
from pathlib import Path

import pytest
from blender_env import addon, fcurves, installed_extension


def _preset(bpy, name):
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset=name) == {"FINISHED"}
    return bpy.context.active_object


@pytest.mark.every_blender

def _context(module, task):
    """The solve context Solve would give a job started from the scene's start frame."""
    import bpy
    return addon(module, "solve_context").make(task["method"], bpy.context.scene.frame_start)

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
    for s in sols:  # each solution's quality figures, as the solver measured them
        result = json.loads((Path(bpy.path.abspath(s.result_path)).parents[1] / "result.json").read_text())
        entry = next(e for e in result["solutions"] if e["seed"] == s.seed)
        q = entry["quality"]
        assert s.words == ", ".join(entry["words"]) and ("ends moving at" in s.words) == (
            q["end"]["root_speed_mps"] >= 0.1)  # the solver's words on the row
        assert s.has_quality and s.fall == -1.0  # simulate does not say when lying is meant
        assert (s.penetration, s.foot_sliding, s.jerk) == pytest.approx(
            (q["max_penetration_m"], q["foot_sliding_m"], q["jerk_rms"]), rel=1e-5)
        at = q["max_penetration_at"]  # a dropped body lands on the armchair: something overlaps, somewhen
        assert json.loads(s.penetration_bodies) == at["bodies"] and s.penetration_time == pytest.approx(at["time_s"])
    scene.physkey.active_solution = 1  # preview
    assert arm.animation_data.action.name == "PhysKey Preview"
    assert "animators_own" in bpy.data.actions and arm.physkey.animator_action == mine
    mine.name = "animators_own_renamed"  # held by reference: a rename during the preview loses nothing
    assert bpy.ops.physkey.end_preview() == {"FINISHED"}  # the animator's action back, the preview gone
    assert arm.animation_data.action == mine and "PhysKey Preview" not in bpy.data.actions
    mine.name = "animators_own"
    with pytest.raises(RuntimeError, match="No solution is being previewed"):
        bpy.ops.physkey.end_preview()
    scene.physkey.active_solution = 1
    scene.frame_end = scene.frame_start + 2  # shorter than the clip: Keep makes room for it
    assert bpy.ops.physkey.keep_solution() == {"FINISHED"}
    fps = scene.render.fps / scene.render.fps_base
    assert scene.frame_end == scene.frame_start + round(0.5 * fps)
    kept = arm.animation_data.action
    assert kept.name.startswith(f"{scene.name}_simulate_seed") and kept.name in bpy.data.actions
    assert "PhysKey Preview" not in bpy.data.actions and "animators_own" in bpy.data.actions
    assert len(fcurves(module, kept)) == 3 + 16 * 4
    assert bpy.ops.physkey.keep_solution() == {"FINISHED"}  # again: a second action, the first untouched
    assert arm.animation_data.action.name != kept.name


def test_preferences_say_where_results_go_and_how_many_processes_solve(tmp_path):
    bpy, module = installed_extension()
    prefs = bpy.context.preferences.addons[module.__name__].preferences
    assert prefs.workers >= 1
    prefs.results_folder = str(tmp_path / "renders" / "physkey")
    try:
        _preset(bpy, "drop_onto_armchair")
        scene = bpy.context.scene
        scene.physkey.settings_json = json.dumps({"duration": 0.2})
        scene.physkey.num_seeds = 2
        prefs.workers = 1
        assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
        for s in scene.physkey.solutions:
            assert Path(bpy.path.abspath(s.result_path)).is_relative_to(tmp_path / "renders" / "physkey")
        log = next((tmp_path / "renders" / "physkey").glob("*/solver.log")).read_text()
        assert "--num-seeds 2 --workers 1" in log.splitlines()[0]
    finally:
        prefs.results_folder = ""


def test_a_new_character_starts_with_the_preferred_method_and_a_worked_scene_keeps_its_own():
    bpy, module = installed_extension()
    prefs = bpy.context.preferences.addons[module.__name__].preferences
    prefs.default_method = "assist"
    try:
        bpy.ops.wm.read_homefile(use_empty=True)
        assert bpy.context.scene.physkey.method == "contact"  # the property's own default
        assert bpy.ops.physkey.add_character() == {"FINISHED"}
        assert bpy.context.scene.physkey.method == "assist"
        _preset(bpy, "armchair_stand_sit_stand")  # a preset brings its method and keyframes
        scene = bpy.context.scene
        assert scene.physkey.method == "contact" and len(scene.physkey.contact_keyframes)
        assert bpy.ops.physkey.add_character() == {"FINISHED"}
        assert scene.physkey.method == "contact"
    finally:
        prefs.default_method = "contact"


def test_buttons_that_cannot_act_are_greyed_out_with_the_reason():
    """poll(): a button that would only fail after a click is greyed out, its tooltip saying why."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    ops = bpy.ops.physkey
    for op, reason in ((ops.solve, "no armature selected"), (ops.cancel_solve, "no solve is running"),
                       (ops.keep_solution, "no solutions: solve first"), (ops.export_mjcf, "no armature selected"),
                       (ops.autofill_rig, "no armature selected"), (ops.sync_pose_keys, "no armature selected"),
                       (ops.contact_style, "no contact keyframe selected"), (ops.end_preview, "No solution is"),
                       (ops.send_keyframe, "no contact solve is running")):
        assert not op.poll()
        with pytest.raises(RuntimeError, match=reason):
            op()
    _preset(bpy, "armchair_stand_sit_stand")
    assert ops.solve.poll() and ops.export_mjcf.poll() and ops.contact_style.poll()


def test_a_kept_solution_is_never_read_back_as_pose_keys():
    """After Keep the character plays the baked action (every frame keyed); reading pose keys from it
    would turn a solution into hundreds of keyframes. It is refused, and the keys' settings stay."""
    import numpy as np
    bpy, module = installed_extension()
    arm = _preset(bpy, "assist_box_jump_low")
    keys = [(k.frame, k.weight, k.free) for k in bpy.context.scene.physkey.pose_keys]
    assert len(keys) == 5
    bake = addon(module, "bake")
    frames = np.arange(1, 60, dtype=float)
    channels = {pb.name: (None, np.tile([1.0, 0.0, 0.0, 0.0], (len(frames), 1))) for pb in arm.pose.bones}
    action, slot, _ = bake.write_action(arm, channels, "kept", frames)
    bake.assign(arm, action, slot)
    with pytest.raises(RuntimeError, match="plays 'kept', a solved motion, not your pose keys"):
        bpy.ops.physkey.sync_pose_keys()
    with pytest.raises(RuntimeError, match="a solved motion"):
        bpy.ops.physkey.solve(wait=True)
    assert [(k.frame, k.weight, k.free) for k in bpy.context.scene.physkey.pose_keys] == keys


def test_a_changed_frame_rate_retimes_the_kept_motion_on_whole_frames():
    bpy, module = installed_extension()
    arm = _preset(bpy, "drop_onto_armchair")
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    scene.physkey.settings_json = json.dumps({"duration": 0.5})
    scene.physkey.num_seeds = 1
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    scene.render.fps = 30  # changed between the solve and Keep
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
    fc = fcurves(module, arm.animation_data.action)[0]
    frames = [k.co[0] for k in fc.keyframe_points]
    assert frames == [float(scene.frame_start + k) for k in range(16)]  # 0.5 s at 30 fps, whole frames


def _knee_keyed_backwards(bpy, angle: float):
    """The box-jump preset with its third pose key's right knee bent `angle` rad the wrong way (its limit
    constraint switched off by the animator); returns (the scene, that key)."""
    from mathutils import Quaternion  # after bpy (installed_extension sets Blender up first)
    arm = _preset(bpy, "assist_box_jump_low")
    scene = bpy.context.scene
    key = scene.physkey.pose_keys[2]
    scene.frame_set(key.frame)
    shin = arm.pose.bones["shin_right"]
    shin.constraints["PhysKey joint limits"].mute = True
    shin.rotation_quaternion = Quaternion((0.0, 0.0, 1.0), -angle)
    shin.keyframe_insert("rotation_quaternion", frame=key.frame)
    return scene, key


def test_a_pose_key_out_of_range_is_flagged_before_solving_in_the_bones_terms():
    bpy, module = installed_extension()
    scene, key = _knee_keyed_backwards(bpy, 1.2)  # the knee bent 69° the wrong way
    with pytest.raises(RuntimeError, match=rf"frame {key.frame}: bone 'shin_right' is turned 69° at its joint "
                                           r"'knee_right', which bends -160°…2°: turn it back"):
        bpy.ops.physkey.solve(wait=True)
    assert scene.physkey.pose_keys[2].problem.startswith("bone 'shin_right'")
    assert not scene.physkey.pose_keys[1].problem


def test_a_pose_key_a_little_out_of_range_is_clamped_and_said_on_the_key():
    """A knee keyed 6° past its range (within the 10° the solver clamps): the solve goes on, and the key
    and Blender's report say which joint was clamped, from how far to what."""
    bpy, module = installed_extension()
    scene, key = _knee_keyed_backwards(bpy, 0.14)  # the knee 8° the wrong way: 6° past its 2°
    taskio = addon(module, "taskio")
    said = []
    desc = taskio.extract_scene(bpy.context)
    keyframes = taskio.pose_keyframes_from_action(bpy.context, desc, warn=said.append)
    assert len(keyframes) == len(scene.physkey.pose_keys)
    assert scene.physkey.pose_keys[2].problem == "clamped into the joint range: 'knee_right' 8.0° to 2°"
    assert said == [f"frame {key.frame}: clamped into the joint range: 'knee_right' 8.0° to 2°"]


@pytest.mark.every_blender
def test_keep_sets_pushed_furnitures_own_action_aside():
    bpy, module = installed_extension()
    _preset(bpy, "drop_onto_armchair")
    arm = bpy.context.active_object
    bpy.ops.mesh.primitive_cube_add(size=0.3, location=(1.5, 0.0, 0.15))
    crate = bpy.context.active_object
    crate.name = "crate"
    crate.physkey.collider, crate.physkey.dynamic, crate.physkey.mass = True, True, 2.0
    crate.animation_data_create()
    own = bpy.data.actions.new("crate slides in")
    crate.animation_data.action = own
    bpy.context.view_layer.objects.active = arm
    scene = bpy.context.scene
    scene.physkey.settings_json = json.dumps({"duration": 0.3})
    scene.physkey.num_seeds = 1
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
    assert crate.animation_data.action != own and own.use_fake_user  # replaced for the clip, kept


def test_preferences_point_a_solve_at_a_ray_cluster(tmp_path):
    """A cluster address in the preferences sends the seeds to Ray; one nobody answers comes back as
    the solver's own one-line error, and the scene is left as it was."""
    import socket
    bpy, module = installed_extension()
    prefs = bpy.context.preferences.addons[module.__name__].preferences
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"  # released: nothing listens there
    prefs.results_folder = str(tmp_path / "physkey")
    prefs.cluster_address = f" {address} "
    try:
        _preset(bpy, "drop_onto_armchair")
        scene = bpy.context.scene
        scene.physkey.settings_json = json.dumps({"duration": 0.2})
        # The solver's Python without Ray (the other Blenders' venvs) says so instead, as plainly.
        said = rf"--address: cannot reach a Ray cluster at {address}|--backend: the ray backend needs Ray"
        with pytest.raises(RuntimeError, match=said):
            bpy.ops.physkey.solve(wait=True)
        assert not scene.physkey.running and len(scene.physkey.solutions) == 0
        log = next((tmp_path / "physkey").glob("*/solver.log")).read_text()
        assert log.splitlines()[0].endswith(f"--backend ray --address {address}")
    finally:
        prefs.cluster_address = prefs.results_folder = ""


def test_solve_reports_bad_input_from_the_solver(tmp_path):
    bpy, module = installed_extension()
    _preset(bpy, "armchair_stand_sit_stand")
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
    session = addon(module, "session")
    taskio = addon(module, "taskio")
    job_mod = addon(module, "job")
    ctx = bpy.context
    task = taskio.task_from_scene(ctx, taskio.extract_scene(ctx))
    job = job_mod.SolveJob(task, str(tmp_path / "job"), 1, _context(module, task))
    session.add_job(ctx.scene, job)
    ctx.scene.name = "renamed mid-solve"  # the solve still belongs to the scene
    with pytest.raises(RuntimeError, match="already running"):
        bpy.ops.physkey.solve(wait=True)
    bpy.ops.wm.read_homefile(use_empty=True)  # loading a file stops the solver process
    assert not session.running_jobs()
    job.proc.wait(timeout=10)
    assert job.proc.returncode != 0


@pytest.mark.every_blender
def test_kept_action_replays_the_result_and_the_animators_action_is_untouched(tmp_path):
    import mujoco
    import numpy as np
    bpy, module = installed_extension()
    arm = _preset(bpy, "armchair_stand_sit_stand")
    scene = bpy.context.scene
    scene.physkey.num_seeds = 2
    # a small budget, two short runs: the replay of what was solved is checked, not the motion
    scene.physkey.settings_json = json.dumps({"segment_retries": 0, "backups": 0, "rollouts": 16, "max_iterations": 2})
    for kf in scene.physkey.contact_keyframes:
        kf.time_limit = 1.0
    mine = bpy.data.actions.new("animators_own")
    arm.animation_data_create()
    arm.animation_data.action = mine
    arm.pose.bones["head"].rotation_quaternion = (0.9, 0.1, 0.0, 0.0)
    arm.pose.bones["head"].keyframe_insert("rotation_quaternion", frame=5)
    before = [tuple(k.co) for fc in fcurves(module, mine) for k in fc.keyframe_points]
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    finals = [i for i, s in enumerate(scene.physkey.solutions) if s.stage < 0]
    assert len(finals) == 2
    assert bpy.ops.physkey.keep_solution(index=finals[0]) == {"FINISHED"}
    item = scene.physkey.solutions[finals[0]]
    z = np.load(item.result_path, allow_pickle=False)
    model = mujoco.MjModel.from_xml_path(str(__import__("pathlib").Path(item.result_path).parents[1] / "model.xml"))
    data = mujoco.MjData(model)
    rig = addon(module, "rig")
    fps = scene.render.fps / scene.render.fps_base
    for k in (0, len(z["frame_times"]) // 2, len(z["frame_times"]) - 1):
        scene.frame_set(scene.frame_start + int(round(z["frame_times"][k] * fps)))
        data.qpos[:] = z["frame_qpos"][k]
        mujoco.mj_kinematics(model, data)
        for name, (pos, _rot) in rig.world_bone_poses(arm).items():
            np.testing.assert_allclose(pos, data.xpos[model.body(name).id], atol=1e-4, err_msg=name)
    after = [tuple(k.co) for fc in fcurves(module, mine) for k in fc.keyframe_points]
    assert after == before and mine.name in bpy.data.actions


@pytest.mark.every_blender
def test_cancel_and_a_killed_solver(tmp_path):
    import time
    bpy, module = installed_extension()
    _preset(bpy, "armchair_stand_sit_stand")
    scene = bpy.context.scene
    ops = addon(module, "solve_ops")
    session = addon(module, "session")
    taskio = addon(module, "taskio")
    job_mod = addon(module, "job")
    task = taskio.task_from_scene(bpy.context, taskio.extract_scene(bpy.context))
    # Cancel: the process is gone.
    job = job_mod.SolveJob(task, str(tmp_path / "a"), 1, _context(module, task))
    session.add_job(scene, job)
    assert bpy.ops.physkey.cancel_solve() == {"FINISHED"}
    job.proc.wait(timeout=10)
    assert job.proc.poll() is not None and not session.running_jobs()
    job.close()
    # Killed after the first solution: a clear message, the solution received is kept.
    task["keyframes"] = task["keyframes"][:1]
    job = job_mod.SolveJob(task, str(tmp_path / "b"), 2, _context(module, task), workers=0)
    scene.physkey.solutions.clear()
    error, deadline = None, time.time() + 120
    while time.time() < deadline:
        events = job.poll()
        error = ops.handle_events(scene, job, events) or error
        if len(scene.physkey.solutions) >= 1:
            job.proc.kill()
        if any(e.get("event") == "exit" for e in events):
            break
        time.sleep(0.05)
    job.close()
    assert len(scene.physkey.solutions) >= 1
    if len(scene.physkey.solutions) == 1:  # killed before the second seed finished
        assert error and "solver stopped" in error


def test_missing_or_truncated_result_files_are_reported(tmp_path):
    bpy, module = installed_extension()
    _preset(bpy, "drop_onto_armchair")
    scene = bpy.context.scene
    scene.physkey.settings_json = json.dumps({"duration": 0.3})
    scene.physkey.num_seeds = 2
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    first, second = scene.physkey.solutions[0].result_path, scene.physkey.solutions[1].result_path
    with open(first, "r+b") as f:
        f.truncate(100)
    import os
    os.remove(second)
    with pytest.raises(RuntimeError, match="cannot be read"):
        bpy.ops.physkey.keep_solution(index=0)
    with pytest.raises(RuntimeError, match="file is gone"):
        bpy.ops.physkey.keep_solution(index=1)
    scene.physkey.active_solution = 0  # preview of a broken file: a status message, no exception
    assert "cannot be read" in scene.physkey.status


def test_pushed_furniture_is_baked_too(tmp_path):
    import mujoco
    import numpy as np
    bpy, module = installed_extension()
    _preset(bpy, "drop_onto_armchair")
    scene = bpy.context.scene
    bpy.ops.mesh.primitive_cube_add(size=0.3, location=(0.6, 0.0, 0.6))  # a box that falls to the floor
    box = bpy.context.active_object
    box.name = "crate"
    box.physkey.collider, box.physkey.dynamic, box.physkey.mass = True, True, 2.0
    bpy.context.view_layer.objects.active = bpy.data.objects["humanoid"]
    scene.physkey.settings_json = json.dumps({"duration": 1.0, "perturb": 0.0})
    scene.physkey.num_seeds = 1
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
    item = scene.physkey.solutions[0]
    z = np.load(item.result_path, allow_pickle=False)
    model = mujoco.MjModel.from_xml_path(str(__import__("pathlib").Path(item.result_path).parents[1] / "model.xml"))
    a = model.jnt_qposadr[model.joint("crate_free").id]
    fps = scene.render.fps / scene.render.fps_base
    last = len(z["frame_times"]) - 1
    scene.frame_set(scene.frame_start + int(round(z["frame_times"][last] * fps)))
    np.testing.assert_allclose(np.array(box.matrix_world.to_translation()), z["frame_qpos"][last, a:a + 3], atol=1e-4)
    assert z["frame_qpos"][last, a + 2] < 0.3  # it fell
    assert box.animation_data.action.name.endswith("_crate")


@pytest.mark.every_blender
def test_undo_right_after_keep(tmp_path):
    """Ctrl+Z right after *Keep* returns to the preview: the kept action is gone, the animator's action
    is untouched, the solutions are still listed, and Keep (and Redo) work again."""
    bpy, module = installed_extension()
    arm = _preset(bpy, "drop_onto_armchair")
    name, scene = arm.name, bpy.context.scene
    scene.physkey.settings_json = json.dumps({"duration": 0.5})
    scene.physkey.num_seeds = 2
    mine = bpy.data.actions.new("animators_own")
    arm.animation_data_create()
    arm.animation_data.action = mine
    arm.pose.bones["head"].rotation_quaternion = (0.9, 0.1, 0.0, 0.0)
    arm.pose.bones["head"].keyframe_insert("rotation_quaternion", frame=3)
    bpy.ops.ed.undo_push(message="animator's work")  # headless Blender starts its undo stack on the first push
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    scene.physkey.active_solution = 1
    bpy.ops.ed.undo_push(message="preview")  # what the UI pushes when the animator picks a solution
    assert bpy.ops.physkey.keep_solution("EXEC_DEFAULT", True) == {"FINISHED"}  # True: push undo as a click does
    kept = bpy.data.objects[name].animation_data.action.name
    bpy.ops.ed.undo()
    arm, scene = bpy.data.objects[name], bpy.context.scene
    assert kept not in bpy.data.actions
    assert arm.animation_data.action.name == "PhysKey Preview" and arm.physkey.animator_action.name == "animators_own"
    keys = [(k.co[0], round(k.co[1], 6))
            for fc in fcurves(module, bpy.data.actions["animators_own"])
            for k in fc.keyframe_points]
    assert keys == [(3.0, 0.9), (3.0, 0.1), (3.0, 0.0), (3.0, 0.0)]
    assert len(scene.physkey.solutions) == 2 and scene.physkey.active_solution == 1
    bpy.ops.ed.redo()
    assert bpy.data.objects[name].animation_data.action.name == kept
    bpy.ops.ed.undo()
    assert bpy.ops.physkey.keep_solution("EXEC_DEFAULT", True) == {"FINISHED"}  # keep again after the undo
    arm = bpy.data.objects[name]
    assert arm.animation_data.action.name == kept and "PhysKey Preview" not in bpy.data.actions
    assert len(fcurves(module, arm.animation_data.action)) == 3 + 16 * 4


@pytest.mark.every_blender
def test_make_physical_tracks_the_keyed_animation_into_a_new_action():
    """The track method ("Make physical") on an animator's keyed poses: their animation is the
    reference, each key gets its verdict, Keep bakes the physical motion as a new action and the
    keyed action stays as it was."""
    bpy, module = installed_extension()
    arm = _preset(bpy, "assist_sit_armchair")  # three keyed poses: a sketch of sitting down
    scene = bpy.context.scene
    keyed = arm.animation_data.action
    before = [tuple(k.co) for fc in fcurves(module, keyed) for k in fc.keyframe_points]
    scene.physkey.method = "track"
    scene.physkey.num_seeds = 1
    scene.physkey.settings_json = json.dumps({"rollouts": 16, "max_iterations": 2, "segment_retries": 0, "backups": 0})
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    (item,) = scene.physkey.solutions
    result = json.loads((Path(bpy.path.abspath(item.result_path)).parents[1] / "result.json").read_text())
    entry = result["solutions"][0]
    frames = sorted(k.frame for k in scene.physkey.pose_keys)
    fps = scene.render.fps / scene.render.fps_base
    assert [round(v["time"] * fps) for v in entry["keyframes"]] == [f - frames[0] for f in frames[1:]]
    assert item.keys_total == len(frames) - 1 and item.start_frame == frames[0]
    # keyed poses alone are its keyframes: no stand-in between them (their in-betweens are interpolation)
    solved = json.loads((Path(bpy.path.abspath(item.result_path)).parents[1] / "task.json").read_text())
    assert solved["settings"]["stand_ins"] is False
    scene.physkey.active_solution = 0
    assert bpy.ops.physkey.keep_solution() == {"FINISHED"}
    kept = arm.animation_data.action
    assert kept != keyed and kept.name.startswith(f"{scene.name}_make_physical_seed0")  # the button's words
    assert [tuple(k.co) for fc in fcurves(module, keyed) for k in fc.keyframe_points] == before
