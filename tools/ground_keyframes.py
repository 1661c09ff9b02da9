"""Put an assist task's keyframes on their supports: shift a keyframe's root height so that its
lowest point (of the feet, or of the whole body) sits at a given height; optionally set the ankles
so both feet are flat, and move the root so the feet stand where another keyframe's feet stand.

Crude keyframes are fine, but a crouch with the feet 5 cm inside the floor, tilted onto their toes
or 30 cm behind where the stand before it put them leaves a keyframe error no motion can remove
(the feet would have to slide on the ground to follow the reference). Usage:
  .venv/bin/python tools/ground_keyframes.py TASK KEYFRAME=HEIGHT[:body|:flat[@OTHER]] …
e.g. `tools/ground_keyframes.py assist_box_jump_low crouch=0:flat@stand land=0.3:flat@stand_on_box`
(`:body` uses the lowest point of any body part instead of the feet; `:flat` solves each ankle_y
for a foot as flat as in the rest pose; `@OTHER` shifts the root in x so the feet's mean x is that
of keyframe OTHER, as already grounded by the specs before it). Specs apply in order.
"""
from __future__ import annotations

import json
import os
import sys

import mujoco
import numpy as np
from scipy.optimize import minimize_scalar

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from solver.core import schema  # noqa: E402
from solver.formats.task import task_from_dict  # noqa: E402
from solver.methods.assist import ASSIST as assist  # noqa: E402

FEET = ("foot1_right", "foot2_right", "foot1_left", "foot2_left")
SIDES = ("right", "left")


def lowest_point(m, d, geoms) -> float:
    low = []
    for g in geoms:
        r = m.geom_size[g][0]
        if int(m.geom_type[g]) in (int(mujoco.mjtGeom.mjGEOM_CAPSULE), int(mujoco.mjtGeom.mjGEOM_CYLINDER)):
            axis = d.geom_xmat[g].reshape(3, 3)[:, 2]
            low.append(min(d.geom_xpos[g][2] + s * m.geom_size[g][1] * axis[2] for s in (-1, 1)) - r)
        else:
            low.append(d.geom_xpos[g][2] - r)
    return min(low)


class Poser:
    """Forward kinematics of one keyframe of a task document."""

    def __init__(self, doc):
        prep = assist.prepare(task_from_dict(doc))
        self.m, self.d = prep.built.model, mujoco.MjData(prep.built.model)
        self.built, self.kfs = prep.built, prep.keyframes
        self.root = self.m.jnt_qposadr[self.m.joint("root").id]
        rest = self.kfs.qpos[0].copy()  # upright, every joint at 0
        rest[3:7], rest[7:] = prep.built.scene.character.bodies[0].quat, 0.0
        self.d.qpos[:] = self.built.initial_qpos()
        self.d.qpos[self.root:self.root + len(rest)] = rest
        mujoco.mj_kinematics(self.m, self.d)
        self.rest_foot_z = {s: self.d.xmat[self.m.body(f"foot_{s}").id].reshape(3, 3)[:, 2].copy() for s in SIDES}

    def pose(self, k: int, ankles: dict | None = None):
        self.d.qpos[:] = self.built.initial_qpos()
        q = self.kfs.qpos[k]
        self.d.qpos[self.root:self.root + len(q)] = q
        for name, v in (ankles or {}).items():
            self.d.qpos[self.m.jnt_qposadr[self.m.joint(name).id]] = v
        mujoco.mj_kinematics(self.m, self.d)
        return self.d

    def feet_x(self, k: int) -> float:
        d = self.pose(k)
        return float(np.mean([d.xipos[self.m.body(f"foot_{s}").id][0] for s in SIDES]))

    def flat_ankle(self, k: int, side: str) -> float:
        """The ankle_y angle (within its range) that makes this side's foot as flat as at rest."""
        joint = self.m.joint(f"ankle_y_{side}")
        body = self.m.body(f"foot_{side}").id

        def tilt(a):
            z = self.pose(k, {joint.name: a}).xmat[body].reshape(3, 3)[:, 2]
            return float(np.sum((z - self.rest_foot_z[side]) ** 2))
        lo, hi = self.m.jnt_range[joint.id]
        return float(minimize_scalar(tilt, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6}).x)


def main(task_name: str, specs: list[str]) -> None:
    path = os.path.join(HERE, "..", "scenes", "tasks", f"{task_name}.json")
    doc = json.load(open(path))
    for spec in specs:
        name, _, target = spec.partition("=")
        height, _, which = target.partition(":")
        which, _, other = which.partition("@")
        poser = Poser(doc)
        names = poser.kfs.names
        k = names.index(name)
        kf = doc["keyframes"][k]
        if which == "flat":
            for side in SIDES:
                kf["joints"][f"ankle_y_{side}"] = round(poser.flat_ankle(k, side), 4)
            poser = Poser(doc)
        if other:
            shift_x = poser.feet_x(names.index(other)) - poser.feet_x(k)
            kf["root_pos"][0] = round(kf["root_pos"][0] + shift_x, 4)
            poser = Poser(doc)
        d = poser.pose(k)
        m = poser.m
        body_ids = {m.body(b.name).id for b in poser.built.scene.character.bodies}
        geoms = [g for g in range(m.ngeom) if m.geom_bodyid[g] in body_ids] if which == "body" \
            else [m.geom(n).id for n in FEET]
        kf["root_pos"][2] = round(kf["root_pos"][2] + float(height) - lowest_point(m, d, geoms), 4)
        ankles = {s: kf["joints"].get(f"ankle_y_{s}") for s in SIDES}
        print(f"{name}: root {kf['root_pos']}, ankles {ankles}")
    with open(path, "w") as f:
        f.write(schema.format_json(doc))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
