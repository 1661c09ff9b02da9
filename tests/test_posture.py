"""A keyframe's style is part of its success: a "standing" keyframe counts only with the head near its
standing height above the feet and the torso near upright, measured against the character's own
standing pose; a keyframe whose pairs were met but not its style fails for its style, said. The
figures are checked against MuJoCo's forward kinematics of hand-made poses."""
import mujoco
import numpy as np
import pytest

from solver.formats.contact_keyframes import parse_keyframes
from solver.formats.task import SceneRef, build_scene, task_from_dict
from solver.mpc.keyframe_tracker import KeyframeTracker
from solver.physics.model import build_model
from solver.physics.posture import STANDING_HEAD_SHARE, STANDING_TILT_DEG, Posture
from solver.physics.quality import end_state

PAIR = {"body1": "torso", "pos1": [0, 0, 0], "body2": "world", "pos2": [0, 0, 1.2]}


@pytest.fixture(scope="module")
def humanoid():
    task = task_from_dict({"schema_version": 1, "name": "t", "method": "contact", "keyframes": [{"pairs": [PAIR]}]})
    built = build_model(build_scene(task.scene))
    root = built.model.body(built.scene.character.bodies[0].name).id
    return built, Posture(built.model, built.roles, root)


def _posed(model, qpos):
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_kinematics(model, data)
    return data


def test_standing_is_measured_against_the_characters_own_standing_pose(humanoid):
    built, posture = humanoid
    m = built.model
    rest = _posed(m, m.qpos0)
    head, feet = m.body("head").id, [m.body("foot_left").id, m.body("foot_right").id]
    assert posture.standing_head == pytest.approx(rest.xpos[head, 2] - min(rest.xpos[f, 2] for f in feet))
    assert posture.head_share(rest) == pytest.approx(1.0)
    assert posture.torso_tilt_deg(rest) == pytest.approx(0.0, abs=1e-4)
    assert posture.not_standing(rest) is None

    # The whole body turned 30° about the world's y: the torso leans 30°, the head drops by cos 30°.
    q = m.qpos0.copy()
    turn = np.zeros(4)
    mujoco.mju_axisAngle2Quat(turn, [0, 1, 0], np.radians(30))
    mujoco.mju_mulQuat(q[3:7], turn, m.qpos0[3:7])
    leaning = _posed(m, q)
    assert posture.torso_tilt_deg(leaning) == pytest.approx(30.0, abs=1e-6)
    share = posture.head_share(leaning)
    assert posture.not_standing(leaning) == f"head at {share:.0%} of its standing height, torso 30° from upright"
    assert posture.style_gap("standing", rest) == 0.0
    assert posture.style_gap("standing", leaning) == pytest.approx(STANDING_HEAD_SHARE - share + np.radians(15.0))
    assert posture.style_gap("lying", leaning) == pytest.approx(np.radians(30.0))
    assert 30.0 > STANDING_TILT_DEG

    # Knees and hips bent, the torso kept upright: a crouch.
    crouch = m.qpos0.copy()
    for side in ("left", "right"):
        for joint, angle in ((f"hip_y_{side}", -1.2), (f"knee_{side}", 2.0)):
            crouch[m.jnt_qposadr[m.joint(joint).id]] = angle
    data = _posed(m, crouch)
    share = (data.xpos[head, 2] - min(data.xpos[f, 2] for f in feet)) / posture.standing_head
    assert share < STANDING_HEAD_SHARE
    assert posture.head_share(data) == pytest.approx(share)
    assert posture.not_standing(data) == f"head at {share:.0%} of its standing height"
    assert posture.style_gap("standing", data) == pytest.approx(STANDING_HEAD_SHARE - share)
    assert posture.style_gap("reaching", data) == posture.style_gap(None, data) == 0.0


def test_a_clips_end_is_read_from_its_last_frames(humanoid):
    """`quality.end_state`: the root's speed over the last 0.1 s, the head's share and the torso's lean of
    the last pose."""
    built, posture = humanoid
    m = built.model
    times = np.arange(0, 1.0001, 0.01)
    qpos = np.repeat(m.qpos0[None], len(times), axis=0)
    qpos[:, 0] = 0.3 * times  # gliding forward at 0.3 m/s
    end = end_state(m, built.roles, m.body(built.scene.character.bodies[0].name).id, times, qpos)
    assert end["root_speed_mps"] == pytest.approx(0.3, rel=1e-6)
    assert end["head_share"] == pytest.approx(1.0) and end["torso_tilt_deg"] == pytest.approx(0.0, abs=1e-4)


def test_a_keyframe_met_but_not_in_its_style_fails_for_its_style():
    """The tracker is told the pairs are not met while the style does not hold (the agent's `met_within`):
    at the time limit the failure is "style", not "time limit"."""
    kf = parse_keyframes([{"pairs": [PAIR], "time_limit": 2.0, "style": "standing"}])
    t = KeyframeTracker(kf)
    t.style_short = "head at 80% of its standing height"
    t.update(1.0, np.inf)
    assert not t.failed
    t.update(2.1, np.inf)
    assert t.failed and t.failure == "style"
    plain = KeyframeTracker(kf)
    plain.update(2.1, np.inf)
    assert plain.failure == "time limit"


def test_a_style_that_stops_coming_closer_fails_after_the_give_up_time():
    """Hand-computed on the tracker (`STYLE_STEP` 0.01 of the style gap, give-up 1 s): a gap shrinking 4
    thousandths per 0.1 s is progress every third step; no closer for 1 s fails "style"; a style found short
    again after its pairs were lost starts the clock anew; 0 turns it off."""
    kf = parse_keyframes([{"pairs": [PAIR], "time_limit": 10.0, "style": "standing"}])
    t = KeyframeTracker(kf)
    t.style_short = "head at 80% of its standing height"
    for i in range(30):  # 0.2 → 0.084, 4 thousandths per 0.1 s
        t.watch_style(0.1 * i, 0.2 - 0.004 * i, give_up_s=1.0)
    assert not t.failed and t.style_mark == pytest.approx(0.2 - 0.004 * 27)
    since = t.style_since
    assert since == pytest.approx(2.7)
    t.watch_style(since + 0.99, 0.09, give_up_s=1.0)
    assert not t.failed
    t.style_short = None  # its pairs lost for a step: no style to watch
    t.watch_style(since + 1.0, 0.0, give_up_s=1.0)
    assert not t.failed and t.style_mark is None
    t.style_short = "head at 90% of its standing height"
    t.watch_style(since + 1.1, 0.09, give_up_s=1.0)
    t.watch_style(since + 2.09, 0.09, give_up_s=1.0)
    assert not t.failed
    t.watch_style(since + 2.1, 0.09, give_up_s=1.0)
    assert t.failed and t.failure == "style" and t.done
    off = KeyframeTracker(kf)
    off.style_short = "head at 80% of its standing height"
    for i in range(40):
        off.watch_style(0.1 * i, 0.2, give_up_s=0.0)
    assert not off.failed


def test_an_unknown_style_is_refused_by_name():
    from solver.core.errors import InvalidInput
    with pytest.raises(InvalidInput, match="unknown style 'upright'"):
        parse_keyframes([{"pairs": [PAIR], "style": "upright"}])


def test_the_figures_an_animator_would_not_accept_are_said_in_words():
    from solver.physics.verdict import quality_words
    fine = {"max_penetration_m": 0.01, "max_penetration_at": None, "foot_sliding_m": 0.03, "fall_s": 0.0,
            "end": {"root_speed_mps": 0.02, "head_share": 0.96, "torso_tilt_deg": 5.0}}
    assert quality_words(fine, ends_standing=True) == []
    bad = {"max_penetration_m": 0.023, "max_penetration_at": {"time_s": 1.0, "bodies": ["hand_left", "chair"]},
           "foot_sliding_m": 0.86, "fall_s": 0.4, "end": {"root_speed_mps": 0.27, "head_share": 0.81,
                                                         "torso_tilt_deg": 29.0}}
    assert quality_words(bad, ends_standing=True) == [
        "ends crouched (head at 81% of standing)", "ends leaning 29°", "ends moving at 0.27 m/s", "falls for 0.4 s",
        "feet slide 86 cm", "hand_left sinks 2.3 cm into chair at 1.00 s"]
    assert quality_words(bad)[0] == "ends moving at 0.27 m/s"  # a clip not meant to end standing: no posture words
    where = {"m": 0.2, "body": "foot_right", "from_s": 0.0, "farthest_s": 7.93, "to_s": 8.75}  # where to look first
    said = quality_words(dict(bad, foot_sliding_most=where))
    assert "feet slide 86 cm (foot_right 20 cm from 0.00 s to 7.93 s)" in said


def _start(name: str):
    """The preset's model and its start state, forwarded (contacts and their forces)."""
    from pathlib import Path

    from solver.formats.task import load_task
    task = load_task(Path(__file__).resolve().parents[1] / "scenes" / "tasks" / f"{name}.json")
    built = build_model(build_scene(task.scene))
    data = mujoco.MjData(built.model)
    data.qpos[:] = built.initial_qpos()
    mujoco.mj_forward(built.model, data)
    root = built.model.body(built.scene.character.bodies[0].name).id
    return built, data, Posture(built.model, built.roles, root)


def test_seated_means_the_weight_on_a_seat_and_lying_the_torso_down():
    """Seated in the armchair (stand → sit → stand's start, settled) the pelvis and thighs rest over
    SEATED_LOAD_SHARE of the weight on the chair — MuJoCo's own contact forces, summed by hand here;
    the same pose lifted 3 cm, hovering over the seat as a pelvis within a pair's tolerance can, rests
    none and is not seated; standing, nothing; turned onto its back it is lying, standing it is not."""
    from solver.physics.posture import LYING_TILT_DEG, SEATED_LOAD_SHARE
    built, data, posture = _start("armchair_stand_sit_stand")
    m = built.model
    mujoco.mj_step(m, data, nstep=60)  # 0.3 s settling into the chair (the rested start only touches it)
    seat = [m.body(built.roles[r]).id for r in ("pelvis", "thigh_left", "thigh_right")]
    chair = {g for g in range(m.ngeom) if m.body(m.geom_bodyid[g]).name.startswith("chair")}
    by_hand, f = 0.0, np.zeros(6)
    for i in range(data.ncon):
        c = data.contact[i]
        if {c.geom1, c.geom2} & chair and {m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2]} & set(seat):
            mujoco.mj_contactForce(m, data, i, f)
            by_hand += f[0]
    weight = m.body_subtreemass[m.body(built.scene.character.bodies[0].name).id] * 9.81
    assert by_hand > 0 and posture.seat_share(data) == pytest.approx(by_hand / weight, rel=1e-9)
    assert posture.seat_share(data) > SEATED_LOAD_SHARE and posture.not_in_style("seated", data) is None
    data.qpos[2] += 0.03
    mujoco.mj_forward(m, data)
    assert posture.not_in_style("seated", data) == "resting 0% of its weight on a seat"
    built, standing, posture = _start("reach_hand_targets")
    assert posture.not_in_style("seated", standing) == "resting 0% of its weight on a seat"
    assert posture.not_in_style("lying", standing) == "torso 0° from upright"
    supine = mujoco.MjData(built.model)
    supine.qpos[:] = standing.qpos
    supine.qpos[2], supine.qpos[3:7] = 0.15, [np.cos(np.pi / 4), 0.0, -np.sin(np.pi / 4), 0.0]  # on its back
    mujoco.mj_kinematics(built.model, supine)
    assert posture.torso_tilt_deg(supine) == pytest.approx(90.0, abs=1.0) and LYING_TILT_DEG < 90.0
    assert posture.not_in_style("lying", supine) is None
    assert posture.not_in_style("reaching", supine) is None  # a style that asks nothing measurable


def _folded(model, qpos):
    """`qpos` with the right leg folded up by the seat: the thigh up to the chest, the shin folded under it."""
    folded = np.array(qpos, dtype=float)
    folded[model.jnt_qposadr[model.joint("hip_y_right").id]] = -2.4
    folded[model.jnt_qposadr[model.joint("knee_right").id]] = -2.6
    return folded


def _standing_pelvis(model, pelvis, feet):
    """The pelvis's height above the lower foot at rest (MuJoCo's kinematics of `qpos0`), computed here."""
    rest = _posed(model, model.qpos0)
    return rest.xpos[pelvis, 2] - min(rest.xpos[f, 2] for f in feet)


def _on_floor_z(model, foot, standing):
    """The highest a foot's origin is on the floor (the floor plane at z 0): as high above its lowest point as at
    rest (its capsules' lowest ends, by hand from MuJoCo's rest kinematics) plus FOOT_ON_FLOOR_SHARE of the
    standing pelvis height."""
    from solver.physics.posture import FOOT_ON_FLOOR_SHARE
    rest = _posed(model, model.qpos0)
    lowest = []
    for g in np.flatnonzero(model.geom_bodyid == foot):
        assert model.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE
        radius, half = model.geom_size[g][:2]
        lowest.append(rest.geom_xpos[g][2] - abs(rest.geom_xmat[g].reshape(3, 3)[2, 2]) * half - radius)
    return rest.xpos[foot, 2] - min(lowest) + FOOT_ON_FLOOR_SHARE * standing


def test_seated_means_the_feet_down_not_up_on_the_seat():
    """Sitting in the armchair (the settled start) both feet are far below the pelvis; the right leg folded
    up (hip and knee bent, the foot lifted by the seat as a character squatting on a bench has it) puts the
    right foot off the floor and within FEET_DOWN_SHARE of the standing pelvis height (above the feet, MuJoCo's
    rest kinematics computed here) of the pelvis, and the keyframe is not seated, the words saying which foot
    and how far below the pelvis it is (MuJoCo's kinematics of the pose). On an armchair 4 cm high the feet on
    the floor are nearer the pelvis than that share, and still down."""
    from solver.physics.posture import FEET_DOWN_SHARE
    built, data, posture = _start("armchair_stand_sit_stand")
    m = built.model
    mujoco.mj_step(m, data, nstep=60)
    pelvis = m.body(built.roles["pelvis"]).id
    feet = [m.body(built.roles[f]).id for f in ("foot_left", "foot_right")]
    standing = _standing_pelvis(m, pelvis, feet)
    assert posture.feet_down.drop == pytest.approx(FEET_DOWN_SHARE * standing, rel=1e-6)
    assert posture.feet_down.on_floor == pytest.approx({f: _on_floor_z(m, f, standing) for f in feet}, rel=1e-6)
    assert all(data.xpos[pelvis, 2] - data.xpos[f, 2] > posture.feet_down.drop for f in feet)
    assert posture.not_in_style("seated", data) is None
    folded = _posed(m, _folded(m, data.qpos))
    below = folded.xpos[pelvis, 2] - folded.xpos[feet[1], 2]
    assert below < posture.feet_down.drop and folded.xpos[feet[1], 2] > posture.feet_down.on_floor[feet[1]]
    assert posture.foot_up(folded) == f"foot_right up by the seat, {100 * below:.0f} cm below the pelvis"
    low = build_model(build_scene(SceneRef(environment="armchair", params={"height": 0.04})))
    lm = low.model
    seated = mujoco.MjData(lm)
    seated.qpos[:] = low.initial_qpos()
    mujoco.mj_step(lm, seated, nstep=60)
    pelvis, feet = lm.body("pelvis").id, [lm.body(f).id for f in ("foot_left", "foot_right")]
    assert all(seated.xpos[pelvis, 2] - seated.xpos[f, 2] < FEET_DOWN_SHARE * standing for f in feet)
    assert all(seated.xpos[f, 2] < _on_floor_z(lm, f, standing) for f in feet)
    low_posture = Posture(lm, low.roles, lm.body(low.scene.character.bodies[0].name).id)
    assert low_posture.foot_up(seated) is None and low_posture.not_in_style("seated", seated) is None


def test_a_foot_up_on_the_seat_where_the_clip_means_sitting_is_measured_and_said():
    """A clip of hand-made poses at 10 poses a second: seated 1 s, the right leg folded up by the seat 1 s,
    seated again 1 s, folded again 0.5 s — the last half second where no keyframe means sitting. `feet_up`
    counts the first fold only: 1.0 s from 1.0 s, the poses MuJoCo's kinematics put a foot off the floor and
    within FEET_DOWN_SHARE of the standing pelvis height of the pelvis (computed here); the words say it.
    Without `seated` the figure is absent; a fold of 0.3 s is measured but not said."""
    from solver.physics.posture import FEET_DOWN_SHARE
    from solver.physics.quality import motion_quality
    from solver.physics.verdict import quality_words
    built, data, _ = _start("armchair_stand_sit_stand")
    m = built.model
    mujoco.mj_step(m, data, nstep=60)
    folded = _folded(m, data.qpos)
    qpos = np.array([data.qpos] * 10 + [folded] * 10 + [data.qpos] * 10 + [folded] * 5)
    times = 0.1 * np.arange(len(qpos))
    seated = times < 3.0
    pelvis, foot = m.body("pelvis").id, m.body("foot_right").id
    standing = _standing_pelvis(m, pelvis, [m.body(f).id for f in ("foot_left", "foot_right")])
    line, floor = FEET_DOWN_SHARE * standing, _on_floor_z(m, foot, standing)
    up = [bool(d.xpos[pelvis, 2] - d.xpos[foot, 2] < line and d.xpos[foot, 2] > floor)
          for d in (_posed(m, q) for q in qpos)]
    assert up == [False] * 10 + [True] * 10 + [False] * 10 + [True] * 5
    bodies = built.character_bodies
    q = motion_quality(m, bodies, times, qpos, roles=built.roles, seated=seated)
    assert q["feet_up"] == {"s": pytest.approx(1.0), "from_s": pytest.approx(1.0)}
    assert "a foot up by the seat for 1.0 s (from 1.00 s)" in quality_words(q)
    assert "feet_up" not in motion_quality(m, bodies, times, qpos, roles=built.roles)
    short = np.array([data.qpos] * 5 + [folded] * 3 + [data.qpos] * 5)
    brief = motion_quality(m, bodies, times[:13], short, roles=built.roles, seated=np.ones(13, dtype=bool))
    assert brief["feet_up"]["s"] == pytest.approx(0.3) and not any("seat" in w for w in quality_words(brief))


def test_a_contact_keyframe_holds_its_seated_style_only_with_the_weight_on_the_seat():
    """The contact job's style check reads the keyframe's style: a seated keyframe with the character
    hovering 3 cm over the chair does not hold, and the tracker keeps why (its failure "for style" then
    says it); seated in it, it holds; a keyframe without a style always holds."""
    from types import SimpleNamespace

    from solver.mpc.jobs import ContactJob
    built, data, posture = _start("armchair_stand_sit_stand")
    mujoco.mj_step(built.model, data, nstep=60)
    seated = parse_keyframes([{"pairs": [PAIR], "style": "seated"}, {"pairs": [PAIR]}])
    agent = SimpleNamespace(tracker=KeyframeTracker(seated), posture=posture, data=data)
    assert ContactJob().holds_style(agent, 0) and agent.tracker.style_short is None
    data.qpos[2] += 0.03
    mujoco.mj_forward(built.model, data)
    assert not ContactJob().holds_style(agent, 0)
    assert agent.tracker.style_short == "resting 0% of its weight on a seat"
    assert ContactJob().holds_style(agent, 1)


def test_a_held_keyframe_keeps_its_hold_through_a_dip_in_its_style_shorter_than_the_grace():
    """A seat's contact force dips under its share for a step now and then: a seated keyframe being held
    keeps its hold through a loss shorter than STYLE_DIP_S, not through a longer one; one not yet held gets
    no grace, and the style coming back starts the grace afresh."""
    from types import SimpleNamespace

    from solver.mpc.jobs import ContactJob
    from solver.physics.posture import STYLE_DIP_S
    built, seated, posture = _start("armchair_stand_sit_stand")
    mujoco.mj_step(built.model, seated, nstep=60)
    hovering = mujoco.MjData(built.model)
    hovering.qpos[:] = seated.qpos
    hovering.qpos[2] += 0.03
    mujoco.mj_forward(built.model, hovering)
    agent = SimpleNamespace(tracker=KeyframeTracker(parse_keyframes([{"pairs": [PAIR], "style": "seated"}])),
                            posture=posture, data=seated)
    job = ContactJob()

    def at(t: float, data) -> bool:
        agent.data, data.time = data, t
        return job.holds_style(agent, 0)
    assert not at(1.0, hovering)  # not yet held: no grace
    agent.tracker.within_since = 1.0  # held from here
    assert at(1.1, seated)
    assert at(1.2, hovering) and at(1.2 + STYLE_DIP_S - 0.005, hovering)  # a dip shorter than the grace
    assert not at(1.2 + STYLE_DIP_S, hovering) and agent.tracker.style_short == "resting 0% of its weight on a seat"
    assert at(1.3, seated) and at(1.4, hovering)  # back on the seat: a new dip gets its own grace
