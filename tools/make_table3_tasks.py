"""Write the PartwiseMPC Table 3 variants whose keyframes name heights in the world: the table climb
at 0.35 / 0.55 / 0.75 m and the stand → sit → stand armchair at 0.12 / 0.04 m.

A scene parameter moves the furniture, and with it every point given on the furniture, but a point
given in the world stays put. The feet's points on the floor should stay, but the torso's points
above the seat or the table top describe a pose over the furniture: left in the world, a 0.35 m table
asks the kneeling torso to be 0.35 m higher than the body can put it. Here every world point above the
floor moves by the furniture's change of height, as an animator would move those keyframes.

Run: .venv/bin/python tools/make_table3_tasks.py OUT_DIR, then
     .venv/bin/python -m benchmarks.bench mpc --task OUT_DIR/table_climb_h0.35.json --trials 2 --json
"""
from __future__ import annotations

import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from solver.core import schema  # noqa: E402

FLOOR_CLEARANCE = 0.05  # m: a world point at or below this is on the floor and stays
VARIANTS = {"table_climb": (0.7, [0.35, 0.55, 0.75]),  # task: (its furniture's height, Table 3's heights)
            "armchair_stand_sit_stand": (0.2, [0.12, 0.04])}


def variant(task: dict, default_height: float, height: float) -> dict:
    """`task` on furniture `height` high, its world points above the floor moved with it."""
    out = copy.deepcopy(task)
    dz = height - default_height
    out["name"] = f"{task['name']}_h{height}"
    out["scene"]["params"] = dict(out["scene"].get("params", {}), height=height)
    for kf in out["keyframes"]:
        for pair in kf["pairs"]:
            if pair["body2"] == "world" and pair["pos2"][2] > FLOOR_CLEARANCE:
                pair["pos2"][2] = round(pair["pos2"][2] + dz, 6)
    return out


def main(out_dir: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    for name, (default_height, heights) in VARIANTS.items():
        task = json.load(open(os.path.join(HERE, "..", "scenes", "tasks", f"{name}.json"), encoding="utf-8"))
        for h in heights:
            doc = variant(task, default_height, h)
            path = os.path.join(out_dir, f"{doc['name']}.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(schema.format_json(doc))
            print(f"wrote {path}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: make_table3_tasks.py OUT_DIR")
    main(sys.argv[1])
