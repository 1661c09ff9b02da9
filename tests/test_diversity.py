"""Diversity of alternatives against hand computations: two solutions compared at the keyframes both
reached (each at its own time), by the RMS of their hinge-angle differences; near-copies show as a
smallest pairwise distance of zero; and a run's result.json reports the figure of its solutions."""
import json

import mujoco
import numpy as np
import pytest
from test_cli import run_cli, short_task

from solver.physics.diversity import diversity, keyframe_poses, pair_distance

HINGES = np.array([7, 8])  # a free root (qpos 0–6) and two hinges


def _solution(times, angles):
    q = np.zeros((len(times), 9))
    q[:, 3] = 1.0
    q[:, 7:] = angles
    return np.asarray(times, dtype=float), q


def test_solutions_are_compared_at_their_own_keyframe_times():
    t = np.arange(5) * 0.1
    ta, qa = _solution(t, [[0, 0], [0.1, 0], [0.2, 0.2], [0.3, 0], [0.4, 0.4]])
    tb, qb = _solution(t, [[0, 0], [0.2, 0.2], [0.0, 0.6], [0.9, 0], [0.4, 0.4]])
    a = keyframe_poses(ta, qa, [0.2, np.nan], HINGES)  # keyframe 0 at 0.2 s; keyframe 1 not reached
    b = keyframe_poses(tb, qb, [0.1, 0.4], HINGES)  # keyframe 0 at 0.1 s: the same pose as a's
    np.testing.assert_allclose(a, [[0.2, 0.2], [np.nan, np.nan], [0.4, 0.4]])
    assert pair_distance(a, b) == 0.0  # only keyframe 0 is shared, and there they agree
    c = keyframe_poses(tb, qb, [0.3, np.nan], HINGES)  # keyframe 0 at 0.3 s: (0.9, 0) against (0.2, 0.2)
    assert pair_distance(a, c) == pytest.approx(np.sqrt((0.7 ** 2 + 0.2 ** 2) / 2))


def test_without_a_shared_keyframe_the_final_poses_are_compared():
    ta, qa = _solution([0, 1], [[0, 0], [0.3, 0.0]])
    tb, qb = _solution([0, 2], [[0, 0], [0.0, 0.4]])
    a, b = keyframe_poses(ta, qa, [np.nan], HINGES), keyframe_poses(tb, qb, [], HINGES)
    assert pair_distance(a, b) == pytest.approx(np.sqrt((0.3 ** 2 + 0.4 ** 2) / 2))


def test_near_copies_show_as_the_smallest_distance():
    t = [0.0, 1.0]
    p = [keyframe_poses(*_solution(t, [[0, 0], [x, 0]]), [], HINGES) for x in (0.0, 0.0, 0.6)]
    d = diversity(p)
    assert d["pairs"] == 3 and d["min_pairwise_rad"] == 0.0
    assert d["mean_pairwise_rad"] == pytest.approx(2 * 0.6 / np.sqrt(2) / 3, abs=1e-6)
    assert diversity(p[:1]) is None


def test_a_run_reports_the_diversity_of_its_solutions(tmp_path):
    out = tmp_path / "out"
    rc, _, stderr = run_cli("run", short_task(tmp_path), "--out", out, "--workers", "0", "--num-seeds", "2")
    assert rc == 0, stderr
    doc = json.loads((out / "result.json").read_text())
    model = mujoco.MjModel.from_xml_path(str(out / "model.xml"))
    hinge = [model.jnt_qposadr[j] for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    finals = [np.load(out / s["npz"])["qpos"][-1, hinge] for s in doc["solutions"]]  # no keyframes: final poses
    expected = np.sqrt(np.mean((finals[0] - finals[1]) ** 2))
    assert doc["diversity"]["pairs"] == 1 and doc["diversity"]["mean_pairwise_rad"] == pytest.approx(expected, abs=1e-6)
    assert expected > 1e-3  # the seeds' perturbations make different motions
