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
    """The task with its scene's character replaced by the one in the file at `path`, which starts in the
    pose the task's character starts in (`posed_like`): a preset run on any character (its pairs name
    roles, `roles.by_role`)."""
    from ..formats.scene import check_references
    from ..formats.task import SceneRef, build_scene
    character, pose = character_file(path, notes)
    scene = build_scene(task.scene)
    scene.initial_pose, scene.character, scene.initial_velocity = posed_like(character, pose, scene), character, None
    check_references(scene, "--character")
    notes.append(f"the character of '{os.path.basename(path)}' ({len(character.bodies)} bodies) replaces the task's; "
                 "it starts in the task's start pose, fitted onto its bodies by their roles")
    task = copy.copy(task)
    task.scene = SceneRef(desc=scene, timestep=scene.timestep)
    return task


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


def posed_like(character, own_pose, scene: SceneDesc):
    """The pose `character` takes for the start of `scene` (the default humanoid's, in its pose at the
    start): each body playing a role turns about its joint where the default's turns (scaled by height
    about the default's root, across the floor) and is turned as the default's is from their common rest
    (both facing +x) — one whole-body fit (`pose_fit`: within its joint ranges, above the floor) from its
    own pose `own_pose` placed there (`placed_like`) — then rested on the furniture (`rest.rest_pose`)."""
    import mujoco
    import numpy as np

    from ..formats.scene import Pose
    from ..physics.pose_fit import END_WEIGHT, PoseTargets, fit_poses
    from .characters import humanoid
    from .mjcf import HINGE, ROOT_JOINT, compile_spec, initial_qpos, scene_to_spec
    from .rest import rest_pose
    from .roles import _standing, roles_of
    default, roles = humanoid(), roles_of(character)
    ours, base = _standing(default, roles_of(default))
    theirs, own = _standing(character, roles)
    scale = own / base if own and base else 1.0
    model = compile_spec(scene_to_spec(scene))  # the default humanoid at the scene's start
    data = mujoco.MjData(model)
    data.qpos[:] = initial_qpos(scene, model)
    mujoco.mj_kinematics(model, data)
    anchor = np.array([*scene.initial_pose.root_pos[:2], 0.0])
    mine = copy.deepcopy(scene)
    mine.character, mine.initial_pose = character, placed_like(character, own_pose, scene.initial_pose)
    fitted = compile_spec(scene_to_spec(mine))
    first = [r for r in roles if roles[r] == character.bodies[0].name]  # the root's role leads (root_start)
    order = first + [r for r in roles if r not in first and r in ours]
    bodies = {b.name: b for b in character.bodies}
    ids, points, positions, turns = [], [], [], []
    for role in order:
        body = roles[role]
        ids.append(fitted.body(body).id)
        points.append(bodies[body].joints[0].pos if bodies[body].joints else [0.0, 0.0, 0.0])
        at = data.xpos[model.body(role).id]
        positions.append(anchor + scale * (at - anchor))
        turns.append(data.xmat[model.body(role).id].reshape(3, 3) @ ours[role].T @ theirs[body])
    weights = np.array([END_WEIGHT if r.startswith(("hand_", "foot_")) else 1.0 for r in order])
    targets = PoseTargets(body_ids=np.array(ids), points=np.array(points, float), positions=np.array([positions]),
                          rotations=np.array([turns]), weights=weights)
    q = fit_poses(fitted, targets, start=initial_qpos(mine, fitted)).qpos[0]
    a = int(fitted.jnt_qposadr[fitted.joint(ROOT_JOINT).id])
    mine.initial_pose = Pose(root_pos=[float(v) for v in q[a:a + 3]], root_quat=[float(v) for v in q[a + 3:a + 7]],
                             joints={fitted.joint(j).name: float(q[fitted.jnt_qposadr[j]]) for j in range(fitted.njnt)
                                     if fitted.jnt_type[j] == HINGE})
    return rest_pose(mine)

