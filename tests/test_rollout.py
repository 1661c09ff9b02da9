"""The batched engine against the slow per-step loop, splines, features against MuJoCo FK."""
import mujoco
import numpy as np
import pytest
from reference_impl import body_axis, body_point, reference_rollout

from solver.core import splines
from solver.formats.task import SceneRef, build_scene
from solver.physics.features import Features
from solver.physics.model import build_model
from solver.physics.rollout import RolloutEngine, get_state, state_layout


@pytest.fixture(scope="module")
def built():
    scene = build_scene(SceneRef(environment="armchair"))
    return build_model(scene, assist_bodies=["torso", "hand_right"])


@pytest.fixture(scope="module")
def start(built):
    m = built.model
    d = mujoco.MjData(m)
    d.qpos[:] = built.initial_qpos()
    mujoco.mj_forward(m, d)
    return get_state(m, d)


def _random_inputs(built, nroll=5, nstep=40, seed=0):
    m = built.model
    rng = np.random.default_rng(seed)
    ctrl = rng.uniform(-0.5, 0.5, (nroll, nstep, m.nu))
    ctrl[..., built.nu_character:] = rng.uniform(0, 1, (nroll, nstep, built.nassist))
    mocap = np.asarray(m.key_mpos[0]).reshape(m.nmocap, 3) + rng.normal(0, 0.05, (nroll, nstep, m.nmocap, 3))
    return ctrl, mocap


@pytest.mark.parametrize("nthread", [1, 2])
def test_engine_equals_reference_loop(built, start, nthread):
    ctrl, mocap = _random_inputs(built)
    with RolloutEngine(built.model, nthread) as engine:
        fast = engine.run(start, ctrl, mocap)
        fast_no_mocap = engine.run(start, ctrl)
    slow = reference_rollout(built.model, start, ctrl, mocap)
    np.testing.assert_allclose(fast.state, slow.state, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fast.sensordata, slow.sensordata, rtol=0, atol=1e-9)
    assert not np.allclose(fast_no_mocap.state, fast.state)  # the mocap channel really acts


def test_engine_rejects_wrong_shapes(built, start):
    with RolloutEngine(built.model, 1) as engine:
        with pytest.raises(ValueError, match="ctrl must have shape"):
            engine.run(start, np.zeros((2, 3, built.model.nu + 1)))
        with pytest.raises(ValueError, match="initial_state must have shape"):
            engine.run(start[:-1], np.zeros((2, 3, built.model.nu)))
        with pytest.raises(ValueError, match="mocap_pos must have shape"):
            engine.run(start, np.zeros((2, 3, built.model.nu)), np.zeros((2, 3, 1, 3)))


def test_assist_pulls_a_link_to_its_target(built, start):
    """β = 1 drags the right hand towards a target 0.5 m above it; β = 0 leaves it alone."""
    m = built.model
    nstep = 200
    hand0 = Features(built, RolloutEngine(m, 1).run(start, np.zeros((1, 1, m.nu)))).body_pos("hand_right")[0, 0]
    target = np.asarray(m.key_mpos[0]).reshape(m.nmocap, 3).copy()
    target[built.assist_bodies.index("hand_right")] = hand0 + [0, 0, 0.5]
    ctrl = np.zeros((2, nstep, m.nu))
    ctrl[0, :, built.nu_character + built.assist_bodies.index("hand_right")] = 1.0
    mocap = np.broadcast_to(target, (2, nstep) + target.shape)
    with RolloutEngine(m, 1) as engine:
        f = Features(built, engine.run(start, ctrl, mocap))
    end = f.body_pos("hand_right")[:, -1]
    goal = hand0 + [0, 0, 0.5]
    assert np.linalg.norm(end[0] - goal) < 0.15
    assert np.linalg.norm(end[1] - goal) > 0.4


def test_features_match_forward_kinematics(built, start):
    ctrl, mocap = _random_inputs(built, nroll=2, nstep=30, seed=3)
    with RolloutEngine(built.model, 2) as engine:
        f = Features(built, engine.run(start, ctrl, mocap))
    m = built.model
    d = mujoco.MjData(m)
    for r, t in ((0, 5), (1, 17), (1, 28)):
        d.qpos[:] = f.qpos[r, t]
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        for body in ("torso", "shin_left", "hand_right"):
            b = m.body(body).id
            np.testing.assert_allclose(f.body_pos(body)[r, t], d.xpos[b], atol=1e-12)
            np.testing.assert_allclose(np.stack([body_axis(f, body, k)[r, t] for k in range(3)], axis=1),
                                       d.xmat[b].reshape(3, 3), atol=1e-12)
        local = np.array([0.01, 0.02, -0.03])
        np.testing.assert_allclose(body_point(f, "foot_left", local)[r, t],
                                   d.xpos[m.body("foot_left").id]
                                   + d.xmat[m.body("foot_left").id].reshape(3, 3) @ local,
                                   atol=1e-12)
        np.testing.assert_allclose(f.com[r, t], d.subtree_com[m.body("torso").id], atol=1e-12)
    assert f.time[0, 0] == pytest.approx(m.opt.timestep)


def test_state_layout_matches_mujoco(built, start):
    lay = state_layout(built.model)
    np.testing.assert_array_equal(start[lay["qpos"]], built.initial_qpos())
    assert lay["qvel"].stop - lay["qvel"].start == built.model.nv


@pytest.mark.parametrize("kind", splines.KINDS)
def test_splines_against_pointwise_formula(kind):
    knot_t = np.array([0.0, 0.1, 0.35])
    rng = np.random.default_rng(1)
    values = rng.normal(size=(4, 3, 2))
    times = np.linspace(-0.05, 0.4, 37)
    out = splines.evaluate(knot_t, values, times, kind)
    assert out.shape == (4, 37, 2)
    for r in range(4):
        for k, t in enumerate(times):
            tc = min(max(t, 0.0), 0.35)
            i = 0 if tc < 0.1 else 1
            t0, t1 = knot_t[i], knot_t[i + 1]
            v0, v1 = values[r, i], values[r, i + 1]
            s = (tc - t0) / (t1 - t0)
            if kind == "zero":
                want = v1 if s >= 1 else v0
            elif kind == "linear":
                want = v0 + s * (v1 - v0)
            else:
                sec = [(values[r, j + 1] - values[r, j]) / (knot_t[j + 1] - knot_t[j]) for j in range(2)]
                slope = [sec[0], 0.5 * (sec[0] + sec[1]), sec[1]]
                h = t1 - t0
                want = ((2 * s**3 - 3 * s**2 + 1) * v0 + (s**3 - 2 * s**2 + s) * h * slope[i]
                        + (-2 * s**3 + 3 * s**2) * v1 + (s**3 - s**2) * h * slope[i + 1])
            np.testing.assert_allclose(out[r, k], want, atol=1e-12)
    # Every kind passes through its knots.
    np.testing.assert_allclose(splines.evaluate(knot_t, values, knot_t, kind), values, atol=1e-12)
