"""The scene's clock: its frame rate, which turns solver seconds into Blender frames and back."""
from __future__ import annotations


def scene_fps(scene) -> float:
    """Frames per second, with the frame-rate base (29.97 fps is 30 / 1.001)."""
    return scene.render.fps / scene.render.fps_base
