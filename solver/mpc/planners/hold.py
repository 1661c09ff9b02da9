"""The controls that hold a character's pose where it is — the SMC sampler's "hold the current
pose" guess (Hämäläinen et al. 2014, §4.5): with torque motors, the torques that cancel gravity (and
the bias forces of the state's velocity set to zero) at each driven joint; with PD servos, targets
at the current joint angles."""
from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np

from ...physics.model import BuiltModel
from ...physics.rollout import FULLPHYSICS


def pose_holder(plan: BuiltModel) -> Callable[[np.ndarray], np.ndarray]:
    """hold(state) → (nu_character,) controls that hold the pose of a physics state of `plan`'s model."""
    m = plan.model
    data = mujoco.MjData(m)
    nu = plan.nu_character
    joints = m.actuator_trnid[:nu, 0]
    dofs = m.jnt_dofadr[joints]
    qadr = m.jnt_qposadr[joints]
    gear = m.actuator_gear[:nu, 0]
    lo, hi = m.actuator_ctrlrange[:nu, 0], m.actuator_ctrlrange[:nu, 1]
    servos = plan.actuation == "position"

    def hold(state: np.ndarray) -> np.ndarray:
        mujoco.mj_setState(m, data, state, FULLPHYSICS)
        if servos:
            return np.clip(data.qpos[qadr], lo, hi)
        data.qvel[:] = 0.0
        mujoco.mj_forward(m, data)  # qfrc_bias: gravity (and no Coriolis forces at rest)
        return np.clip(data.qfrc_bias[dofs] / gear, lo, hi)

    return hold
