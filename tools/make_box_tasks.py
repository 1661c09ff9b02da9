"""Author the box presets (`scenes/tasks/box_*.json`) on the `pick_place` environment: a free box on a
platform, a second platform to put it on (after the box loco-manipulation paper's setting).

- box_lift_place: grasp the box with both hands, lift it off its platform (up and in towards the
  chest), carry it above the other platform (higher, to the left), put it down, let go and stand.

Each keyframe's pairs name the box (`body1` may be a free object: box ↔ platform) and the hands
(hand ↔ a point just inside the box's side, so that reaching it squeezes). Run:
.venv/bin/python tools/make_box_tasks.py
"""
from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from solver.environments import pick_place  # noqa: E402
from solver.objective_terms import STYLES  # noqa: E402
from solver.paths import task_path  # noqa: E402

STANDING = dict(STYLES["standing"][1])
SQUEEZE = 0.02  # m: the hand's target lies this far inside the box's side (the hand's sphere is 0.04 m)


def _hands(width: float) -> list[dict]:
    """Both hands on the box's sides (the box's y axis is across the character's hands)."""
    side = width / 2 + 0.04 - SQUEEZE
    return [{"body1": "hand_right", "pos1": [0, 0, 0], "body2": "box", "pos2": [0.0, -side, 0.0]},
            {"body1": "hand_left", "pos1": [0, 0, 0], "body2": "box", "pos2": [0.0, side, 0.0]}]


def _kf(name: str, pairs: list, tolerance: float, sustain: float, time_limit: float) -> dict:
    return {"name": name, "pairs": pairs, "tolerance": tolerance, "sustain": sustain, "time_limit": time_limit,
            "weights": dict(STANDING)}


def lift_place(params: dict | None = None) -> dict:
    params = dict(params or {})
    env, _ = pick_place(**params)
    box = next(b for b in env.bodies if b.name == "box")
    to = next(b for b in env.bodies if b.name == "to_platform")
    half = box.geoms[0].size
    bottom = [0.0, 0.0, -half[2]]
    lifted = [box.pos[0] - 0.15, box.pos[1], box.pos[2] + 0.15]  # up and in, towards the chest
    on_top = [0.0, 0.0, to.geoms[0].size[2]]  # the top of the target platform, in its frame
    above = [to.pos[0], to.pos[1], 2 * to.geoms[0].size[2] + half[2] + 0.1]  # 0.1 m above where it goes
    hands = _hands(2 * half[1])
    return {"schema_version": 1, "name": "box_lift_place", "method": "contact",
            "about": "Grasp the box on the platform in front with both hands, lift it, put it on the higher "
                     "platform to the left, let go and stand (box loco-manipulation, our contact keyframes).",
            "scene": {"environment": "pick_place", "params": params, "character": "humanoid"},
            "settings": {"grasp": "sticky"},
            "keyframes": [
                _kf("grasp", hands, 0.08, 0.3, 6.0),
                _kf("lift", hands + [{"body1": "box", "pos1": [0, 0, 0], "body2": "world", "pos2": lifted}],
                    0.1, 0.3, 6.0),
                _kf("carry", hands + [{"body1": "box", "pos1": [0, 0, 0], "body2": "world", "pos2": above}],
                    0.15, 0.2, 8.0),
                _kf("place", hands + [{"body1": "box", "pos1": bottom, "body2": "to_platform", "pos2": on_top}],
                    0.15, 0.3, 8.0),
                _kf("release", [{"body1": "box", "pos1": bottom, "body2": "to_platform", "pos2": on_top}],
                    0.08, 1.0, 6.0),
            ]}


def main() -> None:
    for task in (lift_place(),):
        path = task_path(task["name"])
        with open(path, "w", encoding="utf-8") as f:
            json.dump(task, f, indent=1)
            f.write("\n")
        print(path)


if __name__ == "__main__":
    main()
