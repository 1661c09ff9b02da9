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

from .contact_keyframes import WORLD, ContactKeyframe
from .pair_points import pair_offset
from .scene import SceneDesc

GRASP_PREFIX = "grasp_"


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
    """One inactive weld per (character body, object) pair; its pose is set when it switches on."""
    for body, obj in pairs:
        eq = spec.add_equality()
        eq.name = weld_name(body, obj)
        eq.type = mujoco.mjtEq.mjEQ_WELD
        eq.objtype = mujoco.mjtObj.mjOBJ_BODY
        eq.name1, eq.name2 = body, obj
        eq.active = False
        data = np.zeros(len(eq.data))
        data[10] = 1.0  # torquescale: the grasp holds the object's orientation as firmly as its position
        eq.data = data


def relative_pose(data: mujoco.MjData, body1: int, body2: int) -> np.ndarray:
    """Body2's pose in body1's frame: position (3) and quaternion (4), as a weld's eq_data[3:10]."""
    r1 = data.xmat[body1].reshape(3, 3)
    pos = r1.T @ (data.xpos[body2] - data.xpos[body1])
    inv, quat = np.zeros(4), np.zeros(4)
    mujoco.mju_negQuat(inv, data.xquat[body1])
    mujoco.mju_mulQuat(quat, inv, data.xquat[body2])
    return np.concatenate([pos, quat])


class Grasper:
    """Switches a run's grasp welds: on when the active keyframe pairs bodies with an object and all of
    them touch it at their keyed points (their pairs within the keyframe's tolerance: a hand that bumps
    the box elsewhere does not pick it up, and one hand alone does not close a two-handed grasp), off
    when the keyframe pairs them no more."""

    def __init__(self, model: mujoco.MjModel, others: list[mujoco.MjModel], pairs: list[tuple[str, str]]):
        self.pairs = list(pairs)
        self.models = [model] + list(others)
        self.eq = np.array([model.equality(weld_name(b, o)).id for b, o in pairs], dtype=int)
        self.bodies = np.array([[model.body(b).id, model.body(o).id] for b, o in pairs], dtype=int).reshape(-1, 2)
        self.relpose = np.zeros((len(pairs), 7))  # the held pose of each weld (valid while on)
        self.max_force = np.zeros(len(pairs))  # N: the most each weld carried so far
        self.held_s = np.zeros(len(pairs))  # s: how long each was on

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def held(self, data: mujoco.MjData) -> frozenset:
        """The (body, object) names whose weld is on now."""
        return frozenset(pair for pair, eq in zip(self.pairs, self.eq) if data.eq_active[eq])

    def touching(self, model: mujoco.MjModel, data: mujoco.MjData) -> set:
        """The (body, object) body-id pairs in contact now."""
        out = set()
        for c in data.contact[:data.ncon] if data.ncon else []:
            a, b = int(model.geom_bodyid[c.geom1]), int(model.geom_bodyid[c.geom2])
            out.add((a, b))
            out.add((b, a))
        return out

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
        touching = self.touching(model, data)
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

    def measure(self, model: mujoco.MjModel, data: mujoco.MjData, dt: float) -> None:
        """After a physics step: the force each active weld carried (the linear part of its constraint
        force) and how long it has been on."""
        if not self.pairs:
            return
        rows = np.flatnonzero(data.efc_type[:data.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        for k, eq in enumerate(self.eq):
            if not data.eq_active[eq]:
                continue
            mine = rows[data.efc_id[rows] == eq][:3]
            if len(mine):
                self.max_force[k] = max(self.max_force[k], float(np.linalg.norm(data.efc_force[mine])))
            self.held_s[k] += dt

    def get_state(self) -> dict:
        return {"relpose": self.relpose.copy(), "max_force": self.max_force.copy(), "held_s": self.held_s.copy()}

    def set_state(self, state: dict) -> None:
        self.relpose[:] = state["relpose"]
        self.max_force[:] = state["max_force"]
        self.held_s[:] = state["held_s"]

    def summary(self, model: mujoco.MjModel) -> list[dict]:
        """Per grasp: the most force the weld carried, how long it held, and the object's weight for
        comparison (a hand holding more than friction could would need a firmer squeeze)."""
        out = []
        for k, (body, obj) in enumerate(self.pairs):
            weight = float(model.body_subtreemass[model.body(obj).id] * np.linalg.norm(model.opt.gravity))
            out.append({"body": body, "object": obj, "max_force_n": round(float(self.max_force[k]), 3),
                        "held_s": round(float(self.held_s[k]), 4), "object_weight_n": round(weight, 3)})
        return out
