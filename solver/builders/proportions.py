"""The default humanoid with an animator's proportions.

A rig mapped onto the humanoid's bodies (Blender side: `addon/humanoid_map.py`) gives each body's
bone as a head and a tail in the character's standing frame (z up, facing +x, left = +y, metres).
The physics character keeps everything that makes the default humanoid controllable — its bodies
and their names, joint axes and ranges, actuators, rest orientations, contact exclusions — and takes
from the rig where its joints are: the hips, the two spine joints, the shoulders and the head from
the rig's points; every limb segment (thigh, shin, foot, upper arm, forearm, hand) along the default's
direction with the rig's length. Capsules follow the segments; thickness, mass (from height unless
given), strength, damping and rotor inertia scale with the character's size, so a large character is
as stable and as able as the default one — except its ankles, which are a person's
(`ANKLE_STRENGTH_PER_KG`): the default humanoid's, a third as strong, cannot put its weight ahead of
the ankle where a captured person stands, steps and turns (benchmarks/RESULTS.md, "Motion capture
made physical").
"""
from __future__ import annotations

import copy

import numpy as np

from ..core import rotations
from ..core.errors import InvalidInput
from ..formats.scene import Character
from .characters import character_mass, humanoid

LIMB_CHILD = {"thigh": "shin", "shin": "foot", "upper_arm": "lower_arm", "lower_arm": "hand"}
SIDES = ("left", "right")
# N·m of ankle strength per kg of the character (a person's plantar flexors hold about 1.5–2; the default
# humanoid's ankles 0.5), both ankle hinges alike, their servos as stiff for it (the same saturation angle).
ANKLE_STRENGTH_PER_KG = 1.6
HEIGHT_RANGE = (0.3, 3.0)  # m: the humanoids PhysKey simulates (its contact and balance terms are in metres)
REQUIRED = ("pelvis", "waist_lower", "torso", "head") + tuple(
    f"{limb}_{side}" for side in SIDES for limb in ("thigh", "shin", "foot", "upper_arm", "lower_arm", "hand"))


def rest_frames(character: Character) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """World (position, 3×3 rotation) of every body at the character's rest (all joints at zero,
    the root where its `pos`/`quat` put it)."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for b in character.bodies:
        local = rotations.to_matrix(b.quat)
        if b.parent is None:
            out[b.name] = (np.asarray(b.pos, float), local)
        else:
            p, r = out[b.parent]
            out[b.name] = (p + r @ np.asarray(b.pos, float), r @ local)
    return out


def _size(joint: dict) -> float:
    """Thigh + shin + hips-to-shoulders (m), from joint positions by body name: the character's size,
    measured between joints so that rigs agree on it whatever they put at the soles and the crown."""
    legs = sum(np.linalg.norm(joint[f"{upper}_{s}"] - joint[f"{lower}_{s}"])
               for s in SIDES for upper, lower in (("thigh", "shin"), ("shin", "foot"))) / 2
    hips = 0.5 * (joint["thigh_left"] + joint["thigh_right"])
    shoulders = 0.5 * (joint["upper_arm_left"] + joint["upper_arm_right"])
    return float(legs + np.linalg.norm(shoulders - hips))


def _point(points, slot, end):
    if slot not in points:
        raise InvalidInput(f"proportions.{slot}", "missing: every humanoid body needs its bone")
    v = np.asarray(points[slot][end], float)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise InvalidInput(f"proportions.{slot}", f"must be a finite 3-vector, got {points[slot][end]!r}")
    return v


THICKNESS_RANGE = (0.5, 2.0)  # a measured radius may thin or thicken a body this much against the scaled default


def proportioned_humanoid(points: dict, mass: float | None = None, name: str = "humanoid",
                          radii: dict[str, float] | None = None,
                          ankle_heights: dict[str, float] | None = None) -> Character:
    """The default humanoid rebuilt on `points` {body name: (head, tail)} (see the module doc);
    `mass` (kg) overrides the mass that follows from the height; `radii` {body name: m}, measured
    from the character's mesh, set the thickness of those bodies' shapes (within THICKNESS_RANGE of
    the scaled default's, so a stray vertex group cannot make a limb a needle or a barrel);
    `ankle_heights` {side: m}, how far the rig's ankles are above its soles at rest, put the feet's
    shapes' soles there (`seat_soles`)."""
    for slot in REQUIRED:
        _point(points, slot, 0), _point(points, slot, 1)
    check_height(points)
    base = humanoid()
    frames = rest_frames(base)
    bodies = {b.name: b for b in base.bodies}
    head = {s: _point(points, s, 0) for s in REQUIRED}
    length = {}
    for side in SIDES:
        for limb, child in LIMB_CHILD.items():
            length[f"{limb}_{side}"] = float(np.linalg.norm(head[f"{child}_{side}"] - head[f"{limb}_{side}"]))
        for leaf in ("foot", "hand"):
            tip = _point(points, f"{leaf}_{side}", 1)
            length[f"{leaf}_{side}"] = float(np.linalg.norm(tip - head[f"{leaf}_{side}"]))
    for slot, value in length.items():
        if value < 1e-3:
            raise InvalidInput(f"proportions.{slot}", f"the bone is {value * 1000:.2f} mm long; a limb needs a length")
    # Where the trunk's joints are, from the rig; the root (torso) between the chest joint and the
    # shoulders as in the default humanoid.
    origin = {"waist_lower": head["torso"], "pelvis": head["waist_lower"],
              "head": 0.5 * (head["head"] + _point(points, "head", 1))}
    for side in SIDES:
        origin[f"thigh_{side}"] = head[f"thigh_{side}"]
        origin[f"upper_arm_{side}"] = head[f"upper_arm_{side}"]
    d_shoulders = 0.5 * (frames["upper_arm_left"][0] + frames["upper_arm_right"][0])
    d_waist, d_torso = frames["waist_lower"][0], frames["torso"][0]
    f = float(np.dot(d_torso - d_waist, d_shoulders - d_waist) / np.dot(d_shoulders - d_waist, d_shoulders - d_waist))
    shoulders = 0.5 * (origin["upper_arm_left"] + origin["upper_arm_right"])
    origin["torso"] = origin["waist_lower"] + f * (shoulders - origin["waist_lower"])
    new = copy.deepcopy(base)
    new.name = name
    s = _size(head) / _size({n: frames[n][0] for n in frames})
    if not s > 0.05:
        raise InvalidInput("proportions.thigh_left", f"the legs and trunk measure {_size(head):.3f} m; "
                           "the rig is too small for a humanoid (or its units are not metres)")
    for b in new.bodies:
        old = bodies[b.name]
        if b.parent is None:
            b.pos = [float(v) for v in origin[b.name]]
        elif b.name in origin:
            b.pos = [float(v) for v in frames[b.parent][1].T @ (origin[b.name] - origin[b.parent])]
        else:  # a limb segment's child: along the default's direction, the rig's length
            b.pos = [float(v) for v in np.asarray(old.pos) * length[b.parent] / np.linalg.norm(old.pos)]
        along = length[b.name] / old.length if b.name in length else s
        stretch = np.array([s, along, s])  # body frames run along Y (PhysKey's bone frames)
        b.length = float(old.length * along)
        thick = 1.0
        if radii and b.name in radii and b.geoms:
            default = b.geoms[0].size[0] * s
            thick = float(np.clip(radii[b.name] / default, *THICKNESS_RANGE)) if default > 0 else 1.0
        for g in b.geoms:
            g.pos = [float(v) for v in np.asarray(g.pos) * stretch]
            radius_only = g.type == "sphere" or b.name not in length
            g.size = [v * s for v in g.size] if radius_only else [g.size[0] * s, g.size[1] * along] + [
                v * s for v in g.size[2:]]
            g.size[0] *= thick
        for site in b.sites:
            site.pos = [float(v) for v in np.asarray(site.pos) * stretch]
    if ankle_heights:
        seat_soles(new, ankle_heights)
    # Dynamic similarity under gravity: mass ~ s³, torques ~ mass × lever ~ s⁴, time ~ s^½, so
    # stiffness ~ s⁴, damping ~ s^4.5 and rotor inertia ~ s⁵ keep the default's behaviour.
    _scale_dynamics(new, s ** 4, s ** 4.5, s ** 5)
    if mass is not None:
        if not mass > 0:
            raise InvalidInput("proportions.mass", f"must be positive, got {mass}")
        factor = mass / character_mass(new)
        for b in new.bodies:
            for g in b.geoms:
                if g.mass is None:
                    g.density *= factor
                else:
                    g.mass *= factor
        _scale_dynamics(new, factor, factor, factor)
    _person_ankles(new)
    return new


def _person_ankles(character: Character) -> None:
    """Each foot's hinges as strong as a person's ankle for the character's mass (never weaker than
    scaling made them), the servo's stiffness and damping raised in step."""
    strength = ANKLE_STRENGTH_PER_KG * character_mass(character)
    ankles = {j.name for b in character.bodies if b.name in (f"foot_{side}" for side in SIDES) for j in b.joints}
    for a in character.actuators:
        if a.joint in ankles and a.gear < strength:
            factor = strength / a.gear
            a.gear, a.kp, a.kv = strength, a.kp * factor, a.kv * factor


SOLE_RANGE = (0.5, 2.0)  # the rig's ankle height may move a sole this much against the default's depth


def _lowest_z(geom, position: np.ndarray, rotation: np.ndarray) -> float:
    """Lowest z of a capsule, sphere or box shape of a body at (`position`, `rotation`)."""
    centre = position + rotation @ np.asarray(geom.pos, float)
    turn = rotation @ rotations.to_matrix(geom.quat)
    if geom.type == "sphere":
        return float(centre[2] - geom.size[0])
    if geom.type == "capsule":
        return float(centre[2] - abs(turn[2, 2]) * geom.size[1] - geom.size[0])
    if geom.type == "box":
        return float(centre[2] - np.abs(turn[2]) @ np.asarray(geom.size[:3], float))
    return float(centre[2])


def seat_soles(character: Character, ankle_heights: dict[str, float]) -> None:
    """Move each foot's shapes up or down, as the character stands at rest, until their lowest point
    is the rig's ankle height below the ankle (within SOLE_RANGE of where they were): the default's
    foot, stretched to the rig's foot length, otherwise reaches below the rig's soles or stops above
    them, so a pose read from the rig puts the physics feet into the floor or above it."""
    frames = rest_frames(character)
    for side, height in ankle_heights.items():
        foot = next(b for b in character.bodies if b.name == f"foot_{side}")
        position, rotation = frames[foot.name]
        depth = position[2] - min(_lowest_z(g, position, rotation) for g in foot.geoms)
        if not (depth > 0 and np.isfinite(height)):
            continue
        wanted = float(np.clip(height, SOLE_RANGE[0] * depth, SOLE_RANGE[1] * depth))
        shift = rotation.T @ np.array([0.0, 0.0, depth - wanted])
        for g in foot.geoms:
            g.pos = [float(v) for v in np.asarray(g.pos, float) + shift]


def check_height(points: dict) -> float:
    """The height the rig's points span (m, along z of PhysKey's standing frame); InvalidInput naming it
    where it is outside HEIGHT_RANGE — a rig whose units are not metres (a BVH imported in centimetres
    as metres would make a 170 m, 50,000-tonne character)."""
    z = [float(np.asarray(p)[2]) for ends in points.values() for p in ends]
    height = max(z) - min(z)
    low, high = HEIGHT_RANGE
    if not low <= height <= high:
        hint = ""
        if low <= height / 100 <= high:
            hint = ": its units look like centimetres (import it at scale 0.01, or scale the armature by 0.01)"
        elif height < low:
            hint = ": scale the armature up to a person's size"
        raise InvalidInput("proportions", f"the character would be {height:.3g} m tall; PhysKey characters are "
                           f"{low}–{high} m{hint}")
    return height


def _scale_dynamics(character: Character, torque: float, damping: float, inertia: float) -> None:
    for b in character.bodies:
        for j in b.joints:
            j.stiffness *= torque
            j.damping *= damping
            j.armature *= inertia
    for a in character.actuators:
        a.gear *= torque
        a.kp *= torque
        a.kv *= damping
