"""`track`: the character, with no assist, follows a reference motion by sampling MPC — an assisted
solution's trajectory, or an animator's keyed animation — so that motion gets a physical version.

The task's `reference` is the motion: `times` and `qpos` rows of the scene's model, a solution's
`result` npz, or `{"sketch": "linear"}` (the keyframes, linearly interpolated). Its `keyframes`
(pose keyframes with fixed times, as the assist method reads them) are the sketch: their poses are
weighed extra at their times and each gets a verdict — reached physically, or not, and by how much
it falls short. Without keyframes, and between them (`stand_ins`; not for a sketch, whose
in-betweens are interpolation), the reference's own pose every `key_every` seconds stands in.

The character drives its joints with PD servos whose targets are the reference's angles; the
planner corrects them (`actuation: "motor"` plans raw torques instead). The planner, adaptive effort,
checkpoints and particles are the contact solve's (`mpc`); the objective and the keyframe tracker
are `mpc.objectives.tracking`'s.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import mujoco
import numpy as np

from ..builders.mjcf import ROOT_JOINT
from ..core import schema
from ..core.errors import InvalidInput
from ..formats.pose_keyframes import resolve
from ..formats.scene import Pose, SceneDesc, Velocity
from ..formats.settings import TrackedKeyframeSettings, TrackSettings, method_settings
from ..formats.solution import Solution
from ..formats.task import Task, build_scene
from ..formats.track_keyframes import TrackKeyframe
from ..mpc.jobs import TrackingJob
from ..mpc.objectives.tracking import pose_columns
from ..mpc.planners.base import COMPOSED, ORIGINS, planner_options
from ..mpc.recovery.particles import run_particles
from ..physics.fidelity import fidelity, reference_problems
from ..physics.model import BuiltModel
from ..physics.posture import SETTLED_SPEED
from ..physics.quality import FALLEN_HEAD_HEIGHT, end_state, motion_quality
from ..physics.reference import Reference, build_reference, check_motion, servo_targets, teleports
from ..physics.rollout import RolloutEngine
from ..physics.verdict import quality_words
from .base import Capabilities, Method
from .contact import PlannedPrepared, planning_models

# A body the reference has on the scene within this long (s) of the motion's having it there is expected
# there: a knee set down a moment before the capture kneels, or lifted a moment after it rises, is no stumble.
TOUCH_WINDOW_S = 0.3


@dataclass
class TrackPrepared(PlannedPrepared):
    keyframes: list[TrackKeyframe]
    reference: Reference
    motion_times: np.ndarray  # the reference as given, for its teleports
    motion_qpos: np.ndarray
    problems: list[dict]  # what the reference asks that no body can do (`fidelity.reference_problems`)

    def job(self) -> TrackingJob:
        return TrackingJob(self.reference, self.built)

    def notes(self) -> list[str]:
        return super().notes() + [p["what"] for p in self.problems]


class Track(Method):
    name = "track"
    settings_type = TrackSettings
    capabilities = Capabilities(reference=True, particles=True)

    def prepare(self, task: Task) -> TrackPrepared:
        settings = method_settings(TrackSettings, task.settings)
        planner_options(settings.sampling)
        if task.reference is None:
            raise InvalidInput("reference", "the track method needs a reference motion (times and qpos, or a result)")
        scene = build_scene(task.scene)
        servos, sampling = settings.servos, settings.sampling
        probe, _ = planning_models(scene, sampling, servos.actuation, servos.target_margin)
        if task.reference == {"sketch": "linear"}:
            times, qpos = sketch_reference(task.keyframes, scene, probe)
        else:
            times, qpos = read_reference(task.reference, probe.model.nq)
        scene = scene_at_reference_start(scene, probe, times, qpos)
        built, plan = planning_models(scene, sampling, servos.actuation, servos.target_margin,
                                      contact_depths=settings.terms.w_penetration > 0)
        pad = sampling.horizon + settings.keyframes.key_window + 1.0
        reference = build_reference(plan.model, built.character_bodies, times, qpos, sampling.planning_timestep, pad)
        if servos.actuation == "position":  # plans are corrections to the reference's own joint angles
            reference.feedforward = servo_targets(plan.model, reference, plan.nu_character)
        keyframes = track_keyframes(task.keyframes, scene, built, reference, settings.keyframes,
                                    stand_ins=settings.keyframes.stand_ins and task.reference != {"sketch": "linear"})
        problems = reference_problems(built.model, built.character_bodies, reference)
        return TrackPrepared(task, settings, built, keyframes, plan, reference, times, qpos, problems)

    def solve(self, prep: TrackPrepared, seed: int, engine: RolloutEngine, progress=None,
              appended=None, segments=None, retried: int | None = None, judge_clip: bool = True) -> Solution:
        """The tracking; the segment of keyframe `retried` (an index into `prep.keyframes`) gets no
        retries: an earlier tracking of the same reference retried it in vain. With `judge_clip`, success
        also asks the whole clip within the fidelity tolerances (a capture made physical); a physical
        version of an assisted motion is judged by its sketch's keyframes instead."""
        run, particles = run_particles(prep.agent_setup(), seed, engine, progress, segments=segments,
                                       retried=retried)
        n_it = max(len(run.origins), 1)
        won_by = {name: float(np.sum(run.origins == i)) / n_it for i, name in enumerate(ORIGINS)}
        errors, root_error, joint_error = tracking_errors(prep.built, prep.reference, run.times, run.qpos)
        verdicts = keyframe_verdicts(prep.built, prep.keyframes, run.times, run.qpos, run.reached, run.failure,
                                     run.unstable_at)
        jumps = teleports(prep.built.model, prep.motion_times, prep.motion_qpos, _root_dof(prep.built),
                          _hinge_dofs(prep.built))
        summary = {"planner": prep.settings.sampling.planner, "rollouts": prep.settings.sampling.rollouts,
                   "partwise_win_fraction": won_by["composed"], "won_by": won_by,
                   "failed_keyframe": run.failed_keyframe, "failure": run.failure, "iterations": run.iterations,
                   "plan_wall_s": round(run.plan_wall_s, 3), "particles": particles.summary(),
                   "tracking": errors, "keyframes": verdicts,
                   "departs": next((v["why"] for v in verdicts if v["verdict"] != "reached"), None),
                   "teleports": [{"time": round(t, 6), "what": what} for t, what in jumps]}
        summary["quality"] = motion_quality(prep.built.model, prep.built.character_bodies, run.times, run.qpos,
                                            lying_in_reference(prep.reference, run.times, prep.built.roles),
                                            segment=run.keyframe_index, roles=prep.built.roles,
                                            expected_touch=expected_touch(prep.reference, run.times))
        summary["words"] = quality_words(summary["quality"], may_end_moving=_ends_moving(prep))
        summary["fidelity"] = fidelity(prep.built.model, prep.built.character_bodies, prep.built.roles,
                                       prep.reference, run.times, run.qpos, prep.problems, judge=judge_clip)
        success = run.success and (not judge_clip or bool(summary["fidelity"]["within"]))
        if judge_clip and summary["departs"] is None:
            summary["departs"] = summary["fidelity"]["why"]
        if judge_clip and summary["fidelity"]["why"]:  # the first reason a clip is not within leads its words
            summary["words"] = [summary["fidelity"]["why"].split("; ")[0], *summary["words"]]
        return Solution(times=run.times, qpos=run.qpos, success=success,
                        cost=float(run.cost_per_step.mean()) if len(run.cost_per_step) else 0.0,
                        keyframes_reached=[None if t is None else round(float(t), 6) for t in run.reached],
                        arrays={"ctrl": run.ctrl, "keyframe_index": run.keyframe_index,
                                "control_times": run.control_times, "cost_per_step": run.cost_per_step,
                                "tracking_root_error": root_error, "tracking_joint_error": joint_error,
                                "partwise_won": (run.origins == COMPOSED).astype(np.uint8)},
                        summary=summary, unstable_time=run.unstable_at, unstable_reason=run.unstable_reason)


TRACK = Track()


def expected_touch(reference: Reference, times: np.ndarray) -> dict[str, np.ndarray]:
    """Per character body, at `times`: whether the reference puts it on the scene then or within
    TOUCH_WINDOW_S of then — what the motion may touch without stumbling."""
    window = int(round(TOUCH_WINDOW_S / reference.dt))
    rows = reference.index(times)
    return {b: (np.convolve(t, np.ones(2 * window + 1), mode="same") > 0)[rows]
            for b, t in (reference.touching or {}).items()}


def lying_in_reference(reference: Reference, times: np.ndarray, roles: dict[str, str]) -> np.ndarray | None:
    """Per time: whether the reference lies there (its head below FALLEN_HEAD_HEIGHT), so a low head
    follows it rather than fell — what `motion_quality` needs for a tracked motion's `fall_s`. None
    for a character without a head (`roles`)."""
    if roles.get("head") not in reference.xpos:
        return None
    return reference.xpos[roles["head"]][reference.index(times), 2] < FALLEN_HEAD_HEIGHT


# -- preparing -------------------------------------------------------------------------------------
def read_reference(ref: dict, nq: int) -> tuple[np.ndarray, np.ndarray]:
    """(times, qpos) of a task's `reference`: inline arrays, or a solution's result npz."""
    if not isinstance(ref, dict):
        raise InvalidInput("reference", f"must be an object with times and qpos, or a result path, got "
                           f"{schema.describe(ref)}")
    if "result" in ref:
        if set(ref) - {"result"}:
            raise InvalidInput("reference", "give either result or times and qpos, not both")
        path = ref["result"]
        if not isinstance(path, str) or not path:
            raise InvalidInput("reference.result", "must be the path of a result.npz")
        try:
            with np.load(path, allow_pickle=False) as npz:
                times, qpos = npz["times"], npz["qpos"]
        except FileNotFoundError:
            raise InvalidInput("reference.result", f"no file {path}") from None
        except (KeyError, ValueError, OSError) as e:
            raise InvalidInput("reference.result", f"{path} is not a solution's result.npz ({e})") from None
        return check_motion(times, qpos, nq, "reference")
    missing = [k for k in ("times", "qpos") if k not in ref]
    if missing:
        raise InvalidInput(f"reference.{missing[0]}", "missing")
    unknown = set(ref) - {"times", "qpos"}
    if unknown:
        raise InvalidInput(f"reference.{sorted(unknown)[0]}", "unknown field (have: times, qpos, result)")
    return check_motion(ref["times"], ref["qpos"], nq, "reference")


def sketch_reference(items: list, scene: SceneDesc, built: BuiltModel) -> tuple[np.ndarray, np.ndarray]:
    """The task's pose keyframes played with linear interpolation (`"reference": {"sketch": "linear"}`):
    what an animator's keys with linear interpolation play, as a reference to make physical."""
    if len(items) < 2:
        raise InvalidInput("keyframes", "a sketch reference needs at least two pose keyframes with times")
    pose_kfs, kfs = resolve(items, scene)
    for i, kf in enumerate(pose_kfs[1:], start=1):
        if kf.time is None:
            raise InvalidInput(f"keyframes[{i}].time_range", "tracking needs a fixed time for every keyframe")
    times = np.concatenate([[0.0], np.cumsum(kfs.dt_min)])
    qpos = np.tile(built.initial_qpos(), (len(times), 1))
    qpos[:, pose_columns(built)] = kfs.qpos
    return check_motion(times, qpos, built.model.nq, "reference")


def scene_at_reference_start(scene: SceneDesc, built: BuiltModel, times: np.ndarray, qpos: np.ndarray) -> SceneDesc:
    """The scene starting where the reference starts: its first pose, moving as it moves."""
    m = built.model
    scene = copy.deepcopy(scene)
    q0 = qpos[0]
    root = int(m.jnt_qposadr[m.joint(ROOT_JOINT).id])
    hinges = [j.name for j in scene.joints() if j.type == "hinge"]
    scene.initial_pose = Pose(root_pos=[float(v) for v in q0[root:root + 3]],
                              root_quat=[float(v) for v in q0[root + 3:root + 7]],
                              joints={n: float(q0[m.jnt_qposadr[m.joint(n).id]]) for n in hinges},
                              ball_joints=copy.deepcopy(scene.initial_pose.ball_joints))
    v = np.zeros(m.nv)
    mujoco.mj_differentiatePos(m, v, float(times[1] - times[0]), qpos[0], qpos[1])
    d = int(m.jnt_dofadr[m.joint(ROOT_JOINT).id])
    scene.initial_velocity = Velocity(root_linear=[float(x) for x in v[d:d + 3]],
                                      root_angular=[float(x) for x in v[d + 3:d + 6]],
                                      joints={n: float(v[m.jnt_dofadr[m.joint(n).id]]) for n in hinges})
    return scene


def track_keyframes(items: list, scene: SceneDesc, built: BuiltModel, reference: Reference,
                    settings: TrackedKeyframeSettings, stand_ins: bool = True) -> list[TrackKeyframe]:
    """The task's pose keyframes (fixed times) as track keyframes and, where it names none or with
    `stand_ins`, the reference's own pose every `key_every` seconds where no keyframe of the task is
    within `key_window`; one at the reference's end if the last is well before it."""
    cols = pose_columns(built)
    digest = reference.digest()
    head = built.roles.get("head")

    def key(name, t, q, weight=1.0):
        row = int(reference.index(t))
        upright = head is None or bool(reference.xpos[head][row, 2] >= FALLEN_HEAD_HEIGHT)
        return TrackKeyframe(name=name, time=round(float(t), 9), qpos=[float(v) for v in q], weight=float(weight),
                             window=settings.key_window, pos_tolerance=settings.pos_tolerance,
                             angle_tolerance=settings.angle_tolerance, joint_tolerance=settings.joint_tolerance,
                             upright=upright, reference=digest)

    out = []
    if items:
        pose_kfs, kfs = resolve(items, scene)
        for i, kf in enumerate(pose_kfs[1:], start=1):
            if kf.time is None:
                raise InvalidInput(f"keyframes[{i}].time_range", "tracking needs a fixed time for every keyframe")
        times = np.concatenate([[0.0], np.cumsum(kfs.dt_min)])
        for i in range(1, len(times)):
            if times[i] > reference.duration + 1e-9:
                raise InvalidInput(f"keyframes[{i}].time", f"{times[i]:.6g} s is after the reference's end "
                                   f"({reference.duration:.6g} s)")
            out.append(key(kfs.names[i], times[i], kfs.qpos[i], kfs.weights[i]))
    if not items or stand_ins:
        given = [k.time for k in out]
        n = int(np.floor(reference.duration / settings.key_every + 1e-9))
        for i in range(1, n + 1):
            t = i * settings.key_every
            if reference.duration - t <= settings.key_window:  # the last stands at the end, so all is followed
                break
            if all(abs(t - g) > settings.key_window for g in given):
                out.append(key(f"t={t:g}s", t, reference.qpos[reference.index(t)][cols]))
        out.sort(key=lambda k: k.time)
    last = out[-1].time if out else 0.0
    if reference.duration - last > settings.key_window:
        out.append(key("end", reference.duration, reference.qpos[reference.index(reference.duration)][cols]))
    return out


def _ends_moving(prep: TrackPrepared) -> bool:
    """Whether the reference itself ends in motion (its root at SETTLED_SPEED or faster over its last frames, as
    `quality.end_state` reads a motion's end): a capture cut mid-stride, whose physical version ending in
    motion is what was asked, not a clip that failed to come to rest."""
    ref = prep.reference
    n = int(np.floor(ref.duration / ref.dt + 1e-9)) + 1
    built = prep.built
    end = end_state(built.model, built.roles, built.model.body(built.character_bodies[0]).id, np.arange(n) * ref.dt,
                    ref.qpos[:n])
    return end is not None and end["root_speed_mps"] >= SETTLED_SPEED


def _root_dof(built: BuiltModel) -> int:
    return int(built.model.jnt_dofadr[built.model.joint(ROOT_JOINT).id])


def _hinge_dofs(built: BuiltModel) -> np.ndarray:
    m = built.model
    return np.array([int(m.jnt_dofadr[m.joint(j.name).id]) for j in built.scene.joints() if j.type == "hinge"],
                    dtype=int)


# -- what the solve reports ------------------------------------------------------------------------
def tracking_errors(built: BuiltModel, reference: Reference, times: np.ndarray,
                    qpos: np.ndarray) -> tuple[dict, np.ndarray, np.ndarray]:
    """How closely the motion followed the reference: the means and maxima of the root position error
    (m) and of the RMS hinge error (rad), when the largest root error happened; and both per pose."""
    cols = pose_columns(built)
    q = qpos[:, cols]
    r = reference.qpos[reference.index(times)][:, cols]
    root = np.linalg.norm(q[:, :3] - r[:, :3], axis=1)
    joints = np.sqrt(np.mean((q[:, 7:] - r[:, 7:]) ** 2, axis=1)) if q.shape[1] > 7 else np.zeros(len(q))
    worst = int(np.argmax(root)) if len(root) else 0
    return {"mean_root_m": round(float(root.mean()), 6), "max_root_m": round(float(root.max()), 6),
            "max_root_at_s": round(float(times[worst]), 6), "mean_joint_rad": round(float(joints.mean()), 6),
            "max_joint_rad": round(float(joints.max()), 6)}, root, joints


def keyframe_verdicts(built: BuiltModel, keyframes: list[TrackKeyframe], times: np.ndarray, qpos: np.ndarray,
                      reached: list, failure: str | None, unstable_at: float | None) -> list[dict]:
    """Per keyframe: reached (and when), or not and why — in the pose's terms at the keyframe's time
    (or where the motion stopped before it)."""
    cols = pose_columns(built)
    out = []
    stopped = None  # the keyframe the motion stopped at
    for kf, t in zip(keyframes, reached):
        entry = {"name": kf.name, "time": kf.time}
        if t is not None:
            q = qpos[int(np.argmin(np.abs(times - t)))][cols]
            entry.update(verdict="reached", reached_at=round(float(t), 6),
                         distance=round(kf.distance(q[:3], q[3:7], q[7:]), 4), why=None)
        elif stopped is None:
            stopped = kf.name
            i = int(np.argmin(np.abs(times - kf.time)))
            q = qpos[i][cols]
            at = float(times[i])
            if unstable_at is not None:
                why = f"the simulation blew up at {unstable_at:.2f} s"
            elif failure == "fell":
                why = f"fell at {at:.2f} s"
            else:
                why = kf.shortfall(q[:3], q[3:7], q[7:]) + f" at {at:.2f} s"
            entry.update(verdict="not reached", distance=round(kf.distance(q[:3], q[3:7], q[7:]), 4),
                         why=f"cannot reach keyframe '{kf.name}': {why}")
        else:
            entry.update(verdict="not tried", distance=None, why=f"the motion stops at keyframe '{stopped}'")
        out.append(entry)
    return out
