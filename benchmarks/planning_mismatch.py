"""How far the planner's model strays from the simulation over a horizon, by planning timestep.

The planner's rollouts run the scene's model at `planning_timestep`; the solution plays on it at the
simulation's own timestep. From states along a solved motion (`solver run … --out DIR`), the controls it
executed are replayed for `--horizon` seconds both ways — at the simulation's step (its own motion again,
up to the velocity estimated from its poses) and at each planning step given, every control held over a
planning step as the planner's rollouts hold it — and the bodies' positions compared at the end. The bodies are
named as the default humanoid and the characters made from rigs name them. A planner whose model
puts a landing foot 5 cm from where the simulation puts it plans that foot's landing 5 cm wrong.

    .venv/bin/python benchmarks/planning_mismatch.py DIR --seed 0 --steps 0.01 0.015
"""
from __future__ import annotations

import argparse
import os
import sys

import mujoco
import numpy as np

BODIES = ("foot_left", "foot_right", "pelvis", "hand_right")


def replay(model: mujoco.MjModel, times: np.ndarray, qpos: np.ndarray, ctrl: np.ndarray, start: float,
           horizon: float, bodies: list[int]) -> np.ndarray:
    """The bodies' positions after replaying the recorded controls for `horizon` s from the recorded state
    at `start`, `model` stepped at its own timestep, each control held over one step."""
    dt = float(times[1] - times[0])
    step = model.opt.timestep
    d = mujoco.MjData(model)
    i0 = int(round(start / dt))
    d.qpos[:] = qpos[i0]
    mujoco.mj_differentiatePos(model, d.qvel, 2 * dt, qpos[i0 - 1], qpos[i0 + 1])
    d.time = times[i0]
    for k in range(int(round(horizon / step))):
        d.ctrl[:ctrl.shape[1]] = ctrl[min(int(round((start + k * step) / dt)), len(ctrl) - 1)]
        mujoco.mj_step(model, d)
    mujoco.mj_kinematics(model, d)
    return d.xpos[bodies].copy()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="a solve's output directory (model.xml, seed_N/result.npz)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=float, nargs="+", default=[0.01, 0.015], help="planning timesteps (s)")
    ap.add_argument("--horizon", type=float, nargs="+", default=[0.15, 0.3], help="replay lengths (s)")
    ap.add_argument("--every", type=float, default=0.05, help="seconds between replay starts")
    args = ap.parse_args(argv)
    xml = os.path.join(args.dir, "model.xml")
    with np.load(os.path.join(args.dir, f"seed_{args.seed}", "result.npz")) as r:
        times, qpos, ctrl = r["times"], r["qpos"], r["ctrl"]
    sim = mujoco.MjModel.from_xml_path(xml)
    planning = {s: mujoco.MjModel.from_xml_path(xml) for s in args.steps}
    for s, model in planning.items():
        model.opt.timestep = s
    bodies = [sim.body(b).id for b in BODIES]
    data = mujoco.MjData(sim)
    for horizon in args.horizon:
        starts = np.arange(0.1, times[-1] - horizon - 0.05, args.every)
        errors = {s: [] for s in args.steps}
        floor = []  # the replay at the simulation's own step against the motion recorded
        for start in starts:
            truth = replay(sim, times, qpos, ctrl, start, horizon, bodies)
            data.qpos[:] = qpos[min(int(round((start + horizon) / sim.opt.timestep)), len(qpos) - 1)]
            mujoco.mj_kinematics(sim, data)
            floor.append(np.linalg.norm(data.xpos[bodies] - truth, axis=1))
            for s in args.steps:
                errors[s].append(np.linalg.norm(replay(planning[s], times, qpos, ctrl, start, horizon, bodies) - truth,
                                                axis=1))
        print(f"horizon {horizon:g} s: the simulation's own replay is {100 * np.mean(floor):.2f} cm from the motion "
              "recorded (the velocity estimated from its poses)")
        for s in args.steps:
            e = 100 * np.array(errors[s])
            print(f"horizon {horizon:g} s, planning step {s:g} s ({len(starts)} starts): cm from the simulation's "
                  f"— feet {e[:, :2].mean():.2f} (90th percentile {np.percentile(e[:, :2], 90):.2f}), "
                  f"pelvis {e[:, 2].mean():.2f}, right hand {e[:, 3].mean():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
