"""PhysKey's operators (the logic behind the panels): the character, presets, MJCF import and export,
and what to do with a solution (keep it, end its preview, import a result). Solving is `solve_ops`,
contact keyframes `contact_ops`. Each reports problems with a clear message and leaves the scene as
it was."""
from __future__ import annotations

import os

import bpy
from bpy.props import EnumProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from .i18n import rpt_
from .preferences import start_with_default_method
from .rig import build_armature
from .session import NO_CHARACTER, active_character, has_character
from .shapes import add_bone_shapes, character_material


class PHYSKEY_OT_add_character(bpy.types.Operator):
    """Add PhysKey's default humanoid: an armature with one bone per body and physics per bone"""
    bl_idname = "physkey.add_character"
    bl_label = "Add Physics Character"
    bl_options = {"REGISTER", "UNDO"}

    variant: StringProperty(name="Variant", default="default")

    def execute(self, context):
        from ..solver.builders.characters import humanoid
        from ..solver.core.errors import InvalidInput
        try:
            character = humanoid(self.variant)
        except InvalidInput as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        if context.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        obj = build_armature(context, character, "humanoid")
        add_bone_shapes(context, obj, character_material())
        start_with_default_method(context.scene)
        for o in context.selected_objects:
            o.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj
        self.report({"INFO"}, rpt_("Added '{}' with {} bones").format(obj.name, len(obj.data.bones)))
        return {"FINISHED"}


class PHYSKEY_OT_export_mjcf(bpy.types.Operator, ExportHelper):
    """Write the scene (character and colliders) as MuJoCo MJCF"""
    bl_idname = "physkey.export_mjcf"
    bl_label = "Export MJCF"

    filename_ext = ".xml"
    filter_glob: StringProperty(default="*.xml;*.mjcf", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        return has_character(cls, context)

    def execute(self, context):
        from ..solver.builders.mjcf import scene_to_xml
        from ..solver.core.errors import InvalidInput
        from ..solver.core.fileio import write_text_atomic
        from .taskio import extract_scene
        path = bpy.path.abspath(self.filepath)
        if not path:
            self.report({"ERROR"}, "no file path given")
            return {"CANCELLED"}
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            self.report({"ERROR"}, rpt_("cannot write to '{}'").format(folder))
            return {"CANCELLED"}
        try:
            xml = scene_to_xml(extract_scene(context, lambda msg: self.report({"WARNING"}, msg)))
            write_text_atomic(path, xml)
        except (ValueError, InvalidInput) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, rpt_("Wrote {}").format(path))
        return {"FINISHED"}


class PHYSKEY_OT_autofill_rig(bpy.types.Operator):
    """Give the active armature physics guessed from its bones, envelopes and Limit Rotation constraints"""
    bl_idname = "physkey.autofill_rig"
    bl_label = "Auto-fill Physics"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE":
            cls.poll_message_set("no armature selected: select the armature to auto-fill")
            return False
        return True

    def execute(self, context):
        from .autofill import autofill
        try:
            notes = autofill(context.active_object)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        start_with_default_method(context.scene)
        self.report({"INFO"}, "Auto-filled: " + "; ".join(notes))
        return {"FINISHED"}


def _preset_items(self, context):
    from .presets import preset_names
    return [(n, n.replace("_", " ").capitalize(), "") for n in preset_names()]


class PHYSKEY_OT_load_preset(bpy.types.Operator):
    """Build a ready task in this scene: character, furniture and the task's keyframes"""
    bl_idname = "physkey.load_preset"
    bl_label = "Load Scene Preset"
    bl_options = {"REGISTER", "UNDO"}

    preset: EnumProperty(name="Preset", items=_preset_items)

    def execute(self, context):
        from .presets import load
        try:
            obj = load(context, self.preset, lambda msg: self.report({"WARNING"}, msg))
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, rpt_("Loaded preset '{}' ({})").format(self.preset, obj.name))
        return {"FINISHED"}


class PHYSKEY_OT_import_mjcf(bpy.types.Operator, ImportHelper):
    """Import an MJCF file as a PhysKey rig (bodies re-expressed in bone frames) and its furniture"""
    bl_idname = "physkey.import_mjcf"
    bl_label = "Import MJCF"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".xml"
    filter_glob: StringProperty(default="*.xml;*.mjcf", options={"HIDDEN"})

    def execute(self, context):
        from ..solver.core.errors import InvalidInput
        from .presets import import_mjcf
        try:
            obj = import_mjcf(context, bpy.path.abspath(self.filepath), lambda msg: self.report({"WARNING"}, msg))
        except (ValueError, InvalidInput) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, rpt_("Imported '{}' with {} bones").format(obj.name, len(obj.data.bones)))
        return {"FINISHED"}


class PHYSKEY_OT_keep_solution(bpy.types.Operator):
    """Bake the selected solution into a new Action (the animator's actions are never overwritten)"""
    bl_idname = "physkey.keep_solution"
    bl_label = "Keep"
    bl_options = {"REGISTER", "UNDO"}

    index: bpy.props.IntProperty(default=-1, description="Solution to keep (-1: the selected one)")

    @classmethod
    def poll(cls, context):
        if not len(context.scene.physkey.solutions):
            cls.poll_message_set("no solutions: solve first")
            return False
        return True

    def execute(self, context):
        from .solutions import keep
        props = context.scene.physkey
        index = self.index if self.index >= 0 else props.active_solution
        if index < 0 or index >= len(props.solutions):
            self.report({"ERROR"}, "no solution selected")
            return {"CANCELLED"}
        try:
            action = keep(context, index)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, rpt_("Kept as action '{}'").format(action.name))
        return {"FINISHED"}


class PHYSKEY_OT_end_preview(bpy.types.Operator):
    """Stop previewing: the character (and your own rig) get back the action they had before"""
    bl_idname = "physkey.end_preview"
    bl_label = "End Preview"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        from .solutions import PREVIEW_ACTION
        if PREVIEW_ACTION not in bpy.data.actions:
            cls.poll_message_set("No solution is being previewed")
            return False
        return True

    def execute(self, context):
        from .solutions import end_preview
        try:
            end_preview(context)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        context.scene.physkey["active_solution"] = -1  # no update: it would preview again
        return {"FINISHED"}


class PHYSKEY_OT_import_result(bpy.types.Operator):
    """List the solutions saved in a solve's folder (after a crash, or from another file)"""
    bl_idname = "physkey.import_result"
    bl_label = "Import Solutions"
    bl_options = {"REGISTER", "UNDO"}

    directory: bpy.props.StringProperty(subtype="DIR_PATH", description="A solve's folder (with result.json)")

    def execute(self, context):
        from .recover import events_from_folder, result_folder
        from .solutions import add_from_event
        from .solve_context import read
        scene = context.scene
        try:
            directory = bpy.path.abspath(self.directory)
            events = events_from_folder(directory)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        solve_context, note = read(result_folder(directory), scene)
        if note:
            self.report({"WARNING"}, note)
        listed = {(s.result_path, s.stage) for s in scene.physkey.solutions}
        new = [e for e in events if (e["result_path"], e.get("stage", -1)) not in listed]
        for e in new:
            add_from_event(scene, e, solve_context)
        self.report({"INFO"}, rpt_("{} solution(s) imported from {}").format(len(new), self.directory)
                    + (rpt_(" ({} already listed)").format(len(events) - len(new)) if len(new) < len(events) else ""))
        return {"FINISHED"}

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}


class PHYSKEY_OT_sync_pose_keys(bpy.types.Operator):
    """List the character's keyed frames as pose keyframes (keeping weights and timing already set)"""
    bl_idname = "physkey.sync_pose_keys"
    bl_label = "Read Keyed Poses"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return has_character(cls, context)

    def execute(self, context):
        from .taskio import sync_pose_keys
        obj = active_character(context)
        if obj is None:
            self.report({"ERROR"}, NO_CHARACTER)
            return {"CANCELLED"}
        try:
            sync_pose_keys(context.scene, obj)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, rpt_("{} keyed pose(s)").format(len(context.scene.physkey.pose_keys)))
        return {"FINISHED"}


def menu_import(self, context):
    self.layout.operator(PHYSKEY_OT_import_mjcf.bl_idname, text="MuJoCo MJCF (.xml) as PhysKey rig")


def menu_export(self, context):
    self.layout.operator(PHYSKEY_OT_export_mjcf.bl_idname, text="MuJoCo MJCF (.xml) from PhysKey scene")


class PHYSKEY_OT_mark_pose_key(bpy.types.Operator):
    """Make Physical must hit the motion's pose at the current frame (click again to unmark): on a motion keyed
    on every frame, such as a capture, the marked frames are its only pose keyframes"""
    bl_idname = "physkey.mark_pose_key"
    bl_label = "Must Hit This Frame"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return has_character(cls, context)

    def execute(self, context):
        scene = context.scene
        keys = scene.physkey.pose_keys
        frame = scene.frame_current
        at = next((i for i, k in enumerate(keys) if k.frame == frame), None)
        if at is not None and keys[at].marked:
            keys.remove(at)
            self.report({"INFO"}, rpt_("frame {} unmarked").format(frame))
            return {"FINISHED"}
        key = keys[at] if at is not None else keys.add()
        key.frame, key.marked = frame, True
        self.report({"INFO"}, rpt_("frame {} marked: Make Physical must hit its pose").format(frame))
        return {"FINISHED"}


classes = (PHYSKEY_OT_sync_pose_keys, PHYSKEY_OT_mark_pose_key, PHYSKEY_OT_add_character, PHYSKEY_OT_autofill_rig,
           PHYSKEY_OT_export_mjcf,
           PHYSKEY_OT_load_preset, PHYSKEY_OT_import_mjcf, PHYSKEY_OT_keep_solution, PHYSKEY_OT_end_preview,
           PHYSKEY_OT_import_result)
