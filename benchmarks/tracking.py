"""`bench track`: physical versions over seeds — of each assisted solution of an assist task, or of a
track task's reference (a capture made physical)."""
from __future__ import annotations

import os
import time

import mujoco
import numpy as np

from solver.core.errors import InvalidInput

from .tasks import task_file


def bench_track(task_name: str, seeds: int, workers: int | None = None) -> dict:
    """Physical versions over `seeds` seeds: of each assisted solution of an assist task (the assist
    method's `physical`), or of a track task's reference. Per seed: success, the verdict per
    keyframe, the keyframe error relative to the unoptimized motion's (assist tasks), tracking
    errors, the whole clip's fidelity (a track task's: cm off, planted feet's sliding), penetration,
    fall, and tracking wall time per second of motion."""
    import tempfile

    from solver.core import schema
    from solver.formats.settings import TrackSettings, method_settings
    from solver.formats.task import load_task
    from solver.methods.physical import ASSISTED_REFERENCE
    from solver.run.pool import run_seeds
    task = load_task(task_file(task_name))
    if task.method not in ("assist", "track"):
        raise InvalidInput("--task", f"'{task_name}' is a {task.method} task; bench track needs an assist or a track "
                           "task")
    cores = os.cpu_count() or 1
    t = schema.from_dict(type(task), schema.to_dict(task))
    if task.method == "assist":
        t.settings = dict(t.settings, physical=True)
    step_s = method_settings(TrackSettings, t.settings if task.method == "track"
                             else ASSISTED_REFERENCE).sampling.planning_timestep
    t.seeds = list(range(seeds))
    entries = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="physkey-bench-") as out:
        run_seeds(schema.to_dict(t), t.seeds, out, min(seeds, cores) if workers is None else workers,
                  lambda e: None, entries.append, lambda seed, msg: entries.append({"seed": seed, "error": msg}))
    runs = []
    for e in sorted(entries, key=lambda e: e["seed"]):
        if "error" in e:
            runs.append({"seed": e["seed"], "error": e["error"]})
            continue
        tracked = e["physical"] if task.method == "assist" else e
        verdicts = tracked.get("verdicts") or [{"name": v["name"], "verdict": v["verdict"], "why": v["why"]}
                                               for v in tracked["keyframes"]]
        wall = tracked.get("physical_wall_s", tracked["wall_s"])
        runs.append({"seed": e["seed"], "success": bool(tracked["success"]),  # ✓: whole, near, clean
                     "whole": bool(tracked.get("whole", tracked["success"])),  # every keyframe reached
                     "kf_error_relative": tracked.get("kf_error_relative"),
                     "assisted_kf_error_relative": (e["kf_error"] / e["kf_error_initial"]
                                                    if task.method == "assist" and e.get("kf_error_initial") else None),
                     "assisted_success": e["success"] if task.method == "assist" else None,
                     # keys in the air: keyed and risen heights (the assisted motion's, the physical version's)
                     "airborne": {"assisted": e.get("airborne"), "physical": tracked.get("airborne")}
                     if task.method == "assist" else None,
                     "words": tracked.get("words", []),
                     "verdicts": [(v["name"], v["verdict"]) for v in verdicts],
                     "departs": next((v["why"] for v in verdicts if v["why"]), None),
                     "tracking": tracked["tracking"], "max_penetration_m": tracked["quality"]["max_penetration_m"],
                     "max_penetration_at": tracked["quality"].get("max_penetration_at"),
                     "fall_s": tracked["quality"].get("fall_s"), "duration_s": tracked["duration_s"],
                     # the whole clip against the reference (a capture's: cm off, planted feet's sliding)
                     "fidelity": {k: tracked["fidelity"][k] for k in ("mean_cm", "worst", "foot_sliding_cm",
                                                                       "floating", "covers_s", "within", "why")}
                     if tracked.get("fidelity") else None,
                     "wall_s_per_s": round(wall / max(tracked["duration_s"], 1e-9), 2),  # every try's
                     "tries": len(tracked.get("tries", [None])),  # trackings from the start (physical versions)
                     # assisted searches planned anew for a closer physical version, and each plan's outcome
                     "plans": [{"assisted": p["kf_error"] / e["kf_error_initial"] if p["kf_error"] is not None
                                and e.get("kf_error_initial") else None,
                                "physical": p["physical"], "wall_s": p["wall_s"]} for p in e.get("plans", [])],
                     "solve_wall_s": e["wall_s"],  # the whole seed's: searches, trackings, every plan
                     # planning effort: iterations per control step, retries and back-ups included
                     "iterations_per_step": round(tracked["iterations"] / max(tracked["duration_s"] / step_s, 1.0),
                                                  2)})
    ok = [r for r in runs if "error" not in r]
    return {"benchmark": "track", "task": task.name, "method": task.method, "seeds": seeds, "cpu_count": cores,
            "successes": sum(r["success"] for r in ok), "runs": runs,
            "mean_wall_s_per_s": round(float(np.mean([r["wall_s_per_s"] for r in ok])), 2) if ok else None,
            "bench_wall_s": round(time.perf_counter() - start, 1), "mujoco": mujoco.__version__}
