"""PhysKey's operators (the logic behind the panels). Each reports problems with a clear message
and leaves the scene as it was."""
from __future__ import annotations

import math
import os
import time

import bpy
from bpy.props import EnumProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from .i18n import rpt_
from .preferences import start_with_default_method
from .rig import build_armature
from .session import active_character, add_job, job_folder, job_for, pop_job
from .shapes import add_bone_shapes, character_material

NO_CHARACTER = "no armature selected: select the character's armature"


def _has_character(cls, context) -> bool:
    """poll() of the operators that need the character: False with the reason in the tooltip."""
    if active_character(context) is None:
        cls.poll_message_set(NO_CHARACTER)
        return False
    return True


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
        return _has_character(cls, context)

    def execute(self, context):
        from ..solver.errors import InvalidInput
        from ..solver.fileio import write_text_atomic
        from ..solver.mjcf import scene_to_xml
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
            obj = load(context, self.preset)
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
        from ..solver.errors import InvalidInput
        from .presets import import_mjcf
        try:
            obj = import_mjcf(context, bpy.path.abspath(self.filepath), lambda msg: self.report({"WARNING"}, msg))
        except (ValueError, InvalidInput) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, rpt_("Imported '{}' with {} bones").format(obj.name, len(obj.data.bones)))
        return {"FINISHED"}


def handle_events(scene, job, events) -> str | None:
    """Apply solver events to the scene; returns an error message when the solve failed."""
    from .solutions import add_from_event
    props = scene.physkey
    error = None
    for e in events:
        kind = e.get("event")
        if kind in ("progress", "solution"):
            job.progress.update(e)
            props.progress = job.progress.overall
            props.status = job.progress.text(time.perf_counter() - job.started)
        if kind in ("solution", "stage"):
            add_from_event(scene, e)
        elif kind == "seed_failed":
            props.status = rpt_("seed {} failed: {}").format(e['seed'], e['message'])
        elif kind == "seed_retry":
            props.status = e["message"]
        elif kind == "error":
            if e.get("fatal", True):
                error = e["message"]
            props.status = e["message"]
        elif kind == "done":
            unstable = sum(1 for s in props.solutions if s.unstable and s.stage < 0)
            differ = e.get("diversity")
            props.status = rpt_("done: {} solution(s)").format(e["solutions"]) + \
                (rpt_(", {} unstable").format(unstable) if unstable else "") + \
                (rpt_(", differing by {:.0f}° at the keyframes").format(math.degrees(differ["mean_pairwise_rad"]))
                 if differ else "") + rpt_(" in {:.1f} s").format(e["wall_s"])
        elif kind == "exit" and e["returncode"] not in (0, None) and error is None:
            error = rpt_("the solver stopped (exit {}): {}").format(
                e["returncode"], job.stderr_tail(3) or rpt_("see {}").format(job.log_path))
    return error


class _Solve:
    """What Solve and Solve from Here share: a background solve, its modal handler and cleanup."""
    from_here = False

    def _start(self, context):
        from .taskio import extract_scene, task_from_scene
        scene = context.scene
        props = scene.physkey
        if job_for(scene) is not None:
            raise ValueError(rpt_("a solve is already running in this scene: cancel it first"))
        cont = None
        if self.from_here:
            from .continuation import continuation
            cont = continuation(scene, active_character(context))
        desc = extract_scene(context, lambda msg: self.report({"WARNING"}, msg))
        if cont is not None:
            desc.initial_velocity = cont.velocity
        keyframes = None
        if cont is not None and props.method == "assist":
            from .continuation import assist_keyframes
            keyframes = assist_keyframes(context, desc, cont)
        task = task_from_scene(context, desc, keyframes, cont.frame if cont is not None else None)
        if cont is not None and props.method == "contact":
            task["keyframes"] = task["keyframes"][cont.reached:]  # those reached by this frame are done
            if not task["keyframes"]:
                raise ValueError(rpt_("the kept solution reached every contact keyframe by frame {}: nothing is "
                                      "left to solve from here (add a keyframe after them)").format(cont.frame))
        if props.method != "simulate" and not task["keyframes"]:
            raise ValueError(rpt_("no keyframes: add contact keyframes or key poses first"))
        keys = [k.frame for k in props.pose_keys]
        if cont is not None:
            props.start_frame = cont.frame
        else:  # pose-key times count from the first key: the motion starts there; otherwise at the start frame
            props.start_frame = min(keys) if props.method in ("assist", "track") and keys else scene.frame_start
        props.splice_action = cont.action if cont is not None else None
        props.splice_rig_action = cont.rig_action if cont is not None else None
        props.splice_skipped = cont.reached if cont is not None and props.method == "contact" else 0
        scene.physkey.solutions.clear()
        from .ghosts import forget
        forget()  # this solve's files may reuse the last one's paths
        scene.physkey.progress, scene.physkey.status, scene.physkey.running = 0.0, "starting", True
        from .job import SolveJob
        from .preferences import preferences
        prefs = preferences()
        seeds = scene.physkey.num_seeds
        job = SolveJob(task, job_folder(scene), seeds,
                       workers=min(prefs.workers, seeds) if prefs is not None and seeds > 1 else None,
                       cluster=prefs.cluster_address.strip() if prefs is not None else "")
        add_job(scene, job)
        return job

    def _finish(self, context, job, error):
        return self._finish_in(context.scene, job, error)

    def _finish_in(self, scene, job, error):
        job.close()
        pop_job(scene)
        scene.physkey.running = False
        if error:
            self.report({"ERROR"}, error)
            return {"CANCELLED"}
        self.report({"INFO"}, scene.physkey.status or "done")
        return {"FINISHED"}

    def execute(self, context):
        try:
            job = self._start(context)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        error, done = None, False
        while not done:
            events = job.poll()
            error = handle_events(context.scene, job, events) or error
            done = any(e.get("event") == "exit" for e in events)
            if not done:
                time.sleep(0.05)
        return self._finish(context, job, error)

    def invoke(self, context, event):
        if self.wait:
            return self.execute(context)
        try:
            self._job = self._start(context)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self._error, self._scene = None, context.scene  # the solve's scene, whichever the window shows later
        self._timer = context.window_manager.event_timer_add(0.1, window=context.window)
        context.window_manager.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        job, scene = self._job, self._scene
        if event.type == "ESC" or job_for(scene) is None:  # Esc, or Cancel pressed in the panel
            job.cancel()
            scene.physkey.status = rpt_("cancelled")
        if event.type in ("TIMER", "ESC"):
            events = job.poll()
            self._error = handle_events(scene, job, events) or self._error
            if context.workspace:
                context.workspace.status_text_set(f"PhysKey: {scene.physkey.status}")
            if any(e.get("event") == "exit" for e in events):
                self._stop_timer(context)
                return self._finish_in(scene, job, self._error)
        # Esc is the solve's: it must not also stop playback or leave a mode
        return {"RUNNING_MODAL"} if event.type == "ESC" else {"PASS_THROUGH"}

    def cancel(self, context):
        """Blender ends the operator (the window closes, a file loads): stop the solve, clean up."""
        self._stop_timer(context)
        self._job.cancel()
        self._finish_in(self._scene, self._job, None)

    def _stop_timer(self, context):
        if getattr(self, "_timer", None) is not None:
            context.window_manager.event_timer_remove(self._timer)
            self._timer = None
        if context.workspace:
            context.workspace.status_text_set(None)


class PHYSKEY_OT_solve(_Solve, bpy.types.Operator):
    """Solve the scene's keyframes in the background; Esc or Cancel stops it"""
    bl_idname = "physkey.solve"
    bl_label = "Solve"

    wait: bpy.props.BoolProperty(default=False, description="Block until done (scripts and tests)")

    @classmethod
    def poll(cls, context):
        return _can_solve(cls, context)


def _can_solve(cls, context) -> bool:
    """No solve running in the scene, and a character to solve for (the reason in the tooltip if not)."""
    if job_for(context.scene) is not None:
        cls.poll_message_set("a solve is already running in this scene: cancel it first")
        return False
    return _has_character(cls, context)


class PHYSKEY_OT_solve_from_here(_Solve, bpy.types.Operator):
    """Solve again from the current frame of the kept solution, with its pose and velocity there; Keep
    splices the new motion in after this frame"""
    bl_idname = "physkey.solve_from_here"
    bl_label = "Solve from Here"
    from_here = True

    wait: bpy.props.BoolProperty(default=False, description="Block until done (scripts and tests)")

    @classmethod
    def poll(cls, context):
        from .continuation import why_not
        if not _can_solve(cls, context):
            return False
        reason = why_not(context.scene, active_character(context))
        if reason:
            cls.poll_message_set(reason)
        return not reason


class PHYSKEY_OT_cancel_solve(bpy.types.Operator):
    """Stop the running solve (solutions already received are kept)"""
    bl_idname = "physkey.cancel_solve"
    bl_label = "Cancel"

    @classmethod
    def poll(cls, context):
        if job_for(context.scene) is None:
            cls.poll_message_set("no solve is running")
            return False
        return True

    def execute(self, context):
        job = pop_job(context.scene)
        context.scene.physkey.running = False
        if job is None:
            self.report({"WARNING"}, "no solve is running")
            return {"CANCELLED"}
        job.cancel()
        context.scene.physkey.status = rpt_("cancelled")
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
        from .recover import events_from_folder
        from .solutions import add_from_event
        scene = context.scene
        try:
            events = events_from_folder(bpy.path.abspath(self.directory))
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        listed = {(s.result_path, s.stage) for s in scene.physkey.solutions}
        new = [e for e in events if (e["result_path"], e.get("stage", -1)) not in listed]
        for e in new:
            add_from_event(scene, e)
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
        return _has_character(cls, context)

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


classes = (PHYSKEY_OT_sync_pose_keys, PHYSKEY_OT_add_character, PHYSKEY_OT_autofill_rig, PHYSKEY_OT_export_mjcf,
           PHYSKEY_OT_load_preset,
           PHYSKEY_OT_import_mjcf, PHYSKEY_OT_solve, PHYSKEY_OT_solve_from_here, PHYSKEY_OT_cancel_solve,
           PHYSKEY_OT_keep_solution, PHYSKEY_OT_end_preview, PHYSKEY_OT_import_result)
