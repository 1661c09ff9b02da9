"""Put an assist task's keyframes on their supports: shift a keyframe's root height so that its
lowest point (of the feet, or of the whole body) sits at a given height.

Crude keyframes are fine, but a crouch with the feet 5 cm inside the floor leaves a keyframe error
no motion can remove. Usage:
  .venv/bin/python tools/ground_keyframes.py TASK KEYFRAME=HEIGHT[:body] …
e.g. `tools/ground_keyframes.py assist_box_jump_low crouch=0 land=0.3 stand_on_box=0.3`
(`:body` uses the lowest point of any body part instead of the feet).
"""
from __future__ import annotations

import json
import os
import sys

import mujoco

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from solver import schema  # noqa: E402
from solver.methods import assist  # noqa: E402
from solver.task import task_from_dict  # noqa: E402

FEET = ("foot1_right", "foot2_right", "foot1_left", "foot2_left")


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


def main(task_name: str, specs: list[str]) -> None:
    path = os.path.join(HERE, "..", "scenes", "tasks", f"{task_name}.json")
    doc = json.load(open(path))
    prep = assist.prepare(task_from_dict(doc))
    m, d = prep.built.model, mujoco.MjData(prep.built.model)
    root = m.jnt_qposadr[m.joint("root").id]
    body_ids = {m.body(b.name).id for b in prep.built.scene.character.bodies}
    every = [g for g in range(m.ngeom) if m.geom_bodyid[g] in body_ids]
    feet = [m.geom(n).id for n in FEET]
    names = prep.keyframes.names
    for spec in specs:
        name, _, target = spec.partition("=")
        height, _, which = target.partition(":")
        k = names.index(name)
        d.qpos[:] = prep.built.initial_qpos()
        q = prep.keyframes.qpos[k]
        d.qpos[root:root + len(q)] = q
        mujoco.mj_kinematics(m, d)
        shift = float(height) - lowest_point(m, d, every if which == "body" else feet)
        doc["keyframes"][k]["root_pos"][2] = round(doc["keyframes"][k]["root_pos"][2] + shift, 4)
        print(f"{name}: root z {q[2]:.3f} -> {doc['keyframes'][k]['root_pos'][2]:.3f}")
    with open(path, "w") as f:
        f.write(schema.format_json(doc))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
