"""What a keyframe's style asks of the body, measured against the character's own standing pose, and
whether the character is at rest. Seated means what the word says too: the weight on a seat, not a
pelvis hovering near it, and the feet down, not up on the seat; lying, the torso down.

A "stand" the paper counts as reached once a torso point is within 0.5 m ended in a half crouch, the
head at 71–81% of its standing height above the feet (issue 62). Standing means what an animator
means: the head near its standing height above the lower foot, the torso near upright. Both are
measured against the character at rest (its model's `qpos0`, every joint at zero, its legs hung as
the default humanoid's: a rest with legs spread stands taller on legs together), so any character —
taller, shorter, a torso frame turned another way — is judged by its own standing pose.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

STANDING_HEAD_SHARE = 0.93  # a standing head is at least this share of its standing height above the feet
STANDING_TILT_DEG = 15.0  # a standing torso is within this of upright
SEATED_LOAD_SHARE = 0.3  # a seated character rests at least this share of its weight on its pelvis and thighs
# and keeps each foot down: on the floor, or at least this share of its standing pelvis height (above the feet)
# below its pelvis. Sitting on the armchair or the bench puts a foot on the floor 0.40-0.56 of it below the
# pelvis; one up on the seat (squatting or kneeling on it) 0.1-0.2, one tucked under the bench's edge off the
# floor 0.2-0.4 (the default humanoid's seated keyframes; RESULTS, "Seated with the feet down")
FEET_DOWN_SHARE = 0.4
# A foot is on the floor with its origin at most this share of the standing pelvis height above where it
# stands on it (6 cm on the default humanoid: flat, or up on its toes): on a low seat the feet on the floor are
# nearer the pelvis than FEET_DOWN_SHARE (a 4 cm armchair seats them 0.35 of it below) and still down.
FOOT_ON_FLOOR_SHARE = 0.07
# A style lost for less than this (s) while a keyframe is held does not end the hold: a seat's contact force
# dips under its share for a step now and then (as a foot's touch lost that briefly does not end a phase)
STYLE_DIP_S = 0.05
# A box is carried standing with the pelvis at least this share of its standing height above the feet (on
# the default humanoid 0.75 m above the floor); lower, it is carried in a crouch.
CARRY_PELVIS_SHARE = 0.75
LYING_TILT_DEG = 60.0  # a lying torso is at least this far from upright
SETTLED_SPEED = 0.1  # m/s: a root slower than this is at rest
SETTLE_HOLD_S = 0.2  # and has stayed so for this long: not a sway passing through its turning point
SETTLE_LIMIT_S = 3.0  # a last keyframe still moving this long after its sustain ends the clip anyway, said


def standing_above_feet(model: mujoco.MjModel, rest: mujoco.MjData, roles: dict[str, str], role: str) -> float | None:
    """How high the `role` body's origin stands above the lower foot's with the character at rest
    (`rest`: its model at `qpos0`) and its legs hanging as the default humanoid's do — a character whose
    rest spreads its legs (the CMU humanoid's, 20° apart) stands that much taller on legs held together.
    None without the role or the feet."""
    if role not in roles:
        return None
    from ..builders.roles import hung_foot_drop
    feet = []
    for side in ("left", "right"):
        chain = [roles.get(f"{limb}_{side}") for limb in ("thigh", "shin", "foot")]
        if chain[2] is None:
            continue
        if None in chain:  # a foot without its leg's roles: where it rests
            feet.append(float(rest.xpos[model.body(chain[2]).id, 2]))
            continue
        hip, knee, ankle = (_pivot(model, rest, model.body(b).id) for b in chain)
        feet.append(float(rest.xpos[model.body(chain[2]).id, 2]) - hung_foot_drop(hip, knee, ankle, side))
    if not feet:
        return None
    return float(rest.xpos[model.body(roles[role]).id, 2]) - min(feet)


def at_rest(model: mujoco.MjModel) -> mujoco.MjData:
    """The character at rest: its model at `qpos0`, positioned (what the standing measures read)."""
    rest = mujoco.MjData(model)
    rest.qpos[:] = model.qpos0
    mujoco.mj_kinematics(model, rest)
    return rest


@dataclass(frozen=True)
class FeetDown:
    """Where a seated character's feet are down: each foot `drop` (m) or more below the pelvis, or on the
    floor — its origin at most `on_floor[foot]` high (world z; a foot absent there: no floor to be on)."""
    drop: float
    on_floor: dict[int, float]

    def up_by(self, pelvis_z, foot_z, foot: int):
        """How far (m) the foot body `foot` at height `foot_z` is up by the seat (0 where it is down), the
        pelvis at `pelvis_z`; arrays broadcast."""
        up = np.asarray(foot_z) - (np.asarray(pelvis_z) - self.drop)
        if foot in self.on_floor:
            up = np.minimum(up, np.asarray(foot_z) - self.on_floor[foot])
        return np.maximum(up, 0.0)


def feet_down(model: mujoco.MjModel, rest: mujoco.MjData, roles: dict[str, str]) -> FeetDown | None:
    """Where the character's feet are down when it sits (`FeetDown`): FEET_DOWN_SHARE of its standing pelvis
    height above the feet below its pelvis, or on the floor (the scene's lowest plane; each foot's origin as
    high above it as when the foot stands on it, MuJoCo's distance of the foot's shapes at rest, plus
    FOOT_ON_FLOOR_SHARE of that height); `rest`: its model at `qpos0`. None without a pelvis or feet."""
    above = standing_above_feet(model, rest, roles, "pelvis")
    if above is None or above <= 0:
        return None
    planes = [g for g in range(model.ngeom) if model.geom_bodyid[g] == 0
              and model.geom_type[g] == int(mujoco.mjtGeom.mjGEOM_PLANE)]
    on_floor: dict[int, float] = {}
    if planes:
        floor = min(planes, key=lambda g: model.geom_pos[g][2])
        fromto = np.zeros(6)
        for role in ("foot_left", "foot_right"):
            foot = model.body(roles[role]).id if role in roles else None
            shapes = [g for g in range(model.ngeom) if model.geom_bodyid[g] == foot]
            if foot is None or not shapes:
                continue
            sole = min(mujoco.mj_geomDistance(model, rest, g, floor, 10.0 * above, fromto) for g in shapes)
            # the origin where it stands on the floor: as far above the floor as above its sole now (`sole`: the
            # shapes' gap to the floor at rest)
            on_floor[foot] = float(rest.xpos[foot, 2]) - sole + FOOT_ON_FLOOR_SHARE * above
    return FeetDown(drop=FEET_DOWN_SHARE * above, on_floor=on_floor)


def _pivot(model: mujoco.MjModel, data: mujoco.MjData, body: int) -> np.ndarray:
    """Where the body turns (its first joint's anchor; its origin where it has none)."""
    joint = int(model.body_jntadr[body])
    return data.xanchor[joint].copy() if joint >= 0 else data.xpos[body].copy()


class Posture:
    """A character's standing pose (head height above the feet, the torso's up in its own frame) and
    its root's free joint, for the style and rest checks of a running solve."""

    def __init__(self, model: mujoco.MjModel, roles: dict[str, str], root_body: int):
        def body(role):
            return model.body(roles[role]).id if role in roles else None

        self.head, self.torso, self.pelvis = body("head"), body("torso"), body("pelvis")
        self.feet = [b for b in (body("foot_left"), body("foot_right")) if b is not None]
        joint = int(model.body_jntadr[root_body])
        free = joint >= 0 and int(model.jnt_type[joint]) == int(mujoco.mjtJoint.mjJNT_FREE)
        self.root_dof = int(model.jnt_dofadr[joint]) if free else None
        data = at_rest(model)
        self.standing_head = standing_above_feet(model, data, roles, "head")
        if self.standing_head is None and self.head is not None:  # no feet: the head's height above the floor
            self.standing_head = self._head_above_feet(data)
        self.torso_up = (data.xmat[self.torso].reshape(3, 3).T @ [0.0, 0.0, 1.0]
                         if self.torso is not None else None)
        self.feet_down = feet_down(model, data, roles)
        # what a seat bears: the pelvis and thighs; what is a seat: anything but the character and the floor
        self.seat_parts = [b for b in (body("pelvis"), body("thigh_left"), body("thigh_right")) if b is not None]
        tree = model.body_rootid == model.body_rootid[root_body]
        self.character_geom = tree[model.geom_bodyid]
        self.floor_geom = (model.geom_bodyid == 0) & (model.geom_type == int(mujoco.mjtGeom.mjGEOM_PLANE))
        self.weight_n = float(model.body_subtreemass[root_body] * np.linalg.norm(model.opt.gravity))
        self.model = model

    def _head_above_feet(self, data: mujoco.MjData) -> float:
        """The head's height above the lower foot's origin (above the floor without feet)."""
        ground = min((float(data.xpos[f, 2]) for f in self.feet), default=0.0)
        return float(data.xpos[self.head, 2]) - ground

    def head_share(self, data: mujoco.MjData) -> float | None:
        """The head's height above the feet now, as a share of its standing height; None without a head."""
        if self.standing_head is None or self.standing_head <= 0:
            return None
        return self._head_above_feet(data) / self.standing_head

    def torso_tilt_deg(self, data: mujoco.MjData) -> float | None:
        """How far the torso leans from upright now (degrees); None without a torso."""
        if self.torso_up is None:
            return None
        up = data.xmat[self.torso].reshape(3, 3) @ self.torso_up
        return float(np.degrees(np.arccos(np.clip(up[2], -1.0, 1.0))))

    def not_standing(self, data: mujoco.MjData) -> str | None:
        """Why the character is not standing now ("head at 81% of its standing height, torso 29° from
        upright"), None where it stands (or has no head and torso to judge by)."""
        share, tilt = self.head_share(data), self.torso_tilt_deg(data)
        short = []
        if share is not None and share < STANDING_HEAD_SHARE:
            short.append(f"head at {share:.0%} of its standing height")
        if tilt is not None and tilt > STANDING_TILT_DEG:
            short.append(f"torso {tilt:.0f}° from upright")
        return ", ".join(short) or None

    def seat_share(self, data: mujoco.MjData) -> float | None:
        """The share of the character's weight its pelvis and thighs rest on a seat now (the normal force of
        their contacts with anything but the floor and the character itself); None without those roles."""
        if not self.seat_parts or self.weight_n <= 0:
            return None
        force, total = np.zeros(6), 0.0
        for i in range(data.ncon):
            c = data.contact[i]
            g1, g2 = int(c.geom1), int(c.geom2)
            own1, own2 = self.character_geom[g1], self.character_geom[g2]
            if own1 == own2 or self.floor_geom[g2 if own1 else g1]:
                continue
            if int(self.model.geom_bodyid[g1 if own1 else g2]) in self.seat_parts:
                mujoco.mj_contactForce(self.model, data, i, force)
                total += abs(float(force[0]))
        return total / self.weight_n

    def not_seated(self, data: mujoco.MjData) -> str | None:
        """Why the character is not seated now ("resting 12% of its weight on a seat", or a foot up by the
        seat: `foot_up`), None where its pelvis and thighs bear at least SEATED_LOAD_SHARE of it and its feet
        are down (or it has no such roles to judge by)."""
        share = self.seat_share(data)
        if share is not None and share < SEATED_LOAD_SHARE:
            return f"resting {share:.0%} of its weight on a seat"
        return self.foot_up(data)

    def foot_up(self, data: mujoco.MjData) -> str | None:
        """Which foot is up by the seat now ("foot_right up by the seat, 9 cm below the pelvis"): off the floor
        and less than `FeetDown.drop` below the pelvis; None where both are down (or the roles to judge by are
        missing)."""
        if self.pelvis is None or self.feet_down is None:
            return None
        pelvis = float(data.xpos[self.pelvis, 2])
        for foot in self.feet:
            if self.feet_down.up_by(pelvis, float(data.xpos[foot, 2]), foot) > 0.0:
                below = pelvis - float(data.xpos[foot, 2])
                return f"{self.model.body(foot).name} up by the seat, {100 * below:.0f} cm below the pelvis"
        return None

    def lying(self, data: mujoco.MjData) -> bool:
        """Whether the torso is at least LYING_TILT_DEG from upright now (True without a torso)."""
        tilt = self.torso_tilt_deg(data)
        return tilt is None or tilt >= LYING_TILT_DEG

    def not_lying(self, data: mujoco.MjData) -> str | None:
        """Why the character is not lying now ("torso 35° from upright"), None where it is (`lying`)."""
        return None if self.lying(data) else f"torso {self.torso_tilt_deg(data):.0f}° from upright"

    def not_in_style(self, style: str | None, data: mujoco.MjData) -> str | None:
        """Why the character does not hold `style` now (`not_standing`, `not_seated`, `not_lying`); None where
        it does or the style asks nothing measurable ("reaching", none)."""
        check = {"standing": self.not_standing, "seated": self.not_seated, "lying": self.not_lying}.get(style)
        return None if check is None else check(data)

    def style_gap(self, style: str | None, data: mujoco.MjData) -> float:
        """How far the character is from holding `style` now, one number for watching it come closer: for
        standing, the head's share short of STANDING_HEAD_SHARE plus the torso's lean past STANDING_TILT_DEG
        (radians: a degree weighs about what 2% of the head's height does); for seated, the share of the weight
        short of SEATED_LOAD_SHARE plus 1 while a foot is up by the seat; for lying, the torso's lean short of
        LYING_TILT_DEG (radians). 0 where it holds or the style asks nothing measurable."""
        if style == "standing":
            share, tilt = self.head_share(data), self.torso_tilt_deg(data)
            return (max(0.0, STANDING_HEAD_SHARE - share) if share is not None else 0.0) + (
                float(np.radians(max(0.0, tilt - STANDING_TILT_DEG))) if tilt is not None else 0.0)
        if style == "seated":
            share = self.seat_share(data)
            return (max(0.0, SEATED_LOAD_SHARE - share) if share is not None else 0.0) + (
                1.0 if self.foot_up(data) is not None else 0.0)
        if style == "lying":
            tilt = self.torso_tilt_deg(data)
            return float(np.radians(max(0.0, LYING_TILT_DEG - tilt))) if tilt is not None else 0.0
        return 0.0

    def root_speed(self, data: mujoco.MjData) -> float:
        """The root's linear speed now (m/s); 0 for a root that is not free."""
        if self.root_dof is None:
            return 0.0
        return float(np.linalg.norm(data.qvel[self.root_dof:self.root_dof + 3]))
