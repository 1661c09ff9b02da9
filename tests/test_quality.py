"""Motion quality figures against hand computations on a tiny character: a sphere pelvis, a sphere
foot on a hinge, and a head. Penetration is the sphere's depth below the floor; sliding is the
distance a planted foot travels; jerk is 6a for a hinge angle a·t³; a fall is the time the head is
low where lying is not allowed; the fastest body is the one swung fastest. And every contact and
assist solution reports them."""
from pathlib import Path

import numpy as np
import pytest
from shared_solves import solution, solved

from solver.formats.scene import SCHEMA_VERSION, Body, Character, Environment, Geom, Joint, SceneDesc
from solver.physics.model import build_model
from solver.physics.quality import FALLEN_HEAD_HEIGHT, RISEN_HEAD_HEIGHT, motion_quality

ROOT = Path(__file__).resolve().parents[1]
R = 0.1  # sphere radius


def _model():
    pelvis = Body(name="pelvis", pos=[0, 0, 1.0], geoms=[Geom(name="p", type="sphere", size=[R])])
    foot = Body(name="foot_left", parent="pelvis", pos=[0, 0.5, 0.0], joints=[Joint(name="ankle", axis=[0, 1, 0],
                                                                                      range=[-3, 3])],
                geoms=[Geom(name="f", type="sphere", size=[R], pos=[0, 0, 0])])
    head = Body(name="head", parent="pelvis", pos=[0, 0, 0.6], geoms=[Geom(name="h", type="sphere", size=[0.05])])
    scene = SceneDesc(schema_version=SCHEMA_VERSION, name="q", environment=Environment(),
                      character=Character(name="q", bodies=[pelvis, foot, head]))
    built = build_model(scene, actuation="motor")
    return built.model, built.character_bodies


def _pose(root_xyz, ankle=0.0):
    q = np.zeros(8)
    q[:3], q[3], q[7] = root_xyz, 1.0, ankle
    return q


def test_penetration_is_the_depth_below_the_floor():
    model, bodies = _model()
    qpos = np.stack([_pose([0, 0, 0.5]), _pose([0, 0, R - 0.013]), _pose([0, 0, R - 0.004])])
    got = motion_quality(model, bodies, np.array([0.0, 0.1, 0.2]), qpos)
    assert got["max_penetration_m"] == pytest.approx(0.013, abs=1e-6)
    assert got["max_penetration_at"]["time_s"] == pytest.approx(0.1)
    assert got["max_penetration_at"]["bodies"][1] == "floor"  # pelvis and foot are equally deep here
    assert motion_quality(model, bodies, np.array([0.0]), qpos[:1])["max_penetration_at"] is None  # nothing overlaps


def test_where_the_deepest_overlap_is_names_the_body_and_the_time():
    """The pelvis 5 cm above touching, rolled so that the foot (0.5 m to its side) dips 2 cm into the floor."""
    model, bodies = _model()
    roll = -np.arcsin(0.07 / 0.5)
    tilted = _pose([0, 0, R + 0.05])
    tilted[3:7] = [np.cos(roll / 2), np.sin(roll / 2), 0.0, 0.0]
    qpos = np.stack([_pose([0, 0, R - 0.005]), tilted, _pose([0, 0, 0.5])])
    got = motion_quality(model, bodies, np.array([0.0, 0.5, 1.0]), qpos)
    assert got["max_penetration_m"] == pytest.approx(0.02, abs=1e-6)
    assert got["max_penetration_at"] == {"time_s": 0.5, "bodies": ["foot_left", "floor"]}


def test_feet_slide_only_while_planted():
    model, bodies = _model()
    z = R - 0.001  # both spheres just touch the floor
    xs = np.linspace(0.0, 0.3, 11)
    planted = [_pose([x, 0, z]) for x in xs]  # 0.3 m along x with the foot down
    lifted = [_pose([0.3 + x, 0, 0.5]) for x in xs[1:]]  # another 0.3 m in the air: not sliding
    times = np.arange(21) * 0.01
    got = motion_quality(model, bodies, times, np.stack(planted + lifted))
    assert got["foot_sliding_m"] == pytest.approx(0.3, abs=1e-9)


def test_the_phase_that_slid_farthest_is_named_with_its_foot_and_times():
    """Dragged 4 cm, lifted for 0.2 s (two phases, not one), set down and dragged 12 cm and back 3: 16 cm in all,
    and the second phase (set down at 0.25 s, farthest at 0.31 s, lifted at 0.34 s) is the one to look at."""
    model, bodies = _model()
    z = R - 0.001
    xs = list(np.linspace(0.0, 0.04, 5)) + [0.04] * 20 + list(np.linspace(0.04, 0.16, 7)) + [0.15, 0.14, 0.13]
    zs = [z] * 5 + [0.5] * 20 + [z] * 10
    got = motion_quality(model, bodies, np.arange(len(xs)) * 0.01, np.stack([_pose([x, 0, h]) for x, h in zip(xs, zs)]))
    assert got["foot_sliding_m"] == pytest.approx(0.16, abs=1e-9)
    most = got["foot_sliding_most"]
    assert most["body"] == "foot_left" and most["m"] == pytest.approx(0.12, abs=1e-6)
    assert (most["from_s"], most["farthest_s"], most["to_s"]) == pytest.approx((0.25, 0.31, 0.34))
    still = motion_quality(model, bodies, np.arange(3) * 0.01, np.stack([_pose([0, 0, z])] * 3))
    assert still["foot_sliding_m"] == 0.0 and still["foot_sliding_most"] is None


def test_a_foot_rolling_over_the_floor_does_not_slide():
    """The sphere foot rolled 3 rad along the floor (its centre moving as far as its touching point's arc):
    the point it touches never slips, though the foot goes 0.3 m; MuJoCo puts a sphere's contact halfway
    into its overlap, so the rolling radius is R less half the depth."""
    model, bodies = _model()
    depth = 0.001
    angle = np.linspace(0.0, 3.0, 101)
    rolled = [_pose([(R - depth / 2) * a, 0, R - depth], ankle=a) for a in angle]
    got = motion_quality(model, bodies, np.arange(101) * 0.01, np.stack(rolled))
    assert got["foot_sliding_m"] == pytest.approx(0.0, abs=1e-4)


def test_a_foot_that_loses_its_touch_for_a_pose_is_still_planted():
    """Dragged 0.1 m out and back with its touch lost for one pose (1 cm up) at the far end: one planted phase,
    0.1 m from where it was set down at most — not two phases of 0.1 m each."""
    model, bodies = _model()
    z = R - 0.001
    out_back = np.r_[np.linspace(0.0, 0.1, 11), np.linspace(0.1, 0.0, 11)[1:]]
    qpos = np.stack([_pose([x, 0, z + (0.01 if i == 10 else 0.0)]) for i, x in enumerate(out_back)])
    got = motion_quality(model, bodies, np.arange(len(qpos)) * 0.01, qpos)
    assert got["foot_sliding_m"] == pytest.approx(0.09, abs=1e-9)  # 1 cm up: its sole not carried across


def test_a_dragged_foot_whose_touch_chatters_slides_as_far_as_it_is_dragged():
    """Dragged 0.2 m in 5 ms steps, its touch lost every other step (2 mm up, as MuJoCo's contacts under a
    dragged foot chatter): 0.2 m, every step counted. A foot that grazes the floor twice 40 ms apart as it swings
    on 0.1 m, 3 cm up between, is carried across no swing, and one rolled 1 rad along the floor across its lost
    touch slides nothing either."""
    model, bodies = _model()
    z = R - 0.001
    xs = np.linspace(0.0, 0.2, 41)
    chatter = np.stack([_pose([x, 0, z + (0.002 if i % 2 else 0.0)]) for i, x in enumerate(xs)])
    got = motion_quality(model, bodies, np.arange(len(xs)) * 0.005, chatter)
    assert got["foot_sliding_m"] == pytest.approx(0.2, abs=1e-9)
    swing = np.stack([_pose([x, 0, z if i in (0, 8) else z + 0.03]) for i, x in enumerate(np.linspace(0, 0.1, 9))])
    grazed = motion_quality(model, bodies, np.arange(9) * 0.005, swing)
    assert grazed["foot_sliding_m"] == pytest.approx(0.0, abs=1e-9)
    rolled = np.stack([_pose([(R - 0.0005) * 0.5 * i, 0, z + (0.002 if i == 1 else 0.0)], ankle=0.5 * i)
                       for i in range(3)])
    assert motion_quality(model, bodies, np.arange(3) * 0.005, rolled)["foot_sliding_m"] < 1e-3  # not dragged


def test_jerk_of_a_cubic_is_six_a():
    model, bodies = _model()
    fps, a = 30.0, 0.7
    times = np.arange(40) / fps
    qpos = np.stack([_pose([0, 0, 1.0], a * t ** 3) for t in times])
    got = motion_quality(model, bodies, times, qpos, fps=fps)
    assert got["jerk_rms"] == pytest.approx(6 * a, rel=1e-6)


def test_the_fastest_body_is_the_foot_swung_round_by_the_root():
    """The root turns about the vertical through the pelvis and the head: only the foot, 0.5 m off
    that axis, moves. Turned 0.04 rad a pose for 5 poses, then 0.12 rad once, at 100 poses a second:
    the fastest is the foot on the last turn, a chord of 2 × 0.5 × sin(0.06) m in 0.01 s."""
    model, bodies = _model()
    yaw = np.concatenate([0.04 * np.arange(6), [0.2 + 0.12]])
    times = np.arange(len(yaw)) * 0.01
    qpos = np.stack([_pose([0, 0, 1.0]) for _ in yaw])
    qpos[:, 3], qpos[:, 6] = np.cos(yaw / 2), np.sin(yaw / 2)
    got = motion_quality(model, bodies, times, qpos)["max_body_speed"]
    assert got["body"] == "foot_left" and got["time_s"] == pytest.approx(0.06)
    assert got["mps"] == pytest.approx(2 * 0.5 * np.sin(0.06) / 0.01, abs=1e-4)
    assert motion_quality(model, bodies, times[:1], qpos[:1])["max_body_speed"] is None


def test_a_fall_is_the_time_the_head_is_low_where_lying_is_not_asked_for():
    model, bodies = _model()
    times = np.arange(10) * 0.1
    low = FALLEN_HEAD_HEIGHT - 0.6 - 0.1  # head 0.6 m above the root: 0.1 m below the threshold
    qpos = np.stack([_pose([0, 0, 1.0])] * 4 + [_pose([0, 0, low])] * 6)
    may_lie = np.array([False] * 7 + [True] * 3)
    got = motion_quality(model, bodies, times, qpos, may_lie)
    assert got["fall_s"] == pytest.approx(0.3)  # poses 4, 5, 6 are fallen and not allowed to be
    assert motion_quality(model, bodies, times, qpos)["fall_s"] is None  # no say on lying: not judged
    # Keyframe segments: in the second (from pose 5) the head starts low, so it is getting up, not a
    # fall, until the head has been up in that segment.
    segment = np.array([0] * 5 + [1] * 5)
    assert motion_quality(model, bodies, times, qpos, may_lie, segment=segment)["fall_s"] == pytest.approx(0.1)
    rises = np.stack([_pose([0, 0, low])] * 5 + [_pose([0, 0, 1.0])] * 2 + [_pose([0, 0, low])] * 3)
    got = motion_quality(model, bodies, times, rises, np.zeros(10, bool), segment=np.ones(10, int))
    assert got["fall_s"] == pytest.approx(0.2)  # low from the start: not a fall; down again after rising
    # (poses 7, 8; the last pose carries no time)


def test_a_stumble_is_a_body_other_than_the_feet_put_down_on_the_floor():
    """Tilted onto its foot, only the foot touches the floor: no stumble. Dropped to the floor, the
    pelvis touches it too: a stumble at that pose, named — unless lying is allowed there, or the
    reference itself has the pelvis down there (`expected_touch`), or nothing says whether lying is
    allowed (not judged)."""
    from solver.physics.verdict import quality_words
    model, bodies = _model()
    times = np.arange(6) * 0.1
    tilt = np.radians(30.0)  # about x, the foot's side (+y) down: the foot at 0.35 - 0.5 sin 30° = R
    tilted = _pose([0, 0, 0.35])
    tilted[3:7] = [np.cos(-tilt / 2), np.sin(-tilt / 2), 0.0, 0.0]
    down = _pose([0, 0, R - 0.001])  # the pelvis and the foot on the floor, the head 0.6 m above
    qpos = np.stack([_pose([0, 0, 1.0]), tilted, tilted, down, down, down])
    upright = np.zeros(6, bool)
    only_foot = motion_quality(model, bodies, times[:3], qpos[:3], upright[:3])
    assert only_foot["stumble"] is None and only_foot["foot_sliding_m"] == 0.0
    got = motion_quality(model, bodies, times, qpos, upright)
    assert got["stumble"] == {"time_s": pytest.approx(0.3), "body": "pelvis"}
    assert "stumbles at 0.30 s (pelvis on the floor)" in quality_words(got)
    assert motion_quality(model, bodies, times, qpos, np.array([False] * 3 + [True] * 3))["stumble"] is None
    expected = {"pelvis": np.array([False] * 3 + [True] * 3)}
    assert motion_quality(model, bodies, times, qpos, upright, expected_touch=expected)["stumble"] is None
    assert motion_quality(model, bodies, times, qpos)["stumble"] is None
    no_feet = {"pelvis": "pelvis", "head": "head"}  # no body plays a foot: nothing to tell a stumble from a step
    assert motion_quality(model, bodies, times, qpos, upright, roles=no_feet)["stumble"] is None


def test_a_knee_the_keyframe_puts_on_the_floor_is_no_stumble():
    """A contact keyframe that pairs the right knee (the shin's origin) with a point on the floor excuses
    the shin and what hangs below it (the foot) touching the floor while that keyframe is active; a hand
    paired with a target in the air is not excused, nor the knee once the next keyframe is."""
    import json

    from solver.formats.task import task_from_dict
    from solver.methods.contact import CONTACT, paired_touch
    doc = json.loads((ROOT / "scenes/tasks/reach_hand_targets.json").read_text())
    doc["keyframes"][0]["pairs"].append({"body1": "shin_right", "pos1": [0, 0, 0], "body2": "world",
                                         "pos2": [0.3, -0.1, 0.05]})
    prep = CONTACT.prepare(task_from_dict(doc))
    got = paired_touch(prep, np.array([0, 0, 1, 1]))
    assert set(got) == {"shin_right", "foot_right"}
    for body in got:
        assert got[body].tolist() == [True, True, False, False]


def test_a_head_lying_on_a_bed_that_bobs_across_the_fall_line_has_not_fallen():
    """Lying on a 0.3 m bed the head sits about at the fall line (bed seed 2: 0.48-0.53 m). Getting
    up, it bobs across the line before it rises: not a fall until it has risen clear of the line
    (RISEN_HEAD_HEIGHT); once risen, down again is one."""
    model, bodies = _model()
    times = np.arange(10) * 0.1
    root = [FALLEN_HEAD_HEIGHT - 0.6 + dz for dz in (-0.02, 0.03, -0.02, 0.03, -0.02)]  # head 0.6 m above
    risen = RISEN_HEAD_HEIGHT - 0.6 + 0.01
    qpos = np.stack([_pose([0, 0, z]) for z in root] + [_pose([0, 0, risen])] * 2 + [_pose([0, 0, root[0]])] * 3)
    got = motion_quality(model, bodies, times, qpos, np.zeros(10, bool), segment=np.zeros(10, int))
    assert got["fall_s"] == pytest.approx(0.2)  # only poses 7, 8: after it rose clear


def test_a_head_low_is_a_fall_only_with_the_torso_lying():
    """With a torso, a head below the line with the torso up (seated on a floor-level stool) is no fall; with it
    turned 90° (lying back), it is: of ten poses 0.1 s apart, up (0-3), seated low (4-6), lying (7-9), the fall
    is poses 7 and 8 (the last carries no time); judged by the head alone (no torso role), poses 4-8."""
    pelvis = Body(name="pelvis", pos=[0, 0, 1.0], geoms=[Geom(name="p", type="sphere", size=[R])])
    torso = Body(name="torso", parent="pelvis", pos=[0, 0, 0.3], geoms=[Geom(name="t", type="sphere", size=[R])])
    head = Body(name="head", parent="torso", pos=[0, 0, 0.3], geoms=[Geom(name="h", type="sphere", size=[0.05])])
    scene = SceneDesc(schema_version=SCHEMA_VERSION, name="q", environment=Environment(),
                      character=Character(name="q", bodies=[pelvis, torso, head]))
    built = build_model(scene, actuation="motor")
    model, bodies = built.model, built.character_bodies
    lying = np.array([0.3, 0, 0.2, np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0])  # turned 90° about y
    qpos = np.stack([[0, 0, 1.0, 1, 0, 0, 0]] * 4 + [[0, 0, FALLEN_HEAD_HEIGHT - 0.65, 1, 0, 0, 0]] * 3 + [lying] * 3)
    times = np.arange(10) * 0.1
    upright = np.zeros(10, bool)
    got = motion_quality(model, bodies, times, qpos, upright, segment=np.zeros(10, int))
    assert got["fall_s"] == pytest.approx(0.2)
    head_only = motion_quality(model, bodies, times, qpos, upright, segment=np.zeros(10, int),
                               roles={"pelvis": "pelvis", "head": "head"})
    assert head_only["fall_s"] == pytest.approx(0.5)


@pytest.mark.parametrize("name", ["contact_partwise", "assist"])
def test_solutions_report_their_quality(name):
    entry = solution(solved(ROOT / f"tests/data/golden/{name}.json"), 0)  # the golden test's solve, shared
    q = entry["quality"]
    assert 0.0 <= q["max_penetration_m"] < 0.05 and q["foot_sliding_m"] >= 0.0 and q["jerk_rms"] > 0.0
    assert (q["fall_s"] is None) == (name == "assist")
