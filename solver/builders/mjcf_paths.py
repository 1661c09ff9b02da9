"""File references in a user's MJCF: every `include`, mesh, texture, height field or skin file (and
the compiler's asset folders) must stay inside the imported file's folder, so importing a file
downloaded from somewhere can never make MuJoCo read files elsewhere on the machine."""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from ..core.errors import InvalidInput

_DIR_ATTRS = {"meshdir": "mesh", "texturedir": "texture", "assetdir": None}


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([path, folder]) == folder


def check_file_references(path: str, root_folder: str | None = None, _seen: set | None = None) -> None:
    """InvalidInput naming the element and the path of the first reference that leaves the folder of
    the top-level file (includes are followed)."""
    root_folder = root_folder or os.path.dirname(os.path.abspath(path))
    seen = _seen if _seen is not None else set()
    if os.path.realpath(path) in seen:
        return
    seen.add(os.path.realpath(path))
    try:
        tree = ET.parse(path)
    except (ET.ParseError, OSError) as e:
        raise InvalidInput(os.fspath(path), f"cannot read MJCF: {e}") from None
    dirs = {"mesh": "", "texture": "", "hfield": "", "skin": ""}
    for compiler in tree.iter("compiler"):
        for attr, kind in _DIR_ATTRS.items():
            value = compiler.get(attr)
            if value is None:
                continue
            _refuse_outside(path, f"compiler {attr}", value, root_folder, root_folder)
            for k in ([kind] if kind else dirs):
                dirs[k] = value
    for element in tree.iter():
        for attr, value in element.attrib.items():
            if not attr.startswith("file") or element.tag == "compiler":
                continue
            if element.tag == "include":
                target = _refuse_outside(path, "include file", value, os.path.dirname(os.path.abspath(path)),
                                         root_folder)
                if os.path.isfile(target):
                    check_file_references(target, root_folder, seen)
                continue
            base = os.path.join(root_folder, dirs.get(element.tag, ""))
            _refuse_outside(path, f"{element.tag} {attr}", value, base, root_folder)


def _refuse_outside(path: str, what: str, value: str, base: str, root_folder: str) -> str:
    target = value if os.path.isabs(value) else os.path.join(base, value)
    if not _inside(target, root_folder):
        raise InvalidInput(os.fspath(path), f"{what} '{value}' lies outside the MJCF's folder {root_folder}; "
                                            "copy the file next to it")
    return target
