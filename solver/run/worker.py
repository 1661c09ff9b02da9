"""A seed worker process: `python -m solver.run.worker OUT_DIR NTHREAD`, one per pool slot.

It speaks JSON lines only, so nothing pickled ever crosses the process boundary: stdin brings the
task document on its first line and then one `{"seed": k}` per seed; stdout carries that seed's
events and then one `{"reply": {"ok": entry}}` or `{"reply": {"error": …}}`. The end of stdin while
idle is the normal end; the end of stdin while a seed is being solved means the parent died, and the
worker exits at once instead of running on orphaned.
"""
from __future__ import annotations

import json
import os
import queue
import sys
import threading
import traceback

from ..formats.events import Event

EXIT_PARENT_GONE = 3


class _Channel:
    """The worker's private stdout: JSON lines for the parent. Everything else anything prints (Python
    or C) goes to stderr, so a stray print can never corrupt the event stream."""

    def __init__(self):
        self._out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        self._lock = threading.Lock()

    def send(self, message: dict) -> None:
        line = json.dumps(message, allow_nan=False, default=float) + "\n"
        with self._lock:
            self._out.write(line)
            self._out.flush()


def _read_stdin(lines: queue.Queue, busy: threading.Event) -> None:
    for line in sys.stdin:
        lines.put(line)
    if busy.is_set():
        os._exit(EXIT_PARENT_GONE)
    lines.put(None)


def main(argv: list[str]) -> int:
    from ..core.mujoco_log import route_warnings
    out_dir, nthread = argv[0], int(argv[1])
    channel = _Channel()
    route_warnings()
    lines: queue.Queue = queue.Queue()
    busy = threading.Event()
    busy.set()  # preparing the task counts as busy: a parent gone by now is gone for good
    threading.Thread(target=_read_stdin, args=(lines, busy), name="physkey-worker-stdin", daemon=True).start()
    first = lines.get()
    if first is None:
        return 0
    from .pool import SeedRunner
    runner = SeedRunner(json.loads(first), out_dir, nthread, channel.send)
    try:
        busy.clear()
        while (line := lines.get()) is not None:
            busy.set()
            seed = int(json.loads(line)["seed"])
            channel.send({"event": Event.SEED_START, "seed": seed, "pid": os.getpid()})
            try:
                reply = {"ok": runner.solve(seed)}
            except Exception as e:  # this seed's failure, reported with its traceback
                reply = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
            busy.clear()
            channel.send({"reply": reply, "seed": seed})
    finally:
        runner.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
