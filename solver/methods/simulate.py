"""`simulate`: play the scene forward with the character passive or holding its initial pose.

The simplest method, and the solver-only demo: the humanoid dropped onto the armchair. Each seed
perturbs the initial joint velocities a little, so seeds give alternative outcomes. The reported
cost is the mean squared joint speed (how restless the motion is; lower is calmer). A scene that
blows up (too stiff for its timestep) stops at the last good state and is reported unstable.
"""
from __future__ import annotations

import mujoco
import numpy as np

from ..core import schema
from ..core.errors import InvalidInput
from ..formats.settings import SIMULATE_ACTUATION, SimulateSettings
from ..formats.solution import Solution
from ..formats.task import Task, build_scene
from ..physics.model import build_model
from ..physics.quality import motion_quality
from ..physics.rollout import DIVERGED, RolloutEngine, get_state, state_layout
from ..physics.verdict import quality_words
from .base import Method, Prepared, Progress


class Simulate(Method):
    name = "simulate"
    settings_type = SimulateSettings

    def prepare(self, task: Task) -> Prepared:
        settings = schema.from_dict(SimulateSettings, task.settings, "settings")
        if task.keyframes:
            raise InvalidInput("keyframes", "the simulate method takes no keyframes")
        scene = build_scene(task.scene)
        return Prepared(task, settings, build_model(scene, actuation=SIMULATE_ACTUATION[settings.mode]))

    def solve(self, prep: Prepared, seed: int, engine: RolloutEngine, progress=None, appended=None,
              segments=None) -> Solution:
        return _simulate(prep, seed, engine, progress)


def _simulate(prep: Prepared, seed: int, engine: RolloutEngine, progress) -> Solution:
    m = prep.built.model
    data = mujoco.MjData(m)
    qpos0 = prep.built.initial_qpos()
    data.qpos[:] = qpos0
    data.qvel[:] = prep.built.initial_qvel()
    rng = np.random.default_rng(seed)
    if m.nv > 6:
        data.qvel[6:] += rng.normal(0.0, prep.settings.perturb, m.nv - 6)
    mujoco.mj_forward(m, data)
    state = get_state(m, data)
    ctrl_row = np.zeros(m.nu)
    if prep.settings.mode == "hold":  # position servos targeting the initial pose
        joints = m.actuator_trnid[:prep.built.nu_character, 0]
        ctrl_row[:prep.built.nu_character] = qpos0[m.jnt_qposadr[joints]]
    nstep_total = int(round(prep.settings.duration / m.opt.timestep))
    chunk = max(1, int(round(prep.settings.chunk / m.opt.timestep)))
    layout = state_layout(m)
    qpos_rows, time_rows, cost_sum, done = [qpos0[None]], [np.zeros(1)], 0.0, 0
    unstable_time = None
    while done < nstep_total:
        n = min(chunk, nstep_total - done)
        traj = engine.run(state, np.broadcast_to(ctrl_row, (1, n, m.nu)))
        bad = int(traj.diverged_at[0])
        good = n if bad < 0 else bad  # steps of this chunk before the divergence
        qpos_rows.append(traj.state[0, :good, layout["qpos"]])
        time_rows.append(traj.state[0, :good, layout["time"]][:, 0])
        cost_sum += float(np.sum(traj.state[0, :good, layout["qvel"]][:, 6:] ** 2))
        done += good
        if bad >= 0:  # stop at the last good state; never play on from MuJoCo's reset state
            unstable_time = float(time_rows[-1][-1] if good else state[layout["time"]][0])
            break
        state = traj.state[0, -1]
        if progress:
            progress(Progress(done / nstep_total, cost_sum / done))
    qpos = np.concatenate(qpos_rows)
    times = np.concatenate(time_rows)
    quality = motion_quality(m, prep.built.character_bodies, times, qpos, roles=prep.built.roles)
    return Solution(times=times, qpos=qpos, success=unstable_time is None, cost=cost_sum / max(done, 1),
                    summary={"quality": quality, "words": quality_words(quality)},
                    unstable_time=unstable_time, unstable_reason=None if unstable_time is None else DIVERGED)


SIMULATE = Simulate()
