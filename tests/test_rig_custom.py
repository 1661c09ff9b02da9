"""Rigs that are not the humanoid: a 3-bone desk lamp and a quadruped, built here with bone roll,
connected and unconnected bones and Limit Rotation constraints, given physics by Auto-fill. The
rig invariant must hold for them too, both ways, with the armature moved, rotated and scaled."""

import mujoco
import numpy as np
import pytest
from blender_env import installed_extension
from test_rig import _check_invariant, check_reverse


def _armature(bpy, name, bones):
    """bones: (name, parent, head, tail, roll, connected)."""
    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    bpy.context.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    for bname, parent, head, tail, roll, connected in bones:
        eb = arm.edit_bones.new(bname)
        eb.head, eb.tail, eb.roll = head, tail, roll
        if parent:
            eb.parent = arm.edit_bones[parent]
            eb.use_connect = connected
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def _lamp(bpy):
    obj = _armature(bpy, "lamp", [
        ("base", None, (0, 0, 0.05), (0, 0, 0.15), 0.0, False),
        ("arm", "base", (0, 0, 0.15), (0.1, 0, 0.45), 0.4, True),
        ("head", "arm", (0.12, 0.02, 0.47), (0.3, 0.0, 0.4), -0.7, False),
    ])
    c = obj.pose.bones["arm"].constraints.new("LIMIT_ROTATION")
    c.owner_space = "LOCAL"  # joint limits; a World-space limit is not a joint limit
    c.use_limit_x, c.min_x, c.max_x = True, -1.0, 1.2
    c.use_limit_z, c.min_z, c.max_z = True, -0.5, 0.5
    return obj


def _quadruped(bpy):
    bones = [("spine", None, (0, 0, 0.6), (0.6, 0, 0.62), 0.1, False),
             ("neck", "spine", (0.6, 0, 0.62), (0.8, 0, 0.8), 0.0, True),
             ("head", "neck", (0.82, 0, 0.82), (1.0, 0, 0.78), 0.3, False)]
    for side, y in (("L", 0.15), ("R", -0.15)):
        for end, x in (("front", 0.55), ("back", 0.05)):
            bones += [(f"{end}_thigh.{side}", "spine", (x, y, 0.58), (x + 0.02, y, 0.3), 0.2 * y, False),
                      (f"{end}_shin.{side}", f"{end}_thigh.{side}", (x + 0.02, y, 0.3), (x, y, 0.03), 0.0, True)]
    return _armature(bpy, "dog", bones)


@pytest.mark.every_blender
@pytest.mark.parametrize("build", [_lamp, _quadruped], ids=["lamp", "quadruped"])
def test_invariant_for_autofilled_rigs(build, tmp_path):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    obj = build(bpy)
    assert bpy.ops.physkey.autofill_rig() == {"FINISHED"}
    arm_bone = obj.data.bones.get("arm")
    if arm_bone is not None:  # the lamp's constraint became two hinges with its limits
        joints = arm_bone.physkey.joints
        assert [j.name for j in joints] == ["arm_z", "arm_x"]
        assert (joints[1].range_min, joints[1].range_max) == pytest.approx((-1.0, 1.2))
    else:
        assert obj.data.bones["front_thigh.L"].physkey.joints[0].group == "left_leg"
    from mathutils import Euler
    for placement in ((0, 0, 0), (1.0, -2.0, 0.5)):
        obj.location = placement
        obj.rotation_euler = Euler((0.2, 0.1, -0.6)) if any(placement) else Euler((0, 0, 0))
        obj.scale = (0.8, 0.8, 0.8) if any(placement) else (1, 1, 1)
        bpy.context.view_layer.update()
        bpy.context.view_layer.objects.active = obj
        path = tmp_path / f"{obj.name}.xml"
        assert bpy.ops.physkey.export_mjcf(filepath=str(path)) == {"FINISHED"}
        model = mujoco.MjModel.from_xml_path(str(path))
        assert model.nbody == len(obj.data.bones) + 1
        _check_invariant(bpy, module, obj, model, np.random.default_rng(5), trials=3)
        check_reverse(bpy, module, obj, model)  # the pose Blender shows → q → MuJoCo


def test_autofill_and_export_refuse_bad_rigs(tmp_path):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    two_roots = _armature(bpy, "twins", [("a", None, (0, 0, 0), (0, 0, 1), 0, False),
                                         ("b", None, (1, 0, 0), (1, 0, 1), 0, False)])
    with pytest.raises(RuntimeError, match="2 root bones"):
        bpy.ops.physkey.autofill_rig()
    assert all(len(b.physkey.geoms) == 0 for b in two_roots.data.bones)  # nothing changed
    with pytest.raises(RuntimeError, match="2 root bones"):
        bpy.ops.physkey.export_mjcf(filepath=str(tmp_path / "x.xml"))
    bpy.ops.object.select_all(action="DESELECT")
    bpy.context.view_layer.objects.active = None
    with pytest.raises(RuntimeError, match="no armature"):
        bpy.ops.physkey.autofill_rig()
