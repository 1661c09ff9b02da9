"""A task run with a character users bring in place of its own (`solver run TASK --character FILE`,
Load Scene Preset on an imported character): the character starts in the task's start pose, fitted onto
its bodies by their roles (`pose_fit`) and rested on the furniture."""
from __future__ import annotations

import copy
import os

from ..builders.character_files import character_file, placed_like
from ..formats.scene import Pose, SceneDesc


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
    task.scene = SceneRef(desc=scene)  # the scene keeps its own timestep
    return task


# m per radian of a joint no role pins away from its rest: the CMU humanoid's spine (three joints between its
# pelvis and chest) was fitted zig-zag from limit to limit, and its seated start sank 7.5 cm into the chair
REST_WEIGHT = 0.2


def posed_like(character, own_pose, scene: SceneDesc):
    """The pose `character` takes for the start of `scene` (the default humanoid's, in its pose at the
    start): each body playing a role turns about its joint where the default's turns (scaled by height
    about the default's root, across the floor) and is turned as the default's is from their common rest
    (both facing +x, limbs hanging as the default's: `roles.standing`) — one whole-body fit (`pose_fit`:
    within its joint ranges, above the floor, joints no role pins kept near their rest) from its
    own pose `own_pose` placed there (`placed_like`) — then rested on the furniture (`rest.rest_pose`)."""
    import mujoco
    import numpy as np

    from ..builders.characters import humanoid
    from ..builders.mjcf import HINGE, ROOT_JOINT, compile_spec, initial_qpos, scene_to_spec
    from ..builders.rest import rest_pose
    from ..builders.roles import roles_of, standing
    from .pose_fit import END_WEIGHT, PoseTargets, fit_poses
    default, roles = humanoid(), roles_of(character)
    ours, base = standing(default, roles_of(default))
    theirs, own = standing(character, roles)
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
                          rotations=np.array([turns]), weights=weights, rest_weight=REST_WEIGHT)
    q = fit_poses(fitted, targets, start=initial_qpos(mine, fitted)).qpos[0]
    a = int(fitted.jnt_qposadr[fitted.joint(ROOT_JOINT).id])
    mine.initial_pose = Pose(root_pos=[float(v) for v in q[a:a + 3]], root_quat=[float(v) for v in q[a + 3:a + 7]],
                             joints={fitted.joint(j).name: float(q[fitted.jnt_qposadr[j]]) for j in range(fitted.njnt)
                                     if fitted.jnt_type[j] == HINGE})
    return rest_pose(mine)



def stands_on_its_feet(scene: SceneDesc) -> bool:
    """Whether the scene's character starts on its feet alone (a standing start, where a character of other
    proportions is fitted by roles to stand on the floor) rather than also on a seat, a bed, an armrest or the
    floor under another body (where its own joint angles rested on the furniture keep it seated): no body but
    the feet (and their toes) within RESTING_GAP of anything outside the character."""
    import mujoco
    import numpy as np

    from ..builders.mjcf import compile_spec, initial_qpos, scene_to_spec
    from ..builders.roles import roles_of
    model = compile_spec(scene_to_spec(scene))
    data = mujoco.MjData(model)
    data.qpos[:] = initial_qpos(scene, model)
    mujoco.mj_forward(model, data)
    roles = roles_of(scene.character)
    feet = {model.body(roles[r]).id for r in ("foot_left", "foot_right") if r in roles}
    feet |= {b for b in range(model.nbody) if model.body_parentid[b] in feet}  # toes
    ours = np.isin(model.geom_bodyid, [model.body(b.name).id for b in scene.character.bodies])
    resting = {int(model.geom_bodyid[g]) for g in np.flatnonzero(ours) for h in np.flatnonzero(~ours)
               if mujoco.mj_geomDistance(model, data, int(g), int(h), RESTING_GAP, None) < RESTING_GAP}
    return bool(resting) and resting <= feet


def set_down(scene: SceneDesc) -> Pose:
    """The scene's start pose lowered, as it is, until the character touches what is under it (a standing start
    fitted by roles from a default humanoid's of other ankle heights stands 5–6 cm above the floor, and would
    drop at the start); the pose itself where it touches already or nothing is under it."""
    import mujoco
    import numpy as np

    from ..builders.mjcf import compile_spec, initial_qpos, scene_to_spec
    model = compile_spec(scene_to_spec(scene))
    data = mujoco.MjData(model)
    data.qpos[:] = initial_qpos(scene, model)
    mujoco.mj_forward(model, data)
    ours = np.isin(model.geom_bodyid, [model.body(b.name).id for b in scene.character.bodies])
    gap = min((mujoco.mj_geomDistance(model, data, int(g), int(h), SET_DOWN_MAX, None)
               for g in np.flatnonzero(ours) for h in np.flatnonzero(~ours)), default=SET_DOWN_MAX)
    if not 0.0 < gap < SET_DOWN_MAX:
        return scene.initial_pose
    pose = copy.deepcopy(scene.initial_pose)
    pose.root_pos = [pose.root_pos[0], pose.root_pos[1], pose.root_pos[2] - gap]
    return pose


# m: how far `set_down` looks below the character (a start pose higher above everything is left as it is)
SET_DOWN_MAX = 0.2
# m: a body this near something outside the character rests on it (MuJoCo MPC's seated start holds the pelvis 7 mm
# above the bench)
RESTING_GAP = 0.02
