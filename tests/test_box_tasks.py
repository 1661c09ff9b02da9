"""tools/make_box_tasks.py: a box below the standing character's hanging hands is reached down to
(the "reaching" style: balance kept, torso and head free to bend) and then lifted to chest height
before it is carried; the presets on the repository are the tool's output."""
import importlib.util
import json
from pathlib import Path

import mujoco
import numpy as np
import pytest

from solver.model import build_model
from solver.objective_terms import STYLES
from solver.paths import task_path
from solver.task import SceneRef, build_scene

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("make_box_tasks", ROOT / "tools" / "make_box_tasks.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def _style(kf) -> str:
    (name,) = [n for n, (_, w) in STYLES.items() if w == kf["weights"]]
    return name


def test_the_reach_down_height_is_about_the_standing_characters_hanging_hands():
    """MuJoCo forward kinematics of the pick-and-place scene's standing character: its arms hung
    straight down (shoulder height less the upper and lower arm) put the hands within 0.1 m below
    REACH_DOWN_Z, so a box whose centre is lower is one bent down to."""
    built = build_model(build_scene(SceneRef(environment="pick_place")))
    m, data = built.model, mujoco.MjData(built.model)
    mujoco.mj_kinematics(m, data)
    for side in ("left", "right"):
        shoulder, elbow, hand = (data.xpos[m.body(f"{b}_{side}").id] for b in ("upper_arm", "lower_arm", "hand"))
        hanging = shoulder[2] - np.linalg.norm(elbow - shoulder) - np.linalg.norm(hand - elbow)
        assert 0.0 < _tool().REACH_DOWN_Z - hanging < 0.1, hanging


def test_a_box_on_a_low_platform_is_reached_down_to_and_lifted_to_the_chest():
    tool = _tool()
    low = tool.lift_place({"from_height": 0.4, "box_mass": 1.0})
    names = [kf["name"] for kf in low["keyframes"]]
    assert names == ["grasp", "lift_1", "lift_2", "carry", "place", "release"]
    assert [_style(kf) for kf in low["keyframes"]] == ["reaching", "reaching"] + ["standing"] * 4
    chest = low["keyframes"][2]["pairs"][-1]
    assert chest["body1"] == "box" and chest["pos2"][2] == pytest.approx(tool.CARRY_Z)
    default = tool.lift_place()  # a table-height box: reached standing, lifted once (the preset as measured)
    assert [kf["name"] for kf in default["keyframes"]] == ["grasp", "lift", "carry", "place", "release"]
    assert {_style(kf) for kf in default["keyframes"]} == {"standing"}


@pytest.mark.parametrize("make", ["lift_place", "floor_pickup", "handover"])
def test_the_box_presets_are_the_tools_output(make):
    task = getattr(_tool(), make)()
    assert json.loads(Path(task_path(task["name"])).read_text()) == task
