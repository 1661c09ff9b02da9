"""Sticky hands: a character body that touches a free object it is keyed to hold is welded to it
(a MuJoCo weld equality, switched on when all its keyed hands touch it and off when no keyframe holds
it any more), as animation tools pin hands — the alternative to honest friction grasps, which a
sampling planner rarely finds. The weld's force is measured, so the animator sees when a grasp is
beyond what friction could hold.

The welds are in the model from the start, inactive (`add_grasp_welds`); `Grasper` decides each
control step which are on. Whether one is on is MuJoCo state (`eq_active`, in the checkpoints'
integration state, and fed to the planner's rollouts as a control: `RolloutEngine.run`); the pose
it holds (the relative pose at the touch) is written into both models' `eq_data` each control step,
so agents sharing the models in one process never see each other's grasps.
"""
from __future__ import annotations

import mujoco
import numpy as np

from ..formats.contact_keyframes import WORLD, ContactKeyframe
from ..formats.scene import SceneDesc
from .pair_points import pair_offset
from .touching import touching_bodies

GRASP_PREFIX = "grasp_"
SHEAR_SLACK_N = 0.5  # N of shear a hand's friction is not asked to justify (the weld's numerical noise)
TWIST_SLACK_NM = 0.05  # N·m of twist likewise
PALM_TWIST = 2.0 / 3.0  # a disc of radius R pressed with N resists twisting up to ⅔ μ N R (uniform pressure)


def grasp_pairs(keyframes: list[ContactKeyframe], scene: SceneDesc) -> list[tuple[str, str]]:
    """(character body, free object) of every pair of the keyframes that joins the two, in order of
    first appearance: the grasps sticky hands may weld."""
    character = {b.name for b in scene.character.bodies}
    free = {b.name for b in scene.environment.bodies if b.kind == "free"}
    out: list[tuple[str, str]] = []
    for kf in keyframes:
        for p in kf.pairs:
            for a, b in ((p.body1, p.body2), (p.body2, p.body1)):
                if a in character and b in free and b != WORLD and (a, b) not in out:
                    out.append((a, b))
    return out


def weld_name(body: str, obj: str) -> str:
    return f"{GRASP_PREFIX}{body}__{obj}"


def add_grasp_welds(spec: mujoco.MjSpec, pairs: list[tuple[str, str]]) -> None:
    """One inactive weld per (character body, object) pair; its pose is set when it switches on.

    The first body keyed to an object holds it as a hand holds a prop parented to it, position and
    orientation; every other body holds only where the object is in its frame (`torquescale` 0), as
    an animator's second hand follows the prop. Two welds that each held the orientation would close
    the arms and the object into a loop rigid at both wrists, twist the object between the hands
    (10–40 N·m at each) and fail more often (benchmarks/RESULTS.md)."""
    holder: dict[str, str] = {}
    for body, obj in pairs:
        holder.setdefault(obj, body)
        eq = spec.add_equality()
        eq.name = weld_name(body, obj)
        eq.type = mujoco.mjtEq.mjEQ_WELD
        eq.objtype = mujoco.mjtObj.mjOBJ_BODY
        eq.name1, eq.name2 = body, obj
        eq.active = False
        data = np.zeros(len(eq.data))
        data[10] = 1.0 if holder[obj] == body else 0.0  # torquescale: orientation held as firmly as position, or not
        eq.data = data


def relative_pose(data: mujoco.MjData, body1: int, body2: int) -> np.ndarray:
    """Body2's pose in body1's frame: position (3) and quaternion (4), as a weld's eq_data[3:10]."""
    r1 = data.xmat[body1].reshape(3, 3)
    pos = r1.T @ (data.xpos[body2] - data.xpos[body1])
    inv, quat = np.zeros(4), np.zeros(4)
    mujoco.mju_negQuat(inv, data.xquat[body1])
    mujoco.mju_mulQuat(quat, inv, data.xquat[body2])
    return np.concatenate([pos, quat])


def grasp_forces(forces: list[np.ndarray], torques: list[np.ndarray],
                 points: list[np.ndarray]) -> tuple[list[np.ndarray], float, float]:
    """How hands that touch an object only at `points` (relative to the torques' origin) could give it
    the wrench they do give — `forces` and `torques` per hand, a weld's and contacts' together.

    Forces at those points give the same total force, and their moments about the origin must add up
    to the total torque. What the given forces' moments miss (the couple) is made by the smallest
    forces that sum to zero (a pair pushing and pulling along the object's sides, least squares), which
    are added to the hands' forces. Two hands cannot make a couple about the line between them, nor one
    hand any: that part is left for the palms to twist. Returns the hands' forces, the couple's
    magnitude, and the magnitude of the part no forces at the points could make (N·m)."""
    points = [np.asarray(r, dtype=float) for r in points]
    couple = np.sum(torques, axis=0) - sum(np.cross(r, f) for r, f in zip(points, forces))
    extra = [np.zeros(3) for _ in points]
    if len(points) > 1:  # pairs (k, last) push and pull: g_k = y_k, g_last = −Σ y_k
        last = points[-1]
        lever = np.hstack([np.cross(r - last, np.eye(3)).T for r in points[:-1]])  # y ↦ Σ (r_k − r_last) × y_k
        y = np.linalg.lstsq(lever, couple, rcond=1e-6)[0].reshape(-1, 3)
        extra[:-1] = list(y)
        extra[-1] = -y.sum(axis=0)
    made = sum(np.cross(r, g) for r, g in zip(points, extra))
    return ([np.asarray(f, dtype=float) + g for f, g in zip(forces, extra)], float(np.linalg.norm(couple)),
            float(np.linalg.norm(couple - made)))


class Grasper:
    """Switches a run's grasp welds: on when the active keyframe pairs bodies with an object and all of
    them touch it at their keyed points (their pairs within the keyframe's tolerance: a hand that bumps
    the box elsewhere does not pick it up, and one hand alone does not close a two-handed grasp), off
    when the keyframe pairs them no more."""

    # what a checkpoint keeps
    STATE = ("relpose", "max_force", "held_s", "max_squeeze", "max_shear", "max_couple", "beyond_s")

    def __init__(self, model: mujoco.MjModel, others: list[mujoco.MjModel], pairs: list[tuple[str, str]]):
        self.pairs = list(pairs)
        self.models = [model] + list(others)
        self.eq = np.array([model.equality(weld_name(b, o)).id for b, o in pairs], dtype=int)
        self.bodies = np.array([[model.body(b).id, model.body(o).id] for b, o in pairs], dtype=int).reshape(-1, 2)
        self.relpose = np.zeros((len(pairs), 7))  # the held pose of each weld (valid while on)
        self.max_force = np.zeros(len(pairs))  # N: the most each weld carried so far
        self.held_s = np.zeros(len(pairs))  # s: how long each was on
        # the hand's whole force on the object split at the object's side: the squeeze (pressing in,
        # which a contact could give) and the shear (along the side, which only friction could give)
        self.max_squeeze = np.full(len(pairs), np.nan)  # N (negative: the hand only ever pulled); nan: not held
        self.max_shear = np.zeros(len(pairs))  # N
        self.max_couple = np.zeros(len(pairs))  # N·m: the hands' torque on the object beyond their forces' moments
        self.beyond_s = np.zeros(len(pairs))  # s: held with more shear than friction allows the squeeze
        self.geoms = [(np.flatnonzero(model.geom_bodyid == b), np.flatnonzero(model.geom_bodyid == o))
                      for b, o in self.bodies]
        self.friction = np.array([max(model.geom_friction[np.concatenate(g), 0]) if all(len(x) for x in g) else 0.0
                                  for g in self.geoms])  # MuJoCo's pair friction: the larger of the two

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def held(self, data: mujoco.MjData) -> frozenset:
        """The (body, object) names whose weld is on now."""
        return frozenset(pair for pair, eq in zip(self.pairs, self.eq) if data.eq_active[eq])

    def update(self, model: mujoco.MjModel, data: mujoco.MjData, kf: ContactKeyframe) -> None:
        """Switch the welds for keyframe `kf` in the state `data` (kinematics and contacts current),
        and write the held poses into every model.

        A grasp closes on an object only when every body the keyframe keys to it touches it and their
        pairs together are within the keyframe's tolerance (the norm it is reached by): the hands close
        together, where the keyframe wants them, so the held pose never locks the keyframe out. Welding
        the first hand to arrive would let that one hand drag a light box about with the full strength
        of a weld, which no palm on one side could (a 1 kg box was pulled off its platform and tipped 60°
        before the second hand came)."""
        if not self.pairs:
            return
        keyed = {}
        for p in kf.pairs:
            keyed[(p.body1, p.body2)] = keyed[(p.body2, p.body1)] = p
        touching = touching_bodies(model, data)
        gaps: dict[str, list[float]] = {}  # object -> the gap of each body keyed to it
        touch: dict[str, bool] = {}  # object -> every body keyed to it touches it (or already holds it)
        for k, ((body, obj), eq) in enumerate(zip(self.pairs, self.eq)):
            if (body, obj) in keyed:
                gaps.setdefault(obj, []).append(float(np.linalg.norm(pair_offset(model, data, keyed[(body, obj)]))))
                touch[obj] = touch.get(obj, True) and (bool(data.eq_active[eq]) or tuple(self.bodies[k]) in touching)
        ready = {obj: touch[obj] and float(np.linalg.norm(g)) <= kf.tolerance for obj, g in gaps.items()}
        for k, ((body, obj), eq) in enumerate(zip(self.pairs, self.eq)):
            on = bool(data.eq_active[eq])
            if on and (body, obj) not in keyed:
                data.eq_active[eq] = 0
            elif not on and (body, obj) in keyed and ready.get(obj, False):
                self.relpose[k] = relative_pose(data, *self.bodies[k])
                data.eq_active[eq] = 1
        for m in self.models:
            m.eq_data[self.eq, 0:3] = 0.0  # the anchor: the object's origin
            m.eq_data[self.eq, 3:10] = self.relpose

    def side_contact(self, model: mujoco.MjModel, data: mujoco.MjData,
                     k: int) -> tuple[np.ndarray, np.ndarray, float] | None:
        """Where grasp `k`'s hand holds its object: the nearest point of the object to the hand's centre,
        the object's outward normal there (towards the hand's centre, which stays outside the object,
        pressed in or not) and the radius of that hand geom (its palm). None if the object has no
        geometry within 0.2 m of the hand."""
        hands, parts = self.geoms[k]
        best, point, centre, radius = np.inf, None, None, 0.0
        fromto = np.zeros(6)
        for h in hands:
            for g in parts:
                dist = mujoco.mj_geomDistance(model, data, int(h), int(g), 0.2, fromto)
                if dist < best:
                    best, point, centre = dist, fromto[3:6].copy(), data.geom_xpos[h].copy()
                    radius = float(model.geom_size[h, 0])
        if point is None:
            return None
        n = centre - point
        norm = float(np.linalg.norm(n))
        return (point, n / norm, radius) if norm > 1e-9 else None

    def hand_wrench(self, model: mujoco.MjModel, data: mujoco.MjData, k: int,
                    weld_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The wrench grasp `k`'s hand puts on its object now (world frame, torque about the object's
        origin): its weld's force and torque, read off the constraint as MuJoCo applies it to the
        object's free joint, and its contacts with the object — a hand pressed into the object pushes it
        off by contact while the weld pulls it back, and only the sum is what a friction grasp would
        have to give."""
        obj = int(self.bodies[k, 1])
        jnt = int(model.body_jntadr[obj])
        dof = int(model.jnt_dofadr[jnt])
        origin = data.xanchor[jnt]
        picked = np.zeros(data.nefc)
        picked[weld_rows] = data.efc_force[weld_rows]
        generalized = np.zeros(model.nv)
        mujoco.mj_mulJacTVec(model, data, generalized, picked)
        force = generalized[dof:dof + 3].copy()  # a free joint: world force at its anchor,
        torque = data.xmat[obj].reshape(3, 3) @ generalized[dof + 3:dof + 6]  # and torque in the body's frame
        hands, parts = self.geoms[k]
        wrench = np.zeros(6)
        for i, c in enumerate(data.contact[:data.ncon]):
            if (c.geom1 in hands and c.geom2 in parts) or (c.geom2 in hands and c.geom1 in parts):
                mujoco.mj_contactForce(model, data, i, wrench)
                on_geom2 = c.frame.reshape(3, 3).T @ wrench[:3]  # the frame's x is the normal, geom1 → geom2
                on_object = on_geom2 if c.geom2 in parts else -on_geom2
                force += on_object
                torque += np.cross(c.pos - origin, on_object)
        return force, torque

    def measure(self, model: mujoco.MjModel, data: mujoco.MjData, dt: float) -> None:
        """After a physics step, per object the hands hold: the force each active weld carried (the
        linear part of its constraint force), and whether friction could have held the object as the
        hands did.

        The hands' whole wrench on the object (welds and contacts) is what a friction grasp would have to
        give by forces at the hands' points on the object's sides. `grasp_forces` splits it so; each
        hand's force, split at its side into the squeeze and the shear, must lie in its friction cone,
        and the part of the torque no forces at those points can give (about the line between two
        hands, or any torque with one hand) must be within what the palms' friction can twist (a disc
        of the hand's radius pressed with its squeeze: ⅔ μ N R). Counted beyond friction otherwise."""
        if not self.pairs:
            return
        rows = np.flatnonzero(data.efc_type[:data.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        held: dict[int, list] = {}  # object body id -> (k, force, torque, point, normal, radius) per holding hand
        for k, eq in enumerate(self.eq):
            if not data.eq_active[eq]:
                continue
            self.held_s[k] += dt
            mine = rows[data.efc_id[rows] == eq]
            if not len(mine):
                continue
            self.max_force[k] = max(self.max_force[k], float(np.linalg.norm(data.efc_force[mine[:3]])))
            side = self.side_contact(model, data, k)
            if side is not None:
                held.setdefault(int(self.bodies[k, 1]), []).append((k, *self.hand_wrench(model, data, k, mine), *side))
        for obj, hands in held.items():
            origin = data.xanchor[int(model.body_jntadr[obj])]
            forces, couple, unheld = grasp_forces([h[1] for h in hands], [h[2] for h in hands],
                                                  [h[3] - origin for h in hands])
            slipping, twist = [], 0.0
            for (k, _, _, _, normal, radius), f in zip(hands, forces):
                squeeze = -float(f @ normal)  # > 0: pressing into the object
                shear = float(np.linalg.norm(f + squeeze * normal))
                self.max_squeeze[k] = np.fmax(self.max_squeeze[k], squeeze)
                self.max_shear[k] = max(self.max_shear[k], shear)
                self.max_couple[k] = max(self.max_couple[k], couple)
                slipping.append(shear > self.friction[k] * max(squeeze, 0.0) + SHEAR_SLACK_N)
                twist += PALM_TWIST * self.friction[k] * max(squeeze, 0.0) * radius
            twisting = unheld > twist + TWIST_SLACK_NM
            for h, slips in zip(hands, slipping):
                if slips or twisting:
                    self.beyond_s[h[0]] += dt

    def get_state(self) -> dict:
        return {name: getattr(self, name).copy() for name in self.STATE}

    def set_state(self, state: dict) -> None:
        for name in self.STATE:
            if name in state:  # a checkpoint older than a figure leaves it at its start value
                getattr(self, name)[:] = state[name]

    def summary(self, model: mujoco.MjModel) -> list[dict]:
        """Per grasp: the most force the weld carried; the most squeeze and the most shear of the hand's
        force on the object as a friction grasp would have to give it (`measure`); the most couple the
        hands gave the object beyond their forces' moments; for how long friction (the pair's
        coefficient) could not have held the object so — the shear more than the squeeze allows, or a
        twist beyond the palms' — the time a friction grasp would have let the object slip; how long it
        held; and the object's weight."""
        out = []
        for k, (body, obj) in enumerate(self.pairs):
            weight = float(model.body_subtreemass[model.body(obj).id] * np.linalg.norm(model.opt.gravity))
            squeeze = None if np.isnan(self.max_squeeze[k]) else round(float(self.max_squeeze[k]), 3)
            out.append({"body": body, "object": obj, "max_force_n": round(float(self.max_force[k]), 3),
                        "max_squeeze_n": squeeze, "max_shear_n": round(float(self.max_shear[k]), 3),
                        "max_couple_nm": round(float(self.max_couple[k]), 3),
                        "friction": round(float(self.friction[k]), 4),
                        "beyond_friction_s": round(float(self.beyond_s[k]), 4),
                        "held_s": round(float(self.held_s[k]), 4), "object_weight_n": round(weight, 3)})
        return out
