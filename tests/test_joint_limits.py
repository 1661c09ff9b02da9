"""The physics character's bones carry Limit Rotation constraints matching its joints: every pose the
joints allow is left exactly as it is (checked over random hinge angles within range, read back the way
the solver reads a pose), a bone turned beyond its range is held at the limit, and editing a joint's
range moves its constraint."""
import math

import numpy as np
import pytest
from blender_env import addon, installed_extension


@pytest.fixture(scope="module")
def humanoid():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.add_character() == {"FINISHED"}
    obj = bpy.context.active_object
    taskio = addon(module, "taskio")
    import mujoco

    from solver.builders import mjcf
    model = mujoco.MjModel.from_xml_string(mjcf.scene_to_xml(taskio.extract_scene(bpy.context)))
    return bpy, module, obj, model


def _hinges(model):
    import mujoco
    return [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]


def test_every_bone_with_hinges_has_one_constraint(humanoid):
    bpy, module, obj, model = humanoid
    limits = addon(module, "joint_limits")
    limited = {pb.name for pb in obj.pose.bones if pb.constraints.get(limits.CONSTRAINT)}
    with_hinges = {model.body(int(model.jnt_bodyid[j])).name for j in _hinges(model)}
    assert limited == with_hinges and len(limited) == 12
    hip = obj.pose.bones["thigh_right"].constraints[limits.CONSTRAINT]
    assert hip.owner_space == "LOCAL" and hip.use_transform_limit  # R in the viewport stops at the limit
    assert hip.euler_order == "ZYX"  # hinges about x, then -y, then z: R = Rx·Ry·Rz
    # the hip's x hinge lies along the bone's x axis: its range is the Euler limit, within the 1° margin and
    # what the 1.5° tilt of the other two hinges adds over their large ranges
    assert math.degrees(hip.min_x) == pytest.approx(-30 - 1, abs=5.5)
    assert math.degrees(hip.max_x) == pytest.approx(10 + 1, abs=2.5)


def test_every_pose_the_joints_allow_is_left_as_it_is(humanoid):
    bpy, module, obj, model = humanoid
    rig = addon(module, "rig")
    rng = np.random.default_rng(3)
    hinges = _hinges(model)
    worst = 0.0
    for _ in range(40):
        qpos = model.qpos0.copy()
        qpos[2] = 1.3
        for j in hinges:
            lo, hi = model.jnt_range[j]
            qpos[model.jnt_qposadr[j]] = rng.uniform(lo, hi)
        rig.pose_from_qpos(obj, model, qpos)
        bpy.context.view_layer.update()
        back = rig.qpos_from_pose(obj, model)
        adr = [model.jnt_qposadr[j] for j in hinges]
        worst = max(worst, float(np.max(np.abs(back[adr] - qpos[adr]))))
    assert worst < 1e-4, f"a pose within range moved by {math.degrees(worst):.3f}°"


@pytest.mark.every_blender
def test_a_hip_turned_beyond_its_range_is_held_near_its_limit(humanoid):
    bpy, module, obj, model = humanoid
    from mathutils import Quaternion
    rig = addon(module, "rig")
    for pb in obj.pose.bones:
        pb.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    obj.pose.bones["thigh_right"].rotation_quaternion = Quaternion((1.0, 0.0, 0.0), math.radians(68.8))
    obj.pose.bones["shin_left"].rotation_quaternion = Quaternion((0.0, 0.0, 1.0), -1.2)  # knee the wrong way
    bpy.context.view_layer.update()
    q = rig.qpos_from_pose(obj, model)
    hip_x = math.degrees(q[model.jnt_qposadr[model.joint("hip_x_right").id]])
    knee = math.degrees(q[model.jnt_qposadr[model.joint("knee_left").id]])
    assert 10.0 < hip_x < 10.0 + 3.5, hip_x  # at the limit (the box's margin and tilt), not at 68.8°
    assert 2.0 < knee < 2.0 + 1.5, knee


def test_editing_a_joints_range_moves_its_constraint(humanoid):
    bpy, module, obj, model = humanoid
    limits = addon(module, "joint_limits")
    shin = obj.data.bones["shin_right"]
    c = obj.pose.bones["shin_right"].constraints[limits.CONSTRAINT]
    assert math.degrees(c.max_z) == pytest.approx(161.0, abs=1e-3)  # knee about -z: [-160°, 2°] → [-2°, 160°]
    shin.physkey.joints[0].range_min = math.radians(-120.0)
    c = obj.pose.bones["shin_right"].constraints[limits.CONSTRAINT]
    assert math.degrees(c.max_z) == pytest.approx(121.0, abs=1e-3)
    assert len([x for x in obj.pose.bones["shin_right"].constraints if x.type == "LIMIT_ROTATION"]) == 1
    shin.physkey.joints[0].range_min = math.radians(-160.0)


def test_auto_fill_limits_the_bones_the_animator_left_unlimited():
    """A custom armature filled with physics: a bone the animator limited keeps only its own constraint
    (its hinges come from it), the others get PhysKey's over the guessed ±90° hinges."""
    bpy, module = installed_extension()
    from humanoid_rigs import armature, select
    bpy.ops.wm.read_homefile(use_empty=True)
    lamp = armature(bpy, "lamp", [("base", None, (0, 0, 0), (0, 0, 0.1)), ("arm", "base", (0, 0, 0.1), (0, 0, 0.5)),
                                  ("shade", "arm", (0, 0, 0.5), (0.1, 0, 0.5))])
    own = lamp.pose.bones["arm"].constraints.new("LIMIT_ROTATION")
    own.owner_space, own.euler_order = "LOCAL", "ZXY"  # R = Ry·Rx·Rz: hinges about y, x, z
    own.use_limit_x, own.min_x, own.max_x = True, -0.5, 0.5
    own.use_limit_z, own.min_z, own.max_z = True, -0.2, 0.3
    select(bpy, lamp)
    assert bpy.ops.physkey.autofill_rig() == {"FINISHED"}
    limits = addon(module, "joint_limits")
    assert [c.name for c in lamp.pose.bones["arm"].constraints] == [own.name]
    joints = [(j.name, tuple(j.axis), round(j.range_min, 6), round(j.range_max, 6))
              for j in lamp.data.bones["arm"].physkey.joints]
    assert joints == [("arm_x", (1.0, 0.0, 0.0), -0.5, 0.5), ("arm_z", (0.0, 0.0, 1.0), -0.2, 0.3)]
    shade = lamp.pose.bones["shade"].constraints[limits.CONSTRAINT]
    assert shade.euler_order == "XYZ"  # hinges about z, y, x: R = Rz·Ry·Rx
    assert math.degrees(shade.max_y) == pytest.approx(91.0, abs=1e-3)
    # ±90° about the middle axis is gimbal lock: every X and Z is reachable, and the box says so
    assert math.degrees(shade.max_x) == pytest.approx(180.0, abs=1e-3)


def test_a_physics_character_made_from_an_animators_rig_has_none():
    """It follows the animator's rig, which is what they pose: a constraint would move it off their pose
    silently, where a key out of range is flagged in their bone's terms."""
    bpy, module = installed_extension()
    from humanoid_rigs import mixamo_skeleton, select
    bpy.ops.wm.read_homefile(use_empty=True)
    select(bpy, mixamo_skeleton(bpy))
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    physics = bpy.context.active_object
    assert physics.physkey.is_character and not any(pb.constraints for pb in physics.pose.bones)
    physics.data.bones["shin_left"].physkey.joints[0].range_min = -1.0  # an edit adds none either
    assert not physics.pose.bones["shin_left"].constraints
