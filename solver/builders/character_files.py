"""Characters users bring, from files: an MJCF (their roles completed — those the file names kept, the
rest inferred, what was inferred and what no body plays said) or a PhysKey scene, and where such a
character stands to face as a preset's does (`placed_like`). A task run with it in place of its own is
`physics/character_start.py`'s."""
from __future__ import annotations

import copy
import os

from ..core import schema
from ..core.errors import InvalidInput
from ..formats.scene import SceneDesc


def load_character_mjcf(path, notes: list[str]) -> SceneDesc:
    """`mjcf_read.load_mjcf` with the character's roles completed and stored with it, and its joints' body
    parts completed from them (`roles.group_by_roles`)."""
    from .mjcf_read import load_mjcf
    from .roles import group_by_roles, missing_terms, roles_of
    scene = load_mjcf(path, notes)
    char = scene.character
    given = dict(char.roles)
    char.roles = roles_of(char)
    inferred = {r: b for r, b in char.roles.items() if r not in given}
    if inferred:
        notes.append("roles inferred from the body names and tree: " +
                     ", ".join(f"{r} = {b}" for r, b in inferred.items()))
    grouped = group_by_roles(char)
    if grouped:
        notes.append("body parts for partwise planning from the roles (the joint names say no side): " +
                     ", ".join(grouped))
    notes.extend(missing_terms(char.roles))
    return scene


def character_file(path, notes: list[str]):
    """(Character, its initial Pose) from a file a user brings: MJCF (`.xml`) or a PhysKey scene (`.json`)."""
    from ..formats.scene import scene_from_dict
    path = os.fspath(path)
    if path.lower().endswith(".xml"):
        scene = load_character_mjcf(path, notes)
    else:
        try:
            with open(path, encoding="utf-8-sig") as f:
                text = f.read()
        except OSError as e:
            raise InvalidInput("--character", f"cannot read '{path}': {e.strerror or e}") from None
        scene = scene_from_dict(schema.load_json_text(text, path), path)
    return scene.character, scene.initial_pose


def placed_like(character, pose, preset_pose):
    """`pose` (the character's own, from its file or as it stands in Blender) moved to where `preset_pose`
    (the default humanoid's, which faces its root's +x) puts its root across the floor, and turned about
    the vertical to face the same way (`roles.facing_turn`), its height kept: its feet stay on the floor
    where its file has them."""
    import numpy as np

    from ..core import rotations
    from .roles import facing_turn, roles_of
    out = copy.deepcopy(pose)
    want = rotations.to_matrix(preset_pose.root_quat)[:, 0]  # the preset character's forward
    c, s = want[0], want[1]
    norm = max(float(np.hypot(c, s)), 1e-12)
    yaw = np.array([[c / norm, -s / norm, 0.0], [s / norm, c / norm, 0.0], [0.0, 0.0, 1.0]])
    turn = yaw @ facing_turn(character, roles_of(character), pose.root_quat)
    out.root_quat = [float(v) for v in rotations.from_matrix(turn @ rotations.to_matrix(pose.root_quat))]
    out.root_pos = [float(preset_pose.root_pos[0]), float(preset_pose.root_pos[1]), float(pose.root_pos[2])]
    return out
