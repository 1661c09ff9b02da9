"""The roles a character's bodies play (which is the pelvis, the chest, the left foot …): their names,
and how a character stores the ones it was given — in the scene file (`Character.roles`) and in MJCF as
the custom text `physkey_roles`. Inference lives in `builders/roles.py`.

A role is named as the default humanoid's body that plays it (`torso` is the chest), so the default
humanoid and the characters proportioned from rigs play every role with the body of that name.
"""
from __future__ import annotations

from ..core.errors import InvalidInput

SIDES = ("left", "right")
LIMBS = ("thigh", "shin", "foot", "upper_arm", "lower_arm", "hand")
TRUNK = ("pelvis", "torso", "head")
ROLES = TRUNK + tuple(f"{limb}_{side}" for side in SIDES for limb in LIMBS)
MJCF_TEXT = "physkey_roles"  # the MJCF custom text holding a character's roles: "role=body;role=body"


def parse_roles(text: str, where: str) -> dict[str, str]:
    """Roles from their MJCF custom text ("role=body;role=body")."""
    out = {}
    for item in filter(None, (s.strip() for s in text.split(";"))):
        role, sep, body = item.partition("=")
        if not sep or not role.strip() or not body.strip():
            raise InvalidInput(where, f"'{item}' is not role=body")
        out[role.strip()] = body.strip()
    return out


def format_roles(roles: dict[str, str]) -> str:
    return ";".join(f"{role}={body}" for role, body in sorted(roles.items()))


def check_roles(roles: dict[str, str], bodies: set[str], path: str) -> None:
    """InvalidInput for a stored role that is not a role, or a body the character does not have."""
    for role, body in roles.items():
        if role not in ROLES:
            raise InvalidInput(f"{path}.roles.{role}", f"not a role; the roles are {', '.join(ROLES)}")
        if body not in bodies:
            raise InvalidInput(f"{path}.roles.{role}", f"the character has no body '{body}'")
