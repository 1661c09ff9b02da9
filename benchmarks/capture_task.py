"""A motion capture as the Make Physical task Blender's Solve sends: the BVH through Blender's own importer
(at its frame rate), Find Humanoid Bones, Make Physics Character, the frame range set to the capture's,
and the installed extension's `task_from_scene` — the evaluated capture read frame by frame and fitted
whole-body as the reference.

    .venv/bin/python benchmarks/capture_task.py tests/data/bvh/test_freebvh.bvh /tmp/walk.json
    .venv/bin/python -m solver run /tmp/walk.json --out /tmp/walk   (result.json: `fidelity`, `quality`)

`--seat X Y Z` adds a box collider (0.45 m × 0.45 m, its top at Z) centred at X, Y: the seat a capture
that sits needs. Prints the frames read and the seconds the reading took.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bvh")
    p.add_argument("out")
    p.add_argument("--seat", type=float, nargs=3, metavar=("X", "Y", "TOP"))
    args = p.parse_args(argv)
    from blender_env import addon, installed_extension
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_anim.bvh(filepath=os.path.abspath(args.bvh), global_scale=0.01, update_scene_fps=True)
    rig = bpy.context.active_object
    bpy.context.view_layer.objects.active = rig
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = (int(v) for v in rig.animation_data.action.frame_range)
    if args.seat:
        x, y, top = args.seat
        bpy.ops.mesh.primitive_cube_add(size=1.0, location=(x, y, top / 2))
        seat = bpy.context.active_object
        seat.scale = (0.45, 0.45, top)
        seat.physkey.collider = True
        bpy.context.view_layer.objects.active = rig
    scene.physkey.method = "track"
    taskio = addon(module, "taskio")
    started = time.perf_counter()
    task = taskio.task_from_scene(bpy.context, taskio.extract_scene(bpy.context), warn=lambda m: print("warning:", m))
    read_s = time.perf_counter() - started
    with open(args.out, "w") as f:
        json.dump(task, f)
    print(json.dumps({"frames": len(task["reference"]["times"]), "read_s": round(read_s, 2), "out": args.out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
