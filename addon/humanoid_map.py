"""Which of an animator's bones are the humanoid's pelvis, spine, chest, head, legs and arms.

Pure Python over plain bone records (no `bpy`): names first — Rigify meta-rigs and generated rigs
(`ORG-`/`DEF-`, `.L/.R`), Mixamo (`mixamorig:LeftUpLeg`), the Unreal mannequin (`thigh_l`),
Biovision captures (`LeftHip`, `LeftCollar` → `LeftShoulder`), Blender's own metarig names — then
topology where names fail: the pelvis is the nearest common ancestor of the thighs, the chest the
nearest common ancestor of the upper arms, the abdomen the spine bones between them, the head the
top of the chain above the chest. The slots are the default humanoid's body names, so a mapped rig
is the default humanoid with the animator's proportions. Fingers, face, twist and mechanism bones
are left unmapped: welded to their mapped parent. A skeleton whose arms end at the wrist (a capture
with no hand joint) maps each hand to its forearm bone: the hand is the forearm's end
(`hand_at_forearm_end`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .i18n import iface_, n_, rpt_

SIDES = ("left", "right")
LIMB_SLOTS = ("thigh", "shin", "foot", "upper_arm", "lower_arm", "hand")
TRUNK_SLOTS = ("pelvis", "waist_lower", "torso", "head")
SLOTS = TRUNK_SLOTS + tuple(f"{limb}_{side}" for side in ("right", "left") for limb in LIMB_SLOTS)
LABELS = {"pelvis": n_("Pelvis"), "waist_lower": n_("Lower back"), "torso": n_("Chest"), "head": n_("Head"),
          "thigh": n_("Thigh"), "shin": n_("Shin"), "foot": n_("Foot"), "upper_arm": n_("Upper arm"),
          "lower_arm": n_("Forearm"), "hand": n_("Hand")}
SIDE_LABELS = {"left": n_("left"), "right": n_("right")}
# What a limb bone is called, after prefixes and the side are taken off (lower case, no separators).
_LIMB_NAMES = {
    "thigh": ("thigh", "upleg", "upperleg", "thighbone", "femur", "hipjoint", "hip"),
    "shin": ("shin", "calf", "leg", "lowerleg", "knee", "tibia", "crus"),
    "foot": ("foot", "ankle"),
    "upper_arm": ("upperarm", "arm", "humerus"),
    "lower_arm": ("forearm", "lowerarm", "elbow", "radius", "ulna"),
    "hand": ("hand", "wrist", "palm"),
}
# Names a limb bone has only below a bone of another name, taken where no bone has one of
# `_LIMB_NAMES`: in Biovision captures (`LeftCollar` → `LeftShoulder` → `LeftElbow`) the shoulder
# below the collar is the upper arm; in Mixamo's (`Spine2` → `LeftShoulder` → `LeftArm`) the clavicle.
_FALLBACK_LIMB_NAMES = {"upper_arm": ("shoulder",)}
_FALLBACK_PARENTS = {"upper_arm": ("collar", "clavicle")}
_SPINE_NAMES = ("spine", "neck", "head", "chest", "upperchest", "abdomen", "back")
# Bones that are controls, helpers or deformation extras, never the limb itself.
_HELPER = re.compile(r"(^|[^a-z])(ik|fk|mch|wgt|pole|target|tweak|twist|roll|parent|socket|ctrl|ctl|helper|"
                     r"end|nub|tip|vis|str|rot|swing|master|prop|corrective|bend|mid|lowres)([^a-z]|$)")
_PREFIX = re.compile(r"^(mixamorig\d*:|def-|org-|bip\d*[ _]|cc_base_|rig[:_]|armature[:_]|valvebiped\.bip01_)")


@dataclass(frozen=True)
class BoneInfo:
    """What mapping needs of a bone: rest-pose head and tail in the armature's space."""
    name: str
    parent: str | None
    head: tuple[float, float, float]
    tail: tuple[float, float, float]
    deform: bool = True


class MappingError(ValueError):
    """A rig in which no humanoid can be found; the message says what is missing and how to fix it, and
    `partial` {slot: bone} holds what was found, for the animator to finish by hand."""

    def __init__(self, message: str, partial: dict[str, str] | None = None):
        super().__init__(message)
        self.partial = dict(partial or {})


def side_and_base(name: str) -> tuple[str | None, str]:
    """('left' | 'right' | None, the name lower-cased without prefixes, side markers, numbering and
    separators), e.g. 'mixamorig:LeftUpLeg' → ('left', 'upleg'), 'DEF-thigh.L' → ('left', 'thigh')."""
    n = re.sub(r"[._\- ]0*\d+$", "", _PREFIX.sub("", name.strip().lower()))  # DEF-thigh.L.001
    side = None
    for pattern, s in ((r"[._\- ]l$", "left"), (r"[._\- ]r$", "right"), (r"[._\- ]left$", "left"),
                       (r"[._\- ]right$", "right"), (r"^left[._\- ]?", "left"), (r"^right[._\- ]?", "right"),
                       (r"^l[._\- ]", "left"), (r"^r[._\- ]", "right")):
        if re.search(pattern, n):
            side, n = s, re.sub(pattern, "", n)
            break
    n = re.sub(r"[._\- ]?0*\d+$", "", n)  # spine.001, spine_01, Spine1
    return side, re.sub(r"[^a-z]", "", n)


def _close(a, b, tol: float = 1e-5) -> bool:
    return sum((x - y) ** 2 for x, y in zip(a, b)) <= tol * tol


def is_helper(name: str) -> bool:
    return bool(_HELPER.search(_PREFIX.sub("", name.lower()).replace(".", "_")))


class _Rig:
    def __init__(self, bones: list[BoneInfo]):
        full_parent = {b.name: b.parent for b in bones}
        self.generated = any(b.name.startswith("ORG-") for b in bones)
        if self.generated:  # the ORG- bones carry the meta-rig's hierarchy; the rest is machinery
            bones = [b for b in bones if b.name.startswith("ORG-")]
        self.by_name = {b.name: b for b in bones}
        self.parent = {}
        for b in bones:  # the nearest ancestor that is kept
            p = b.parent
            while p is not None and p not in self.by_name:
                p = full_parent.get(p)
            self.parent[b.name] = p
        if self.generated:
            # Rigify parents each ORG spine bone to its own control; the meta-rig's chain is where a
            # bone's tail meets the next one's head (the meta-rig's connected bones).
            for b in bones:
                joined = [a.name for a in bones if a is not b and _close(a.tail, b.head)]
                if joined:
                    self.parent[b.name] = joined[0]
        self.children: dict[str, list[str]] = {b.name: [] for b in bones}
        for name, parent in self.parent.items():
            if parent is not None:
                self.children[parent].append(name)

    def ancestors(self, name: str) -> list[str]:
        out, p = [], self.parent.get(name)
        while p is not None:
            out.append(p)
            p = self.parent.get(p)
        return out

    def common_ancestor(self, a: str, b: str) -> str | None:
        up = set(self.ancestors(b))
        return next((x for x in self.ancestors(a) if x in up), None)


def _limb_candidates(rig: _Rig, limb: str, side: str, names: dict = _LIMB_NAMES) -> list[str]:
    out = []
    for b in rig.by_name.values():
        s, base = side_and_base(b.name)
        if s == side and base in names.get(limb, ()) and not is_helper(b.name):
            out.append(b.name)
    # deform bones first, then the shallowest (DEF-thigh.L before DEF-thigh.L.001)
    return sorted(out, key=lambda n: (not rig.by_name[n].deform, len(rig.ancestors(n)), n))


def _limbs(rig: _Rig, side: str) -> dict[str, str]:
    """The six limb slots of one side, each a descendant of the previous one in its limb."""
    found: dict[str, str] = {}
    for chain in (("thigh", "shin", "foot"), ("upper_arm", "lower_arm", "hand")):
        above = None
        for limb in chain:
            names = [n for n in _limb_candidates(rig, limb, side) if above is None or above in rig.ancestors(n)]
            if not names and above is None:
                names = [n for n in _limb_candidates(rig, limb, side, _FALLBACK_LIMB_NAMES) if rig.parent[n]
                         and side_and_base(rig.parent[n])[1] in _FALLBACK_PARENTS[limb]]
            if not names and above is not None:  # topology: the next bone down the chain
                names = [c for c in rig.children[above] if not is_helper(c)
                         and side_and_base(c)[0] in (side, None)][:1]
            if names:
                found[f"{limb}_{side}"] = above = names[0]
    if f"lower_arm_{side}" in found and f"hand_{side}" not in found:
        found[f"hand_{side}"] = found[f"lower_arm_{side}"]  # no hand bone: the hand is the forearm's end
    return found


def hand_at_forearm_end(mapping: dict[str, str], slot: str) -> bool:
    """Whether `slot` is a hand mapped to its own forearm's bone: a skeleton without hand bones, whose
    hand is where its forearm ends (its head at the forearm's tail, turned with the forearm)."""
    return slot.startswith("hand_") and bool(mapping.get(slot)) and \
        mapping.get(slot) == mapping.get("lower_arm_" + slot[len("hand_"):])


def _chain(rig: _Rig, start: str, up: int) -> list[str]:
    """From `start` down its limb: at each bone, the child that continues it (the longest one)."""
    out = [start]
    while True:
        kids = [c for c in rig.children[out[-1]] if not is_helper(c)]
        if not kids:
            return out
        out.append(max(kids, key=lambda c: _length(rig, c)))


def _length(rig: _Rig, name: str) -> float:
    b = rig.by_name[name]
    return sum((h - t) ** 2 for h, t in zip(b.head, b.tail)) ** 0.5


def _limbs_by_shape(rig: _Rig, up: int) -> dict[str, str]:
    """Legs and arms where names say nothing: mirrored pairs of chains of at least three bones hanging
    from one parent — the pair reaching lowest are the legs; of the rest, the pair reaching furthest
    sideways are the arms (a short first bone of an arm chain is a clavicle). Left is +X (Blender's
    convention for a character facing -Y)."""
    side_axis = 0 if up != 0 else 1

    def x(name):
        return rig.by_name[name].head[side_axis]

    pairs = []
    for kids in rig.children.values():
        for a in kids:
            for b in kids:
                if a < b and x(a) * x(b) < 0 and abs(abs(x(a)) - abs(x(b))) < 0.25 * max(abs(x(a)), abs(x(b))):
                    ca, cb = _chain(rig, a, up), _chain(rig, b, up)
                    if min(len(ca), len(cb)) >= 3:
                        pairs.append((ca, cb) if x(a) > 0 else (cb, ca))
    if len(pairs) < 2:
        return {}

    def low(pair):
        return min(rig.by_name[n].tail[up] for n in pair[0] + pair[1])

    legs = min(pairs, key=low)
    rest = [p for p in pairs if p is not legs and not set(p[0]) & set(legs[0])]
    if not rest:
        return {}
    arms = max(rest, key=lambda p: max(abs(rig.by_name[n].tail[side_axis]) for n in p[0]))
    found = {}
    for (left, right), names in ((legs, ("thigh", "shin", "foot")), (arms, ("upper_arm", "lower_arm", "hand"))):
        for side, chain in (("left", left), ("right", right)):
            if names[0] == "upper_arm" and len(chain) >= 4 and _length(rig, chain[0]) < 0.6 * _length(rig, chain[1]):
                chain = chain[1:]  # the clavicle
            for slot, bone in zip(names, chain):
                found[f"{slot}_{side}"] = bone
    return found


def _height(rig: _Rig, name: str, up: int) -> float:
    return rig.by_name[name].head[up]


def _head_bone(rig: _Rig, chest: str, arms: set[str], up: int) -> str | None:
    """The top of the chain above the chest: follow the child that reaches highest, never into an arm."""
    by_name = [c for c in rig.by_name if side_and_base(c)[1] == "head" and chest in rig.ancestors(c)
               and not is_helper(c)]
    if by_name:
        return min(by_name, key=lambda n: len(rig.ancestors(n)))
    current, best, named = chest, None, False
    while True:
        kids = [c for c in rig.children[current] if not _subtree(rig, c) & arms
                and rig.by_name[c].tail[up] > rig.by_name[c].head[up]]
        chain = [c for c in kids if side_and_base(c)[1] in _SPINE_NAMES]
        if chain:
            kids, named = chain, True
        elif named:  # past the named neck and head: face bones
            return best
        if not kids:
            if best is not None and not named and not rig.children[best] and rig.parent[best] != chest \
                    and _length(rig, best) < 0.6 * _length(rig, rig.parent[best]):
                return rig.parent[best]  # a short end bone (Mixamo's HeadTop_End) marks the top of the head
            return best
        current = best = max(kids, key=lambda c: rig.by_name[c].tail[up])


def _subtree(rig: _Rig, name: str) -> set[str]:
    out, todo = set(), [name]
    while todo:
        n = todo.pop()
        out.add(n)
        todo.extend(rig.children[n])
    return out


def map_humanoid(bones: list[BoneInfo], up: int = 2, given: dict[str, str] | None = None) -> dict[str, str]:
    """{slot: bone name} for every slot in SLOTS, or MappingError naming what could not be found (with
    the slots that were). `given` {slot: bone}: the animator's picks, kept (those naming a bone of the
    rig); the rest is found around them. `up` is the index of the armature's up axis (Z in Blender)."""
    names = {b.name for b in bones}
    given = {s: b for s, b in (given or {}).items() if s in SLOTS and b in names}
    found: dict[str, str] = {}
    try:
        return _map(bones, up, found, given)
    except MappingError as e:
        raise MappingError(str(e), dict(e.partial or found, **given)) from None


def _map(bones: list[BoneInfo], up: int, found: dict[str, str], given: dict[str, str]) -> dict[str, str]:
    """map_humanoid's search, filling `found` as it goes."""
    rig = _Rig(bones)
    for side in SIDES:
        found.update(_limbs(rig, side))
    if not found:  # nothing named like a limb: by shape
        found.update(_limbs_by_shape(rig, up))
    found.update({s: b for s, b in given.items() if s not in TRUNK_SLOTS})
    missing_limbs = [s for s in SLOTS if s not in TRUNK_SLOTS and s not in found]
    if not found:
        raise MappingError(rpt_("no humanoid legs or arms: no bone is named like a thigh, shin, foot, upper "
                                "arm, forearm or hand (thigh.L, LeftUpLeg, thigh_l …) and no two mirrored "
                                "chains of three bones hang from one bone; name them so, or pick each in the "
                                "Your Rig panel"))
    if missing_limbs:
        raise MappingError(rpt_("no bone found for {}: name the bones the usual way (thigh.L, LeftUpLeg, "
                                "thigh_l …) or pick them in the Your Rig panel").format(
                                    ", ".join(slot_label(s) for s in missing_limbs)))
    pelvis = rig.common_ancestor(found["thigh_left"], found["thigh_right"])
    chest = rig.common_ancestor(found["upper_arm_left"], found["upper_arm_right"])
    if pelvis is None or chest is None or pelvis not in rig.ancestors(chest):
        raise MappingError(rpt_("the legs and the arms do not meet in one spine (the thighs' common parent must "
                                "be below the upper arms' common parent): pick Pelvis and Chest in the Your Rig panel"))
    spine = list(reversed([chest] + rig.ancestors(chest)[: rig.ancestors(chest).index(pelvis)]))
    if len(spine) < 2:
        raise MappingError(rpt_("only one bone ('{}') between the pelvis '{}' and the arms: the humanoid bends "
                                "at the waist and the chest, so the spine needs at least two "
                                "bones").format(chest, pelvis))
    hip = 0.5 * (_height(rig, found["thigh_left"], up) + _height(rig, found["thigh_right"], up))
    shoulder = 0.5 * (_height(rig, found["upper_arm_left"], up) + _height(rig, found["upper_arm_right"], up))
    # The default humanoid's chest joint is about half-way from the hips to the shoulders.
    chest_joint = min(spine[1:], key=lambda n: abs((_height(rig, n, up) - hip) / max(shoulder - hip, 1e-9) - 0.5))
    found.update(pelvis=pelvis, waist_lower=spine[0], torso=chest_joint)
    arms = {found["upper_arm_left"], found["upper_arm_right"]}
    head = _head_bone(rig, chest, arms, up)
    if head is None:
        raise MappingError(rpt_("no head above the chest '{}': pick the Head bone in the Your Rig panel").format(chest))
    found["head"] = head
    found.update(given)
    check_mapping(found, bones)
    return {s: found[s] for s in SLOTS}


def slot_label(slot: str) -> str:
    """What the Your Rig panel and the messages call a slot, e.g. 'Forearm (left)'."""
    for side in SIDES:
        if slot.endswith("_" + side):
            return iface_("{} ({})").format(iface_(LABELS[slot[: -len(side) - 1]]), iface_(SIDE_LABELS[side]))
    return iface_(LABELS[slot])


def check_mapping(mapping: dict[str, str], bones: list[BoneInfo]) -> None:
    """MappingError for a slot with no bone, a bone the rig does not have, one bone in two slots or a
    zero-length bone, each named."""
    names = {b.name: b for b in bones}
    missing = [s for s in SLOTS if not mapping.get(s)]
    if missing:
        raise MappingError(rpt_("no bone for {}: pick one in the Your Rig "
                                "panel").format(', '.join(slot_label(s) for s in missing)))
    for slot in SLOTS:
        if mapping[slot] not in names:
            raise MappingError(rpt_("{}: the rig has no bone '{}'").format(slot_label(slot), mapping[slot]))
    seen: dict[str, str] = {}
    for slot in SLOTS:
        bone = mapping[slot]
        if bone in seen and not hand_at_forearm_end(mapping, slot):
            raise MappingError(rpt_("bone '{}' is mapped to both {} and "
                                    "{}").format(bone, slot_label(seen[bone]), slot_label(slot)))
        seen[bone] = slot
        b = names[bone]
        if sum((h - t) ** 2 for h, t in zip(b.head, b.tail)) <= 1e-12:
            raise MappingError(rpt_("bone '{}' ({}) has zero length").format(bone, slot_label(slot)))
