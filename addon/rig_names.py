"""The animator's bone names in what PhysKey says about a solution: a physics humanoid made from the
animator's own rig has the default humanoid's body names (`foot_right`), but the animator knows the rig's
bones (`foot.R`, `mixamorig:RightFoot`); the verdicts, penetration and grasp lines name those instead — on a
rig Rigify generated, the controls the animator keys rather than its hidden ORG bones."""
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
    return animator_names(rig, stored_mapping(rig))


def animator_names(rig, mapping: dict[str, str]) -> dict[str, str]:
    """{physics body: the bone the animator knows it by} of `rig`'s humanoid `mapping`."""
    from .rigify_bake import is_rigify_generated
    names = {body: bone for body, bone in mapping.items() if bone}
    return {body: rigify_control(rig, bone) for body, bone in names.items()} if is_rigify_generated(rig) else names


_TRUNK_CONTROLS = {"ORG-spine": "torso", "ORG-spine.004": "neck", "ORG-spine.006": "head"}
_LIMB = re.compile(r"^ORG-(thigh|shin|foot|upper_arm|forearm|hand)\.([LR])$")


def rigify_control(rig, bone: str) -> str:
    """The control an animator keys for ORG bone `bone` of a rig Rigify generated: a limb's FK control
    (`thigh_fk.L`) where its IK/FK switch stands on FK, its IK control (`foot_ik.L`, `thigh_ik.L`) on IK;
    the trunk's `torso`, `neck` and `head`; a bone without a control (the shin on IK, the spine between
    hips and chest) by its own name, as the metarig named it (`shin.L`, `spine.002`)."""
    limb = _LIMB.match(bone)
    if limb is None:
        name = _TRUNK_CONTROLS.get(bone, bone.removeprefix("ORG-"))
    else:
        part, side = limb.groups()
        switch = rig.pose.bones.get(f"{'thigh' if part in ('thigh', 'shin', 'foot') else 'upper_arm'}_parent.{side}")
        fk = switch is not None and float(switch.get("IK_FK", 0.0)) >= 0.5
        name = f"{part}_{'fk' if fk else 'ik'}.{side}"
    return name if name in rig.data.bones else bone.removeprefix("ORG-")


def in_rig_names(text: str, names: dict[str, str]) -> str:
    """`text` with every limb body name of `names` (`foot_right`: a whole word, never the plain words
    "head" or "torso" that the phrases also use) replaced by its rig bone."""
    limbs = sorted((n for n in names if "_" in n), key=len, reverse=True)
    if not limbs or not text:
        return text
    pattern = re.compile(r"(?<![\w.:])(" + "|".join(map(re.escape, limbs)) + r")(?![\w])")
    return pattern.sub(lambda m: names[m.group(1)], text)
