"""The physics character made from a rig (`builders.proportions`): the default humanoid's strengths scaled
to its size, and a person's ankles — checked against MuJoCo's own mass and by standing it on its servos."""
from __future__ import annotations

import copy

import mujoco
import numpy as np

from solver.builders.characters import character_mass, humanoid
from solver.builders.environments import standing_pose
from solver.builders.mjcf import compile_spec, initial_qpos, scene_to_spec
from solver.builders.proportions import ANKLE_STRENGTH_PER_KG, proportioned_humanoid, rest_frames
from solver.formats.scene import SCHEMA_VERSION, Environment, SceneDesc

ANKLES = ("ankle_y_right", "ankle_x_right", "ankle_y_left", "ankle_x_left")


def _default_points() -> dict:
    """The default humanoid's own joints as a rig's bone heads and tails."""
    base = humanoid()
    frames = rest_frames(base)
    points = {}
    for b in base.bodies:
        kids = [c for c in base.bodies if c.parent == b.name]
        tail = frames[kids[0].name][0] if kids else frames[b.name][0] + frames[b.name][1][:, 1] * b.length
        points[b.name] = (frames[b.name][0], tail)
    return points


def _model(character) -> tuple[SceneDesc, mujoco.MjModel]:
    """The character standing on a floor, driven by PD servos as a tracking drives it."""
    scene = SceneDesc(schema_version=SCHEMA_VERSION, name="standing", character=character,
                      environment=Environment(floor=True), initial_pose=standing_pose())
    return scene, compile_spec(scene_to_spec(scene, actuation="position", target_margin=0.5))


def test_a_rig_made_character_has_a_persons_ankles_and_the_defaults_other_strengths():
    made = proportioned_humanoid(_default_points(), mass=60.0, name="from a rig")
    _, model = _model(made)
    mass = float(model.body_subtreemass[1])  # MuJoCo's, from the geoms
    assert abs(mass - 60.0) < 1e-6
    default = {a.joint: a for a in humanoid().actuators}
    scaled = {}  # each joint's strength over the default's
    for i in range(model.nu):
        name = model.actuator(i).name
        limit, kp, kv = model.actuator_forcerange[i, 1], model.actuator_gainprm[i, 0], -model.actuator_biasprm[i, 2]
        d = default[name]
        if name in ANKLES:
            assert abs(limit - ANKLE_STRENGTH_PER_KG * mass) < 1e-6
        scaled[name] = limit / d.gear
        assert abs(kp / limit - d.kp / d.gear) < 1e-9 and abs(kv / kp - d.kv / d.kp) < 1e-9  # the servo alike
    others = [v for k, v in scaled.items() if k not in ANKLES]
    assert max(others) - min(others) < 1e-9 * max(others)  # one scale for the rest: the default's ratios
    assert min(scaled[a] for a in ANKLES) > 2.5 * others[0]  # the ankles three times the scaled default's
    assert {a.joint: a.gear for a in humanoid().actuators}["ankle_y_right"] == 20.0  # the default is the paper's


def _capsule_bottom(model, data, g) -> float:
    ends = data.geom_xpos[g][2] + np.array([-1, 1]) * data.geom_xmat[g][8] * model.geom_size[g][1]
    return float(ends.min() - model.geom_size[g][0])


def _held(character, seconds: float = 3.0) -> tuple[float, float]:
    """The character standing on the floor, its servos holding the standing pose and nothing else: (its
    head's lowest height, its feet's furthest slide) over `seconds`."""
    scene, model = _model(character)
    data = mujoco.MjData(model)
    data.qpos[:] = initial_qpos(scene, model)
    data.ctrl[:] = [data.qpos[model.jnt_qposadr[model.actuator_trnid[i, 0]]] for i in range(model.nu)]
    mujoco.mj_forward(model, data)
    data.qpos[2] -= min(_capsule_bottom(model, data, g) for g in range(model.ngeom) if model.geom_bodyid[g] > 0)
    mujoco.mj_forward(model, data)  # standing on the floor
    head = model.body("head").id
    feet = [model.body(f"foot_{s}").id for s in ("left", "right")]
    start = data.xpos[feet].copy()
    lowest, slide = np.inf, 0.0
    for _ in range(int(seconds / model.opt.timestep)):
        mujoco.mj_step(model, data)
        lowest = min(lowest, float(data.xpos[head, 2]))
        slide = max(slide, float(np.linalg.norm((data.xpos[feet] - start)[:, :2], axis=1).max()))
    return lowest, slide


def test_a_persons_ankles_hold_the_standing_character_up_the_defaults_do_not():
    """Standing still on its servos alone (their stiffness is five times their strength), the character
    made from a rig stays up; the same character with the default's ankle strength tips over: its two
    ankles' stiffness is less than what gravity turns the body with as it leans (its weight × the
    height of its centre of mass, per radian)."""
    made = proportioned_humanoid(_default_points(), mass=60.0, name="from a rig")
    weak = copy.deepcopy(made)
    per_kg = {a.joint: a.gear for a in humanoid().actuators}["ankle_y_right"] / character_mass(humanoid())
    for a in weak.actuators:
        if a.joint in ANKLES:
            factor = per_kg * 60.0 / a.gear  # the default humanoid's strength per kg (20 N·m for its 40.8 kg)
            a.gear, a.kp, a.kv = a.gear * factor, a.kp * factor, a.kv * factor
    head_up, slid = _held(made)
    head_weak, _ = _held(weak)
    standing = 1.55  # the head's height standing
    assert head_up > standing - 0.02 and slid < 0.01, (head_up, slid)
    assert head_weak < standing - 0.5, head_weak
