"""Sticky grasps against friction: the hands' whole wrench on a held object (welds and contacts), split
as hands touching it only at their points could give it, against setups whose forces are known and
hand-computed couples."""
import mujoco
import numpy as np
import pytest

from solver.physics.grasp import Grasper, grasp_forces, weld_name


def _two_hands_pushing(push: float, offset: float = 0.0):
    """A 2 kg box (0.3 m across, friction 0.9) welded between two spheres for hands, each on a slide
    joint across the box and pressed 1 cm into its side by a motor pushing `push` N towards it
    (negative: pulling away), the box's centre `offset` m beside the line between the hands. Returns
    the grasper's summary after 0.5 s."""
    half, r = 0.15, 0.04
    hands = "".join(f"""
      <body name="{n}" pos="0 {s * (half + r - 0.01)} 1"><joint name="{n}" type="slide" axis="0 1 0"/>
        <geom type="sphere" size="{r}" mass="0.5" friction="0.9"/></body>"""
                    for n, s in (("hand_a", -1), ("hand_b", 1)))
    xml = f"""<mujoco><option cone="elliptic" impratio="10"/><worldbody>{hands}
      <body name="box" pos="{offset} 0 1"><freejoint/>
        <geom type="box" size="0.11 {half} 0.11" mass="2" friction="0.9"/></body>
    </worldbody><actuator><motor joint="hand_a" gear="1" ctrlrange="-100 100"/>
      <motor joint="hand_b" gear="-1" ctrlrange="-100 100"/></actuator>
    <equality><weld name="{weld_name('hand_a', 'box')}" body1="hand_a" body2="box"/>
      <weld name="{weld_name('hand_b', 'box')}" body1="hand_b" body2="box"/></equality></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.ctrl[:] = push
    grasper = Grasper(m, [], [("hand_a", "box"), ("hand_b", "box")])
    for _ in range(int(0.5 / m.opt.timestep)):
        mujoco.mj_step(m, d)
        grasper.measure(m, d, m.opt.timestep)
    return grasper.summary(m)


def test_a_grasp_squeezed_hard_enough_is_within_friction_and_one_pulled_apart_is_not():
    """The hands' whole force on the box, weld and contact, split at its sides, against a setup whose
    forces are known: at rest each hand presses with its motor's force, and the two hands' shears
    carry the box's weight. The hands sit 1 cm into the box, so contact pushes them out while the welds
    pull them in: the weld's force alone would read as the hands pulling (−46 N), not pressing.
    50 N a hand holds 2 kg by friction 0.9 (2 × 0.9 × 50 = 90 N ≥ 19.6 N); hands pulling away hold
    it by the weld alone, beyond friction the whole time."""
    squeezed = _two_hands_pushing(50.0)
    for g in squeezed:
        assert g["friction"] == pytest.approx(0.9)
        assert 48.0 <= g["max_squeeze_n"] <= 60.0  # the motor's push at rest (and the overshoot settling)
        assert g["max_shear_n"] == pytest.approx(9.81, rel=0.1)  # half the box's weight (symmetry)
        assert g["beyond_friction_s"] < 0.01 and g["held_s"] == pytest.approx(0.5, abs=0.01)
    assert sum(g["max_shear_n"] for g in squeezed) == pytest.approx(19.62, rel=0.05)
    for g in _two_hands_pushing(-20.0):
        assert g["max_squeeze_n"] < 0.0  # pulling the box apart: nothing a contact could give
        assert g["beyond_friction_s"] == pytest.approx(g["held_s"], abs=0.01)


def test_a_box_held_off_its_centre_needs_the_palms_to_twist():
    """Hands on a line 10 cm beside the box's centre: its weight (19.62 N) twists it about that line
    by 1.962 N·m, which forces at the two hands' points cannot resist (they only turn it about other
    axes) and the holding hand's weld carries as torque. Only the palms' friction could: ⅔ μ N R a
    hand, 0.024 N·m per newton of squeeze with μ 0.9 and R 4 cm. Squeezed 50 N (2.4 N·m) that is
    within friction; squeezed 30 N (1.44 N·m) it is not, though 30 N holds the weight's shear
    (2 × 0.9 × 30 = 54 N ≥ 19.62 N) and the shear alone reads as a good grasp. Centred, 30 N holds."""
    for push, offset, beyond in ((50.0, 0.1, False), (30.0, 0.1, True), (30.0, 0.0, False)):
        grasps = _two_hands_pushing(push, offset)
        for g in grasps:
            assert g["max_couple_nm"] == pytest.approx(19.62 * offset, abs=0.1)  # (and the settling)
            assert g["max_shear_n"] == pytest.approx(9.81, rel=0.1)  # the couple's forces are about the line
            assert 0.95 * push <= g["max_squeeze_n"] <= 1.25 * push  # the push at rest (and the settling)
            assert g["held_s"] == pytest.approx(0.5, abs=0.01)
            if beyond:
                assert g["beyond_friction_s"] == pytest.approx(g["held_s"], abs=0.02)
            else:
                assert g["beyond_friction_s"] < 0.01


def test_the_couple_two_hands_make_by_hand():
    """`grasp_forces` against hand-computed cases: a couple about an axis across the line between two
    hands 0.3 m apart is a push and a pull of 2 N·m / 0.3 m; one about that line is left to the
    palms; one hand makes no couple at all; forces with the moments given leave none to make."""
    a, b = np.array([0.0, -0.15, 0.0]), np.array([0.0, 0.15, 0.0])
    forces, couple, unmade = grasp_forces([np.zeros(3), np.zeros(3)], [np.array([0, 0, 2.0]), np.zeros(3)], [a, b])
    assert couple == pytest.approx(2.0) and unmade == pytest.approx(0.0, abs=1e-9)
    assert forces[0] == pytest.approx([2.0 / 0.3, 0, 0]) and forces[1] == pytest.approx([-2.0 / 0.3, 0, 0])
    assert np.cross(a, forces[0]) + np.cross(b, forces[1]) == pytest.approx([0, 0, 2.0])
    forces, couple, unmade = grasp_forces([np.zeros(3), np.zeros(3)], [np.array([0, 1.0, 0]), np.zeros(3)], [a, b])
    assert couple == pytest.approx(1.0) and unmade == pytest.approx(1.0)
    assert forces[0] == pytest.approx(np.zeros(3)) and forces[1] == pytest.approx(np.zeros(3))
    forces, couple, unmade = grasp_forces([np.array([0, 0, 1.0])], [np.array([0, 1.0, 0])], [a])
    assert couple == pytest.approx(np.hypot(1.0, 0.15)) and unmade == pytest.approx(couple)  # ŷ + 0.15 x̂
    # a weight hung at the centre by two hands lifting 1 N each: moments cancel, no couple
    forces, couple, unmade = grasp_forces([np.array([0, 0, 1.0])] * 2, [np.cross(a, [0, 0, 1.0]),
                                                                         np.cross(b, [0, 0, 1.0])], [a, b])
    assert couple == pytest.approx(0.0, abs=1e-12) and forces[0] == pytest.approx([0, 0, 1.0])
