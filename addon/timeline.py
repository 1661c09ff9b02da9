"""The scene's clock: its frame rate, which turns solver seconds into Blender frames and back."""
from __future__ import annotations

import re


def scene_fps(scene) -> float:
    """Frames per second, with the frame-rate base (29.97 fps is 30 / 1.001)."""
    return scene.render.fps / scene.render.fps_base


# A time in the solver's words: "stumbles at 1.20 s", "from 0.50 s to 8.80 s" (not a duration: "for 0.4 s")
_TIME = re.compile(r"\b(at|from|to) (\d+(?:\.\d+)?) s\b")


def frame_at(seconds: float, start_frame: int, scene) -> int:
    """The frame `seconds` into a motion that starts at `start_frame`."""
    return start_frame + round(seconds * scene_fps(scene))


def in_frames(text: str, start_frame: int, scene) -> str:
    """The solver's `text` with its times as the frames an animator scrubs to: "stumbles at 1.20 s" of a motion
    starting at frame 1, at 30 fps, reads "stumbles at frame 37"."""
    return _TIME.sub(lambda m: f"{m.group(1)} frame {frame_at(float(m.group(2)), start_frame, scene)}", text)
