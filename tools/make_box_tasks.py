"""Author the box presets (`scenes/tasks/box_*.json`) on the `pick_place` environment: a free box on a
platform, a second platform to put it on (after the box loco-manipulation paper's setting).

- box_lift_place: grasp the box with both hands where it rests, lift it off its platform (up and in
  towards the chest), carry it above the other platform (higher, to the left), put it down on the
  platform's near side, let go and stand.
- box_floor_pickup: the same from a box on the floor (a squat) to a table-height platform.
- box_handover: from a low platform on the right to a high one on the left.

Each keyframe's pairs name the box (`body1` may be a free object: box ↔ platform) and the hands
(hand ↔ a point just inside the box's side, so that reaching it squeezes). Run:
.venv/bin/python tools/make_box_tasks.py
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from solver.builders.environments import pick_place  # noqa: E402
from solver.core.paths import task_path  # noqa: E402
from solver.formats.objective_terms import STANDING_WEIGHTS, STYLES  # noqa: E402

STANDING = dict(STANDING_WEIGHTS)  # the paper's standing keyframes (the style adds stillness)
# The reaching style as the box grid was measured with it (RESULTS, Table 1): without Foot Slip, not yet tried there.
REACHING = {**STYLES["reaching"][1], "Foot Slip": 0.0}
SQUEEZE = 0.02  # m: the hand's target lies this far inside the box's side (the hand's sphere is 0.04 m)
# m: a box held lower than this (its centre) is reached down to, in the "reaching" style: the standing
# character's arms hung straight down put its hands at about 0.72 m, and "standing" (torso up, head
# at 1.4 m) makes the planner squat bolt upright onto its heels for a box on a 0.4 m platform, then
# fall trying to rise with it.
REACH_DOWN_Z = 0.8
CARRY_Z, CARRY_IN = 1.0, 0.25  # m: a lift ends with the box at chest height, this far nearer the body
# m: how near its mark the box's bottom centre rests when put down ('place') and after the hands let
# go ('release'), the same for both: nothing moves the box once the hands are off, so a box put down
# further out than 'release' allows could never meet it (a 0.15 m 'place' before a 0.08 m 'release'
# spent every back-up of a solve that way). Within 0.1 m of a 0.4 m platform's centre, the box's
# centre of mass is well over the platform.
PLACED = 0.1
# m: the box is put down this far from the target platform's centre towards the character (its near
# corner): the centre of a platform on the left is beyond the arms' reach of the standing character
# holding a box, and within 0.1 m (PLACED) of a mark this far in, the box's centre stays over a
# 0.4 m platform.
NEAR = 0.1
# Particles: three whole runs attempt each keyframe segment and those that reach it are resampled by
# cost. One run lifted a 5 kg box from a 0.4 m platform in 1 of 4 seeds (it squats for the grasp and
# rarely rises with the box), and the grid's middle succeeded in 20 of 24; with three, 4 of 4 and
# 24 of 24, each seed 3–21 minutes of one core (benchmarks/RESULTS.md, "Table 1: three particles").
PARTICLES = 3


def _hands(width: float, up: float = 0.0) -> list[dict]:
    """Both hands on the box's sides, `up` above their middle (the box's y axis is across the
    character's hands)."""
    side = width / 2 + 0.04 - SQUEEZE
    return [{"body1": "hand_right", "pos1": [0, 0, 0], "body2": "box", "pos2": [0.0, -side, up]},
            {"body1": "hand_left", "pos1": [0, 0, 0], "body2": "box", "pos2": [0.0, side, up]}]


def _kf(name: str, pairs: list, tolerance: float, sustain: float, time_limit: float, box_z: float = CARRY_Z) -> dict:
    """A keyframe in the standing style, or reaching down where the box's centre is to be below
    REACH_DOWN_Z."""
    return {"name": name, "pairs": pairs, "tolerance": tolerance, "sustain": sustain, "time_limit": time_limit,
            "weights": dict(REACHING if box_z < REACH_DOWN_Z else STANDING)}


def _place(name: str, about: str, params: dict, *, lift: list, grip_up: float = 0.0) -> dict:
    """Grasp (the box kept where it rests) → lift (through the box positions `lift`, each [up, in]
    from where it rests) → carry (0.1 m above the mark) → place (its bottom on the mark: the target
    platform's top, NEAR from its centre towards the character) → release."""
    env, _ = pick_place(**params)
    box = next(b for b in env.bodies if b.name == "box")
    to = next(b for b in env.bodies if b.name == "to_platform")
    half = box.geoms[0].size
    bottom = [0.0, 0.0, -half[2]]
    toward = -NEAR * np.asarray(to.pos[:2]) / np.linalg.norm(to.pos[:2])  # towards the character
    on_top = [*toward.round(4).tolist(), to.geoms[0].size[2]]  # the mark on the platform's top, in its frame
    above = [*(np.asarray(to.pos[:2]) + toward).round(4).tolist(), 2 * to.geoms[0].size[2] + half[2] + 0.1]
    hands = _hands(2 * half[1], grip_up)
    # the box stays where it rests while the hands close on it: sticky hands weld on at the touch, and
    # a grasp that asked for the hands alone dragged the box off its platform towards the body (they
    # reach it as well that way) and left the character a step back from where it carries it
    stay = {"body1": "box", "pos1": [0, 0, 0], "body2": "world", "pos2": list(box.pos)}
    stages = [[box.pos[0] - inward, box.pos[1], box.pos[2] + up] for up, inward in lift]
    if stages[-1][2] < CARRY_Z - 0.1:  # from low down: stand up with it held at the chest, as one carries a box
        stages.append([box.pos[0] - CARRY_IN, box.pos[1], CARRY_Z])
    lifts = [_kf("lift" if len(stages) == 1 else f"lift_{i + 1}",
                 hands + [{"body1": "box", "pos1": [0, 0, 0], "body2": "world", "pos2": at}], 0.1, 0.3, 6.0, at[2])
             for i, at in enumerate(stages)]
    return {"schema_version": 1, "name": name, "method": "contact", "about": about,
            "scene": {"environment": "pick_place", "params": params, "character": "humanoid"},
            "settings": {"grasp": "sticky", "particles": PARTICLES},
            "keyframes": [
                _kf("grasp", hands + [stay], 0.08, 0.3, 6.0, box.pos[2] + grip_up),
                *lifts,
                _kf("carry", hands + [{"body1": "box", "pos1": [0, 0, 0], "body2": "world", "pos2": above}],
                    0.15, 0.2, 8.0),
                _kf("place", hands + [{"body1": "box", "pos1": bottom, "body2": "to_platform", "pos2": on_top}],
                    PLACED, 0.3, 8.0),
                _kf("release", [{"body1": "box", "pos1": bottom, "body2": "to_platform", "pos2": on_top}],
                    PLACED, 1.0, 6.0),
            ]}


def lift_place(params: dict | None = None) -> dict:
    """From a table-height platform in front to a higher one on the left."""
    return _place("box_lift_place", "Grasp the box on the platform in front with both hands, lift it, put it on "
                  "the higher platform to the left, let go and stand (box loco-manipulation, our contact "
                  "keyframes).", dict(params or {}), lift=[(0.15, 0.15)])


FLOOR = {"from_height": 0.0, "to_height": 0.75, "box_height": 0.3, "distance": 0.35}


def floor_pickup(params: dict | None = None) -> dict:
    """From the floor (a squat: the hands go down to the box's sides) to a table-height platform."""
    return _place("box_floor_pickup", "Squat, grasp the box on the floor with both hands, stand up with it, put "
                  "it on the table-height platform to the left, let go and stand.",
                  {**FLOOR, **(params or {})}, lift=[(0.3, 0.1), (0.65, 0.2)], grip_up=0.05)


HANDOVER = {"from_height": 0.65, "from_offset": -0.25, "to_height": 1.0, "offset": 0.25}


def handover(params: dict | None = None) -> dict:
    """From a low platform on the right to a high one on the left: the box crosses in front of the
    character and goes up half a metre."""
    return _place("box_handover", "Grasp the box on the low platform to the right, carry it across and up, put "
                  "it on the high platform to the left, let go and stand.",
                  {**HANDOVER, **(params or {})}, lift=[(0.2, 0.15)])


def main() -> None:
    for task in (lift_place(), floor_pickup(), handover()):
        path = task_path(task["name"])
        with open(path, "w", encoding="utf-8") as f:
            json.dump(task, f, indent=1)
            f.write("\n")
        print(path)


if __name__ == "__main__":
    main()
