"""Add-on Preferences (Edit ▸ Preferences ▸ Add-ons ▸ PhysKey): how many processes a solve may use,
so the animator keeps a responsive Blender while it runs, or a Ray cluster to solve on instead,
where result folders go, and the method a new setup starts with."""
from __future__ import annotations

import os

import bpy

from ..solver.core.registry import METHODS

# The extension's package (bl_ext.<repo>.physkey): this module lives in its `addon` subpackage.
PACKAGE = __package__.rpartition(".")[0]


def _default_workers() -> int:
    return max(1, (os.cpu_count() or 1) - 1)  # one core left for Blender itself


class PHYSKEY_AP_preferences(bpy.types.AddonPreferences):
    bl_idname = PACKAGE

    workers: bpy.props.IntProperty(
        name="Solver Processes", default=_default_workers(), min=1, soft_max=64,
        description="Processes a solve runs its seeds on (one core is left to Blender by default)")
    cluster_address: bpy.props.StringProperty(
        name="Ray Cluster", default="",
        description="Solve seeds on the Ray cluster at this address (host:port) instead of this computer; "
                    "empty: on this computer. The solver then needs Ray in Blender's Python "
                    "(pip install ray)")
    results_folder: bpy.props.StringProperty(
        name="Results Folder", subtype="DIR_PATH", default="",
        description="Where each solve's folder goes; empty: 'physkey' next to the saved .blend file "
                    "(the temporary folder for an unsaved file)")

    default_method: bpy.props.EnumProperty(
        name="Default Method", items=[(name, e.label, e.description) for name, e in METHODS.items()],
        default="contact",
        description="The method a scene starts with when a character is added or made from a rig "
                    "(presets bring their own)")

    def draw(self, context):
        layout = self.layout
        layout.prop(self, "workers")
        layout.prop(self, "cluster_address")
        layout.prop(self, "results_folder")
        layout.prop(self, "default_method")


def start_with_default_method(scene) -> None:
    """A scene with nothing set up for solving yet (no keyframes, no solutions) takes the preferred
    method; one the animator has worked in keeps theirs."""
    props, prefs = scene.physkey, preferences()
    if prefs is None or len(props.contact_keyframes) or len(props.pose_keys) or len(props.solutions):
        return
    props.method = prefs.default_method


def preferences():
    """PhysKey's preferences (None where the add-on is not registered under its package, e.g. a
    development checkout run by a script)."""
    addon = bpy.context.preferences.addons.get(PACKAGE)
    return addon.preferences if addon is not None else None


classes = (PHYSKEY_AP_preferences,)
