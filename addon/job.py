"""A solve running in the background: `python -m solver run … --jsonl` started with Blender's own
Python and the extension's bundled site-packages, its JSON events read on a thread and handed to
the UI through a queue (bpy is only ever touched on the main thread, by whoever polls)."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time

from .progress import SolveProgress

# The job's own events, beside the solver's (`solver/formats/events.py`): a line of stdout that is not
# JSON, and the solver process's exit.
LOG, EXIT = "log", "exit"
EXTENSION_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STOP_WAIT_S = 2.0  # s a cancelled solver has to mark its result.json stopped before it is killed


def _site_packages() -> str:
    """Where Blender installed the extension's wheels (the user extensions' `.local` prefix)."""
    import bpy
    local = bpy.utils.user_resource("EXTENSIONS", path=".local")
    return os.path.join(local, "lib", f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages")


def stamp(items) -> None:
    """Give each contact keyframe of `items` a `uid` of its own where it has none or shares another's."""
    import random
    seen = set()
    for item in items:
        while item.uid == 0 or item.uid in seen:
            item.uid = random.SystemRandom().randrange(1, 2 ** 31)
        seen.add(item.uid)


class SolveJob:
    """One solver process and its event stream."""

    def __init__(self, task: dict, folder: str, num_seeds: int, context: dict, workers: int | None = None,
                 cluster: str = ""):
        """`context`: the solve's context in Blender (`solve_context`), written beside the result
        before the solver starts and given to every solution listed from it."""
        from .solve_context import write
        os.makedirs(folder, exist_ok=True)
        self.folder = folder
        self.context = context
        write(folder, context)
        self.out = os.path.join(folder, "result")
        self.task_path = os.path.join(folder, "task_input.json")
        with open(self.task_path, "w", encoding="utf-8") as f:
            json.dump(task, f)
        env = dict(os.environ)
        paths = [EXTENSION_DIR, _site_packages(), env.get("PYTHONPATH", "")]
        env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        cmd = [sys.executable, "-m", "solver", "run", self.task_path, "--out", self.out, "--jsonl",
               "--exit-with-stdin", "--num-seeds", str(num_seeds)]  # a crashed Blender leaves nothing running
        if cluster:  # the seeds go to a Ray cluster: this computer's process count is not theirs
            cmd += ["--backend", "ray", "--address", cluster]
        elif workers is not None:
            cmd += ["--workers", str(workers)]
        # the solve's contact keyframes as (uid, name), in its order (`steer`; those sent while it runs added),
        # and per line sent to be appended that the solver has not yet taken or refused, its keyframes
        self.keyframes_sent: list[tuple[int, str]] = []
        self.pending: list[list[tuple[int, str]]] = []
        self.first = 0
        self.log_path = os.path.join(folder, "solver.log")
        self._log = open(self.log_path, "w", encoding="utf-8")
        self._log.write("$ " + " ".join(cmd) + "\n")  # what ran, for whoever reads the log after a problem
        self._log.flush()
        self.proc = subprocess.Popen(cmd, cwd=EXTENSION_DIR, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log, text=True, bufsize=1)
        self.events: queue.Queue = queue.Queue()
        self.started = time.perf_counter()
        self.progress = SolveProgress(num_seeds)
        self._reader = threading.Thread(target=self._read, name="physkey-solver-events", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            line = line.strip()
            if line:
                try:
                    self.events.put(json.loads(line))
                except json.JSONDecodeError:
                    self.events.put({"event": LOG, "line": line})
        self.proc.wait()
        self.events.put({"event": EXIT, "returncode": self.proc.returncode})

    def poll(self) -> list[dict]:
        out = []
        while True:
            try:
                out.append(self.events.get_nowait())
            except queue.Empty:
                return out

    def send_keyframes(self, keyframes: list[dict]) -> None:
        """Contact keyframes added while the solve runs reach the running solver."""
        if self.proc.poll() is None:
            self.proc.stdin.write(json.dumps({"append_keyframes": keyframes}) + "\n")
            self.proc.stdin.flush()

    def appended_answered(self, taken: bool) -> None:
        """The solver took (or refused) the oldest keyframes sent to be appended: they are the solve's now (or
        never)."""
        if self.pending:
            sent = self.pending.pop(0)
            if taken:
                self.keyframes_sent += sent

    def steer(self, items, first: int = 0) -> None:
        """The scene's contact keyframes `items` from `first` on are the solve's (Solve from Here leaves out
        those reached): each gets a `uid` of its own where it has none, or shares one (a copy), so that one
        sent while the solve runs is known wherever the list has moved it."""
        stamp(items)
        self.first = first
        self.keyframes_sent = [(item.uid, item.name) for item in list(items)[first:]]

    def solve_index(self, item, list_index: int) -> int | None:
        """The solve's index of the scene's contact keyframe `item`, at `list_index` in the scene's list (those
        sent to be appended included); None for one the solve does not have (added or duplicated since it
        started: a new one to append). One whose uid an undo took back to before the solve is known by its
        place and name, where the list still has it there."""
        known = self.keyframes_sent + [kf for sent in self.pending for kf in sent]
        uids = [uid for uid, _ in known]
        if item.uid:
            return uids.index(item.uid) if item.uid in uids else None
        k = list_index - self.first
        return k if 0 <= k < len(known) and known[k][1] == item.name else None

    def send_new(self, items, item, keyframe: dict) -> None:
        """Append the scene's contact keyframe `item` (of `items`), as `keyframe`, to the running solve."""
        stamp(items)
        self.send_keyframes([keyframe])
        if self.proc.poll() is None:
            self.pending.append([(item.uid, item.name)])

    def edit_keyframe(self, index: int, keyframe: dict) -> None:
        """A contact keyframe of the solve (`index` in its order) edited while it runs: the seeds that have not
        started it take the edit."""
        if self.proc.poll() is None:
            self.proc.stdin.write(json.dumps({"edit_keyframes": [{"index": index, "keyframe": keyframe}]}) + "\n")
            self.proc.stdin.flush()

    def cancel(self) -> None:
        """Stop the solver: asked first (it marks its result.json stopped), killed if it does not end soon."""
        import subprocess
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def close(self) -> None:
        self.cancel()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self._log.close()

    def stderr_tail(self, n: int = 5) -> str:
        try:
            with open(self.log_path, encoding="utf-8") as f:
                return "".join(f.readlines()[1:][-n:]).strip()  # the first line is the command
        except OSError:
            return ""
