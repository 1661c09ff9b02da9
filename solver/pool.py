"""Running a task's seeds: inline (`--workers 0`) or in a pool of worker processes.

Workers are spawned (never forked: MuJoCo thread pools do not survive fork), each prepares the task
and its rollout engine once and then solves seeds; every seed writes its own result.npz and sends
back only a JSON summary. Progress events travel through a queue to the parent.
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing as mp
import os
import queue as queue_mod
import time
import traceback

from .methods import get_method
from .result import write_solution
from .rollout import RolloutEngine
from .task import task_from_dict

_WORKER: dict = {}


class SeedRunner:
    """Solves seeds of one task in this process (model and engine built once)."""

    def __init__(self, task_doc: dict, out_dir: str, nthread: int, events=None):
        self.task = task_from_dict(task_doc)
        self.method = get_method(self.task.method)
        self.prepared = self.method.prepare(self.task)
        self.engine = RolloutEngine(self.prepared.engine_model(), nthread)
        self.out_dir = out_dir
        self.events = events

    def solve(self, seed: int) -> dict:
        start = time.perf_counter()
        last = [0.0]

        def progress(fraction: float, cost: float, stage: int | None = None, partial=None) -> None:
            """Progress of this seed; with `partial` (a Solution) a playable intermediate result
            (a curriculum stage's best motion) is written and announced."""
            now = time.perf_counter()
            if partial is not None:
                entry = write_solution(self.out_dir, self.prepared.built.model, seed, partial,
                                       self.task.output_fps, now - start, name=f"stage_{stage}.npz")
                if self.events is not None:
                    self.events({"event": "stage", "seed": seed, "stage": stage, "cost": float(cost),
                                 "solution": entry,
                                 "result_path": os.path.abspath(os.path.join(self.out_dir, entry["npz"]))})
                return
            if self.events is not None and (now - last[0] > 0.2 or fraction >= 1.0):
                last[0] = now
                self.events({"event": "progress", "seed": seed, "fraction": round(float(fraction), 4),
                             "cost": float(cost)})

        if getattr(self.method, "ACCEPTS_APPENDED_KEYFRAMES", False):
            from .mpc.feed import KeyframeFeed
            sol = self.method.solve(self.prepared, seed, self.engine, progress, KeyframeFeed(self.out_dir).poll)
        else:
            sol = self.method.solve(self.prepared, seed, self.engine, progress)
        return write_solution(self.out_dir, self.prepared.built.model, seed, sol, self.task.output_fps,
                              time.perf_counter() - start)

    def close(self) -> None:
        self.engine.close()


def _init_worker(task_json: str, out_dir: str, nthread: int, event_queue) -> None:
    _WORKER["runner"] = SeedRunner(json.loads(task_json), out_dir, nthread, event_queue.put)


def _solve_in_worker(seed: int) -> str:
    try:
        return json.dumps({"ok": _WORKER["runner"].solve(seed)})
    except Exception as e:  # reported to the parent as this seed's failure, with the traceback
        return json.dumps({"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()})


def run_seeds(task_doc: dict, seeds: list[int], out_dir: str, workers: int, emit, on_solution, on_failure) -> None:
    """Solve every seed; `emit(event)` gets progress events, `on_solution(entry)` each finished seed,
    `on_failure(seed, message)` each seed that raised."""
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
    ctx = mp.get_context("spawn")
    events = ctx.Queue()
    nthread = max(1, cores // workers)
    with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                                initargs=(json.dumps(task_doc), out_dir, nthread, events)) as pool:
        futures = {pool.submit(_solve_in_worker, seed): seed for seed in seeds}
        pending = set(futures)
        while pending:
            done, pending = cf.wait(pending, timeout=0.1, return_when=cf.FIRST_COMPLETED)
            _drain(events, emit)
            for fut in sorted(done, key=lambda f: futures[f]):
                seed = futures[fut]
                try:
                    reply = json.loads(fut.result())
                except Exception as e:  # the worker process died
                    on_failure(seed, f"worker process failed: {type(e).__name__}: {e}")
                    continue
                if "ok" in reply:
                    on_solution(reply["ok"])
                else:
                    on_failure(seed, reply["error"])
        _drain(events, emit)


def _drain(events, emit) -> None:
    while True:
        try:
            emit(events.get_nowait())
        except queue_mod.Empty:
            return
