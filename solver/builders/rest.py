"""A built-in scene's starting pose made to rest instead of interpenetrating.

The furniture's authored seated pose fits the furniture at its default size. Scene parameters
(a lower seat, a tilted chair) and the character's body-shape variants (thicker capsules) move the
surfaces the pose was authored against, and the shifted pose then starts with the feet 8–16 cm in
the floor or a thigh inside the seat — MuJoCo pushes the bodies apart violently in the first steps
and every quality figure starts from that overlap. `rest_pose` finds the nearest pose (hinge angles,
root position and orientation, least squares) in which no character geom overlaps anything by more
than REST_TOLERANCE_M, so a variant starts where the default starts: touching, not inside.
"""
from __future__ import annotations

import copy

import mujoco
import numpy as np

from ..core import rotations
from ..formats.scene import Pose, SceneDesc
from .mjcf import HINGE, ROOT_JOINT, compile_spec, initial_qpos, scene_to_spec

REST_TOLERANCE_M = 0.002      # overlap left alone: MuJoCo's soft contacts rest this deep under weight
_NEAR_M = 0.05                # pairs closer than this at a pose are watched by the solve
_ROOT_WEIGHT = 10.0           # per metre of root motion, against 1 per radian of hinge motion
_TURN_WEIGHT = 10.0           # per radian of root rotation
_OVERLAP_WEIGHT = 100.0       # per metre of overlap beyond the tolerance
_ROUNDS = 3


def _overlaps(model: mujoco.MjModel, data: mujoco.MjData, char_geom: np.ndarray) -> list[tuple[int, int, float]]:
    """(geom1, geom2, signed distance) of the contacts the character is part of at data's pose,
    including near ones: the model's margins are widened by the caller."""
    mujoco.mj_fwdPosition(model, data)
    out = []
    for c in data.contact[: data.ncon]:
        g1, g2 = int(c.geom[0]), int(c.geom[1])
        if char_geom[g1] or char_geom[g2]:
            out.append((g1, g2, float(c.dist)))
    return out


def _deepest(model, data, char_geom) -> float:
    return max([-d for _, _, d in _overlaps(model, data, char_geom)] + [0.0])


def deepest_overlap(scene: SceneDesc) -> float:
    """The deepest overlap (m) of a character geom with anything at the scene's initial pose."""
    model = compile_spec(scene_to_spec(scene))
    data = mujoco.MjData(model)
    data.qpos[:] = initial_qpos(scene, model)
    return _deepest(model, data, _character_geoms(model, scene))


def _character_geoms(model: mujoco.MjModel, scene: SceneDesc) -> np.ndarray:
    return np.isin(model.geom_bodyid, [model.body(b.name).id for b in scene.character.bodies])


def _bounded_least_squares(residual, x, lo, hi, iterations: int = 30, step: float = 1e-5) -> np.ndarray:
    """Levenberg's damped Gauss–Newton with the variables clipped to [lo, hi] (finite-difference
    Jacobian). scipy.optimize.least_squares would do, but Blender's Python has no scipy and the
    add-on builds scenes (presets) with this; the problems are small (≈ 30 variables), well scaled."""
    x = np.clip(np.asarray(x, float), lo, hi)
    r = residual(x)
    damping = 1e-3
    for _ in range(iterations):
        jac = np.empty((len(r), len(x)))
        for i in range(len(x)):
            dx = np.zeros_like(x)
            dx[i] = step if x[i] + step <= hi[i] else -step
            jac[:, i] = (residual(x + dx) - r) / dx[i]
        g, h = jac.T @ r, jac.T @ jac
        while True:
            candidate = np.clip(x - np.linalg.solve(h + damping * np.eye(len(x)), g), lo, hi)
            r_new = residual(candidate)
            if r_new @ r_new < r @ r:
                converged = r @ r - r_new @ r_new < 1e-9 * (r @ r)
                x, r, damping = candidate, r_new, max(damping / 3, 1e-9)
                if converged:
                    return x
                break
            damping *= 4
            if damping > 1e8:
                return x
        if np.max(np.abs(g)) < 1e-10:
            break
    return x


def _turn(rotvec) -> np.ndarray:
    angle = float(np.linalg.norm(rotvec))
    return np.array([1.0, 0.0, 0.0, 0.0]) if angle < 1e-12 else rotations.from_axis_angle(rotvec / angle, angle)


def rest_pose(scene: SceneDesc) -> Pose:
    """The scene's initial pose, moved the least that leaves no overlap deeper than
    REST_TOLERANCE_M; the pose itself where it already rests (the default scenes keep their bytes)."""
    model = compile_spec(scene_to_spec(scene))
    data = mujoco.MjData(model)
    q0 = initial_qpos(scene, model)
    data.qpos[:] = q0
    char_geom = _character_geoms(model, scene)
    if _deepest(model, data, char_geom) <= REST_TOLERANCE_M:
        return scene.initial_pose
    root = model.jnt_qposadr[model.joint(ROOT_JOINT).id]
    char_bodies = {model.body(b.name).id for b in scene.character.bodies}
    hinges = [j for j in range(model.njnt) if model.jnt_type[j] == HINGE and model.jnt_bodyid[j] in char_bodies]
    adr = model.jnt_qposadr[hinges]
    lo = np.where(model.jnt_limited[hinges], model.jnt_range[hinges, 0], -np.inf)
    hi = np.where(model.jnt_limited[hinges], model.jnt_range[hinges, 1], np.inf)
    a0 = np.clip(q0[adr], lo, hi)
    wide = copy.copy(model)
    wide.geom_margin[:] = np.maximum(model.geom_margin, _NEAR_M)
    wdata = mujoco.MjData(wide)

    def pose_of(x):
        q = q0.copy()
        q[root:root + 3] = q0[root:root + 3] + x[:3]
        q[root + 3:root + 7] = rotations.mul(_turn(x[3:6]), q0[root + 3:root + 7])
        q[adr] = x[6:]
        return q

    def residual(x, pairs):
        data.qpos[:] = pose_of(x)
        mujoco.mj_kinematics(model, data)
        gap = np.array([mujoco.mj_geomDistance(model, data, g1, g2, _NEAR_M, None) for g1, g2 in pairs])
        overlap = np.maximum(0.0, -gap - REST_TOLERANCE_M / 2)
        return np.concatenate([_OVERLAP_WEIGHT * overlap, _ROOT_WEIGHT * x[:3], _TURN_WEIGHT * x[3:6], x[6:] - a0])

    bounds = (np.concatenate([np.full(6, -np.inf), lo]), np.concatenate([np.full(6, np.inf), hi]))
    x = np.concatenate([np.zeros(6), a0])
    for _ in range(_ROUNDS):
        wdata.qpos[:] = pose_of(x)
        pairs = sorted({(g1, g2) for g1, g2, _ in _overlaps(wide, wdata, char_geom)})
        x = _bounded_least_squares(lambda v, pairs=pairs: residual(v, pairs), x, *bounds)
        data.qpos[:] = pose_of(x)
        if _deepest(model, data, char_geom) <= REST_TOLERANCE_M:
            break
    q = pose_of(x)
    names = {model.joint(j).name: float(q[model.jnt_qposadr[j]]) for j in hinges}
    return Pose(root_pos=[float(v) for v in q[root:root + 3]], root_quat=[float(v) for v in q[root + 3:root + 7]],
                joints={**scene.initial_pose.joints, **{n: v for n, v in names.items()
                                                         if n in scene.initial_pose.joints or v != 0.0}},
                ball_joints=copy.deepcopy(scene.initial_pose.ball_joints))
