"""What converting an animation of the animator's rig to the physics character costs: the evaluated rig
read frame by frame (`pose_reading.read_targets`: a frame change, the depsgraph, the mapped bones'
world matrices) and the whole-body fit (`solver.physics.pose_fit.fit_poses`), for 1,000 frames.

    .venv/bin/python benchmarks/pose_conversion.py   (installs the built extension into a sandboxed bpy)

Rigs: the sit-down-and-stand-up capture of the `bvhtoolbox` 0.1.3 sdist (Biovision names, 455 frames,
played forwards and back to make 1,000) through Blender's BVH importer, and a Rigify-generated rig keyed
on its torso, hips, chest and IK feet (a 1,000-frame bob). Prints JSON: seconds per part, per frame,
the fit's accuracy (hands and feet, cm) over the frames, and what baking 240 of the fitted frames back
onto the rig costs (Keep's bake).
"""
from __future__ import annotations

import json
import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)
FRAMES = 1000
BAKED = 240  # frames of the fitted motion baked back onto the rig (a Rigify rig's IK roots evaluate it)


def _made(bpy, rig):
    bpy.context.view_layer.objects.active = rig
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    return next(o for o in bpy.data.objects if o.physkey.animator_rig == rig)


def _capture(bpy):
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_anim.bvh(filepath=os.path.join(ROOT, "tests", "data", "bvh", "test_mocapbank.bvh"),
                            global_scale=0.01)
    rig = bpy.context.active_object
    start, end = (int(v) for v in rig.animation_data.action.frame_range)
    there = list(range(start, end + 1))
    frames = (there + there[::-1]) * (FRAMES // (2 * len(there)) + 1)
    return rig, frames[:FRAMES]


def _rigify(bpy):
    import addon_utils
    from mathutils import Matrix
    bpy.ops.wm.read_homefile(use_empty=True)
    addon_utils.enable("rigify", default_set=True, persistent=True)
    bpy.ops.object.armature_human_metarig_add()
    bpy.ops.pose.rigify_generate()
    rig = bpy.context.active_object
    rig.animation_data_create()
    rig.animation_data.action = bpy.data.actions.new("bob")
    bones = rig.pose.bones
    rest = bones["torso"].bone.matrix_local.copy()
    for frame in range(1, FRAMES + 1, 25):
        phase = math.sin(frame / 25.0)
        bones["torso"].matrix = Matrix.Translation((0.0, 0.0, -0.05 * (1 + phase))) @ rest  # from rest: no drift
        bones["torso"].rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
        bones["hips"].rotation_mode = bones["chest"].rotation_mode = "XYZ"
        bones["hips"].rotation_euler = (0.0, 0.0, 0.2 * phase)
        bones["chest"].rotation_euler = (0.15 * phase, 0.0, 0.0)
        bones["foot_ik.L"].location = (0.0, 0.0, 0.03 * (1 + phase))
        for name in ("torso", "hips", "chest", "foot_ik.L"):
            bones[name].keyframe_insert("location", frame=frame)
            bones[name].keyframe_insert("rotation_euler" if bones[name].rotation_mode == "XYZ" else
                                        "rotation_quaternion", frame=frame)
    return rig, list(range(1, FRAMES + 1))


def measure(bpy, module, name: str, rig, frames) -> dict:
    import numpy as np
    from blender_env import addon

    from solver.builders.mjcf import compile_spec, scene_to_spec
    from solver.physics.pose_fit import fit_poses
    physics = _made(bpy, rig)
    bpy.context.view_layer.objects.active = physics
    model = compile_spec(scene_to_spec(addon(module, "taskio").extract_scene(bpy.context)))
    reading = addon(module, "pose_reading")
    t0 = time.perf_counter()
    targets = reading.read_targets(bpy.context, rig, physics, model, frames)
    read = time.perf_counter() - t0
    t0 = time.perf_counter()
    fit = fit_poses(model, targets)
    fitted = time.perf_counter() - t0
    t0 = time.perf_counter()  # and back: the fitted motion baked onto the rig, as Keep bakes a solution
    clip = addon(module, "bake").Clip(model, np.arange(BAKED) / 24.0, fit.qpos[:BAKED], 1, 24.0)
    addon(module, "retarget").bake_onto_rig(rig, physics, clip, "baked back")
    baked = time.perf_counter() - t0
    slots = list(addon(module, "humanoid_map").SLOTS)
    ends = {kind: [k for k, s in enumerate(slots) if s.startswith(kind)] for kind in ("hand", "foot")}
    return {"rig": name, "frames": len(frames), "read_s": round(read, 2), "fit_s": round(fitted, 2),
            "total_s": round(read + fitted, 2), "ms_per_frame": round(1000 * (read + fitted) / len(frames), 2),
            "hands_cm_max": round(100 * float(fit.position_error[:, ends["hand"]].max()), 2),
            "feet_cm_max": round(100 * float(fit.position_error[:, ends["foot"]].max()), 2),
            "all_bodies_cm_median": round(100 * float(np.median(fit.position_error)), 2),
            "frames_with_a_joint_at_its_limit": sum(bool(a) for a in fit.at_limit),
            f"bake_{BAKED}_frames_s": round(baked, 2)}


def main() -> None:
    from blender_env import installed_extension
    bpy, module = installed_extension()
    rows = [measure(bpy, module, "BVH test_mocapbank (Biovision, 0.01)", *_capture(bpy)),
            measure(bpy, module, "Rigify-generated, keyed torso/hips/chest/IK foot", *_rigify(bpy))]
    print(json.dumps({"benchmark": "pose_conversion", "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
