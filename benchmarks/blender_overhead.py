"""Blender-side overhead of a solve: extract + start + read + bake, against the solve's wall time.

Run: .venv/bin/python benchmarks/blender_overhead.py  (installs the built extension into a sandboxed bpy)
Prints JSON. The solver's own work is the `done` event's wall time; everything else the Blender
side adds (scene extraction, process start-up and imports, event reading, keeping the solution).
"""
from __future__ import annotations

import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)


def main() -> None:
    from blender_env import addon, installed_extension
    bpy, module = installed_extension()
    taskio = addon(module, "taskio")
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand")
    scene = bpy.context.scene
    scene.physkey.num_seeds = 1
    t0 = time.perf_counter()
    taskio.task_from_scene(bpy.context, taskio.extract_scene(bpy.context))
    extract = time.perf_counter() - t0
    t0 = time.perf_counter()
    bpy.ops.physkey.solve(wait=True)
    solve_total = time.perf_counter() - t0
    status = scene.physkey.status  # "done: N solution(s) in W s"
    solver_wall = float(status.split(" in ")[1].split(" s")[0])
    t0 = time.perf_counter()
    bpy.ops.physkey.keep_solution(index=0)
    keep = time.perf_counter() - t0
    overhead = extract + (solve_total - solver_wall) + keep
    print(json.dumps({"benchmark": "blender_overhead", "preset": "armchair_stand_sit_stand", "seeds": 1,
                      "extract_s": round(extract, 3), "solve_total_s": round(solve_total, 3),
                      "solver_wall_s": solver_wall, "start_and_read_s": round(solve_total - solver_wall, 3),
                      "keep_bake_s": round(keep, 3), "overhead_fraction": round(overhead / solve_total, 4)},
                     indent=1))


if __name__ == "__main__":
    main()
