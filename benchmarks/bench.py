"""Benchmarks that compare against a reference measured in the same run (ratios, not absolute times).

`bench_rollout`: the rollout engine on the humanoid in the armchair scene, 45 rollouts × 0.35 s of
cubic-spline torques, against the physics floor: `mj_step` looping inside C (`nstep=`) on the same
model from the same start, times the number of threads.

Run from the repository root: `.venv/bin/python -m benchmarks.bench rollout --json` (also `mpc`,
`assist`, `track`, `hits`; `--help` lists the options). A development tool: the extension does not ship it.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import mujoco
import numpy as np

from solver.core import splines
from solver.core.errors import InvalidInput
from solver.core.mujoco_log import route_warnings
from solver.core.registry import PLANNERS, check_name
from solver.formats.task import SceneRef, build_scene
from solver.physics.model import build_model
from solver.physics.rollout import RolloutEngine, get_state

from .hits import bench_hits
from .tasks import task_file as _task_path
from .tracking import bench_track


def _planner_controls(rng, nroll: int, nstep: int, nu: int, dt: float) -> np.ndarray:
    """Controls shaped like the MPC planner's: 3 cubic knots over the horizon, noise 0.05."""
    knot_t = np.linspace(0.0, nstep * dt, 3)
    knots = np.clip(rng.normal(0.0, 0.05, (nroll, 3, nu)), -1, 1)
    return splines.evaluate(knot_t, knots, np.arange(nstep) * dt, "cubic")


def bench_rollout(nthread: int | None = None, repeats: int = 20, nroll: int = 45, horizon: float = 0.35) -> dict:
    nthread = nthread or os.cpu_count() or 1
    built = build_model(build_scene(SceneRef(environment="armchair")))
    m = built.model
    data = mujoco.MjData(m)
    data.qpos[:] = built.initial_qpos()
    mujoco.mj_forward(m, data)
    # Start from a settled state (seated, in contact), as a planner would.
    mujoco.mj_step(m, data, nstep=100)
    state0 = get_state(m, data)
    nstep = int(round(horizon / m.opt.timestep))
    rng = np.random.default_rng(0)
    ctrl = _planner_controls(rng, nroll, nstep, m.nu, m.opt.timestep)
    mean_ctrl = ctrl.mean(axis=(0, 1))
    engine = RolloutEngine(m, nthread)
    engine.run(state0, ctrl, copy=False)  # warm up threads and buffers
    floor_data = mujoco.MjData(m)
    engine_t, floor_t = [], []
    for _ in range(repeats):  # interleaved so machine noise hits both alike
        t0 = time.perf_counter()
        engine.run(state0, ctrl, copy=False)
        engine_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for _r in range(nroll):
            mujoco.mj_setState(m, floor_data, state0, mujoco.mjtState.mjSTATE_FULLPHYSICS)
            floor_data.ctrl[:] = mean_ctrl
            mujoco.mj_step(m, floor_data, nstep=nstep)
        floor_t.append(time.perf_counter() - t0)
    engine.close()
    steps = nroll * nstep
    eng = steps / float(np.median(engine_t))
    floor_1 = steps / float(np.median(floor_t))
    floor = floor_1 * nthread
    return {"benchmark": "rollout", "scene": "armchair", "model_nq": m.nq, "rollouts": nroll, "steps": nstep,
            "horizon_s": horizon, "threads": nthread, "repeats": repeats,
            "engine_ms": round(1e3 * float(np.median(engine_t)), 3),
            "engine_steps_per_s": round(eng), "floor_steps_per_s_1thread": round(floor_1),
            "floor_us_per_step": round(1e6 / floor_1, 2),
            "floor_steps_per_s": round(floor), "ratio": round(eng / floor, 3),
            "mujoco": mujoco.__version__, "cpu_count": os.cpu_count(), "python": platform.python_version()}


def _floor_seconds_per_iteration(model, state0, nroll: int, nstep: int, repeats: int = 5, nthread: int = 1) -> float:
    """Wall time of nroll × nstep steps of `mj_step` looping in C from `state0` with zero control (the
    physics floor of a planning iteration), on `nthread` threads."""
    ctrl = np.broadcast_to(np.zeros(model.nu), (nroll, nstep, model.nu))
    return _floor_of_batch(model, state0, ctrl, None, nthread, hold=nstep, repeats=repeats)


def _floor_of_batch(model, state0, ctrl, mocap_pos=None, nthread: int = 1, hold: int = 10, repeats: int = 3,
                    final_state=None) -> float:
    """Wall time of the physics floor of one batch: each rollout stepped by `mj_step` in C through its
    own controls (and mocap targets), held for `hold` steps at a time so that Python costs < 1% of the
    steps, the rollouts split over `nthread` threads (mj_step releases the GIL). The states visited
    are the batch's own, so contacts and assist springs cost what they cost in the batch.
    `final_state` (nroll, nstate), if given, receives each rollout's last state (for tests)."""
    import threading

    nroll, nstep = ctrl.shape[:2]
    datas = [mujoco.MjData(model) for _ in range(nthread)]
    parts = np.array_split(np.arange(nroll), nthread)

    def work(data, rows):
        for r in rows:
            mujoco.mj_setState(model, data, state0, mujoco.mjtState.mjSTATE_FULLPHYSICS)
            for t in range(0, nstep, hold):
                data.ctrl[:] = ctrl[r, t]
                if mocap_pos is not None:
                    data.mocap_pos[:] = mocap_pos[r, t]
                mujoco.mj_step(model, data, nstep=min(hold, nstep - t))
            if final_state is not None:
                mujoco.mj_getState(model, data, final_state[r], mujoco.mjtState.mjSTATE_FULLPHYSICS)

    best = []
    for _ in range(repeats):
        threads = [threading.Thread(target=work, args=(d, rows)) for d, rows in zip(datas, parts)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        best.append(time.perf_counter() - t0)
    return float(np.median(best))


def _progress_log(log):
    """Progress events → one line per seed each time its keyframe, retries or back-ups change."""
    last: dict = {}

    def emit(event):
        if log is None or event.get("event") != "progress" or event.get("reached") is None:
            return
        now = (event["reached"], event.get("retries"), event.get("backups"))
        if last.get(event["seed"]) != now:
            last[event["seed"]] = now
            log(f"seed {event['seed']}: keyframe {now[0]}/{event.get('keyframes')}, retries {now[1]}, "
                f"back-ups {now[2]}")
    return emit


def _finished_log(log, keep):
    """Each finished seed: kept, and its report logged as one JSON line (`_trial`)."""
    def finished(entry):
        keep(entry)
        if log is not None:
            log(f"seed {entry['seed']} done: {json.dumps(_trial(entry))}")
    return finished


def _trial(e: dict) -> dict:
    """One seed's line of the report: what failed and where, the effort, the quality."""
    return {"seed": e["seed"], "success": e["success"], "failed_keyframe": e["failed_keyframe"],
            "failure": e.get("failure"), "keyframes_reached": e["keyframes_reached"], "duration_s": e["duration_s"],
            "wall_s": e["wall_s"], "iterations": e["iterations"], "quality": e["quality"], "words": e.get("words"),
            "particles": e.get("particles")}


def _refuse_used_keep(keep: str | None) -> None:
    """A `keep` folder that holds anything is refused, so that no earlier result is overwritten."""
    if keep is not None and os.path.exists(keep) and (not os.path.isdir(keep) or os.listdir(keep)):
        raise InvalidInput("--keep", f"'{keep}' is not an empty folder; the bench keeps its results only in a new "
                           "or empty one")


def _bench_folder(keep: str | None):
    """The folder a bench writes its seeds' results to: `keep` (made if missing), else a temporary one
    removed afterwards. Made only once the task is loaded, so a bad task leaves no folder behind."""
    import contextlib
    import tempfile
    if keep is None:
        return tempfile.TemporaryDirectory(prefix="physkey-bench-")
    os.makedirs(keep, exist_ok=True)
    return contextlib.nullcontext(keep)


def bench_mpc(task_name: str, trials: int, rollouts: int | None = None, planner: str | None = None,
              budget: int | None = None, slowdown: float | None = None, workers: int | None = None,
              particles: int | None = None, params: dict | None = None, variant: str | None = None,
              first_seed: int = 0, log=None, keep: str | None = None, character: str | None = None) -> dict:
    """Run `trials` seeds of a contact task (on `character`, a file, in place of its own when given) and
    report the paper's Table 2 measures plus the
    planning iteration's wall time against its physics floor. `log(line)`, if given, hears each seed's
    keyframe, retries and back-ups as they change, and each finished seed's own report (a bench runs
    for hours: what it is doing is visible, and a killed one keeps its finished seeds). `keep`, a new or
    empty folder, keeps every seed's result files (the motion of a seed that failed, to trace why);
    without it they go to a temporary folder that is removed. `rollouts`, `planner`: in place of the task's own
    (None: the task's, else the defaults)."""
    from solver.core import schema
    from solver.formats.task import load_task
    from solver.methods import get_method
    from solver.physics.diversity import solutions_diversity
    from solver.physics.rollout import get_state
    from solver.run.pool import run_seeds
    _refuse_used_keep(keep)  # before any work
    path = _task_path(task_name)
    task = load_task(path)
    if task.method != "contact":
        raise InvalidInput("--task", f"'{task_name}' is a {task.method} task; bench mpc needs a contact task")
    task.settings = dict(task.settings)
    if rollouts is not None:
        task.settings["rollouts"] = rollouts
    if planner is not None:
        task.settings["planner"] = planner
    if budget is not None:
        task.settings["budget"] = budget
    if slowdown is not None:
        task.settings["slowdown"] = slowdown
    if particles is not None:
        task.settings["particles"] = particles
    if params or variant:  # a generalization variant (PartwiseMPC Table 3): the scene's parameters, the body shape
        task.scene.params = dict(task.scene.params, **(params or {}))
        task.scene.variant = variant or task.scene.variant
    if character is not None:  # the preset on a character brought from a file (its pairs name roles)
        from solver.physics.character_start import with_character
        task = with_character(task, character, [])
    task.seeds = list(range(first_seed, first_seed + trials))
    prepared = get_method("contact").prepare(task)
    rollouts = prepared.settings.sampling.rollouts  # the one the seeds plan with: the floor is measured for it
    cores = os.cpu_count() or 1
    workers = min(trials, cores) if workers is None else workers
    nthread = max(1, cores // max(workers, 1))
    entries, failures = [], []
    start = time.perf_counter()
    with _bench_folder(keep) as out:
        run_seeds(schema.to_dict(task), task.seeds, out, workers, _progress_log(log),
                  _finished_log(log, entries.append), lambda seed, msg: failures.append({"seed": seed, "error": msg}))
        wall = time.perf_counter() - start
        entries.sort(key=lambda e: e["seed"])  # the report in seed order, whichever finished first
        alternatives = solutions_diversity(prepared.built.model, prepared.built.character_bodies, out, entries,
                                           successful_only=True)
        # The floor is measured from states the trials went through (contacts change the cost of a step).
        visited = []
        for e in entries:
            with np.load(os.path.join(out, e["npz"]), allow_pickle=False) as z:
                q = z["qpos"]
            visited += [q[i] for i in np.linspace(0, len(q) - 1, 4).astype(int)]
    # the root's speed over each clip's last 0.1 s, as its quality measured it (`quality.end_state`)
    end_speeds = [e["quality"]["end"]["root_speed_mps"] for e in entries if (e["quality"].get("end") or {})]
    ok = [e for e in entries if e["success"]]
    durations = np.array([e["duration_s"] for e in ok])
    it_wall = sum(e["plan_wall_s"] for e in entries) / max(sum(e["iterations"] for e in entries), 1)
    plan = prepared.plan
    data = mujoco.MjData(plan.model)
    nstep = int(np.ceil(prepared.settings.sampling.horizon / plan.model.opt.timestep - 1e-9))
    floors = []
    for q in visited or [plan.initial_qpos()]:
        data.qpos[:] = q
        data.qvel[:] = 0.0
        mujoco.mj_forward(plan.model, data)
        floors.append(_floor_seconds_per_iteration(plan.model, get_state(plan.model, data), rollouts, nstep, 3,
                                                   nthread))
    floor = float(np.mean(floors))
    sim_time = sum(e["duration_s"] for e in entries)
    return {"benchmark": "mpc", "task": task.name, "scene_params": task.scene.params,
            "variant": task.scene.variant, "planner": prepared.settings.sampling.planner,
            "rollouts": rollouts,
            "budget": prepared.settings.effort.budget, "slowdown": prepared.settings.effort.slowdown, "trials": trials,
            "success_rate": len(ok) / trials, "successes": len(ok),
            "duration_mean_s": round(float(durations.mean()), 3) if len(ok) else None,
            "duration_std_s": round(float(durations.std()), 3) if len(ok) else None,
            "duration_min_s": round(float(durations.min()), 3) if len(ok) else None,
            "duration_max_s": round(float(durations.max()), 3) if len(ok) else None,
            "mean_cost_per_step": round(float(np.mean([e["cost"] for e in entries])), 4) if entries else None,
            "partwise_win_fraction": round(float(np.mean([e["partwise_win_fraction"] for e in entries])), 4)
            if entries else None,
            # Where each iteration's best candidate came from (mpc.planner.ORIGINS), averaged over trials.
            "won_by": {k: round(float(np.mean([e["won_by"][k] for e in entries])), 4) for k in entries[0]["won_by"]}
            if entries else None,
            "failed_keyframes": [e["failed_keyframe"] for e in entries if not e["success"]],
            "particles": prepared.settings.recovery.particles,
            "furthest_keyframes": [e["particles"]["furthest_keyframe"] for e in entries if "particles" in e],
            "backups": sum(e["particles"]["backups"] for e in entries if "particles" in e),
            "retries": sum(sum(1 for a in e["particles"]["attempts"] if a["attempt"]) for e in entries
                           if "particles" in e),
            # Motion quality of the successful solutions: the worst of each figure over the trials.
            "max_penetration_m": max((e["quality"]["max_penetration_m"] for e in ok), default=None),
            "max_fall_s": max((e["quality"]["fall_s"] or 0.0 for e in ok), default=None),
            "max_foot_sliding_m": max((e["quality"]["foot_sliding_m"] for e in ok), default=None),
            "max_jerk_rms": max((e["quality"]["jerk_rms"] for e in ok), default=None),
            # The largest sideways roll a planted foot held (degrees; feet standing on their edges).
            "max_foot_roll_deg": max((e["quality"]["foot_roll"]["deg"] for e in ok
                                      if e["quality"].get("foot_roll")), default=None),
            "max_end_root_speed_mps": round(max(end_speeds), 3) if end_speeds else None,
            # The lowest head at a successful clip's end, as a share of its standing height above the feet.
            "min_end_head_share": min((e["quality"]["end"]["head_share"] for e in ok
                                       if (e["quality"].get("end") or {}).get("head_share") is not None), default=None),
            # The lowest median pelvis height while a successful clip carries something (a share of standing).
            "min_carry_pelvis_share": min((e["quality"]["carry"]["pelvis_share"] for e in ok
                                           if e["quality"].get("carry")), default=None),
            "character": os.path.basename(character) if character else "humanoid",
            "max_body_speed_mps": max((e["quality"]["max_body_speed"]["mps"] for e in ok
                                       if e["quality"].get("max_body_speed")), default=None),
            "diversity": alternatives,
            # Per trial: what failed and where, the effort, the quality (RESULTS' "what failed" column).
            "per_trial": [_trial(e) for e in entries],
            # Planning effort: iterations per 0.015 s control step, and the machine's wall time per second
            # of successful motion (every trial's wall time, over the successful trials' motion).
            "iterations_per_step": round(sum(e["iterations"] for e in entries) / max(
                sum(e["duration_s"] for e in entries) / prepared.settings.sampling.planning_timestep, 1e-9), 3),
            "wall_s_per_motion_s": round(wall / float(durations.sum()), 2) if len(ok) else None,
            "iteration_ms": round(1e3 * it_wall, 3), "floor_iteration_ms": round(1e3 * floor, 3),
            "overhead_vs_floor": round(it_wall / floor, 3), "threads_per_trial": nthread, "workers": workers,
            # Simulated seconds per wall second of one trial (on threads_per_trial threads), and of the
            # whole machine running `workers` trials at once.
            "realtime_factor": round(sim_time / max(sum(e["wall_s"] for e in entries), 1e-9), 3),
            "throughput_realtime": round(sim_time / max(wall, 1e-9), 3),
            "wall_s": round(wall, 1), "worker_failures": failures,
            "cpu_count": cores, "mujoco": mujoco.__version__}


def bench_assist(task_name: str, seeds: int, modes=("time", "global", "none"), samples: int | None = None,
                 workers: int | None = None) -> dict:
    """Run an assisted-keyframes task per β mode (time-indexed, global, none) over `seeds` seeds:
    final cost, keyframe error, assist use, samples and wall time to reach 1.1 × the final cost, and
    one generation's wall time against the physics floor of the same batch."""
    import tempfile

    from solver.assist.optimizer import AssistOptimizer
    from solver.assist.problem import Problem
    from solver.core import schema
    from solver.formats.task import load_task
    from solver.methods.assist import ASSIST, initial_state
    from solver.physics.rollout import RolloutEngine
    from solver.run.pool import run_seeds
    path = _task_path(task_name)
    task = load_task(path)
    if task.method != "assist":
        raise InvalidInput("--task", f"'{task_name}' is a {task.method} task; bench assist needs an assist task")
    cores = os.cpu_count() or 1
    report = {"benchmark": "assist", "task": task.name, "seeds": seeds, "modes": {}, "cpu_count": cores,
              "mujoco": mujoco.__version__}
    for mode in modes:
        t = schema.from_dict(type(task), schema.to_dict(task))
        t.settings = dict(t.settings, beta_mode=mode, **({"samples": samples} if samples else {}))
        t.seeds = list(range(seeds))
        entries = []
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="physkey-bench-") as out:
            run_seeds(schema.to_dict(t), t.seeds, out, min(seeds, cores) if workers is None else workers,
                      lambda e: None, entries.append,
                      lambda seed, msg, entries=entries: entries.append({"error": msg}))
        ok = [e for e in entries if "error" not in e]

        def mean(key, ok=ok):
            vals = [e[key] for e in ok if e.get(key) is not None]
            return round(float(np.mean(vals)), 4) if vals else None
        report["modes"][mode] = {
            "final_cost": mean("cost"), "kf_error": mean("kf_error"), "kf_error_initial": mean("kf_error_initial"),
            "kf_error_ratio": round(mean("kf_error") / mean("kf_error_initial"), 4) if ok else None,
            "kf_error_no_assist": mean("kf_error_no_assist"), "assist_mean_beta2": mean("assist_mean_beta2"),
            "samples": mean("samples"), "samples_to_1.1x": mean("samples_to_1.1x"),
            "wall_s_to_1.1x": mean("wall_s_to_1.1x"), "wall_s": mean("wall_s"),
            "successes": sum(bool(e.get("success")) for e in ok),
            "errors": [e["error"] for e in entries if "error" in e],
            "bench_wall_s": round(time.perf_counter() - start, 1)}
    # One generation against its physics floor, on all cores, time-indexed mode.
    prep = ASSIST.prepare(task)
    problem = Problem(prep.built, prep.keyframes, prep.settings)
    with RolloutEngine(prep.built.model, cores) as engine:
        opt = AssistOptimizer(problem, engine, initial_state(prep.built))
        X = np.random.default_rng(0).normal(0.0, prep.settings.sigma0, (prep.settings.population, problem.ndim))
        K = len(prep.keyframes.qpos)
        opt.evaluate(X, K - 1)
        gen_t = []
        for _ in range(5):
            t0 = time.perf_counter()
            opt.evaluate(X, K - 1)
            gen_t.append(time.perf_counter() - t0)
    nstep = int(np.ceil(problem.decode(X).keyframe_times[:, -1].max() / problem.dt_sim - 1e-9))
    ctrl, mocap, _ = problem.controls(problem.decode(X), nstep)
    floor = _floor_of_batch(prep.built.model, opt.state0, ctrl, mocap, cores)
    report.update({"generation_ms": round(1e3 * float(np.median(gen_t)), 2),
                   "floor_generation_ms": round(1e3 * floor, 2),
                   "generation_vs_floor": round(float(np.median(gen_t)) / floor, 3), "population": len(X),
                   "steps_per_rollout": nstep, "threads": cores})
    return report


def _scene_params(text: str | None) -> dict:
    """`height=0.3,tilt=15` → {"height": 0.3, "tilt": 15.0}; InvalidInput naming --params otherwise."""
    out = {}
    for item in filter(None, (text or "").split(",")):
        key, sep, value = item.partition("=")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not key.strip():
            raise InvalidInput("--params", f"'{item}' is not NAME=NUMBER")
    return out


def cmd_bench(args) -> int:
    if args.what == "rollout":
        report = bench_rollout(nthread=args.threads, repeats=args.repeats)
    elif args.what == "track":
        if not args.task:
            raise InvalidInput("--task", "bench track needs --task NAME (an assist or a track task in scenes/tasks)")
        report = bench_track(args.task, args.seeds, workers=args.workers)
    elif args.what == "hits":
        if not args.task:
            raise InvalidInput("--task", "bench hits needs --task NAME (a hit-reaction task in scenes/tasks)")
        if args.planner is not None:
            check_name("planner", PLANNERS, args.planner, "--planner")
        report = bench_hits(args.task, args.seeds, workers=args.workers, planner=args.planner)
    elif args.what == "assist":
        if not args.task:
            raise InvalidInput("--task", "bench assist needs --task NAME (an assist task in scenes/tasks)")
        report = bench_assist(args.task, args.seeds, samples=args.samples, workers=args.workers)
    else:
        if not args.task:
            raise InvalidInput("--task", "bench mpc needs --task NAME (a contact task in scenes/tasks)")
        if args.planner is not None:
            check_name("planner", PLANNERS, args.planner, "--planner")
        if args.trials < 1 or args.first_seed < 0:
            raise InvalidInput("--trials" if args.trials < 1 else "--first-seed", "must be at least 1 (trials) and "
                               "0 (first seed)")
        report = bench_mpc(args.task, args.trials, args.rollouts, args.planner, args.budget, args.slowdown,
                           args.workers, args.particles, _scene_params(args.params), args.variant, args.first_seed,
                           log=lambda line: print(line, file=sys.stderr, flush=True), keep=args.keep,
                           character=args.character)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        for k, v in report.items():
            print(f"{k:>22}: {v}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench",
                                description="PhysKey benchmarks (a development tool; not shipped with the extension)")
    p.add_argument("what", choices=["rollout", "mpc", "assist", "track", "hits"])
    p.add_argument("--json", action="store_true")
    p.add_argument("--threads", type=int, default=None, help="rollout: threads")
    p.add_argument("--repeats", type=int, default=20, help="rollout: timing repeats")
    p.add_argument("--task", help="mpc: contact task name or file")
    p.add_argument("--trials", type=int, default=4, help="mpc: seeds to run")
    p.add_argument("--first-seed", type=int, default=0, help="mpc: the first of the --trials seeds")
    p.add_argument("--rollouts", type=int, default=None, help="mpc: N (default the task's)")
    p.add_argument("--planner", default=None,
                   help=f"mpc, hits (default the task's): a registered planner "
                   f"({', '.join(PLANNERS)})")
    p.add_argument("--budget", type=int, default=None, help="mpc: planning iterations per control step")
    p.add_argument("--slowdown", type=float, default=None, help="mpc: Γ (wall-clock budget) instead of --budget")
    p.add_argument("--params", default=None, help="mpc: scene parameters, e.g. height=0.3,tilt=15 (Table 3)")
    p.add_argument("--variant", default=None, help="mpc: the character's body-shape variant (big_arms, …)")
    p.add_argument("--character", default=None, help="mpc: an MJCF or scene file whose character replaces the task's")
    p.add_argument("--particles", type=int, default=None, help="mpc: particles per seed (default: the task's)")
    p.add_argument("--workers", type=int, default=None, help="mpc/assist/track: worker processes")
    p.add_argument("--seeds", type=int, default=2, help="assist: seeds per β mode; track, hits: seeds")
    p.add_argument("--samples", type=int, default=None, help="assist: sample budget per seed")
    p.add_argument("--keep", default=None, help="mpc: a new or empty folder to keep every seed's result files in")
    return p


def main(argv=None) -> int:
    """Exit codes as the solver's command line: 0 ok, 2 invalid input (one line naming it)."""
    route_warnings()
    args = build_parser().parse_args(argv)
    try:
        return cmd_bench(args)
    except InvalidInput as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
