"""`contact`: contact keyframes solved by sampling MPC with partwise recombination (PartwiseMPC).

Settings are the planner's (`mpc.planner.PlannerSettings`); keyframes are contact keyframes
(`mpc.keyframes`). Each seed is an alternative solution: the planner's noise differs, and so does
the emergent motion.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import schema
from ..mjcf import model_from_xml
from ..model import BuiltModel, build_model
from ..mpc.agent import run_agent
from ..mpc.keyframes import ContactKeyframe, check_bodies, parse_keyframes
from ..mpc.planner import PlannerSettings
from ..rollout import RolloutEngine
from ..scene import MIN_TIMESTEP
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

    def batch(self):
        """(setting path, model, rollouts, steps) of the biggest batched rollout: one planning iteration."""
        nstep = int(np.ceil(self.settings.horizon / self.settings.planning_timestep - 1e-9))
        return "settings.rollouts", self.plan.model, self.settings.rollouts, nstep


MAX_PLAN_STEPS = 1000  # planning steps per horizon (and knots): what one iteration's rollouts allocate
MIN_SLOWDOWN = 1e-3  # Γ: at most 1000 control steps' worth of wall time spent planning each control step


def check_limits(settings: PlannerSettings, path: str = "settings") -> None:
    """Bounds that keep a solve finite in memory and time; `PlannerSettings.check` covers consistency.
    A horizon of 1e308 s or a planning step of 1e-308 s passes that check but cannot be run."""
    if settings.planning_timestep < MIN_TIMESTEP:
        raise InvalidInput(f"{path}.planning_timestep",
                           f"must be at least {MIN_TIMESTEP} s, got {settings.planning_timestep}")
    steps = settings.horizon / settings.planning_timestep
    if steps > MAX_PLAN_STEPS:
        raise InvalidInput(f"{path}.horizon", f"{settings.horizon} s is {steps:.4g} planning steps of "
                           f"{settings.planning_timestep} s; at most {MAX_PLAN_STEPS}")
    if settings.knots > MAX_PLAN_STEPS:
        raise InvalidInput(f"{path}.knots", f"at most {MAX_PLAN_STEPS} knots, got {settings.knots}")
    if settings.slowdown is not None and settings.slowdown < MIN_SLOWDOWN:
        raise InvalidInput(f"{path}.slowdown", f"must be at least {MIN_SLOWDOWN}, got {settings.slowdown}")


def prepare(task: Task) -> Prepared:
    settings = schema.from_dict(PlannerSettings, task.settings, "settings")
    check_limits(settings)
    keyframes = parse_keyframes(task.keyframes)
    if not keyframes:
        raise InvalidInput("keyframes", "the contact method needs at least one contact keyframe")
    scene = build_scene(task.scene)
    check_bodies(keyframes, scene)
    built = build_model(scene, actuation="motor")
    plan_model = model_from_xml(built.xml)
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
    return Solution(times=run.times, qpos=run.qpos, success=run.success,
                    cost=float(run.cost_per_step.mean()) if len(run.cost_per_step) else 0.0,
                    keyframes_reached=[None if t is None else round(float(t), 6) for t in run.reached],
                    arrays={"ctrl": run.ctrl, "keyframe_index": run.keyframe_index, "contact_distance": run.distance,
                            "control_times": run.control_times, "cost_per_step": run.cost_per_step,
                            "partwise_won": run.partwise_won},
                    summary=summary, unstable_time=run.unstable_at, unstable_reason=run.unstable_reason)
