"""Hits in Blender (the built and installed extension): pushes and balls added on the selected bone at
the current frame go to the solver as the task file's perturbations (checked against the solver's
own parser), are drawn where they strike, and a solution's thrown balls are baked onto ball objects."""
import json

import mujoco
import numpy as np
import pytest
from blender_env import ROOT, addon, installed_extension


def _extract(bpy, module, start_frame=None):
    taskio = addon(module, "taskio")
    return taskio.task_from_scene(bpy.context, taskio.extract_scene(bpy.context), start_frame=start_frame)


def _scene_with_character(bpy):
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset="reach_hand_targets") == {"FINISHED"}
    arm = bpy.context.active_object
    bpy.ops.object.mode_set(mode="POSE")
    return arm


def test_a_push_added_on_the_selected_bone_is_the_solvers_impulse():
    bpy, module = installed_extension()
    arm = _scene_with_character(bpy)
    scene = bpy.context.scene
    scene.render.fps, scene.frame_start, scene.frame_current = 30, 10, 40
    arm.data.bones.active = arm.data.bones["upper_arm_left"]
    assert bpy.ops.physkey.hit_edit(action="ADD_PUSH") == {"FINISHED"}
    hit = scene.physkey.hits[0]
    assert (hit.kind, hit.body, hit.frame) == ("push", "upper_arm_left", 40)
    hit.direction, hit.magnitude, hit.point = (0.0, 3.0, 4.0), 10.0, (0.0, 0.1, 0.0)
    task = _extract(bpy, module)
    from solver.formats.task import task_from_dict
    (impulse,) = task_from_dict(task).perturbations.impulses  # the solver's own parser and checks
    assert impulse.time == pytest.approx(1.0) and impulse.body == "upper_arm_left"  # (40 − 10) / 30 s
    np.testing.assert_allclose(impulse.impulse, [0.0, 6.0, 8.0], atol=1e-6)  # 10 N·s along (0, 0.6, 0.8)
    np.testing.assert_allclose(impulse.point, [0.0, 0.1, 0.0], atol=1e-6)
    assert task_from_dict(_extract(bpy, module, start_frame=25)).perturbations.impulses[0].time == \
        pytest.approx(0.5)  # Solve from Here at frame 25: timed from there
    assert "perturbations" not in _extract(bpy, module, start_frame=41)  # struck before: not again


def test_a_ball_strikes_no_earlier_than_it_can_fly_and_bad_hits_are_named():
    bpy, module = installed_extension()
    _scene_with_character(bpy)
    scene = bpy.context.scene
    scene.render.fps, scene.frame_start, scene.frame_current = 24, 1, 1
    assert bpy.ops.physkey.hit_edit(action="ADD_BALL") == {"FINISHED"}
    ball = scene.physkey.hits[0]
    assert ball.body == "torso" and ball.kind == "ball"  # nothing selected: the torso
    flight = ball.distance / ball.speed
    assert ball.frame == 1 + int(np.ceil(flight * 24))  # the earliest frame it can arrive at
    (b,) = json.loads(json.dumps(_extract(bpy, module)))["perturbations"]["balls"]
    assert b["time"] >= flight and b["mass"] == pytest.approx(ball.mass) and b["aim"] == "torso"
    ball.frame = 2
    with pytest.raises(ValueError, match=r"hit 1: the ball needs .* strike at frame \d+ or later"):
        _extract(bpy, module)
    ball.frame, ball.body = 40, "tail"
    with pytest.raises(ValueError, match="hit 1: the character has no bone 'tail'"):
        _extract(bpy, module)
    ball.body, ball.direction = "head", (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="hit 1: its direction is zero"):
        _extract(bpy, module)
    with pytest.raises(RuntimeError, match="hit 1: its direction is zero"):  # Solve says so and starts nothing
        bpy.ops.physkey.solve(wait=True)
    assert not scene.physkey.running


def test_duplicate_and_remove_keep_the_list_right():
    bpy, module = installed_extension()
    _scene_with_character(bpy)
    props = bpy.context.scene.physkey
    bpy.ops.physkey.hit_edit(action="ADD_PUSH")
    props.hits[0].magnitude = 12.5
    assert bpy.ops.physkey.hit_edit(action="DUPLICATE") == {"FINISHED"}
    assert len(props.hits) == 2 and props.hits[1].magnitude == 12.5 and props.active_hit == 1
    assert bpy.ops.physkey.hit_edit(action="REMOVE") == {"FINISHED"}
    assert len(props.hits) == 1 and props.active_hit == 0
    props.active_hit = 5
    with pytest.raises(RuntimeError, match="no hit selected"):  # nothing selected: nothing lost
        bpy.ops.physkey.hit_edit(action="REMOVE")
    assert len(props.hits) == 1


def test_a_hit_preset_comes_back_as_the_file_had_it():
    """Loading a hit preset fills the hits; the task Blender writes has the file's perturbations."""
    bpy, module = installed_extension()
    from solver.core import schema
    from solver.formats.perturbations import Perturbations
    from solver.formats.task import task_from_dict
    for name in ("hit_balls", "hit_stand_shoulder"):
        bpy.ops.wm.read_homefile(use_empty=True)
        bpy.ops.physkey.load_preset(preset=name)
        got = task_from_dict(_extract(bpy, module)).perturbations
        want = schema.from_dict(Perturbations, json.loads((ROOT / "scenes" / "tasks" / f"{name}.json").read_text())
                                ["perturbations"])
        assert len(got.impulses) == len(want.impulses) and len(got.balls) == len(want.balls)
        for g, w in zip(got.impulses, want.impulses):
            assert (g.time, g.body) == (pytest.approx(w.time), w.body)
            np.testing.assert_allclose(g.impulse, w.impulse, atol=1e-5)
            np.testing.assert_allclose(g.point, w.point, atol=1e-6)
        for g, w in zip(got.balls, want.balls):
            assert (g.time, g.aim) == (pytest.approx(w.time), w.aim)
            np.testing.assert_allclose(g.direction, np.asarray(w.direction) / np.linalg.norm(w.direction), atol=1e-6)
            for key in ("speed", "mass", "radius", "distance", "friction"):
                assert getattr(g, key) == pytest.approx(getattr(w, key)), key
    bpy.ops.physkey.load_preset(preset="reach_hand_targets")
    assert len(bpy.context.scene.physkey.hits) == 0 and "perturbations" not in _extract(bpy, module)


def test_hits_are_drawn_where_they_strike():
    """The arrow's head is the struck point in the pose shown (bone matrix × point, computed here);
    a push's tail is its drawn length back along its direction, a ball's the throwing distance."""
    bpy, module = installed_extension()
    arm = _scene_with_character(bpy)
    props = bpy.context.scene.physkey
    hits, draw = addon(module, "hits"), addon(module, "draw")
    arm.data.bones.active = arm.data.bones["head"]
    bpy.ops.physkey.hit_edit(action="ADD_PUSH")
    bpy.ops.physkey.hit_edit(action="ADD_BALL")
    props.hits[0].point, props.hits[0].direction, props.hits[0].magnitude = (0.02, 0.05, 0.0), (0, 2, 0), 8.0
    props.hits[1].direction, props.hits[1].distance = (1, 0, 0), 3.0
    arm.pose.bones["head"].rotation_mode = "XYZ"
    arm.pose.bones["head"].rotation_euler = (0.4, 0.0, 0.2)  # not the rest pose
    bpy.context.view_layer.update()
    marks = draw.hit_marks(bpy.context)
    assert len(marks) == 2
    m = np.array(arm.matrix_world @ arm.pose.bones["head"].matrix)
    m[:3, :3] /= np.linalg.norm(m[:3, :3], axis=0)
    struck = m[:3, :3] @ np.array([0.02, 0.05, 0.0]) + m[:3, 3]
    (tail0, head0, color0, label0), (tail1, head1, color1, label1) = marks
    np.testing.assert_allclose(np.array(head0), struck, atol=1e-5)
    np.testing.assert_allclose(np.array(head0) - np.array(tail0), [0.0, 0.4, 0.0], atol=1e-5)  # 0.05 m per N·s
    np.testing.assert_allclose(np.array(head1) - np.array(tail1), [3.0, 0.0, 0.0], atol=1e-5)
    assert label0.startswith("push 8 N·s") and label1.startswith("ball 3 kg 6 m/s")
    assert color1 == hits.ACTIVE_COLOR and color0 == hits.PUSH_COLOR  # the selected hit stands out
    lines = hits.arrow_lines(head0 - (head0 - tail0), head0)
    assert len(lines) == 3 and all((a - head0).length < 1e-9 for a, _ in lines[1:])  # shaft and two barbs
    props.method = "assist"
    assert draw.hit_marks(bpy.context) == []  # only contact keyframes solve with hits


@pytest.mark.every_blender
def test_a_thrown_ball_is_baked_hidden_until_it_is_thrown(tmp_path):
    """A model with a ball (the solver's own, from a task with one), its free joint moved along a
    made-up path: the ball object follows it frame by frame and shows only once off the rack."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    from solver.formats.perturbations import RACK_X, Ball, Perturbations
    from solver.formats.task import build_scene, load_task
    from solver.physics.model import build_model
    scene_desc = build_scene(load_task(ROOT / "scenes" / "tasks" / "reach_hand_targets.json").scene)
    balls = [Ball(time=1.0, aim="torso", direction=[1, 0, 0], radius=0.2)]
    model = build_model(scene_desc, perturbations=Perturbations(balls=balls)).model
    j = model.joint("perturbation_ball_0_free")
    a = int(model.jnt_qposadr[j.id])
    times = np.arange(0, 25) / 24
    qpos = np.tile(model.qpos0, (len(times), 1))
    qpos[:, a] = np.where(times < 0.5, RACK_X, np.linspace(-2, 1, len(times)))
    qpos[:, a + 3:a + 7] = [0.0, 0.0, 0.0, 1.0]
    hits = addon(module, "hits")
    (action,) = hits.bake_balls(bpy.context.scene, addon(module, "bake").Clip(model, times, qpos, 1, 24.0),
                              "test balls")
    obj = bpy.context.scene.objects["PhysKey Ball 1"]
    assert obj.users_collection[0].name == "PhysKey Hits" and tuple(obj.scale) == pytest.approx((0.2,) * 3)
    assert obj.animation_data.action == action
    scene = bpy.context.scene
    for k in (0, 11, 12, 24):
        scene.frame_set(1 + k)
        assert obj.location.x == pytest.approx(qpos[k, a], abs=1e-5)
        assert obj.hide_render == (times[k] < 0.5) and obj.hide_viewport == (times[k] < 0.5), k
    assert mujoco.mjtJoint(model.jnt_type[j.id]) == mujoco.mjtJoint.mjJNT_FREE
