"""Which body of a character plays which part: the roles its objective terms, quality figures and task
pairs read, so any character — the default humanoid, one proportioned from a rig, an imported MJCF —
is planned and judged as a humanoid without its bodies being named like the default one.

A role is named as the default humanoid's body that plays it (`pelvis`, `torso` for the chest,
`foot_left`, `lower_arm_right`, …), so the default humanoid and the characters proportioned from rigs
play every role with the body of that name. A character stores the roles it was given (`Character.roles`:
the scene file, the MJCF's custom text `physkey_roles`, the Blender armature); the rest are inferred from
body names — PhysKey's, dm_control's (`right_foot`, `lower_waist`), the CMU humanoid's (`lfoot`,
`ltibia`, `lhumerus`, `thorax`), Mixamo's (`LeftUpLeg`), Rigify's (`thigh.L`) and Biovision's
(`LeftHip`) — and where names say nothing, from the kinematic tree (the two chains reaching lowest are
the legs, two others the arms). A term whose role no body plays is named by `missing_terms`, never
dropped without a word.
"""
from __future__ import annotations

import re

import numpy as np

from ..formats.roles import ROLES, SIDES, TRUNK
from ..formats.scene import Character

# What needs which roles: the contact and tracking objective's terms, the quality figures, the fall watch.
NEEDS = {
    "the term Torso Up": ("torso",), "the term Torso Height": ("torso",), "the term Facing Dir": ("torso",),
    "the term Pelvis Up": ("pelvis",), "the term RFoot Up": ("foot_right",), "the term LFoot Up": ("foot_left",),
    "the term Head Height": ("head",), "the term COM Feet XY": ("foot_left", "foot_right"),
    "the term Knee Feet XY": ("foot_left", "foot_right", "shin_left", "shin_right"),
    "the term Foot Slip": ("foot_left", "foot_right"), "the term Feet Down": ("pelvis", "foot_left", "foot_right"),
    "the term Feet Flat": ("foot_left", "foot_right"),
    "the foot-sliding figure": ("foot_left", "foot_right"), "the fall watch and figure": ("head",),
}

# Body-name words per role, after the side is taken off (lower case, letters and digits only).
_WORDS = {
    "thigh": ("thigh", "upleg", "upperleg", "femur", "hip"),
    "shin": ("shin", "calf", "leg", "lowerleg", "tibia", "knee", "crus"),
    "foot": ("foot", "ankle"),
    "upper_arm": ("upperarm", "arm", "humerus", "shoulder"),
    "lower_arm": ("lowerarm", "forearm", "radius", "elbow"),
    "hand": ("hand", "wrist", "palm"),
    "pelvis": ("pelvis", "hips", "hip", "root", "butt", "spine"),
    "torso": ("torso", "chest", "thorax", "upperchest", "upperback", "spine2", "spine3", "spine003", "spine004"),
    "head": ("head",),
}
_SIDE_WORDS = {"left": ("left",), "right": ("right",)}


def _side_and_word(name: str) -> tuple[str | None, str]:
    """('left', 'foot') for 'foot_left', 'left_foot', 'LeftFoot', 'lfoot', 'foot.L', 'foot_l'; (None,
    word) for a name with no side."""
    n = name.lower()
    n = re.sub(r"^(mixamorig\d*:|def-|org-)", "", n)
    for side, words in _SIDE_WORDS.items():
        for w in words:
            for pattern in (rf"^{w}[_.\- ]?(.+)$", rf"^(.+?)[_.\- ]?{w}$"):
                m = re.match(pattern, n)
                if m:
                    return side, re.sub(r"[^a-z0-9]", "", m.group(1))
    m = re.match(r"^(.+?)[_.\-]([lr])(\.\d+)?$", n)  # foot.L, foot_l, foot.L.001
    if m:
        return ("left" if m.group(2) == "l" else "right"), re.sub(r"[^a-z0-9]", "", m.group(1))
    m = re.match(r"^([lr])([a-z]+)$", n)  # CMU: lfoot, rtibia, lhumerus
    if m and any(m.group(2) in words for words in _WORDS.values()):
        return ("left" if m.group(1) == "l" else "right"), m.group(2)
    return None, re.sub(r"[^a-z0-9]", "", n)


def _by_names(character: Character) -> dict[str, str]:
    depth = {}
    for b in character.bodies:
        depth[b.name] = 0 if b.parent is None else depth[b.parent] + 1
    found: dict[str, list[tuple[int, int, str]]] = {}
    for b in character.bodies:
        side, word = _side_and_word(b.name)
        for part, words in _WORDS.items():
            if word in words and (side is None) == (part in TRUNK):
                role = part if side is None else f"{part}_{side}"
                # the earliest word is the part's own name (a 'hip' is a pelvis only where no 'pelvis' is)
                found.setdefault(role, []).append((words.index(word), depth[b.name], b.name))
    out = {role: min(c)[2] for role, c in found.items()}
    if out.get("torso") == out.get("pelvis"):
        out.pop("torso", None)
    return out


def _by_tree(character: Character) -> dict[str, str]:
    """Limbs where names say nothing: of the chains of at least three bodies hanging from the trunk, the
    two reaching lowest at rest are the legs and the two reaching furthest sideways the arms (left is
    +y: characters stand facing +x); the pelvis and chest are where each pair hangs from, the head the
    highest body above the chest."""
    from .proportions import rest_frames
    frames = rest_frames(character)
    pos = {name: p for name, (p, _) in frames.items()}
    children: dict[str | None, list[str]] = {}
    for b in character.bodies:
        children.setdefault(b.parent, []).append(b.name)

    def chain(start):
        out = [start]
        while children.get(out[-1]):
            out.append(min(children[out[-1]], key=lambda c: pos[c][2]))  # down the lowest-reaching child
        return out

    chains = [chain(c) for parent, kids in children.items() if parent is not None for c in kids]
    chains = [c for c in chains if len(c) >= 3]
    lows = sorted(chains, key=lambda c: pos[c[-1]][2])
    legs = [c for c in lows if abs(pos[c[0]][1]) > 1e-3][:2]
    if len(legs) < 2 or pos[legs[0][0]][1] * pos[legs[1][0]][1] >= 0:
        return {}
    used = {n for c in legs for n in c}
    arms = sorted([c for c in chains if not used & set(c) and abs(pos[c[0]][1]) > 1e-3],
                  key=lambda c: -abs(pos[c[-1]][1]))[:2]
    out = {}
    for kind, pair, names in (("leg", legs, ("thigh", "shin", "foot")),
                              ("arm", arms, ("upper_arm", "lower_arm", "hand"))):
        if len(pair) < 2 or pos[pair[0][0]][1] * pos[pair[1][0]][1] >= 0:
            continue
        for c in pair:
            side = "left" if pos[c[0]][1] > 0 else "right"
            for part, body in zip(names, c[-3:] if kind == "leg" else c[:3]):
                out[f"{part}_{side}"] = body
    parents = {b.name: b.parent for b in character.bodies}
    if "thigh_left" in out:
        out["pelvis"] = parents[out["thigh_left"]] or out["thigh_left"]
    if "upper_arm_left" in out:
        out["torso"] = parents[out["upper_arm_left"]] or out["upper_arm_left"]
        above = [n for n in pos if n not in used and pos[n][2] > pos[out["torso"]][2]
                 and not any(n in c for c in arms)]
        if above:
            out["head"] = max(above, key=lambda n: pos[n][2])
    return out


def _head_above(character: Character, roles: dict[str, str]) -> str | None:
    """The head where no body is named so (a Rigify meta-rig's `spine.006`): up the chain above the chest,
    into no arm and no sided body, the child reaching highest at each step, along spine-named bodies
    (spine, neck) while there are any; past them, the last of them (what hangs on a head is its face)."""
    from .proportions import rest_frames
    height = {name: p[2] for name, (p, _) in rest_frames(character).items()}
    children: dict[str, list[str]] = {}
    for b in character.bodies:
        children.setdefault(b.parent, []).append(b.name)
    arms = {roles[f"{part}_{side}"] for side in SIDES for part in ("upper_arm", "lower_arm", "hand")
            if f"{part}_{side}" in roles}
    current, best, named = roles["torso"], None, False
    while True:
        kids = [c for c in children.get(current, []) if c not in arms and _side_and_word(c)[0] is None
                and height[c] >= height[current] - 1e-9]
        spine = [c for c in kids if any(w in _side_and_word(c)[1] for w in ("spine", "neck", "head"))]
        if spine:
            kids, named = spine, True
        elif named:
            return best
        if not kids:
            return best
        current = best = max(kids, key=lambda c: height[c])


def roles_of(character: Character) -> dict[str, str]:
    """{role: body} of every role the character plays: its stored roles, the rest inferred."""
    inferred = _by_tree(character)
    inferred.update(_by_names(character))
    inferred.update(character.roles)
    if "head" not in inferred and "torso" in inferred:
        head = _head_above(character, inferred)
        if head is not None:
            inferred["head"] = head
    taken: dict[str, str] = {}
    out = {}
    for role in ROLES:  # one body plays one role (the first claim in ROLES order wins)
        body = inferred.get(role)
        if body is not None and body not in taken:
            out[role] = body
            taken[body] = role
    return out


def group_by_roles(character: Character) -> list[str]:
    """Put each joint the names left in "core" into the body part its roles say: a body at or below a
    limb role's body (thigh, shin, foot; upper arm, forearm, hand) is in that side's leg or arm — the CMU
    humanoid's `lfemurrx`, `rthumbrz` name no side in words, and with every joint in one part the
    partwise planner (PartwiseMPC) had no parts to recombine. Returns what changed, in words."""
    roles = roles_of(character)
    part = {}
    for side in SIDES:  # every limb role starts its part (a character may lack its thigh's role)
        for limb, group in (("thigh", "leg"), ("shin", "leg"), ("foot", "leg"), ("upper_arm", "arm"),
                            ("lower_arm", "arm"), ("hand", "arm")):
            if f"{limb}_{side}" in roles:
                part[roles[f"{limb}_{side}"]] = f"{side}_{group}"
    moved: dict[str, int] = {}
    for b in character.bodies:  # parents first: a body inherits its parent's part unless it starts one
        if b.name not in part and b.parent in part:
            part[b.name] = part[b.parent]
        for j in b.joints:
            if j.group == "core" and b.name in part:
                j.group = part[b.name]
                moved[j.group] = moved.get(j.group, 0) + 1
    return [f"{n} joint(s) in {g.replace('_', ' ')}" for g, n in sorted(moved.items())]


def missing_terms(roles: dict[str, str]) -> list[str]:
    """One line per role no body plays, naming the terms and figures that are off for it."""
    off: dict[str, list[str]] = {}
    for term, needs in NEEDS.items():
        for role in needs:
            if role not in roles:
                off.setdefault(role, []).append(term)
    return [f"no body plays the role '{role}': {', '.join(terms)} off (name it in the character's roles)"
            for role, terms in off.items()]


def facing_turn(character: Character, roles: dict[str, str], root_quat) -> np.ndarray:
    """The turn about the vertical (3×3) that makes the character, its root turned by `root_quat`,
    face +x as PhysKey's characters do at rest — its left (where its left hip and shoulder are, by its
    roles) at +y; the identity where it plays no pair of sides."""
    from ..core import rotations
    from .proportions import rest_frames
    pairs = [(f"{p}_left", f"{p}_right") for p in ("thigh", "upper_arm")
             if f"{p}_left" in roles and f"{p}_right" in roles]
    if not pairs:
        return np.eye(3)
    frames = rest_frames(character)
    root = rotations.to_matrix(root_quat) @ rotations.to_matrix(character.bodies[0].quat).T
    left = sum(root @ (frames[roles[lt]][0] - frames[roles[rt]][0]) for lt, rt in pairs)
    angle = np.pi / 2 - np.arctan2(left[1], left[0])
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rest_forward(character: Character, roles: dict[str, str]) -> np.ndarray:
    """The way the character faces at rest (its joints at zero, its root as its file has it), a unit vector
    in the world: +x for PhysKey's characters, −y for the CMU humanoid as dm_control writes it."""
    turn = facing_turn(character, roles, character.bodies[0].quat)
    if np.allclose(turn, np.eye(3), atol=1e-12):
        return np.array([1.0, 0.0, 0.0])
    return turn.T @ np.array([1.0, 0.0, 0.0])


# A limb's segments, each from its joint to the next one's, and the end bodies that go with the last
_SEGMENTS = (("thigh", "shin"), ("shin", "foot"), ("upper_arm", "lower_arm"), ("lower_arm", "hand"))
_ENDS = {"shin": "foot", "lower_arm": "hand"}


def standing(character: Character, roles: dict[str, str]) -> tuple[dict, float | None]:
    """({body: rotation at rest, turned to face +x, its limbs hanging as the default humanoid's do},
    how far the head's origin is above the feet's standing on those hung legs — None without a head or
    feet).

    A character's rest is wherever its joints are zero: the default humanoid's legs hang straight, the
    CMU humanoid's are spread 20° with its feet rolled on their edges, its arms out in a T. A limb's
    segment (joint to joint) is turned onto the default humanoid's by the smallest turn, its hand or foot
    with it, so that "turned as the default's from rest" means the same pose on both (`_limbs_hung`), and
    its height is the one it has on legs held together (`hung_foot_drop`)."""
    from .proportions import rest_frames
    frames = rest_frames(character)
    turn = facing_turn(character, roles, character.bodies[0].quat)
    turned = {name: turn @ r for name, (_, r) in frames.items()}
    _limbs_hung(turned, _segment_directions(character, roles, frames, turn), roles)
    feet = [roles.get(f"foot_{s}") for s in SIDES]
    if "head" not in roles or None in feet:
        return turned, None
    bodies = {b.name: b for b in character.bodies}

    def lowest(side: str, foot: str) -> float:
        chain = [roles.get(f"{limb}_{side}") for limb in ("thigh", "shin")]
        rests = float(frames[foot][0][2])
        if None in chain:
            return rests
        return rests - hung_foot_drop(*(_pivot(bodies[b], frames) for b in (*chain, foot)), side)

    return turned, float(frames[roles["head"]][0][2] - min(lowest(s, f) for s, f in zip(SIDES, feet)))


def hung_foot_drop(hip, knee, ankle, side: str) -> float:
    """How much lower a foot hangs than it rests (m) when its thigh and shin, pivots at `hip`, `knee`
    and `ankle` (world, at rest), hang along the default humanoid's legs: 0 for the default humanoid,
    about 5 cm for the CMU humanoid's legs spread 20°."""
    reference = default_leg_directions()
    hung = (np.linalg.norm(np.subtract(knee, hip)) * -reference[f"thigh_{side}"][2]
            + np.linalg.norm(np.subtract(ankle, knee)) * -reference[f"shin_{side}"][2])
    lower = float(hung - (hip[2] - ankle[2]))
    return lower if abs(lower) > 1e-9 else 0.0


def _joint_local(body) -> np.ndarray:
    """Where a body turns, in its own frame: its first joint's pivot (its origin where it has none)."""
    return np.asarray(body.joints[0].pos, float) if body.joints else np.zeros(3)


def _grip_local(body) -> np.ndarray:
    """Where a hand grips, in its own frame: the centre of its own shapes (the default humanoid's and
    dm_control's hand is a ball at its origin; the CMU humanoid's origin is its wrist, its palm 5 cm on).
    Its pivot where it has no shapes."""
    if not body.geoms:
        return _joint_local(body)
    return np.mean([np.asarray(g.pos, float) for g in body.geoms], axis=0)


def _shoulders_local(character: Character, roles: dict[str, str]) -> np.ndarray | None:
    """The midpoint of the shoulders (where the upper arms turn) in the torso's own frame at rest: the
    landmark a point on the chest is placed from, since the body playing the torso starts at different
    heights along the spine (the default humanoid's at the upper chest, the CMU humanoid's thorax 19 cm
    below its shoulders). None without a torso and both upper arms."""
    arms = [roles.get(f"upper_arm_{s}") for s in SIDES]
    if "torso" not in roles or None in arms:
        return None
    from .proportions import rest_frames
    frames = rest_frames(character)
    bodies = {b.name: b for b in character.bodies}
    pos, rot = frames[roles["torso"]]
    middle = np.mean([_pivot(bodies[a], frames) for a in arms], axis=0)
    return rot.T @ (middle - pos)


def _pivot(body, frames: dict) -> np.ndarray:
    """Where a body turns at rest, in the world (`frames`: `proportions.rest_frames`)."""
    pos, rot = frames[body.name]
    return pos + rot @ _joint_local(body)


def _segment_directions(character: Character, roles: dict[str, str], frames: dict, turn) -> dict[str, np.ndarray]:
    """{limb role: unit direction from its joint to the next segment's at rest, turned to face +x}."""
    bodies = {b.name: b for b in character.bodies}

    def pivot(name: str) -> np.ndarray:
        return _pivot(bodies[name], frames)

    out = {}
    for side in SIDES:
        for upper, lower in _SEGMENTS:
            a, b = roles.get(f"{upper}_{side}"), roles.get(f"{lower}_{side}")
            if a is None or b is None:
                continue
            d = turn @ (pivot(b) - pivot(a))
            if np.linalg.norm(d) > 1e-9:
                out[f"{upper}_{side}"] = d / np.linalg.norm(d)
    return out


def default_leg_directions() -> dict[str, np.ndarray]:
    """The default humanoid's thigh and shin directions at rest (world, unit), what other characters'
    legs are hung along to measure their standing height (`hung_foot_drop`)."""
    return {r: d for r, d in _default_directions().items() if r.startswith(("thigh_", "shin_"))}


def _default_directions() -> dict[str, np.ndarray]:
    """The default humanoid's limb directions at rest (`_segment_directions`), computed once."""
    global _DEFAULT_DIRECTIONS
    if _DEFAULT_DIRECTIONS is None:
        from .characters import humanoid
        from .proportions import rest_frames
        default = humanoid()
        roles = roles_of(default)
        _DEFAULT_DIRECTIONS = _segment_directions(default, roles, rest_frames(default),
                                                  facing_turn(default, roles, default.bodies[0].quat))
    return _DEFAULT_DIRECTIONS


_DEFAULT_DIRECTIONS = None


def _limbs_hung(turned: dict, directions: dict[str, np.ndarray], roles: dict[str, str]) -> None:
    """Turn each limb segment's rest rotation in `turned` by the smallest turn that takes its direction
    onto the default humanoid's, an end body (foot, hand) with the segment before it; segments already
    along the default's (the default humanoid, characters proportioned from a rig) are left exactly."""
    from ..core import rotations
    reference = _default_directions()
    for role, d in directions.items():
        want = reference.get(role)
        if want is None or np.allclose(d, want, atol=1e-9):
            continue
        axis = np.cross(d, want)
        angle = float(np.arctan2(np.linalg.norm(axis), np.dot(d, want)))
        if np.linalg.norm(axis) < 1e-12:
            continue  # opposite directions: no single smallest turn, leave the rest as it is
        hang = rotations.to_matrix(rotations.from_axis_angle(axis, angle))
        limb, side = role.rsplit("_", 1)
        for r in (role, f"{_ENDS[limb]}_{side}" if limb in _ENDS else None):
            if r is not None and r in roles:
                turned[roles[r]] = hang @ turned[roles[r]]


def by_role(keyframes: list, character: Character, others: set[str]) -> list:
    """The contact keyframes, written for the default humanoid, on `character`: each pair side naming a
    role (`hand_right`) goes on the body playing it, its point — given in the default humanoid's body
    frame — carried into that body's frame as both stand at rest facing +x, from the joint it turns about
    (an MJCF body's frame and origin are not a Blender bone's; a chest's point from the shoulders, where
    every torso ends), and scaled by the character's height
    over the default's. Where the body playing the
    role is the default's own (its name, turned as the default's at rest: the default humanoid, its
    variants, one proportioned from a rig), the pair is left as written; names of the scene's bodies
    (`others`) and bodies that play no role are left alone."""
    import copy

    from .characters import humanoid
    if not keyframes:  # a running solve polls for appended keyframes every control step: mostly none
        return []
    roles = roles_of(character)
    default = humanoid()
    default_roles = roles_of(default)
    (theirs, own), (ours, base) = standing(character, roles), standing(default, default_roles)
    scale = own / base if own and base else 1.0

    def as_written(role: str) -> bool:
        body = roles[role]
        return body == role and np.allclose(theirs[body], ours[role], atol=1e-9)

    # a chest's points are carried from the shoulders where the character has them (the default always does)
    their_chest = _shoulders_local(character, roles)
    our_chest = _shoulders_local(default, default_roles) if their_chest is not None else None

    def pivot(ch: Character, chest, body: str, role: str) -> np.ndarray:  # where the point's offset is taken from
        if role == "torso" and chest is not None:
            return chest
        b = next(b for b in ch.bodies if b.name == body)
        return _grip_local(b) if role.startswith("hand_") else _joint_local(b)

    out = copy.deepcopy(keyframes)
    for kf in out:
        for pair in kf.pairs:
            for side in ("1", "2"):
                name = getattr(pair, "body" + side)
                if name in others or name not in roles or as_written(name):
                    continue
                body = roles[name]  # the offset from the pivot, as the bodies stand at rest facing +x
                given = np.asarray(getattr(pair, "pos" + side), float)
                offset = ours[name] @ (given - pivot(default, our_chest, name, name))
                point = pivot(character, their_chest, body, name) + theirs[body].T @ (scale * offset)
                setattr(pair, "body" + side, body)
                setattr(pair, "pos" + side, [float(v) for v in point])
    return out
