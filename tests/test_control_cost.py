"""The control term's cosh norm per character: MuJoCo MPC's for the default humanoid and dm_control's copy of
it, softened for dm_control's CMU humanoid, whose trunk weighs twice the default's on the same spine motors
(`tests/data/dm_control`, Apache 2.0) — checked against the loads summed body by body, and said in the notes."""
from pathlib import Path

import mujoco
import numpy as np
import pytest
from test_cli import run_cli

from solver.mpc.objectives.control import CONTROL_P, DEFAULT_MOST_LOADED, control_cost, control_softness, motor_loads
from solver.run.cli import _prepare

ROOT = Path(__file__).resolve().parents[1]
DM = ROOT / "tests" / "data" / "dm_control"
REACH = str(ROOT / "scenes" / "tasks" / "reach_hand_targets.json")


def _built(character=None):
    return _prepare(REACH, character=None if character is None else str(DM / character), notes=[])[1].built


def _load_summed(built, joint: str, side: list[str]) -> float:
    """A motor's load from the bodies named in `side` (the side of its joint it holds up), one by one: their
    weights at their centres of mass, as one mass at its distance from the joint's axis, over the motor's strength."""
    m = built.model
    data = mujoco.MjData(m)
    mujoco.mj_forward(m, data)
    ids = [m.body(b).id for b in side]
    mass = sum(m.body_mass[i] for i in ids)
    com = sum(m.body_mass[i] * data.xipos[i] for i in ids) / mass
    j = m.joint(joint).id
    arm = com - data.xanchor[j]
    lever = np.linalg.norm(arm - (arm @ data.xaxis[j]) * data.xaxis[j])
    gear = m.actuator_gear[next(a for a in range(m.nu) if m.actuator_trnid[a, 0] == j), 0]
    return mass * 9.81 * lever / gear


def _actuator(built, joint: str) -> int:
    m = built.model
    return next(a for a in range(built.nu_character) if m.actuator_trnid[a, 0] == m.joint(joint).id)


@pytest.mark.parametrize("character", [None, "humanoid.xml"])
def test_the_default_humanoid_keeps_mujoco_mpcs_control_cost(character):
    """Its most-loaded motor is its abdomen's, under the trunk, arms and head (its tree hangs from the torso,
    so that is the side of the joint away from the pelvis): the load the others are measured against; p stays
    MuJoCo MPC's 0.05, on dm_control's copy of the humanoid too."""
    built = _built(character)
    loads = motor_loads(built)
    abdomen = "abdomen_x"
    upper = ["torso", "head", "waist_lower", "upper_arm_right", "lower_arm_right", "hand_right",
             "upper_arm_left", "lower_arm_left", "hand_left"]
    if character:  # dm_control's names
        upper = ["torso", "head", "lower_waist", "right_upper_arm", "right_lower_arm", "right_hand",
                 "left_upper_arm", "left_lower_arm", "left_hand"]
    assert int(np.argmax(loads)) == _actuator(built, abdomen)
    assert loads.max() == pytest.approx(_load_summed(built, abdomen, upper), rel=1e-9)
    assert loads.max() == pytest.approx(DEFAULT_MOST_LOADED, abs=0.005)
    assert control_softness(built) == CONTROL_P


def test_a_heavy_trunk_on_weak_spine_motors_is_charged_more_gently():
    """The CMU humanoid's lower back holds its trunk, arms and head — twice the default's load on a 40 N·m
    motor — so every motor's cosh parameter widens by that much: holding a control of 0.5 costs a fraction of
    what MuJoCo MPC's norm charges; the run says so."""
    built = _built("humanoid_CMU.xml")
    m = built.model
    root = m.body("root").id
    lower_back = m.body("lowerback").id
    above = [m.body(i).name for i in range(m.nbody) if i != root and _descends(m, i, lower_back)]
    assert {"head", "thorax", "lhand", "rhand"} <= set(above)
    loads = motor_loads(built)
    expected = _load_summed(built, "lowerbackrx", above)
    assert loads[_actuator(built, "lowerbackrx")] == pytest.approx(expected, rel=1e-9)
    assert loads.max() == pytest.approx(expected, rel=1e-9) and 2.4 < expected < 2.8
    softness = control_softness(built)
    assert softness == round(CONTROL_P * expected / DEFAULT_MOST_LOADED, 3)
    assert control_cost(np.array(0.5), softness) < 0.05 * control_cost(np.array(0.5), CONTROL_P)
    assert control_cost(np.array(0.01), softness) == pytest.approx(0.5 * 0.01 ** 2, rel=1e-3)  # small: u² / 2
    code, out, err = run_cli("validate", REACH, "--character", DM / "humanoid_CMU.xml")
    assert code == 0, err
    assert "a heavy body on weak motors: lowerbackrx carries 2.1× the load the default humanoid's busiest motor" in out
    code, out, err = run_cli("validate", REACH)
    assert code == 0 and "Control:" not in out


def _descends(m, body: int, ancestor: int) -> bool:
    while body > 0:
        if body == ancestor:
            return True
        body = int(m.body_parentid[body])
    return False
