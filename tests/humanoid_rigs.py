"""Humanoid rigs the tests build with Blender's own operators: a Mixamo-named skeleton (Rigify's
meta-rigs come from Rigify itself)."""


def select(bpy, obj):
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj


def armature(bpy, name, bones, prefix=""):
    """An armature object made in Edit Mode from (name, parent, head, tail) rows, selected."""
    arm = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm)
    bpy.context.collection.objects.link(obj)
    select(bpy, obj)
    bpy.ops.object.mode_set(mode="EDIT")
    for bone, parent, head, tail in bones:
        eb = arm.edit_bones.new(prefix + bone)
        eb.head, eb.tail = head, tail
        if parent:
            eb.parent = arm.edit_bones[prefix + parent]
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def mixamo_skeleton(bpy):
    """A Mixamo-named skeleton (as the FBX importer leaves it: `mixamorig:` names, T-pose)."""
    spec = [("Hips", None, (0, 0, 1.0), (0, 0, 1.1)), ("Spine", "Hips", (0, 0, 1.1), (0, 0, 1.22)),
            ("Spine1", "Spine", (0, 0, 1.22), (0, 0, 1.35)), ("Spine2", "Spine1", (0, 0, 1.35), (0, 0, 1.48)),
            ("Neck", "Spine2", (0, 0, 1.5), (0, 0, 1.6)), ("Head", "Neck", (0, 0, 1.6), (0, 0, 1.78)),
            ("HeadTop_End", "Head", (0, 0, 1.78), (0, 0, 1.85))]
    for side, sx in (("Left", 1), ("Right", -1)):
        spec += [(f"{side}Shoulder", "Spine2", (sx * 0.05, 0, 1.45), (sx * 0.17, 0, 1.45)),
                 (f"{side}Arm", f"{side}Shoulder", (sx * 0.17, 0, 1.45), (sx * 0.45, 0, 1.45)),
                 (f"{side}ForeArm", f"{side}Arm", (sx * 0.45, 0, 1.45), (sx * 0.71, 0, 1.45)),
                 (f"{side}Hand", f"{side}ForeArm", (sx * 0.71, 0, 1.45), (sx * 0.8, 0, 1.45)),
                 (f"{side}HandIndex1", f"{side}Hand", (sx * 0.8, 0, 1.45), (sx * 0.84, 0, 1.45)),
                 (f"{side}UpLeg", "Hips", (sx * 0.09, 0, 0.95), (sx * 0.09, 0, 0.52)),
                 (f"{side}Leg", f"{side}UpLeg", (sx * 0.09, 0, 0.52), (sx * 0.09, 0, 0.09)),
                 (f"{side}Foot", f"{side}Leg", (sx * 0.09, 0, 0.09), (sx * 0.09, -0.12, 0.02)),
                 (f"{side}ToeBase", f"{side}Foot", (sx * 0.09, -0.12, 0.02), (sx * 0.09, -0.18, 0.02))]
    return armature(bpy, "mixamo", spec, prefix="mixamorig:")
