"""A keyed jump's height: the squat-jump preset's 'airborne' key is its pose 25 cm off the floor (its
lowest point, by hand from the shapes' ends); a motion whose feet rise 12 cm between the keys around it
has its apex there and has not reached the key (within 20% would be 20 cm), and says so in words; a
motion that rises 22 cm has. Keys on the floor are not judged."""
import json
from pathlib import Path

import mujoco
import numpy as np
import pytest

from solver.assist.problem import Problem
from solver.formats.task import task_from_dict
from solver.methods.assist import ASSIST
from solver.methods.physical import airborne_of
from solver.mpc.objectives.tracking import pose_columns
from solver.physics.airborne import airborne_words

ROOT = Path(__file__).resolve().parents[1]


def _lowest(model, data, geoms) -> float:
    """The lowest point of the shapes, from a capsule's two ends and a ball's centre, less the radius."""
    low = []
    for g in geoms:
        r = model.geom_size[g][0]
        if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE:
            axis = data.geom_xmat[g].reshape(3, 3)[:, 2]
            low.append(min(data.geom_xpos[g][2] + s * model.geom_size[g][1] * axis[2] for s in (-1, 1)) - r)
        else:
            assert model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE
            low.append(data.geom_xpos[g][2] - r)
    return min(low)


@pytest.fixture(scope="module")
def prep():
    return ASSIST.prepare(task_from_dict(json.loads((ROOT / "scenes/tasks/assist_squat_jump.json").read_text())))


def _jump(prep, rise: float):
    """Standing, the whole body lifted by rise·(1 − ((t − 0.5)/0.5)²) over a second."""
    built = prep.built
    stand = built.initial_qpos().copy()
    times = np.arange(0, 1.0001, 0.005)
    qpos = np.repeat(stand[None], len(times), axis=0)
    root = built.model.jnt_qposadr[built.model.joint("root").id]
    qpos[:, root + 2] += rise * (1 - ((times - 0.5) / 0.5) ** 2)
    return times, qpos, stand


@pytest.mark.parametrize("rise, reached", [(0.12, False), (0.22, True)])
def test_a_keyed_jump_is_reached_only_with_its_height(prep, rise, reached):
    built, kfs = prep.built, prep.keyframes
    m, data = built.model, mujoco.MjData(built.model)
    mine = [g for g in range(m.ngeom) if m.body(m.geom_bodyid[g]).name in built.character_bodies]
    times, qpos, stand = _jump(prep, rise)
    key_times = np.linspace(0.0, 1.0, len(kfs.qpos))  # 'airborne' (the fourth of six) at 0.6 s
    got = airborne_of(built, kfs, key_times, times, qpos)
    assert [a["name"] for a in got] == ["airborne"]
    a = got[0]
    data.qpos[:] = stand
    data.qpos[pose_columns(built)] = kfs.qpos[kfs.names.index("airborne")]
    mujoco.mj_kinematics(m, data)
    assert a["keyed_cm"] == pytest.approx(100 * _lowest(m, data, mine), abs=0.06)
    assert a["keyed_cm"] == pytest.approx(25, abs=0.1)
    data.qpos[:] = stand
    mujoco.mj_kinematics(m, data)
    standing = _lowest(m, data, mine)
    # the apex between the keys around it (0.4 and 0.8 s): the top of the parabola at 0.5 s
    assert a["apex_cm"] == pytest.approx(100 * (standing + rise), abs=0.06) and a["apex_at_s"] == pytest.approx(0.5)
    assert a["reached"] is reached
    assert airborne_words(got) == ([] if reached else [f"'airborne' rises {a['apex_cm']:.0f} of the 25 cm keyed"])


def test_the_assisted_search_pays_for_an_apex_below_the_keyed_height_by_hand(prep):
    """The search's apex term: w_apex × the key's weight × the square of how far the root's highest point
    between the keys around 'airborne' stays below the keyed root height; nothing for a root that rises
    past it, for a rise outside those keys, or before the curriculum scores the key."""
    problem = Problem(prep.built, prep.keyframes, prep.settings)
    k = prep.keyframes.names.index("airborne")
    assert problem.airborne == [k] and prep.settings.w_apex == 10.0 and prep.keyframes.weights[k] == 20.0
    keyed = prep.keyframes.qpos[k][2]
    dt, T = problem.dt_sim, 400
    times = np.array([0.0, 0.5, 0.9, 1.2, 1.5, 1.9])  # the six keys' times (the candidate's own)
    decoded = problem.decode(np.zeros((3, problem.ndim)))
    decoded.keyframe_times[:] = times
    state = np.zeros((3, T, problem.qpos_slice.stop))
    t = (np.arange(T) + 1) * dt
    z = problem.char_cols[2] + problem.qpos_slice.start
    state[0, :, z] = keyed - 0.07 * (t < 2)  # 7 cm short all along
    state[1, :, z] = keyed - 0.3 + 0.35 * ((t > 1.0) & (t < 1.1))  # up to 5 cm past it between 0.9 and 1.5 s
    state[2, :, z] = keyed - 0.3 + 0.35 * (t > 1.6)  # past it only after the next key
    got = problem.apex_shortfall(decoded, state, upto=5)
    np.testing.assert_allclose(got, [10.0 * 20.0 * 0.07 ** 2, 0.0, 10.0 * 20.0 * 0.3 ** 2], rtol=1e-9)
    assert np.all(problem.apex_shortfall(decoded, state, upto=k - 1) == 0.0)  # the key not scored yet
    # the key scored last: the window ends at it (1.2 s), so a rise after it does not count yet
    state[1, :, z] = keyed - 0.3 + 0.35 * ((t > 1.3) & (t < 1.4))
    assert problem.apex_shortfall(decoded, state, upto=k)[1] == pytest.approx(10.0 * 20.0 * 0.3 ** 2)
    assert problem.apex_shortfall(decoded, state, upto=k + 1)[1] == 0.0


def test_a_key_the_motion_never_rises_to_says_it_rises_0_cm():
    """A physical version that never leaves the floor measures an apex of -0.0 cm (a contact's depth,
    rounded): in words it rises 0 cm, not "-0"."""
    keys = [{"name": "airborne", "keyed_cm": 25.0, "apex_cm": -0.0, "reached": False},
            {"name": "up", "keyed_cm": 25.0, "apex_cm": -0.4, "reached": False}]
    assert airborne_words(keys) == ["'airborne' rises 0 of the 25 cm keyed", "'up' rises 0 of the 25 cm keyed"]
