"""Author the hit-reaction presets (`scenes/tasks/hit_*.json`): the character stands (or sits) at its
keyframe, something strikes it, and it must be back at the keyframe for the keyframe's sustain after
the last hit (`solver/formats/perturbations.py`).

- hit_stand_chest / hit_stand_shoulder / hit_stand_behind: standing idle, one push;
- hit_seated: seated in the armchair, pushed sideways;
- hit_balls: the protocol of Hämäläinen et al. 2014 (§5.2) at our scale: a ball every 4 s for 20 s,
  each from a direction drawn with a fixed seed, aimed at the torso; `bench hits` counts falls and
  get-ups.

The standing keyframe is the stand of `armchair_stand_sit_stand` (torso back at its place within
0.3 m, head up); the seated one that task's `armchair0`. Run: .venv/bin/python tools/make_hit_tasks.py
"""
from __future__ import annotations

import copy
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from solver.core import schema  # noqa: E402
from solver.core.paths import task_path  # noqa: E402

STAND_WEIGHTS = {"COM Feet XY": 100.0, "CoM Vel.": 0.0, "Contact": 100.0, "Control": 0.025, "Facing Dir": 0.0,
                 "Head Height": 80.0, "Joint Vel.": 0.01, "Knee Feet XY": 0.0, "LFoot Up": 1.0, "Pelvis Up": 0.0,
                 "RFoot Up": 1.0, "Torso Height": 0.0, "Torso Up": 10.0}


def stand(time_limit: float, sustain: float = 2.0) -> dict:
    return {"name": "stand", "pairs": [{"body1": "torso", "pos1": [0, 0, 0], "body2": "world",
                                        "pos2": [0.0, 0.0, 1.28]}],
            "tolerance": 0.3, "sustain": sustain, "time_limit": time_limit, "weights": dict(STAND_WEIGHTS)}


def seated() -> dict:
    with open(task_path("armchair_stand_sit_stand"), encoding="utf-8") as f:
        kf = copy.deepcopy(next(k for k in json.load(f)["keyframes"] if k["name"] == "armchair0"))
    kf.update(name="seated", sustain=2.0, time_limit=6.0)
    return kf


# Twice the default rollouts: with 45 a standing character pushed with 4–8 N·s fell in 4 of 9 single
# runs, with 90 in 1 of 9 (benchmarks/RESULTS.md, "Hit reactions").
HIT_SETTINGS = {"rollouts": 90}


def task(name: str, about: str, environment: str, keyframe: dict, perturbations: dict, settings=None) -> dict:
    return {"schema_version": 1, "name": name, "method": "contact", "about": about,
            "scene": {"environment": environment, "character": "humanoid"},
            "settings": dict(HIT_SETTINGS, **(settings or {})),
            "keyframes": [keyframe], "perturbations": perturbations}


def ball_protocol(every: float = 4.0, total: float = 20.0, seed: int = 2014) -> dict:
    rng = np.random.default_rng(seed)
    balls = []
    for k in range(int(total / every)):
        yaw = rng.uniform(0.0, 2 * np.pi)  # where it comes from, around the character
        balls.append({"time": round(every * (k + 1), 6), "aim": "torso",
                      "direction": [round(-np.cos(yaw), 6), round(-np.sin(yaw), 6), 0.0],
                      "speed": 6.0, "mass": 3.0, "distance": 2.5})
    return {"balls": balls}


TASKS = [
    task("hit_stand_chest", "Standing idle, pushed in the chest at 1 s (8 N·s, backwards); back to the stand.",
         "floor", stand(6.0), {"impulses": [{"time": 1.0, "body": "torso", "impulse": [-8.0, 0.0, 0.0],
                                             "point": [0.0, 0.05, 0.0]}]}),
    task("hit_stand_shoulder", "Standing idle, the right shoulder pushed from the front-right at 1 s (4 N·s, "
         "turning the body); back to the stand.",
         "floor", stand(6.0), {"impulses": [{"time": 1.0, "body": "upper_arm_right", "impulse": [-3.0, 2.65, 0.0]}]}),
    task("hit_stand_behind", "Standing idle, pushed in the back at 1 s (4 N·s, forwards); back to the stand.",
         "floor", stand(6.0), {"impulses": [{"time": 1.0, "body": "torso", "impulse": [4.0, 0.0, 0.0],
                                             "point": [0.0, 0.05, 0.0]}]}),
    task("hit_seated", "Seated in the armchair, the torso pushed sideways at 1 s (15 N·s); back to the seat.",
         "armchair", seated(), {"impulses": [{"time": 1.0, "body": "torso", "impulse": [0.0, -15.0, 0.0]}]}),
    task("hit_balls", "A ball (3 kg, 6 m/s) every 4 s for 20 s from a random direction at the torso "
         "(Hämäläinen et al. 2014's protocol, at our scale): stand through them, or get up again. "
         "`bench hits` counts falls and get-ups.",
         "floor", stand(30.0), ball_protocol(), {"give_up_fallen_s": 0.0}),
]


def main() -> None:
    for doc in TASKS:
        with open(task_path(doc["name"]), "w", encoding="utf-8") as f:
            f.write(schema.format_json(doc))
        print("wrote", task_path(doc["name"]))


if __name__ == "__main__":
    main()
