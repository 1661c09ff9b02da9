"""Generate `scenes/environments/*.json` from the reference furniture scenes of MuJoCo MPC.

Each file holds the furniture as SceneDesc environment bodies at the default parameters and the
scene's default initial character pose (the reference `home` key, converted to PhysKey's bone-frame
humanoid: same joint angles, root orientation re-expressed for the torso's bone frame). The
parameter builders in `solver/builders/environments.py` start from these files.

Run: .venv/bin/python tools/make_environments.py [path/to/reference/mjpc_interact]
"""
from __future__ import annotations

import os
import sys

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from solver.builders.mjcf_read import spec_to_scene  # noqa: E402
from solver.core import rotations, schema  # noqa: E402
from solver.formats.scene import Pose  # noqa: E402

DEFAULT_REF = os.path.join(HERE, "..", "..", "shared", "reference", "mjpc_interact")
SCENES = ["armchair", "bed", "bench", "stool", "table"]
COLORS = {"armchair": [0.45, 0.25, 0.18, 1], "bed": [0.75, 0.75, 0.8, 1], "bench": [0.5, 0.33, 0.15, 1],
          "stool": [0.55, 0.35, 0.15, 1], "table": [0.45, 0.3, 0.15, 1]}


def main(ref_dir: str) -> None:
    humanoid = mujoco.MjSpec.from_file(os.path.join(ref_dir, "humanoid.xml"))
    for g in humanoid.geoms:
        g.material = ""
    href = humanoid.compile()
    hinge_names = [href.joint(j).name for j in range(href.njnt) if href.jnt_type[j] == 3]
    frames = schema.load_json_text(open(os.path.join(HERE, "..", "scenes", "characters",
                                                     "humanoid_reference_frames.json")).read(), "frames")
    torso_q = np.array(frames["frames"]["torso"]["quat"])
    out = os.path.join(HERE, "..", "scenes", "environments")
    os.makedirs(out, exist_ok=True)
    for name in SCENES:
        path = os.path.join(ref_dir, "scenes", f"{name}.xml")
        spec = mujoco.MjSpec.from_file(path)
        for g in spec.geoms:
            g.material = ""
        spec.materials and [spec.delete(m) for m in list(spec.materials)]
        # The reference scene files hold only furniture; a dummy free body with a child makes it readable.
        dummy = spec.worldbody.add_body(name="_dummy")
        dummy.add_freejoint()
        dummy.add_geom(size=[0.01, 0, 0])
        dummy.add_body(name="_dummy_child").add_geom(size=[0.01, 0, 0])
        keys = list(spec.keys)
        home = np.array(keys[0].qpos) if keys else None
        for k in keys:
            spec.delete(k)
        scene = spec_to_scene(spec, name)
        bodies = scene.environment.bodies
        for b in bodies:
            for g in b.geoms:
                g.rgba = COLORS[name]
                g.name = g.name if g.name and not g.name.startswith("geom") else f"{b.name}_{len(b.geoms)}"
        pose = None
        if home is not None and len(home) >= 7 + len(hinge_names):
            root_q = rotations.normalize(rotations.mul(rotations.normalize(home[3:7]), torso_q))
            pose = Pose(root_pos=[round(float(x), 6) for x in home[:3]],
                        root_quat=[round(float(x), 9) for x in root_q],
                        joints={n: round(float(v), 6) for n, v in zip(hinge_names, home[7:7 + len(hinge_names)])})
        doc = {"name": name, "source": f"MuJoCo MPC humanoid/interact scene {name}.xml (Apache-2.0, DeepMind)",
               "bodies": [schema.to_dict(b) for b in bodies],
               "initial_pose": schema.to_dict(pose) if pose else None}
        with open(os.path.join(out, f"{name}.json"), "w") as f:
            f.write(schema.format_json(doc))
        print(f"{name}: {len(bodies)} bodies, home pose {'yes' if pose else 'no'}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_REF)
