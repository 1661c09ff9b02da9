"""tools/make_box_tasks.py: a box below the standing character's hanging hands is reached down to
(the "reaching" style: balance kept, torso and head free to bend) and then lifted to chest height
before it is carried; the presets on the repository are the tool's output."""
import importlib.util
import json
from pathlib import Path

import mujoco
import numpy as np
import pytest

from solver.core.paths import task_path
from solver.formats.objective_terms import STANDING_WEIGHTS, STYLES
from solver.formats.task import SceneRef, build_scene
from solver.physics.model import build_model

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("make_box_tasks", ROOT / "tools" / "make_box_tasks.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def _style(kf) -> str:
    """The box keyframes' styles: the paper's standing weights (the style adds stillness), or reaching."""
    styles = {"standing": STANDING_WEIGHTS, "reaching": {**STYLES["reaching"][1], "Foot Slip": 0.0}}
    (name,) = [n for n, w in styles.items() if w == kf["weights"]]
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


@pytest.mark.parametrize("make", ["lift_place", "floor_pickup", "handover"])
def test_the_box_is_put_down_nearer_the_character_and_anywhere_within_tolerance_rests_over_the_platform(make):
    """The 'place' mark lies NEAR towards the character from the target platform's centre, the carry
    ends above it, and a box whose bottom centre is anywhere within PLACED of the mark (the tracker's
    tolerance) has its centre of mass over the platform's top, so 'release' leaves it standing there."""
    tool = _tool()
    task = getattr(tool, make)()
    kfs = {kf["name"]: kf for kf in task["keyframes"]}
    (mark,) = [p for p in kfs["place"]["pairs"] if p["body1"] == "box"]
    assert mark["body2"] == "to_platform" and kfs["release"]["pairs"] == [mark]
    built = build_model(build_scene(SceneRef(environment="pick_place", params=task["scene"]["params"])))
    m, data = built.model, mujoco.MjData(built.model)
    mujoco.mj_kinematics(m, data)
    platform = m.body("to_platform").id
    centre = data.xpos[platform]
    half = m.geom_size[m.body_geomadr[platform]]
    on_top = centre + np.asarray(mark["pos2"])
    assert on_top[2] == pytest.approx(centre[2] + half[2])
    assert np.linalg.norm(on_top[:2]) == pytest.approx(np.linalg.norm(centre[:2]) - tool.NEAR, abs=1e-4)
    # the farthest a box's bottom centre may lie from the mark, in each direction
    for angle in np.linspace(0, 2 * np.pi, 16, endpoint=False):
        rests = on_top[:2] + tool.PLACED * np.array([np.cos(angle), np.sin(angle)])
        assert np.all(np.abs(rests - centre[:2]) < half[:2]), (angle, rests)
    (carry,) = [p for p in kfs["carry"]["pairs"] if p["body1"] == "box"]
    assert carry["body2"] == "world" and carry["pos2"][:2] == pytest.approx(on_top[:2], abs=1e-4)


@pytest.mark.parametrize("make", ["lift_place", "floor_pickup", "handover"])
def test_the_box_is_grasped_where_it_rests(make):
    """The grasp asks the box to stay at its resting place (a point in the world, MuJoCo's initial
    position of the free body) besides the hands on its sides: sticky hands weld at the touch, and
    dragging the box towards the body would meet the hands' pairs as well."""
    task = getattr(_tool(), make)()
    grasp = task["keyframes"][0]
    assert grasp["name"] == "grasp"
    (stay,) = [p for p in grasp["pairs"] if p["body1"] == "box"]
    built = build_model(build_scene(SceneRef(environment="pick_place", params=task["scene"]["params"])))
    data = mujoco.MjData(built.model)
    mujoco.mj_kinematics(built.model, data)
    assert stay["body2"] == "world" and stay["pos1"] == [0, 0, 0]
    assert stay["pos2"] == pytest.approx(data.xpos[built.model.body("box").id])
    assert sorted(p["body1"] for p in grasp["pairs"] if p["body2"] == "box") == ["hand_left", "hand_right"]
