"""`contact`: contact keyframes solved by sampling MPC with partwise recombination (PartwiseMPC).

Settings are the planner's (`mpc.planner.PlannerSettings`); keyframes are contact keyframes
(`mpc.keyframes`). Each seed is an alternative solution: the planner's noise differs, and so does
the emergent motion.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco

from .. import schema
from ..model import BuiltModel, build_model
from ..mpc.agent import run_agent
from ..mpc.keyframes import ContactKeyframe, check_bodies, parse_keyframes
from ..mpc.planner import PlannerSettings
from ..rollout import RolloutEngine
from ..task import Task, build_scene
from . import Solution
from ..errors import InvalidInput

ACCEPTS_APPENDED_KEYFRAMES = True  # `--jsonl` runs take more keyframes on stdin (mpc.feed)


@dataclass
class Prepared:
    task: Task
    settings: PlannerSettings
    keyframes: list[ContactKeyframe]
    built: BuiltModel  # the agent's model (model.xml)
    plan: BuiltModel  # the same model at the planning timestep

    def engine_model(self):
        return self.plan.model


def prepare(task: Task) -> Prepared:
    settings = schema.from_dict(PlannerSettings, task.settings, "settings")
    keyframes = parse_keyframes(task.keyframes)
    if not keyframes:
        raise InvalidInput("keyframes", "the contact method needs at least one contact keyframe")
    scene = build_scene(task.scene)
    check_bodies(keyframes, scene)
    built = build_model(scene, actuation="motor")
    plan_model = mujoco.MjModel.from_xml_string(built.xml)
    plan_model.opt.timestep = settings.planning_timestep
    plan = BuiltModel(xml=built.xml, model=plan_model, scene=built.scene, actuation=built.actuation,
                      character_bodies=built.character_bodies, nu_character=built.nu_character,
                      sensor_slices=built.sensor_slices)
    return Prepared(task, settings, keyframes, built, plan)


def solve(prep: Prepared, seed: int, engine: RolloutEngine, progress=None, poll_keyframes=None) -> Solution:
    run = run_agent(prep.built, prep.plan, prep.keyframes, prep.settings, seed, engine, progress, poll_keyframes)
    n_it = max(len(run.partwise_won), 1)
    summary = {"planner": prep.settings.planner, "rollouts": prep.settings.rollouts,
               "partwise_win_fraction": float(run.partwise_won.sum()) / n_it if prep.settings.planner == "partwise" else 0.0,
               "total_cost": float(run.cost_per_step.sum() * (prep.plan.model.opt.timestep)),
               "failed_keyframe": run.failed_keyframe, "iterations": run.iterations,
               "plan_wall_s": round(run.plan_wall_s, 3)}
    if run.unstable_at is not None:
        summary["unstable_at_s"] = run.unstable_at
    return Solution(times=run.times, qpos=run.qpos, success=run.success,
                    cost=float(run.cost_per_step.mean()) if len(run.cost_per_step) else 0.0,
                    keyframes_reached=[None if t is None else round(float(t), 6) for t in run.reached],
                    arrays={"ctrl": run.ctrl, "keyframe_index": run.keyframe_index, "contact_distance": run.distance,
                            "control_times": run.control_times, "cost_per_step": run.cost_per_step,
                            "partwise_won": run.partwise_won},
                    summary=summary)
