"""Benchmarks that compare against a reference measured in the same run (ratios, not absolute times).

`bench_rollout`: the rollout engine on the humanoid in the armchair scene, 45 rollouts × 0.35 s of
cubic-spline torques, against the physics floor: `mj_step` looping inside C (`nstep=`) on the same
model from the same start, times the number of threads.
"""
from __future__ import annotations

import os
import platform
import time

import mujoco
import numpy as np

from . import splines
from .model import build_model
from .rollout import RolloutEngine, get_state
from .task import SceneRef, build_scene


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
