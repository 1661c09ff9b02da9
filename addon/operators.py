"""PhysKey's operators (the logic behind the panels). Each reports problems with a clear message
and leaves the scene as it was."""
from __future__ import annotations

import os

import bpy
from bpy.props import EnumProperty, StringProperty

from . import colliders, rig, shapes


def _active_character(context):
    obj = context.active_object
    if obj is not None and obj.type == "ARMATURE":
        return obj
    found = [o for o in context.scene.objects if o.type == "ARMATURE" and o.physkey.is_character]
    return found[0] if len(found) == 1 else None


def extract_scene(context, warn=None):
    """The current scene as a SceneDesc: the active (or only) PhysKey character, a floor and every
    object marked as a collider."""
    from ..solver.scene import SCHEMA_VERSION, Environment, Pose, SceneDesc, check_references
    obj = _active_character(context)
    if obj is None:
        raise ValueError("no armature selected: select the character's armature")
    character = rig.read_character(obj)
    root = character.bodies[0]
    bodies = colliders.collider_bodies(context.scene, warn or (lambda msg: None))
    scene = SceneDesc(schema_version=SCHEMA_VERSION, name=context.scene.name or "scene", character=character,
                      environment=Environment(floor=True, bodies=bodies),
                      initial_pose=Pose(root_pos=root.pos, root_quat=root.quat))
    check_references(scene)
    return scene


class PHYSKEY_OT_add_character(bpy.types.Operator):
    """Add PhysKey's default humanoid: an armature with one bone per body and physics per bone"""
    bl_idname = "physkey.add_character"
    bl_label = "Add Physics Character"
    bl_options = {"REGISTER", "UNDO"}

    variant: StringProperty(name="Variant", default="default")

    def execute(self, context):
        from ..solver.characters import humanoid
        from ..solver.errors import InvalidInput
        try:
            character = humanoid(self.variant)
        except InvalidInput as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        if context.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        obj = rig.build_armature(context, character, "humanoid")
        shapes.add_bone_shapes(context, obj, shapes.character_material())
        for o in context.selected_objects:
            o.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj
        self.report({"INFO"}, f"Added '{obj.name}' with {len(obj.data.bones)} bones")
        return {"FINISHED"}


class PHYSKEY_OT_export_mjcf(bpy.types.Operator):
    """Write the scene (character and colliders) as MuJoCo MJCF"""
    bl_idname = "physkey.export_mjcf"
    bl_label = "Export MJCF"

    filepath: StringProperty(subtype="FILE_PATH")

    def execute(self, context):
        from ..solver.errors import InvalidInput
        from ..solver.fileio import write_text_atomic
        from ..solver.mjcf import scene_to_xml
        path = bpy.path.abspath(self.filepath)
        if not path:
            self.report({"ERROR"}, "no file path given")
            return {"CANCELLED"}
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            self.report({"ERROR"}, f"cannot write to '{folder}'")
            return {"CANCELLED"}
        try:
            xml = scene_to_xml(extract_scene(context, lambda msg: self.report({"WARNING"}, msg)))
            write_text_atomic(path, xml)
        except (ValueError, InvalidInput) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Wrote {path}")
        return {"FINISHED"}

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}


class PHYSKEY_OT_autofill_rig(bpy.types.Operator):
    """Give the active armature physics guessed from its bones, envelopes and Limit Rotation constraints"""
    bl_idname = "physkey.autofill_rig"
    bl_label = "Auto-fill Physics"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        from . import autofill
        try:
            notes = autofill.autofill(context.active_object)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, "Auto-filled: " + "; ".join(notes))
        return {"FINISHED"}


def _preset_items(self, context):
    from . import presets
    return [(n, n.replace("_", " ").capitalize(), "") for n in presets.preset_names()]


class PHYSKEY_OT_load_preset(bpy.types.Operator):
    """Build a ready task in this scene: character, furniture and the task's keyframes"""
    bl_idname = "physkey.load_preset"
    bl_label = "Load Scene Preset"
    bl_options = {"REGISTER", "UNDO"}

    preset: EnumProperty(name="Preset", items=_preset_items)

    def execute(self, context):
        from . import presets
        try:
            obj = presets.load(context, self.preset)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Loaded preset '{self.preset}' ({obj.name})")
        return {"FINISHED"}


class PHYSKEY_OT_import_mjcf(bpy.types.Operator):
    """Import an MJCF file as a PhysKey rig (bodies re-expressed in bone frames) and its furniture"""
    bl_idname = "physkey.import_mjcf"
    bl_label = "Import MJCF"
    bl_options = {"REGISTER", "UNDO"}

    filepath: StringProperty(subtype="FILE_PATH")

    def execute(self, context):
        from . import presets
        from ..solver.errors import InvalidInput
        try:
            obj = presets.import_mjcf(context, bpy.path.abspath(self.filepath),
                                      lambda msg: self.report({"WARNING"}, msg))
        except (ValueError, InvalidInput) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Imported '{obj.name}' with {len(obj.data.bones)} bones")
        return {"FINISHED"}

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}


classes = (PHYSKEY_OT_add_character, PHYSKEY_OT_autofill_rig, PHYSKEY_OT_export_mjcf, PHYSKEY_OT_load_preset,
           PHYSKEY_OT_import_mjcf)
