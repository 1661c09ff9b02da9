"""How hard a hit-reaction preset's push may be: single online runs (one particle, no retries) of a
`scenes/tasks/hit_*` task with its first impulse scaled to each magnitude, one JSON line per run
(success, why not, the lowest head height, the motion's end, wall time).

Run: .venv/bin/python tools/hit_sweep.py hit_stand_chest 4,8,12 0,1,2 ['{"rollouts": 45}']
"""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from benchmarks.hits import head_heights  # noqa: E402
from solver.core.paths import task_path  # noqa: E402
from solver.formats.task import load_task  # noqa: E402
from solver.methods.contact import CONTACT  # noqa: E402
from solver.mpc.agent import Agent  # noqa: E402
from solver.physics.rollout import RolloutEngine  # noqa: E402


def main(name: str, magnitudes: list[float], seeds: list[int], settings: dict) -> None:
    for magnitude in magnitudes:
        task = load_task(task_path(name))
        task.settings = dict(task.settings, **settings)
        push = task.perturbations.impulses[0]
        push.impulse = list(np.asarray(push.impulse) / np.linalg.norm(push.impulse) * magnitude)
        prep = CONTACT.prepare(task)
        for seed in seeds:
            start = time.perf_counter()
            with RolloutEngine(prep.plan.model, 1) as engine:
                run = Agent(prep.built, prep.plan, prep.keyframes, prep.settings, seed, engine).run()
            heads = head_heights(prep.built.model, run.qpos[::5])
            print(json.dumps({"task": name, "settings": settings, "impulse": magnitude, "seed": seed,
                              "success": bool(run.success), "failure": run.failure,
                              "min_head": round(float(heads.min()), 3), "end": round(float(run.times[-1]), 3),
                              "wall": round(time.perf_counter() - start, 1)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], [float(x) for x in sys.argv[2].split(",")], [int(x) for x in sys.argv[3].split(",")],
         json.loads(sys.argv[4]) if len(sys.argv) > 4 else {})
