"""Solving: Solve, Solve from Here and Cancel, and how the solver's events land in the scene. A
solve runs in a background process (`job.SolveJob`); the operator polls its events on a timer, so
Blender stays responsive, and Esc or Cancel stops it with the solutions received so far kept."""
from __future__ import annotations

import math
import time

import bpy

from ..solver.formats.events import Event
from .i18n import rpt_
from .job import EXIT
from .session import active_character, add_job, has_character, job_folder, job_for, pop_job


def handle_events(scene, job, events, warn=None) -> str | None:
    """Apply solver events to the scene, what the solver says it leaves out to `warn` (Blender's
    reports); returns an error message when the solve failed."""
    from .solutions import add_from_event
    props = scene.physkey
    error = None
    for e in events:
        kind = e.get("event")
        if kind == Event.START and warn is not None:
            for note in e.get("notes", []):
                warn(note)
        if kind in (Event.PROGRESS, Event.SOLUTION):
            job.progress.update(e)
            if warn is not None:  # a search started over, a keyframe tried again: in Blender's reports too
                for line in job.progress.news:
                    warn(line)
            job.progress.news.clear()
            props.progress = job.progress.overall
            props.status = job.progress.text(time.perf_counter() - job.started)
        if kind in (Event.SOLUTION, Event.STAGE):
            add_from_event(scene, e, job.context)
            if kind == Event.SOLUTION and getattr(job, "live", None) is not None:
                job.live.done(int(e["solution"]["seed"]))  # the solution's row takes over
        elif kind == Event.PREVIEW:
            live_preview(job).update(e)
        elif kind == Event.SEED_FAILED:
            props.status = rpt_("seed {} failed: {}").format(e['seed'], e['message'])
            if getattr(job, "live", None) is not None:
                job.live.done(int(e["seed"]))
        elif kind == Event.KEYFRAMES_APPENDED:
            job.appended_answered(True)
        elif kind == Event.SEED_RETRY:
            props.status = e["message"]
        elif kind == Event.ERROR:
            if e.get("fatal", True):
                error = e["message"]
            elif str(e.get("path", "")).startswith("append_keyframes"):  # the keyframes sent are not the solve's
                job.appended_answered(False)
            props.status = e["message"]
        elif kind == Event.DONE:
            unstable = sum(1 for s in props.solutions if s.unstable and s.stage < 0)
            differ = e.get("diversity")
            props.status = rpt_("done: {} solution(s)").format(e["solutions"]) + \
                (rpt_(", {} unstable").format(unstable) if unstable else "") + \
                (rpt_(", differing by {:.0f}° at the keyframes").format(math.degrees(differ["mean_pairwise_rad"]))
                 if differ else "") + rpt_(" in {:.1f} s").format(e["wall_s"])
        elif kind == EXIT and e["returncode"] not in (0, None) and error is None \
                and not getattr(job, "cancelled", False):  # stopped as asked: not a failure
            error = rpt_("the solver stopped (exit {}): {}").format(
                e["returncode"], job.stderr_tail(3) or rpt_("see {}").format(job.log_path))
    if getattr(job, "live", None) is not None and any(  # the live ghosts moved, or went
            e.get("event") in (Event.PREVIEW, Event.SOLUTION, Event.SEED_FAILED, EXIT) for e in events):
        redraw_viewports()
    return error


def live_preview(job):
    """The job's live preview (`live_preview.LivePreview`), made on first use."""
    from .live_preview import LivePreview
    if getattr(job, "live", None) is None:
        job.live = LivePreview(job.out, job.context.get("start_frame", 1))
    return job.live


def redraw_viewports() -> None:
    """Ask every 3D viewport to draw again (the live ghosts moved)."""
    for window in getattr(bpy.context.window_manager, "windows", []):
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()


class _Solve:
    """What Solve and Solve from Here share: a background solve, its modal handler and cleanup."""
    from_here = False

    def _warn(self, message: str) -> None:
        """A report of the solve, in the animator's bone names where the character was made from their rig, its
        times as frames once the frame its motion starts at is known."""
        from .rig_names import in_rig_names
        from .timeline import in_frames
        text = in_rig_names(message, getattr(self, "_names", {}))
        start = getattr(self, "_start_frame", None)
        self.report({"WARNING"}, text if start is None else in_frames(text, start, bpy.context.scene))

    def _start(self, context):
        from .taskio import extract_scene, task_from_scene
        scene = context.scene
        props = scene.physkey
        if job_for(scene) is not None:
            raise ValueError(rpt_("a solve is already running in this scene: cancel it first"))
        from .solutions import end_preview, showing_preview
        if showing_preview(context):  # the solve reads the animator's own animation, not the solution shown
            end_preview(context)
            self.report({"INFO"}, rpt_("the preview ended: solving from your own animation"))
        from .rig_names import rig_names
        self._names = rig_names(context)
        cont = None
        if self.from_here:
            from .continuation import continuation
            cont = continuation(scene, active_character(context))
        warn = self._warn
        first = None
        if props.method == "track" and cont is None:  # the reference and what is said of its start: its first frame
            from .track_range import track_range
            first = track_range(scene, active_character(context))[0]
        desc = extract_scene(context, warn, first)
        if cont is not None:
            desc.initial_velocity = cont.velocity
        keyframes = None
        if cont is not None and props.method == "assist":
            from .continuation import assist_keyframes
            keyframes = assist_keyframes(context, desc, cont)
        task = task_from_scene(context, desc, keyframes, cont.frame if cont is not None else None, warn)
        if cont is not None and props.method == "contact":
            task["keyframes"] = task["keyframes"][cont.reached:]  # those reached by this frame are done
            if not task["keyframes"]:
                raise ValueError(rpt_("the kept solution reached every contact keyframe by frame {}: nothing is "
                                      "left to solve from here (add a keyframe after them)").format(cont.frame))
        if props.method not in ("simulate", "track") and not task["keyframes"]:
            raise ValueError(rpt_("no keyframes: add contact keyframes or key poses first"))
        keys = [k.frame for k in props.pose_keys]
        if cont is not None:
            start = cont.frame
        elif props.method == "track":  # the reference starts where the frame range does
            start = first
        else:  # pose-key times count from the first key: the motion starts there; otherwise at the start frame
            start = min(keys) if props.method == "assist" and keys else scene.frame_start
        from .solve_context import make
        solve_context = make(props.method, start, cont)
        self._start_frame = int(start)
        scene.physkey.solutions.clear()
        from .ghosts import forget
        forget()  # this solve's files may reuse the last one's paths
        scene.physkey.progress, scene.physkey.status, scene.physkey.running = 0.0, "starting", True
        from .job import SolveJob
        from .preferences import preferences
        prefs = preferences()
        seeds = scene.physkey.num_seeds
        job = SolveJob(task, job_folder(scene), seeds, solve_context,
                       workers=min(prefs.workers, seeds) if prefs is not None and seeds > 1 else None,
                       cluster=prefs.cluster_address.strip() if prefs is not None else "")
        if props.method == "contact":  # the list's first keyframes were reached by Solve from Here's frame
            job.steer(props.contact_keyframes, cont.reached if cont is not None else 0)
        add_job(scene, job)
        return job

    def _finish(self, context, job, error):
        return self._finish_in(context.scene, job, error)

    def _finish_in(self, scene, job, error):
        job.close()
        pop_job(scene)
        if getattr(job, "cancelled", False):  # what each unfinished seed had found is kept, marked so
            from .live_preview import keep_unfinished
            kept = keep_unfinished(scene, job)
            if kept:
                scene.physkey.status = rpt_("cancelled: {} unfinished solution(s) kept").format(kept)
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
            error = handle_events(context.scene, job, events, self._warn) or error
            done = any(e.get("event") == EXIT for e in events)
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
            job.cancelled = True
            scene.physkey.status = rpt_("cancelled")
        if event.type in ("TIMER", "ESC"):
            events = job.poll()
            self._error = handle_events(scene, job, events, self._warn) or self._error
            if context.workspace:
                context.workspace.status_text_set(f"PhysKey: {scene.physkey.status}")
            if any(e.get("event") == EXIT for e in events):
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
    return has_character(cls, context)


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
        job.cancelled = True  # the solve's operator keeps what each unfinished seed had found
        context.scene.physkey.status = rpt_("cancelled")
        return {"FINISHED"}


classes = (PHYSKEY_OT_solve, PHYSKEY_OT_solve_from_here, PHYSKEY_OT_cancel_solve)
