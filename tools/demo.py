"""The main job (`make demo`): the built extension, installed into a sandboxed Blender (the bpy
module), loads the armchair stand → sit → stand preset, solves it with several seeds, keeps the
best, saves out/demo.blend and renders out/demo.mp4 and out/demo_contact_sheet.png (Workbench).
DEMO_QUICK=1 (used by the tests) checks the pipeline at a fraction of the cost: it solves 1 seed of the
preset's first two keyframes (seated, leaning forward and back) and renders 9 frames. PHYSKEY_DEMO_OUT
moves the output."""
from __future__ import annotations

import math
import os
import shutil
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.environ.get("PHYSKEY_DEMO_OUT") or os.path.join(ROOT, "out")
PRESET = "armchair_stand_sit_stand"
QUICK = os.environ.get("DEMO_QUICK") == "1"  # CI: 1 seed, a few frames rendered
SEEDS = 1 if QUICK else 3


def say(msg: str) -> None:
    print(f"[demo] {msg}", flush=True)


def install(zip_path: str):
    sandbox = os.path.join(OUT, "blender_user")
    shutil.rmtree(sandbox, ignore_errors=True)
    os.environ["BLENDER_USER_RESOURCES"] = sandbox
    import bpy
    bpy.ops.wm.read_homefile(use_empty=True)
    if bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default",
                                                enable_on_install=True) != {"FINISHED"}:
        raise SystemExit(f"could not install {zip_path}")
    return bpy


def stage(bpy, scene, arm, frames: int) -> None:
    """Camera, light and a floor for rendering."""
    from mathutils import Vector
    bpy.ops.mesh.primitive_plane_add(size=8.0, location=(0, 0, 0))
    scene.frame_end = scene.frame_start + frames
    cam_data = bpy.data.cameras.new("Camera")
    cam = bpy.data.objects.new("Camera", cam_data)
    scene.collection.objects.link(cam)
    cam.location = Vector((2.6, -3.4, 1.7))
    target = Vector((-0.1, 0.0, 0.75))
    cam.rotation_euler = (target - cam.location).to_track_quat("-Z", "Y").to_euler()
    cam_data.lens = 32
    scene.camera = cam
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    scene.collection.objects.link(sun)
    sun.rotation_euler = (math.radians(40), 0, math.radians(30))
    render = scene.render
    render.engine = "BLENDER_WORKBENCH"
    render.resolution_x, render.resolution_y, render.resolution_percentage = 480, 270, 100
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "MATERIAL"


def render_video(bpy, scene, path: str) -> None:
    render = scene.render
    render.image_settings.media_type = "VIDEO"  # Blender 5.0: video output is a media type
    render.image_settings.file_format = "FFMPEG"
    render.ffmpeg.format = "MPEG4"
    render.ffmpeg.codec = "H264"
    render.filepath = path
    bpy.ops.render.render(animation=True)


def contact_sheet(bpy, scene, path: str, count: int = 6, columns: int = 3) -> None:
    import numpy as np
    render = scene.render
    render.image_settings.media_type = "IMAGE"
    render.image_settings.file_format = "PNG"
    frames = np.linspace(scene.frame_start, scene.frame_end, count).round().astype(int)
    tiles = []
    for f in frames:
        scene.frame_set(int(f))
        render.filepath = os.path.join(OUT, f"_frame_{f:04d}.png")
        bpy.ops.render.render(write_still=True)
        img = bpy.data.images.load(render.filepath)
        w, h = img.size
        px = np.empty(w * h * 4, dtype=np.float32)
        img.pixels.foreach_get(px)
        tiles.append(px.reshape(h, w, 4))
        bpy.data.images.remove(img)
        os.remove(render.filepath)
    rows = [np.concatenate(tiles[r * columns:(r + 1) * columns], axis=1) for r in range(count // columns)]
    sheet = np.concatenate(rows[::-1], axis=0)  # Blender images start at the bottom row
    out = bpy.data.images.new("contact_sheet", sheet.shape[1], sheet.shape[0], alpha=True)
    out.pixels.foreach_set(sheet.ravel())
    out.filepath_raw, out.file_format = path, "PNG"
    out.save()


def main() -> None:
    start = time.perf_counter()
    os.makedirs(OUT, exist_ok=True)
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import build_extension
    zip_path = build_extension.main()
    bpy = install(zip_path)
    say(f"installed {os.path.basename(zip_path)} into a sandboxed Blender {bpy.app.version_string}")
    bpy.ops.physkey.load_preset(preset=PRESET)
    if QUICK:  # the pipeline, not the whole motion: standing up and settling is most of a seed's solve
        keyframes = bpy.context.scene.physkey.contact_keyframes
        while len(keyframes) > 2:
            keyframes.remove(len(keyframes) - 1)
    scene = bpy.context.scene
    scene.render.fps = 30
    arm = bpy.context.active_object
    scene.physkey.num_seeds = SEEDS
    say(f"loaded preset '{PRESET}'; solving {SEEDS} seeds (contact keyframes, PartwiseMPC) …")
    t0 = time.perf_counter()
    if bpy.ops.physkey.solve(wait=True) != {"FINISHED"}:
        raise SystemExit(f"solve failed: {scene.physkey.status}")
    sols = [s for s in scene.physkey.solutions if s.stage < 0]
    for s in sorted(sols, key=lambda s: s.seed):
        say(f"  seed {s.seed}: {'success' if s.success else 'FAILED'}, {s.duration:.2f} s of motion, cost {s.cost:.3g}")
    pool = [s for s in sols if s.success] or sols
    best = min(pool, key=lambda s: s.cost)
    index = list(scene.physkey.solutions).index(best)
    bpy.ops.physkey.keep_solution(index=index)
    action = arm.animation_data.action
    say(f"solved in {time.perf_counter() - t0:.1f} s; kept seed {best.seed} as action '{action.name}'")
    stage(bpy, scene, arm, 8 if QUICK else int(math.ceil(best.duration * scene.render.fps)))
    blend = os.path.join(OUT, "demo.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    video = os.path.join(OUT, "demo.mp4")
    render_video(bpy, scene, video)
    sheet = os.path.join(OUT, "demo_contact_sheet.png")
    contact_sheet(bpy, scene, sheet, count=3 if QUICK else 6)
    say(f"wrote {blend}")
    say(f"wrote {video} ({scene.frame_end - scene.frame_start + 1} frames, Workbench, 480×270)")
    say(f"wrote {sheet}")
    say(f"done in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
