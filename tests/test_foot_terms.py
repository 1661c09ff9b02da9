"""The contact objective's foot terms by hand: Foot Slip (a loaded foot dragged or set down skimming), Feet Down
(a seated foot up by the seat) and Feet Flat (a loaded foot rolled onto its edge, planned for only while its keyframe
is held)."""
import numpy as np
import pytest
from test_mpc import fake_features, only

from solver.formats.objective_terms import TERM_NAMES
from solver.formats.scene import GROUPS
from solver.formats.task import SceneRef, build_scene
from solver.mpc.objectives.contact import Objective
from solver.physics.model import build_model


@pytest.fixture(scope="module")
def objective():
    """The paper's terms alone (the speed-limit term, on by default, has its own test)."""
    return Objective(build_model(build_scene(SceneRef(environment="armchair"))), speed_weight=0.0)


def test_foot_slip_counts_a_loaded_foot_dragged_not_one_rolling_lifted_or_unloaded():
    """The slip term by hand: a standing foot carrying half the character's weight (the other foot the other
    half) dragged at 0.2 m/s costs W × ½ × 0.2² × ½ a step, in its leg's group only; one rolling over its toes
    (the pressed point still) costs nothing, one in the air nothing, one drawn lightly while the other foot
    carries the rest (a twentieth of the weight on it) a tenth as much; a seated one, each foot carrying a
    tenth and the seat the rest, counts that tenth and the seat's share: 0.9, 1.8 times as much.
    Its touch sensor is MuJoCo's own contacts: at rest the standing character's right foot presses the
    floor with their net force, at their force-weighted centre."""
    import mujoco

    from solver.methods.contact import foot_bodies
    scene = build_scene(SceneRef(environment="armchair"))
    built = build_model(scene, touch_bodies=foot_bodies(scene))
    objective = Objective(built, speed_weight=0.0)
    m, data = built.model, mujoco.MjData(built.model)
    data.qpos[:] = built.initial_qpos()
    mujoco.mj_forward(m, data)
    found, *sensed = data.sensordata[built.sensor_slices["foot_right_touch"]]
    foot = m.body("foot_right").id
    force, weighted, normal = np.zeros(3), np.zeros(3), 0.0
    touches = [i for i, c in enumerate(data.contact[:data.ncon])
               if foot in (m.geom_bodyid[c.geom[0]], m.geom_bodyid[c.geom[1]])]
    for i in touches:  # each contact's force, from its own frame to the world
        local = np.zeros(6)
        mujoco.mj_contactForce(m, data, i, local)
        force += data.contact[i].frame.reshape(3, 3).T @ local[:3]
        weighted += abs(local[0]) * data.contact[i].pos
        normal += abs(local[0])
    assert found == len(touches) > 0
    assert np.abs(sensed[:3]) == pytest.approx(np.abs(force), rel=1e-6)
    assert np.asarray(sensed[3:]) == pytest.approx(weighted / normal, abs=1e-6)

    dt, nstep = m.opt.timestep, 5
    feat = fake_features(objective, nroll=5, nstep=nstep)
    t = np.arange(nstep) * dt
    toe = np.array([0.1, 0.0, 0.0])  # the pressed point
    weight = objective.weight_n
    pos, quat = np.zeros((5, nstep, 3)), np.zeros((5, nstep, 4))
    pos[0] = [0.0, 0.0, 0.1] + np.outer(0.2 * t, [1.0, 0.0, 0.0])  # dragged along x, level
    quat[0] = [1.0, 0.0, 0.0, 0.0]
    angle = 3.0 * t  # rolling over the toe about y at 3 rad/s: the ankle goes up and forward
    c, s = np.cos(angle), np.sin(angle)
    quat[1] = np.stack([np.cos(angle / 2), 0 * angle, np.sin(-angle / 2), 0 * angle], axis=-1)
    toe_to_ankle = np.array([0.0, 0.0, 0.1]) - toe
    pos[1] = toe + np.stack([c * toe_to_ankle[0] - s * toe_to_ankle[2], 0 * t,
                             s * toe_to_ankle[0] + c * toe_to_ankle[2]], axis=-1)
    for r in (2, 3, 4):  # dragged too: in the air, drawn lightly, seated
        pos[r], quat[r] = pos[0], quat[0]
    right, left = np.zeros((5, nstep, 7)), np.zeros((5, nstep, 7))
    sole = pos[0] - [0.0, 0.0, 0.1]
    # (contacts, share of the weight on the right foot, where it presses; share on the left foot)
    for r, (n, mine, point, other) in enumerate([(3, 0.5, sole, 0.5), (2, 0.5, toe, 0.5), (0, 0.0, 0.0, 1.0),
                                                (1, 0.05, sole, 0.95), (2, 0.1, sole, 0.1)]):
        right[r, :, 0], right[r, :, 3], right[r, :, 4:] = n, -mine * weight, point
        left[r, :, 0], left[r, :, 3] = 2, -other * weight
    left[..., 4:] = [0.0, 0.3, 0.0]  # the left foot stands still
    feat["pos"]["foot_left"] = np.zeros((5, nstep, 3)) + [0.0, 0.3, 0.1]
    feat["quat"]["foot_left"] = np.tile([1.0, 0.0, 0.0, 0.0], (5, nstep, 1))
    feat["pos"]["foot_right"], feat["quat"]["foot_right"] = pos, quat
    feat["touch"] = {"foot_right": right, "foot_left": left}
    costs = objective.evaluate(feat, np.zeros((5, nstep, 27)), np.zeros((5, nstep, 21)), only("Foot Slip", 100.0))
    dragged = 100.0 * 0.5 * 0.2 ** 2 * 0.5
    assert costs.per_step[0] == pytest.approx(np.full(nstep, dragged), rel=1e-9)
    assert costs.per_step[1] == pytest.approx(np.zeros(nstep), abs=1e-9)
    assert np.all(costs.per_step[2] == 0.0)
    assert costs.per_step[3] == pytest.approx(np.full(nstep, dragged / 10), rel=1e-9)
    assert costs.per_step[4] == pytest.approx(np.full(nstep, dragged * 1.8), rel=1e-9)
    seen = costs.membership[costs.components.sum(axis=0) > 0]
    assert seen.shape[0] == 1 and list(np.flatnonzero(seen[0])) == [GROUPS.index("right_leg")]


def test_foot_slip_charges_a_landing_only_where_the_keyframe_does_not_ask_the_foot_to_move(objective):
    """A foot set down skimming the floor is charged at its landing: in the air for two steps, it touches at the
    third having come 0.3 m/s sideways, then stands still carrying half the weight (the left foot the other half):
    W × LANDING_SHARE × ½ × 0.3² × ½ at that step and nothing else. Not charged while the keyframe still asks that
    leg to move — a pair on the foot or on its shin farther than the tolerance at the first step — and charged
    again once that pair is met, or where the unmet pair is on the other leg."""
    from solver.formats.contact_keyframes import ContactPair
    from solver.mpc.objectives.contact import LANDING_SHARE
    dt, nstep = objective.built.model.opt.timestep, 5
    feat = fake_features(objective, nroll=1, nstep=nstep)
    pos = np.array([[-0.6 * dt, 0, 0.13], [-0.3 * dt, 0, 0.115], [0, 0, 0.1], [0, 0, 0.1], [0, 0, 0.1]])
    feat["pos"]["foot_right"], feat["quat"]["foot_right"] = pos[None], np.tile([1.0, 0, 0, 0], (1, nstep, 1))
    feat["pos"]["foot_left"] = np.zeros((1, nstep, 3)) + [0.0, 0.3, 0.1]
    feat["quat"]["foot_left"] = np.tile([1.0, 0, 0, 0], (1, nstep, 1))
    half = 0.5 * objective.weight_n
    right, left = np.zeros((1, nstep, 7)), np.zeros((1, nstep, 7))
    right[0, 2:, 0], right[0, 2:, 3], right[0, 2:, 4:] = 2, -half, [0.05, 0.0, 0.0]
    left[..., 0], left[..., 3], left[0, :2, 3], left[..., 4:] = 2, -half, -2 * half, [0.0, 0.3, 0.0]
    feat["touch"] = {"foot_right": right, "foot_left": left}
    zeros = np.zeros((1, nstep, 27)), np.zeros((1, nstep, 21))

    def cost(*pairs):
        kf = only("Foot Slip", 100.0, pairs=[ContactPair("pelvis", [0, 0, 0])] + list(pairs), tolerance=0.1)
        return objective.evaluate(feat, *zeros, kf).per_step[0]
    landed = np.zeros(nstep)
    landed[2] = 100.0 * LANDING_SHARE * 0.5 * 0.3 ** 2 * 0.5
    start = pos[0]
    assert cost() == pytest.approx(landed, rel=1e-9)
    assert cost(ContactPair("foot_right", [0, 0, 0], "world", list(start + [0.5, 0, 0]))) == pytest.approx(
        np.zeros(nstep), abs=1e-12)
    assert cost(ContactPair("shin_right", [0, 0, 0], "world", [5.0, 0, 0])) == pytest.approx(np.zeros(nstep), abs=1e-12)
    assert cost(ContactPair("foot_right", [0, 0, 0], "world", list(start + [0.05, 0, 0]))) == pytest.approx(
        landed, rel=1e-9)
    assert cost(ContactPair("foot_left", [0, 0, 0], "world", [5.0, 0, 0])) == pytest.approx(landed, rel=1e-9)


def test_feet_flat_charges_a_loaded_foot_rolled_onto_its_edge(objective):
    """Feet Flat by hand: the right foot turned 30° from its rest orientation about the world's x (the default
    humanoid's forward: a roll onto its edge) while carrying half the character's weight costs the weight × ½ ×
    (√(sin² 30° + 0.1²) − 0.1); turned 30° about y (onto its heel) nothing, rolled in the air nothing, rolled
    carrying a twentieth of the weight a tenth of the half — in the right leg's group only."""
    import mujoco
    model = objective.built.model
    rest = mujoco.MjData(model)
    mujoco.mj_kinematics(model, rest)
    at_rest = rest.xquat[model.body("foot_right").id]
    theta = np.radians(30.0)

    def turned(axis):
        out = np.zeros(4)
        mujoco.mju_mulQuat(out, np.r_[np.cos(theta / 2), np.sin(theta / 2) * np.asarray(axis, float)], at_rest)
        return out
    feat = fake_features(objective, nroll=4, nstep=3)
    quat = np.stack([turned([1, 0, 0]), turned([0, 1, 0]), turned([1, 0, 0]), turned([1, 0, 0])])
    feat["quat"]["foot_right"] = np.repeat(quat[:, None], 3, axis=1)
    half = 0.5 * objective.weight_n
    touch = np.zeros((4, 3, 7))
    touch[:, :, 0], touch[:, :, 3] = 2, -half
    touch[2, :, 0], touch[2, :, 3] = 0, 0.0  # in the air
    touch[3, :, 3] = -0.1 * half
    feat["touch"] = {"foot_right": touch, "foot_left": np.zeros((4, 3, 7))}
    costs = objective.evaluate(feat, np.zeros((4, 3, 27)), np.zeros((4, 3, 21)), only("Feet Flat", 30.0))
    rolled = 30.0 * 0.5 * (np.hypot(np.sin(theta), 0.1) - 0.1)
    assert costs.per_step[0] == pytest.approx(np.full(3, rolled), rel=1e-9)
    assert costs.per_step[1] == pytest.approx(np.zeros(3), abs=1e-12)
    assert np.all(costs.per_step[2] == 0.0)
    assert costs.per_step[3] == pytest.approx(np.full(3, rolled / 10), rel=1e-9)
    seen = costs.membership[costs.components.sum(axis=0) > 0]
    assert seen.shape[0] == 1 and list(np.flatnonzero(seen[0])) == [GROUPS.index("right_leg")]


def test_feet_flat_is_planned_for_only_while_the_keyframe_is_held():
    """The keyframe the planner is given (`ContactJob.aim`) weighs Feet Flat only while it is held (its pairs
    and style met): through the rise before, a stand that weighed it lost its first tries. Its other weights,
    and a keyframe that does not weigh Feet Flat, are given as they are."""
    from solver.mpc.jobs import ContactJob
    stand = only("Feet Flat", 30.0)
    assert ContactJob().aim(stand, 1.0, held=True).weight("Feet Flat") == 30.0
    rising = ContactJob().aim(stand, 1.0, held=False)
    assert rising.weight("Feet Flat") == 0.0
    assert [rising.weight(t) for t in TERM_NAMES if t != "Feet Flat"] == [stand.weight(t) for t in TERM_NAMES
                                                                          if t != "Feet Flat"]
    other = only("Torso Up", 10.0)
    assert ContactJob().aim(other, 1.0, held=False) is other


def test_feet_down_counts_a_foot_up_by_the_seat_in_its_legs_group(objective):
    """Feet Down by hand: the default humanoid stands with its pelvis H above its feet and each foot's origin S
    above its lowest point (MuJoCo's rest kinematics, its capsules' ends computed here), so a seated foot
    belongs at least 0.4 H below the pelvis, or on the floor (its origin within 0.07 H of S). With the pelvis at
    0.5 m, a right foot up on the seat at 0.45 m costs w × smooth-abs of how far it is above the nearer of those
    lines, every step (the total is the mean over the steps), in the right leg's group only; the left foot down
    at 0.1 m costs nothing. Under a pelvis at 0.3 m (a low seat) a foot standing on the floor costs nothing
    either, and one 10 cm above where it would be on the floor costs those 10 cm."""
    import mujoco
    m = objective.built.model
    rest = mujoco.MjData(m)
    mujoco.mj_kinematics(m, rest)
    height = rest.xpos[m.body("pelvis").id, 2] - min(rest.xpos[m.body(f).id, 2] for f in ("foot_left", "foot_right"))
    foot = m.body("foot_right").id
    ends = [rest.geom_xpos[g][2] - abs(rest.geom_xmat[g][8]) * m.geom_size[g][1] - m.geom_size[g][0]
            for g in np.flatnonzero(m.geom_bodyid == foot)]
    on_floor = rest.xpos[foot, 2] - min(ends) + 0.07 * height  # the floor plane is at z 0
    feat = fake_features(objective)
    for body, z in (("pelvis", 0.5), ("foot_right", 0.45), ("foot_left", 0.1)):
        feat["pos"][body][..., 2] = z
    qvel, ctrl = np.zeros((3, 4, 27)), np.zeros((3, 4, 21))
    costs = objective.evaluate(feat, qvel, ctrl, only("Feet Down", weight=30.0))
    up_by = min(0.45 - (0.5 - 0.4 * height), 0.45 - on_floor)
    assert 0.1 < up_by < 0.3  # the lines lie between the two feet
    assert costs.total == pytest.approx(np.full(3, 30.0 * (np.hypot(up_by, 0.1) - 0.1)), rel=1e-9)  # per step
    legs = [{g for g, seen in zip(GROUPS, row) if seen} for row in costs.membership]
    assert legs == [{"right_leg"}, {"left_leg"}]  # one component a foot, in its leg's group
    assert np.allclose(costs.components[:, 0], costs.total) and not costs.components[:, 1].any()
    feat["pos"]["foot_right"][..., 2] = 0.1
    assert float(np.abs(objective.evaluate(feat, qvel, ctrl, only("Feet Down", weight=30.0)).total).max()) == 0.0
    low = 0.3 - 0.4 * height  # a low seat: the pelvis's line is below the floor
    for body, z in (("pelvis", 0.3), ("foot_right", on_floor - 0.01), ("foot_left", on_floor - 0.01)):
        feat["pos"][body][..., 2] = z
    standing_on_floor = objective.evaluate(feat, qvel, ctrl, only("Feet Down", weight=30.0)).total
    assert low < 0 and float(np.abs(standing_on_floor).max()) == 0.0
    feat["pos"]["foot_right"][..., 2] = on_floor + 0.1
    lifted = objective.evaluate(feat, qvel, ctrl, only("Feet Down", weight=30.0)).total
    assert lifted == pytest.approx(np.full(3, 30.0 * (np.hypot(0.1, 0.1) - 0.1)), rel=1e-9)
