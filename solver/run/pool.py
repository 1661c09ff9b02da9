"""Running a task's seeds: inline (`--workers 0`) or in a pool of worker processes.

Workers are fresh `python -m solver.run.worker` processes (never forked: MuJoCo thread pools do not
survive fork), each prepares the task and its rollout engine once and then solves seeds; every seed
writes its own result.npz. Parent and workers talk in JSON lines over pipes, so nothing is pickled,
and a worker that dies (killed, out of memory) costs only a retry of the seed it was solving.
"""
from __future__ import annotations

import collections
import json
import math
import os
import queue as queue_mod
import signal
import subprocess
import sys
import threading
import time

from ..formats.events import Event
from ..formats.solution import Progress
from ..formats.task import task_from_dict
from ..methods import get_method
from ..physics.result import write_solution
from ..physics.rollout import RolloutEngine
from .feed import KeyframeFeed
from .preview import MotionPreview

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # above solver/run


class SeedRunner:
    """Solves seeds of one task in this process (model and engine built once)."""

    def __init__(self, task_doc: dict, out_dir: str, nthread: int, events=None, segments=None, appended=None):
        """`segments` (an `mpc.recovery.segments.Segments`) runs particles' segments elsewhere, for methods
        that have particles; None: here. `appended` makes each seed's reader of keyframes appended
        while solving (None: the run's file in `out_dir`, `feed.KeyframeFeed`)."""
        self.task = task_from_dict(task_doc)
        self.method = get_method(self.task.method)
        self.prepared = self.method.prepare(self.task)
        self.engine = RolloutEngine(self.prepared.engine_model(), nthread)
        self.out_dir = out_dir
        self.events = events
        self.segments = segments if self.method.capabilities.particles else None
        self.appended = appended or (lambda: KeyframeFeed(out_dir).poll)

    def solve(self, seed: int) -> dict:
        start = time.perf_counter()
        last = [0.0]
        preview = MotionPreview(self.prepared.built.model, self.task.output_fps)

        def progress(report: Progress) -> None:
            """Progress of this seed; with `partial` (a Solution) a playable intermediate result
            (a curriculum stage's best motion) is written and announced."""
            now = time.perf_counter()
            cost, fraction = report.cost, report.fraction
            if report.partial is not None:
                stage = report.stage
                entry = write_solution(self.out_dir, self.prepared.built.model, seed, report.partial,
                                       self.task.output_fps, now - start, name=f"stage_{stage}.npz")
                if self.events is not None:
                    self.events({"event": Event.STAGE, "seed": seed, "stage": stage,
                                 "cost": float(cost) if math.isfinite(cost) else None,
                                 "solution": entry,
                                 "result_path": os.path.abspath(os.path.join(self.out_dir, entry["npz"]))})
                return
            if self.events is not None and report.motion is not None:
                event = preview.event(seed, *report.motion)
                if event is not None:
                    if report.reached_times is not None:
                        event["keyframes_reached"] = report.reached_times
                    self.events(event)
            if self.events is not None and (now - last[0] > 0.2 or fraction >= 1.0):
                last[0] = now
                event = {"event": Event.PROGRESS, "seed": seed, "fraction": round(float(fraction), 4),
                         "cost": float(cost) if math.isfinite(cost) else None}
                for key in ("reached", "keyframes", "iterations", "retries", "backups", "motion_time", "attempt"):
                    if getattr(report, key) is not None:
                        event[key] = getattr(report, key)
                self.events(event)

        appended = self.appended() if self.method.capabilities.appended_keyframes else None
        sol = self.method.solve(self.prepared, seed, self.engine, progress, appended, segments=self.segments)
        return write_solution(self.out_dir, self.prepared.built.model, seed, sol, self.task.output_fps,
                              time.perf_counter() - start)

    def close(self) -> None:
        self.engine.close()


class _Worker:
    """One `python -m solver.run.worker` process, its stdin for seeds and a thread forwarding its stdout
    lines to the scheduler's inbox (`(worker, None)` when the process has ended)."""

    def __init__(self, task_json: str, out_dir: str, nthread: int, inbox: queue_mod.Queue):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_PARENT, env.get("PYTHONPATH", "")) if p)
        self.proc = subprocess.Popen([sys.executable, "-m", "solver.run.worker", out_dir, str(nthread)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True,
                                     encoding="utf-8", bufsize=1)
        self.seed: int | None = None
        self.proc.stdin.write(task_json + "\n")
        self.proc.stdin.flush()
        threading.Thread(target=self._forward, args=(inbox,), name="physkey-pool-reader", daemon=True).start()

    def _forward(self, inbox: queue_mod.Queue) -> None:
        for line in self.proc.stdout:
            inbox.put((self, line))
        inbox.put((self, None))

    def assign(self, seed: int) -> None:
        self.seed = seed
        self.proc.stdin.write(json.dumps({"seed": seed}) + "\n")
        self.proc.stdin.flush()

    def finish(self) -> None:
        """No more seeds: closing stdin lets the worker exit."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def _death(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def retry_once(seed: int, who: str, why: str, deaths: collections.Counter, todo: collections.deque, emit,
               on_failure) -> None:
    """A seed whose `who` (a worker process, a Ray worker) died: solved again first, once; the
    second death reports it failed. Shared by the pool and the Ray backend."""
    deaths[seed] += 1
    if deaths[seed] == 1:
        emit({"event": Event.SEED_RETRY, "seed": seed, "message": f"{who} died ({why}); solving seed {seed} again"})
        todo.appendleft(seed)
    else:
        on_failure(seed, f"{who} died twice ({why})")


def run_seeds(task_doc: dict, seeds: list[int], out_dir: str, workers: int, emit, on_solution, on_failure) -> None:
    """Solve every seed; `emit(event)` gets progress events, `on_solution(entry)` each finished seed,
    `on_failure(seed, message)` each seed that raised or whose worker died twice (a seed whose worker
    process dies, e.g. killed, is retried once in a fresh worker; the other seeds carry on)."""
    cores = os.cpu_count() or 1
    if workers == 0:
        runner = SeedRunner(task_doc, out_dir, nthread=cores, events=emit)
        try:
            for seed in seeds:
                on_solution(runner.solve(seed))
        finally:
            runner.close()
        return
    workers = min(workers, len(seeds))
    nthread = max(1, cores // workers)
    task_json = json.dumps(task_doc, allow_nan=False)
    inbox: queue_mod.Queue = queue_mod.Queue()
    todo = collections.deque(seeds)
    deaths: collections.Counter = collections.Counter()
    live: set[_Worker] = set()

    def start_next(worker: _Worker | None = None) -> None:
        if not todo:
            if worker is not None:
                worker.finish()
            return
        if worker is None:
            worker = _Worker(task_json, out_dir, nthread, inbox)
            live.add(worker)
        worker.assign(todo.popleft())

    try:
        for _ in range(workers):
            start_next()
        while live:
            worker, line = inbox.get()
            if line is None:
                live.discard(worker)
                returncode = worker.proc.wait()
                if worker.seed is not None:
                    retry_once(worker.seed, "worker process", _death(returncode), deaths, todo, emit, on_failure)
                    start_next()
                continue
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                sys.stderr.write(line)
                continue
            if "reply" not in message:
                emit(message)
                continue
            seed, reply = worker.seed, message["reply"]
            worker.seed = None
            if "ok" in reply:
                on_solution(reply["ok"])
            else:
                sys.stderr.write(reply.get("traceback", ""))
                on_failure(seed, reply["error"])
            start_next(worker)
    finally:
        for worker in live:
            worker.kill()
