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


def test_a_box_set_down_on_its_edge_is_not_placed():
    """'release' asks for the box upright on its platform: its bottom and its top, one above the other.
    Flat where the keyframe puts it, the distance is zero; tipped 45° about its bottom centre (which
    stays on the mark, so a bottom-centre pair alone would call it placed), the top is 2h·sin(22.5°)
    off (h the box's height, by hand), over the keyframe's tolerance."""
    from solver.contact_keyframes import parse_keyframes
    from solver.mpc.tracker import pair_distance

    task = _tool().lift_place()
    release = parse_keyframes(task["keyframes"])[-1]
    built = build_model(build_scene(SceneRef(environment="pick_place")))
    m, data = built.model, mujoco.MjData(built.model)
    data.qpos[:] = built.initial_qpos()
    mujoco.mj_kinematics(m, data)
    to = m.body("to_platform").id
    h = 2 * float(m.geom_size[m.geom("box").id, 2])
    mark = data.xpos[to] + np.array([0.0, 0.0, float(m.geom_size[m.body_geomadr[to], 2])])  # the platform's top
    adr = int(m.jnt_qposadr[m.joint("box_free").id])
    for tilt, expected in ((0.0, 0.0), (45.0, 2 * h * np.sin(np.radians(22.5)))):
        a = np.radians(tilt)
        quat = np.array([np.cos(a / 2), 0.0, np.sin(a / 2), 0.0])  # about y, through the box's bottom centre
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, quat)
        data.qpos[adr:adr + 3] = mark + rot.reshape(3, 3) @ np.array([0.0, 0.0, h / 2])
        data.qpos[adr + 3:adr + 7] = quat
        mujoco.mj_kinematics(m, data)
        assert pair_distance(m, data, release) == pytest.approx(expected, abs=1e-6), tilt
    assert expected > release.tolerance
