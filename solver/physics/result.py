"""The output folder of a run: `model.xml`, `task.json`, `result.json` and one `seed_<k>/result.npz`
per solution.

Every file is written atomically and `result.json` is rewritten as each solution arrives, so a
crash (of the solver or of Blender) loses nothing already solved.
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..core import schema
from ..core.fileio import write_npz_atomic, write_text_atomic
from ..core.resample import frame_times, good_prefix, resample_qpos
from ..formats.solution import Solution

RESULT_SCHEMA_VERSION = 1


def solution_dir(out_dir: str, seed: int) -> str:
    return os.path.join(out_dir, f"seed_{seed}")


def write_solution(out_dir: str, model, seed: int, sol: Solution, fps: float, wall_s: float,
                   name: str = "result.npz") -> dict:
    """Write one seed's result npz (`name`: result.npz, or stage_<s>.npz for a partial solution) and
    its variants' (`<variant>.npz` beside it); return its result.json entry, the variants' entries in
    it under their names."""
    folder = solution_dir(out_dir, seed)
    os.makedirs(folder, exist_ok=True)
    variants = {key: write_solution(out_dir, model, seed, variant, fps, wall_s, name=f"{key}.npz")
                for key, variant in sol.variants.items()}
    duration = round(float(sol.times[-1]), 9) if len(sol.times) else 0.0
    ft = frame_times(duration, fps)
    usable = good_prefix(sol.qpos)
    frames = resample_qpos(model, sol.times[usable], sol.qpos[usable], ft[ft <= sol.times[usable][-1] + 1e-9])
    arrays = {"times": sol.times, "qpos": sol.qpos, "frame_times": ft[: len(frames)], "frame_qpos": frames}
    reached = [np.nan if t is None else float(t) for t in sol.keyframes_reached]
    arrays["keyframes_reached"] = np.asarray(reached, dtype=float)
    for key, value in sol.arrays.items():
        if key in arrays:
            raise ValueError(f"method array '{key}' clashes with a standard result array")
        arrays[key] = value
    write_npz_atomic(os.path.join(folder, name), arrays)
    unstable = sol.unstable_time is not None
    entry = {"seed": seed, "success": bool(sol.success) and not unstable,
             "status": "unstable" if unstable else "ok",
             "unstable_time": round(float(sol.unstable_time), 9) if unstable else None,
             "keyframes_reached": list(sol.keyframes_reached),
             "duration_s": duration, "cost": float(sol.cost), "wall_s": round(float(wall_s), 3),
             "npz": os.path.join(f"seed_{seed}", name)}
    if unstable and sol.unstable_reason:
        entry["unstable_reason"] = sol.unstable_reason
    entry.update(sol.summary)
    entry.update(variants)
    if variants:
        entry["variants"] = list(variants)
    if name == "result.npz":  # its result.json entry beside it: the solution is whole even if the run
        # is stopped before result.json lists it (Blender gone, the solve cancelled)
        write_text_atomic(os.path.join(folder, "entry.json"), schema.format_json(entry))
    return entry


class ResultIndex:
    """result.json, kept current on disk as solutions arrive."""

    def __init__(self, out_dir: str, task_name: str, method: str, seeds: list[int]):
        self.path = os.path.join(out_dir, "result.json")
        self.doc = {"schema_version": RESULT_SCHEMA_VERSION, "task": task_name, "method": method,
                    "model": "model.xml", "status": "running", "seeds": list(seeds),
                    "solutions": [], "failed": [], "started_unix": round(time.time(), 3)}
        self._save()

    def add(self, entry: dict) -> None:
        self.doc["solutions"].append(entry)
        self.doc["solutions"].sort(key=lambda e: e["seed"])
        self._save()

    def fail(self, seed: int, message: str) -> None:
        self.doc["failed"].append({"seed": seed, "error": message})
        self._save()

    def finish(self, status: str) -> None:
        self.doc["status"] = status
        self._save()

    def _save(self) -> None:
        write_text_atomic(self.path, schema.format_json(self.doc))

