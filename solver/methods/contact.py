"""`contact`: contact keyframes solved by sampling MPC (PartwiseMPC by default; any registered
planner).

Settings are `settings.ContactSettings`; keyframes are contact keyframes (`contact_keyframes`).
Each seed is an alternative solution: the planner's noise differs, and so does the emergent motion.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..builders.mjcf import model_from_xml
from ..core.errors import InvalidInput
from ..core.memory import run_record_bytes
from ..formats.contact_keyframes import ContactKeyframe, check_bodies, parse_keyframes
from ..formats.perturbations import Perturbations, check_perturbations
from ..formats.scene import SceneDesc
from ..formats.settings import ContactSettings, SamplingSettings, method_settings
from ..formats.solution import Solution
from ..formats.task import Task, build_scene
from ..mpc.agent import Agent, AgentSetup, longest_motion
from ..mpc.iteration import plan_steps
from ..mpc.jobs import ContactJob, TrackingJob
from ..mpc.objectives.control import softened_words
from ..mpc.planners.base import COMPOSED, ORIGINS, planner_options
from ..mpc.recovery.checkpoint import Checkpoint
from ..mpc.recovery.particles import run_particles
from ..mpc.stumble import floor_paired
from ..physics.diversity import motions_diversity
from ..physics.grasp import grasp_pairs
from ..physics.model import BuiltModel, build_model
from ..physics.quality import motion_quality
from ..physics.rollout import RolloutEngine
from ..physics.verdict import failure_words, quality_words
from .base import Batch, Capabilities, Method, Prepared


@dataclass
class PlannedPrepared(Prepared):
    """A task the MPC agent solves: its keyframes, and the model at the planning timestep too (what
    the rollout engine runs)."""
    keyframes: list
    plan: BuiltModel  # the same model at the planning timestep

    def engine_model(self):
        return self.plan.model

    def notes(self) -> list[str]:
        """The base's, and the motors whose effort the objective charges more softly (`objectives.control`)."""
        return super().notes() + softened_words(self.built)

    def agent_setup(self) -> AgentSetup:
        """What this task's agents are made from."""
        return AgentSetup(self.built, self.plan, self.keyframes, self.settings, self.job())

    def job(self) -> ContactJob | TrackingJob:
        """What its agents are asked to do: reach the contact keyframes (the track method's: follow its
        reference)."""
        return ContactJob()

    def resumer(self, engine: RolloutEngine, appended: list | None = None,
                edited: dict | None = None) -> Callable[[Checkpoint], Agent]:
        """Checkpoint → its agent, ready to step on `engine` (where a particle's segment runs), with
        the keyframes `appended` to the task while it ran and those of its own `edited` since (index →
        keyframe; task-file JSON)."""
        setup = self.agent_setup()
        keyframes = list(self.keyframes)
        for index, item in (edited or {}).items():
            keyframes[int(index)] = _by_role(parse_keyframes([item], "edit_keyframes"), self.built.scene)[0]
        keyframes += _by_role(parse_keyframes(appended, "append_keyframes"), self.built.scene) if appended else []
        return lambda cp: setup.resume(cp, engine, keyframes)

    def batch(self) -> Batch:
        """One planning iteration's rollouts."""
        sampling = self.settings.sampling
        return Batch("settings.rollouts", self.plan.model, sampling.rollouts,
                     plan_steps(self.longest_horizon(), sampling.planning_timestep))

    def longest_horizon(self) -> float:
        """The longest horizon an iteration plans over (s)."""
        return self.settings.sampling.horizon


@dataclass
class ContactPrepared(PlannedPrepared):
    keyframes: list[ContactKeyframe]

    def longest_horizon(self) -> float:
        """The settings' horizon, or a keyframe's own where longer."""
        return max([self.settings.sampling.horizon, *(k.horizon for k in self.keyframes if k.horizon is not None)])

    def retained(self):
        """Particles keep whole runs' records: each particle's agent and its checkpoints at the
        keyframes a back-up may return to (`particles.run_particles`), each up to the whole run."""
        effort, recovery = self.settings.effort, self.settings.recovery
        duration = longest_motion(self.keyframes, self.settings) + 1.0
        cap = effort.budget if effort.budget is not None else 2 * effort.max_iterations
        per_run = run_record_bytes(self.built.model, duration, self.settings.sampling.planning_timestep,
                                   (2 ** recovery.segment_retries) * cap)
        runs = recovery.particles * (recovery.backups + 3)
        return "settings.particles", f"{recovery.particles} particles keeping up to {runs} runs of {duration:.0f} s", \
            per_run * runs


def planning_models(scene: SceneDesc, sampling: SamplingSettings, actuation: str = "motor",
                    target_margin: float = 0.0, perturbations: Perturbations | None = None,
                    grasps: list[tuple[str, str]] | None = None,
                    contact_depths: bool = False, touch_bodies: list[str] | None = None
                    ) -> tuple[BuiltModel, BuiltModel]:
    """The scene's model with motors (or PD servos: `actuation`), what the solution plays on, and the
    same model at the planning timestep (what the planner's rollouts run); both hold the balls of
    `perturbations`, the welds of sticky `grasps`, with `contact_depths` the bodies' deepest contacts as
    sensors, where `touch_bodies` touch (the feet, for the slip term), and the first the perturbations
    themselves (the agent applies them)."""
    built = build_model(scene, actuation=actuation, target_margin=target_margin, perturbations=perturbations,
                        grasps=grasps, contact_depths=contact_depths, touch_bodies=touch_bodies)
    plan_model = model_from_xml(built.xml)
    plan_model.opt.timestep = sampling.planning_timestep
    plan = BuiltModel(xml=built.xml, model=plan_model, scene=built.scene, actuation=built.actuation,
                      character_bodies=built.character_bodies, nu_character=built.nu_character,
                      sensor_slices=built.sensor_slices, grasps=built.grasps)
    return built, plan


def foot_bodies(scene: SceneDesc) -> list[str]:
    """The bodies playing the feet (`objective_terms.FOOT_TERM_ROLES`), whose touches the slip term reads."""
    from ..builders.roles import roles_of
    from ..formats.objective_terms import FOOT_TERM_ROLES
    roles = roles_of(scene.character)
    return [roles[r] for r in FOOT_TERM_ROLES if r in roles]


def keyframe_changes(items: list, scene: SceneDesc) -> list[tuple[int | None, object]]:
    """The keyframe feed's items (`run.feed`) as changes, in order: (None, keyframe) appends it, (k, keyframe)
    replaces keyframe k."""
    out = []
    for item in items:
        if isinstance(item, dict) and "edit" in item:
            out.append((int(item["edit"]), _by_role(parse_keyframes([item["keyframe"]], "edit_keyframes"), scene)[0]))
        else:
            out.extend((None, kf) for kf in _by_role(parse_keyframes([item], "append_keyframes"), scene))
    return out


def _check_horizons(keyframes: list[ContactKeyframe], sampling: SamplingSettings, path: str) -> None:
    """Refuse a keyframe's own horizon that the planning steps cannot cover (InvalidInput naming it)."""
    for i, kf in enumerate(keyframes):
        if kf.horizon is not None:
            sampling.check_horizon(kf.horizon, f"{path}[{i}].horizon")


def _by_role(keyframes: list, scene: SceneDesc) -> list:
    """The keyframes' pairs on the bodies playing the roles they name (`roles.by_role`)."""
    from ..builders.roles import by_role
    return by_role(keyframes, scene.character, {b.name for b in scene.environment.bodies})


class Contact(Method):
    name = "contact"
    settings_type = ContactSettings
    capabilities = Capabilities(appended_keyframes=True, perturbations=True, particles=True)

    def prepare(self, task: Task) -> ContactPrepared:
        settings = method_settings(ContactSettings, task.settings)
        planner_options(settings.sampling)
        keyframes = parse_keyframes(task.keyframes)
        if not keyframes:
            raise InvalidInput("keyframes", "the contact method needs at least one contact keyframe")
        scene = build_scene(task.scene)
        keyframes = _by_role(keyframes, scene)
        check_bodies(keyframes, scene)
        _check_horizons(keyframes, settings.sampling, "keyframes")
        check_perturbations(task.perturbations, scene, sum(k.time_limit + k.sustain for k in keyframes))
        grasps = grasp_pairs(keyframes, scene) if settings.grasp.grasp == "sticky" else []
        built, plan = planning_models(scene, settings.sampling, perturbations=task.perturbations or None, grasps=grasps,
                                      touch_bodies=foot_bodies(scene))
        return ContactPrepared(task, settings, built, keyframes, plan)

    def check_appended(self, items: list, scene: SceneDesc, path: str, sampling: SamplingSettings | None = None) -> int:
        keyframes = _by_role(parse_keyframes(items, path), scene)
        check_bodies(keyframes, scene, path)
        if sampling is not None:
            _check_horizons(keyframes, sampling, path)
        return len(keyframes)

    def solve(self, prep: ContactPrepared, seed: int, engine: RolloutEngine, progress=None,
              appended=None, segments=None) -> Solution:
        poll = None if appended is None else (lambda: keyframe_changes(appended(), prep.built.scene))
        run, particles = run_particles(prep.agent_setup(), seed, engine, progress, poll, segments=segments)
        solution = _solution(prep, run, particles.keyframes)
        summary = solution.summary
        summary["particles"] = particles.summary()
        summary["words"] = [*summary["words"], *(f"'{e['name']}' was edited after this seed had reached it: solved "
                                                 "as it was" for e in particles.edits if not e["taken"])]
        if particles.alternatives:
            alternatives = [_solution(prep, alt, particles.keyframes) for alt in particles.alternatives]
            for j, alt in enumerate(alternatives):
                solution.variants[f"lineage_{j + 2}"] = alt
            summary["particles"]["lineage_diversity"] = motions_diversity(
                prep.built.model, prep.built.character_bodies,
                [(s.times, s.qpos, s.keyframes_reached) for s in [solution, *alternatives]])
        return solution


def paired_touch(prep: ContactPrepared, segment: np.ndarray, keyframes: list | None = None) -> dict[str, np.ndarray]:
    """{character body: (n,) bool, where the active keyframe (`segment`, per pose, of `keyframes`: the task's
    unless changed while solving) pairs it — or a body it hangs from — with a point on the floor}: a knee or a
    hand the animator asked to put down is no stumble (a hand paired with a target in the air or on a chair
    that lands on the floor still is)."""
    model, bodies = prep.built.model, prep.built.character_bodies
    keyframes = keyframes or prep.keyframes
    out: dict[str, np.ndarray] = {}
    active = np.minimum(np.asarray(segment, dtype=int), len(keyframes) - 1)
    for k, kf in enumerate(keyframes):
        for name, paired in zip(bodies, floor_paired(model, bodies, kf)):
            if paired:
                out[name] = out.get(name, np.zeros(len(active), dtype=bool)) | (active == k)
    return out


def _solution(prep: ContactPrepared, run, keyframes: list | None = None) -> Solution:
    """An agent's run as a solution, with its planner's and its motion's figures, judged by `keyframes` (the
    solve's, those appended and edited while solving in; None: the task's)."""
    keyframes = keyframes or prep.keyframes
    n_it = max(len(run.origins), 1)
    won_by = {name: float(np.sum(run.origins == i)) / n_it for i, name in enumerate(ORIGINS)}
    summary = {"planner": prep.settings.sampling.planner, "rollouts": prep.settings.sampling.rollouts,
               "partwise_win_fraction": won_by["composed"], "won_by": won_by,
               "total_cost": float(run.cost_per_step.sum() * (prep.plan.model.opt.timestep)),
               "failed_keyframe": run.failed_keyframe, "failure": run.failure, "iterations": run.iterations,
               **({"failure_detail": run.failure_detail} if run.failure_detail else {}),
               "plan_wall_s": round(run.plan_wall_s, 3)}
    if run.grasps:
        summary["grasps"] = run.grasps
    # Lying is meant where the active keyframe does not ask the character to stay up; sitting where it is judged seated.
    active = np.minimum(run.keyframe_index, len(keyframes) - 1)
    may_lie = np.array([not kf.upright for kf in keyframes])[active]
    seated = np.array([kf.style == "seated" for kf in keyframes])[active]
    summary["quality"] = motion_quality(prep.built.model, prep.built.character_bodies, run.times, run.qpos,
                                        may_lie, segment=run.keyframe_index, roles=prep.built.roles,
                                        expected_touch=paired_touch(prep, run.keyframe_index, keyframes),
                                        seated=seated)
    summary["words"] = quality_words(summary["quality"], ends_standing=keyframes[-1].style == "standing")
    if not run.success and run.failed_keyframe is not None and run.failed_keyframe < len(keyframes):
        name = keyframes[run.failed_keyframe].name
        name = name if name and name != "keyframe" else f"keyframe {run.failed_keyframe + 1}"  # unnamed: its place
        # a stumble's body and time are in the quality's own words ("stumbles at 1.1 s (hand_right on the floor)")
        why = failure_words(name, run.failure, run.failure_detail if run.failure == "style" else None)
        summary["words"] = [why, *summary["words"]] if why else summary["words"]
    return Solution(times=run.times, qpos=run.qpos, success=run.success,
                    cost=float(run.cost_per_step.mean()) if len(run.cost_per_step) else 0.0,
                    keyframes_reached=[None if t is None else round(float(t), 6) for t in run.reached],
                    arrays={"ctrl": run.ctrl, "keyframe_index": run.keyframe_index,
                            "contact_distance": run.distance, "control_times": run.control_times,
                            "cost_per_step": run.cost_per_step,
                            "partwise_won": (run.origins == COMPOSED).astype(np.uint8)},
                    summary=summary, unstable_time=run.unstable_at, unstable_reason=run.unstable_reason)


CONTACT = Contact()
