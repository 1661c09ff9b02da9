"""Whole-body pose fit: the physics character's configuration that puts its bodies where a pose of
another skeleton (the animator's rig, a motion capture) says they are.

A pose says, for some bodies, where a point of the body is (the mapped bone's head) and how the body
is turned (the mapped bone's rotation, offset as at rest). One fit finds the configuration that meets
all of them at once in the least-squares sense — positions first, turns after (`ROTATION_WEIGHT`
metres per radian), hands and feet before the rest (`END_WEIGHT`: where a pose meets the world is
what an animator keyed it for) — with every limited hinge inside its range and the character out of
the floor. A body that cannot be where the pose says (a joint range, the character's proportions, the
floor) is made up for by the others, and what is left is reported per body rather than hidden in one
bone's decomposition. Levenberg–Marquardt on MuJoCo's own Jacobians (`mj_jac`); joints at a limit
that a step would push further are held there (an active set), so the fit is a box-constrained one.
The floor is met by raising a body's target by how deep its shapes would go (a foot then bends its
knee rather than the floor dragging the whole pose), the pose lifted as a whole for what is left.

Why not `mink`: it needs `qpsolvers` and through it scipy, which Blender's Python does not have and
the extension would have to bundle per platform and Python; and it solves a QP per step in Python
where a damped least-squares step on ~30 degrees of freedom is a 30×30 solve. Its answer is the
same: `tests/test_pose_fit.py` checks this fit against mink's on captured poses.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import mujoco
import numpy as np

ROTATION_WEIGHT = 0.1  # metres of position error worth one radian of turn error
END_WEIGHT = 5.0  # hands and feet, where a pose meets the world, count this many times the other bodies
SOLE_TURN_WEIGHT = 0.5  # m per radian: a clip's feet keep their turn (flat where they stand) before the rest
MAX_ITERATIONS = 60
FLOOR_PASSES = 2  # fits again with the targets of bodies left below the floor raised
FLOOR_SLACK = 0.002  # m: this deep in the floor is resting on it (MuJoCo's soft contacts rest so under weight)
MIN_DAMPING = 1e-3  # keeps the directions no target pins (a hand's twist) from running off
STEP_TOLERANCE = 1e-5  # stop when the step is below this (rad or m)
ABSOLUTE_TOLERANCE = 1e-6  # or by less than this (m²)
COST_TOLERANCE = 1e-3  # or when a step lowers the squared error by less than this fraction


@dataclass
class PoseTargets:
    """Where a pose puts the bodies: per body its id, the point of it (body frame) that the pose
    places, at world `positions` (F, B, 3), and the body's world `rotations` (F, B, 3, 3)."""
    body_ids: np.ndarray
    points: np.ndarray
    positions: np.ndarray
    rotations: np.ndarray
    weights: np.ndarray | None = None  # (B,) of each body's position (END_WEIGHT on hands and feet); 1 if None
    turn_weights: np.ndarray | None = None  # (B,) of each body's turn, m per radian; ROTATION_WEIGHT if None
    rest_weight: float = 0.0  # m per radian of a hinge away from zero (its rest), on bodies not targeted: a spine
    # of several joints between a targeted pelvis and chest bends evenly rather than zig-zagging to its limits

    def __post_init__(self):
        if self.weights is None:
            self.weights = np.ones(len(self.body_ids))
        if self.turn_weights is None:
            self.turn_weights = np.full(len(self.body_ids), ROTATION_WEIGHT)


@dataclass
class PoseFit:
    """The fitted configurations (F, nq) and, per frame and body, how far the fitted body's point is
    from its target (m) and how far it is turned from it (rad); per frame the hinges held at a limit and
    how deep the pose itself puts the character's shapes into the floor (m; the fit lifts them out)."""
    qpos: np.ndarray
    position_error: np.ndarray
    angle_error: np.ndarray
    at_limit: list[list[str]]
    below_floor: np.ndarray
    lowered: np.ndarray  # (F, B) m each body's target was moved down onto the floor (`grounding`)


class _Fitter:
    """One model's fitting state: its data, the hinge limits, the character's geoms that must stay above
    the floor (those of the tree the model's first joint moves; the furniture is not fitted)."""

    def __init__(self, model, floor: float | None):
        self.model = model
        self.data = mujoco.MjData(model)
        self.floor = floor
        ranged = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
        limited = [j for j in range(model.njnt) if model.jnt_limited[j] and int(model.jnt_type[j]) in ranged]
        self.limit_qadr = np.array([model.jnt_qposadr[j] for j in limited], int)
        self.limit_dadr = np.array([model.jnt_dofadr[j] for j in limited], int)
        self.limit_lo = np.array([model.jnt_range[j][0] for j in limited]).reshape(-1)
        self.limit_hi = np.array([model.jnt_range[j][1] for j in limited]).reshape(-1)
        self.limit_names = [model.joint(j).name for j in limited]
        self.hinges = np.array([j for j in range(model.njnt)
                                if int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_HINGE)], int)
        root = int(model.jnt_bodyid[0]) if model.njnt else 0  # the character: the first joint's tree
        character = (model.body_rootid[model.geom_bodyid] == model.body_rootid[root]) & (model.geom_bodyid > 0)
        collides = (model.geom_contype != 0) | (model.geom_conaffinity != 0)
        self.geoms = np.flatnonzero(character & collides)
        self._shapes(model)
        self.jacp = np.zeros((3, model.nv))
        self.jacr = np.zeros((3, model.nv))
        self.weights = None

    def _shapes(self, model) -> None:
        """Per collidable geom, what its lowest point needs: the half extents along its own axes that
        reach down (a box's three, a capsule's or cylinder's half length), the radius below them (a
        sphere, a capsule; other shapes their bounding sphere), the ellipsoids' and cylinders' sizes."""
        t = mujoco.mjtGeom
        kind, size = model.geom_type[self.geoms], model.geom_size[self.geoms]
        self.box_size = np.zeros((len(kind), 3))
        self.box_size[kind == t.mjGEOM_BOX] = size[kind == t.mjGEOM_BOX]
        axial = (kind == t.mjGEOM_CAPSULE) | (kind == t.mjGEOM_CYLINDER)
        self.box_size[axial, 2] = size[axial, 1]
        self.radius = np.where((kind == t.mjGEOM_SPHERE) | (kind == t.mjGEOM_CAPSULE), size[:, 0], 0.0)
        known = (t.mjGEOM_SPHERE, t.mjGEOM_CAPSULE, t.mjGEOM_BOX, t.mjGEOM_ELLIPSOID, t.mjGEOM_CYLINDER)
        other = ~np.isin(kind, known)
        self.radius[other] = model.geom_rbound[self.geoms][other]
        self.ellipsoids = kind == t.mjGEOM_ELLIPSOID
        self.ellipsoid_size = np.where(self.ellipsoids[:, None], size, 0.0)
        self.cylinders = kind == t.mjGEOM_CYLINDER
        self.cylinder_radius = size[self.cylinders, 0]

    def _kinematics(self, qpos) -> None:
        self.data.qpos[:] = qpos
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_comPos(self.model, self.data)

    def _lowest(self, centre=None, rot=None, geoms=None) -> np.ndarray:
        """The lowest point in the world (G, 3) of each collidable geom (or of those at `geoms`, an index
        into them) placed at `centre` (G, 3) and turned by `rot` (G, 3, 3) — as posed now by default:
        exact for spheres, capsules, boxes, ellipsoids and cylinders, other shapes by their bounding
        sphere."""
        pick = slice(None) if geoms is None else geoms
        if centre is None:
            centre, rot = self.data.geom_xpos[self.geoms], self.data.geom_xmat[self.geoms].reshape(-1, 3, 3)
        up = rot[:, 2, :]  # the world's up in each geom's frame
        sign = np.where(up >= 0, 1.0, -1.0)
        local = -sign * self.box_size[pick]  # boxes; capsule and cylinder ends (the axis' half length)
        ellipsoids, cylinders = self.ellipsoids[pick], self.cylinders[pick]
        if ellipsoids.any():
            v = self.ellipsoid_size[pick] ** 2 * up
            local[ellipsoids] = -(v / np.sqrt(np.maximum((up * v).sum(1, keepdims=True), 1e-24)))[ellipsoids]
        if cylinders.any():
            radial = up[cylinders] * [1.0, 1.0, 0.0]
            n = np.maximum(np.linalg.norm(radial, axis=1, keepdims=True), 1e-9)
            local[cylinders] -= self.cylinder_radius[pick][cylinders, None] * radial / n
        low = centre + np.einsum("gij,gj->gi", rot, local)
        low[:, 2] -= self.radius[pick]
        return low

    def target_lows(self, targets: PoseTargets) -> np.ndarray:
        """Per frame and target body (F, B): the height of the lowest point of the body's own geoms placed
        as its target says (NaN for a body without collidable geoms, or none at all without a floor)."""
        frames = len(targets.positions)
        lows = np.full((frames, len(targets.body_ids)), np.nan)
        if self.floor is None or not len(self.geoms):
            return lows
        body_of_geom = self.model.geom_bodyid[self.geoms]
        for k, b in enumerate(targets.body_ids):
            own = np.flatnonzero(body_of_geom == b)
            if not len(own):
                continue
            g = self.geoms[own]
            local_rot = np.empty((len(g), 3, 3))
            for i, geom in enumerate(g):
                mujoco.mju_quat2Mat(local_rot[i].reshape(-1), self.model.geom_quat[geom])
            rot = targets.rotations[:, k]  # (F, 3, 3)
            origin = targets.positions[:, k] - np.einsum("fij,j->fi", rot, targets.points[k])
            centre = origin[:, None, :] + np.einsum("fij,gj->fgi", rot, self.model.geom_pos[g])
            turned = np.einsum("fij,gjk->fgik", rot, local_rot)
            low = self._lowest(centre.reshape(-1, 3), turned.reshape(-1, 3, 3), np.tile(own, frames))
            lows[:, k] = low[:, 2].reshape(frames, len(g)).min(axis=1)
        return lows

    def lifted_targets(self, targets: PoseTargets) -> PoseTargets:
        """`targets` with each body raised out of the floor where its own geoms, placed as its target
        says, would be below it: the fit then lifts that body (a foot bends its knee) rather than the
        floor pulling the whole pose."""
        if self.floor is None or not len(self.geoms):
            return targets
        positions = targets.positions.copy()
        depth = np.nan_to_num(self.floor - FLOOR_SLACK - self.target_lows(targets), nan=0.0)
        positions[:, :, 2] += np.maximum(depth, 0.0)
        return PoseTargets(targets.body_ids, targets.points, positions, targets.rotations, targets.weights,
                           targets.turn_weights, targets.rest_weight)

    def _residual(self, targets: PoseTargets, f: int, with_jacobian: bool):
        """The weighted residual of the targets (and its Jacobian with respect to the configuration's
        velocity): point positions, then turns compared by the bodies' axes (the chordal distance,
        smooth everywhere, where the log map's derivative is not)."""
        m, d = self.model, self.data
        wp, wr = self.weights
        ids = targets.body_ids
        nb = len(ids)
        axes = d.xmat[ids].reshape(-1, 3, 3)
        world_points = np.einsum("bij,bj->bi", axes, targets.points) + d.xpos[ids]
        wr = wr / np.sqrt(2.0)  # ‖ΔR‖ ≈ √2·angle for small angles: the weight stays metres per radian
        rest = targets.rest_weight
        loose = self.hinges[~np.isin(m.jnt_bodyid[self.hinges], ids)] if rest else self.hinges[:0]
        r = np.concatenate([(wp * (targets.positions[f] - world_points)).reshape(-1),
                            (wr[:, :, None] * (targets.rotations[f] - axes)).reshape(-1),
                            -rest * d.qpos[m.jnt_qposadr[loose]]])
        if not with_jacobian:
            return r, None
        jacp = np.empty((nb, 3, m.nv))
        jacr = np.empty((nb, 3, m.nv))
        for k, b in enumerate(ids):
            mujoco.mj_jac(m, d, jacp[k], jacr[k], world_points[k], int(b))
        # d(axis j)/dq = ω × axis j, laid out as the residual's (body, row i, axis j)
        turn = np.cross(jacr.transpose(0, 2, 1)[:, :, None, :], axes.transpose(0, 2, 1)[:, None, :, :])
        jac = np.concatenate([(wp[:, :, None] * jacp).reshape(-1, m.nv),
                              (wr[:, :, None, None] * turn.transpose(0, 3, 2, 1)).reshape(-1, m.nv)])
        if len(loose):
            rows = np.zeros((len(loose), m.nv))
            rows[np.arange(len(loose)), m.jnt_dofadr[loose]] = rest
            jac = np.concatenate([jac, rows])
        return r, jac

    def _clamp(self, qpos) -> None:
        qpos[self.limit_qadr] = np.clip(qpos[self.limit_qadr], self.limit_lo, self.limit_hi)

    def _step(self, qpos, jac, r, damping) -> np.ndarray:
        """The damped least-squares step, with the joints it would push past a limit held there (an
        active set)."""
        nv = self.model.nv
        free = np.ones(nv, bool)
        hess, grad = jac.T @ jac + damping * np.eye(nv), jac.T @ r
        step = np.zeros(nv)
        for _ in range(4):
            step[:] = 0.0
            step[free] = np.linalg.solve(hess[np.ix_(free, free)], grad[free])
            held = self._held(qpos, step)
            if not len(held) or not free[held].any():
                break
            free[held] = False
        return step

    def _held(self, qpos, step) -> np.ndarray:
        """The dofs at a limit that `step` would push beyond it."""
        q = qpos[self.limit_qadr]
        s = step[self.limit_dadr]
        out = ((q <= self.limit_lo + 1e-9) & (s < 0)) | ((q >= self.limit_hi - 1e-9) & (s > 0))
        return self.limit_dadr[out]

    def fit(self, targets: PoseTargets, f: int, start, from_afar: bool = True) -> np.ndarray:
        """From afar (`start` not a neighbouring frame's fit): turns first (every body turned as the
        pose says, the root placed: fitting positions from far away folds limbs the wrong way round),
        then positions and turns together. A body still below the floor then has its target raised by
        its depth and the pose is fitted again; what is left after that lifts the whole pose."""
        nb = len(targets.body_ids)
        qpos = np.array(start, float)
        both = (targets.weights[:, None], targets.turn_weights[:, None])
        if from_afar:
            root_only = np.zeros((nb, 1))
            root_only[0] = 1.0
            qpos = self._least_squares(targets, f, qpos, (root_only, np.ones((nb, 1))))
            qpos = self._least_squares(targets, f, qpos, (both[0], np.zeros((nb, 1))))
        qpos = self._least_squares(targets, f, qpos, both)
        if self.floor is None or not len(self.geoms):
            return qpos
        for _ in range(FLOOR_PASSES):
            depth = self._depth_per_target(targets)
            if depth.max() <= 1e-4:
                return qpos
            targets.positions[f, :, 2] += depth
            qpos = self._least_squares(targets, f, qpos, both)
        if self.model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE:  # what is left lifts the whole pose
            qpos[int(self.model.jnt_qposadr[0]) + 2] += max(self.floor - FLOOR_SLACK - self._lowest()[:, 2].min(), 0.0)
            self._kinematics(qpos)
        return qpos

    def _depth_per_target(self, targets: PoseTargets) -> np.ndarray:
        """How far below resting on the floor each target body's geoms reach as posed now (0 where none
        does)."""
        depth = np.maximum(self.floor - FLOOR_SLACK - self._lowest()[:, 2], 0.0)
        body_of_geom = self.model.geom_bodyid[self.geoms]
        return np.array([depth[body_of_geom == b].max(initial=0.0) for b in targets.body_ids])

    def _least_squares(self, targets: PoseTargets, f: int, start, weights) -> np.ndarray:
        """Levenberg–Marquardt from `start` with these (position, turn) weights per body."""
        m = self.model
        self.weights = weights
        qpos = np.array(start, float)
        self._clamp(qpos)
        self._kinematics(qpos)
        r, jac = self._residual(targets, f, True)
        cost = float(r @ r)
        damping = MIN_DAMPING
        for _ in range(MAX_ITERATIONS):
            step = self._step(qpos, jac, r, damping)
            trial = qpos.copy()
            mujoco.mj_integratePos(m, trial, step, 1.0)
            self._clamp(trial)
            self._kinematics(trial)
            r_new, _ = self._residual(targets, f, False)
            new_cost = float(r_new @ r_new)
            if new_cost < cost:
                converged = (cost - new_cost < COST_TOLERANCE * cost + ABSOLUTE_TOLERANCE
                             or np.abs(step).max() < STEP_TOLERANCE)
                qpos, cost = trial, new_cost
                damping = max(damping * 0.3, MIN_DAMPING)
                if converged:
                    break
                r, jac = self._residual(targets, f, True)
            else:
                damping *= 10.0
                if damping > 1e4:
                    break
        self._kinematics(qpos)
        return qpos

    def errors(self, targets: PoseTargets, f: int) -> tuple[np.ndarray, np.ndarray]:
        d = self.data
        ids = targets.body_ids
        world = np.einsum("bij,bj->bi", d.xmat[ids].reshape(-1, 3, 3), targets.points) + d.xpos[ids]
        position = np.linalg.norm(world - targets.positions[f], axis=1)
        rel = np.einsum("bji,bjk->bik", d.xmat[ids].reshape(-1, 3, 3), targets.rotations[f])
        angle = np.arccos(np.clip((np.trace(rel, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0))
        return position, angle

    def at_limit(self, qpos) -> list[str]:
        q = qpos[self.limit_qadr]
        hit = (q <= self.limit_lo + 1e-6) | (q >= self.limit_hi - 1e-6)
        return [self.limit_names[k] for k in np.flatnonzero(hit)]


def root_start(model, targets: PoseTargets, f: int, start, root_joint: str = "root") -> np.ndarray:
    """`start` with the free root joint put where the first target body (the root body) says."""
    q = np.array(start, float)
    j = model.joint(root_joint).id
    if model.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE or int(model.jnt_bodyid[j]) != int(targets.body_ids[0]):
        return q
    a = int(model.jnt_qposadr[j])
    rot = targets.rotations[f, 0]
    q[a:a + 3] = targets.positions[f, 0] - rot @ targets.points[0]
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, rot.reshape(-1))
    q[a + 3:a + 7] = quat
    return q


def grounded_targets(model, targets: PoseTargets, dt: float, ends: np.ndarray, soles: np.ndarray,
                     floor: float = 0.0) -> tuple[PoseTargets, np.ndarray]:
    """A clip's `targets` (a grid of `dt` s) put on the floor (`grounding`): the soles (a mask of the
    target bodies, their sole's normal the one that is up at the model's rest) turned flat where they
    stand, the pose moved down onto the floor and the hands and feet (`ends`) still above it set down;
    and per frame and body how far its target was lowered (m)."""
    from . import grounding
    fitter = _Fitter(model, floor)
    fitter._kinematics(model.qpos0)
    up = fitter.data.xmat[targets.body_ids].reshape(-1, 3, 3)[:, 2, :]  # the world's up in each body's frame
    weights = grounding.flat_weights(fitter.target_lows(targets) - floor, targets.positions,
                                     grounding.tilts(targets.rotations, up), dt, soles)
    flat = replace(targets, rotations=grounding.turned_flat(targets.rotations, up, weights),
                   turn_weights=np.where(soles, np.maximum(targets.turn_weights, SOLE_TURN_WEIGHT),
                                         targets.turn_weights))
    lowered = grounding.ground_offsets(fitter.target_lows(flat) - floor, flat.positions, dt, ends)
    return replace(flat, positions=flat.positions - lowered[..., None] * [0.0, 0.0, 1.0]), lowered


def fit_poses(model, targets: PoseTargets, floor: float | None = 0.0, start=None,
              lowered: np.ndarray | None = None) -> PoseFit:
    """The configurations of `model` that best put its bodies on `targets`, frame after frame (each
    starting from the one before, the first from `start` or the model's default); `lowered`: how far the
    targets were lowered onto the floor (`grounded_targets`), for the record."""
    fitter = _Fitter(model, floor)
    wanted = targets
    targets = fitter.lifted_targets(targets)  # a copy: the fit raises its targets further where needed
    below_floor = np.max(targets.positions[:, :, 2] - wanted.positions[:, :, 2], axis=1)
    frames = len(targets.positions)
    qpos = np.empty((frames, model.nq))
    position_error = np.empty((frames, len(targets.body_ids)))
    angle_error = np.empty_like(position_error)
    at_limit = []
    previous = model.qpos0 if start is None else np.asarray(start, float)
    for f in range(frames):
        # the root from its own target, the joints from the frame before: poses of a clip change little
        begin = root_start(model, targets, f, previous)
        qpos[f] = fitter.fit(targets, f, begin, from_afar=f == 0 and start is None)
        position_error[f], angle_error[f] = fitter.errors(wanted, f)
        at_limit.append(fitter.at_limit(qpos[f]))
        previous = qpos[f]
    return PoseFit(qpos, position_error, angle_error, at_limit, below_floor,
                   np.zeros(position_error.shape) if lowered is None else lowered)
