"""Blender (the `bpy` module) with the *built and installed* PhysKey extension, for the add-on tests.

`installed_extension()` builds the zip with Blender's tooling (tools/build_extension.py), points
Blender's user folders at a private temporary folder (BLENDER_USER_RESOURCES, which must be set
before bpy is imported), installs the zip with `bpy.ops.extensions.package_install_files` and
enables it. Tests then call the add-on's operators from the installed copy, never the source tree.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULE = "bl_ext.user_default.physkey"
_STATE: dict = {}


def build_zip() -> Path:
    if "zip" not in _STATE:
        sys.path.insert(0, str(ROOT / "tools"))
        try:
            import build_extension
        finally:
            sys.path.pop(0)
        # in this process's temporary folder: test workers running at once never share a zip
        _STATE["zip"] = Path(build_extension.main(tempfile.mkdtemp(prefix="physkey-zip-")))
    return _STATE["zip"]


def installed_extension():
    """(bpy, the installed add-on module); built and installed once per test session."""
    if "module" in _STATE:
        return _STATE["bpy"], _STATE["module"]
    zip_path = build_zip()
    if "bpy" in sys.modules and "BLENDER_USER_RESOURCES" not in os.environ:
        raise RuntimeError("bpy was imported before BLENDER_USER_RESOURCES was set")
    folder = tempfile.mkdtemp(prefix="physkey-blender-user-")
    os.environ["BLENDER_USER_RESOURCES"] = folder
    import bpy
    result = bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default",
                                                      enable_on_install=True)
    if result != {"FINISHED"}:
        raise RuntimeError(f"installing {zip_path} failed: {result}")
    import importlib
    module = importlib.import_module(MODULE)
    _STATE.update(bpy=bpy, module=module, user_folder=folder)
    return bpy, module


def addon(module, name: str):
    """The installed add-on's submodule `name` (e.g. "rig"), imported from the installed copy."""
    import importlib
    return importlib.import_module(f"{module.__name__}.addon.{name}")


def fcurves(module, action) -> list:
    """Every F-curve of `action`, on Blenders with slotted actions (4.4+) and without (4.2, 4.3)."""
    return addon(module, "actions").fcurves(action)


def python_calls(fn) -> tuple[int, object]:
    """(how many Python and builtin function calls running `fn()` made, its result): a measure of
    per-item Python work that, unlike a wall-clock time, does not depend on the machine or its load."""
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event in ("call", "c_call"):
            count += 1
    sys.setprofile(profile)
    try:
        result = fn()
    finally:
        sys.setprofile(None)
    return count, result
