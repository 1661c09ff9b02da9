"""Objects the character handles: an object–world pair's distance and objective against MuJoCo's
forward kinematics by hand, two hands holding a 5 kg box by friction alone, sticky hands (a weld
switched on when the keyed hands touch holds a 5 kg box that one hand's friction drops, and reports the
force it carried), the rollouts seeing the weld as the agent does, and a run with a grasp resuming
from a checkpoint bit for bit."""
import copy

import mujoco
import numpy as np
import pytest

from solver.builders.mjcf import compile_spec, scene_to_spec
from solver.core.paths import task_path
from solver.formats.contact_keyframes import ContactKeyframe, ContactPair, parse_keyframes
from solver.formats.scene import GROUPS
from solver.formats.settings import SamplingSettings
from solver.formats.task import SceneRef, build_scene, load_task
from solver.methods.contact import CONTACT, planning_models
from solver.mpc.agent import Agent
from solver.mpc.keyframe_tracker import pair_distance
from solver.mpc.objectives.contact import ALPHA, Objective
from solver.physics.features import Features
from solver.physics.grasp import Grasper, add_grasp_welds, grasp_pairs, weld_name
from solver.physics.model import build_model
from solver.physics.quality import RISEN_HEAD_HEIGHT
from solver.physics.rollout import RolloutEngine, get_state


def _scene(**params):
    return build_scene(SceneRef(environment="pick_place", params=params))


def test_an_object_world_pair_by_hand():
    """Box bottom ↔ a world point: the tracker's distance and the objective's contact term are the
    ones computed here from MuJoCo's body poses, and every body-part group sees the term."""
    built = build_model(_scene())
    m = built.model
    target = np.array([0.5, 0.2, 1.1])
    kf = ContactKeyframe(pairs=[ContactPair(body1="box", pos1=[0.0, 0.0, -0.11], body2="world", pos2=list(target))],
                         weights={"Contact": 3.0})
    d = mujoco.MjData(m)
    d.qpos[:] = built.initial_qpos()
    mujoco.mj_forward(m, d)
    box = m.body("box").id
    bottom = d.xpos[box] + d.xmat[box].reshape(3, 3) @ [0.0, 0.0, -0.11]
    assert pair_distance(m, d, kf) == pytest.approx(np.linalg.norm(bottom - target), abs=1e-9)
    with RolloutEngine(m, 1) as engine:  # the box slides a little on its way: 12 steps of zero control
        traj = engine.run(get_state(m, d), np.zeros((1, 12, m.nu)))
    objective = Objective(built, speed_weight=0.0)  # the contact term alone
    feat = Features(built, traj)
    costs = objective.evaluate(feat.as_dict(objective.bodies_for(kf)), feat.qvel, np.zeros((1, 12, m.nu)), kf)
    expected = []
    for state in traj.state[0]:
        mujoco.mj_setState(m, d, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
        mujoco.mj_kinematics(m, d)
        p = d.xpos[box] + d.xmat[box].reshape(3, 3) @ [0.0, 0.0, -0.11]
        expected.append(np.sum(np.sqrt((p - target) ** 2 + ALPHA ** 2) - ALPHA))
    # The last step's sensor value is the previous instant's (features.py): compare the others.
    per_step = 3.0 * np.array(expected)
    got = costs.components[0, -1]  # the contact term is the last component
    np.testing.assert_allclose(got, (per_step[:-1].sum() + per_step[-2]) / 12, rtol=1e-6)
    assert costs.membership[-1].all() and costs.membership.shape[1] == len(GROUPS)


def _hand_on_box(mass: float, grasp: str, hands=("hand_right",)):
    """The character standing, its right hand's sphere just touching the −y side of a `mass` kg box
    floating beside it (the platform lowered out of the way); the keyframe pairs them. Sticky grasps
    are made for `hands`."""
    scene = _scene(box_mass=mass, from_height=0.05)
    pairs = [(h, "box") for h in hands] if grasp == "sticky" else []
    built = build_model(scene, grasps=pairs)
    m, d = built.model, mujoco.MjData(built.model)
    d.qpos[:] = built.initial_qpos()
    mujoco.mj_kinematics(m, d)
    hand = d.xpos[m.body("hand_right").id].copy()
    side = 0.15 + 0.04 - 0.003  # half the box's width + the hand's radius, 3 mm pressed in
    adr = int(m.jnt_qposadr[m.joint("box_free").id])
    d.qpos[adr:adr + 3] = hand + [0.0, side, 0.0]
    d.qpos[adr + 3:adr + 7] = [1.0, 0.0, 0.0, 0.0]
    mujoco.mj_forward(m, d)
    kf = ContactKeyframe(pairs=[ContactPair(body1="hand_right", pos1=[0, 0, 0], body2="box", pos2=[0.0, -side, 0.0])])
    return built, m, d, kf


def _box_in_hand(m, d):
    h, b = m.body("hand_right").id, m.body("box").id
    return d.xmat[h].reshape(3, 3).T @ (d.xpos[b] - d.xpos[h])


def test_sticky_hands_hold_a_5_kg_box_that_friction_drops():
    built, m, d, kf = _hand_on_box(5.0, "sticky")
    grasper = Grasper(m, [], built.grasps)
    grasper.update(m, d, kf)
    assert d.eq_active[m.equality(weld_name("hand_right", "box")).id] == 1  # touching, at the keyed point
    start = _box_in_hand(m, d)
    for _ in range(100):  # 0.5 s: the unpowered character sags, the box goes with the hand
        mujoco.mj_step(m, d)
        grasper.measure(m, d, m.opt.timestep)
    assert np.linalg.norm(_box_in_hand(m, d) - start) < 0.005
    (summary,) = grasper.summary(m)
    assert summary["object_weight_n"] == pytest.approx(5.0 * 9.81, rel=1e-3)
    assert summary["max_force_n"] > 0.8 * summary["object_weight_n"]  # the weld carried the box
    assert summary["held_s"] == pytest.approx(0.5, abs=0.01)
    # one hand on the side of the box: its weight is shear there, with nothing squeezing from across
    assert summary["max_shear_n"] > 0.8 * summary["object_weight_n"]
    assert summary["beyond_friction_s"] > 0.8 * summary["held_s"]  # (the first steps: the force builds up)
    _, m2, d2, _ = _hand_on_box(5.0, "friction")
    start = _box_in_hand(m2, d2)
    for _ in range(100):
        mujoco.mj_step(m2, d2)
    assert np.linalg.norm(_box_in_hand(m2, d2) - start) > 0.05  # one hand's friction does not hold it


def test_the_first_hand_holds_the_box_and_the_second_only_where_it_is():
    """Two hands keyed to a box, touching its sides (1 mm in, nearly frictionless here so that only the
    welds act): the first (fixed in the world) holds it as a parented prop, the second holds only where
    the box is. Spun by a motor about the line from its centre to the box's, the second hand turns
    freely and the box does not move; two welds that both held the orientation would lock it."""
    spec = mujoco.MjSpec()
    spec.option.gravity = [0, 0, -9.81]
    world = spec.worldbody
    half, r, side = 0.15, 0.04, 0.15 + 0.04 - 0.001
    world.add_body(name="hand_a", pos=[0, -side, 1]).add_geom(
        type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[r, 0, 0], mass=0.5)
    hand_b = world.add_body(name="hand_b", pos=[0, side, 1])
    hand_b.add_joint(name="spin", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 1, 0])  # towards the box's centre
    hand_b.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[r, 0, 0], mass=0.5, friction=[0.001, 0, 0])
    box = world.add_body(name="box", pos=[0, 0, 1])
    box.add_freejoint()
    box.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.11, half, 0.11], mass=2.0, friction=[0.001, 0, 0])
    motor = spec.add_actuator(name="spin", target="spin", trntype=mujoco.mjtTrn.mjTRN_JOINT)
    motor.gear[0] = 1.0
    pairs = [("hand_a", "box"), ("hand_b", "box")]
    add_grasp_welds(spec, pairs)
    m = spec.compile()
    assert [m.eq_data[m.equality(weld_name(h, "box")).id, 10] for h in ("hand_a", "hand_b")] == [1.0, 0.0]
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    kf = ContactKeyframe(pairs=[ContactPair(body1="hand_a", pos1=[0, 0, 0], body2="box", pos2=[0, -side, 0]),
                                ContactPair(body1="hand_b", pos1=[0, 0, 0], body2="box", pos2=[0, side, 0])])
    grasper = Grasper(m, [], pairs)
    grasper.update(m, d, kf)
    assert d.eq_active.all()
    start = d.xpos[m.body("box").id].copy()
    d.ctrl[0] = 0.05  # N·m on a 0.5 kg ball of 4 cm: about 160 rad/s² unhindered
    for _ in range(int(0.3 / m.opt.timestep)):
        mujoco.mj_step(m, d)
    assert d.qpos[m.joint("spin").qposadr[0]] > 1.0  # the second hand turned (unhindered: 7 rad)
    assert np.linalg.norm(d.xpos[m.body("box").id] - start) < 0.005  # and the box stayed with the holding hand


def _squeezed(mass: float, squeeze: float):
    """The character pinned where it stands (its root welded to the world), position servos holding
    its pose, a `mass` kg box between its hands, the arms' targets `squeeze` m inside the box's sides
    (found by damped least squares on each arm's three joints). Returns the box's drop against the
    hands' midpoint after 1 s, once let go from a 0.3 s settle."""
    scene = _scene(box_mass=mass, from_height=0.05)
    spec = scene_to_spec(scene, "position")
    weld = spec.add_equality()
    weld.type, weld.objtype = mujoco.mjtEq.mjEQ_WELD, mujoco.mjtObj.mjOBJ_BODY
    weld.name1 = scene.character.bodies[0].name
    m = compile_spec(spec)
    d = mujoco.MjData(m)
    d.qpos[:] = build_model(scene).initial_qpos()
    arms = {side: [m.joint(f"{j}_{side}") for j in ("shoulder1", "shoulder2", "elbow")] for side in ("right", "left")}
    half_width, sign = 0.15 + 0.04, {"right": -1.0, "left": 1.0}  # the box's side + the hand's radius

    def reach(inside: float) -> np.ndarray:
        q = d.qpos.copy()
        work = mujoco.MjData(m)
        work.qpos[:] = q
        for _ in range(200):
            mujoco.mj_kinematics(m, work)
            mujoco.mj_comPos(m, work)
            for side, joints in arms.items():
                hand = m.body(f"hand_{side}").id
                jac = np.zeros((3, m.nv))
                mujoco.mj_jacBody(m, work, jac, None, hand)
                J = jac[:, [m.jnt_dofadr[j.id] for j in joints]]
                err = np.array([0.36, sign[side] * (half_width - inside), 1.3]) - work.xpos[hand]
                step = J.T @ np.linalg.solve(J @ J.T + 1e-4 * np.eye(3), err)
                for j, dq in zip(joints, step):
                    work.qpos[m.jnt_qposadr[j.id]] += dq
        return work.qpos.copy()

    d.qpos[:] = reach(0.0)  # touching
    d.ctrl[:] = reach(squeeze)[m.jnt_qposadr[m.actuator_trnid[:, 0]]]
    box = m.body("box").id
    adr, dof = m.jnt_qposadr[m.joint("box_free").id], m.jnt_dofadr[m.joint("box_free").id]
    d.qpos[adr:adr + 7] = [0.36, 0.0, 1.3, 1.0, 0.0, 0.0, 0.0]
    held = d.qpos[adr:adr + 7].copy()
    for _ in range(60):  # the arms close on the box, kept where it is
        mujoco.mj_step(m, d)
        d.qpos[adr:adr + 7], d.qvel[dof:dof + 6] = held, 0.0
    mujoco.mj_forward(m, d)

    def drop():
        mid = (d.xpos[m.body("hand_right").id] + d.xpos[m.body("hand_left").id]) / 2
        return mid[2] - d.xpos[box][2]
    start = drop()
    for _ in range(int(round(1.0 / m.opt.timestep))):
        mujoco.mj_step(m, d)
    return drop() - start


def test_two_hands_hold_a_5_kg_box_by_friction_alone():
    """Honest physics: squeezed 6 cm inside its sides (≈ 45 N a hand, the shoulders near their
    20 N·m), a 5 kg box between two hands slips less than a centimetre in a second; squeezed 4 cm
    (≈ 28 N a hand, friction 0.9: no margin over its weight) it drops."""
    assert abs(_squeezed(5.0, 0.06)) < 0.01
    assert _squeezed(5.0, 0.04) > 0.2


def test_a_hand_that_touches_the_box_elsewhere_does_not_pick_it_up_and_the_weld_lets_go():
    built, m, d, kf = _hand_on_box(2.0, "sticky")
    grasper = Grasper(m, [], built.grasps)
    far = copy.deepcopy(kf)
    far.pairs[0].pos2 = [0.0, 0.5, 0.0]  # keyed to a point 0.3 m away from the touch: not within tolerance
    grasper.update(m, d, far)
    eq = m.equality(weld_name("hand_right", "box")).id
    assert d.eq_active[eq] == 0
    grasper.update(m, d, kf)
    assert d.eq_active[eq] == 1
    grasper.update(m, d, ContactKeyframe(pairs=[ContactPair(body1="torso", pos1=[0, 0, 0])]))
    assert d.eq_active[eq] == 0  # a keyframe that no longer holds the box releases it


def test_one_hand_alone_does_not_close_a_two_handed_grasp():
    """Keyed to both hands, the box is welded to neither while the left hand is away from its keyed
    point (0.3 m up the box's side), though the right one touches it at its own: one hand welded alone
    would drag a light box about (a 1 kg box was pulled off its platform and tipped 60° before the
    other hand came). Keyed to the right hand alone, the same touch closes the grasp; keyed to both at
    their touches, both close at once."""
    built, m, d, kf = _hand_on_box(1.0, "sticky", hands=("hand_right", "hand_left"))
    grasper = Grasper(m, [], built.grasps)
    right, left = (m.equality(weld_name(h, "box")).id for h in ("hand_right", "hand_left"))
    h, b = m.body("hand_left").id, m.body("box").id
    left_touch = (d.xmat[b].reshape(3, 3).T @ (d.xpos[h] - d.xpos[b])).tolist()  # this pose's other hand
    away, both = copy.deepcopy(kf), copy.deepcopy(kf)
    away.pairs.append(ContactPair(body1="hand_left", pos1=[0, 0, 0], body2="box",
                                  pos2=[left_touch[0], left_touch[1], left_touch[2] + 0.3]))
    both.pairs.append(ContactPair(body1="hand_left", pos1=[0, 0, 0], body2="box", pos2=left_touch))
    grasper.update(m, d, away)
    assert d.eq_active[right] == 0 and d.eq_active[left] == 0
    grasper.update(m, d, kf)
    assert d.eq_active[right] == 1 and d.eq_active[left] == 0
    d.eq_active[:] = 0
    grasper.update(m, d, both)
    assert d.eq_active[right] == 1 and d.eq_active[left] == 1


def test_a_pair_a_weld_holds_counts_as_met():
    """The hand's keyed point 5 cm up the box's side, within the keyframe's tolerance: the weld closes
    there and holds the hand 5 cm off its point for good. From then on the keyframe's distance is the
    other pairs' alone (here the box 6 cm below its mark), by hand; before, and for a pair the weld
    does not hold, the gap counts."""
    built, m, d, kf = _hand_on_box(2.0, "sticky")
    kf.pairs[0].pos2 = [kf.pairs[0].pos2[0], kf.pairs[0].pos2[1], 0.05]
    mark = d.xpos[m.body("box").id] + [0.0, 0.0, 0.06]
    kf.pairs.append(ContactPair(body1="box", pos1=[0, 0, 0], body2="world", pos2=mark.tolist()))
    grasper = Grasper(m, [], built.grasps)
    assert grasper.held(d) == frozenset()
    assert pair_distance(m, d, kf, grasper.held(d)) == pytest.approx(np.hypot(0.05, 0.06), abs=1e-9)
    grasper.update(m, d, kf)
    assert grasper.held(d) == {("hand_right", "box")}
    assert pair_distance(m, d, kf, grasper.held(d)) == pytest.approx(0.06, abs=1e-9)
    assert pair_distance(m, d, kf) == pytest.approx(np.hypot(0.05, 0.06), abs=1e-9)


def test_the_planners_rollouts_see_the_weld_as_the_agent_does():
    """Rolling out with the agent's equality switches gives the states stepping the agent's data does."""
    built, m, d, kf = _hand_on_box(3.0, "sticky")
    Grasper(m, [], built.grasps).update(m, d, kf)
    state = get_state(m, d)
    ctrl = np.random.default_rng(0).uniform(-0.3, 0.3, (1, 30, m.nu))
    with RolloutEngine(m, 1) as engine:
        held = engine.run(state, ctrl, eq_active=d.eq_active.astype(float)).state[0, -1]
        free = engine.run(state, ctrl).state[0, -1]  # the model's own switches: the weld off
    for t in range(30):
        d.ctrl[:] = ctrl[0, t]
        mujoco.mj_step(m, d)
    np.testing.assert_array_equal(get_state(m, d), held)
    assert not np.allclose(held, free)


def test_grasp_pairs_are_the_keyframes_body_object_pairs():
    task = load_task(task_path("box_lift_place"))
    scene = build_scene(task.scene)
    assert grasp_pairs(parse_keyframes(task.keyframes), scene) == [("hand_right", "box"), ("hand_left", "box")]
    assert task.settings["grasp"] == "sticky"
    built, plan = planning_models(scene, SamplingSettings(), grasps=[("hand_right", "box")])
    assert plan.grasps == built.grasps and plan.model.neq == 1 and plan.model.eq_active0[0] == 0


def test_a_run_holding_the_box_resumes_from_a_checkpoint_bit_for_bit():
    task = load_task(task_path("box_lift_place"))
    task.settings = dict(task.settings, rollouts=16, max_iterations=2)
    prep = CONTACT.prepare(task)
    with RolloutEngine(prep.plan.model, 1) as engine:
        agent = Agent(prep.built, prep.plan, prep.keyframes, prep.settings, 4, engine)
        while agent.data.time < 0.6 and not agent.done:
            agent.step()
        cp = agent.checkpoint()
        assert agent.data.eq_active.all()  # both hands welded to the box at the checkpoint (seed 4: at 0.41 s)
        while agent.data.time < 0.9 and not agent.done:
            agent.step()
        resumed = Agent.resume(cp, prep.built, prep.plan, prep.keyframes, prep.settings, engine)
        while resumed.data.time < 0.9 and not resumed.done:
            resumed.step()
    a, b = agent.result(), resumed.result()
    assert np.array_equal(a.qpos, b.qpos) and np.array_equal(agent.data.eq_active, resumed.data.eq_active)
    assert np.array_equal(agent.grasper.relpose, resumed.grasper.relpose)


def test_a_short_real_lift():
    """The preset's first two keyframes solved by one agent (seed 3, the default settings, no retry:
    its first attempt lifts at 1.11 s): both hands welded
    at their keyed points, then the box up off its platform, touching nothing but the hands."""
    task = load_task(task_path("box_lift_place"))
    prep = CONTACT.prepare(task)
    m = prep.built.model
    with RolloutEngine(prep.plan.model, 1) as engine:
        agent = Agent(prep.built, prep.plan, prep.keyframes, prep.settings, 3, engine)
        box = m.body("box").id
        z0 = float(agent.data.xpos[box, 2])
        while agent.tracker.index < 2 and agent.data.time < 4.0 and not agent.done:
            agent.step()
    d = agent.data
    assert agent.tracker.index >= 2, f"the lift was not reached by {d.time:.2f} s"
    assert d.eq_active.all()
    assert d.xpos[box, 2] - z0 > 0.1  # lifted (the keyframe asks for 0.15 m, within its tolerance)
    touching = {m.body(int(m.geom_bodyid[g])).name for c in d.contact[:d.ncon] for g in (c.geom1, c.geom2)
                if box in (int(m.geom_bodyid[c.geom1]), int(m.geom_bodyid[c.geom2]))} - {"box"}
    assert touching <= {"hand_right", "hand_left"}, touching
    (right, left) = agent.grasper.summary(m)
    assert right["held_s"] > 0.3 and left["held_s"] > 0.3 and right["object_weight_n"] == pytest.approx(19.6, 0.01)


def test_object_quality_by_hand():
    """A box falling through the air for 0.45 s touches nothing (unsupported), then sinks 3 cm into
    its platform (the object's penetration); one slid 1 mm above its platform touches it, 1 cm above
    flies; the character stands still throughout."""
    from solver.physics.quality import motion_quality
    built = build_model(_scene())
    m = built.model
    q0 = built.initial_qpos()
    adr = int(m.jnt_qposadr[m.joint("box_free").id])
    rest_z = float(q0[adr + 2])  # on the platform
    times = np.arange(14) * 0.05
    qpos = np.tile(q0, (14, 1))
    qpos[:10, adr + 2] = rest_z + 1.0 - times[:10]  # 1.0 … 0.55 m above its rest: 0.45 s of flight at 1 m/s
    qpos[10:, adr + 2] = rest_z - 0.03  # then 3 cm into the platform, still
    q = motion_quality(m, built.character_bodies, times, qpos)
    assert q["object_unsupported_s"] == pytest.approx(9 * 0.05)  # nine intervals between untouched poses
    assert q["object_penetration_m"] == pytest.approx(0.03, abs=1e-4)
    # Slid along its platform with a millimetre of air under it (soft contacts let go now and then):
    # touching; with a centimetre, flying.
    for air, unsupported in ((0.001, 0.0), (0.01, 13 * 0.05)):
        slid = np.tile(q0, (14, 1))
        slid[:, adr] += times * 0.2 - 0.1  # 0.2 m/s along x, on the platform throughout
        slid[:, adr + 2] = rest_z + air
        q = motion_quality(m, built.character_bodies, times, slid)
        assert q["object_unsupported_s"] == pytest.approx(unsupported), air
        assert q["object_penetration_m"] == 0.0
    floor = build_model(build_scene(SceneRef(environment="floor")))  # no objects: no object figures
    still = np.tile(floor.initial_qpos(), (2, 1))
    assert "object_penetration_m" not in motion_quality(floor.model, floor.character_bodies, times[:2], still)


def test_how_a_box_is_carried_by_hand():
    """A box held against the right hand and touching nothing else is carried: 0.5 s with the character
    standing, then 0.5 s in a crouch (hips and knees bent), then 0.2 s set down on its platform (not
    carried). The figure's pelvis share is the median of the two, from MuJoCo's kinematics here against
    the pelvis above the feet in the standing pose (the figure's own reads it at rest, with the legs hung);
    a carry crouched most of the time is said in words, a brief touch (under 0.5 s) not."""
    from solver.physics.quality import motion_quality
    from solver.physics.verdict import quality_words
    built = build_model(_scene())
    m = built.model
    d = mujoco.MjData(m)
    q0 = built.initial_qpos()
    box = int(m.jnt_qposadr[m.joint("box_free").id])

    def above_feet(qpos):
        d.qpos[:] = qpos
        mujoco.mj_kinematics(m, d)
        return d.xpos[m.body("pelvis").id, 2] - min(d.xpos[m.body(f).id, 2] for f in ("foot_left", "foot_right"))

    def held(qpos):  # the box's side against the right hand's sphere (0.04 m), 2 mm in
        qpos = qpos.copy()
        d.qpos[:] = qpos
        mujoco.mj_kinematics(m, d)
        hand = d.xpos[m.body("hand_right").id]
        qpos[box:box + 3] = hand + [0.0, 0.04 + m.geom_size[m.body_geomadr[m.body("box").id], 1] - 0.002, 0.0]
        qpos[box + 3:box + 7] = [1, 0, 0, 0]
        return qpos

    crouch = q0.copy()
    for joint, angle in (("hip_y_right", -1.2), ("hip_y_left", -1.2), ("knee_right", -2.0), ("knee_left", -2.0)):
        crouch[m.jnt_qposadr[m.joint(joint).id]] = angle
    standing, crouched = above_feet(q0), above_feet(crouch)
    assert crouched / standing < 0.75  # a real crouch
    times = np.arange(24) * 0.05
    qpos = np.array([held(q0)] * 10 + [held(crouch)] * 10 + [crouch] * 4)  # the last four: the box on its platform
    carry = motion_quality(m, built.character_bodies, times, qpos)["carry"]
    assert carry["held_s"] == pytest.approx(1.0)
    assert carry["crouched_s"] == pytest.approx(0.5)
    assert carry["pelvis_share"] == pytest.approx((1 + crouched / standing) / 2, abs=1e-3)
    assert not any("carries" in w for w in quality_words({"carry": carry}))  # half standing: the median is not low
    low = motion_quality(m, built.character_bodies, times[:16], qpos[6:22])["carry"]  # four standing, ten crouched
    assert low["held_s"] == pytest.approx(0.7) and low["pelvis_share"] == pytest.approx(crouched / standing, abs=1e-3)
    said = f"carries crouched for 0.5 s of 0.7 s (pelvis at {crouched / standing:.0%} of standing)"
    assert quality_words({"carry": low}) == [said]
    brief = motion_quality(m, built.character_bodies, times[:4], qpos[16:20])["carry"]  # crouched, 0.2 s held
    assert brief["pelvis_share"] < 0.75 and quality_words({"carry": brief}) == []  # a touch, not a carry


def test_a_solution_reports_its_grasps_and_the_objects_quality():
    """What result.json gets for a box task (its first keyframe, a short budget): per hand the grasp's
    hold time and force beside the box's weight, and the object's quality figures."""
    task = load_task(task_path("box_lift_place"))
    task.keyframes = task.keyframes[:1]
    task.settings = dict(task.settings, rollouts=16, max_iterations=2, segment_retries=0, backups=0, particles=1)
    prep = CONTACT.prepare(task)
    with RolloutEngine(prep.plan.model, 1) as engine:
        sol = CONTACT.solve(prep, 3, engine)
    grasps = sol.summary["grasps"]
    assert [(g["body"], g["object"]) for g in grasps] == [("hand_right", "box"), ("hand_left", "box")]
    assert all(g["object_weight_n"] == pytest.approx(2.0 * 9.81, rel=1e-3) and g["held_s"] >= 0 for g in grasps)
    quality = sol.summary["quality"]
    assert quality["object_penetration_m"] >= 0 and quality["object_unsupported_s"] >= 0


def _box_over_its_mark(prep, data, gap: float) -> None:
    """Put the lift-and-place preset's box level with its bottom `gap` above its 'release' mark on the
    target platform (negative: pressed into it), and update the kinematics."""
    m = prep.built.model
    box, platform = m.body("box").id, m.body("to_platform").id
    mark = prep.keyframes[-1].pairs[0].pos2  # 'release': the box's bottom on the platform, in its frame
    adr = m.jnt_qposadr[m.body_jntadr[box]]
    data.qpos[adr:adr + 3] = data.xpos[platform] + mark + [0.0, 0.0, m.geom_size[m.body_geomadr[box], 2] + gap]
    data.qpos[adr + 3:adr + 7] = [1, 0, 0, 0]
    mujoco.mj_forward(m, data)


def test_a_box_is_put_on_its_platform_only_once_it_rests_there():
    """The preset's 'place' and 'release' pair the box with the platform it goes on: held 5 cm above
    its mark — within the keyframes' tolerance — it is not yet put there, and the tracker does not
    start the keyframe's sustain; set down on it, it is. The lift's box ↔ world pair is a point in the
    air and needs no support. By hand, against MuJoCo's contacts."""
    from solver.mpc.keyframe_tracker import placements
    task = load_task(task_path("box_lift_place"))
    prep = CONTACT.prepare(task)
    m, names = prep.built.model, [kf.name for kf in prep.keyframes]
    box, platform = m.body("box").id, m.body("to_platform").id
    place, release, lift = names.index("place"), names.index("release"), names.index("lift")
    assert placements(prep.built.scene, m, prep.keyframes[place]) == [(box, platform)]
    assert placements(prep.built.scene, m, prep.keyframes[lift]) == []
    kf = prep.keyframes[release]
    for gap, rests in ((0.05, False), (-0.001, True)):
        with RolloutEngine(prep.plan.model, 1) as engine:
            agent = Agent(prep.built, prep.plan, prep.keyframes, prep.settings, 0, engine)
            d = agent.data
            _box_over_its_mark(prep, d, gap)
            assert pair_distance(m, d, kf) == pytest.approx(abs(gap), abs=1e-6) and abs(gap) < kf.tolerance
            assert agent.placed(release) is rests and agent.placed(place) is rests and agent.placed(lift)
            agent.tracker.index, agent.tracker.start = release, 0.0
            agent.step()  # one control step (the hovering box falls about a millimetre)
        assert (agent.tracker.within_since is not None) is rests


def test_a_clip_does_not_end_with_the_character_on_its_way_down():
    """The last keyframe ('release': the box rests on its mark) is met with the character standing,
    and not with it lying on the floor, head 0.2 m up (below RISEN_HEAD_HEIGHT): nothing after the
    last keyframe would catch a fall begun within its sustain. Earlier keyframes do not ask it."""
    task = load_task(task_path("box_lift_place"))
    prep = CONTACT.prepare(task)
    m, names = prep.built.model, [kf.name for kf in prep.keyframes]
    place, release = names.index("place"), names.index("release")
    assert release == len(names) - 1 and prep.keyframes[release].upright
    root = m.jnt_qposadr[m.body_jntadr[m.body("torso").id]]
    for lying in (False, True):
        with RolloutEngine(prep.plan.model, 1) as engine:
            agent = Agent(prep.built, prep.plan, prep.keyframes, prep.settings, 0, engine)
            d = agent.data
            if lying:  # on its back, head towards −x, away from the platforms
                d.qpos[root:root + 7] = [0.0, 0.0, 0.2, np.sqrt(0.5), 0.0, -np.sqrt(0.5), 0.0]
            _box_over_its_mark(prep, d, -0.001)
            head = d.xpos[m.body("head").id, 2]
            assert bool(head < RISEN_HEAD_HEIGHT) is lying, head
            assert pair_distance(m, d, prep.keyframes[release]) < prep.keyframes[release].tolerance
            assert agent.ends_up(release) is not lying and agent.ends_up(place)
            agent.tracker.index, agent.tracker.start = release, 0.0
            agent.step()
        assert (agent.tracker.within_since is None) is lying
