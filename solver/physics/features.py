"""Cost features sliced out of rollout outputs, for all rollouts and steps at once (numpy only).

`state` comes from `RolloutEngine.run` (after each step); sensor readings lag it by one step, so
`Features` realigns them: `body_pos[:, t]` is the body position at the same instant as `qpos[:, t]`
except for the last step, where the sensor value does not exist yet and the previous one is
repeated (costs use the state at t and the sensors at t+1 of the same instant).
"""
from __future__ import annotations

import numpy as np

from .model import BuiltModel
from .rollout import Trajectories, state_layout


class Features:
    def __init__(self, built: BuiltModel, traj: Trajectories, aligned: bool = False):
        """`aligned=True` when the sensor rows already describe the same instants as the states
        (recorded after mj_forward rather than returned by a rollout)."""
        self.built = built
        self._state = traj.state
        self._sens = traj.sensordata
        self._aligned = aligned
        self._layout = state_layout(built.model)

    # -- from the state ------------------------------------------------------------------------
    @property
    def time(self) -> np.ndarray:
        return self._state[..., self._layout["time"]][..., 0]

    @property
    def qpos(self) -> np.ndarray:
        return self._state[..., self._layout["qpos"]]

    @property
    def qvel(self) -> np.ndarray:
        return self._state[..., self._layout["qvel"]]

    # -- from the sensors, aligned with the state --------------------------------------------------
    def sensor(self, name: str) -> np.ndarray:
        """Sensor `name` aligned to the state's instants: (nroll, nstep, dim) (a view)."""
        if not self._aligned:  # shift all sensors once, then hand out views
            self._sens = np.concatenate([self._sens[:, 1:], self._sens[:, -1:]], axis=1)
            self._aligned = True
        return self._sens[..., self.built.sensor_slices[name]]

    def body_pos(self, body: str) -> np.ndarray:
        return self.sensor(f"{body}_pos")

    def body_quat(self, body: str) -> np.ndarray:
        return self.sensor(f"{body}_quat")

    def as_dict(self, bodies) -> dict:
        """What the MPC objectives' `evaluate` reads: body positions and quaternions, COM, the
        state's time and qpos (the tracking objective compares them with its reference) and, where
        the model has them, the bodies' deepest contacts."""
        return {"pos": {b: self.body_pos(b) for b in bodies}, "quat": {b: self.body_quat(b) for b in bodies},
                "com": self.com, "comvel": self.com_vel, "time": self.time, "qpos": self.qpos,
                "contact": {b: self.contact_depth(b) for b in bodies if f"{b}_contact" in self.built.sensor_slices},
                "touch": {b: self.sensor(f"{b}_touch") for b in bodies if f"{b}_touch" in self.built.sensor_slices}}

    def contact_depth(self, body: str) -> np.ndarray:
        """The distance of the body's deepest contact (negative: sunk in), where the model has the
        sensor (`build_model(contact_depths=True)`): (nroll, nstep)."""
        return self.sensor(f"{body}_contact")[..., 0]

    @property
    def com(self) -> np.ndarray:
        return self.sensor("character_com")

    @property
    def com_vel(self) -> np.ndarray:
        return self.sensor("character_comvel")
