"""Slow, obvious reference implementations the tests hold the fast paths to (not shipped: the
solver has no use for them)."""
from __future__ import annotations

import mujoco
import numpy as np

from solver.core.rotations import rotate
from solver.physics.rollout import FULLPHYSICS, Trajectories, find_divergence, get_state, state_layout


def reference_rollout(model: mujoco.MjModel, initial_state: np.ndarray, ctrl: np.ndarray,
                      mocap_pos: np.ndarray | None = None) -> Trajectories:
    """The per-step Python loop the rollout engine must match."""
    ctrl = np.asarray(ctrl, dtype=float)
    nroll, nstep, _ = ctrl.shape
    nstate = mujoco.mj_stateSize(model, FULLPHYSICS)
    state = np.empty((nroll, nstep, nstate))
    sensordata = np.empty((nroll, nstep, model.nsensordata))
    data = mujoco.MjData(model)
    init = np.broadcast_to(np.asarray(initial_state, dtype=float), (nroll, nstate))
    for r in range(nroll):
        mujoco.mj_resetData(model, data)
        mujoco.mj_setState(model, data, init[r], FULLPHYSICS)
        for t in range(nstep):
            data.ctrl[:] = ctrl[r, t]
            if mocap_pos is not None:
                data.mocap_pos[:] = mocap_pos[r, t]
            mujoco.mj_step(model, data)
            state[r, t] = get_state(model, data)
            sensordata[r, t] = data.sensordata
    time_index = state_layout(model)["time"].start
    return Trajectories(state, sensordata, find_divergence(state, init[:, time_index], model.opt.timestep, time_index))


def body_axis(features, body: str, axis: int) -> np.ndarray:
    """World direction of the body's local axis 0/1/2 (x/y/z), from its quaternion in `features`."""
    return rotate(features.body_quat(body), np.eye(3)[axis])


def body_point(features, body: str, local) -> np.ndarray:
    """World position of a point given in the body's frame."""
    return features.body_pos(body) + rotate(features.body_quat(body), np.asarray(local, dtype=float))


def load_result_npz(path) -> dict[str, np.ndarray]:
    """Every array of a result.npz (loaded without pickles, as Blender reads it)."""
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}
