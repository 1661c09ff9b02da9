"""`bench hits`: hit-reaction tasks over seeds — per hit, whether the character fell and whether it
stood again by the next hit (the paper's protocol: one online run a seed)."""
from __future__ import annotations

import os
import time

import mujoco
import numpy as np

from solver.core.errors import InvalidInput

from .tasks import task_file


def head_heights(model: mujoco.MjModel, qpos: np.ndarray) -> np.ndarray:
    """The head's height (m) in every row of `qpos` (MuJoCo forward kinematics)."""
    data, head = mujoco.MjData(model), model.body("head").id
    out = np.empty(len(qpos))
    for i, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        out[i] = data.xpos[head, 2]
    return out


def hit_outcomes(times: np.ndarray, heads: np.ndarray, hits: list[float], end: float,
                 fallen: float, standing: float) -> list[dict]:
    """Per hit: whether the head fell below `fallen` before the next hit (or `end`), and whether it
    stood (head ≥ `standing`) at that moment — a fall then standing is a get-up. A motion that ended
    before then (its task done, or given up) is judged by its last frame."""
    out = []
    for k, t in enumerate(hits):
        until = hits[k + 1] if k + 1 < len(hits) else end
        window = (times >= t) & (times < until)
        last = heads[max(np.searchsorted(times, until, side="right") - 1, 0)]
        fell = bool(np.any(heads[window] < fallen))
        stood = bool(last >= standing)
        out.append({"time": round(t, 6), "fell": fell, "standing_after": stood, "got_up": fell and stood,
                    "lowest_head_m": round(float(heads[window].min()), 3) if window.any() else None})
    return out


def bench_hits(task_name: str, seeds: int, workers: int | None = None, settle: float = 4.0,
               planner: str | None = None) -> dict:
    """A hit-reaction task (`scenes/tasks/hit_*`) over `seeds` seeds, each a single online run (one
    particle, as the paper's protocol): per hit, whether the character fell (head below 0.5 m) and
    whether it stood again (head ≥ 1.2 m) by the next hit, or `settle` s after the last one. `planner`
    replaces the task's (to compare planners on the same hits)."""
    import tempfile

    from solver.core import schema
    from solver.formats.task import load_task
    from solver.methods import get_method
    from solver.physics.quality import FALLEN_HEAD_HEIGHT
    from solver.run.pool import run_seeds
    task = load_task(task_file(task_name))
    if task.method != "contact" or not task.perturbations:
        raise InvalidInput("--task", f"'{task_name}' has no perturbations; bench hits needs a hit-reaction task")
    cores = os.cpu_count() or 1
    t = schema.from_dict(type(task), schema.to_dict(task))
    t.settings = dict(t.settings, particles=1, retries=0, backups=0)
    if planner is not None:
        t.settings["planner"] = planner
    t.seeds = list(range(seeds))
    hits = sorted([i.time for i in task.perturbations.impulses] + [b.time for b in task.perturbations.balls])
    entries = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="physkey-bench-") as out:
        run_seeds(schema.to_dict(t), t.seeds, out, min(seeds, cores) if workers is None else workers,
                  lambda e: None, entries.append, lambda seed, msg: entries.append({"seed": seed, "error": msg}))
        model = get_method(t.method).prepare(t).built.model  # the model the seeds ran on
        runs = []
        for e in sorted(entries, key=lambda e: e["seed"]):
            if "error" in e:
                runs.append({"seed": e["seed"], "error": e["error"]})
                continue
            with np.load(os.path.join(out, e["npz"]), allow_pickle=False) as npz:
                times, qpos = npz["times"], npz["qpos"]
            outcomes = hit_outcomes(times, head_heights(model, qpos), hits, hits[-1] + settle, FALLEN_HEAD_HEIGHT,
                                    1.2)
            runs.append({"seed": e["seed"], "success": bool(e["success"]), "duration_s": e["duration_s"],
                         "wall_s_per_s": round(e["wall_s"] / max(e["duration_s"], 1e-9), 2),
                         "falls": sum(o["fell"] for o in outcomes), "get_ups": sum(o["got_up"] for o in outcomes),
                         "standing_after": sum(o["standing_after"] for o in outcomes), "hits": outcomes})
    ok = [r for r in runs if "error" not in r]
    n_hits = len(hits) * len(ok)
    falls = sum(r["falls"] for r in ok)
    return {"benchmark": "hits", "task": task.name, "planner": t.settings.get("planner", "partwise"),
            "seeds": seeds, "hits_per_seed": len(hits), "cpu_count": cores,
            "successes": sum(r["success"] for r in ok), "falls": falls, "get_ups": sum(r["get_ups"] for r in ok),
            "standing_after_rate": round(sum(r["standing_after"] for r in ok) / n_hits, 3) if n_hits else None,
            "get_up_rate": round(sum(r["get_ups"] for r in ok) / falls, 3) if falls else None, "runs": runs,
            "bench_wall_s": round(time.perf_counter() - start, 1), "mujoco": mujoco.__version__}
