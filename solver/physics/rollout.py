"""Batched open-loop rollouts on `mujoco.rollout`, with a thread pool kept alive between calls.

Inputs are whole arrays (initial states, per-step controls, optional per-step mocap positions and
assist β); outputs are MuJoCo's full-physics state and sensor data per step, which `features`
slices into qpos, body poses and the like. There is no Python in the simulation loop.

Divergence: when a state blows up MuJoCo warns (bad qpos/qvel/qacc) and resets the data (time back
to 0, qpos to qpos0), and `mujoco.rollout` stops a rollout at its first warning and repeats the last
state for the remaining steps. Neither shows up as NaN, so every run also reports, per rollout, the
first step whose state is not a sane continuation (`Trajectories.diverged_at`, see
`find_divergence`), in numpy over the whole batch.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import mujoco
import mujoco.rollout
import numpy as np

from ..core.mujoco_log import route_warnings

FULLPHYSICS = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
EQ_ACTIVE = int(mujoco.mjtState.mjSTATE_EQ_ACTIVE)
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


DIVERGED = "the simulation blew up (MuJoCo reset or stopped it, or its state went non-finite)"
TIME_TOL = 1e-3  # fraction of a timestep by which a step's time advance may differ from the timestep


def find_divergence(state: np.ndarray, initial_time, timestep: float, time_index: int = 0) -> np.ndarray:
    """Per rollout, the index of the first step whose state is not a sane continuation, or -1.

    state: (nroll, nstep, nstate) full-physics states (time in column `time_index`); initial_time:
    the time of each rollout's initial state (scalar or (nroll,)). A step is bad when its time did
    not advance by one timestep (MuJoCo reset the data after a bad qpos/qvel/qacc warning: time
    jumped back; or `mujoco.rollout` stopped at a warning and repeats the last state: time stood
    still) or when any value of its state is NaN or ±inf. When time stands still the warning came
    in the step before (the one that produced the repeated state: MuJoCo's reset state, or a state
    stepped with a warning), so that step is reported. The state before the reported step is the
    last good one; the step started at initial_time + index · timestep (what MuJoCo's warning
    message calls "Time"). One ambiguity: from t = 0, a reset in step 1 looks like a warning in
    step 0, so it is reported one step early (conservative).
    """
    t = state[..., time_index]  # (nroll, nstep) view
    nroll = t.shape[0]
    if t.shape[1] == 0:
        return np.full(nroll, -1, dtype=np.int64)
    t0 = np.broadcast_to(np.asarray(initial_time, dtype=float), (nroll,))
    advance = np.diff(t, axis=1, prepend=t0[:, None])
    tol = TIME_TOL * timestep
    bad = ~(np.abs(advance - timestep) <= tol)  # NaN-safe: NaN compares False
    # One pass over the states: a row sum is NaN or inf when any term is (or when magnitudes are
    # beyond 1e308, diverged by any measure); as a matrix-vector product it is ~4x faster than .sum.
    bad |= ~np.isfinite(state @ np.ones(state.shape[2]))
    anybad = bad.any(axis=1)
    first = bad.argmax(axis=1)
    stood_still = (first > 0) & (np.abs(advance[np.arange(nroll), first]) <= tol)
    return np.where(anybad, first - stood_still, -1)


def step_divergence(data: mujoco.MjData, t_before: float, timestep: float, warnings_before: int) -> str | None:
    """Why the single step just taken from `t_before` diverged, or None: the per-step form of
    `find_divergence` for a simulation stepped one `mj_step` at a time (the agent's own), with the
    same criteria (the time advance, finiteness) plus MuJoCo's warning counters. A few µs."""
    if int(data.warning.number.sum()) != warnings_before:
        kinds = [mujoco.mjtWarning(i).name for i, n in enumerate(data.warning.number) if n]
        return "MuJoCo warning " + ", ".join(kinds)
    if not abs(data.time - t_before - timestep) <= TIME_TOL * timestep:
        return f"time went from {t_before:.6g} to {data.time:.6g} s"
    if not (np.isfinite(data.qpos).all() and np.isfinite(data.qvel).all()):
        return "non-finite state"
    return None


@dataclass
class Trajectories:
    """Rollout output: state[r, t] is the state after step t; sensordata[r, t] was computed during
    step t from the state before it (it lags `state` by one step). `diverged_at[r]` is the first
    step of rollout r whose state is unusable (-1: none; see `find_divergence`): states from there
    on are MuJoCo's reset state or repeats, never physics."""
    state: np.ndarray  # (nroll, nstep, nstate)
    sensordata: np.ndarray  # (nroll, nstep, nsensordata)
    diverged_at: np.ndarray | None = None  # (nroll,) int; None where not computed

    @property
    def diverged(self) -> np.ndarray:
        """(nroll,) bool: the rollout blew up somewhere within its steps."""
        if self.diverged_at is None:
            raise ValueError("these trajectories were not checked for divergence")
        return self.diverged_at >= 0


class RolloutEngine:
    """Batched rollouts of one model on `nthread` threads (one MjData per thread, reused)."""

    def __init__(self, model: mujoco.MjModel, nthread: int | None = None):
        self.model = model
        self.nthread = max(1, int(nthread or os.cpu_count() or 1))
        self._datas = [mujoco.MjData(model) for _ in range(self.nthread)]
        self._rollout = mujoco.rollout.Rollout(nthread=self.nthread if self.nthread > 1 else 0)
        self.nstate = mujoco.mj_stateSize(model, FULLPHYSICS)
        self.time_index = state_layout(model)["time"].start
        self._models: list = []
        route_warnings()  # MuJoCo warnings off MUJOCO_LOG.TXT; blow-ups are found from the states
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
    def control_spec(self, with_mocap: bool, with_eq_active: bool = False) -> int:
        return CTRL | (EQ_ACTIVE if with_eq_active else 0) | (MOCAP_POS if with_mocap else 0)

    def pack_controls(self, ctrl: np.ndarray, mocap_pos: np.ndarray | None = None,
                      eq_active: np.ndarray | None = None) -> np.ndarray:
        """(nroll, nstep, nu) ctrl [+ (neq,) equality switches, held over the whole batch] [+ (nroll,
        nstep, nmocap, 3) mocap positions] → rollout controls (in mjtState order)."""
        ctrl = np.asarray(ctrl, dtype=float)
        if ctrl.ndim != 3 or ctrl.shape[2] != self.model.nu:
            raise ValueError(f"ctrl must have shape (nroll, nstep, {self.model.nu}), got {ctrl.shape}")
        parts = [ctrl]
        if eq_active is not None:
            eq_active = np.asarray(eq_active, dtype=float)
            if eq_active.shape != (self.model.neq,):
                raise ValueError(f"eq_active must have shape ({self.model.neq},), got {eq_active.shape}")
            parts.append(np.broadcast_to(eq_active, ctrl.shape[:2] + (self.model.neq,)))
        if mocap_pos is not None:
            mocap_pos = np.asarray(mocap_pos, dtype=float)
            want = ctrl.shape[:2] + (self.model.nmocap, 3)
            if mocap_pos.shape != want:
                raise ValueError(f"mocap_pos must have shape {want}, got {mocap_pos.shape}")
            parts.append(mocap_pos.reshape(ctrl.shape[:2] + (-1,)))
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=2)

    # -- run ---------------------------------------------------------------------------------
    def run(self, initial_state: np.ndarray, ctrl: np.ndarray, mocap_pos: np.ndarray | None = None,
            copy: bool = True, eq_active: np.ndarray | None = None) -> Trajectories:
        """Roll out every row of `ctrl` from the matching row of `initial_state` ((nstate,) for all),
        with the model's equality constraints switched as `eq_active` says (MuJoCo state that the
        initial state does not carry; None: as the model defines them).

        With copy=False the returned arrays are the engine's buffers, overwritten by the next run
        (`diverged_at` is always fresh).
        """
        if self._rollout is None:
            raise RuntimeError("rollout engine is closed")
        control = np.ascontiguousarray(self.pack_controls(ctrl, mocap_pos, eq_active))
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
                              control_spec=self.control_spec(mocap_pos is not None, eq_active is not None),
                              skip_checks=True,
                              nstep=nstep, state=out.state, sensordata=out.sensordata,
                              chunk_size=max(1, nroll // (self.nthread * 10)))
        diverged_at = find_divergence(out.state, init[:, self.time_index], self.model.opt.timestep,
                                      self.time_index)
        if copy:
            return Trajectories(out.state.copy(), out.sensordata.copy(), diverged_at)
        out.diverged_at = diverged_at
        return out

