"""End to end on whichever Blender runs the tests: `make test` runs this file on Blender 5.0 (with the
rest of the suite) and again on Blender 4.2 LTS (no slotted actions, Python 3.11) and the newest
Blender on PyPI (Python 3.13), each with the built zip installed by Blender's own extension operator.

Install, the manifest's minimum, an assisted-keyframes preset whose pose keys are read from its action
(the action API differs), a tiny solve and Keep, and the animator's own Euler-keyed rig left exactly as
it was by preview + End Preview and by Keep + undo. The contact solve, Keep and the bake checked against
MuJoCo's forward kinematics are `test_solve.py`'s, which runs on every Blender too."""
import json
from pathlib import Path

import pytest
from blender_env import addon, fcurves, installed_extension
from humanoid_rigs import mixamo_skeleton
from humanoid_rigs import select as _select

pytestmark = pytest.mark.every_blender  # every test here differs by Blender version

def _preset(bpy, name):
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset=name) == {"FINISHED"}
    return bpy.context.active_object


def test_the_extension_installs_and_says_which_blender_it_runs_on():
    bpy, module = installed_extension()
    manifest = (Path(module.__file__).parent / "blender_manifest.toml").read_text()
    minimum = tuple(int(x) for x in manifest.split('blender_version_min = "')[1].split('"')[0].split("."))
    assert bpy.app.version >= minimum
    assert ("slots" in bpy.types.Action.bl_rna.properties) == (bpy.app.version >= (4, 4, 0))
    assert addon(module, "actions").slotted() == (bpy.app.version >= (4, 4, 0))
    print(f"Blender {bpy.app.version_string}, Python {__import__('sys').version.split()[0]}")


def test_assist_preset_reads_its_pose_keys_and_a_tiny_solve_keeps():
    bpy, module = installed_extension()
    arm = _preset(bpy, "assist_box_jump_low")
    scene = bpy.context.scene
    assert [k.frame for k in scene.physkey.pose_keys] == addon(module, "taskio").keyed_frames(arm)
    assert len(scene.physkey.pose_keys) == 5
    scene.physkey.num_seeds = 1
    # The path from pose keys to a kept action is checked (its physical version: tests/test_physical.py).
    scene.physkey.settings_json = json.dumps({"samples": 8 * 2, "population": 8, "physical": False})
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    assert len(scene.physkey.solutions) >= 1
    own = arm.animation_data.action
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
    assert arm.animation_data.action != own and own.use_fake_user  # the keys are set aside, never lost
    assert sum(fc.data_path.startswith("pose.bones") for fc in fcurves(module, arm.animation_data.action)) \
        == 3 + 16 * 4


def _snapshot(module, rig):
    """Everything of the animator's that a preview or a Keep could disturb: the action played, each
    bone's rotation mode, and every F-curve's every key (position, handles, interpolation)."""
    action = rig.animation_data.action
    curves = []
    for fc in fcurves(module, action):
        keys = [(tuple(k.co), tuple(k.handle_left), tuple(k.handle_right), k.interpolation,
                 k.handle_left_type, k.handle_right_type) for k in fc.keyframe_points]
        curves.append((fc.data_path, fc.array_index, fc.group.name if fc.group else "", keys))
    return (action.name, {pb.name: pb.rotation_mode for pb in rig.pose.bones}, sorted(curves))


@pytest.fixture(scope="module")
def euler_rig():
    """A Mixamo-named skeleton keyed in Euler (XYZ) on two frames, and its physics humanoid."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    rig = mixamo_skeleton(bpy)
    for pb in rig.pose.bones:
        pb.rotation_mode = "XYZ"
    rig.animation_data_create()
    rig.animation_data.action = bpy.data.actions.new("animator's walk")
    for frame, angle in ((1, 0.0), (12, 0.3)):
        for name in ("mixamorig:LeftUpLeg", "mixamorig:RightArm", "mixamorig:Spine"):
            rig.pose.bones[name].rotation_euler = (angle, 0.5 * angle, 0.0)
            rig.pose.bones[name].keyframe_insert("rotation_euler", frame=frame)
    _select(bpy, rig)
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    physics = bpy.context.active_object
    assert physics.physkey.animator_rig == rig
    props = bpy.context.scene.physkey
    props.method, props.num_seeds = "simulate", 1
    props.settings_json = json.dumps({"duration": 0.4})
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    return bpy, module, rig.name, physics.name


def test_preview_and_end_preview_leave_an_euler_keyed_rig_exactly_as_it_was(euler_rig):
    bpy, module, rig_name, _ = euler_rig
    rig = bpy.data.objects[rig_name]
    before = _snapshot(module, rig)
    bpy.context.scene.physkey.active_solution = 0  # a preview, on the animator's rig too
    assert rig.animation_data.action.name == "PhysKey Preview (your rig)"
    assert {pb.rotation_mode for pb in rig.pose.bones} == {"XYZ"}  # previewed in the rig's own modes
    assert bpy.ops.physkey.end_preview() == {"FINISHED"}
    assert _snapshot(module, rig) == before


def test_keep_and_undo_leave_an_euler_keyed_rig_exactly_as_it_was(euler_rig):
    bpy, module, rig_name, physics_name = euler_rig
    rig = bpy.data.objects[rig_name]
    before = _snapshot(module, rig)
    bpy.ops.ed.undo_push(message="animator's work")  # headless Blender starts its undo stack on the first push
    _select(bpy, bpy.data.objects[physics_name])
    assert bpy.ops.physkey.keep_solution("EXEC_DEFAULT", True, index=0) == {"FINISHED"}
    rig = bpy.data.objects[rig_name]
    kept = rig.animation_data.action
    assert kept.name != before[0] and {pb.rotation_mode for pb in rig.pose.bones} == {"XYZ"}
    assert any(fc.data_path.endswith("rotation_euler") for fc in fcurves(module, kept))
    kept_name = kept.name
    bpy.ops.ed.undo()
    rig = bpy.data.objects[rig_name]
    assert kept_name not in bpy.data.actions
    assert _snapshot(module, rig) == before
