"""The control term's cosh norm, softened for a character whose motors carry more than the default humanoid's
do for their strength.

MuJoCo MPC charges a motor p² (cosh(u / p) − 1) for its control u (its torque over its strength), p = 0.05:
about u² / 2 while u is small, a steep wall past a few p. That wall is set for MuJoCo MPC's humanoid (PhysKey's
default), whose most-loaded motor — its abdomen's, under the trunk at arm's length — carries 1.26 times its
strength. dm_control's CMU humanoid carries a trunk twice as heavy on the same 40 N·m spine motors (2.59 times):
holding itself up cost it about a hundred times what it costs the default humanoid, so the planner let it slump
over an armrest and fall forward reaching rather than stand (benchmarks/RESULTS.md, "Other characters"). A
motor's load is the weight of the side of its joint away from the pelvis (the trunk for a spine joint, the leg
for a hip, the arm for a shoulder) at that side's centre of mass's distance from the joint's axis at rest. The
character's p is the default's × its most-loaded motor's load over the default's, never below the default's, for
every motor (softening the spine alone did not stop the falls: the ankles and hips balance the heavier trunk),
to 3 decimals: the default humanoid, and any character no motor of which works harder, keeps MuJoCo MPC's
exactly.
"""
from __future__ import annotations

import mujoco
import numpy as np

from ...physics.model import BuiltModel

CONTROL_P = 0.05  # MuJoCo MPC's cosh parameter of the control term
# The default humanoid's most-loaded motor (abdomen_x): its trunk's weight at its lever over the motor's strength
DEFAULT_MOST_LOADED = 1.26


def motor_loads(built: BuiltModel) -> np.ndarray:
    """(nu_character,) each character motor's load over its strength: the weight of the side of its joint away
    from the pelvis, times the distance of that side's centre of mass from the joint's axis with the character at
    rest, over the motor's torque at full control. Zeros for a character without a pelvis role."""
    m = built.model
    nu = built.nu_character
    pelvis = built.roles.get("pelvis")
    if pelvis is None or nu == 0:
        return np.zeros(nu)
    data = mujoco.MjData(m)
    mujoco.mj_kinematics(m, data)
    mujoco.mj_comPos(m, data)
    bodies = {m.body(b.name).id for b in built.scene.character.bodies}
    root = next(b for b in bodies if int(m.body_parentid[b]) not in bodies)
    total, centre = float(m.body_subtreemass[root]), data.subtree_com[root]
    pelvis_path = _path_to_root(m, m.body(pelvis).id)
    gravity = float(np.linalg.norm(m.opt.gravity))
    loads = np.zeros(nu)
    for a in range(nu):
        joint = int(m.actuator_trnid[a, 0])
        body = int(m.jnt_bodyid[joint])
        mass, com = float(m.body_subtreemass[body]), data.subtree_com[body]
        if body in pelvis_path:  # the pelvis hangs below this joint: the load is the rest of the character
            mass, com = total - mass, (total * centre - mass * com) / max(total - mass, 1e-12)
        arm = com - data.xanchor[joint]
        axis = data.xaxis[joint]
        lever = float(np.linalg.norm(arm - (arm @ axis) * axis))
        strength = abs(float(m.actuator_gear[a, 0]))
        loads[a] = mass * gravity * lever / strength if strength > 0 else 0.0
    return loads


def control_softness(built: BuiltModel) -> float:
    """The character's cosh parameter p (see the module's docstring)."""
    return _softness(motor_loads(built))


def _softness(loads: np.ndarray) -> float:
    """p for a character whose motors carry `loads` (`motor_loads`)."""
    most = float(loads.max()) if len(loads) else 0.0
    return round(CONTROL_P * max(most / DEFAULT_MOST_LOADED, 1.0), 3)


def softened_words(built: BuiltModel) -> list[str]:
    """The run's note where the control term is softened for the character (none where no motor of it carries more
    than the default humanoid's most-loaded one)."""
    if built.actuation != "motor":
        return []
    loads = motor_loads(built)
    if _softness(loads) <= CONTROL_P:
        return []
    most = built.model.joint(int(built.model.actuator_trnid[int(np.argmax(loads)), 0])).name
    share = loads.max() / DEFAULT_MOST_LOADED
    return [f"a heavy body on weak motors: {most} carries {share:.1f}× the load the default humanoid's busiest motor "
            f"does for its strength, so effort is charged {share:.1f}× more gently (the Control term) to let it hold "
            f"itself up"]


def control_cost(ctrl: np.ndarray, softness: float) -> np.ndarray:
    """p² (cosh(u / p) − 1) of each control u."""
    return softness ** 2 * (np.cosh(ctrl / softness) - 1.0)


def _path_to_root(m: mujoco.MjModel, body: int) -> set[int]:
    """`body` and its ancestors (the world excluded)."""
    path = set()
    while body > 0:
        path.add(body)
        body = int(m.body_parentid[body])
    return path
