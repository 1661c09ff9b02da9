"""Tracking a reference motion with the MPC machinery: the objective that follows the reference and
the tracker that checks its keyframes off.

The objective compares every rollout step with the reference at the same instant: each hinge angle
and each body position (in that joint's or body's group, so the partwise planner recombines them
like the contact objective's terms) — a body's position weighed more while the reference has it at
rest on the scene, and its horizontal speed counted there (a planted foot stays planted, where it was
set down), and with `w_anchor` how far such a body's geom centres get from where they are at the plan's start (a
slow creep and toes or a heel lifting cost as a slide does; scoring an executed segment — the agent's own
cost, which picks among particles — it is the creep since the segment began) — the root's position and
orientation, the centre
of mass's horizontal position and velocity where the reference balances (its centre of mass over the
bodies it has on the scene: there the weight goes where the reference puts it — relative to the
bodies it plants, so a foot set down a little off moves the balance point with it; a reference that
falls into a chair or leaps is not held to its centre of mass), joint and root velocity errors, and
the planner's correction. Near a keyframe's time the pose and position terms count again, × its
weight × `key_boost`, against the reference moved by how far it passes beside the keyframe: a
sketch's key that an assisted motion misses (one overshot 'knees_up' by 16 cm where its assist let it)
is aimed at itself, not at the miss; a reference that passes through its keys is tracked as it is.
With `w_penetration`, each body sinking into the scene past a centimetre counts too (MuJoCo's contact
sensor) while the reference keeps it off the scene: a foot is set down rather than slammed 2 cm into
the floor, and one pushing off or a seat taking the weight is left alone. Norms follow the contact
objective (smooth-abs with p = 0.1 for poses, squares for velocities); the correction is the PD
targets' offset from the reference's angles (½ square) or, with motors, the torques' cosh norm
(MuJoCo MPC's).
"""
from __future__ import annotations

import mujoco
import numpy as np

from ...builders.mjcf import ROOT_JOINT
from ...core.rotations import angle_between, rotate
from ...formats.scene import GROUPS
from ...formats.settings import TrackingTermSettings
from ...formats.track_keyframes import TrackKeyframe
from ...physics.model import BuiltModel
from ...physics.reference import Reference
from ..keyframe_tracker import KeyframeTracker
from .contact import Costs, Objective, smooth_abs
from .control import control_cost

COM_P = 0.02  # smooth-abs parameter of the centre-of-mass term: balance is a matter of centimetres
# A reference within this much of a keyframe's tolerances (`TrackKeyframe.distance`) at its time
# passes through it: its boost pulls towards the reference as it is (a sketch's linear play or a kept
# action, sampled a few milliseconds off the key).
THROUGH = 0.1
# m: how deep a body may sink into the scene before the penetration term counts it (MuJoCo's soft
# contacts let a foot pushing off the floor sink 1-1.6 cm; a foot slammed down sinks past 2 cm).
PENETRATION_ALLOWANCE = 0.01
PENETRATION_UNIT = 0.01  # m: the penetration term counts the sinking past the allowance in centimetres
# m: a body the reference plants counts as set down (its slipping counts) within this height above where
# the reference has it; higher, it is still on its way there (a step-up's foot not yet on the step).
SLIP_HEIGHT = 0.02
# m: smooth-abs parameter of the anchor term — below it a creep costs about its square, so a planted foot creeping
# 2 cm over a plan costs four times what it did with the posture terms' 10 cm (the stand–kneel–stand capture's feet
# slid 40% less over 8 seeds: benchmarks/RESULTS.md).
ANCHOR_P = 0.02


def shape_points(model, body: int) -> np.ndarray:
    """Points of `body`'s collidable shapes in its own frame (k, 3): each geom's centre — a foot's capsule
    centres, ahead of and below its ankle, move as its heel or toes lift; its origin alone for a body without
    shapes. (With the capsules' ends too, the capture's sit was within on fewer seeds: RESULTS.)"""
    points = [model.geom_pos[g] for g in np.flatnonzero(model.geom_bodyid == body)
              if model.geom_contype[g] != 0 or model.geom_conaffinity[g] != 0]
    return np.array(points) if points else np.zeros((1, 3))


def pose_columns(built: BuiltModel) -> np.ndarray:
    """The character's qpos columns in a TrackKeyframe's order: root position, root quaternion, the
    hinges in the scene's joint order."""
    m = built.model
    root = int(m.jnt_qposadr[m.joint(ROOT_JOINT).id])
    hinges = [int(m.jnt_qposadr[m.joint(j.name).id]) for j in built.scene.joints() if j.type == "hinge"]
    return np.array(list(range(root, root + 7)) + hinges, dtype=int)


class TrackingObjective(Objective):
    """The tracking cost of a batch of rollouts against `reference`."""

    def __init__(self, built: BuiltModel, reference: Reference, keyframes: list[TrackKeyframe],
                 terms: TrackingTermSettings, key_window: float):
        super().__init__(built)
        m = built.model
        self.reference, self.s = reference, terms
        self.joint_qpos = np.array([int(m.jnt_qposadr[m.joint(j.name).id]) for j in built.scene.joints()], dtype=int)
        self.root_qpos = int(m.jnt_qposadr[m.joint(ROOT_JOINT).id])
        self.root_dof = int(m.jnt_dofadr[m.joint(ROOT_JOINT).id])
        self.tracked_bodies = list(built.character_bodies)
        self.shape_points = [shape_points(m, m.body(b).id) for b in self.tracked_bodies]
        self.body_group_index = np.array([self.group_index[self.body_group[b]] for b in self.tracked_bodies])
        self.ref_body_pos = np.stack([reference.xpos[b] for b in self.tracked_bodies], axis=1)  # (n, nbody, 3)
        def per_body(flags: dict | None) -> np.ndarray:  # (n, nbody) 0/1 of a per-body flag, 0 where unknown
            flags = flags or {}
            return np.stack([flags.get(b, np.zeros(len(reference.qpos), dtype=bool))
                             for b in self.tracked_bodies], axis=1).astype(float)
        self.ref_planted = per_body(reference.planted)
        self.ref_clear = 1.0 - per_body(reference.touching)
        # Where the reference balances on what it plants: per row, the weights of its planted bodies'
        # mean position (the support's centre) and the centre of mass's place from it.
        count = self.ref_planted.sum(axis=1, keepdims=True)
        self.support_weights = np.divide(self.ref_planted, count, out=np.zeros_like(self.ref_planted),
                                         where=count > 0) if terms.com_on_support else None
        if self.support_weights is not None and reference.com is not None:
            support = np.einsum("nb,nbk->nk", self.support_weights, self.ref_body_pos)
            self.ref_com_target = reference.com - support  # rows with nothing planted: the world place
        else:
            self.ref_com_target = reference.com
        # The keyframe boost per grid row: 1 + boost × Σ w_k exp(−((t − t_k)/σ)²), σ = half the window.
        t = np.arange(len(reference.qpos)) * reference.dt
        sigma = 0.5 * key_window
        bumps = np.array([k.weight * np.exp(-((t - k.time) / sigma) ** 2) for k in keyframes]).reshape(-1, len(t))
        self.boost = 1.0 + terms.key_boost * bumps.sum(axis=0)
        self.key_qpos, self.key_body_pos = key_targets(built, reference, keyframes, bumps, self.tracked_bodies)

    def bodies_for(self, kf) -> list[str]:
        return self.tracked_bodies

    def _shapes_moved(self, feat: dict, bodies: np.ndarray) -> np.ndarray:
        """(nroll, nstep, len(bodies)): how far the shape points (`shape_points`) of each of `bodies` (indices
        into the tracked bodies) are from where they were at the rollout's first step, on average (m)."""
        out = []
        for j in bodies:
            b, local = self.tracked_bodies[j], self.shape_points[j]
            quat = feat["quat"][b][..., None, :]
            world = feat["pos"][b][..., None, :] + rotate(np.broadcast_to(quat, quat.shape[:-2] + (len(local), 4)),
                                                           local)
            out.append(np.linalg.norm(world - world[:, :1], axis=-1).mean(axis=-1))
        return np.stack(out, axis=-1)

    def evaluate(self, feat: dict, qvel: np.ndarray, ctrl: np.ndarray, kf) -> Costs:
        """feat as `Features.as_dict` gives it, with "time" and "qpos"; qvel (nroll, nstep, nv);
        ctrl (nroll, nstep, nu). `kf` (the current keyframe) is not needed: the reference says it all."""
        s, ref = self.s, self.reference
        nroll, nstep = qvel.shape[:2]
        rows = ref.index(feat["time"])  # (nroll, nstep); one row of them where every rollout keeps the same times
        if (rows == rows[:1]).all():  # (the reference read once for the batch, not once per rollout)
            rows = rows[:1]
        qpos, q_ref, v_ref = feat["qpos"], ref.qpos[rows], ref.qvel[rows]
        boost = self.boost[rows]
        values: list[np.ndarray] = []
        owners: list[tuple] = []

        def add(weight, value, where):
            if weight != 0.0:
                values.append(weight * np.broadcast_to(value, (nroll, nstep)))
                owners.append(tuple(where))

        # Near a keyframe the boost pulls towards the reference moved onto the keyframe (`key_targets`:
        # the sketch's pose where the reference only passes beside it, as an assisted motion may).
        extra = boost - 1.0
        keyed = bool(extra.any())  # (far from every keyframe the boost's terms are all 0: not computed)
        q_key = self.key_qpos[rows] if keyed else None
        joint_err = smooth_abs(qpos[..., self.joint_qpos] - q_ref[..., self.joint_qpos])
        if keyed:
            joint_key = qpos[..., self.joint_qpos] - q_key[..., self.joint_qpos]
            joint_err = joint_err + extra[..., None] * smooth_abs(joint_key)
        vel_err = 0.5 * (qvel[..., self.dof_idx] - v_ref[..., self.dof_idx]) ** 2
        body_pos = np.stack([feat["pos"][b] for b in self.tracked_bodies], axis=-2)  # (nroll, nstep, nbody, 3)
        ref_pos = self.ref_body_pos[rows]  # (1 or nroll, nstep, nbody, 3)
        ref_body_err = smooth_abs(np.linalg.norm(body_pos - ref_pos, axis=-1))
        body_err = ref_body_err
        if keyed:
            body_err = body_err + extra[..., None] * smooth_abs(np.linalg.norm(body_pos - self.key_body_pos[rows],
                                                                                axis=-1))
        planted = self.ref_planted[rows]
        contact_err = boost[..., None] * planted * ref_body_err  # bodies the reference plants
        some = np.flatnonzero(planted.any(axis=(0, 1)))  # (their own terms computed for them alone)
        slip = np.zeros(body_pos.shape[:3])  # and their sliding: the horizontal speed between steps, where
        if s.w_slip and nstep > 1 and len(some):  # the body is down as low as the reference plants it (not on its way)
            feet = body_pos[..., some, :]
            speed = np.diff(feet[..., :2], axis=1) / ref.dt
            down = feet[:, 1:, :, 2] - ref_pos[:, 1:, some, 2] < SLIP_HEIGHT
            slip[:, 1:, some] = 0.5 * np.sum(speed ** 2, axis=-1) * planted[:, 1:, some] * down
        anchor = None  # and a body down where the reference keeps it planted from the plan's start on: how
        if s.w_anchor:  # far its shapes get from where they are now (a slow creep, a heel or toes lifting)
            counted = np.cumprod(planted, axis=1) \
                * (body_pos[:, :1, :, 2] - ref_pos[:, :1, :, 2] < SLIP_HEIGHT)
            anchor = np.zeros(counted.shape)  # (the shapes turned only for the bodies it counts: the feet)
            anchored = np.flatnonzero(counted.any(axis=(0, 1)))
            if len(anchored):
                moved = self._shapes_moved(feat, anchored)
                anchor[..., anchored] = smooth_abs(moved, ANCHOR_P) * counted[..., anchored]
        # Sinking in counts where the reference keeps the body off the scene: a foot slammed down, not
        # one pushing off the floor or a seat taking the weight (1-1.6 cm, MuJoCo's soft contacts).
        sunk = self._penetration(feat) * self.ref_clear[rows] if s.w_penetration else None
        if ref.feedforward is None:  # torques: MuJoCo MPC's cosh norm
            control = control_cost(ctrl[..., :self.nu], self.control_softness)
        else:  # PD targets: how far the plan moves them off the reference's angles
            control = 0.5 * (ctrl[..., :self.nu] - ref.feedforward[rows]) ** 2
        for g, name in enumerate(GROUPS):  # each group sees its own joints and bodies
            add(s.w_joint, joint_err[..., self.dof_group == g].sum(axis=-1), (name,))
            add(s.w_body, body_err[..., self.body_group_index == g].sum(axis=-1), (name,))
            add(s.w_contact, contact_err[..., self.body_group_index == g].sum(axis=-1), (name,))
            add(s.w_slip, slip[..., self.body_group_index == g].sum(axis=-1), (name,))
            if anchor is not None:
                add(s.w_anchor, anchor[..., self.body_group_index == g].sum(axis=-1), (name,))
            add(s.w_joint_vel, vel_err[..., self.dof_group == g].sum(axis=-1), (name,))
            if sunk is not None:
                add(s.w_penetration, sunk[..., self.body_group_index == g].sum(axis=-1), (name,))
            add(s.w_control, control[..., self.act_group == g].sum(axis=-1), (name,))
        r = self.root_qpos
        root_pos, root_rot = root_position_error(qpos, q_ref, r), root_rotation_error(qpos, q_ref, r)
        if keyed:
            root_pos = root_pos + extra * root_position_error(qpos, q_key, r)
            root_rot = root_rot + extra * root_rotation_error(qpos, q_key, r)
        d = self.root_dof
        root_vel = 0.5 * np.sum((qvel[..., d:d + 3] - v_ref[..., d:d + 3]) ** 2, axis=-1)
        add(s.w_root_pos, root_pos, GROUPS)  # balance and whereabouts: every group's concern
        add(s.w_root_rot, root_rot, GROUPS)
        add(s.w_root_vel, root_vel, GROUPS)
        if ref.com is not None and (s.w_com or s.w_com_vel):  # balance: the weight where the reference puts it
            held = ref.balanced[rows] if ref.balanced is not None else 1.0
            target = self.ref_com_target[rows][..., :2]
            if self.support_weights is not None:  # the rollout's own support, weighted as the reference's
                weights = np.broadcast_to(self.support_weights[rows], body_pos.shape[:3])
                target = target + np.einsum("rsb,rsbk->rsk", weights, body_pos[..., :2])
            com_err = smooth_abs(np.linalg.norm(feat["com"][..., :2] - target, axis=-1), COM_P)
            com_vel = 0.5 * np.sum((feat["comvel"][..., :2] - ref.comvel[rows][..., :2]) ** 2, axis=-1)
            add(s.w_com, held * boost * com_err, GROUPS)
            add(s.w_com_vel, held * com_vel, GROUPS)
        return Costs.of_terms(values, owners, nroll, nstep)

    def _penetration(self, feat: dict) -> np.ndarray:
        """Per rollout step and body (nroll, nstep, nbody): the square of how far past
        PENETRATION_ALLOWANCE the body's deepest contact sinks in, in PENETRATION_UNITs."""
        depth = -np.stack([feat["contact"][b] for b in self.tracked_bodies], axis=-1)
        return (np.maximum(depth - PENETRATION_ALLOWANCE, 0.0) / PENETRATION_UNIT) ** 2


def root_position_error(qpos: np.ndarray, target: np.ndarray, r: int) -> np.ndarray:
    """Smooth-abs distance of the root (qpos columns r..r+3) from the target's."""
    return smooth_abs(np.linalg.norm(qpos[..., r:r + 3] - target[..., r:r + 3], axis=-1))


def root_rotation_error(qpos: np.ndarray, target: np.ndarray, r: int) -> np.ndarray:
    """Smooth-abs angle between the root's orientation (quaternion at qpos column r+3) and the target's."""
    return smooth_abs(angle_between(qpos[..., r + 3:r + 7], target[..., r + 3:r + 7]))


def key_targets(built: BuiltModel, reference: Reference, keyframes: list[TrackKeyframe], bumps: np.ndarray,
                bodies: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per reference grid row, the pose the keyframe boost pulls towards, and its bodies' positions:
    near a keyframe the reference moved by how far it passes beside the keyframe at the keyframe's
    time (hinges and root position shifted, the root turned, each body shifted as MuJoCo forward
    kinematics of the keyframe's pose has it); elsewhere, and where the reference passes within
    `THROUGH` of the keyframe's tolerances, the reference itself."""
    m = built.model
    qpos = reference.qpos.copy()
    body_pos = np.stack([reference.xpos[b] for b in bodies], axis=1)
    if not keyframes:
        return qpos, body_pos
    cols = pose_columns(built)
    r = int(cols[0])
    data = mujoco.MjData(m)
    body_ids = [m.body(b).id for b in bodies]
    nearest = np.argmax(bumps, axis=0)
    near = bumps.max(axis=0) > 1e-6
    for i, k in enumerate(keyframes):
        at = int(reference.index(k.time))
        passing = reference.qpos[at, cols]
        if k.distance(passing[:3], passing[3:7], passing[7:]) <= THROUGH:
            continue
        rows = near & (nearest == i)
        key = reference.qpos[at].copy()
        key[cols] = k.qpos
        shift = key - reference.qpos[at]
        shift[r + 3:r + 7] = 0.0
        qpos[rows] += shift
        turn = np.zeros(4)
        conj = np.zeros(4)
        mujoco.mju_negQuat(conj, reference.qpos[at, r + 3:r + 7])
        mujoco.mju_mulQuat(turn, key[r + 3:r + 7], conj)
        for row in np.flatnonzero(rows):
            mujoco.mju_mulQuat(qpos[row, r + 3:r + 7], turn, reference.qpos[row, r + 3:r + 7])
        data.qpos[:] = key
        mujoco.mj_kinematics(m, data)
        body_pos[rows] += data.xpos[body_ids] - np.array([reference.xpos[b][at] for b in bodies])
    return qpos, body_pos


class ReferenceTracker(KeyframeTracker):
    """Track keyframes checked off in order: reached at the first instant from a keyframe's time
    to `window` after it where the pose is within its tolerances (`distance` ≤ 1), missed once the
    window has passed. Falling while the reference is upright fails the keyframe as in a contact solve."""

    def update(self, t: float, distance: float, steady=lambda: True) -> None:
        """As `KeyframeTracker.update`; a track keyframe is met at its time, steady or not (the reference
        says how the character moves there)."""
        if self.done:
            return
        kf = self.current
        if t < kf.time - 1e-9:  # not before its time: the physical version lasts as long as the reference
            return
        if distance <= kf.tolerance:
            self.reach(t)
        elif t > kf.time + kf.window + 1e-9:
            self.failed, self.failure = True, "missed"
