"""The motion as it is found: while a solve runs, each seed's motion so far (the solver's `preview`
events, `solver/run/preview.py`) is drawn in the viewport as an orange ghost (every seed's alike), the character's
skeleton at the scene's current frame — or, past what has been found, at the latest frame found, so the
solve's front is what the animator sees while the timeline stands. Nothing is added to the scene and
nothing touches the animator's action; a seed's live ghost goes when its solution arrives (the solution
row takes over) or the solve ends; a cancelled solve keeps each unfinished seed's as a solution marked so.
Retries and back-ups rewind it as they rewind the solve. `ghosts` draws it (`ghosts.live_lines`)."""
from __future__ import annotations

import os

import numpy as np

from ..solver.core.fileio import write_npz_atomic
from ..solver.formats.preview_frames import apply
from .ghosts import segments


class LivePreview:
    """One running solve's preview: per seed, the frames found so far and their ghost geometry."""

    def __init__(self, folder: str, start_frame: int):
        self.folder, self.start_frame = folder, int(start_frame)
        self.model = None
        self.frames: dict[int, np.ndarray] = {}  # seed → (F, nq) float32
        self.geometry: dict[int, np.ndarray] = {}  # seed → (F, S, 2, 3) float32
        self.fps: dict[int, float] = {}
        self.reached: dict[int, list] = {}  # seed → when in its frames each keyframe was reached (None: not yet)

    def _model(self):
        if self.model is None:
            import mujoco
            self.model = mujoco.MjModel.from_xml_path(os.path.join(self.folder, "model.xml"))
        return self.model

    def update(self, event: dict) -> None:
        """Take one `preview` event: the seed's frames from `first_frame` on replaced by the event's."""
        seed, first = int(event["seed"]), int(event["first_frame"])
        frames = apply(self.frames.get(seed), event)
        new = frames[first:]
        old = self.geometry.get(seed)
        geometry = segments(self._model(), new.astype(float))
        self.geometry[seed] = geometry if old is None else np.concatenate([old[:first], geometry])
        self.frames[seed], self.fps[seed] = frames, float(event["fps"])
        if "keyframes_reached" in event:  # a rewind to a checkpoint rewinds these with the frames
            self.reached[seed] = list(event["keyframes_reached"])

    def done(self, seed: int) -> None:
        """The seed's solution arrived: its live ghost goes."""
        for store in (self.frames, self.geometry, self.fps, self.reached):
            store.pop(seed, None)

    def lines(self, frame: float, scene_fps: float) -> np.ndarray:
        """(N, 3) segment end points of every seed's pose at the scene's `frame` (its latest pose past it)."""
        out = []
        t = (frame - self.start_frame) / scene_fps
        for seed, geometry in self.geometry.items():
            if len(geometry):
                f = int(np.clip(np.floor(t * self.fps[seed] + 1e-6), 0, len(geometry) - 1))
                out.append(geometry[f].reshape(-1, 3))
        return np.concatenate(out) if out else np.zeros((0, 3), np.float32)


def keep_unfinished(scene, job) -> int:
    """A cancelled solve: each seed's motion found so far (its live preview, with no solution yet) listed as a
    solution marked unfinished, which previews, ghosts and keeps like any other — with the keyframes it had
    reached, so Keep marks them on the timeline (its file beside the solve's others, `seed_<k>/unfinished.npz`,
    written whole or not at all); how many."""
    from .solutions import add_unfinished
    live = getattr(job, "live", None)
    if live is None:
        return 0
    kept = 0
    for seed in sorted(live.frames):
        frames = live.frames[seed].astype(float)
        if len(frames) < 2:
            continue
        times = np.arange(len(frames)) / live.fps[seed]
        folder = os.path.join(job.out, f"seed_{seed}")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "unfinished.npz")
        reached = [t if t is not None and t <= times[-1] + 1e-9 else None for t in live.reached.get(seed, [])]
        write_npz_atomic(path, {"times": times, "qpos": frames, "frame_times": times, "frame_qpos": frames,
                                "keyframes_reached": np.array([np.nan if t is None else t for t in reached], float)})
        add_unfinished(scene, seed, path, float(times[-1]), job.context, reached)
        kept += 1
    return kept
