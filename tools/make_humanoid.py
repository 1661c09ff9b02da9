"""Generate `scenes/characters/humanoid.json` from MuJoCo MPC's reference humanoid.

The reference humanoid's body frames are world-aligned and several joints pivot away from their
body's origin. PhysKey's character instead uses Blender bone frames: each body's origin is its joint
pivot (the bone's head) and its Y axis points along the bone. This tool re-expresses the reference
model in such frames (geoms, joint axes and sites keep their world placement) and writes both the
character and, for converting the reference's contact points, each body's frame expressed in the
reference body's frame (`scenes/characters/humanoid_reference_frames.json`).

Run: .venv/bin/python tools/make_humanoid.py [path/to/reference/humanoid.xml]
Changes from the reference, on purpose: the two ankle joints share one pivot (ankle_y's), the
massless heel/toe marker bodies become sites on the foot, and the hamstring tendons are left out.
"""
from __future__ import annotations

import os
import sys

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from solver.core import rotations, schema  # noqa: E402
from solver.formats.scene import SCHEMA_VERSION, Actuator, Body, Character, Geom, Joint, Site  # noqa: E402

DEFAULT_REF = os.path.join(HERE, "..", "..", "shared", "reference", "mjpc_interact", "humanoid.xml")
KEEP = ["torso", "head", "waist_lower", "pelvis",
        "thigh_right", "shin_right", "foot_right", "thigh_left", "shin_left", "foot_left",
        "upper_arm_right", "lower_arm_right", "hand_right", "upper_arm_left", "lower_arm_left", "hand_left"]
MARKERS = {"heel_right": "foot_right", "toe_right": "foot_right", "heel_left": "foot_left", "toe_left": "foot_left"}
RGBA = [0.8, 0.6, 0.4, 1.0]
# PD servo gains per unit of motor gear: full torque at ~0.2 rad of error, damping ratio ~ critical-ish.
KP_PER_GEAR, KV_PER_GEAR = 5.0, 0.5


def group_of(joint: str) -> str:
    side = "right" if joint.endswith("_right") else "left" if joint.endswith("_left") else None
    if side is None:
        return "core"
    return f"{side}_leg" if joint.split("_")[0] in ("hip", "knee", "ankle") else f"{side}_arm"


def main(ref_path: str) -> None:
    spec = mujoco.MjSpec.from_file(ref_path)
    for g in spec.geoms:
        g.material = ""  # the reference's materials live in files not shipped with it
    spec.delete(spec.geom("floor"))
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    bid = {model.body(i).name: i for i in range(model.nbody)}

    def world(name):
        return data.xpos[bid[name]].copy()

    def pivot(name):
        """World position of the body's (first) joint pivot, or its origin when it has none."""
        b = bid[name]
        joints = [j for j in range(model.njnt) if model.jnt_bodyid[j] == b and model.jnt_type[j] == 3]
        return data.xanchor[joints[0]].copy() if joints else world(name)

    origin = {n: (world(n) if n == "torso" else pivot(n)) for n in KEEP}
    if not np.allclose(data.xmat[1:], np.eye(3).reshape(9)):
        raise SystemExit("reference body frames are expected to be world-aligned at qpos0")
    diag = np.array([1.0, 1.0, 1.0]) / np.sqrt(3)
    tail = {
        "torso": origin["head"], "head": origin["head"] + [0, 0, 0.18],
        "waist_lower": origin["pelvis"], "pelvis": 0.5 * (origin["thigh_right"] + origin["thigh_left"]),
        "upper_arm_right": origin["lower_arm_right"], "lower_arm_right": origin["hand_right"],
        "hand_right": origin["hand_right"] + 0.08 * diag,
        "upper_arm_left": origin["lower_arm_left"], "lower_arm_left": origin["hand_left"],
        "hand_left": origin["hand_left"] + 0.08 * diag * [1, -1, 1],
    }
    for side in ("right", "left"):
        tail[f"thigh_{side}"] = origin[f"shin_{side}"]
        tail[f"shin_{side}"] = origin[f"foot_{side}"]
        tail[f"foot_{side}"] = world(f"foot_{side}") + [0.14, 0, 0]
    rot = {n: rotations.to_matrix(rotations.y_to(tail[n] - origin[n])) for n in KEEP}

    def local(n, p):
        return rot[n].T @ (np.asarray(p) - origin[n])

    bodies, actuators = [], []
    gears = {model.actuator(a).name: float(model.actuator_gear[a][0]) for a in range(model.nu)}
    for n in KEEP:
        b = bid[n]
        parent = model.body(model.body_parentid[b]).name if n != "torso" else None
        if parent is None:
            pos, quat = origin[n], rotations.from_matrix(rot[n])
        else:
            pos = local(parent, origin[n])
            quat = rotations.from_matrix(rot[parent].T @ rot[n])
        joints = []
        for j in range(model.njnt):
            if model.jnt_bodyid[j] != b or model.jnt_type[j] != 3:
                continue
            name = model.joint(j).name
            axis = rot[n].T @ data.xaxis[j]
            dof = model.jnt_dofadr[j]
            joints.append(Joint(name=name, axis=axis.round(12).tolist(), range=model.jnt_range[j].round(12).tolist(),
                                group=group_of(name), damping=float(model.dof_damping[dof]),
                                stiffness=float(model.jnt_stiffness[j]), armature=float(model.dof_armature[dof])))
            actuators.append(Actuator(joint=name, gear=gears[name], kp=KP_PER_GEAR * gears[name],
                                      kv=KV_PER_GEAR * gears[name]))
        geoms = []
        for g in range(model.ngeom):
            if model.geom_bodyid[g] != b:
                continue
            gtype = {3: "capsule", 2: "sphere"}[int(model.geom_type[g])]
            count = 2 if gtype == "capsule" else 1
            gq = rotations.from_matrix(rot[n].T @ data.geom_xmat[g].reshape(3, 3))
            geoms.append(Geom(name=model.geom(g).name or f"{n}_{len(geoms)}", type=gtype,
                              size=model.geom_size[g][:count].round(12).tolist(),
                              pos=local(n, data.geom_xpos[g]).round(12).tolist(), quat=gq.round(12).tolist(),
                              friction=float(model.geom_friction[g][0]), rgba=RGBA))
        sites = []
        for s in range(model.nsite):
            owner = model.body(model.site_bodyid[s]).name
            if owner == n or MARKERS.get(owner) == n:
                sname = model.site(s).name
                sname = sname.replace("tracking[", "track_").replace("]", "")
                sites.append(Site(name=sname, pos=local(n, data.site_xpos[s]).round(12).tolist()))
        length = float(np.linalg.norm(tail[n] - origin[n]))
        bodies.append(Body(name=n, parent=parent, pos=np.asarray(pos).round(12).tolist(),
                           quat=np.asarray(quat).round(12).tolist(), length=round(length, 6),
                           joints=joints, geoms=geoms, sites=sites))
    order = [a.joint for a in actuators]
    actuators.sort(key=lambda a: order.index(a.joint))
    character = Character(name="humanoid", bodies=bodies, actuators=actuators,
                          exclude_contacts=[["waist_lower", "thigh_right"], ["waist_lower", "thigh_left"]])
    out = os.path.join(HERE, "..", "scenes", "characters")
    doc = {"schema_version": SCHEMA_VERSION,
           "source": "MuJoCo MPC humanoid (Apache-2.0, DeepMind), re-expressed in bone frames by "
                     "tools/make_humanoid.py",
           "character": schema.to_dict(character)}
    with open(os.path.join(out, "humanoid.json"), "w") as f:
        f.write(schema.format_json(doc))
    frames = {n: {"origin": origin[n].round(12).tolist() if n == "torso" else
                  (origin[n] - world(n)).round(12).tolist(),
                  "quat": rotations.from_matrix(rot[n]).round(12).tolist()} for n in KEEP}
    with open(os.path.join(out, "humanoid_reference_frames.json"), "w") as f:
        f.write(schema.format_json({"about": "Each PhysKey body frame in the reference body's frame "
                   "(world-aligned, origin "
                   "at the reference body origin): p_own = R^T (p_ref - origin). Torso origin is 0.",
                   "frames": {n: {"origin": ([0, 0, 0] if n == "torso" else v["origin"]), "quat": v["quat"]}
                              for n, v in frames.items()}}))
    print(f"wrote {len(bodies)} bodies, {len(actuators)} actuators to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_REF)
