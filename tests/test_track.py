"""The track method: sampling MPC makes a reference motion physical.

A reference that is itself a simulation is reproduced; one that teleports is flagged where it jumps
and missed there; each keyframe gets its verdict; the objective matches a hand computation; a run
resumed from a checkpoint is the uninterrupted run; bad references exit 2 naming the field."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from solver.core.errors import InvalidInput
from solver.formats.task import task_from_dict
from solver.methods import get_method
from solver.mpc.agent import Agent
from solver.mpc.objectives.contact import CONTROL_P, smooth_abs
from solver.mpc.objectives.tracking import TrackingObjective
from solver.physics.features import Features
from solver.physics.rollout import RolloutEngine, Trajectories, get_state
from solver.run.cli import prepare_task

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def fall():
    """A passive 1.5 s simulation of the humanoid standing limp: a motion physics can certainly do."""
    _, prep = prepare_task(task_from_dict({"schema_version": 1, "name": "fall", "method": "simulate",
                                           "settings": {"duration": 1.5, "perturb": 0.0}}))
    with RolloutEngine(prep.engine_model(), 1) as engine:
        sol = get_method("simulate").solve(prep, 0, engine)
    return sol.times, sol.qpos


# Where the verdicts are checked, not how closely the tracking follows: a small planning budget.
QUICK = {"rollouts": 20, "max_iterations": 3}


def _track(times, qpos, keyframes=(), **settings):
    task = task_from_dict({"schema_version": 1, "name": "track", "method": "track", "keyframes": list(keyframes),
                           "reference": {"times": np.asarray(times).tolist(), "qpos": np.asarray(qpos).tolist()},
                           "settings": settings})
    _, prep = prepare_task(task)
    return prep


def _solve(prep, seed=0):
    with RolloutEngine(prep.engine_model(), 2) as engine:
        return get_method("track").solve(prep, seed, engine)


def _objective(plan, reference, prep):
    """The tracking objective of `prep`'s keyframes and settings against `reference`."""
    return TrackingObjective(plan, reference, prep.keyframes, prep.settings.terms, prep.settings.keyframes.key_window)


def test_tracking_a_simulated_motion_reproduces_it(fall):
    times, qpos = fall
    sol = _solve(_track(times, qpos))
    err = sol.summary["tracking"]
    assert sol.success and all(v["verdict"] == "reached" for v in sol.summary["keyframes"])
    assert abs(sol.times[-1] - times[-1]) < 0.02  # as long as the reference
    assert err["mean_root_m"] < 0.02 and err["max_root_m"] < 0.1, err  # over a 1.5 s fall to the floor
    assert err["mean_joint_rad"] < 0.06 and err["max_joint_rad"] < 0.2, err
    assert sol.summary["teleports"] == [] and sol.summary["departs"] is None
    assert sol.summary["quality"]["fall_s"] < 0.05  # the reference lies on the floor too: followed, not fallen
    # the per-pose errors recorded agree with a direct comparison at the reference's own samples
    ours = np.interp(times[::20], sol.times, sol.qpos[:, 0])
    assert np.max(np.abs(ours - qpos[::20, 0])) < 0.1


def test_a_tracked_motion_falls_where_its_head_is_down_and_the_references_is_not(fall):
    """`fall_s` of a tracked motion: the time its head is below FALLEN_HEAD_HEIGHT while the
    reference's is not. A motion that drops 0.3 s ahead of the reference has fallen for those 0.3 s
    (the two heads' crossing times, from MuJoCo forward kinematics); the reference itself, none."""
    from benchmarks.hits import head_heights
    from solver.methods.track import lying_in_reference
    from solver.physics.quality import FALLEN_HEAD_HEIGHT, motion_quality
    times, qpos = fall
    prep = _track(times, qpos)
    model, bodies = prep.built.model, prep.built.character_bodies
    ahead = qpos[np.minimum(np.searchsorted(times, times + 0.3), len(times) - 1)]
    heads = head_heights(model, qpos)
    assert heads[0] > 1.0 and heads[-1] < 0.3  # stands, then lies
    crossing = [float(times[np.argmax(h < FALLEN_HEAD_HEIGHT)]) for h in (heads, head_heights(model, ahead))]
    assert crossing[0] - crossing[1] == pytest.approx(0.3, abs=0.01)

    def fall_s(q):
        return motion_quality(model, bodies, times, q, lying_in_reference(prep.reference, times, prep.built.roles),
                              segment=np.zeros(len(times), dtype=int))["fall_s"]
    assert fall_s(qpos) == 0.0
    assert fall_s(ahead) == pytest.approx(crossing[0] - crossing[1], abs=0.005)


def test_a_reference_that_teleports_is_flagged_and_missed_there(fall):
    times, qpos = fall
    jumped = qpos.copy()
    cut = int(np.searchsorted(times, 0.75))
    jumped[cut:, 0] += 1.0  # the root jumps 1 m along x at 0.75 s
    prep = _track(times, jumped, key_every=0.5, **QUICK)
    sol = _solve(prep)
    assert [round(t["time"], 3) for t in sol.summary["teleports"]] == [round(float(times[cut]), 3)]
    assert "moves 1.00 m" in sol.summary["teleports"][0]["what"]
    verdicts = sol.summary["keyframes"]
    assert [v["verdict"] for v in verdicts] == ["reached", "not reached", "not tried"]
    assert verdicts[1]["name"] == "t=1s" and "falls short by" in verdicts[1]["why"]
    short = float(verdicts[1]["why"].split("falls short by ")[1].split(" m")[0])
    assert 0.5 < short < 1.1  # about the jump (the 0.6 s horizon sees it coming: the body leans towards it)
    assert not sol.success and sol.summary["departs"] == verdicts[1]["why"]


def test_each_sketch_keyframe_gets_its_verdict(fall):
    """A sketch of three poses: the reference's own pose at 0.5 s (reachable), a pose 0.6 m above
    the reference at 1.0 s (no limp body gets there), and one after it."""
    times, qpos = fall
    hinges = _hinge_names()

    def pose(t, lift=0.0, name="k"):
        q = qpos[int(np.argmin(np.abs(times - t)))]
        return {"name": name, "time": t, "root_pos": [float(q[0]), float(q[1]), float(q[2]) + lift],
                "root_quat": [float(v) for v in q[3:7]],
                "joints": {n: float(v) for n, v in zip(hinges, q[7:7 + len(hinges)])}}
    keys = [pose(0.0, name="start"), pose(0.5, name="halfway"), pose(1.0, 0.6, name="up high"),
            pose(1.5, name="end")]
    sol = _solve(_track(times, qpos, keys, **QUICK))
    verdicts = {v["name"]: v for v in sol.summary["keyframes"]}
    assert list(verdicts) == ["halfway", "up high", "end"]
    assert verdicts["halfway"]["verdict"] == "reached" and verdicts["halfway"]["distance"] < 1.0
    assert verdicts["up high"]["verdict"] == "not reached"
    assert "cannot reach keyframe 'up high': falls short by" in verdicts["up high"]["why"]
    assert verdicts["end"]["verdict"] == "not tried"
    assert verdicts["end"]["why"] == "the motion stops at keyframe 'up high'"


def _hinge_names():
    from solver.builders import characters
    return [j.name for b in characters.humanoid("default").bodies for j in b.joints if j.type == "hinge"]


@pytest.mark.parametrize("actuation", ["position", "motor"])
def test_the_objective_matches_a_hand_computation(fall, actuation):
    """One state, off the reference by known amounts, scored by hand term by term: the control term is
    the PD targets' offset from the reference's angles (½ square) or the torque's cosh norm."""
    import mujoco
    times, qpos = fall
    prep = _track(times, qpos, w_joint=1.0, w_body=0.0, w_root_pos=10.0, w_root_rot=0.0, w_joint_vel=0.0,
                  w_root_vel=0.0, w_control=2.0, w_contact=0.0, w_com=0.0, w_com_vel=0.0, key_boost=0.0,
                  actuation=actuation)
    plan = prep.plan
    obj = _objective(plan, prep.reference, prep)
    m = plan.model
    data = mujoco.MjData(m)
    row = 40
    data.qpos[:] = prep.reference.qpos[row]
    data.qpos[0] += 0.3  # root 0.3 m off in x
    knee = m.joint("knee_right")
    data.qpos[m.jnt_qposadr[knee.id]] += 0.2  # one knee 0.2 rad off
    data.time = row * prep.reference.dt
    mujoco.mj_forward(m, data)
    state = get_state(m, data)
    feat = Features(plan, Trajectories(state[None, None], data.sensordata.copy()[None, None]), aligned=True)
    ctrl = np.zeros((1, 1, m.nu))
    if actuation == "position":  # every servo at the reference's angle, the right knee's 0.25 rad past it
        joints = m.actuator_trnid[:plan.nu_character, 0]
        ctrl[0, 0, :plan.nu_character] = prep.reference.qpos[row, m.jnt_qposadr[joints]]
        a = int(np.flatnonzero(joints == knee.id)[0])
        ctrl[0, 0, a] += 0.25
        control = 0.5 * 0.25 ** 2
    else:
        ctrl[0, 0, 0] = 0.5
        control = CONTROL_P ** 2 * (np.cosh(0.5 / CONTROL_P) - 1)
    costs = obj.evaluate(feat.as_dict(obj.bodies_for(None)), feat.qvel, ctrl, None)
    hand = 1.0 * smooth_abs(0.2) + 10.0 * smooth_abs(0.3) + 2.0 * control
    assert costs.total[0] == pytest.approx(hand, rel=1e-9)


def test_near_a_keyframe_the_boost_pulls_towards_the_keyframes_own_pose(fall):
    """A keyframe that the reference only passes beside (as an assisted motion passes near its
    sketch's keys): at its time, the reference's pose pays the boost on its distance from the keyframe,
    and the keyframe's pose pays the plain term on its distance from the reference, the body positions
    compared by MuJoCo forward kinematics of each pose."""
    import mujoco
    times, qpos = fall
    row = 40
    hinges = _hinge_names()
    weights = dict(w_joint=1.0, w_body=0.5, w_root_pos=10.0, w_root_rot=0.0, w_joint_vel=0.0, w_root_vel=0.0,
                   w_control=0.0, w_contact=0.0, w_com=0.0, w_com_vel=0.0, key_boost=2.0,
                   stand_ins=False)  # the one keyframe's bump alone (a stand-in at 1 s would add its tail)
    start = {"name": "start", "time": 0.0, "root_pos": [float(v) for v in qpos[0, :3]],
             "root_quat": [float(v) for v in qpos[0, 3:7]], "joints": {}}
    bare = _track(times, qpos, **weights)  # the reference and model do not depend on the keyframes
    m = bare.plan.model
    adr = np.array([m.jnt_qposadr[m.joint(n).id] for n in hinges])
    t_key = row * bare.reference.dt
    ref_row = bare.reference.qpos[row]
    key = {"name": "beside", "time": t_key, "root_pos": [float(ref_row[0]), float(ref_row[1]), float(ref_row[2]) + 0.2],
           "root_quat": [float(v) for v in ref_row[3:7]],
           "joints": {n: float(v) for n, v in zip(hinges, ref_row[adr])}}
    key["joints"]["knee_right"] -= 0.3
    prep = _track(times, qpos, [start, key], **weights)
    assert prep.keyframes[0].name == "beside" and prep.keyframes[0].time == pytest.approx(t_key)
    plan = prep.plan
    obj = _objective(plan, prep.reference, prep)
    data = mujoco.MjData(m)
    bodies = obj.tracked_bodies

    def scored(q):
        data.qpos[:] = q
        data.qvel[:] = 0.0
        data.time = t_key
        mujoco.mj_forward(m, data)
        feat = Features(plan, Trajectories(get_state(m, data)[None, None], data.sensordata.copy()[None, None]),
                        aligned=True)
        ctrl = np.zeros((1, 1, m.nu))
        return obj.evaluate(feat.as_dict(obj.bodies_for(None)), np.zeros((1, 1, m.nv)), ctrl, None).total[0]

    def body_positions(q):
        data.qpos[:] = q
        mujoco.mj_kinematics(m, data)
        return np.array([data.xpos[m.body(b).id] for b in bodies])

    on_key = ref_row.copy()  # the keyframe's pose (the fall's few joints past their limits clamped)
    on_key[:7] = prep.keyframes[0].qpos[:7]
    on_key[adr] = prep.keyframes[0].qpos[7:]
    knee = m.jnt_qposadr[m.joint("knee_right").id]
    assert on_key[knee] - ref_row[knee] == pytest.approx(-0.3) and on_key[2] - ref_row[2] == pytest.approx(0.2)
    apart = float(np.sum(smooth_abs(on_key[adr] - ref_row[adr]))) + 10.0 * smooth_abs(0.2) \
        + 0.5 * float(np.sum(smooth_abs(np.linalg.norm(body_positions(on_key) - body_positions(ref_row), axis=1))))
    boost = 2.0 * np.exp(0.0)  # key_boost × the keyframe's weight × its bump, at its own time
    assert scored(ref_row) == pytest.approx(boost * apart, rel=1e-6)
    assert scored(on_key) == pytest.approx(apart, rel=1e-6)
    # a keyframe the reference passes through leaves the reference as it is
    through = dict(key, root_pos=[float(v) for v in ref_row[:3]],
                   joints={n: float(np.clip(v, *m.jnt_range[m.joint(n).id])) for n, v in zip(hinges, ref_row[adr])})
    prep = _track(times, qpos, [start, through], key_boost=2.0)
    assert np.array_equal(_objective(plan, prep.reference, prep).key_qpos,
                          prep.reference.qpos)


def test_the_reference_knows_which_bodies_are_planted_on_the_scene(fall):
    """Touching, per body and pose, against MuJoCo's own geom distances to the floor (a separate
    function from the collision pass the reference uses): within 2 cm is touching; planted is
    touching and slower than 0.1 m/s."""
    import mujoco

    from solver.physics.reference import PLANTED_SPEED, touching_scene
    times, qpos = fall
    prep = _track(times, qpos)
    ref, m = prep.reference, prep.plan.model
    bodies = list(prep.plan.character_bodies)
    touching = touching_scene(m, bodies, ref.qpos)
    data = mujoco.MjData(m)
    floor = [g for g in range(m.ngeom) if m.geom_bodyid[g] == 0]
    checked = 0
    for row in range(0, len(ref.qpos), 15):
        data.qpos[:] = ref.qpos[row]
        mujoco.mj_kinematics(m, data)
        for body in bodies:
            geoms = [g for g in range(m.ngeom) if m.geom_bodyid[g] == m.body(body).id]
            gap = min(mujoco.mj_geomDistance(m, data, g, f, 1.0, None) for g in geoms for f in floor)
            if abs(gap - 0.02) > 1e-3:  # clear of the threshold's edge
                assert touching[body][row] == (gap <= 0.02), (body, row, gap)
                checked += 1
    assert checked > 100
    assert touching["foot_right"][0] and touching["foot_left"][0] and not touching["head"][0]
    assert touching["head"][-1] or touching["torso"][-1]  # limp on the floor at the end
    n = int(round(times[-1] / ref.dt)) + 1
    for body in bodies:
        speed = np.linalg.norm(np.gradient(ref.xpos[body][:n], ref.dt, axis=0), axis=1)
        assert np.array_equal(ref.planted[body][:n], touching[body][:n] & (speed < PLANTED_SPEED)), body
    assert ref.planted["foot_right"][0] and not ref.planted["head"][0]


def test_the_balance_and_contact_terms_match_a_hand_computation(fall):
    """The whole standing body 0.3 m off the reference along x, at rest where the reference moves:
    the contact term is w_contact × smooth-abs(0.3) for each body the reference plants on the floor, the
    centre-of-mass term w_com × smooth-abs(0.3, p = 0.02), its velocity term ½ w_com_vel |v_ref|²
    (the reference's centre of mass velocity, a finite difference of MuJoCo's subtree centres)."""
    import mujoco

    from solver.mpc.objectives.tracking import COM_P
    times, qpos = fall
    prep = _track(times, qpos, w_joint=0.0, w_body=0.0, w_root_pos=0.0, w_root_rot=0.0, w_joint_vel=0.0,
                  w_root_vel=0.0, w_control=0.0, w_contact=3.0, w_com=7.0, w_com_vel=0.4, key_boost=0.0,
                  com_on_support=False)
    plan, ref = prep.plan, prep.reference
    obj = _objective(plan, ref, prep)
    m = plan.model
    data = mujoco.MjData(m)
    row = 20
    data.qpos[:] = ref.qpos[row]
    mujoco.mj_kinematics(m, data)
    mujoco.mj_comPos(m, data)
    assert np.allclose(ref.com[row], data.subtree_com[m.body(plan.character_bodies[0]).id], atol=1e-12)
    data.qpos[0] += 0.3
    data.time = row * ref.dt
    mujoco.mj_forward(m, data)  # at rest: qvel is zero
    feat = Features(plan, Trajectories(get_state(m, data)[None, None], data.sensordata.copy()[None, None]),
                    aligned=True)
    ctrl = np.zeros((1, 1, m.nu))
    costs = obj.evaluate(feat.as_dict(obj.bodies_for(None)), feat.qvel, ctrl, None)
    planted = sum(bool(flags[row]) for flags in ref.planted.values())
    assert planted >= 2  # both feet, at least
    grad = (ref.com[row + 1] - ref.com[row - 1]) / (2 * ref.dt)
    hand = 3.0 * planted * smooth_abs(0.3) + 7.0 * smooth_abs(0.3, COM_P) + 0.4 * 0.5 * float(np.sum(grad[:2] ** 2))
    assert costs.total[0] == pytest.approx(hand, rel=1e-9)


def test_the_slip_term_matches_a_hand_computation(fall):
    """Two steps of the reference's standing pose, the second moved 6 mm along x in one planning step:
    each body the reference plants there slips at 6 mm / dt, w_slip × ½ (0.006 / dt)² each (the first
    step has no step before it); a body in the air counts nothing, nor one the reference plants that is
    still 5 cm above where it plants it (on its way down)."""
    import mujoco
    times, qpos = fall
    zero = dict(w_joint=0.0, w_body=0.0, w_root_pos=0.0, w_root_rot=0.0, w_joint_vel=0.0, w_root_vel=0.0,
                w_control=0.0, w_contact=0.0, w_com=0.0, w_com_vel=0.0, key_boost=0.0)
    prep = _track(times, qpos, w_slip=5.0, **zero)
    plan, ref = prep.plan, prep.reference
    obj = _objective(plan, ref, prep)
    m = plan.model
    data = mujoco.MjData(m)
    row = 20

    def scored(lift):
        states, sensors = [], []
        for k, dx in enumerate((0.0, 0.006)):
            data.qpos[:] = ref.qpos[row + k]
            data.qpos[0] += dx
            data.qpos[2] += lift
            data.time = (row + k) * ref.dt
            mujoco.mj_forward(m, data)
            states.append(get_state(m, data))
            sensors.append(data.sensordata.copy())
        feat = Features(plan, Trajectories(np.array(states)[None], np.array(sensors)[None]), aligned=True)
        return feat, obj.evaluate(feat.as_dict(obj.bodies_for(None)), feat.qvel, np.zeros((1, 2, m.nu)), None)
    assert np.all(scored(0.05)[1].per_step == 0.0)
    feat, costs = scored(0.0)
    pos = feat.as_dict(obj.bodies_for(None))["pos"]
    moved = {b: float(np.linalg.norm(pos[b][0, 1, :2] - pos[b][0, 0, :2])) for b in ref.planted}
    planted = [b for b in ref.planted if ref.planted[b][row + 1]]
    assert {"foot_left", "foot_right"} <= set(planted) and "head" not in planted
    hand = 5.0 * sum(0.5 * (moved[b] / ref.dt) ** 2 for b in planted)
    assert all(abs(moved[b] - 0.006) < 2e-3 for b in planted), moved
    assert costs.per_step[0, 1] == pytest.approx(hand, rel=1e-9) and costs.per_step[0, 0] == 0.0


def test_the_penetration_term_matches_a_hand_computation(fall):
    """A standing pose lowered 4 cm into the floor, against a reference that holds it 0.5 m up (touching
    nothing): each body's term is w_penetration × ((depth − 1 cm) / 1 cm)² of its deepest
    contact, read here from MuJoCo's contact list (the objective reads a contact sensor). Against the
    reference on the floor, which has its feet there, the feet's sinking does not count. Without the
    term the model carries no such sensor."""
    import mujoco

    from solver.mpc.objectives.tracking import PENETRATION_ALLOWANCE, PENETRATION_UNIT
    times, qpos = fall
    zero = dict(w_joint=0.0, w_body=0.0, w_root_pos=0.0, w_root_rot=0.0, w_joint_vel=0.0, w_root_vel=0.0,
                w_control=0.0, w_contact=0.0, w_com=0.0, w_com_vel=0.0, key_boost=0.0)
    plain = _track(times, qpos, **zero)
    assert not any(name.endswith("_contact") for name in plain.plan.sensor_slices)
    row = 20
    pose = plain.reference.qpos[row].copy()
    pose[2] -= 0.04
    lifted = qpos.copy()
    lifted[:, 2] += 0.5

    def term(reference_qpos):
        prep = _track(times, reference_qpos, w_penetration=30.0, **zero)
        plan, ref = prep.plan, prep.reference
        obj = _objective(plan, ref, prep)
        m = plan.model
        data = mujoco.MjData(m)
        data.qpos[:] = pose
        data.time = row * ref.dt
        mujoco.mj_forward(m, data)
        feat = Features(plan, Trajectories(get_state(m, data)[None, None], data.sensordata.copy()[None, None]),
                        aligned=True)
        costs = obj.evaluate(feat.as_dict(obj.bodies_for(None)), feat.qvel, np.zeros((1, 1, m.nu)), None)
        deepest = {}
        for i in range(data.ncon):
            c = data.contact[i]
            for g in (c.geom1, c.geom2):
                body = m.body(m.geom_bodyid[g]).name
                deepest[body] = min(deepest.get(body, 0.0), float(c.dist))
        sunk = {b: -d for b, d in deepest.items() if b in plan.character_bodies and -d > PENETRATION_ALLOWANCE}
        rests = {b for b in sunk if ref.touching[b][row]}
        return costs.total[0], sunk, rests

    total, sunk, rests = term(lifted)
    assert not rests and len(sunk) >= 2 and max(sunk.values()) > 0.03  # both feet, deep, where the reference is clear
    hand = 30.0 * sum(((d - PENETRATION_ALLOWANCE) / PENETRATION_UNIT) ** 2 for d in sunk.values())
    assert total == pytest.approx(hand, rel=1e-9)
    total, sunk, rests = term(qpos)
    assert {"foot_left", "foot_right"} <= rests  # the reference stands on them
    hand = 30.0 * sum(((d - PENETRATION_ALLOWANCE) / PENETRATION_UNIT) ** 2 for b, d in sunk.items() if b not in rests)
    assert total == pytest.approx(hand, rel=1e-9, abs=1e-12)


def test_the_balance_point_moves_with_the_planted_bodies(fall):
    """With `com_on_support` (the default) the centre of mass is held at the reference's place relative
    to the mean of the bodies the reference plants: the whole body 0.3 m off costs nothing there (its
    feet moved with it); one hip turned 0.4 rad costs w_com × smooth-abs of the distance between its
    centre of mass and the reference's offset from the planted bodies' mean, both from MuJoCo's
    forward kinematics of the state."""
    import mujoco

    from solver.mpc.objectives.tracking import COM_P
    times, qpos = fall
    prep = _track(times, qpos, w_joint=0.0, w_body=0.0, w_root_pos=0.0, w_root_rot=0.0, w_joint_vel=0.0,
                  w_root_vel=0.0, w_control=0.0, w_contact=0.0, w_com=7.0, w_com_vel=0.0, key_boost=0.0)
    plan, ref = prep.plan, prep.reference
    obj = _objective(plan, ref, prep)
    m = plan.model
    data = mujoco.MjData(m)
    row = 20
    planted = [b for b, flags in ref.planted.items() if flags[row]]
    assert len(planted) >= 2
    offset = ref.com[row] - np.mean([ref.xpos[b][row] for b in planted], axis=0)

    def cost(shift_x=0.0, hip=0.0):
        data.qpos[:] = ref.qpos[row]
        data.qpos[0] += shift_x
        data.qpos[m.jnt_qposadr[m.joint("hip_y_right").id]] += hip
        data.time = row * ref.dt
        mujoco.mj_forward(m, data)
        feat = Features(plan, Trajectories(get_state(m, data)[None, None], data.sensordata.copy()[None, None]),
                        aligned=True)
        total = obj.evaluate(feat.as_dict(obj.bodies_for(None)), feat.qvel, np.zeros((1, 1, m.nu)), None).total[0]
        com = data.subtree_com[m.body(plan.character_bodies[0]).id]
        support = np.mean([data.xpos[m.body(b).id] for b in planted], axis=0)
        return total, float(np.linalg.norm((com - support - offset)[:2]))

    total, err = cost(shift_x=0.3)
    assert err < 1e-9 and total == pytest.approx(0.0, abs=1e-12)
    total, err = cost(hip=0.4)
    assert err > 0.01  # the thigh swung forward: the centre of mass with it, the foot further
    assert total == pytest.approx(7.0 * smooth_abs(err, COM_P), rel=1e-9)


def test_a_tracking_run_resumed_from_a_checkpoint_is_the_uninterrupted_run(fall):
    times, qpos = fall
    prep = _track(times[:151], qpos[:151], key_every=0.25, rollouts=12, max_iterations=2)
    with RolloutEngine(prep.plan.model, 2) as engine:
        whole = Agent(prep.built, prep.plan, prep.keyframes, prep.settings, 5, engine, prep.job())
        cp = None
        while not whole.done:
            if cp is None and whole.tracker.index == 1:
                cp = whole.checkpoint()
            whole.step()
        resumed = Agent.resume(cp, prep.built, prep.plan, prep.keyframes, prep.settings, engine, prep.job())
        resumed.run()
    a, b = whole.result(), resumed.result()
    assert np.array_equal(a.qpos, b.qpos) and np.array_equal(a.ctrl, b.ctrl) and a.reached == b.reached


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.pop("reference"), "reference"),
    (lambda d: d["reference"].update(qpos=[[0.0] * 5, [0.0] * 5]), "reference.qpos"),
    (lambda d: d["reference"].update(times=[0.0, 0.0]), "reference.times[1]"),
    (lambda d: d["reference"]["qpos"][1].__setitem__(3, float("nan")), "reference"),
    (lambda d: d["reference"].update(times=[0.1, 0.2]), "reference.times[0]"),
    (lambda d: d.update(reference={"result": "/nonexistent/result.npz"}), "reference.result"),
    (lambda d: d.update(method="simulate"), "reference"),
])
def test_bad_references_name_the_field(fall, tmp_path, mutate, field):
    times, qpos = fall
    doc = {"schema_version": 1, "name": "t", "method": "track",
           "reference": {"times": times[:2].tolist(), "qpos": qpos[:2].tolist()}}
    mutate(doc)
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    done = subprocess.run([sys.executable, "-m", "solver", "validate", str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(f"error: {field}:"), done.stderr


def test_a_free_timed_keyframe_is_refused(fall):
    times, qpos = fall
    hinges = {n: 0.0 for n in _hinge_names()}
    keys = [{"root_pos": [0, 0, 1.3], "root_rot_deg": [0, 0, 0], "joints": hinges},
            {"root_pos": [0, 0, 1.3], "root_rot_deg": [0, 0, 0], "time_range": [0.2, 0.4]}]
    with pytest.raises(InvalidInput) as e:
        _track(times, qpos, keys)
    assert e.value.path == "keyframes[1].time_range"


def test_the_support_hull_and_distance_agree_with_qhull():
    """The reference's own 2-D convex hull (Blender's Python has no scipy) against scipy's Qhull on
    random point sets, and the distance to it against a direct computation; points, segments and
    collinear sets too."""
    from scipy.spatial import ConvexHull, Delaunay

    from solver.physics.reference import convex_hull, hull_distance
    rng = np.random.default_rng(0)
    for _ in range(50):
        pts = rng.normal(size=(int(rng.integers(3, 30)), 2))
        ours = convex_hull(pts)
        qhull = ConvexHull(pts)
        assert sorted(map(tuple, ours.round(12))) == sorted(map(tuple, pts[qhull.vertices].round(12)))
        ring = pts[qhull.vertices]  # counter-clockwise
        for x in rng.normal(scale=1.5, size=(20, 2)):
            inside = Delaunay(pts).find_simplex(x) >= 0
            edge = min(np.linalg.norm(x - (a + np.clip((x - a) @ (b - a) / ((b - a) @ (b - a)), 0, 1) * (b - a)))
                       for a, b in zip(ring, np.roll(ring, -1, axis=0)))
            assert hull_distance(pts, x) == pytest.approx(0.0 if inside else edge, abs=1e-12)
    assert hull_distance(np.array([[1.0, 1.0]]), np.array([4.0, 5.0])) == pytest.approx(5.0)
    line = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    assert hull_distance(line, np.array([1.0, 0.5])) == pytest.approx(0.5)
    assert hull_distance(line, np.array([3.0, 0.0])) == pytest.approx(1.0)


def _sketch(name):
    task = json.loads((ROOT / "scenes" / "tasks" / f"{name}.json").read_text())
    return get_method("track").prepare(task_from_dict(task)).reference


def test_the_hand_keyed_sketches_play_their_planted_feet_in_place():
    """The keys were solved with every joint they leave out at 0, while a pose keyframe's missing joints
    keep the previous key's values: played as the solver plays them, a planted foot must not move."""
    ref = _sketch("track_step_up")
    row = ref.index(np.array([1.6]))[0]  # 'right_foot_up': the right foot set on the step, planted from here on
    right = ref.xpos["foot_right"][row:]
    # within what linear interpolation of joint angles drifts between keys (1.6 cm); it slid 10 cm before
    assert np.max(np.linalg.norm(right[:, :2] - right[0, :2], axis=1)) < 0.02
    end = ref.index(np.array([ref.duration]))[0]
    feet_apart = ref.xpos["foot_left"][end] - ref.xpos["foot_right"][end]
    assert abs(feet_apart[0]) < 0.01 and abs(feet_apart[1] - 0.18) < 0.01 and abs(feet_apart[2]) < 0.01
    squat = _sketch("track_squat")  # stands up as it stood: feet in place, arms down again
    end = squat.index(np.array([squat.duration]))[0]
    for body in ("foot_right", "foot_left", "hand_right", "hand_left"):
        assert np.linalg.norm(squat.xpos[body][end] - squat.xpos[body][0]) < 0.01, body


def _pose_key(times, qpos, t, name):
    q = qpos[int(np.argmin(np.abs(times - t)))]
    return {"name": name, "time": t, "root_pos": [float(v) for v in q[:3]], "root_quat": [float(v) for v in q[3:7]],
            "joints": {n: float(v) for n, v in zip(_hinge_names(), q[7:7 + len(_hinge_names())])}}


def test_frames_marked_must_hit_keep_the_references_own_keyframes_between_them_but_a_sketch_has_none(fall):
    """A capture with one frame marked (0.6 s) is still cut into `key_every` segments: the stand-ins at
    0.25 and 1.0 s stay, those within the key window of the marked frame (0.5, 0.75 s) give way to it; with
    `stand_ins` off, and for a sketch (whose in-betweens are interpolation), the marked keys alone."""
    times, qpos = fall
    keys = [_pose_key(times, qpos, 0.0, "start"), _pose_key(times, qpos, 0.6, "marked")]
    names = lambda prep: [(k.name, k.time) for k in prep.keyframes]  # noqa: E731
    assert names(_track(times, qpos, keys, key_every=0.25)) == [("t=0.25s", 0.25), ("marked", 0.6), ("t=1s", 1.0),
                                                                ("end", 1.5)]
    assert names(_track(times, qpos, keys, key_every=0.25, stand_ins=False)) == [("marked", 0.6), ("end", 1.5)]
    task = task_from_dict({"schema_version": 1, "name": "sketch", "method": "track", "reference": {"sketch": "linear"},
                           "keyframes": keys + [_pose_key(times, qpos, 1.5, "last")], "settings": {"key_every": 0.25}})
    assert names(prepare_task(task)[1]) == [("marked", 0.6), ("last", 1.5)]
