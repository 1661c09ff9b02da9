"""Bringing solutions back from a result folder on disk.

The solver writes every finished solution (and every curriculum stage) to disk the moment it
exists, so whatever happens to Blender — a crash, a quit, a solve cancelled — the folder still holds
them; this turns the folder back into the same events a live solve sends."""
from __future__ import annotations

import glob
import json
import os
import re

from ..solver.formats.events import Event
from .i18n import rpt_


def result_folder(directory: str) -> str:
    """The folder holding result.json: `directory` itself or its `result/` (a PhysKey job folder)."""
    for folder in (directory, os.path.join(directory, "result")):
        if os.path.isfile(os.path.join(folder, "result.json")):
            return folder
    if not os.path.isdir(directory):
        raise ValueError(rpt_("'{}' is not a folder").format(directory))
    raise ValueError(rpt_("'{}' holds no result.json: pick the solve's folder (it has model.xml and "
                          "result.json)").format(directory))


def events_from_folder(directory: str) -> list[dict]:
    """`solution` events for the finished seeds in result.json, and `stage` events for the curriculum
    stages of seeds that never finished (their best motion so far)."""
    folder = result_folder(directory)
    try:
        with open(os.path.join(folder, "result.json"), encoding="utf-8") as f:
            doc = json.load(f)
        entries = list(doc["solutions"])
        finished = {int(e["seed"]) for e in entries}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(rpt_("{} cannot be read ({})").format(os.path.join(folder, 'result.json'), e)) from None
    if not os.path.isfile(os.path.join(folder, "model.xml")):
        raise ValueError(rpt_("{} has no model.xml, so its solutions cannot be shown").format(folder))
    for path in sorted(glob.glob(os.path.join(folder, "seed_*", "entry.json"))):
        try:  # a seed written but stopped before result.json listed it
            with open(path, encoding="utf-8") as f:
                entry = json.load(f)
            if int(entry["seed"]) not in finished:
                entries.append(entry)
                finished.add(int(entry["seed"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    events = [{"event": Event.SOLUTION, "solution": e, "result_path": os.path.join(folder, e["npz"])}
              for e in sorted(entries, key=lambda e: int(e["seed"])) if os.path.isfile(os.path.join(folder, e["npz"]))]
    for path in sorted(glob.glob(os.path.join(folder, "seed_*", "stage_*.npz"))):
        match = re.search(r"seed_(\d+)[/\\]stage_(\d+)\.npz$", path)
        if match is None or int(match.group(1)) in finished:
            continue
        seed, stage = int(match.group(1)), int(match.group(2))
        events.append({"event": Event.STAGE, "seed": seed, "stage": stage, "result_path": path,
                       "solution": {"seed": seed, "success": False, "keyframes_reached": [],
                                    "duration_s": _duration(path), "cost": 0.0}})
    return events


def _duration(npz_path: str) -> float:
    import numpy as np
    try:
        with np.load(npz_path, allow_pickle=False) as z:
            return float(z["frame_times"][-1]) if len(z["frame_times"]) else 0.0
    except Exception:  # an unreadable stage is still listed; previewing it says what is wrong
        return 0.0
