"""`assist`: assisted keyframes — CMA-ES over residual PD targets, time-indexed assist-force
modulation and keyframe timing (Kim et al. 2021).

The character drives its joints with PD servos (targets = interpolated keyframes + residual Δθ);
every link's centre of mass is pulled by a β-modulated spring-damper towards the reference's. A
solution is `success` when its keyframe error is at most 5% of the unoptimized motion's.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import mujoco
import numpy as np

from .. import schema
from ..assist.keyframes import Keyframes, parse_pose_keyframes
from ..assist.optimizer import AssistOptimizer
from ..assist.problem import AssistSettings, Problem
from ..model import BuiltModel, build_model
from ..rollout import RolloutEngine, get_state
from ..scene import Pose
from ..task import Task, build_scene
from . import Solution

SUCCESS_RATIO = 0.05  # kf_error ≤ 5% of the unoptimized motion's


@dataclass
class Prepared:
    task: Task
    settings: AssistSettings
    keyframes: Keyframes
    built: BuiltModel

    def engine_model(self):
        return self.built.model


def prepare(task: Task) -> Prepared:
    settings = schema.from_dict(AssistSettings, task.settings, "settings")
    scene = build_scene(task.scene)
    upright = scene.character.bodies[0].quat
    _, kfs = parse_pose_keyframes(task.keyframes, scene, upright)
    # The motion starts at the first keyframe, at rest.
    scene = copy.deepcopy(scene)
    hinges = [j.name for j in scene.joints() if j.type == "hinge"]
    first = kfs.qpos[0]
    scene.initial_pose = Pose(root_pos=[float(v) for v in first[:3]], root_quat=[float(v) for v in first[3:7]],
                              joints={n: float(v) for n, v in zip(hinges, first[7:])})
    built = build_model(scene, actuation="position", assist_bodies=[b.name for b in scene.character.bodies],
                        assist_kp_per_kg=settings.assist_kp_per_kg, assist_kv_per_kg=settings.assist_kv_per_kg)
    return Prepared(task, settings, kfs, built)


def _initial_state(built: BuiltModel) -> np.ndarray:
    data = mujoco.MjData(built.model)
    data.qpos[:] = built.initial_qpos()
    mujoco.mj_forward(built.model, data)
    return get_state(built.model, data)


def _solution(opt: AssistOptimizer, problem: Problem, x: np.ndarray, upto: int, success: bool, cost: float,
              summary: dict | None = None) -> Solution:
    """Simulate x up to keyframe `upto` (its own timing) and package the motion."""
    d = problem.decode(x[None])
    t_end = float(d.keyframe_times[0, upto])
    nstep = max(1, int(np.ceil(t_end / problem.dt_sim - 1e-9)))
    _, traj, beta = opt.simulate(x[None], nstep=nstep, keep=True)
    qpos = traj.state[0][:, problem.qpos_slice]
    times = np.concatenate([[0.0], traj.state[0][:, 0]])
    qpos = np.concatenate([opt.state0[problem.qpos_slice][None], qpos])
    return Solution(times=times, qpos=qpos, success=success, cost=cost,
                    keyframes_reached=[round(float(t), 6) for t in d.keyframe_times[0, :upto + 1]],
                    arrays={"beta": np.concatenate([beta[0, :1], beta[0]]),
                            "keyframe_times": d.keyframe_times[0, :upto + 1]},
                    summary=summary or {})


def solve(prep: Prepared, seed: int, engine: RolloutEngine, progress=None) -> Solution:
    start = time.perf_counter()
    problem = Problem(prep.built, prep.keyframes, prep.settings)
    opt = AssistOptimizer(problem, engine, _initial_state(prep.built))
    K = len(prep.keyframes.qpos)
    zero = np.zeros((1, problem.ndim))
    kf_initial = float(opt.evaluate(zero, K - 1).kf_error[0])

    def on_generation(samples, best, stage):
        if progress:
            progress(min(samples / prep.settings.samples, 1.0), best)

    def on_stage(stage, x, f):
        if progress and stage < K - 1:
            progress(min(1.0, stage / (K - 1)), f, stage=stage, partial=_solution(opt, problem, x, stage, False, f))

    x, f, hist, samples = opt.run(seed, on_generation, on_stage)
    best = opt.evaluate(x[None], K - 1)
    kf_error = float(best.kf_error[0])
    d, traj, beta = opt.simulate(x[None], beta_off=True, keep=True)
    kf_no_assist = float(problem.keyframe_error(d, traj.state, K - 1)[0])
    _, traj_on, beta_on = opt.simulate(x[None], keep=True)
    t_end = float(best.decoded.keyframe_times[0, -1])
    n_end = max(1, int(np.ceil(t_end / problem.dt_sim - 1e-9)))
    slices = prep.built.sensor_slices
    force = np.abs(np.concatenate([traj_on.sensordata[0, :n_end, slices[f"assist_{b}_force"]]
                                   for b in prep.built.assist_bodies], axis=1)).sum(axis=1)
    mass = float(prep.built.model.body_subtreemass[prep.built.model.body(prep.built.character_bodies[0]).id])
    final = f
    reach = next((i for i, b in enumerate(hist.best) if hist.stage[i] == K - 1 and b <= 1.1 * final), None)
    summary = {"kf_error": kf_error, "kf_error_initial": kf_initial, "kf_error_no_assist": kf_no_assist,
               "assist_mean_beta2": float(np.mean(beta_on[0, :n_end] ** 2)),
               # Help actually given: the summed assist force, in multiples of the character's weight.
               "assist_mean_force_bw": float(force.mean() / (mass * 9.81)),
               "keyframe_times": [round(float(t), 6) for t in best.decoded.keyframe_times[0]],
               "samples": int(samples), "generations": len(hist.best), "beta_mode": prep.settings.beta_mode,
               "samples_to_1.1x": hist.samples[reach] if reach is not None else None,
               "wall_s_to_1.1x": round(hist.wall_s[reach], 3) if reach is not None else None,
               "optimizer_wall_s": round(time.perf_counter() - start, 3)}
    success = bool(np.isfinite(kf_error) and kf_error <= SUCCESS_RATIO * kf_initial)
    return _solution(opt, problem, x, K - 1, success, float(f), summary)
