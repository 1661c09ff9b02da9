"""Batched open-loop rollouts on `mujoco.rollout`, with a thread pool kept alive between calls.

Inputs are whole arrays (initial states, per-step controls, optional per-step mocap positions and
assist β); outputs are MuJoCo's full-physics state and sensor data per step, which `features`
slices into qpos, body poses and the like. There is no Python in the simulation loop.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import mujoco
import mujoco.rollout
import numpy as np

FULLPHYSICS = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
CTRL = int(mujoco.mjtState.mjSTATE_CTRL)
MOCAP_POS = int(mujoco.mjtState.mjSTATE_MOCAP_POS)


def state_layout(model: mujoco.MjModel, spec: int = FULLPHYSICS) -> dict[str, slice]:
    """Where each component (qpos, qvel, act, mocap_pos, …) sits in a state vector of `spec`."""
    out, offset = {}, 0
    for bit in sorted((m for m in mujoco.mjtState.__members__.values()
                       if int(m) & spec and (int(m) & (int(m) - 1)) == 0), key=int):
        n = mujoco.mj_stateSize(model, int(bit))
        out[bit.name.removeprefix("mjSTATE_").lower()] = slice(offset, offset + n)
        offset += n
    return out


def get_state(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    state = np.empty(mujoco.mj_stateSize(model, FULLPHYSICS))
    mujoco.mj_getState(model, data, state, FULLPHYSICS)
    return state


@dataclass
class Trajectories:
    """Rollout output: state[r, t] is the state after step t; sensordata[r, t] was computed during
    step t from the state before it (it lags `state` by one step)."""
    state: np.ndarray  # (nroll, nstep, nstate)
    sensordata: np.ndarray  # (nroll, nstep, nsensordata)


class RolloutEngine:
    """Batched rollouts of one model on `nthread` threads (one MjData per thread, reused)."""

    def __init__(self, model: mujoco.MjModel, nthread: int | None = None):
        self.model = model
        self.nthread = max(1, int(nthread or os.cpu_count() or 1))
        self._datas = [mujoco.MjData(model) for _ in range(self.nthread)]
        self._rollout = mujoco.rollout.Rollout(nthread=self.nthread if self.nthread > 1 else 0)
        self.nstate = mujoco.mj_stateSize(model, FULLPHYSICS)
        self._models: list = []
        self._out: Trajectories | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        if self._rollout is not None:
            self._rollout.close()
            self._rollout = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- inputs ------------------------------------------------------------------------------
    def control_spec(self, with_mocap: bool) -> int:
        return CTRL | MOCAP_POS if with_mocap else CTRL

    def pack_controls(self, ctrl: np.ndarray, mocap_pos: np.ndarray | None = None) -> np.ndarray:
        """(nroll, nstep, nu) ctrl [+ (nroll, nstep, nmocap, 3) mocap positions] → rollout controls."""
        ctrl = np.asarray(ctrl, dtype=float)
        if ctrl.ndim != 3 or ctrl.shape[2] != self.model.nu:
            raise ValueError(f"ctrl must have shape (nroll, nstep, {self.model.nu}), got {ctrl.shape}")
        if mocap_pos is None:
            return ctrl
        mocap_pos = np.asarray(mocap_pos, dtype=float)
        want = ctrl.shape[:2] + (self.model.nmocap, 3)
        if mocap_pos.shape != want:
            raise ValueError(f"mocap_pos must have shape {want}, got {mocap_pos.shape}")
        return np.concatenate([ctrl, mocap_pos.reshape(ctrl.shape[:2] + (-1,))], axis=2)

    # -- run ---------------------------------------------------------------------------------
    def run(self, initial_state: np.ndarray, ctrl: np.ndarray, mocap_pos: np.ndarray | None = None,
            copy: bool = True) -> Trajectories:
        """Roll out every row of `ctrl` from the matching row of `initial_state` ((nstate,) for all).

        With copy=False the returned arrays are the engine's buffers, overwritten by the next run.
        """
        if self._rollout is None:
            raise RuntimeError("rollout engine is closed")
        control = np.ascontiguousarray(self.pack_controls(ctrl, mocap_pos))
        nroll, nstep = control.shape[:2]
        init = np.asarray(initial_state, dtype=float)
        if init.ndim == 1:
            init = np.broadcast_to(init, (nroll, init.size))
        if init.shape != (nroll, self.nstate):
            raise ValueError(f"initial_state must have shape ({nroll}, {self.nstate}) or ({self.nstate},), "
                             f"got {np.shape(initial_state)}")
        init = np.ascontiguousarray(init)
        if len(self._models) != nroll:
            self._models = [self.model] * nroll
        out = self._out
        if out is None or out.state.shape[:2] != (nroll, nstep):
            out = self._out = Trajectories(np.empty((nroll, nstep, self.nstate)),
                                           np.empty((nroll, nstep, self.model.nsensordata)))
        self._rollout.rollout(self._models, self._datas, init, control,
                              control_spec=self.control_spec(mocap_pos is not None), skip_checks=True,
                              nstep=nstep, state=out.state, sensordata=out.sensordata,
                              chunk_size=max(1, nroll // (self.nthread * 10)))
        if copy:
            return Trajectories(out.state.copy(), out.sensordata.copy())
        return out


def reference_rollout(model: mujoco.MjModel, initial_state: np.ndarray, ctrl: np.ndarray,
                      mocap_pos: np.ndarray | None = None) -> Trajectories:
    """The slow, obvious per-step Python loop the engine must match (used by tests)."""
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
    return Trajectories(state, sensordata)
