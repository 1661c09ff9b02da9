"""The tracking objective against hand computations: every term, the keyframe boost towards the
keyframe's own pose, the reference's planted bodies, the balance point moving with them."""
import mujoco
import numpy as np
import pytest
from track_cases import hinge_names, objective, track

from solver.mpc.objectives.contact import smooth_abs
from solver.mpc.objectives.control import CONTROL_P
from solver.mpc.objectives.tracking import ANCHOR_P
from solver.physics.features import Features
from solver.physics.rollout import Trajectories, get_state


@pytest.mark.parametrize("actuation", ["position", "motor"])
def test_the_objective_matches_a_hand_computation(fall, actuation):
    """One state, off the reference by known amounts, scored by hand term by term: the control term is
    the PD targets' offset from the reference's angles (½ square) or the torque's cosh norm."""
    times, qpos = fall
    prep = track(times, qpos, w_joint=1.0, w_body=0.0, w_root_pos=10.0, w_root_rot=0.0, w_joint_vel=0.0,
                  w_root_vel=0.0, w_control=2.0, w_contact=0.0, w_com=0.0, w_com_vel=0.0, key_boost=0.0,
                  actuation=actuation)
    plan = prep.plan
    obj = objective(plan, prep.reference, prep)
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
    times, qpos = fall
    row = 40
    hinges = hinge_names()
    weights = dict(w_joint=1.0, w_body=0.5, w_root_pos=10.0, w_root_rot=0.0, w_joint_vel=0.0, w_root_vel=0.0,
                   w_control=0.0, w_contact=0.0, w_com=0.0, w_com_vel=0.0, key_boost=2.0,
                   stand_ins=False)  # the one keyframe's bump alone (a stand-in at 1 s would add its tail)
    start = {"name": "start", "time": 0.0, "root_pos": [float(v) for v in qpos[0, :3]],
             "root_quat": [float(v) for v in qpos[0, 3:7]], "joints": {}}
    bare = track(times, qpos, **weights)  # the reference and model do not depend on the keyframes
    m = bare.plan.model
    adr = np.array([m.jnt_qposadr[m.joint(n).id] for n in hinges])
    t_key = row * bare.reference.dt
    ref_row = bare.reference.qpos[row]
    key = {"name": "beside", "time": t_key, "root_pos": [float(ref_row[0]), float(ref_row[1]), float(ref_row[2]) + 0.2],
           "root_quat": [float(v) for v in ref_row[3:7]],
           "joints": {n: float(v) for n, v in zip(hinges, ref_row[adr])}}
    key["joints"]["knee_right"] -= 0.3
    prep = track(times, qpos, [start, key], **weights)
    assert prep.keyframes[0].name == "beside" and prep.keyframes[0].time == pytest.approx(t_key)
    plan = prep.plan
    obj = objective(plan, prep.reference, prep)
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
    prep = track(times, qpos, [start, through], key_boost=2.0)
    assert np.array_equal(objective(plan, prep.reference, prep).key_qpos,
                          prep.reference.qpos)


def test_the_reference_knows_which_bodies_are_planted_on_the_scene(fall):
    """Touching, per body and pose, against MuJoCo's own geom distances to the floor (a separate
    function from the collision pass the reference uses): within 2 cm is touching; planted is
    touching and slower than 0.1 m/s."""

    from solver.physics.reference import PLANTED_SPEED, touching_scene
    times, qpos = fall
    prep = track(times, qpos)
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

    from solver.mpc.objectives.tracking import COM_P
    times, qpos = fall
    prep = track(times, qpos, w_joint=0.0, w_body=0.0, w_root_pos=0.0, w_root_rot=0.0, w_joint_vel=0.0,
                  w_root_vel=0.0, w_control=0.0, w_contact=3.0, w_com=7.0, w_com_vel=0.4, key_boost=0.0,
                  com_on_support=False)
    plan, ref = prep.plan, prep.reference
    obj = objective(plan, ref, prep)
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


def _only(fall, **weights):
    """The fall tracked with only `weights`' terms weighing anything."""
    times, qpos = fall
    zero = dict(w_joint=0.0, w_body=0.0, w_root_pos=0.0, w_root_rot=0.0, w_joint_vel=0.0, w_root_vel=0.0,
                w_control=0.0, w_contact=0.0, w_com=0.0, w_com_vel=0.0, key_boost=0.0, w_slip=0.0, w_anchor=0.0)
    return track(times, qpos, **{**zero, **weights})


def _two_steps_moved(prep, obj, row: int, lift: float, yaw: float = 0.0):
    """One rollout of two steps of the reference's pose at `row` and `row + 1`, the second moved 6 mm along
    x and turned by `yaw` about the vertical, both raised by `lift`: its features, `obj`'s costs and the
    two configurations."""
    plan, ref = prep.plan, prep.reference
    m = plan.model
    data = mujoco.MjData(m)
    states, sensors, configurations = [], [], []
    for k, dx in enumerate((0.0, 0.006)):
        data.qpos[:] = ref.qpos[row + k]
        data.qpos[0] += dx
        data.qpos[2] += lift
        if k:
            turn = np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
            mujoco.mju_mulQuat(data.qpos[3:7], turn, data.qpos[3:7].copy())
        data.time = (row + k) * ref.dt
        mujoco.mj_forward(m, data)
        states.append(get_state(m, data))
        sensors.append(data.sensordata.copy())
        configurations.append(data.qpos.copy())
    feat = Features(plan, Trajectories(np.array(states)[None], np.array(sensors)[None]), aligned=True)
    costs = obj.evaluate(feat.as_dict(obj.bodies_for(None)), feat.qvel, np.zeros((1, 2, m.nu)), None)
    return feat, costs, configurations


def test_the_slip_term_matches_a_hand_computation(fall):
    """Two steps of the reference's standing pose, the second moved 6 mm along x in one planning step:
    each body the reference plants there slips at 6 mm / dt, w_slip × ½ (0.006 / dt)² each (the first
    step has no step before it); a body in the air counts nothing, nor one the reference plants that is
    still 5 cm above where it plants it (on its way down)."""
    prep = _only(fall, w_slip=5.0)
    plan, ref = prep.plan, prep.reference
    obj = objective(plan, ref, prep)
    row = 20

    def scored(lift):
        return _two_steps_moved(prep, obj, row, lift)[:2]
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

    from solver.mpc.objectives.tracking import PENETRATION_ALLOWANCE, PENETRATION_UNIT
    times, qpos = fall
    zero = dict(w_joint=0.0, w_body=0.0, w_root_pos=0.0, w_root_rot=0.0, w_joint_vel=0.0, w_root_vel=0.0,
                w_control=0.0, w_contact=0.0, w_com=0.0, w_com_vel=0.0, key_boost=0.0)
    plain = track(times, qpos, **zero, w_penetration=0.0)
    assert not any(name.endswith("_contact") for name in plain.plan.sensor_slices)
    row = 20
    pose = plain.reference.qpos[row].copy()
    pose[2] -= 0.04
    lifted = qpos.copy()
    lifted[:, 2] += 0.5

    def term(reference_qpos):
        prep = track(times, reference_qpos, w_penetration=30.0, **zero)
        plan, ref = prep.plan, prep.reference
        obj = objective(plan, ref, prep)
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

    from solver.mpc.objectives.tracking import COM_P
    times, qpos = fall
    prep = track(times, qpos, w_joint=0.0, w_body=0.0, w_root_pos=0.0, w_root_rot=0.0, w_joint_vel=0.0,
                  w_root_vel=0.0, w_control=0.0, w_contact=0.0, w_com=7.0, w_com_vel=0.0, key_boost=0.0)
    plan, ref = prep.plan, prep.reference
    obj = objective(plan, ref, prep)
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


def test_the_anchor_term_matches_a_hand_computation(fall):
    """Two steps of the reference's standing pose, the second moved 6 mm along x and turned 0.1 rad about the
    vertical (a foot's two capsule centres then move by different amounts): each body the reference plants at
    both rows and has down at the plan's start counts w_anchor × smooth-abs of how far its shapes got from
    where they were at the start — the mean over its collidable geoms' centres (MuJoCo's own geom frames
    here) — 0 at the start itself; a plan starting with the bodies 5 cm above where the
    reference plants them counts nothing (they are not down yet)."""
    prep = _only(fall, w_anchor=7.0)
    plan, ref = prep.plan, prep.reference
    obj = objective(plan, ref, prep)
    m = plan.model
    row = 20
    assert np.all(_two_steps_moved(prep, obj, row, 0.05, yaw=0.1)[1].per_step == 0.0)
    _, costs, configurations = _two_steps_moved(prep, obj, row, 0.0, yaw=0.1)
    data = mujoco.MjData(m)

    def shape_points(q):  # the collidable geoms' centres in the world, per body
        data.qpos[:] = q
        mujoco.mj_kinematics(m, data)
        points = {}
        for g in range(m.ngeom):
            if m.geom_contype[g] != 0 or m.geom_conaffinity[g] != 0:
                points.setdefault(m.body(m.geom_bodyid[g]).name, []).append(data.geom_xpos[g].copy())
        return {b: np.array(p) for b, p in points.items()}
    before, after = (shape_points(q) for q in configurations)
    planted = [b for b in ref.planted if ref.planted[b][row] and ref.planted[b][row + 1]]
    assert {"foot_left", "foot_right"} <= set(planted) and "head" not in planted
    moved = {b: np.linalg.norm(after[b] - before[b], axis=1) for b in planted}
    assert np.ptp(moved["foot_left"]) > 0.001  # the turn moves the two centres unlike
    hand = 7.0 * sum(smooth_abs(float(d.mean()), ANCHOR_P) for d in moved.values())
    assert costs.per_step[0, 0] == 0.0
    assert costs.per_step[0, 1] == pytest.approx(hand, rel=1e-6)  # the objective turns the bodies' sensed quaternions
