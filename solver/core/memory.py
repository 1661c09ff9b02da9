"""Refusing batches too big for this machine's memory, up front, with the estimate in the message —
rather than letting a typo (a horizon of 350 s, a million rollouts) swap the machine to a halt or
get the solver killed halfway through."""
from __future__ import annotations

import os

import mujoco

from .errors import InvalidInput

WORKING_COPIES = 3  # the outputs, plus the features, costs and controls computed from them (a safe margin)


def physical_memory() -> int:
    """Bytes of RAM; 16 GiB where the platform will not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 16 << 30


def batch_bytes(model: mujoco.MjModel, nroll: int, nstep: int) -> int:
    """Memory for one batched rollout of `nroll` × `nstep` steps: states, sensors and controls."""
    nstate = mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    per_step = nstate + model.nsensordata + model.nu + 3 * model.nmocap
    return int(nroll) * int(nstep) * per_step * 8 * WORKING_COPIES


def run_record_bytes(model: mujoco.MjModel, duration_s: float, control_dt: float, iterations_per_step: int = 1) -> int:
    """Memory of one contact run's records over `duration_s` (`mpc.agent.RECORDS`): per simulation
    step the pose, the controls and three scalars; per control step the full state, the sensors,
    the controls, two scalars and one entry per planning iteration."""
    steps = duration_s / model.opt.timestep + 1
    control_steps = duration_s / control_dt
    nstate = mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    per_control = nstate + model.nsensordata + model.nu + 2 + iterations_per_step
    return int(8 * (steps * (model.nq + model.nu + 3) + control_steps * per_control))


def _gb(n: float) -> str:
    return f"{n / 1e9:.1f} GB"


def check_batch(path: str, model: mujoco.MjModel, nroll: int, nstep: int, workers: int = 1,
                limit: int | None = None) -> int:
    """InvalidInput at `path` when `workers` batches of nroll × nstep need more than `limit` (half the
    machine's memory by default); returns the estimate in bytes."""
    return check_retained(path, f"{nroll} rollout(s) × {nstep} steps", batch_bytes(model, nroll, nstep), workers,
                          limit, "fewer or shorter ones")


def check_retained(path: str, what: str, per_worker: int, workers: int = 1, limit: int | None = None,
                   instead: str = "fewer") -> int:
    """InvalidInput at `path` when `workers` × `per_worker` bytes of `what` (a batch, or what a seed
    keeps while it runs) exceed `limit` (half the machine's memory by default); the estimate in bytes."""
    need = per_worker * max(1, workers)
    limit = physical_memory() // 2 if limit is None else limit
    if need > limit:
        across = f" across {workers} worker processes" if workers > 1 else ""
        raise InvalidInput(path, f"{what} need about {_gb(need)} of memory{across}; the limit is {_gb(limit)} "
                                 f"(half of this machine's) — ask for {instead}")
    return need
