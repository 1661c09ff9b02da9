"""A fallen character gives up its keyframe: once the head has been below 0.5 m for
`give_up_fallen_s` where the keyframe asks the character to stay up, the keyframe fails ("fell") instead
of planning on to its time limit, so a retry from the last reached keyframe starts sooner; where
lying is asked for, or with 0, only the time limit ends it."""
import json
from pathlib import Path

import mujoco
import numpy as np
import pytest

from solver.formats.contact_keyframes import parse_keyframes
from solver.formats.task import task_from_dict
from solver.methods.contact import CONTACT, paired_touch
from solver.mpc.agent import run_agent
from solver.mpc.keyframe_tracker import CLOSING_S, PROGRESS_STEP, KeyframeTracker
from solver.mpc.stumble import FloorCatch
from solver.physics.posture import Posture
from solver.physics.quality import FALLEN_HEAD_HEIGHT, motion_quality
from solver.physics.rollout import RolloutEngine
from solver.physics.verdict import failure_words

ROOT = Path(__file__).resolve().parents[1]
PAIR = {"body1": "pelvis", "pos1": [0, 0, 0], "body2": "world", "pos2": [9, 0, 1]}


def _tracker(torso_up: float, com_feet: float = 0.0) -> KeyframeTracker:
    kf = parse_keyframes([{"pairs": [PAIR], "time_limit": 10.0,
                           "weights": {"Torso Up": torso_up, "COM Feet XY": com_feet}}])
    return KeyframeTracker(kf)


def test_the_keyframe_fails_after_the_head_stays_low_for_the_give_up_time():
    t = _tracker(torso_up=100.0)
    low, high = FALLEN_HEAD_HEIGHT - 0.1, FALLEN_HEAD_HEIGHT + 0.1
    for time, head in [(0.0, high), (0.5, high), (1.0, low), (1.5, low), (1.9, low)]:  # a stretch from 1.0 s
        t.watch_fall(time, head, give_up_s=1.0)
        assert not t.failed
    t.watch_fall(2.0, low, give_up_s=1.0)
    assert t.failed and t.failure == "fell" and t.done
    rising = _tracker(torso_up=100.0)  # the head low from the keyframe's start: getting up, not fallen
    for time in (0.0, 1.0, 2.0, 3.0):
        rising.watch_fall(time, low, give_up_s=1.0)
    assert not rising.failed
    rising.watch_fall(3.5, high, give_up_s=1.0)
    rising.watch_fall(4.0, low, give_up_s=1.0)
    rising.watch_fall(5.0, low, give_up_s=1.0)
    assert rising.failed and rising.failure == "fell"  # down again after having been up
    bobbing = _tracker(torso_up=100.0)  # lying on a bed, the head about the line: not risen, not fallen
    for time, head in ((0.0, low), (0.5, FALLEN_HEAD_HEIGHT + 0.03), (1.0, low), (2.5, low)):
        bobbing.watch_fall(time, head, give_up_s=1.0)
    assert not bobbing.failed
    lying = _tracker(torso_up=0.0)  # the keyframe asks for no upright torso nor balance: lying is meant
    never = _tracker(torso_up=100.0)
    reaching = _tracker(torso_up=0.0, com_feet=100.0)  # bent down to a box, balance asked for: a fall is one
    for time, head in ((0.0, high), (5.0, low), (9.0, low)):
        lying.watch_fall(time, head, give_up_s=1.0)
        never.watch_fall(time, head, give_up_s=0.0)
        reaching.watch_fall(time, head, give_up_s=1.0)
    assert not lying.failed and not never.failed and reaching.failed
    seated_low = _tracker(torso_up=100.0)  # on a floor-level stool the head sits at the line, the torso up
    for time, head in ((0.0, high), (1.0, low), (5.0, low)):
        seated_low.watch_fall(time, head, give_up_s=1.0, lying=False)
    assert not seated_low.failed
    seated_low.watch_fall(5.5, low, give_up_s=1.0, lying=True)  # lies back: the give-up time counts from here
    assert not seated_low.failed
    seated_low.watch_fall(6.5, low, give_up_s=1.0, lying=True)
    assert seated_low.failed and seated_low.failure == "fell"


def _falling_reach(give_up: float):
    """The reach's first keyframe planned by two noise-free rollouts: the planner cannot balance and the
    character goes down within ~1.5 s. Its prepared task and its run."""
    doc = json.loads((ROOT / "scenes/tasks/reach_hand_targets.json").read_text())
    doc["settings"] = {"rollouts": 2, "budget": 1, "exploration": 0.0, "planner": "baseline",
                       "give_up_fallen_s": give_up, "overtime": 0.0}
    doc["keyframes"] = doc["keyframes"][:1]
    doc["keyframes"][0]["time_limit"] = 4.0
    prep = CONTACT.prepare(task_from_dict(doc))
    with RolloutEngine(prep.plan.model, 1) as engine:
        return prep, run_agent(prep.built, prep.plan, prep.keyframes, prep.settings, 0, engine)


@pytest.mark.parametrize("give_up", [1.0, 0.0])
def test_a_standing_character_that_goes_down_gives_up_at_its_first_catch(give_up):
    """Going down, the character catches itself on a hand before its head is low: the keyframe fails there
    ("stumbled", naming the body), where the finished clip's own `stumble` — MuJoCo's collision of the
    recorded poses, computed apart — marks it, long before the time limit. With 0, neither a fall nor a
    stumble ends it: only the time limit."""
    prep, run = _falling_reach(give_up)
    assert not run.success and run.failed_keyframe == 0
    if give_up:
        quality = motion_quality(prep.built.model, prep.built.character_bodies, run.times, run.qpos,
                                 np.zeros(len(run.times), dtype=bool), segment=run.keyframe_index,
                                 roles=prep.built.roles, expected_touch=paired_touch(prep, run.keyframe_index))
        stumble = quality["stumble"]
        assert run.failure == "stumbled" and run.times[-1] < 3.0
        assert stumble is not None and stumble["body"] not in ("foot_left", "foot_right")
        assert run.failure_detail == f"{stumble['body']} on the floor at {stumble['time_s']:.2f} s"
        assert run.times[-1] == pytest.approx(stumble["time_s"] + prep.built.model.opt.timestep)
    else:
        assert run.failure == "time limit" and run.times[-1] == pytest.approx(4.0, abs=0.02)


def test_a_body_the_keyframe_puts_on_the_floor_is_no_catch():
    """The pose where the falling reach first catches itself (on both hands): a catch while the reach is
    active; none once a keyframe pairs those hands — or the forearms they hang from — with points on the floor;
    still one where the pairs' points are in the air (a target reached down to is no licence to land)."""
    prep, run = _falling_reach(1.0)
    model, bodies = prep.built.model, prep.built.character_bodies
    data = mujoco.MjData(model)
    data.qpos[:] = run.qpos[-2]  # the last pose the run recorded before the step whose contacts caught it
    mujoco.mj_forward(model, data)
    floor = model.geom("floor").id
    touching = {model.body(int(model.geom_bodyid[g])).name for g1, g2 in data.contact.geom for g in (g1, g2)
                if floor in (g1, g2) and g != floor} - {"foot_left", "foot_right"}
    body = run.failure_detail.split(" ")[0]
    assert body in touching and touching <= {"hand_left", "hand_right"}
    catch = FloorCatch(model, bodies, prep.built.roles)

    def keyframe(on: list[str], z: float):
        pairs = [{"body1": b, "pos1": [0, 0, 0], "body2": "world", "pos2": [0.3, 0.0, z]} for b in on]
        return parse_keyframes([{"pairs": pairs, "weights": {"Torso Up": 10}}])[0]

    forearms = [model.body(int(model.body_parentid[model.body(b).id])).name for b in touching]
    assert catch.body(data, prep.keyframes[0]) in touching
    assert catch.body(data, keyframe(sorted(touching), 0.05)) is None
    assert catch.body(data, keyframe(forearms, 0.1)) is None
    assert catch.body(data, keyframe(sorted(touching), 0.8)) in touching
    tracker = KeyframeTracker([keyframe([body], 0.8)])
    tracker.watch_stumble(1.0, body)
    assert not tracker.failed  # the head has not risen in this keyframe: getting up, not a stumble
    tracker.head_was_up = True
    tracker.watch_stumble(1.0, None)
    assert not tracker.failed
    tracker.watch_stumble(1.25, body)
    assert tracker.failed and tracker.failure == "stumbled" and tracker.stumbled_on == f"{body} on the floor at 1.25 s"
    lying = KeyframeTracker(parse_keyframes([{"pairs": [PAIR], "weights": {"Torso Up": 0}}]))
    lying.head_was_up = True
    lying.watch_stumble(1.0, body)
    assert not lying.failed  # a keyframe that asks for no upright torso nor balance: lying is meant


def test_a_keyframe_stalls_after_going_the_give_up_time_without_coming_closer():
    """Hand-computed on the tracker (tolerance 0.1 m, so progress is 1 cm closer than at the last
    progress): creeping closer 4 mm per step is progress every third step; no closer for 1 s fails
    ("stalled"); within the tolerance, sustaining, is never a stall; 0 turns it off."""
    t = KeyframeTracker(parse_keyframes([{"pairs": [PAIR], "tolerance": 0.1, "sustain": 5.0, "time_limit": 10.0}]))
    for i in range(30):  # 1.0 m → 0.884 m, 4 mm per 0.1 s
        t.watch_stall(0.1 * i, 1.0 - 0.004 * i, give_up_s=1.0)
    assert not t.failed and t.progress_mark == pytest.approx(1.0 - 0.004 * 27)
    since = t.progress_since
    for time in (since + 0.5, since + 0.99):
        t.watch_stall(time, 0.9, give_up_s=1.0)
        assert not t.failed
    t.watch_stall(since + 1.0, 0.9, give_up_s=1.0)
    assert t.failed and t.failure == "stalled" and t.done
    held = KeyframeTracker(parse_keyframes([{"pairs": [PAIR], "tolerance": 0.1, "sustain": 5.0}]))
    off = KeyframeTracker(parse_keyframes([{"pairs": [PAIR], "tolerance": 0.1}]))
    for i in range(40):
        held.watch_stall(0.1 * i, 0.05, give_up_s=1.0)
        off.watch_stall(0.1 * i, 0.9, give_up_s=0.0)
    assert not held.failed and not off.failed


def test_a_character_that_cannot_come_closer_gives_up_at_the_stall_time():
    """A pelvis asked 10 m up cannot come closer: with `give_up_stalled_s` 0.5 its keyframe fails
    "stalled" half a second in, long before it would fall or run out of time."""
    doc = json.loads((ROOT / "scenes/tasks/reach_hand_targets.json").read_text())
    doc["settings"] = {"rollouts": 2, "budget": 1, "exploration": 0.0, "planner": "baseline",
                       "give_up_stalled_s": 0.5}
    doc["keyframes"] = doc["keyframes"][:1]
    doc["keyframes"][0].update(time_limit=4.0, pairs=[dict(PAIR, pos2=[0, 0, 10])])
    prep = CONTACT.prepare(task_from_dict(doc))
    with RolloutEngine(prep.plan.model, 1) as engine:
        run = run_agent(prep.built, prep.plan, prep.keyframes, prep.settings, 0, engine)
    assert not run.success and run.failed_keyframe == 0 and run.failure == "stalled"
    assert 0.5 <= run.times[-1] <= 0.5 + 0.015  # watched once per control step, from the keyframe's start


def test_a_keyframe_met_but_not_in_its_style_gives_up_once_its_style_stops_coming_closer():
    """A seated keyframe whose pair (the pelvis where it stands) is met from the start, the character standing
    away from any seat: its style never comes closer, so with `give_up_style_s` 0.5 it fails "style" half a
    second after its style was first found short (at its first control step: the grace of a dip is for a
    keyframe being held), watched once per control step; with 0 it runs on."""
    doc = json.loads((ROOT / "scenes/tasks/reach_hand_targets.json").read_text())
    doc["keyframes"] = doc["keyframes"][:1]
    doc["keyframes"][0].update(time_limit=2.0, style="seated", tolerance=0.5,
                               pairs=[dict(PAIR, pos2=[0, 0, 0.95])])
    runs = {}
    for give_up in (0.5, 0.0):
        doc["settings"] = {"rollouts": 2, "budget": 1, "exploration": 0.0, "planner": "baseline", "overtime": 0.0,
                           "give_up_fallen_s": 0.0, "give_up_style_s": give_up}
        prep = CONTACT.prepare(task_from_dict(doc))
        with RolloutEngine(prep.plan.model, 1) as engine:
            runs[give_up] = run_agent(prep.built, prep.plan, prep.keyframes, prep.settings, 0, engine)
    run, control_dt = runs[0.5], float(np.diff(runs[0.5].control_times[:2])[0])
    assert not run.success and run.failure == "style" and run.failure_detail == "resting 0% of its weight on a seat"
    assert 0.5 < run.times[-1] <= 0.5 + 2 * control_dt
    assert runs[0.0].times[-1] > 1.0


def _run_tracker(distance, overtime: float, time_limit: float = 2.0, held: bool = True) -> tuple[str, float]:
    """Control steps of 0.1 s as the agent takes them (the tracker's update, then progress noted) at
    `distance(i)` until the keyframe is reached or fails: what happened and when. `held` False: within
    the tolerance is not yet met (a box hovering over its shelf), so the update sees no distance."""
    kf = parse_keyframes([{"pairs": [PAIR], "tolerance": 0.1, "sustain": 0.2, "time_limit": time_limit}])
    t = KeyframeTracker(kf, overtime=overtime)
    for i in range(100):
        time = round(0.1 * i, 10)
        t.update(time, distance(i) if held or distance(i) > 0.1 else np.inf)
        t.watch_stall(time, distance(i), give_up_s=0.0, held=held)
        if t.done:
            return ("reached", t.reached[0]) if not t.failed else (t.failure, time)
    return "running", time


def test_a_keyframe_still_closing_in_at_its_time_limit_runs_on_within_its_overtime():
    """Hand-computed (tolerance 0.1 m, so progress is 1 cm closer than at the last progress; time limit
    2 s; closing in: progress within the last 2 s). 2 cm closer every 0.1 s from 0.8 m is still closing
    in at 2 s: with `overtime` 1 it runs on, within the tolerance from 3.5 s, reached at 3.7 s (0.2 s
    sustained); with 0 it fails at its limit. One that came 2 cm closer at once and no closer since
    fails at its first step past the limit (its last progress 2 s before); one that never comes closer
    is not closing in for having started (a 1 s limit, inside the 2 s window); one creeping 1 cm every
    0.5 s closes in all along and fails at twice its limit, the cap."""
    closer = lambda i: 0.8 - 0.02 * i  # noqa: E731
    assert _run_tracker(closer, overtime=1.0) == ("reached", pytest.approx(3.7))
    assert _run_tracker(closer, overtime=0.0) == ("time limit", pytest.approx(2.1))
    assert _run_tracker(lambda i: 0.8 - 0.02 * min(i, 1), overtime=1.0) == ("time limit", pytest.approx(2.1))
    assert _run_tracker(lambda i: 0.8, overtime=1.0, time_limit=1.0) == ("time limit", pytest.approx(1.1))
    assert _run_tracker(lambda i: 0.8 - 0.002 * i, overtime=1.0) == ("time limit", pytest.approx(4.1))
    assert _run_tracker(lambda i: 0.8 - 0.002 * i, overtime=0.5) == ("time limit", pytest.approx(3.1))
    # Within the tolerance but not met (a box hovering over its shelf) from 0.4 s on: no progress since,
    # so no longer closing in from 2.4 s (counted as progress, it would run on to the cap, 4.1 s).
    hover = lambda i: max(0.05, 0.8 - 0.2 * i)  # noqa: E731
    assert _run_tracker(hover, overtime=1.0, held=False) == ("time limit", pytest.approx(2.4))
    assert _run_tracker(hover, overtime=1.0) == ("reached", pytest.approx(0.6))


def test_a_real_reach_still_closing_at_its_time_limit_runs_on_the_same_motion():
    """A hand reaching for its target, 0.47 m off at the start, has closed to about 0.13 m by its
    0.6 s limit and is still closing in: with `overtime` 0 it fails there; with 1 the same motion
    (the same seed, step for step to the limit) runs on and fails "time limit" only at twice the
    limit, the cap — its last progress then within the closing window."""
    runs = {}
    for overtime in (0.0, 1.0):
        doc = json.loads((ROOT / "scenes/tasks/reach_hand_targets.json").read_text())
        doc["settings"] = {"rollouts": 16, "budget": 1, "overtime": overtime}
        doc["keyframes"] = doc["keyframes"][:1]
        doc["keyframes"][0]["time_limit"] = 0.6
        prep = CONTACT.prepare(task_from_dict(doc))
        with RolloutEngine(prep.plan.model, 1) as engine:
            runs[overtime] = run_agent(prep.built, prep.plan, prep.keyframes, prep.settings, 0, engine)
    final, over = runs[0.0], runs[1.0]
    assert final.failure == over.failure == "time limit" and not over.success
    assert final.times[-1] == pytest.approx(0.6, abs=0.01) and over.times[-1] == pytest.approx(1.2, abs=0.01)
    n = len(final.times)
    np.testing.assert_array_equal(over.qpos[:n], final.qpos)
    at_limit = over.distance[n - 1]
    window = (over.times > over.times[n - 1] - CLOSING_S) & (over.times <= over.times[n - 1])
    assert over.distance[window].max() - at_limit >= PROGRESS_STEP * prep.keyframes[0].tolerance  # closing
    assert over.distance.min() < at_limit  # and it came closer in its overtime


def test_the_last_keyframe_counts_only_once_the_character_has_steadied():
    """Held within its tolerance for its sustain, the last upright keyframe counts only once the centre of
    mass is no longer crossing the floor at TOPPLING_SPEED or faster (MuJoCo's subtree velocity of the
    character's root): its sustain is not started over, it waits; and with the character steady it counts."""
    from types import SimpleNamespace

    from solver.mpc.jobs import TOPPLING_SPEED, ContactJob
    from solver.physics.model import build_model
    t = _tracker(torso_up=1.0)
    sustain = t.current.sustain
    t.update(0.0, 0.0)
    t.update(sustain, 0.0, steady=lambda: False)
    t.update(sustain + 0.2, 0.0, steady=lambda: False)
    assert t.reached == [None]
    t.update(sustain + 0.3, 0.0, steady=lambda: True)
    assert t.reached == [pytest.approx(sustain + 0.3)]
    task = task_from_dict({"schema_version": 1, "name": "t", "method": "contact", "keyframes": [
        {"pairs": [PAIR]}]})
    from solver.formats.task import build_scene
    built = build_model(build_scene(task.scene))
    data = mujoco.MjData(built.model)
    root = built.model.body("torso").id
    agent = SimpleNamespace(m=built.model, data=data, tracker=_tracker(torso_up=1.0), root_body=root,
                            posture=Posture(built.model, built.roles, root))
    agent.tracker.update(0.0, 0.0)
    for speed, steady in ((TOPPLING_SPEED + 0.1, False), (TOPPLING_SPEED - 0.1, False)):
        data.qvel[:] = 0.0
        data.qvel[1] = speed  # the root sliding sideways: every body with it
        data.time = sustain + 0.1
        mujoco.mj_forward(built.model, data)
        assert ContactJob().steady(agent, 0) is steady  # toppling, then not yet at rest
    from solver.physics.posture import SETTLE_HOLD_S
    data.qvel[:] = 0.0
    for time, steady in ((sustain + 0.2, False), (sustain + 0.2 + SETTLE_HOLD_S, True)):  # at rest, and stays
        data.time = time
        mujoco.mj_forward(built.model, data)
        ContactJob().watch_rest(agent)
        assert ContactJob().steady(agent, 0) is steady


def test_the_last_keyframe_ends_the_clip_at_rest():
    """The last keyframe counts once the root has stayed slower than SETTLED_SPEED for SETTLE_HOLD_S (the
    clip includes its settle); a root passing through slow at a sway's turn does not count; a character
    still moving SETTLE_LIMIT_S after the sustain ends the clip anyway (its end speed is in the quality)."""
    from solver.mpc.jobs import note_rest, settled
    from solver.physics.posture import SETTLE_HOLD_S, SETTLE_LIMIT_S, SETTLED_SPEED
    t = _tracker(torso_up=1.0)
    t.update(0.0, 0.0)
    end = t.current.sustain
    slow, fast = SETTLED_SPEED / 2, SETTLED_SPEED * 2

    def at(tracker, time, speed):
        note_rest(tracker, time, speed)
        return settled(tracker, time)

    assert not at(t, end, slow)
    assert not at(t, end + SETTLE_HOLD_S / 2, slow)
    assert not at(t, end + SETTLE_HOLD_S * 0.9, fast)  # a sway: the stretch at rest starts over
    assert not at(t, end + SETTLE_HOLD_S, slow)
    assert at(t, end + 2 * SETTLE_HOLD_S, slow)
    still = _tracker(torso_up=1.0)  # at rest all through its sustain: it counts at the sustain's end
    still.update(0.0, 0.0)
    note_rest(still, 0.0, slow)
    assert settled(still, end)
    moving = _tracker(torso_up=1.0)
    moving.update(0.0, 0.0)
    assert not at(moving, end + SETTLE_LIMIT_S - 0.01, fast)
    assert at(moving, end + SETTLE_LIMIT_S, fast)


def test_a_solution_that_stopped_at_a_keyframe_says_why_first():
    """The solution's words (its row in Blender, `bench mpc`'s per seed) lead with why the solve stopped: the
    falling reach with no retry caught itself, and its quality's words name the body; a style that did not
    hold says what of it."""
    doc = json.loads((ROOT / "scenes/tasks/reach_hand_targets.json").read_text())
    doc["settings"] = {"rollouts": 2, "budget": 1, "exploration": 0.0, "planner": "baseline", "overtime": 0.0,
                       "segment_retries": 0, "backups": 0}
    doc["keyframes"] = doc["keyframes"][:1]
    doc["keyframes"][0]["time_limit"] = 4.0
    prep = CONTACT.prepare(task_from_dict(doc))
    with RolloutEngine(prep.plan.model, 1) as engine:
        sol = CONTACT.solve(prep, 0, engine)
    name = doc["keyframes"][0]["name"]
    assert not sol.success and sol.summary["failure"] == "stumbled"
    assert sol.summary["words"][0] == f"'{name}' not reached: caught itself on the floor"
    stumble = sol.summary["quality"]["stumble"]
    assert f"stumbles at {stumble['time_s']:.2f} s ({stumble['body']} on the floor)" in sol.summary["words"]
    assert failure_words("stand", "style", "head at 81% of its standing height") == \
        "'stand' met, but not in its style (head at 81% of its standing height)"
    assert failure_words("stand", None) is None
