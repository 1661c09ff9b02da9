"""`python -m solver`: validate, run, export-mjcf, import-mjcf (benchmarks: `python -m benchmarks.bench`).

Exit codes: 0 ok, 2 invalid input (one line naming the field path), 1 internal error (traceback on
stderr). With `--jsonl`, stdout carries one JSON event per line: start, progress, solution, done,
error; otherwise a progress bar goes to stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import traceback

from ..core import schema
from ..core.errors import InvalidInput
from ..formats.events import Event

EXIT_OK, EXIT_INTERNAL, EXIT_INVALID = 0, 1, 2


class Events:
    """Where run events go: JSON lines on stdout, or a progress bar and summary lines on stderr."""

    def __init__(self, jsonl: bool):
        self.jsonl = jsonl
        self.fraction: dict[int, float] = {}
        self._lock = threading.Lock()  # events also come from the stdin reader thread
        self._stdout = None  # stdout of its own, once others print (keep_stdout)

    @property
    def stdout(self):
        return self._stdout or sys.stdout

    def keep_stdout(self) -> None:
        """From here on only this run's own output reaches stdout: anything else printed, from Python
        or C++ (Ray's messages about its workers), goes to stderr, so a --jsonl stream stays JSON."""
        sys.stdout.flush()
        self._stdout = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr

    def __call__(self, event: dict) -> None:
        if self.jsonl:
            line = json.dumps(event, allow_nan=False, default=float) + "\n"
            with self._lock:
                self.stdout.write(line)
                self.stdout.flush()
            return
        kind = event["event"]
        if kind == Event.PROGRESS:
            # A retried segment starts over; the bar does not go back (the furthest a seed got).
            self.fraction[event["seed"]] = max(self.fraction.get(event["seed"], 0.0), event["fraction"])
            total = sum(self.fraction.values()) / max(len(self.seeds), 1)
            bar = "#" * int(30 * total)
            cost = "-" if event.get("cost") is None else f"{event['cost']:.4g}"
            where = f"  keyframe {event['reached']}/{event['keyframes']}" if "reached" in event else ""
            if event.get("motion_time") is not None:
                where += f"  at {event['motion_time']:.2f} s"
            if event.get("retries") or event.get("backups"):  # an assisted search retries, never backs up
                where += "  " + ", ".join(f"{label} {event[key]}" for key, label in
                                          (("retries", "retries"), ("backups", "back-ups")) if key in event)
            sys.stderr.write(f"\r[{bar:<30}] {100 * total:5.1f}%  cost {cost}{where}  ")
            sys.stderr.flush()
        elif kind == Event.SOLUTION:
            s = event["solution"]
            outcome = ("success" if s["success"] else "FAILED") if s.get("status") != "unstable" else \
                f"UNSTABLE at {s['unstable_time']:.3f} s"
            line = (f"seed {s['seed']}: {outcome}, cost {s['cost']:.4g}, "
                    f"{s['duration_s']:.2f} s of motion, {s['wall_s']:.2f} s wall")
            sys.stderr.write(f"\r{line:<72}\n")
        elif kind == Event.START:
            for note in event.get("notes", []):
                sys.stderr.write(f"note: {note}\n")
        elif kind == Event.ERROR:
            sys.stderr.write(f"\nerror: {event['message']}\n")
        elif kind == Event.SEED_FAILED:
            sys.stderr.write(f"\nseed {event['seed']} failed: {event['message']}\n")

    seeds: list = []


def prepare_task(task, num_seeds=None):
    """Everything `validate` checks for a parsed task: seeds, the method's settings and keyframes,
    and the compiled model. Returns (task, prepared); bad input raises InvalidInput."""
    from ..formats.task import with_seeds
    from ..methods import get_method
    task = with_seeds(task, num_seeds)
    method = get_method(task.method)
    method.check_task(task)
    return task, method.prepare(task)


def _prepare(task_path: str, num_seeds=None, character: str | None = None, notes: list[str] | None = None,
             draft: bool = False):
    """(task, prepared) of the task file, its character replaced by the one in `character` (a file) when
    given, at Draft quality with `draft` (`formats.settings.DRAFT`); what that changed is appended to
    `notes`."""
    from ..formats.task import load_task
    task = load_task(task_path)
    if draft:
        import dataclasses

        from ..formats.settings import draft as at_draft
        from ..formats.settings import draft_words
        task = dataclasses.replace(task, settings=at_draft(task.method, task.settings))
        if notes is not None and draft_words(task.method):
            notes.append("Draft quality: " + draft_words(task.method))
    if character is not None:
        from ..physics.character_start import with_character
        task = with_character(task, character, [] if notes is None else notes)
    return prepare_task(task, num_seeds)


def _check_memory(prepared, workers: int) -> None:
    """Refuse, before anything runs, a batch (rollouts × steps × workers) beyond half the machine's memory."""
    from ..core.memory import check_batch, check_retained
    batch = prepared.batch()
    if batch is not None:
        check_batch(batch.setting, batch.model, batch.rollouts, batch.steps, workers)
    retained = prepared.retained()
    if retained is not None:
        check_retained(*retained, workers)


def cmd_validate(args) -> int:
    notes: list[str] = []
    task, prepared = _prepare(args.task, character=args.character, notes=notes)
    _check_memory(prepared, 1)
    m = prepared.built.model
    print(f"ok: task '{task.name}', method {task.method}, {len(task.keyframes)} keyframes, "
          f"{len(task.seeds)} seed(s); model {m.nbody} bodies, {m.nu} actuators, timestep {m.opt.timestep}")
    for note in notes + _notes(prepared):
        print(f"note: {note}")
    return EXIT_OK


def _notes(prepared) -> list[str]:
    """What the run leaves out or changes that the user should know before it starts (`Prepared.notes`)."""
    return prepared.notes()


def _check_out_dir(out: str) -> None:
    if os.path.exists(out) and not os.path.isdir(out):
        raise InvalidInput("--out", f"'{out}' is a file, not a folder")
    parent = os.path.dirname(os.path.abspath(out))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise InvalidInput("--out", f"'{parent}' is a file, so '{out}' cannot be created")


def _parent_gone() -> None:
    """Stdin closed under --exit-with-stdin: whoever started the run (Blender) is gone, so end it now;
    the workers follow (their own stdin closes). Finished solutions are already on disk."""
    sys.stderr.write("stdin closed: the process that started this run is gone; stopping\n")
    sys.stderr.flush()
    from .worker import EXIT_PARENT_GONE  # the same code a worker exits with when its parent is gone
    os._exit(EXIT_PARENT_GONE)


def cmd_run(args, emit: Events) -> int:
    from ..core.fileio import write_text_atomic
    from ..methods import get_method
    from ..physics.result import ResultIndex
    from .pool import run_seeds
    _check_run_options(args)
    _check_out_dir(args.out)
    notes: list[str] = []  # everything is checked before --out is touched
    task, prepared = _prepare(args.task, args.num_seeds, args.character, notes, args.draft)
    workers = args.workers if args.workers is not None else min(len(task.seeds), os.cpu_count() or 1)
    if len(task.seeds) == 1 and args.workers is None:
        workers = 0
    ray = None
    if args.backend == "ray":  # the workers' memory is the cluster's; the cluster is reached before --out
        from .ray_pool import connect
        emit.keep_stdout()
        ray = connect(args.address)
    else:
        _check_memory(prepared, max(1, min(workers, len(task.seeds))))
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:  # read-only disk, no permission: still bad input, and nothing was written
        raise InvalidInput("--out", f"cannot create '{args.out}': {e.strerror or e}") from None
    write_text_atomic(os.path.join(args.out, "model.xml"), prepared.built.to_xml())
    task_doc = schema.to_dict(task)
    write_text_atomic(os.path.join(args.out, "task.json"), schema.format_json(task_doc))
    index = ResultIndex(args.out, task.name, task.method, task.seeds)
    emit.seeds = task.seeds
    notes += _notes(prepared)
    emit({"event": Event.START, "task": task.name, "method": task.method, "seeds": task.seeds,
          "out": os.path.abspath(args.out), "model": os.path.abspath(os.path.join(args.out, "model.xml")),
          "notes": notes})
    start = time.perf_counter()
    method = get_method(task.method)
    _listen_to_stdin(args, method, prepared, emit)

    def on_solution(entry):
        index.add(entry)
        emit({"event": Event.SOLUTION, "solution": entry,
              "result_path": os.path.abspath(os.path.join(args.out, entry["npz"]))})

    def on_failure(seed, message):
        index.fail(seed, message)
        emit({"event": Event.SEED_FAILED, "seed": seed, "message": message})

    _stop_on_sigterm()
    try:
        if ray is not None:
            from .ray_pool import run_seeds_ray
            particles = method.capabilities.particles and prepared.settings.recovery.particles > 1
            run_seeds_ray(ray, task_doc, task.seeds, args.out, args.workers, emit, on_solution, on_failure,
                          particles=particles)
        else:
            run_seeds(task_doc, task.seeds, args.out, workers, emit, on_solution, on_failure)
    except KeyboardInterrupt:  # Ctrl+C, or stopped by whoever started it (Blender's Cancel): said in the file
        index.finish("stopped")
        raise
    except BaseException:
        index.finish("failed")
        raise
    ok = len(index.doc["solutions"])
    from ..physics.diversity import solutions_diversity
    built = prepared.built
    index.doc["diversity"] = solutions_diversity(built.model, built.character_bodies, args.out, index.doc["solutions"])
    index.finish("done" if ok == len(task.seeds) else "partial" if ok else "failed")
    emit({"event": Event.DONE, "result": os.path.abspath(index.path), "solutions": ok,
          "failed": len(index.doc["failed"]), "wall_s": round(time.perf_counter() - start, 3),
          "diversity": index.doc["diversity"]})
    if not args.jsonl:
        _print_summary(index.doc, len(task.seeds), time.perf_counter() - start, args.out, emit.stdout)
    return EXIT_OK if ok else EXIT_INTERNAL


def _stop_on_sigterm() -> None:
    """SIGTERM (a Cancel, `kill`) ends the run as Ctrl+C does, so result.json says it stopped."""
    import signal

    def stop(signum, frame):
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)


def _check_run_options(args) -> None:
    """The options of `run` that contradict each other or themselves (InvalidInput naming the option)."""
    if args.workers is not None and args.workers < 0:
        raise InvalidInput("--workers", f"must be 0 or more, got {args.workers}")
    if args.address is not None and args.backend != "ray":
        raise InvalidInput("--address", "a cluster address goes with --backend ray")
    if args.backend == "ray" and args.workers == 0:
        raise InvalidInput("--workers", "0 (inline) is the local backend's; with --backend ray give 1 or more")


def _listen_to_stdin(args, method, prepared, emit: Events) -> None:
    """With --jsonl, keyframes appended or edited on stdin reach the running solve (methods that take them);
    with --exit-with-stdin, the run ends when stdin closes (the parent, Blender, is gone)."""
    on_eof = _parent_gone if args.exit_with_stdin else None
    scene, sampling = prepared.built.scene, getattr(prepared.settings, "sampling", None)
    if args.jsonl and method.capabilities.appended_keyframes:
        from .feed import start_stdin_reader
        start_stdin_reader(sys.stdin, args.out, lambda items, path: method.check_appended(items, scene, path, sampling),
                           emit, on_eof, known=len(prepared.keyframes))
    elif on_eof is not None:
        threading.Thread(target=lambda: (sys.stdin.read(), on_eof()), name="physkey-parent-watch", daemon=True).start()


def _print_summary(doc: dict, seeds: int, wall_s: float, out: str, stdout) -> None:
    """The two lines a person reads after a run: how many seeds were solved, and the best."""
    ok = len(doc["solutions"])
    best = min(doc["solutions"], key=lambda e: e["cost"], default=None)
    print(f"{ok}/{seeds} seed(s) solved in {wall_s:.1f} s; results in {os.path.abspath(out)}", file=stdout)
    if best:
        where = os.path.join(os.path.abspath(out), best["npz"])
        print(f"best: seed {best['seed']} (cost {best['cost']:.4g}) -> {where}", file=stdout)


def cmd_export_mjcf(args) -> int:
    from ..core.fileio import write_text_atomic
    _, prepared = _prepare(args.task)
    if os.path.isdir(args.out):
        raise InvalidInput("--out", f"'{args.out}' is a folder; give a file name ending in .xml")
    write_text_atomic(args.out, prepared.built.to_xml())
    print(f"wrote {args.out}")
    return EXIT_OK


def cmd_import_mjcf(args) -> int:
    from ..builders.character_files import load_character_mjcf
    from ..formats.scene import save_scene
    notes: list[str] = []
    scene = load_character_mjcf(args.mjcf, notes)
    save_scene(scene, args.out)
    print(f"wrote {args.out}: character '{scene.character.name}' with {len(scene.character.bodies)} bodies, "
          f"{len(scene.environment.bodies)} environment bodies")
    for note in notes:
        print(f"note: {note}")
    return EXIT_OK


CHARACTER_HELP = ("an MJCF (.xml) or PhysKey scene (.json) file whose character replaces the task's; the task's "
                  "pairs name roles (hand_right, foot_left …) that its bodies play")


def build_parser(prog: str = "python -m solver") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="PhysKey solver")
    sub = p.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="check a task file and the model it builds")
    v.add_argument("task")
    v.add_argument("--character", default=None, help=CHARACTER_HELP)
    r = sub.add_parser("run", help="solve a task; results go to --out")
    r.add_argument("task")
    r.add_argument("--out", required=True)
    r.add_argument("--character", default=None, help=CHARACTER_HELP)
    r.add_argument("--num-seeds", type=int, default=None)
    r.add_argument("--workers", type=int, default=None,
                   help="worker processes (0 = inline); with --backend ray, the most seeds solved at once")
    r.add_argument("--backend", choices=["pool", "ray"], default="pool",
                   help="where seeds run: this machine's process pool, or a Ray cluster (pip install physkey[ray])")
    r.add_argument("--address", default=None,
                   help="with --backend ray: the cluster (host:port; default $RAY_ADDRESS, else a Ray started here)")
    r.add_argument("--draft", action="store_true",
                   help="Draft quality: a plausible first motion quickly (fewer samples, no retries; docs/SETTINGS.md)")
    r.add_argument("--jsonl", action="store_true", help="print one JSON event per line")
    r.add_argument("--exit-with-stdin", action="store_true",
                   help="stop when stdin closes (the parent is gone): for callers like Blender that hold a pipe")
    e = sub.add_parser("export-mjcf", help="write the task's model as MJCF")
    e.add_argument("task")
    e.add_argument("--out", required=True)
    i = sub.add_parser("import-mjcf", help="read an MJCF file into a SceneDesc JSON")
    i.add_argument("mjcf")
    i.add_argument("--out", required=True)
    return p


def console(prog: str = "physkey") -> int:
    """The command line with MuJoCo's warnings routed to stderr: the `physkey` command of an
    installed solver (`pip install .`), and `python -m solver`."""
    from ..core.mujoco_log import route_warnings
    route_warnings()
    return main(prog=prog)


def main(argv=None, prog: str = "python -m solver") -> int:
    args = build_parser(prog).parse_args(argv)
    jsonl = getattr(args, "jsonl", False)
    emit = Events(jsonl)
    try:
        if args.command == "validate":
            return cmd_validate(args)
        if args.command == "run":
            return cmd_run(args, emit)
        if args.command == "export-mjcf":
            return cmd_export_mjcf(args)
        return cmd_import_mjcf(args)
    except InvalidInput as e:
        if jsonl:
            emit({"event": Event.ERROR, "kind": "invalid_input", "path": e.path, "message": str(e)})
        print(f"error: {e}", file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if jsonl:
            emit({"event": Event.ERROR, "kind": "internal", "message": f"{type(e).__name__}: {e}"})
        traceback.print_exc()
        return EXIT_INTERNAL
