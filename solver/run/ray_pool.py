"""Running a task's seeds on a Ray cluster (`solver run --backend ray [--address ADDR]`) instead of
the local process pool (`pool.py`), for a studio's overnight bakes beyond one machine.

The same contract as `pool.run_seeds`: progress events as they come, each finished seed's result
entry, each failed seed's message. Each Ray actor is a `SeedRunner` (it prepares the task from its
JSON and compiles the model once, nothing pickled of MuJoCo's crosses machines) writing into a folder
of its own on its node; a finished seed's files come back as bytes and are written into `--out` here,
so `--out` need not be shared and the files are the pool's, byte for byte. The code the workers run
is this solver, shipped to the cluster with its scenes (Ray's `py_modules`), so every node solves
with the driver's version. A worker or node that dies costs one retry of the seed it was solving,
as in the pool. Ray is optional (`pip install physkey[ray]`); nothing else imports it.

With particles (`settings.particles` > 1 on a method that has them), a seed's actor only steers:
each batch of keyframe segments runs as Ray tasks (`RaySegments`), one CPU each, anywhere on the
cluster; a Ray worker prepares the task once and keeps it for the segments after. A segment depends
only on its job, so the bytes stay the pool's; a task lost with its node is run again by Ray.
"""
from __future__ import annotations

import collections
import hashlib
import json
import os
import shutil
import socket
import tempfile

from ..core.errors import InvalidInput
from ..core.paths import SCENES_DIR
from ..formats.events import Event
from .feed import KeyframeFeed

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # solver/, above run/
CONNECT_TIMEOUT_S = 5.0  # how long an address may take to answer before the run is refused
POLL_S = 0.2  # how often events are forwarded while seeds run


def _ray():
    try:
        import ray
    except ImportError:
        raise InvalidInput("--backend", "the ray backend needs Ray, which is not installed here "
                           "(pip install 'physkey[ray]')") from None
    return ray


def _check_reachable(address: str) -> None:
    """A `host:port` (or `ray://host:port`) that does not answer is refused at once, named, rather
    than left to Ray's connection retries (minutes). `auto` and `local` are Ray's to resolve."""
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise InvalidInput("--address", f"'{address}' is not host:port (e.g. 10.0.0.5:6379)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise InvalidInput("--address", f"cannot reach a Ray cluster at {address}: {e.strerror or e}") from None


def _staged_solver(into: str) -> str:
    """This solver with its scenes inside (`solver/_scenes`, as `pip install .` lays it out): the
    package Ray ships to the workers."""
    staged = os.path.join(into, "solver")
    shutil.copytree(PACKAGE_DIR, staged, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_scenes"))
    shutil.copytree(SCENES_DIR, os.path.join(staged, "_scenes"), ignore=shutil.ignore_patterns("__pycache__"))
    return staged


def connect(address: str | None):
    """Ray, connected to `address` (or `RAY_ADDRESS`; neither: a Ray started here for this run) with
    this solver shipped to its workers. InvalidInput for a missing Ray or an unreachable address."""
    ray = _ray()
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address:
        _check_reachable(address)
    staging = tempfile.mkdtemp(prefix="physkey-ray-ship-")
    try:
        runtime_env = {"py_modules": [_staged_solver(staging)]}
        try:
            ray.init(address=address, runtime_env=runtime_env, logging_level="ERROR", log_to_driver=False,
                     include_dashboard=False if not address else None, configure_logging=False)
        except ConnectionError as e:
            raise InvalidInput("--address", f"cannot connect to a Ray cluster at {address}: {e}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # Ray has packed and uploaded it
    return ray


_PREPARED: dict = {}  # in a Ray worker process: the last task's key → (its prepared task, rollout engine)


def _resumer(task_json: str, appended: list, edited: dict):
    """The agent-resuming function of `task_json`'s prepared task (with keyframes `appended` and `edited`
    while it ran), compiled once per worker process (only the latest task is kept: a worker serves one solve
    at a time)."""
    key = hashlib.sha256(task_json.encode("utf-8")).hexdigest()
    if key not in _PREPARED:
        from ..core.mujoco_log import route_warnings
        from ..formats.task import task_from_dict
        from ..methods import get_method
        from ..physics.rollout import RolloutEngine
        route_warnings()
        task = task_from_dict(json.loads(task_json))
        prepared = get_method(task.method).prepare(task)
        _PREPARED.clear()
        _PREPARED[key] = prepared, RolloutEngine(prepared.engine_model(), 1)
    prepared, engine = _PREPARED[key]
    return prepared.resumer(engine, appended, edited)


def run_segment_task(task_json: str, job: dict) -> tuple[dict, str]:
    """One particle's keyframe segment, as a Ray task, in plain data: (its outcome, where it ran)."""
    from ..mpc.recovery.segments import SegmentJob, run_segment
    job = SegmentJob.from_plain(job)
    outcome = run_segment(job, _resumer(task_json, job.appended, job.edited))
    return outcome.to_plain(), f"{socket.gethostname()}:{os.getpid()}"


class FeedActor:
    """Keyframes appended to the run (the driver's stdin, `feed.py`), for every seed actor to read:
    each asks for the items after the ones it has."""

    def __init__(self):
        self.items: list = []

    def extend(self, items: list) -> None:
        self.items.extend(items)

    def since(self, n: int) -> list:
        return self.items[n:]


class _RayFeed:
    """One seed's reader of the `FeedActor`: the items appended since its last poll."""

    def __init__(self, ray, feed):
        self.ray, self.feed, self.seen = ray, feed, 0

    def poll(self) -> list:
        items = self.ray.get(self.feed.since.remote(self.seen))
        self.seen += len(items)
        return items


class RaySegments:
    """Runs a batch of segments as Ray tasks and hands the outcomes back in the jobs' order, each
    reported as it arrives; `on_batch(keyframe, places)` hears where a batch ran."""

    def __init__(self, ray, task_json: str, on_batch=None):
        self.ray, self.on_batch = ray, on_batch
        self.task = ray.put(task_json)
        self.remote = ray.remote(num_cpus=1)(run_segment_task)  # Ray reruns a task its node took down

    def run(self, jobs, report):
        from ..mpc.recovery.segments import SegmentOutcome, report_outcome
        pending = {self.remote.remote(self.task, job.to_plain()): j for j, job in enumerate(jobs)}
        out, places, spent = [None] * len(jobs), [None] * len(jobs), 0
        while pending:
            ready, _ = self.ray.wait(list(pending), num_returns=1)
            for ref in ready:
                j = pending.pop(ref)
                plain, places[j] = self.ray.get(ref)
                out[j] = SegmentOutcome.from_plain(plain)
                report_outcome(report, j, spent, out[j])
                spent += out[j].iterations
        if self.on_batch is not None and jobs:
            self.on_batch(jobs[0].keyframe, places)
        return out


class SeedActor:
    """One seed worker on the cluster (a Ray actor): the task prepared once, seeds solved one at a
    time into this node's own folder, each finished seed's files handed back as bytes. With
    `particles`, its seeds' segments run as Ray tasks (`RaySegments`)."""

    def __init__(self, task_json: str, nthread: int, events, feed, particles: bool = False):
        import ray

        from ..core.mujoco_log import route_warnings
        from .pool import SeedRunner
        route_warnings()
        self.folder = tempfile.mkdtemp(prefix="physkey-ray-seed-")
        self.events = events
        self.seed = None
        segments = RaySegments(ray, task_json, self._segments_ran) if particles else None
        self.runner = SeedRunner(json.loads(task_json), self.folder, nthread, events=self._event, segments=segments,
                                 appended=lambda: _RayFeed(ray, feed).poll)

    def _segments_ran(self, keyframe: int, places: list) -> None:
        self._event({"event": Event.SEGMENTS, "seed": self.seed, "keyframe": keyframe, "ran_on": places})

    def _event(self, event: dict) -> None:
        if event.get("event") == Event.STAGE:  # a playable partial result: its file goes along
            path = event.pop("result_path")
            with open(path, "rb") as f:
                event["npz_bytes"] = f.read()
        self.events.actor.put_nowait.remote(event)  # not waited for: the solve goes on (see solve)

    def solve(self, seed: int) -> dict:
        import ray
        self.seed = seed
        self._event({"event": Event.SEED_START, "seed": seed, "pid": os.getpid(),
                     "node": ray.get_runtime_context().get_node_id()})
        entry = self.runner.solve(seed)
        ray.get(self.events.actor.qsize.remote())  # runs after this actor's queued events: all are in
        folder = os.path.join(self.folder, f"seed_{seed}")
        files = {}
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                files[name] = f.read()
        shutil.rmtree(folder, ignore_errors=True)
        return {"entry": entry, "files": files}

    def close(self) -> None:
        self.runner.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _write_seed_file(out_dir: str, seed: int, name: str, data: bytes) -> str:
    from ..core.fileio import write_bytes_atomic
    path = os.path.join(out_dir, f"seed_{seed}", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_bytes_atomic(path, data)
    return path


def run_seeds_ray(ray, task_doc: dict, seeds: list[int], out_dir: str, workers: int | None,
                  emit, on_solution, on_failure, nthread: int = 1, particles: bool = False) -> None:
    """Solve every seed on Ray (`ray` as `connect` returned it; shut down at the end), as
    `pool.run_seeds` does locally: `workers` actors at most (None: one per seed; Ray queues them on
    the cluster's CPUs), each using `nthread` rollout threads. With `particles` the actors only
    steer (no CPU of their own) and the seeds' segments are the Ray tasks that use the CPUs."""
    from ray.util.queue import Queue

    from .pool import retry_once
    try:
        # With particles the steering actors hold no CPU, so nothing would stop Ray from packing them
        # all onto one node: spread them (each holds a compiled task in memory).
        options = {"num_cpus": 0, "scheduling_strategy": "SPREAD"} if particles else {"num_cpus": nthread}
        remote = ray.remote(max_restarts=0, max_task_retries=0, **options)(SeedActor)
        events = Queue()
        feed, appended = ray.remote(num_cpus=0)(FeedActor).remote(), KeyframeFeed(out_dir)
        task_json = json.dumps(task_doc, allow_nan=False)
        todo = collections.deque(seeds)
        deaths: collections.Counter = collections.Counter()
        running: dict = {}  # object ref → (actor, seed)

        def assign(actor=None) -> None:
            if not todo:
                if actor is not None:
                    ray.get(actor.close.remote())
                    ray.kill(actor)
                return
            if actor is None:
                actor = remote.remote(task_json, nthread, events, feed, particles)
            seed = todo.popleft()
            running[actor.solve.remote(seed)] = (actor, seed)

        def forward() -> None:
            new = appended.poll()  # keyframes appended on the driver's stdin: on to the seeds
            if new:
                feed.extend.remote(new)
            waiting = events.qsize()
            for event in events.get_nowait_batch(waiting) if waiting else ():
                if "npz_bytes" in event:
                    entry = event["solution"]
                    path = _write_seed_file(out_dir, event["seed"], os.path.basename(entry["npz"]),
                                            event.pop("npz_bytes"))
                    event["result_path"] = os.path.abspath(path)
                emit(event)

        forward()  # keyframes appended before the seeds start are there for their first poll
        for _ in range(min(workers or len(seeds), len(seeds))):
            assign()
        while running:
            ready, _ = ray.wait(list(running), num_returns=1, timeout=POLL_S)
            forward()
            for ref in ready:
                actor, seed = running.pop(ref)
                try:
                    reply = ray.get(ref)
                except ray.exceptions.RayActorError as e:  # the worker or its node died
                    retry_once(seed, "Ray worker", type(e).__name__, deaths, todo, emit, on_failure)
                    assign()
                    continue
                except ray.exceptions.RayTaskError as e:  # the seed raised; its worker lives on
                    cause = e.cause if e.cause is not None else e
                    on_failure(seed, f"{type(cause).__name__}: {cause}")
                    assign(actor)
                    continue
                for name, data in reply["files"].items():
                    _write_seed_file(out_dir, seed, name, data)
                on_solution(reply["entry"])
                assign(actor)
        forward()
    finally:
        ray.shutdown()
