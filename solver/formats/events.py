"""The events a solve streams, declared once: `python -m solver run --jsonl` writes one JSON object
per line, `{"event": KIND, …}`; the solver's processes emit them and Blender reads them (through the
same names, so a kind added or renamed here is one change on both sides)."""
from __future__ import annotations

from enum import StrEnum


class Event(StrEnum):
    """The kinds of a solve's events; json.dumps writes each as its plain string."""
    START = "start"
    SEED_START = "seed_start"
    PROGRESS = "progress"
    STAGE = "stage"
    PREVIEW = "preview"
    SEGMENTS = "segments"
    SOLUTION = "solution"
    SEED_RETRY = "seed_retry"
    SEED_FAILED = "seed_failed"
    KEYFRAMES_APPENDED = "keyframes_appended"
    KEYFRAMES_EDITED = "keyframes_edited"
    DONE = "done"
    ERROR = "error"


MEANING = {
    Event.START: "the task's name, method and seeds, and notes on what the run leaves out (a term off for a role "
                 "no body plays): the solve has begun",
    Event.SEED_START: "a seed began in a worker (its pid; on Ray also its node)",
    Event.PROGRESS: "a seed's fraction done and cost, and for keyframe methods the keyframes reached, "
                    "iterations, retries and back-ups (MPC methods: the motion_time simulated so far)",
    Event.STAGE: "a playable intermediate solution (an assisted solve's curriculum stage) and its file",
    Event.PREVIEW: "a seed's motion as it is found (what an MPC solve has committed, an assisted search's best so "
                   "far, then its physical version as tracked): its frames from first_frame on (fps, nq; qpos "
                   "as base64 little-endian float32 rows), replacing any sent from there; MPC keyframe methods add "
                   "when in it each keyframe was reached (keyframes_reached, null where not yet)",
    Event.SEGMENTS: "on Ray with particles: where each particle of a keyframe segment ran",
    Event.SOLUTION: "a seed's solution: its result.json entry and the path of its result.npz",
    Event.SEED_RETRY: "a worker died; the seed runs again",
    Event.SEED_FAILED: "a seed could not be solved, and why",
    Event.KEYFRAMES_APPENDED: "contact keyframes sent on stdin reached the solve",
    Event.KEYFRAMES_EDITED: "contact keyframes edited on stdin reached the solve (taken by the seeds that have not "
                            "started them)",
    Event.DONE: "every seed is done: the result.json and the solutions' count",
    Event.ERROR: "the solve failed (kind invalid_input with the field's path, or internal); with fatal false, "
                 "only a line sent on stdin was refused",
}
