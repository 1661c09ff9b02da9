"""Scene presets: every task builds in Blender, and the armchair comes back out as the solver's own."""
import json

import mujoco
import numpy as np
import pytest
from blender_env import ROOT, addon, installed_extension

TASKS = sorted(p.stem for p in (ROOT / "scenes" / "tasks").glob("*.json"))


@pytest.mark.parametrize("name", TASKS)
def test_every_preset_loads(name, tmp_path):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset=name) == {"FINISHED"}
    arm = bpy.context.active_object
    assert arm.type == "ARMATURE" and len(arm.data.bones) == 16
    props = bpy.context.scene.physkey
    assert props.preset == name
    source = json.loads((ROOT / "scenes" / "tasks" / f"{name}.json").read_text())
    assert props.method == source["method"]
    if source["method"] == "assist":
        assert len(props.pose_keys) == len(source["keyframes"])
    elif source["method"] == "contact":
        assert len(props.contact_keyframes) >= 1
    assert bpy.ops.physkey.export_mjcf(filepath=str(tmp_path / "s.xml")) == {"FINISHED"}
    mujoco.MjModel.from_xml_path(str(tmp_path / "s.xml"))


def test_armchair_preset_exports_the_solvers_scene(tmp_path):
    """Furniture and the character's start pose go through Blender unchanged: the exported world
    geometry equals the solver's own model of the task, geom by geom."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand")
    arm = bpy.context.active_object
    rig = addon(module, "rig")
    bpy.ops.physkey.export_mjcf(filepath=str(tmp_path / "blender.xml"))
    ours = mujoco.MjModel.from_xml_path(str(tmp_path / "blender.xml"))
    from solver.builders.mjcf import initial_qpos, scene_to_xml
    from solver.formats.task import build_scene, load_task
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


def _extract(bpy, module):
    taskio = addon(module, "taskio")
    return taskio.task_from_scene(bpy.context, taskio.extract_scene(bpy.context))


@pytest.mark.every_blender
def test_contact_preset_keyframes_come_back_as_the_task_had_them():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand")
    task = _extract(bpy, module)
    from solver.formats.contact_keyframes import parse_keyframes
    from solver.formats.task import task_from_dict
    want = parse_keyframes(
        json.loads((ROOT / "scenes" / "tasks" / "armchair_stand_sit_stand.json").read_text())["keyframes"])
    got = parse_keyframes(task["keyframes"])
    assert [k.name for k in got] == [k.name for k in want]
    for a, b in zip(got, want):
        assert (a.tolerance, a.sustain, a.time_limit) == pytest.approx((b.tolerance, b.sustain, b.time_limit))
        assert a.horizon == (None if b.horizon is None else pytest.approx(b.horizon))  # the rise's look-ahead
        for p, q in zip(a.pairs, b.pairs):
            assert (p.body1, p.body2) == (q.body1, q.body2)
            np.testing.assert_allclose(p.pos1 + p.pos2, q.pos1 + q.pos2, atol=1e-6)
    task_from_dict(task)  # a valid solver task, scene included


@pytest.mark.every_blender
def test_assist_preset_poses_are_keyed_and_read_back():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="assist_box_jump_low")
    arm = bpy.context.active_object
    assert arm.animation_data.action is not None
    task = _extract(bpy, module)
    from solver.formats.pose_keyframes import resolve
    from solver.formats.task import build_scene, task_from_dict

    def pose_keyframes(data):  # what the assist method solves for (methods/assist.py)
        t = task_from_dict(data)
        return resolve(t.keyframes, build_scene(t.scene))[1]
    src = json.loads((ROOT / "scenes" / "tasks" / "assist_box_jump_low.json").read_text())
    ours, ref = pose_keyframes(task), pose_keyframes(src)
    for a, b in zip(task["keyframes"][1:], src["keyframes"][1:]):
        assert a["time_range"] == pytest.approx(b["time_range"], abs=1e-6)  # Blender stores float32
    for a, b in zip(ours.qpos, ref.qpos):
        np.testing.assert_allclose(a[:3], b[:3], atol=1e-5)
        assert abs(abs(float(np.dot(a[3:7], b[3:7]))) - 1.0) < 1e-9
        np.testing.assert_allclose(a[7:], b[7:], atol=1e-5)


@pytest.mark.every_blender
def test_keyed_poses_become_pose_keyframes():
    """An animator keys poses the usual way; the pose keyframe list follows the keyed frames."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.add_character()
    arm = bpy.context.active_object
    scene = bpy.context.scene
    scene.physkey.method = "assist"
    from mathutils import Quaternion, Vector
    axis = Vector(arm.data.bones["shin_right"].physkey.joints["knee_right"].axis).normalized()
    for frame, angle in ((1, 0.0), (20, -1.0), (45, -0.5)):
        arm.pose.bones["shin_right"].rotation_quaternion = Quaternion(axis, angle)
        for pb in arm.pose.bones:
            pb.keyframe_insert("rotation_quaternion", frame=frame)
        arm.pose.bones["torso"].keyframe_insert("location", frame=frame)
    assert bpy.ops.physkey.sync_pose_keys() == {"FINISHED"}
    assert [k.frame for k in scene.physkey.pose_keys] == [1, 20, 45]
    scene.physkey.pose_keys[1].free = True
    scene.physkey.pose_keys[1].range_min, scene.physkey.pose_keys[1].range_max = 0.3, 0.9
    task = _extract(bpy, module)
    assert [k.get("time_range") for k in task["keyframes"]][1] == pytest.approx([0.3, 0.9])
    fps = scene.render.fps / scene.render.fps_base
    assert task["keyframes"][2]["time"] == pytest.approx(44 / fps)
    assert task["keyframes"][1]["joints"]["knee_right"] == pytest.approx(-1.0, abs=1e-5)


def test_method_settings_fields_round_trip():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    taskio = addon(module, "taskio")
    props = bpy.context.scene.physkey
    props.method = "contact"
    taskio.settings_to_scene(props, "contact", {"rollouts": 15, "planner": "baseline", "horizon": 0.5,
                                                "particles": 3})
    assert props.mpc_rollouts == 15 and props.mpc_planner == "baseline" and props.mpc_particles == 3
    assert props.mpc_effort == "adaptive"  # no budget in the task: adaptive effort, and none sent back
    assert taskio.settings_from_scene(props) == {"rollouts": 15, "planner": "baseline", "horizon": 0.5,
                                                 "particles": 3, "grasp": "friction"}
    taskio.settings_to_scene(props, "contact", {"budget": 3, "grasp": "sticky"})
    assert props.mpc_effort == "fixed" and props.mpc_budget == 3 and props.mpc_grasp == "sticky"
    assert taskio.settings_from_scene(props) == {"rollouts": 15, "planner": "baseline", "budget": 3,
                                                 "particles": 3, "grasp": "sticky"}
    props.method = "assist"
    taskio.settings_to_scene(props, "assist", {"lambda_beta": 10.0, "curriculum": False})
    got = taskio.settings_from_scene(props)
    assert got["lambda_beta"] == pytest.approx(10.0) and got["curriculum"] is False and got["population"] == 48


def test_draft_sets_its_documented_settings_over_the_fields_and_more_still_wins():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    taskio = addon(module, "taskio")
    props = bpy.context.scene.physkey
    assert props.quality == "final"
    props.method = "contact"
    taskio.settings_to_scene(props, "contact", {"rollouts": 45, "planner": "partwise", "particles": 1})
    final = taskio.settings_from_scene(props)
    assert final == {"rollouts": 45, "planner": "partwise", "particles": 1, "grasp": "friction"}
    props.quality = "draft"
    assert taskio.settings_from_scene(props) == dict(final, rollouts=20, max_iterations=3, segment_retries=0,
                                                     backups=0)
    props.settings_json = json.dumps({"rollouts": 30})  # the animator's own word is the last
    assert taskio.settings_from_scene(props)["rollouts"] == 30
    props.settings_json, props.method = "", "assist"
    got = taskio.settings_from_scene(props)
    assert got["samples"] == 2000 and got["physical"] is False and got["replans"] == 0 and got["search_restarts"] == 0
    props.method = "simulate"
    assert taskio.settings_from_scene(props) == {}


def test_a_planner_the_menu_does_not_list_stays_in_the_json():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    taskio = addon(module, "taskio")
    props = bpy.context.scene.physkey
    props.method = "contact"
    taskio.settings_to_scene(props, "contact", {"planner": "someday"})
    assert props.mpc_planner == "partwise" and taskio.settings_from_scene(props)["planner"] == "someday"


def test_method_settings_fields_are_the_solvers_settings():
    """Every settings field on the panel takes its default, bounds and description from the solver's
    settings dataclass; the method and planner menus are the solver's registry."""
    from solver.core.registry import METHODS, PLANNERS
    from solver.formats.settings import AssistSettings, ContactSettings, TrackSettings, setting_field
    bpy, module = installed_extension()
    taskio = addon(module, "taskio")
    rna = bpy.context.scene.physkey.bl_rna.properties
    assert [i.identifier for i in rna["method"].enum_items] == list(METHODS)
    assert [(i.name, i.description) for i in rna["method"].enum_items] == \
        [(e.label, e.description) for e in METHODS.values()]
    assert [i.identifier for i in rna["mpc_planner"].enum_items] == list(PLANNERS)
    checked = 0
    for method, cls in (("contact", ContactSettings), ("assist", AssistSettings), ("track", TrackSettings)):
        for prop_name, key in taskio.FIELDS[method].items():
            f, default = setting_field(cls, key)
            prop, meta = rna[prop_name], f.metadata
            assert prop.description == meta["description"], prop_name
            assert prop.default == pytest.approx(default), prop_name
            for bound in ("min", "max", "soft_min", "soft_max"):
                if bound in meta:
                    got = getattr(prop, "hard_" + bound if bound in ("min", "max") else bound)
                    assert got == pytest.approx(meta[bound]), (prop_name, bound)
            if meta.get("positive") and prop.type == "INT":
                assert prop.hard_min >= 1, prop_name
            if meta.get("positive") and prop.type == "FLOAT":
                assert prop.hard_min > 0, prop_name
            checked += 1
    assert checked == 4 + 6 + 3  # contact's (with the grasp), assist's, and track's (the planner fields)
    budget, meta = rna["mpc_budget"], setting_field(ContactSettings, "budget")[0].metadata
    assert budget.description == meta["description"] and budget.hard_min == 1 and budget.soft_max == meta["soft_max"]
    assert budget.default == 1  # shown when the effort is fixed; unset (adaptive) is the solver's default
    assert ContactSettings().effort.budget is None and rna["mpc_effort"].default == "adaptive"


@pytest.mark.parametrize("preset", ["box_lift_place", "box_floor_pickup", "box_handover"])
def test_the_box_presets_come_back_with_their_free_box_and_sticky_hands(preset):
    """Each box preset through Blender: the box is a free body of its mass, the pairs that move it keep
    it as their first side, and the sticky grasp and three particles go with the solve."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset=preset) == {"FINISHED"}
    task = _extract(bpy, module)
    from solver.formats.contact_keyframes import parse_keyframes
    from solver.formats.task import task_from_dict
    from solver.methods.contact import CONTACT
    parsed = task_from_dict(task)
    box = next(b for b in parsed.scene.desc.environment.bodies if b.name == "box")
    assert box.kind == "free" and sum(g.mass or 0.0 for g in box.geoms) == pytest.approx(2.0, rel=1e-3)
    from solver.formats.task import SceneRef, build_scene
    params = json.loads((ROOT / "scenes" / "tasks" / f"{preset}.json").read_text())["scene"]["params"]
    authored = build_scene(SceneRef(environment="pick_place", params=params)).environment.bodies
    assert sorted(b.name for b in parsed.scene.desc.environment.bodies) == sorted(b.name for b in authored)
    assert ("from_platform" in [b.name for b in authored]) == (preset != "box_floor_pickup")  # on the floor
    mine = next(b for b in authored if b.name == "box")
    np.testing.assert_allclose(box.pos, mine.pos, atol=1e-4)  # where the preset put it, through Blender
    kfs = parse_keyframes(parsed.keyframes)
    assert [p.body1 for p in kfs[1].pairs] == ["hand_right", "hand_left", "box"]
    prep = CONTACT.prepare(parsed)  # valid as the solver sees it, welds for both hands
    assert prep.settings.grasp.grasp == "sticky" and prep.built.grasps == [("hand_right", "box"), ("hand_left", "box")]
    assert prep.settings.recovery.particles == 3  # the preset's, through the panel's Particles field
