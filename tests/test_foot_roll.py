"""Feet rolled onto their edges, against hand computations on a tiny character: a pelvis with two box feet,
each on a hinge about the forward axis (a roll) and one about the sideways axis (a pitch). A foot rolled θ and
resting on its edge on the floor measures θ; a foot pitched onto its heel, a roll held for less than HELD_S and
a roll in the air measure nothing; the solution's words say a roll past ROLLED_DEG."""
import numpy as np
import pytest

from solver.formats.scene import SCHEMA_VERSION, Body, Character, Environment, Geom, Joint, SceneDesc
from solver.physics.foot_roll import HELD_S, ROLLED_DEG
from solver.physics.model import build_model
from solver.physics.quality import motion_quality
from solver.physics.verdict import quality_words

HALF = (0.1, 0.05, 0.02)  # the box feet's half sizes: 20 cm long, 10 cm wide, 4 cm thick
HANG = 0.9  # m: the feet's centres below the pelvis
DT = 0.01
HELD = int(round(HELD_S / DT))  # poses a roll must be held to count


def _model():
    def foot(side, y):
        return Body(name=f"foot_{side}", parent="pelvis", pos=[0, y, -HANG],
                    joints=[Joint(name=f"roll_{side}", axis=[1, 0, 0], range=[-1.5, 1.5]),
                            Joint(name=f"pitch_{side}", axis=[0, 1, 0], range=[-1.5, 1.5])],
                    geoms=[Geom(name=f"sole_{side}", type="box", size=list(HALF))])
    pelvis = Body(name="pelvis", pos=[0, 0, 1.0], geoms=[Geom(name="p", type="sphere", size=[0.1])])
    scene = SceneDesc(schema_version=SCHEMA_VERSION, name="roll", environment=Environment(),
                      character=Character(name="roll", bodies=[pelvis, foot("left", 0.15), foot("right", -0.15)]))
    built = build_model(scene, actuation="motor")
    return built.model, built.character_bodies


def _pose(left_roll=0.0, left_pitch=0.0, lift=0.0):
    """The left foot rolled / pitched (rad) with its lowest point 1 mm into the floor (`lift` m higher); the
    right foot flat at the same height, so off the floor whenever the left is rolled or pitched."""
    drop = max(HALF[1] * np.sin(abs(left_roll)) + HALF[2] * np.cos(left_roll),
               HALF[0] * np.sin(abs(left_pitch)) + HALF[2] * np.cos(left_pitch))
    q = np.zeros(11)
    q[2], q[3] = HANG + drop - 0.001 + lift, 1.0
    q[7], q[8] = left_roll, left_pitch
    return q


def _quality(poses):
    model, bodies = _model()
    return motion_quality(model, bodies, np.arange(len(poses)) * DT, np.stack(poses))


def test_a_foot_rolled_onto_its_edge_measures_its_roll():
    theta = np.radians(30.0)
    got = _quality([_pose(theta)] * (HELD + 30))["foot_roll"]
    assert got["deg"] == pytest.approx(30.0, abs=0.01)
    assert got["body"] == "foot_left" and got["time_s"] == 0.0
    assert got["rolled_s"] == pytest.approx((HELD + 29) * DT)  # the last pose has no time after it


def test_a_foot_pitched_onto_its_heel_or_flat_does_not_roll():
    flat = _quality([_pose()] * HELD)["foot_roll"]
    assert flat["deg"] == pytest.approx(0.0, abs=1e-6) and flat["rolled_s"] == 0.0
    heel = _quality([_pose(left_pitch=np.radians(30.0))] * HELD)["foot_roll"]
    assert heel["body"] == "foot_left" and heel["deg"] == pytest.approx(0.0, abs=1e-6)


def test_a_roll_counts_only_held_and_planted():
    """Rolled 40° for fewer poses than HELD_S takes (a foot landing on its edge and settling flat), then
    rolled 40° in the air: the held roll is the 25° that follows, planted."""
    brief = HELD - 2
    poses = ([_pose(np.radians(40.0))] * brief + [_pose()] * 10 + [_pose(np.radians(40.0), lift=0.05)] * HELD
             + [_pose(np.radians(25.0))] * HELD)
    got = _quality(poses)["foot_roll"]
    assert got["deg"] == pytest.approx(25.0, abs=0.01)
    assert got["time_s"] == pytest.approx((brief + 10 + HELD) * DT)
    assert got["rolled_s"] == pytest.approx((brief + HELD - 1) * DT)  # the brief 40° and the 25° held, not the air
    assert _quality([_pose(lift=0.05)] * HELD)["foot_roll"] is None  # never planted


def test_a_roll_past_the_line_is_said_in_the_words():
    rolled = _quality([_pose(np.radians(ROLLED_DEG + 10.0))] * (HELD + 31))
    said = (f"feet roll onto their edges for {(HELD + 30) * DT:.1f} s in all "
            f"(foot_left {ROLLED_DEG + 10.0:.0f}° at 0.00 s)")
    assert said in quality_words(rolled)
    level = _quality([_pose(np.radians(ROLLED_DEG - 5.0))] * (HELD + 31))
    assert not any("roll" in w for w in quality_words(level))


def test_a_foot_left_on_its_heel_at_the_clip_s_end_is_said_where_the_clip_ends_standing():
    """The left foot pitched 30° toes up (about the sideways axis, −y turning +x up) for the clip's last HELD_S
    measures +30 (on its heel), toes down −30 (on its toes); the words say it where the clip is meant to end
    standing, not where a foot rolls over its heel mid-clip, nor flat."""
    heel = _quality([_pose()] * 20 + [_pose(left_pitch=-np.radians(30.0))] * (HELD + 1))
    assert heel["foot_end_pitch"]["deg"] == pytest.approx(30.0, abs=0.01)
    assert heel["foot_end_pitch"]["body"] == "foot_left"
    assert "ends with foot_left on its heel (toes 30° up)" in quality_words(heel, ends_standing=True)
    assert not any("heel" in w for w in quality_words(heel))  # a clip not meant to end standing
    toes = _quality([_pose(left_pitch=np.radians(30.0))] * (HELD + 1))
    assert toes["foot_end_pitch"]["deg"] == pytest.approx(-30.0, abs=0.01)
    assert "ends with foot_left on its toes (heel 30° up)" in quality_words(toes, ends_standing=True)
    mid = _quality([_pose(left_pitch=-np.radians(30.0))] * HELD + [_pose()] * (HELD + 1))
    assert abs(mid["foot_end_pitch"]["deg"]) < 1.0
    assert not any("ends with" in w for w in quality_words(mid, ends_standing=True))
