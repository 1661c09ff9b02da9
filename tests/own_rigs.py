"""The rigs the own-rig tests share, built here with Blender's own operators: Rigify's Basic Human and Human
meta-rigs, the rig Rigify generates, and a Mixamo-named skeleton (in centimetres under a 0.01 scale), with the
installed extension; and what those tests make of them (the physics humanoid, its MuJoCo model)."""
import mujoco
import numpy as np
from blender_env import addon, installed_extension
from humanoid_rigs import armature
from humanoid_rigs import mixamo_skeleton as _mixamo
from humanoid_rigs import select as _select

SLOT_COUNT = 16


IK_SWITCHES = ("thigh_parent.L", "thigh_parent.R", "upper_arm_parent.L", "upper_arm_parent.R")


def _rigify(bpy):
    import addon_utils
    addon_utils.enable("rigify", default_set=True, persistent=True)


def built_rigs():
    """(bpy, the extension's module, name → rig) of the four rigs, in a fresh scene."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    _rigify(bpy)
    bpy.ops.object.armature_basic_human_metarig_add()
    basic = bpy.context.active_object
    basic.location = (2.0, 1.0, 0.0)  # anywhere in the scene, turned to face +X
    basic.rotation_euler = (0.0, 0.0, 1.2)
    for k, pb in enumerate(basic.pose.bones):  # an animator's rotation modes, kept by the bake
        pb.rotation_mode = ("XYZ", "ZXY", "AXIS_ANGLE", "QUATERNION")[k % 4]
    bpy.ops.object.armature_human_metarig_add()
    human = bpy.context.active_object
    human.location = (-2.0, 0.0, 0.0)
    bpy.ops.object.armature_human_metarig_add()
    _select(bpy, bpy.context.active_object)
    bpy.context.active_object.location = (0.0, -3.0, 0.0)
    bpy.ops.pose.rigify_generate()
    generated = bpy.context.active_object
    mixamo = _mixamo(bpy)
    mixamo.scale = (0.01, 0.01, 0.01)  # Mixamo FBX imports in centimetres under a 0.01 scale
    mixamo.data.transform(np.diag([100.0, 100.0, 100.0, 1.0]).tolist())
    bpy.context.view_layer.update()
    return bpy, module, {"basic human": basic, "human": human, "rigify generated": generated, "mixamo": mixamo}


def _physics(bpy, module, rig):
    """The physics humanoid made from `rig` (made now if the rig has none yet) and the rig's mapping."""
    retarget = addon(module, "retarget")
    physics = next((o for o in bpy.data.objects if o.physkey.animator_rig == rig), None)
    if physics is None:
        physics, _, _ = retarget.make_physics_character(bpy.context, rig)
        bpy.context.view_layer.update()
    return physics, retarget.mapping_of(rig)


def _model(bpy, module, physics):
    taskio = addon(module, "taskio")
    from solver.builders import mjcf  # the same SceneDesc → MJCF the solver uses
    _select(bpy, physics)
    scene = taskio.extract_scene(bpy.context)
    return mujoco.MjModel.from_xml_string(mjcf.scene_to_xml(scene))


def _lamp(bpy):
    return armature(bpy, "lamp", [("base", None, (0, 0, 0), (0, 0, 0.1)), ("arm", "base", (0, 0, 0.1), (0, 0, 0.5)),
                                  ("shade", "arm", (0, 0, 0.5), (0.1, 0, 0.5))])
