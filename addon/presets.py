"""Scene presets: a task from `scenes/tasks` built in the current scene — the character (posed at
the task's start), the furniture as ordinary meshes grouped under one Empty per piece (move or
scale the Empty to move the piece; contact keyframes refer to it by name), and the task itself
put in the scene the way an animator would have made it: contact keyframes as the scene's list,
pose keyframes as keyed poses on the character's action."""
from __future__ import annotations

import os

import bpy

from ..solver.core.paths import task_names, task_path
from .i18n import rpt_
from .rig import build_armature, pose_from_qpos
from .shapes import add_bone_shapes, character_material, furniture_material, pose_matrix, shape_mesh
from .taskio import key_pose_keyframes, settings_to_scene, store_contact_keyframes
from .timeline import scene_fps


def preset_names() -> list[str]:
    """The scene presets: the tasks of `scenes/tasks`, by name."""
    return task_names()


def build_furniture(context, environment) -> list:
    from ..solver.builders.mjcf import env_body_quat
    created = []
    material = furniture_material()
    for b in environment.bodies:
        empty = bpy.data.objects.new(b.name, None)
        empty.empty_display_type = "PLAIN_AXES"
        empty.physkey.is_body = True
        context.collection.objects.link(empty)
        empty.matrix_world = pose_matrix(b.pos, env_body_quat(b))
        created.append(empty)
        for g in b.geoms:
            if g.type == "mesh":
                import bmesh
                mesh = bpy.data.meshes.new(g.name)
                bm = bmesh.new()
                for v in g.vertices:
                    bm.verts.new(v)
                bmesh.ops.convex_hull(bm, input=bm.verts)
                bm.to_mesh(mesh)
                bm.free()
            else:
                mesh = shape_mesh(g.name, g.type, g.size + [0.0] * (3 - len(g.size)))
            mesh.materials.append(material)
            child = bpy.data.objects.new(g.name, mesh)
            context.collection.objects.link(child)
            child.parent = empty
            child.matrix_basis = pose_matrix(g.pos, g.quat)
            props = child.physkey
            props.collider, props.friction = True, g.friction
            props.shape = "hull" if g.type == "mesh" else g.type
            if b.kind == "free":
                props.dynamic, props.mass = True, g.mass if g.mass is not None else 1.0
            created.append(child)
    return created


def build_scene_objects(context, scene, physics=None):
    """Furniture, the character's rig with its meshes (or `physics`, a physics humanoid made from
    the animator's rig, which then takes the scene's character), posed at the scene's initial pose;
    returns (armature object, compiled model of the scene)."""
    from ..solver.builders.mjcf import compile_spec, initial_qpos, scene_to_spec
    if context.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    build_furniture(context, scene.environment)
    if physics is None:
        obj = build_armature(context, scene.character, scene.character.name)
        add_bone_shapes(context, obj, character_material())
    else:
        obj = physics
    model = compile_spec(scene_to_spec(scene))
    pose_from_qpos(obj, model, initial_qpos(scene, model))
    return obj, model


def _own_rig_physics(context):
    """With the animator's own rig selected: the physics humanoid made from it (made now if it has
    none); None otherwise."""
    rig = context.active_object
    if rig is None or rig.type != "ARMATURE" or rig.physkey.is_character:
        return None
    from .retarget import linked_physics, make_physics_character
    physics = linked_physics(rig)
    if physics is None:
        physics, _, _ = make_physics_character(context, rig)  # a units note stays in the Your Rig panel
        add_bone_shapes(context, physics, character_material())
    return physics


def _joint_names(character) -> set[str]:
    return {j.name for b in character.bodies for j in b.joints}


def _selected_character(context):
    """The PhysKey physics character the animator has selected (one they added or imported), or None."""
    obj = context.active_object
    return obj if obj is not None and obj.type == "ARMATURE" and obj.physkey.is_character else None


def _select_only(context, obj) -> None:
    for o in context.selected_objects:
        o.select_set(False)
    obj.select_set(True)
    context.view_layer.objects.active = obj


def _set_animation_aside(obj, warn) -> None:
    """`obj`'s action (kept with a fake user, never lost) and NLA tracks taken off it, said through `warn`:
    what it played would pose it at every frame over the preset's start, and a solve would start there."""
    ad = obj.animation_data
    if ad is None:
        return
    if ad.action is not None:
        action = ad.action
        action.use_fake_user = True
        ad.action = None
        warn(rpt_("'{}' played the action '{}': it is set aside (kept) so the preset's start pose shows; "
                  "assign it again in the Action Editor").format(obj.name, action.name))
    if ad.use_nla and any(track.strips and not track.mute for track in ad.nla_tracks):
        ad.use_nla = False
        warn(rpt_("the NLA tracks of '{}' are switched off so the preset's start pose shows; switch them on again "
                  "in the NLA Editor").format(obj.name))


def load(context, name: str, warn=lambda msg: None):
    """Build preset `name`; returns the character's armature object. What it does to the animator's
    own animation is said through `warn`."""
    from ..solver.formats.task import build_scene, load_task
    names = preset_names()
    if name not in names:
        raise ValueError(rpt_("no preset '{}' (have: {})").format(name, ', '.join(names)))
    task = load_task(task_path(name))
    scene = build_scene(task.scene)
    physics = _own_rig_physics(context) or _selected_character(context)
    if physics is not None:  # the preset on the selected character: never a second one
        from .taskio import checked_character
        character = checked_character(physics)  # made from a rig rescaled since: said before anything changes
        from .solutions import end_preview, showing_preview
        if showing_preview(context):  # a solution shown: the animator's own action back first, then set aside
            end_preview(context)
        # the preset's own skeleton (a physics humanoid made from a rig has its joints): its pose as it is, rested
        # on the furniture — but one made from a rig, of other proportions and rest frames, starting on its feet
        # alone, is fitted by roles as another skeleton is (its torso put where the default's stands, its feet
        # 11 cm into the floor, had been rested with the legs thrown 40° forward); a start pose naming no joints
        # (the reach's, standing at rest) says nothing about another skeleton
        from ..solver.physics.character_start import stands_on_its_feet
        if _joint_names(character) >= _joint_names(scene.character) and not (
                physics.physkey.animator_rig is not None and stands_on_its_feet(scene)):
            from ..solver.builders.rest import rest_pose  # the preset's own pose, rested on the furniture
            scene.character = character
            scene.initial_pose = rest_pose(scene)
        else:  # another skeleton (an imported MJCF): the preset's start pose fitted onto it by roles
            from ..solver.formats.scene import Pose
            from ..solver.physics.character_start import posed_like, set_down
            from .taskio import extract_scene
            made = physics.physkey.animator_rig is not None  # from the animator's rig: fitted from its rest, standing
            root = character.bodies[0]
            own = Pose(root_pos=root.pos, root_quat=root.quat) if made else extract_scene(context).initial_pose
            scene.initial_pose = posed_like(character, own, scene)
            scene.character = character
            if made:  # fitted standing: on the floor, not above it
                scene.initial_pose = set_down(scene)
        for obj in (physics, physics.physkey.animator_rig):  # once nothing more can refuse the preset
            if obj is not None:
                _set_animation_aside(obj, warn)
    pose_kfs = None
    if task.method in ("assist", "track"):  # pose it at its first pose keyframe, where the motion starts
        from ..solver.formats.pose_keyframes import resolve, scene_at_first_pose
        _, pose_kfs = resolve(task.keyframes, scene)
        scene = scene_at_first_pose(scene, pose_kfs)
    obj, model = build_scene_objects(context, scene, physics)
    props = context.scene.physkey
    props.preset, props.method = name, task.method
    from .hits import store_hits
    store_hits(context.scene, task.perturbations, context.scene.frame_start)
    settings_to_scene(props, task.method, task.settings)
    props.contact_keyframes.clear()
    props.pose_keys.clear()
    if task.method == "contact":  # the pairs on the bodies playing the roles they name
        from ..solver.builders.roles import by_role
        from ..solver.formats.contact_keyframes import parse_keyframes
        store_contact_keyframes(context.scene, by_role(parse_keyframes(task.keyframes), scene.character,
                                                       {b.name for b in scene.environment.bodies}))
    elif pose_kfs is not None:
        fps = scene_fps(context.scene)
        key_pose_keyframes(context, obj, model, pose_kfs, task.keyframes, fps, context.scene.frame_start)
        context.scene.frame_end = max(k.frame for k in props.pose_keys)  # the frames the keys span (Make Physical's)
        if task.method == "track":  # a sketch played as the solver plays it: linear between the keys
            from .actions import fcurves
            for fc in fcurves(obj.animation_data.action):
                for point in fc.keyframe_points:
                    point.interpolation = "LINEAR"
    rig = obj.physkey.animator_rig
    if rig is not None:
        _pose_own_rig(context, rig, obj, model)
        _select_only(context, rig)
        return rig
    _select_only(context, obj)
    return obj


def _pose_own_rig(context, rig, physics, model) -> None:
    """The animator's rig posed as the physics humanoid is — at each keyed pose (keyed on the rig,
    where the animator edits them) or, without keys, at the start."""
    from .retarget import pose_rig_from_qpos
    from .rig import qpos_from_pose
    scene = context.scene
    keys = sorted(k.frame for k in scene.physkey.pose_keys)
    if keys:
        rig.animation_data_create()
        rig.animation_data.action = bpy.data.actions.new(f"{scene.name} keys ({rig.name})")
    for frame in keys or [scene.frame_current]:
        scene.frame_set(frame)
        # a channel is (location or None, rotation), and on a Rigify IK root (its turn's) scale too
        for name, (loc, _, *scale) in pose_rig_from_qpos(rig, physics, model, qpos_from_pose(physics, model)).items():
            if not keys:
                continue
            pb = rig.pose.bones[name]
            if loc is not None:
                pb.keyframe_insert("location", frame=frame)
            if scale:
                pb.keyframe_insert("scale", frame=frame)
            channel = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}.get(
                pb.rotation_mode, "rotation_euler")
            pb.keyframe_insert(channel, frame=frame)
    if keys:
        scene.frame_set(keys[0])


def import_mjcf(context, path: str, warn):
    """Build the character of an MJCF file as a rig (in bone frames) with its environment, posed at
    the file's first keyframe (or its rest pose)."""
    import numpy as np

    from ..solver.builders.boneframes import root_offset, to_bone_frames
    from ..solver.builders.character_files import load_character_mjcf
    from ..solver.core import rotations
    if not os.path.isfile(path):
        raise ValueError(rpt_("no file '{}'").format(path))
    notes: list[str] = []
    scene = load_character_mjcf(path, notes)
    for note in notes:
        warn(note)
    original = scene.character
    scene.character = to_bone_frames(original)
    rot, offset = root_offset(original, scene.character)
    r0 = rotations.to_matrix(scene.initial_pose.root_quat)
    scene.initial_pose.root_pos = [float(v) for v in np.asarray(scene.initial_pose.root_pos) + r0 @ offset]
    scene.initial_pose.root_quat = [float(v) for v in rotations.from_matrix(r0 @ rot)]
    obj, model = build_scene_objects(context, scene)
    _select_only(context, obj)
    return obj
