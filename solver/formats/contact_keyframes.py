"""Contact keyframes: ordered sets of point pairs (character body ↔ world, environment or character)
to bring together within a tolerance, with no timing.

A keyframe succeeds when the norm of its stacked pair displacements stays ≤ `tolerance` for
`sustain` seconds, with every free object it pairs with a fixed environment body (box ↔ shelf)
resting on that body (`mpc.keyframe_tracker.placements`); it fails if `time_limit` passes first. Task files
may also list `{"include": "TASK_NAME", "reverse": true}` to splice in another task's keyframes
(get-up = lie-down reversed).
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from typing import Optional

from ..core import schema
from ..core.errors import InvalidInput
from ..core.limits import MAX_MOTION_S
from ..core.paths import task_path
from .objective_terms import DEFAULT_WEIGHTS, STYLES, TERM_NAMES
from .scene import SceneDesc

WORLD = "world"
MAX_KEYFRAME_HORIZON = 2.0  # s: a sampling planner's rollouts lose all guidance long before
@dataclass
class ContactPair:
    """`pos1` on `body1` (a character body, or a free object of the scene: box ↔ shelf) should meet
    `pos2` on `body2` (an environment body, a character body, or `world`); positions are in the named
    body's frame."""
    body1: str
    pos1: list[float] = field(metadata={"length": 3})
    body2: str = WORLD
    pos2: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0], metadata={"length": 3})


@dataclass
class ContactKeyframe:
    pairs: list[ContactPair] = field(metadata={"min_length": 1})
    name: str = "keyframe"
    tolerance: float = field(default=0.1, metadata={"positive": True})
    sustain: float = field(default=0.5, metadata={"nonneg": True})
    time_limit: float = field(default=10.0, metadata={"positive": True})
    weights: dict[str, float] = field(default_factory=dict, metadata={"nonneg": True})
    facing_target: Optional[list[float]] = field(default=None, metadata={"length": 2})
    # The posture the keyframe means (a name of `objective_terms.STYLES`), held to it where the style
    # says something measurable: "standing" counts only with the character standing (`physics.posture`).
    style: Optional[str] = None
    # The planner's look-ahead while this keyframe is active (None: the settings' horizon). Rising from a
    # seat and balancing on the feet want a longer one than reaching does (docs/METHODS.md).
    horizon: Optional[float] = field(default=None, metadata={"positive": True})

    def check(self, path):
        if self.style is not None and self.style not in STYLES:
            raise InvalidInput(f"{path}.style", f"unknown style '{self.style}' (have: {', '.join(STYLES)})")
        if self.horizon is not None and self.horizon > MAX_KEYFRAME_HORIZON:
            raise InvalidInput(f"{path}.horizon", f"must be at most {MAX_KEYFRAME_HORIZON:g} s, got {self.horizon}")
        for key in ("sustain", "time_limit"):
            if getattr(self, key) > MAX_MOTION_S:
                raise InvalidInput(f"{path}.{key}", f"must be at most {MAX_MOTION_S:g} s, got {getattr(self, key)}")
        for name in self.weights:
            if name not in TERM_NAMES:
                raise InvalidInput(f"{path}.weights.{name}", f"unknown objective term (have: {', '.join(TERM_NAMES)})")

    def weight(self, term: str) -> float:
        return self.weights.get(term, DEFAULT_WEIGHTS[term])

    @property
    def upright(self) -> bool:
        """Whether the keyframe asks the character to stay up — an upright torso, or its weight over
        its feet (the "reaching" style bends the torso down but keeps balance) — so that a fall while
        it is active is a failure; otherwise lying is meant."""
        return self.weight("Torso Up") != 0.0 or self.weight("COM Feet XY") != 0.0


@dataclass
class Include:
    include: str
    reverse: bool = False


def _load_task_keyframes(name: str, path: str, depth: int) -> list:
    file = task_path(name)
    if not name.replace("_", "").isalnum() or not os.path.exists(file):
        raise InvalidInput(f"{path}.include", f"no task '{name}' in scenes/tasks")
    if depth > 8:
        raise InvalidInput(f"{path}.include", "includes nest too deeply (a task including itself?)")
    with open(file, encoding="utf-8") as f:
        doc = schema.load_json_text(f.read(), file)
    return parse_keyframes(doc.get("keyframes", []), f"{path}<{name}>.keyframes", depth + 1)


def parse_keyframes(items, path: str = "keyframes", depth: int = 0) -> list[ContactKeyframe]:
    """Task JSON keyframes → ContactKeyframe list, includes expanded."""
    if not isinstance(items, list):
        raise InvalidInput(path, "must be a list")
    out: list[ContactKeyframe] = []
    for i, item in enumerate(items):
        sub = f"{path}[{i}]"
        if isinstance(item, dict) and "include" in item:
            inc = schema.from_dict(Include, item, sub)
            kfs = _load_task_keyframes(inc.include, sub, depth)
            out.extend(reversed(kfs) if inc.reverse else kfs)
        else:
            out.append(schema.from_dict(ContactKeyframe, item, sub))
    return [copy.deepcopy(k) for k in out]


def _no_role(name: str) -> str:
    from .roles import ROLES
    return (f", and no body of the character plays the role '{name}' (name it in the character's roles)"
            if name in ROLES else "")


def check_bodies(keyframes: list[ContactKeyframe], scene: SceneDesc, path: str = "keyframes") -> None:
    """Every pair names bodies the scene has: body1 on the character or a free object (a box to put
    somewhere), body2 anywhere or `world`; a pair of which neither side can move is refused."""
    character = {b.name for b in scene.character.bodies}
    env = {b.name: b.kind for b in scene.environment.bodies}
    for i, kf in enumerate(keyframes):
        for j, pair in enumerate(kf.pairs):
            p = f"{path}[{i}].pairs[{j}]"
            if pair.body1 not in character and pair.body1 not in env:
                raise InvalidInput(f"{p}.body1", f"no body '{pair.body1}' in the character or the scene's objects"
                                   + _no_role(pair.body1))
            if pair.body2 != WORLD and pair.body2 not in character and pair.body2 not in env:
                raise InvalidInput(f"{p}.body2", f"no body '{pair.body2}' in the scene (or use 'world')"
                                   + _no_role(pair.body2))
            if env.get(pair.body1) == "static":
                fixed2 = pair.body2 == WORLD or env.get(pair.body2) == "static"
                raise InvalidInput(f"{p}.body1", f"'{pair.body1}' is fixed in place" + (
                    f" and so is '{pair.body2}': the pair can never move" if fixed2 else
                    ": put the moving side first (a character body or a free object)"))
            if pair.body1 in env and pair.body1 == pair.body2:
                raise InvalidInput(f"{p}.body2", f"a pair between '{pair.body1}' and itself never moves")
