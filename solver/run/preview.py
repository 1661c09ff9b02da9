"""A seed's motion as it is found, for a live preview: the frames (at the task's output rate) of the motion
an MPC solve has committed so far, or of an assisted search's best motion so far and then of its physical
version as it is tracked (each a new record, sent from its first frame that differs), as `preview` events
while it runs. Segments run on a Ray cluster are shown a segment at a time, as each comes back.

Each event carries the frames from `first_frame` on, as little-endian float32 qpos rows in base64 — compact,
nothing pickled, no file for Blender to poll. A retry or a back-up goes back to a checkpoint: the next event
then starts at the first frame that differs from what was sent (the ones after it are replaced), so applying
the events in order (`formats.preview_frames.apply`) gives the motion the solve has at that moment, and,
once the seed is done, its result's frames (the same resampling as `physics.result`) — with one particle;
with more, the first particle's attempt is shown (`mpc.recovery.particles`), which the result need not be.
An assisted solve with physical versions ends on the last physical version tracked (its last plan's last
try), which the kept plan's need not be.
"""
from __future__ import annotations

import mujoco
import numpy as np

from ..core.resample import resample_qpos
from ..formats.events import Event
from ..formats.preview_frames import canonical, encode

# Frames per event (a tenth of a second at 30 fps; a rewind is sent at once): counted in motion, not wall
# time, so what a solve sends does not depend on the machine's speed.
CHUNK_FRAMES = 3


class MotionPreview:
    """The preview frames of one seed, from the committed motion the solve reports (`Progress.motion`)."""

    def __init__(self, model: mujoco.MjModel, fps: float, chunk: int = CHUNK_FRAMES):
        self.model, self.fps, self.chunk = model, float(fps), chunk
        self.sent = np.zeros((0, model.nq), dtype=np.float32)
        self.source = None  # the motion record the frames came from (a resumed solve has a new one)

    def event(self, seed: int, times, qpos) -> dict | None:
        """The `preview` event of what changed since the last one (None: nothing, or under a chunk new)."""
        if len(times) < 2:
            return None
        resumed = self.source is not times
        available = int(np.floor(float(times[-1]) * self.fps + 1e-9)) + 1  # frames at or before the last pose
        first = 0 if resumed else min(len(self.sent), available)
        if not resumed and available - first < self.chunk:
            return None
        start = first / self.fps - 2.0 / self.fps  # the poses around the new frames suffice for the interpolation
        t = np.asarray(times if resumed else times[max(0, self._row_before(times, start)):], dtype=float)
        q = np.asarray(qpos[len(times) - len(t):len(times)], dtype=float)
        frames = canonical(self.model, resample_qpos(self.model, t, q, np.arange(first, available) / self.fps))
        if resumed:  # send from the first frame that differs from what was sent
            same = min(len(self.sent), len(frames))
            differs = np.flatnonzero(np.any(np.abs(frames[:same] - self.sent[:same]) > 1e-6, axis=1))
            first = int(differs[0]) if len(differs) else same
            frames = frames[first:]
            self.source = times
        cut = first < len(self.sent)  # frames sent before that the solve no longer has
        self.sent = np.concatenate([self.sent[:first], frames])
        if not len(frames) and not cut:
            return None
        return {"event": Event.PREVIEW, "seed": seed, "first_frame": first, "fps": self.fps, "nq": self.model.nq,
                "frames": len(frames), "qpos": encode(frames)}

    @staticmethod
    def _row_before(times, t: float) -> int:
        """The index of the last recorded time at or before t (searching back from the end: the new part)."""
        i = len(times) - 1
        while i > 0 and times[i] > t:
            i -= 1
        return i

