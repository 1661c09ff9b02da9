"""Edit and re-solve: *Solve from Here* starts a new solve at the current frame of a kept solution with
its pose and velocity there, and Keep splices the new motion in after that frame.

The character is dropped from 3 m: in the air nothing but gravity acts, so a continuation that carries the
velocity follows the kept motion (one that started still would be half a metre off 0.3 s later)."""
import json
import re
from pathlib import Path

import numpy as np
import pytest
from blender_env import addon, fcurves, installed_extension


def _root_position(bpy, arm):
    pb = next(pb for pb in arm.pose.bones if pb.parent is None)
    return np.array((arm.matrix_world @ pb.matrix).to_translation())


@pytest.fixture(scope="module")
def kept():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset="drop_onto_armchair") == {"FINISHED"}
    arm = bpy.context.active_object
    arm.location.z += 3.0
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 30, 1.0
    scene.physkey.settings_json = json.dumps({"duration": 0.6, "perturb": 0.0})
    scene.physkey.num_seeds = 1
    assert not bpy.ops.physkey.solve_from_here.poll()  # nothing kept yet
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
    first = np.load(scene.physkey.solutions[0].result_path)
    return bpy, module, scene, arm, arm.animation_data.action, {k: first[k] for k in first.files}


@pytest.mark.every_blender
def test_solve_from_here_carries_the_velocity_and_keep_splices(kept):
    bpy, module, scene, arm, old_action, first = kept
    start = scene.frame_start
    frame = start + 6  # 0.2 s into the fall
    scene.frame_set(frame)
    scene.physkey.settings_json = json.dumps({"duration": 0.3, "perturb": 0.0})
    assert bpy.ops.physkey.solve_from_here.poll()
    assert bpy.ops.physkey.solve_from_here(wait=True) == {"FINISHED"}
    task = json.loads((Path(scene.physkey.solutions[0].result_path).parents[2] / "task_input.json").read_text())
    velocity = task["scene"]["desc"]["initial_velocity"]
    # the root's velocity then, by central difference of the kept frames themselves (1/30 s apart)
    fps = 30.0
    want = (first["frame_qpos"][7][:3] - first["frame_qpos"][5][:3]) * fps / 2
    assert velocity["root_linear"] == pytest.approx(list(want), abs=0.05)
    assert want[2] < -1.5  # falling fast: a still start would be far off
    item = scene.physkey.solutions[0]
    new = np.load(item.result_path)
    for k in range(len(new["frame_times"])):  # the fall goes on where it was
        np.testing.assert_allclose(new["frame_qpos"][k][:3], first["frame_qpos"][6 + k][:3], atol=2e-3,
                                   err_msg=f"root at frame {k} after the splice")
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
    spliced = arm.animation_data.action
    assert spliced != old_action and old_action.name in bpy.data.actions  # the first Keep stays as it was
    assert tuple(spliced.frame_range) == pytest.approx((start, frame + 9))
    for f, want in ((start + 3, first["frame_qpos"][3][:3]), (frame + 4, new["frame_qpos"][4][:3])):
        scene.frame_set(f)
        np.testing.assert_allclose(_root_position(bpy, arm), want, atol=1e-4, err_msg=f"frame {f}")
    paths = {(fc.data_path, fc.array_index) for fc in fcurves(module, spliced)}
    assert paths == {(fc.data_path, fc.array_index) for fc in fcurves(module, old_action)}


def test_a_spliced_action_continues_from_whichever_solution_plays_at_the_frame(kept):
    """After the splice the action plays the first solution up to the frame solved from, the second
    after it: Solve from Here reads the velocity of the one playing."""
    bpy, module, scene, arm, _, first = kept
    continuation = addon(module, "continuation")
    spliced = arm.animation_data.action
    segs = continuation.segments(spliced)
    assert [(start, skipped) for _, start, skipped in segs] == [(scene.frame_start, 0), (scene.frame_start + 6, 0)]
    assert segs[0][0] != segs[1][0]
    scene.frame_set(scene.frame_start + 3)  # in the first solution's part
    want = (first["frame_qpos"][4][:3] - first["frame_qpos"][2][:3]) * 30.0 / 2
    assert continuation.continuation(scene, arm).velocity.root_linear == pytest.approx(list(want), abs=0.05)
    scene.frame_set(scene.frame_start + 9)  # in the second's: 0.3 s into the fall
    later = continuation.continuation(scene, arm).velocity.root_linear
    assert later[2] < want[2] - 1.0  # falling faster by then


def test_solve_from_here_says_why_not(kept):
    bpy, module, scene, arm, _, _ = kept
    continuation = addon(module, "continuation")
    scene.frame_set(scene.frame_start + 200)
    assert "outside the kept motion" in continuation.why_not(scene, arm)
    assert not bpy.ops.physkey.solve_from_here.poll()
    scene.frame_set(scene.frame_start + 2)
    scene.physkey.method = "assist"
    assert "does not say which pose keys it was solved from" in continuation.why_not(scene, arm)
    scene.physkey.method = "simulate"
    assert continuation.why_not(scene, arm) == ""


def test_contact_keyframes_reached_before_the_frame_are_not_solved_again():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand") == {"FINISHED"}
    scene = bpy.context.scene
    scene.physkey.num_seeds = 1
    total = len(scene.physkey.contact_keyframes)
    scene.physkey.settings_json = json.dumps({"backups": 0, "segment_retries": 0})  # a short run: up to a miss
    for kf in scene.physkey.contact_keyframes:
        kf.time_limit = 1.0
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    final = next(i for i, s in enumerate(scene.physkey.solutions) if s.stage < 0)
    reached = json.loads(scene.physkey.solutions[final].reached_json)
    assert reached and reached[0] is not None, "the first keyframe is reached in a second"
    assert bpy.ops.physkey.keep_solution(index=final) == {"FINISHED"}
    fps = scene.render.fps / scene.render.fps_base
    scene.frame_set(scene.frame_start + int(np.ceil(reached[0] * fps)) + 1)
    done = sum(t is not None and t <= (scene.frame_current - scene.frame_start) / fps for t in reached)
    for kf in scene.physkey.contact_keyframes:
        kf.time_limit = 0.3
    scene.physkey.settings_json = json.dumps({"segment_retries": 0, "backups": 0})  # only its task is looked at
    assert bpy.ops.physkey.solve_from_here(wait=True) == {"FINISHED"}
    task = json.loads((Path(scene.physkey.solutions[0].result_path).parents[2] / "task_input.json").read_text())
    assert done >= 1 and len(task["keyframes"]) == total - done
    assert task["scene"]["desc"]["initial_velocity"] is not None


@pytest.mark.every_blender
def test_on_the_animators_own_rig_the_splice_keeps_its_keys_before_the_frame():
    bpy, module = installed_extension()
    from humanoid_rigs import mixamo_skeleton, select
    bpy.ops.wm.read_homefile(use_empty=True)
    rig = mixamo_skeleton(bpy)
    select(bpy, rig)
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 30, 1.0
    props = scene.physkey
    props.method, props.num_seeds = "simulate", 1
    props.settings_json = json.dumps({"duration": 0.5, "perturb": 0.0})
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
    old = rig.animation_data.action
    frame = scene.frame_start + 6
    scene.frame_set(frame)
    select(bpy, rig)  # the animator works on their own rig: Solve from Here reaches its physics humanoid
    props.settings_json = json.dumps({"duration": 0.2, "perturb": 0.0})
    assert bpy.ops.physkey.solve_from_here(wait=True) == {"FINISHED"}
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
    new = rig.animation_data.action
    assert new != old and tuple(new.frame_range) == pytest.approx((scene.frame_start, frame + 6))
    by_path = {(fc.data_path, fc.array_index): fc for fc in fcurves(module, old)}
    for fc in fcurves(module, new):
        before = by_path[(fc.data_path, fc.array_index)]
        for f in (scene.frame_start, frame - 2):
            assert fc.evaluate(f) == pytest.approx(before.evaluate(f), abs=1e-6), (fc.data_path, f)


def test_assisted_keyframes_solve_towards_the_pose_keys_after_the_frame():
    """The start is the kept motion's pose at the frame (time 0), then the animator's keys after it, read
    from their own action (the character plays the kept one) with times counted from the frame."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset="assist_box_jump_low") == {"FINISHED"}
    arm = bpy.context.active_object
    scene = bpy.context.scene
    keys = [k.frame for k in scene.physkey.pose_keys]
    for k in scene.physkey.pose_keys:  # at fixed times (the preset's are free: arrival ranges)
        k.free = False
    own = arm.animation_data.action
    scene.physkey.num_seeds = 1
    # a tiny search and one quick tracking: what is read and spliced is checked, not the motion
    scene.physkey.settings_json = json.dumps({"samples": 8 * 2, "population": 8, "physical_retries": 0, "replans": 0,
                                              "physical_settings": {"rollouts": 16, "max_iterations": 2}})
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    final = next(i for i, s in enumerate(scene.physkey.solutions) if s.stage < 0)  # after the curriculum's
    physical = scene.physkey.solutions[final + 1]  # its physical version, listed right under it
    assert (physical.variant, physical.seed) == ("physical", 0)
    assert re.fullmatch(r"Assisted keyframes \d\d:\d\d:\d\d · seed 0 · physical", physical.name), physical.name
    assert Path(physical.result_path).name == "physical.npz" and physical.keys_total == len(keys) - 1
    assert bpy.ops.physkey.keep_solution(index=final) == {"FINISHED"}
    kept = arm.animation_data.action
    assert kept != own and kept["physkey_pose_keys"] == own
    frame = (keys[1] + keys[2]) // 2
    scene.frame_set(frame)
    rig = addon(module, "rig")
    posed = rig.qpos_from_pose(arm, _model(bpy, module))
    assert bpy.ops.physkey.solve_from_here(wait=True) == {"FINISHED"}
    task = json.loads((Path(scene.physkey.solutions[0].result_path).parents[2] / "task_input.json").read_text())
    kfs = task["keyframes"]
    fps = scene.render.fps / scene.render.fps_base
    assert len(kfs) == 1 + len(keys) - 2 and kfs[0]["name"] == f"frame_{frame}" and "time" not in kfs[0]
    assert kfs[0]["root_pos"] == pytest.approx(list(posed[:3]), abs=1e-5)  # the kept motion's pose there
    assert [k["time"] for k in kfs[1:]] == pytest.approx([(f - frame) / fps for f in keys[2:]])
    assert arm.animation_data.action == kept and scene.frame_current == frame  # given back as it was
    final = next(i for i, s in enumerate(scene.physkey.solutions) if s.stage < 0)
    assert bpy.ops.physkey.keep_solution(index=final) == {"FINISHED"}
    assert arm.animation_data.action["physkey_pose_keys"] == own  # a second Solve from Here can read them too


def _model(bpy, module):
    import mujoco

    from solver.builders import mjcf
    return mujoco.MjModel.from_xml_string(mjcf.scene_to_xml(addon(module, "taskio").extract_scene(bpy.context)))
