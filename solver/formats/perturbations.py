"""Perturbations: pushes and thrown balls that hit the character while it solves (hit reactions).

A task's `perturbations` lists impulses (a body is struck: `impulse` N·s in world axes at `point` in
the body's frame, at `time`) and balls (a real free sphere of `mass` and `radius`, thrown from
`distance` m away along `direction` at `speed` so that it reaches `aim` — a point on a character
body, where that body is at the throw — at `time`). The planner does not know them in advance: an
impulse changes the simulated character's velocities at the start of the physics step that contains
its time, never the planner's rollouts (`apply_impulse`); a ball waits on a rack far from the scene
(a real body in every model, at rest and out of reach) until it is thrown, and from then on it is
part of the state the planner plans from, as the balls of Hämäläinen et al. 2014 are.

The run's last keyframe is not checked off before the last perturbation has struck: a hit reaction
succeeds when the character is back at its keyframe after the hit, for the keyframe's sustain.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import mujoco
import numpy as np

from ..core.errors import InvalidInput
from .scene import SceneDesc

BALL_PREFIX = "perturbation_ball_"
RACK = "perturbation_rack"
RACK_X = 60.0  # m: where unthrown balls wait, far outside any scene
RACK_SPACING = 1.0  # m between waiting balls
_EPS = 1e-9  # s: an event at a step's start time belongs to that step


@dataclass
class Impulse:
    """A push: `impulse` (N·s, world axes) on character body `body` at `point` (its frame) at `time` (s)."""
    time: float = field(metadata={"nonneg": True})
    body: str
    impulse: list[float] = field(metadata={"length": 3})
    point: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0], metadata={"length": 3})


@dataclass
class Ball:
    """A ball that reaches `aim_point` on character body `aim` at `time` (s), flying along `direction`
    (world axes; its length does not matter) at `speed` m/s from `distance` m away."""
    time: float = field(metadata={"nonneg": True})
    aim: str
    direction: list[float] = field(metadata={"length": 3})
    aim_point: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0], metadata={"length": 3})
    speed: float = field(default=8.0, metadata={"positive": True})
    mass: float = field(default=5.0, metadata={"positive": True})
    radius: float = field(default=0.11, metadata={"positive": True, "max": 1.0})
    distance: float = field(default=2.0, metadata={"positive": True, "max": 50.0})
    friction: float = field(default=0.7, metadata={"nonneg": True})

    @property
    def flight(self) -> float:
        return self.distance / self.speed

    @property
    def launch_time(self) -> float:
        return self.time - self.flight

    def check(self, path):
        if np.linalg.norm(self.direction) < 1e-9:
            raise InvalidInput(f"{path}.direction", "must not be zero")
        if self.launch_time < -_EPS:
            raise InvalidInput(f"{path}.time", f"a ball thrown from {self.distance:g} m at {self.speed:g} m/s "
                               f"needs {self.flight:g} s to arrive: time must be at least {self.flight:g}, "
                               f"got {self.time:g}")


@dataclass
class Perturbations:
    impulses: list[Impulse] = field(default_factory=list)
    balls: list[Ball] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.impulses or self.balls)

    @property
    def last_hit(self) -> float:
        """When the last perturbation strikes (s); -inf if none."""
        return max([p.time for p in self.impulses] + [b.time for b in self.balls], default=-math.inf)


def check_perturbations(p: Optional[Perturbations], scene: SceneDesc, duration: float,
                        path: str = "perturbations") -> None:
    """Every perturbation names a character body and strikes within the task's `duration` (s)."""
    if p is None:
        return
    bodies = {b.name for b in scene.character.bodies}
    for kind, items, key in (("impulses", p.impulses, "body"), ("balls", p.balls, "aim")):
        for i, item in enumerate(items):
            sub = f"{path}.{kind}[{i}]"
            if getattr(item, key) not in bodies:
                raise InvalidInput(f"{sub}.{key}", f"no body '{getattr(item, key)}' in the character")
            if item.time > duration + _EPS:
                raise InvalidInput(f"{sub}.time", f"must be within the task's {duration:g} s, got {item.time:g}")


def add_balls(spec: mujoco.MjSpec, balls: list[Ball]) -> None:
    """Each ball as a free sphere resting on a rack far from the scene (its initial placement)."""
    if not balls:
        return
    rack = spec.worldbody.add_geom()
    rack.name = RACK
    rack.type = mujoco.mjtGeom.mjGEOM_BOX
    rack.size = [0.6, RACK_SPACING * len(balls) / 2 + 0.6, 0.05]
    rack.pos = [RACK_X, RACK_SPACING * (len(balls) - 1) / 2, -0.05]
    rack.rgba = [0.3, 0.3, 0.3, 1]
    for i, b in enumerate(balls):
        body = spec.worldbody.add_body()
        body.name = f"{BALL_PREFIX}{i}"
        body.pos = [RACK_X, RACK_SPACING * i, b.radius]
        joint = body.add_freejoint()
        joint.name = f"{BALL_PREFIX}{i}_free"
        geom = body.add_geom()
        geom.name = f"{BALL_PREFIX}{i}"
        geom.type = mujoco.mjtGeom.mjGEOM_SPHERE
        geom.size = [b.radius, 0, 0]
        geom.mass = b.mass
        geom.friction = [b.friction, 0.005, 0.0001]
        geom.rgba = [0.9, 0.3, 0.2, 1]


class Perturber:
    """Applies a task's perturbations to the simulated character (never to the planner's rollouts):
    call `before_step` before every `mj_step` of the agent's data."""

    def __init__(self, model: mujoco.MjModel, perturbations: Optional[Perturbations]):
        p = perturbations or Perturbations()
        self.impulses = [(i.time, model.body(i.body).id, np.asarray(i.impulse, float), np.asarray(i.point, float))
                         for i in p.impulses]
        self.balls = []
        for k, b in enumerate(p.balls):
            joint = model.joint(f"{BALL_PREFIX}{k}_free").id
            direction = np.asarray(b.direction, float) / np.linalg.norm(b.direction)
            self.balls.append((b.launch_time, b, model.body(b.aim).id, np.asarray(b.aim_point, float), direction,
                               int(model.jnt_qposadr[joint]), int(model.jnt_dofadr[joint])))
        self.last_hit = p.last_hit

    def pending(self, t: float) -> bool:
        """Whether a perturbation is still to strike after time t."""
        return t < self.last_hit - _EPS

    def before_step(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        t0, dt = data.time - _EPS, model.opt.timestep
        due = [e for e in self.impulses if t0 <= e[0] < t0 + dt]
        thrown = [e for e in self.balls if t0 <= e[0] < t0 + dt]
        if not due and not thrown:
            return
        # Poses and the mass matrix of this step's start (mj_step leaves the previous step's).
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        for _, body, impulse, point in due:
            apply_impulse(model, data, body, impulse, data.xpos[body] + data.xmat[body].reshape(3, 3) @ point)
        for _, ball, body, point, direction, qadr, vadr in thrown:
            aim = data.xpos[body] + data.xmat[body].reshape(3, 3) @ point
            flight = ball.flight
            gravity = np.asarray(model.opt.gravity, float)
            data.qpos[qadr:qadr + 3] = aim - direction * ball.distance
            data.qpos[qadr + 3:qadr + 7] = (1.0, 0.0, 0.0, 0.0)
            # Straight at `speed` plus what gravity takes off over the flight: it arrives at the aim.
            data.qvel[vadr:vadr + 3] = direction * ball.speed - 0.5 * gravity * flight
            data.qvel[vadr + 3:vadr + 6] = 0.0


def apply_impulse(model: mujoco.MjModel, data: mujoco.MjData, body: int, impulse: np.ndarray,
                  point: np.ndarray) -> None:
    """An instantaneous push: qvel += M⁻¹ Jᵀ ι, the velocity change `impulse` (N·s, world axes) at world
    `point` on `body` makes at once, so the character's momentum changes by exactly the impulse (a
    force of ι/dt over one step would, to first order in dt only). Needs the kinematics and
    composite inertias of `data.qpos` (`mj_kinematics`, `mj_comPos`)."""
    mujoco.mj_crb(model, data)
    mujoco.mj_factorM(model, data)
    generalized = np.zeros(model.nv)
    mujoco.mj_applyFT(model, data, np.asarray(impulse, float), np.zeros(3), np.asarray(point, float), body,
                      generalized)
    dv = np.zeros(model.nv)
    mujoco.mj_solveM(model, data, dv.reshape(1, -1), generalized.reshape(1, -1))
    data.qvel[:] += dv
