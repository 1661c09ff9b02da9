"""Author the hand-made references of the track benchmark (`scenes/tasks/track_*.json`): a squat and a
0.15 m step-up, written as an animator keys them — a few poses at fixed times, played with linear
interpolation (`"reference": {"sketch": "linear"}`).

Each pose is solved so its feet stand where they should (flat, on the floor or the step): MuJoCo
forward kinematics inside scipy's least squares over the root and the leg joints, near the pose the
animator had in mind. Run: .venv/bin/python tools/make_track_tasks.py
"""
from __future__ import annotations

import math
import os
import sys

import mujoco
import numpy as np
from scipy.optimize import least_squares

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from solver.builders import characters  # noqa: E402
from solver.builders.mjcf import ROOT_JOINT, compile_spec, scene_to_spec  # noqa: E402
from solver.core import rotations, schema  # noqa: E402
from solver.formats.scene import SCHEMA_VERSION, Environment, Pose, SceneDesc  # noqa: E402

LEGS = ["hip_y_right", "knee_right", "ankle_y_right", "hip_y_left", "knee_left", "ankle_y_left"]
SIDEWAYS = ["hip_x_right", "ankle_x_right", "hip_x_left", "ankle_x_left"]  # free where the weight moves sideways
STEP = {"height": 0.15, "distance": 0.3, "depth": 0.8, "width": 1.0}
STEP_FORWARD = 0.45  # m: how far each foot moves onto the step


def _model():
    scene = SceneDesc(schema_version=SCHEMA_VERSION, name="ik", character=characters.humanoid("default"),
                      environment=Environment(floor=True), initial_pose=Pose())
    return compile_spec(scene_to_spec(scene))


MODEL = _model()
DATA = mujoco.MjData(MODEL)
ROOT = int(MODEL.jnt_qposadr[MODEL.joint(ROOT_JOINT).id])


def _fk(root_pos, pitch_deg, joints: dict) -> dict:
    DATA.qpos[:] = MODEL.qpos0
    DATA.qpos[ROOT:ROOT + 3] = root_pos
    DATA.qpos[ROOT + 3:ROOT + 7] = rotations.mul(rotations.from_euler_xyz_deg([0, pitch_deg, 0]),
                                                 characters.humanoid("default").bodies[0].quat)
    for name, angle in joints.items():
        DATA.qpos[MODEL.jnt_qposadr[MODEL.joint(name).id]] = angle
    mujoco.mj_kinematics(MODEL, DATA)
    return {side: (DATA.xpos[MODEL.body(f"foot_{side}").id].copy(),
                   DATA.xmat[MODEL.body(f"foot_{side}").id].reshape(3, 3).copy()) for side in ("right", "left")}


def _sole(side: str) -> np.ndarray:
    """The middle of `side`'s sole (the foot's geoms) in the pose last given to `_fk`."""
    foot = MODEL.body(f"foot_{side}").id
    return np.mean([DATA.geom_xpos[g] for g in range(MODEL.ngeom) if MODEL.geom_bodyid[g] == foot], axis=0)


def _com_offset(side: str, share: float) -> np.ndarray:
    """The horizontal offset of the character's centre of mass from the point `share` of the way from
    the middle between the soles to the middle of `side`'s sole, in the pose last given to `_fk`."""
    mujoco.mj_comPos(MODEL, DATA)
    com = DATA.subtree_com[MODEL.body("torso").id]
    other = "left" if side == "right" else "right"
    middle = 0.5 * (_sole(side) + _sole(other))
    return (com - (middle + share * (_sole(side) - middle)))[:2]


STAND = {"root": np.array([0.0, 0.0, 1.282]), "pitch": 0.0}
FEET0 = _fk(STAND["root"], 0.0, {})


def _within(value: float, lo: float, hi: float) -> float:
    """A rounded angle kept inside its joint's range: a solve at the bound rounded past it by 4e-5 rad,
    and the solver warned that the shipped sketch was clamped."""
    return min(max(value, math.ceil(lo * 1e4) / 1e4), math.floor(hi * 1e4) / 1e4)


def _r(value, digits: int) -> float:
    """Rounded, with no negative zero (a solve that lands a hair below 0 would flip the files' signs)."""
    return round(float(value), digits) + 0.0


def planted(name: str, time: float | None, joints: dict, pitch_deg: float, feet: dict,
            weight_on: str | None = None, share: float = 1.0) -> dict:
    """The pose nearest `joints` and `pitch_deg` whose feet sit flat at `feet` (side → offset from
    standing) — with its centre of mass over the middle of the `weight_on` foot's sole where given (a
    pose the character can hold on that foot), or `share` of the way there from between the feet — as
    a pose keyframe."""
    free = LEGS + (SIDEWAYS if weight_on else [])
    x0 = np.concatenate([STAND["root"], [pitch_deg], [joints.get(j, 0.0) for j in free]])

    def residual(x):
        js = dict(joints, **dict(zip(free, x[4:])))
        got = _fk(x[:3], x[3], js)
        out = []
        for side, offset in feet.items():
            pos, rot = got[side]
            pos0, rot0 = FEET0[side]
            out.extend(10.0 * (pos - (pos0 + offset)))
            out.extend(3.0 * (rot[:, 2] - rot0[:, 2]))  # flat: the sole's normal as standing
        out.extend(0.3 * (x[3:] - x0[3:]))  # near the pose in mind
        if weight_on:
            out.extend(10.0 * _com_offset(weight_on, share))
        return np.asarray(out)

    ranges = np.array([MODEL.jnt_range[MODEL.joint(j).id] for j in free])  # within each joint's range
    lo = np.concatenate([[-np.inf] * 3, [-90.0], ranges[:, 0]])
    hi = np.concatenate([[np.inf] * 3, [90.0], ranges[:, 1]])
    sol = least_squares(residual, np.clip(x0, lo + 1e-6, hi - 1e-6), bounds=(lo, hi))
    js = dict(joints, **{j: _within(_r(v, 4), *r) for j, v, r in zip(free, sol.x[4:], ranges)})
    item = {"name": name, "root_pos": [_r(v, 4) for v in sol.x[:3]],
            "root_rot_deg": [0, _r(sol.x[3], 3), 0], "joints": js}
    if time is not None:
        item["time"] = time
    return item


def explicit(keys: list[dict]) -> list[dict]:
    """The keys with every joint an earlier key named written out (0 where this pose leaves it alone).
    A pose keyframe's missing joints keep the previous keyframe's values, but each pose here was solved
    with them at 0: a step-up's last key left implicit inherited the sideways hip and ankle angles of
    the key before, which played its planted right foot 10 cm sideways into the left's place."""
    named: dict[str, None] = {}  # in the order first named, so the files come out the same every run
    for key in keys:
        for joint in named:
            key["joints"].setdefault(joint, 0.0)
        named.update(dict.fromkeys(key["joints"]))
    return keys


def squat() -> dict:
    both = {"right": np.zeros(3), "left": np.zeros(3)}
    deep = {"hip_y_right": -1.1, "hip_y_left": -1.1, "knee_right": -1.7, "knee_left": -1.7,
            "ankle_y_right": -0.86, "ankle_y_left": -0.86, "shoulder1_right": 0.6, "shoulder1_left": 0.6}
    keys = [planted("stand", None, {}, 0.0, both), planted("squat", 1.2, deep, 15.0, both),
            planted("stand_up", 2.4, {}, 0.0, both)]
    return {"schema_version": 1, "name": "track_squat", "method": "track",
            "about": "A squat keyed by hand (stand, squat, stand; linear interpolation): meant to be physical.",
            "scene": {"environment": "floor", "character": "humanoid"}, "settings": {},
            "reference": {"sketch": "linear"}, "keyframes": explicit(keys)}


def step_up() -> dict:
    """Keyed as an animator keys a step-up that a body can do: the weight goes over the standing foot
    before the other one lifts (its centre of mass over the standing foot's sole), and the lifted foot clears the
    step's edge on its way up."""
    up = np.array([STEP_FORWARD, 0.0, STEP["height"]])
    floor = np.zeros(3)
    lift = {"hip_y_right": -1.4, "knee_right": -1.6, "ankle_y_right": -0.2}
    keys = [planted("stand", None, {}, 0.0, {"right": floor, "left": floor}),
            planted("weight_left", 0.6, {}, 0.0, {"right": floor, "left": floor}, weight_on="left", share=0.7),
            planted("right_knee_up", 1.1, lift, 5.0, {"right": np.array([0.2, 0.0, 0.25]), "left": floor},
                    weight_on="left", share=0.7),
            planted("right_foot_up", 1.6, lift, 10.0, {"right": up, "left": floor}, weight_on="left",
                    share=0.7),
            planted("weight_right", 2.4, {}, 10.0, {"right": up, "left": floor}, weight_on="right", share=0.6),
            # the weight over the right foot, the left foot lifted clear of the step's edge
            planted("step_up", 3.0, {"hip_y_left": -0.9, "knee_left": -1.4}, 5.0,
                    {"right": up, "left": np.array([0.3, 0.0, STEP["height"] + 0.2])}, weight_on="right"),
            planted("stand_on_step", 3.6, {}, 0.0, {"right": up, "left": up})]
    return {"schema_version": 1, "name": "track_step_up", "method": "track",
            "about": "A 0.15 m step-up keyed by hand (stand, weight on the left foot, the right foot up onto the "
                     "step, weight on the right foot, step up, stand; linear interpolation): meant to be physical.",
            "scene": {"environment": "box", "params": STEP, "character": "humanoid"}, "settings": {},
            "reference": {"sketch": "linear"}, "keyframes": explicit(keys)}


def main() -> None:
    out = os.path.join(HERE, "..", "scenes", "tasks")
    for doc in (squat(), step_up()):
        path = os.path.join(out, f"{doc['name']}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(schema.format_json(doc))
        print("wrote", os.path.relpath(path))


if __name__ == "__main__":
    main()
