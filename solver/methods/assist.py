"""`assist`: assisted keyframes — CMA-ES over residual PD targets, time-indexed assist-force
modulation and keyframe timing (Kim et al. 2021).

The character drives its joints with PD servos (targets = interpolated keyframes + residual Δθ);
every link's centre of mass is pulled by a β-modulated spring-damper towards the reference's. A
solution is `success` when its keyframe error is at most 5% of the unoptimized motion's and each key in
the air is risen to (`physics.airborne`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import mujoco
import numpy as np

from ..assist.optimizer import AssistOptimizer
from ..assist.problem import Problem
from ..core.errors import InvalidInput
from ..formats.pose_keyframes import Keyframes, resolve, scene_at_first_pose
from ..formats.settings import AssistSettings, method_settings
from ..formats.solution import Progress, Solution
from ..formats.task import Task, build_scene
from ..physics.airborne import airborne_words
from ..physics.model import BuiltModel, build_model
from ..physics.quality import motion_quality
from ..physics.rollout import DIVERGED, RolloutEngine, get_state
from ..physics.verdict import quality_words
from .base import Batch, Capabilities, Method, Prepared
from .physical import airborne_of, close_enough, outcome, physical_rank, physical_settings, physical_version

SUCCESS_RATIO = 0.05  # kf_error ≤ 5% of the unoptimized motion's
PHYSICAL_SHARE = 0.7  # of a solve's progress, the assisted search's when the physical version follows


@dataclass
class AssistPrepared(Prepared):
    keyframes: Keyframes

    def batch(self) -> Batch:
        """A whole generation over the longest motion the timing bounds allow."""
        nstep = int(np.ceil(float(np.sum(self.keyframes.dt_max)) / self.built.model.opt.timestep)) + 1
        return Batch("settings.population", self.built.model, self.settings.population, nstep)


class Assist(Method):
    name = "assist"
    settings_type = AssistSettings
    capabilities = Capabilities(partial_solutions=True)

    def prepare(self, task: Task) -> AssistPrepared:
        return _prepare(task)

    def solve(self, prep: AssistPrepared, seed: int, engine: RolloutEngine, progress=None,
              appended=None, segments=None) -> Solution:
        return _solve(prep, seed, engine, progress)


def _prepare(task: Task) -> AssistPrepared:
    settings = method_settings(AssistSettings, task.settings)
    physical_settings(settings.physical_settings)  # refused now, not after the search
    scene = build_scene(task.scene)
    for body in scene.character.bodies:
        for k, joint in enumerate(body.joints):
            if joint.type != "hinge":  # keyframes, reference and PD targets are hinge angles
                where = "scene.character"
                if task.scene.desc is not None:  # the body's index as the task file lists it
                    i = [b.name for b in task.scene.desc.character.bodies].index(body.name)
                    where = f"scene.desc.character.bodies[{i}].joints[{k}].type"
                raise InvalidInput(where, f"the assist method drives hinge joints only; '{joint.name}' is a "
                                   f"{joint.type} joint")
    _, kfs = resolve(task.keyframes, scene)
    scene = scene_at_first_pose(scene, kfs)  # the motion starts at the first keyframe, at rest
    built = build_model(scene, actuation="position", assist_bodies=[b.name for b in scene.character.bodies],
                        assist_kp_per_kg=settings.assist_kp_per_kg, assist_kv_per_kg=settings.assist_kv_per_kg,
                        target_margin=settings.target_margin)
    return AssistPrepared(task, settings, built, kfs)


def initial_state(built: BuiltModel) -> np.ndarray:
    data = mujoco.MjData(built.model)
    data.qpos[:] = built.initial_qpos()
    data.qvel[:] = built.initial_qvel()
    mujoco.mj_forward(built.model, data)
    return get_state(built.model, data)


def _finite(v: float):
    """A result.json number: None where the motion it measures diverged (JSON has no inf)."""
    return float(v) if np.isfinite(v) else None


def _contacts(built: BuiltModel, state: np.ndarray) -> list[str]:
    """What the character touches in `state`: "character body/what it touches" for every contact
    between the character and the environment ("floor" for the ground plane), sorted. It says where
    a replay is at a keyframe, e.g. whether a jump replayed without assist lands on its box."""
    m = built.model
    data = mujoco.MjData(m)
    mujoco.mj_setState(m, data, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    mujoco.mj_forward(m, data)
    character = {m.body(b).id for b in built.character_bodies}
    pairs = set()
    for c in data.contact[:data.ncon]:
        b1, b2 = int(m.geom_bodyid[c.geom1]), int(m.geom_bodyid[c.geom2])
        if (b1 in character) == (b2 in character):
            continue
        mine, other, other_geom = (b1, b2, c.geom2) if b1 in character else (b2, b1, c.geom1)
        what = m.body(other).name if other else (m.geom(other_geom).name or "floor")
        pairs.add(f"{m.body(mine).name}/{what}")
    return sorted(pairs)


def _solution(opt: AssistOptimizer, problem: Problem, x: np.ndarray, upto: int, success: bool, cost: float,
              summary: dict | None = None) -> Solution:
    """Simulate x up to keyframe `upto` (its own timing) and package the motion. If the replay
    diverges, the motion stops at its last good state and the solution is unstable."""
    d = problem.decode(x[None])
    t_end = float(d.keyframe_times[0, upto])
    nstep = max(1, int(np.ceil(t_end / problem.dt_sim - 1e-9)))
    _, traj, beta = opt.simulate(x[None], nstep=nstep, keep=True)
    bad = int(traj.diverged_at[0])
    good = nstep if bad < 0 else bad
    times, qpos = opt.from_start(traj.state[0][:good])
    unstable_time = float(times[-1]) if bad >= 0 else None
    kf_times = d.keyframe_times[0, :upto + 1]
    if unstable_time is not None:  # keyframes after the blow-up were never played
        kf_times = kf_times[kf_times <= unstable_time + 1e-9]
    return Solution(times=times, qpos=qpos, success=success and unstable_time is None, cost=cost,
                    keyframes_reached=[round(float(t), 6) for t in kf_times],
                    arrays={"beta": np.concatenate([beta[0, :1], beta[0, :good]]), "keyframe_times": kf_times},
                    summary=summary or {}, unstable_time=unstable_time,
                    unstable_reason=None if unstable_time is None else DIVERGED)


def _solve(prep: AssistPrepared, seed: int, engine: RolloutEngine, progress) -> Solution:
    """Search (started over where it misses, `search_restarts`), package the motion and make it physical; a
    plan whose search reached the sketch but whose physical version stops short or ends past 10% is
    searched anew (`replans`, `_plan_again`) and the plan with the better physical version kept.
    `plans` in the kept solution's summary lists each."""
    problem = Problem(prep.built, prep.keyframes, prep.settings)
    opt = AssistOptimizer(problem, engine, initial_state(prep.built))
    K = len(prep.keyframes.qpos)
    zero = np.zeros((1, problem.ndim))
    kf_initial = float(opt.evaluate(zero, K - 1).kf_error[0])

    share = PHYSICAL_SHARE if prep.settings.physical else 1.0  # of the progress bar: the rest is tracking's

    attempt = 0  # the search under way: plan · (search_restarts + 1) + retry, each drawing CMA-ES noise of its own
    again = 0  # searches started over so far, over every plan: the progress's retries

    def on_generation(samples, best, stage, motion=None):  # motion: the search's new best, for a live preview
        if progress:
            progress(Progress(share * min(samples / prep.settings.samples, 1.0), best, retries=again or None,
                              motion=motion))

    def on_stage(stage, x, f):  # the first search's stages only: a search started over does not replace them
        if progress and stage < K - 1 and attempt == 0:
            progress(Progress(share * min(1.0, stage / (K - 1)), f, stage=stage,
                              partial=_solution(opt, problem, x, stage, False, f)))

    def on_tracking(p):
        if progress:
            # `retries` counts searches started over only (a physical version's second tracking is no search
            # started over); the physical version as it is tracked goes to the live preview
            progress(Progress(share + (1.0 - share) * p.fraction, p.cost, retries=again or None, motion=p.motion))

    kept, plans = None, []
    for plan in range(prep.settings.replans + 1):
        plan_start = time.perf_counter()
        # A search that misses starts over with fresh noise (`search_restarts`); the closest to the keyframes is kept.
        found, searches = None, []
        for retry in range(prep.settings.search_restarts + 1):
            attempt = plan * (prep.settings.search_restarts + 1) + retry
            again = len(searches) + sum(p["searches"] for p in plans)
            result = opt.run(seed, on_generation, on_stage, attempt)
            error = float(opt.evaluate(result[0][None], K - 1).kf_error[0])
            searches.append({"kf_error": _finite(error), "samples": int(result[3]),
                             "wall_s": round(result[2].wall_s[-1], 3) if result[2].wall_s else 0.0})
            if found is None or error < found[0]:
                found = (error, result)
            if np.isfinite(error) and error <= SUCCESS_RATIO * kf_initial:
                break
        solution = _package(prep, opt, problem, kf_initial, found, searches, seed, engine.nthread, on_tracking)
        physical = solution.variants.get("physical")
        plans.append({"kf_error": solution.summary["kf_error"], "success": solution.success,
                      "within": solution.summary["within"], "searches": len(searches),
                      "physical": None if physical is None else outcome(physical),
                      "wall_s": round(time.perf_counter() - plan_start, 3)})
        if kept is None or _better_plan(solution, kept):
            kept = solution
        if not _plan_again(plans):
            break
    kept.summary["plans"] = plans  # each plan's assisted keyframe error and physical outcome; the kept one's above
    return kept


def _plan_again(plans: list[dict]) -> bool:
    """Whether to search anew after `plans` (the entries of a solution's `plans`, the last just made):
    only where the last search reached the sketch (a search that missed has had its own fresh starts,
    `retries`, and its motion is off the sketch even with assist) and physics could not follow it
    closely — and not where two plans' physical versions stopped at the same keyframe: that keyframe
    is beyond the character, not beyond a plan (the jumps' take-off, every plan)."""
    last = plans[-1]
    if last["physical"] is None or not last.get("within", last["success"]) or close_enough(last["physical"]):
        return False
    stops = [p["physical"]["keyframes_reached"] for p in plans
             if p["physical"] is not None and not p["physical"]["success"]]
    return len(stops) == len(set(stops))


def _better_plan(a: Solution, b: Solution) -> bool:
    """Whether plan `a` (an assisted solution with or without its physical version) beats `b`: a
    physical version close to the sketch first, then an assisted search within its 5%, then the better
    physical version (`physical_rank`), then the closer assisted motion."""
    def rank(s: Solution):
        phys = s.variants.get("physical")
        out = None if phys is None else outcome(phys)
        err = s.summary["kf_error"]
        within = s.summary.get("within", s.success) and s.unstable_time is None  # the search's 5%, not its ✓
        return (not (out is not None and close_enough(out)), not within,
                physical_rank(out) if out is not None else (True, 0, True, float("inf")),
                float("inf") if err is None else err)
    return rank(a) < rank(b)


def _package(prep: AssistPrepared, opt: AssistOptimizer, problem: Problem, kf_initial: float, found: tuple,
             searches: list[dict], seed: int, nthread: int, on_tracking) -> Solution:
    """The assisted solution of a search (`found`: its keyframe error and `AssistOptimizer.run`'s
    result): its motion, what it took (assist force, timing), what its replay without assist
    touches, and, with `physical`, its physical version."""
    start = time.perf_counter()
    K = len(prep.keyframes.qpos)
    kf_error, (x, f, hist, samples) = found
    best = opt.evaluate(x[None], K - 1)
    d, traj, beta = opt.simulate(x[None], beta_off=True, keep=True)
    kf_no_assist = float(problem.keyframe_error(d, traj.state, K - 1, traj.diverged_at)[0])
    bad_off = int(traj.diverged_at[0]) if traj.diverged_at[0] >= 0 else traj.state.shape[1]
    contacts_off = [_contacts(prep.built, opt.state0)]
    for k in range(1, K):
        n_k = int(problem.end_step(d, k, traj.state.shape[1])[0])
        contacts_off.append(None if n_k >= bad_off else _contacts(prep.built, traj.state[0, n_k]))
    _, traj_on, beta_on = opt.simulate(x[None], keep=True)
    t_end = float(best.decoded.keyframe_times[0, -1])
    n_end = max(1, int(np.ceil(t_end / problem.dt_sim - 1e-9)))
    if traj_on.diverged_at[0] >= 0:  # measure the help given up to the blow-up only
        n_end = max(1, min(n_end, int(traj_on.diverged_at[0])))
    slices = prep.built.sensor_slices
    force = np.abs(np.concatenate([traj_on.sensordata[0, :n_end, slices[f"assist_{b}_force"]]
                                   for b in prep.built.assist_bodies], axis=1)).sum(axis=1)
    mass = float(prep.built.model.body_subtreemass[prep.built.model.body(prep.built.character_bodies[0]).id])
    final = f
    reach = next((i for i, b in enumerate(hist.best)  # scored as the final cost was (full λ_β, last stage)
                  if hist.stage[i] == K - 1 and hist.beta_scale[i] == 1.0 and b <= 1.1 * final), None)
    summary = {"kf_error": _finite(kf_error), "kf_error_initial": _finite(kf_initial),
               "kf_error_no_assist": _finite(kf_no_assist),
               "no_assist_contacts": contacts_off,  # per keyframe: what the replay without assist touches
               "assist_mean_beta2": float(np.mean(beta_on[0, :n_end] ** 2)),
               # Help actually given: the summed assist force, in multiples of the character's weight.
               "assist_mean_force_bw": float(force.mean() / (mass * 9.81)),
               "keyframe_times": [round(float(t), 6) for t in best.decoded.keyframe_times[0]],
               "samples": int(samples), "generations": len(hist.best), "beta_mode": prep.settings.beta_mode,
               "searches": searches,  # each search's keyframe error, samples and wall time; the kept one's below
               "samples_to_1.1x": hist.samples[reach] if reach is not None else None,
               "wall_s_to_1.1x": round(hist.wall_s[reach], 3) if reach is not None else None,
               "optimizer_wall_s": round(sum(s["wall_s"] for s in searches) + time.perf_counter() - start, 3)}
    success = bool(np.isfinite(kf_error) and np.isfinite(kf_initial) and kf_error <= SUCCESS_RATIO * kf_initial)
    summary["within"] = success  # the search reached its 5% (what decides another plan)
    solution = _solution(opt, problem, x, K - 1, success, float(f), summary)
    solution.summary["quality"] = motion_quality(prep.built.model, prep.built.character_bodies, solution.times,
                                                 solution.qpos, roles=prep.built.roles)
    solution.summary["airborne"] = airborne_of(prep.built, prep.keyframes, solution.arrays["keyframe_times"],
                                               solution.times, solution.qpos)
    # within 5% of the keys is not a jump if it never leaves the floor (a squat-jump at 2% rose 3 of 25 cm)
    solution.success = solution.success and all(a["reached"] for a in solution.summary["airborne"])
    solution.summary["words"] = [*quality_words(solution.summary["quality"]),
                                 *airborne_words(solution.summary["airborne"])]
    if prep.settings.physical and solution.unstable_time is None:
        solution.variants["physical"] = physical_version(
            prep, solution, summary["keyframe_times"], force, problem.dt_sim, kf_initial, seed, nthread,
            on_tracking, prep.settings.physical_retries)
    return solution


ASSIST = Assist()
