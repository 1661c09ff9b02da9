"""What a solve was asked in Blender that its result files do not say: the method, the frame its
motion starts at, and the kept actions Solve from Here splices in front of it.

It is written beside the result when the solve starts (`solve_context.json` in the job folder), and
every solution listed from that folder — live, or by Import Solutions after a crash or in another
file — carries it. Keep, the preview, the ghosts and the panels read it from the solution, never from
whatever the scene's last solve left, so a solution imported from disk plays where it was solved."""
from __future__ import annotations

import json
import os

from ..solver.core.fileio import write_text_atomic
from .i18n import rpt_

FILE = "solve_context.json"


def make(method: str, start_frame: int, cont=None) -> dict:
    """The context of a solve starting now: `cont` is Solve from Here's continuation (or None); `label`
    names the solve on its solutions' rows (its method and when it started)."""
    import time

    from ..solver.core.registry import METHODS
    name = METHODS[method].label if method in METHODS else method  # as the Method menu says it: "Make physical"
    label = f"{name} {time.strftime('%H:%M:%S')}" + (f" from {int(start_frame)}" if cont is not None else "")
    return {"method": method, "start_frame": int(start_frame), "label": label,
            "splice_action": cont.action.name if cont is not None and cont.action is not None else "",
            "splice_rig_action": cont.rig_action.name if cont is not None and cont.rig_action is not None else "",
            "splice_skipped": int(cont.reached) if cont is not None and method == "contact" else 0}


def write(job_folder: str, context: dict) -> None:
    write_text_atomic(os.path.join(job_folder, FILE), json.dumps(context, indent=1))


def read(result_folder: str, scene) -> tuple[dict, str]:
    """(context, note) for the solutions of `result_folder` (a job's `result/` or a folder the solver
    wrote alone). Without a context file — a solve run from the command line, or from before the file
    existed — the method is the task's and the motion starts at the scene's start frame; `note` says
    so (and names a spliced action that is no longer in the file), '' otherwise."""
    for folder in (result_folder, os.path.dirname(os.path.normpath(result_folder))):
        path = os.path.join(folder, FILE)
        if os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as f:
                    context = json.load(f)
                return context, _missing_actions(context)
            except (OSError, ValueError) as e:
                return _fallback(result_folder, scene), rpt_("{} cannot be read ({}): the solutions start at the "
                                                             "scene's start frame").format(path, e)
    return _fallback(result_folder, scene), rpt_("no {} beside the result: the solutions start at the scene's start "
                                                 "frame {}").format(FILE, scene.frame_start)


def _fallback(result_folder: str, scene) -> dict:
    method = ""
    try:
        with open(os.path.join(result_folder, "task.json"), encoding="utf-8") as f:
            method = str(json.load(f).get("method", ""))
    except (OSError, ValueError, AttributeError):
        pass
    return {"method": method, "start_frame": scene.frame_start, "splice_action": "", "splice_rig_action": "",
            "splice_skipped": 0, "label": ""}


def _missing_actions(context: dict) -> str:
    import bpy
    gone = [context[k] for k in ("splice_action", "splice_rig_action")
            if context.get(k) and bpy.data.actions.get(context[k]) is None]
    return rpt_("the action(s) {} it was solved after are not in this file: Keep will not splice them").format(
        ", ".join(gone)) if gone else ""


def apply(item, context: dict) -> None:
    """Give a listed solution its solve's context."""
    import bpy
    item.method = context.get("method", "")
    item.solve = context.get("label", "")  # none for results solved outside Blender or before labels
    item.start_frame = int(context.get("start_frame", 1))
    item.splice_action = bpy.data.actions.get(context.get("splice_action") or "")
    item.splice_rig_action = bpy.data.actions.get(context.get("splice_rig_action") or "")
    item.splice_skipped = int(context.get("splice_skipped", 0))
