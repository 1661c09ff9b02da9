"""The default humanoid and its body-shape variants (PartwiseMPC Table 3).

The character itself is data (`scenes/characters/humanoid.json`); a variant thickens the capsules of
one body region until the total mass reaches the paper's figure.
"""
from __future__ import annotations

import copy
import functools
import os

from ..core import schema
from ..core.errors import InvalidInput
from ..core.paths import CHARACTERS_DIR
from ..formats.scene import Character

# Total mass (kg) and the geoms each variant thickens.
VARIANTS = {
    "default": (None, ()),
    "big_arms": (52.65, ("upper_arm_right", "lower_arm_right", "hand_right",
                         "upper_arm_left", "lower_arm_left", "hand_left")),
    "big_legs": (47.31, ("thigh_right", "shin_right", "foot1_right", "foot2_right",
                         "thigh_left", "shin_left", "foot1_left", "foot2_left")),
    "big_belly": (64.95, ("waist_upper", "waist_lower", "butt")),
}


@functools.cache
def _load(name: str) -> Character:
    path = os.path.join(CHARACTERS_DIR, f"{name}.json")
    if not os.path.exists(path):
        raise InvalidInput("scene.character", f"no built-in character '{name}' (have: humanoid)")
    with open(path, encoding="utf-8") as f:
        doc = schema.load_json_text(f.read(), path)
    return schema.from_dict(Character, doc["character"], "character")


def character_mass(character: Character) -> float:
    """Total mass (kg) as MuJoCo computes it from the geoms."""
    from ..formats.scene import SCHEMA_VERSION, Environment, SceneDesc
    from .mjcf import compile_spec, scene_to_spec
    scene = SceneDesc(schema_version=SCHEMA_VERSION, name="mass", character=character,
                      environment=Environment(floor=False))
    model = compile_spec(scene_to_spec(scene))
    return float(model.body_subtreemass[1])


def _scaled(base: Character, geoms: tuple, factor: float) -> Character:
    ch = copy.deepcopy(base)
    for b in ch.bodies:
        for g in b.geoms:
            if g.name in geoms:
                g.size[0] *= factor  # radius only: limbs get thicker, not longer
    return ch


def humanoid(variant: str = "default") -> Character:
    """The default humanoid (≈ 40.8 kg) or one of its heavier variants."""
    if variant not in VARIANTS:
        raise InvalidInput("scene.variant", f"unknown character variant '{variant}' (have: {', '.join(VARIANTS)})")
    base = _load("humanoid")
    target, geoms = VARIANTS[variant]
    if target is None:
        return copy.deepcopy(base)
    lo, hi = 1.0, 3.0
    for _ in range(40):  # bisection on the radius factor; mass grows monotonically with it
        mid = 0.5 * (lo + hi)
        if character_mass(_scaled(base, geoms, mid)) < target:
            lo = mid
        else:
            hi = mid
    return _scaled(base, geoms, round(0.5 * (lo + hi), 6))

