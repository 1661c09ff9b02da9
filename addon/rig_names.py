"""The animator's bone names in what PhysKey says about a solution: a physics humanoid made from the
animator's own rig has the default humanoid's body names (`foot_right`), but the animator knows the rig's
bones (`foot.R`, `mixamorig:RightFoot`); the verdicts, penetration and grasp lines name those instead."""
from __future__ import annotations

import re

from .retarget import stored_mapping
from .session import active_character


def rig_names(context) -> dict[str, str]:
    """{physics body: the rig bone it stands for} for the active physics character made from the
    animator's rig (its stored humanoid map); empty for any other character, whose bodies are its bones."""
    obj = active_character(context)
    rig = obj.physkey.animator_rig if obj is not None else None
    if rig is None or rig.type != "ARMATURE":
        return {}
    return {body: bone for body, bone in stored_mapping(rig).items() if bone}


def in_rig_names(text: str, names: dict[str, str]) -> str:
    """`text` with every limb body name of `names` (`foot_right`: a whole word, never the plain words
    "head" or "torso" that the phrases also use) replaced by its rig bone."""
    limbs = sorted((n for n in names if "_" in n), key=len, reverse=True)
    if not limbs or not text:
        return text
    pattern = re.compile(r"(?<![\w.:])(" + "|".join(map(re.escape, limbs)) + r")(?![\w])")
    return pattern.sub(lambda m: names[m.group(1)], text)
