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
    "the term Foot Slip": ("foot_left", "foot_right"),
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


def standing(character: Character, roles: dict[str, str]) -> tuple[dict, float | None]:
    """({body: rotation at rest, turned to face +x}, how far the head's origin is above the feet's at
    rest — None without a head or feet)."""
    from .proportions import rest_frames
    frames = rest_frames(character)
    turn = facing_turn(character, roles, character.bodies[0].quat)
    turned = {name: turn @ r for name, (_, r) in frames.items()}
    feet = [roles.get(f"foot_{s}") for s in SIDES]
    if "head" not in roles or None in feet:
        return turned, None
    return turned, float(frames[roles["head"]][0][2] - min(frames[f][0][2] for f in feet))


def by_role(keyframes: list, character: Character, others: set[str]) -> list:
    """The contact keyframes, written for the default humanoid, on `character`: each pair side naming a
    role (`hand_right`) goes on the body playing it, its point — given in the default humanoid's body
    frame — carried into that body's frame as both stand at rest facing +x, from the joint it turns about
    (an MJCF body's frame and origin are not a Blender bone's), and scaled by the character's height
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
    (theirs, own), (ours, base) = standing(character, roles), standing(default, roles_of(default))
    scale = own / base if own and base else 1.0

    def as_written(role: str) -> bool:
        body = roles[role]
        return body == role and np.allclose(theirs[body], ours[role], atol=1e-9)

    def pivot(ch: Character, body: str) -> np.ndarray:  # where the body turns: its first joint's pivot
        joints = next(b for b in ch.bodies if b.name == body).joints
        return np.asarray(joints[0].pos, float) if joints else np.zeros(3)

    out = copy.deepcopy(keyframes)
    for kf in out:
        for pair in kf.pairs:
            for side in ("1", "2"):
                name = getattr(pair, "body" + side)
                if name in others or name not in roles or as_written(name):
                    continue
                body = roles[name]  # the offset from the pivot, as the bodies stand at rest facing +x
                offset = ours[name] @ (np.asarray(getattr(pair, "pos" + side), float) - pivot(default, name))
                point = pivot(character, body) + theirs[body].T @ (scale * offset)
                setattr(pair, "body" + side, body)
                setattr(pair, "pos" + side, [float(v) for v in point])
    return out
