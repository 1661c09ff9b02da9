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

from ..formats.roles import LIMBS, ROLES, SIDES, TRUNK
from ..formats.scene import Character

# What needs which roles: the contact and tracking objective's terms, the quality figures, the fall watch.
NEEDS = {
    "the term Torso Up": ("torso",), "the term Torso Height": ("torso",), "the term Facing Dir": ("torso",),
    "the term Pelvis Up": ("pelvis",), "the term RFoot Up": ("foot_right",), "the term LFoot Up": ("foot_left",),
    "the term Head Height": ("head",), "the term COM Feet XY": ("foot_left", "foot_right"),
    "the term Knee Feet XY": ("foot_left", "foot_right", "shin_left", "shin_right"),
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
    for kind, pair, names in (("leg", legs, ("thigh", "shin", "foot")), ("arm", arms, ("upper_arm", "lower_arm", "hand"))):
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


def roles_of(character: Character) -> dict[str, str]:
    """{role: body} of every role the character plays: its stored roles, the rest inferred."""
    inferred = _by_tree(character)
    inferred.update(_by_names(character))
    inferred.update(character.roles)
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


def _height(character: Character, roles: dict[str, str]) -> float | None:
    """How far the head's origin is above the feet's at rest (None without a head or feet)."""
    from .proportions import rest_frames
    feet = [roles.get(f"foot_{s}") for s in SIDES]
    if "head" not in roles or None in feet:
        return None
    frames = rest_frames(character)
    return float(frames[roles["head"]][0][2] - min(frames[f][0][2] for f in feet))


def by_role(keyframes: list, character: Character, others: set[str]) -> list:
    """The contact keyframes with each pair side that names a role (`hand_right`) and no body of the
    character or the scene (`others`) put on the body playing it, its point scaled by the character's
    height over the default humanoid's — so a preset written for the default humanoid runs on any
    character that plays the roles it uses."""
    import copy

    from .characters import humanoid
    names = {b.name for b in character.bodies} | others
    roles = roles_of(character)
    own, default = _height(character, roles), _height(humanoid(), roles_of(humanoid()))
    scale = own / default if own and default else 1.0
    out = copy.deepcopy(keyframes)
    for kf in out:
        for pair in kf.pairs:
            for side in ("1", "2"):
                name = getattr(pair, "body" + side)
                if name not in names and name in roles:
                    setattr(pair, "body" + side, roles[name])
                    setattr(pair, "pos" + side, [scale * float(v) for v in getattr(pair, "pos" + side)])
    return out
