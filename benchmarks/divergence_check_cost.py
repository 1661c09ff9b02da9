"""What the rollout engine's divergence check (`rollout.find_divergence`) costs, as a fraction of a
planning iteration (armchair_stand_sit_stand, default planner) and of a CMA-ES generation
(assist_box_jump_low, default population, full horizon).

    .venv/bin/python benchmarks/divergence_check_cost.py [--threads N]

The check runs inside `RolloutEngine.run`; it is timed by wrapping the function, so the iteration
and generation times include it.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import mujoco
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import solver.physics.rollout as rollout  # noqa: E402
from solver.assist.optimizer import AssistOptimizer  # noqa: E402
from solver.assist.problem import Problem  # noqa: E402
from solver.core.mujoco_log import route_warnings  # noqa: E402
from solver.formats.task import load_task  # noqa: E402
from solver.methods.assist import ASSIST as assist  # noqa: E402
from solver.methods.contact import CONTACT as contact  # noqa: E402
from solver.mpc.objectives.contact import Objective  # noqa: E402
from solver.mpc.planners.base import Planner  # noqa: E402

TASKS = Path(__file__).resolve().parents[1] / "scenes" / "tasks"


class Timed:
    """Wraps rollout.find_divergence and adds up the time spent in it."""

    def __enter__(self):
        self.total, self.orig = 0.0, rollout.find_divergence

        def timed(*args, **kwargs):
            t = time.perf_counter()
            out = self.orig(*args, **kwargs)
            self.total += time.perf_counter() - t
            return out

        rollout.find_divergence = timed
        return self

    def __exit__(self, *exc):
        rollout.find_divergence = self.orig


def planner_cost(threads: int, iterations: int = 100) -> dict:
    prep = contact.prepare(load_task(str(TASKS / "armchair_stand_sit_stand.json")))
    m = prep.plan.model
    d = mujoco.MjData(m)
    d.qpos[:] = prep.built.initial_qpos()
    mujoco.mj_forward(m, d)
    s0 = rollout.get_state(m, d)
    with rollout.RolloutEngine(m, threads) as engine:
        planner = Planner(prep.plan, Objective(prep.plan), prep.settings, np.random.default_rng(0), engine)
        for _ in range(5):
            planner.iterate(s0, 0.0, prep.keyframes[0])
        with Timed() as check:
            start = time.perf_counter()
            for _ in range(iterations):
                planner.iterate(s0, 0.0, prep.keyframes[0])
            total = time.perf_counter() - start
    return {"rollouts": prep.settings.sampling.rollouts, "steps": planner.nstep, "nstate": engine.nstate,
            "iteration_ms": round(1e3 * total / iterations, 3), "check_us": round(1e6 * check.total / iterations, 1),
            "fraction": round(check.total / total, 5)}


def assist_cost(threads: int, generations: int = 10) -> dict:
    prep = assist.prepare(load_task(str(TASKS / "assist_box_jump_low.json")))
    problem = Problem(prep.built, prep.keyframes, prep.settings)
    K = len(prep.keyframes.qpos)
    X = np.random.default_rng(0).normal(0.0, prep.settings.sigma0, (prep.settings.population, problem.ndim))
    with rollout.RolloutEngine(prep.built.model, threads) as engine:
        opt = AssistOptimizer(problem, engine, assist._initial_state(prep.built))
        opt.evaluate(X, K - 1)
        with Timed() as check:
            start = time.perf_counter()
            for _ in range(generations):
                opt.evaluate(X, K - 1)
            total = time.perf_counter() - start
    return {"population": len(X), "steps": problem.nstep_for(problem.decode(X)),
            "generation_ms": round(1e3 * total / generations, 2), "check_us": round(1e6 * check.total / generations, 1),
            "fraction": round(check.total / total, 5)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    route_warnings()
    print(json.dumps({"planner": planner_cost(args.threads), "assist": assist_cost(args.threads)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
