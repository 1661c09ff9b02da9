"""What the add-on knows about this Blender session beyond the file: which armature is the
character, and the solves running in the background — at most one per scene, keyed by the scene's
session id, so renaming a scene mid-solve does not lose track of (and silently cancel) its solve.
Nothing here is saved with the file; `running_jobs` is what is stopped on load and exit."""
from __future__ import annotations

import os

import bpy

from .i18n import rpt_

_jobs: dict = {}  # scene.session_uid → the running SolveJob (or a stand-in with close() and cancel())


def active_character(context):
    """The active armature (for the animator's own rig, the physics humanoid made from it), else the
    scene's only PhysKey character; None when neither."""
    obj = context.active_object
    if obj is not None and obj.type == "ARMATURE":
        if not obj.physkey.is_character:
            linked = next((o for o in context.scene.objects
                           if o.physkey.is_character and o.physkey.animator_rig == obj), None)
            if linked is not None:
                return linked
        return obj
    found = [o for o in context.scene.objects if o.type == "ARMATURE" and o.physkey.is_character]
    return found[0] if len(found) == 1 else None


NO_CHARACTER = "no armature selected: select the character's armature"


def has_character(cls, context) -> bool:
    """poll() of the operators that need the character: False with the reason in the tooltip."""
    if active_character(context) is None:
        cls.poll_message_set(NO_CHARACTER)
        return False
    return True


def job_for(scene):
    """The solve running in `scene`, or None."""
    return _jobs.get(scene.session_uid)


def add_job(scene, job) -> None:
    """Record `job` as the solve running in `scene` (ValueError if one already runs there)."""
    if scene.session_uid in _jobs:
        raise ValueError(rpt_("a solve is already running in this scene: cancel it first"))
    _jobs[scene.session_uid] = job


def pop_job(scene):
    """Forget the solve running in `scene` and return it (None when none runs); the caller stops it."""
    return _jobs.pop(scene.session_uid, None)


def running_jobs() -> list:
    """Every solve running in this session, in any scene."""
    return list(_jobs.values())


def close_all_jobs() -> None:
    """Stop every running solve and forget it (solutions already on disk stay there)."""
    for job in running_jobs():
        job.close()
    _jobs.clear()


def job_folder(scene) -> str:
    """A new folder for one solve of `scene`: in the Results Folder of the preferences, else in
    `//physkey/` next to a saved file, else in the temp folder; named after the scene and the time,
    private to the user (`mkdtemp`)."""
    import tempfile
    import time

    from .preferences import preferences
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = bpy.path.clean_name(scene.name or "scene")
    prefs = preferences()
    if prefs is not None and prefs.results_folder:
        base = bpy.path.abspath(prefs.results_folder)
        os.makedirs(base, exist_ok=True)
        return tempfile.mkdtemp(prefix=f"{name}-{stamp}-", dir=base)
    if bpy.data.filepath:
        base = bpy.path.abspath("//physkey")
        os.makedirs(base, exist_ok=True)
        return tempfile.mkdtemp(prefix=f"{name}-{stamp}-", dir=base)
    return tempfile.mkdtemp(prefix=f"physkey-{name}-{stamp}-")
