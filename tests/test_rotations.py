"""The quaternion helpers against MuJoCo's own quaternion arithmetic."""
import mujoco
import numpy as np

from solver.core import rotations


def test_the_angle_between_orientations_is_mujocos_rotation_difference():
    """`angle_between` is the norm of MuJoCo's `mju_subQuat` (the rotation taking one orientation to
    the other), whatever q's sign or length, for whole arrays at once."""
    rng = np.random.default_rng(3)
    q = rng.normal(size=(50, 4))
    target = q / np.linalg.norm(q, axis=1, keepdims=True)
    target = target + rng.normal(scale=rng.choice([1e-4, 0.1, 1.0], size=(50, 1)), size=(50, 4))
    target /= np.linalg.norm(target, axis=1, keepdims=True)
    scaled = q * rng.choice([-3.0, -0.5, 0.2, 7.0], size=(50, 1))  # same orientations, any sign and length
    expected = []
    for a, b in zip(q, target):
        diff = np.zeros(3)
        mujoco.mju_subQuat(diff, a / np.linalg.norm(a), b)
        expected.append(np.linalg.norm(diff))
    got = rotations.angle_between(scaled, target)
    assert got.shape == (50,)
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert float(rotations.angle_between(q[0], q[0] / np.linalg.norm(q[0]))) < 1e-6
    quarter = rotations.from_axis_angle((0, 0, 1), np.pi / 2)
    assert abs(float(rotations.angle_between(quarter, [1.0, 0, 0, 0])) - np.pi / 2) < 1e-12


def test_matrices_to_quaternions_at_once_match_mujoco_one_by_one():
    """Every branch of Shepperd's method (trace or one diagonal entry largest), half-turns included."""
    from solver.core.rotations import from_matrices
    rng = np.random.default_rng(3)
    q = rng.normal(size=(400, 4))
    q[:4] = [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0.6, 0.8, 0]]  # half-turns: w = 0
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    mats = np.empty((len(q), 9))
    for i in range(len(q)):
        mujoco.mju_quat2Mat(mats[i], q[i])
    got = from_matrices(mats.reshape(-1, 3, 3))
    expected = np.empty((len(q), 4))
    for i in range(len(q)):
        mujoco.mju_mat2Quat(expected[i], mats[i])
    assert np.all(got[:, 0] >= 0) and np.allclose(np.linalg.norm(got, axis=1), 1.0)
    np.testing.assert_allclose(np.abs(np.sum(got * expected, axis=1)), 1.0, atol=1e-12)  # the same rotation
    np.testing.assert_allclose(np.abs(np.sum(got * q, axis=1)), 1.0, atol=1e-12)
