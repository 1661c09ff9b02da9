"""Characters users bring, from files: an MJCF (their roles completed — those the file names kept, the
rest inferred, what was inferred and what no body plays said) or a PhysKey scene, and a task run with
such a character in place of its own (`solver run TASK --character FILE`)."""
from __future__ import annotations

import copy
import os

from ..core import schema
from ..core.errors import InvalidInput
from ..formats.scene import SceneDesc


def load_character_mjcf(path, notes: list[str]) -> SceneDesc:
    """`mjcf.load_mjcf` with the character's roles completed and stored with it."""
    from .mjcf import load_mjcf
    from .roles import missing_terms, roles_of
    scene = load_mjcf(path, notes)
    char = scene.character
    given = dict(char.roles)
    char.roles = roles_of(char)
    inferred = {r: b for r, b in char.roles.items() if r not in given}
    if inferred:
        notes.append("roles inferred from the body names and tree: " +
                     ", ".join(f"{r} = {b}" for r, b in inferred.items()))
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


def with_character(task, path, notes: list[str]):
    """The task with its scene's character replaced by the one in the file at `path`, which starts in its
    own file's pose at the place the task's character starts (its feet on the floor where the file has
    them): a preset run on any character (its pairs name roles, `roles.by_role`)."""
    from ..formats.scene import check_references
    from ..formats.task import SceneRef, build_scene
    character, pose = character_file(path, notes)
    scene = build_scene(task.scene)
    start = scene.initial_pose.root_pos
    pose = copy.deepcopy(pose)
    pose.root_pos = [float(start[0]), float(start[1]), float(pose.root_pos[2])]
    scene.character, scene.initial_pose, scene.initial_velocity = character, pose, None
    check_references(scene, "--character")
    notes.append(f"the character of '{os.path.basename(path)}' ({len(character.bodies)} bodies) replaces the task's; "
                 "it starts in its own file's pose at the task's starting place")
    task = copy.copy(task)
    task.scene = SceneRef(desc=scene, timestep=scene.timestep)
    return task
