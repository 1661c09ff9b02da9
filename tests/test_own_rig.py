"""Your own character, driven: on rigs built with Blender's own operators (own_rigs.py), a solved motion baked
onto the rig puts every mapped bone's head on its physics body (MuJoCo forward kinematics, independently) within
1 mm; Solve and Keep bake onto the animator's rig, at once; pose keys and contact pairs are authored on the
animator's bones, a preset loads onto the rig, and a Rigify rig keyed on its IK controls is read and baked back."""

import mujoco
import numpy as np
import pytest
from blender_env import addon, fcurves, python_calls
from humanoid_rigs import mixamo_skeleton as _mixamo
from humanoid_rigs import select as _select
from own_rigs import IK_SWITCHES, _model, _physics, built_rigs
from test_bake import _random_motion as _motion  # every hinge swept, the root moved and turned


@pytest.fixture(scope="module")
def rigs():
    return built_rigs()


@pytest.mark.every_blender
@pytest.mark.parametrize("name", ["basic human", "human", "rigify generated", "mixamo"])
def test_baked_motion_puts_every_mapped_bone_head_on_its_body(rigs, name):
    bpy, module, by_name = rigs
    rig = by_name[name]
    retarget = addon(module, "retarget")
    physics, _ = _physics(bpy, module, rig)
    model = _model(bpy, module, physics)
    fps, n = 30.0, 40
    times = np.arange(n) / fps
    qpos = _motion(model, n)
    mapping = retarget.mapping_of(rig)
    if name == "rigify generated":  # the limbs animated in FK: exact (in IK, Blender's stretchy IK bends
        for switch in IK_SWITCHES:  # the knees and elbows within a few mm; the next tests)
            rig.pose.bones[switch]["IK_FK"] = 1.0
        rig.update_tag()
    # The point each bone head marks on its body: the body's origin for a limb (the physics limbs
    # start at the rig's joints); for the trunk, the rig's rest head in the body's rest frame.
    marks = {}
    for slot, bone in mapping.items():
        rest = physics.matrix_world @ physics.data.bones[slot].matrix_local
        head = rig.matrix_world @ rig.data.bones[bone].head_local
        limb = slot.rsplit("_", 1)[0] in ("thigh", "shin", "foot", "upper_arm", "lower_arm", "hand")
        marks[slot] = np.zeros(3) if limb else np.array(rest.to_3x3().normalized().transposed() @
                                                         (head - rest.to_translation()))
    modes = {pb.name: pb.rotation_mode for pb in rig.pose.bones}
    retarget.bake_onto_rig(rig, physics, addon(module, "bake").Clip(model, times, qpos, 1, fps), "own rig test")
    assert modes == {pb.name: pb.rotation_mode for pb in rig.pose.bones}  # keyed in the rig's own modes
    data = mujoco.MjData(model)
    worst, offsets = 0.0, {}
    for k in range(0, n, 3):
        bpy.context.scene.frame_set(1 + k)
        data.qpos[:] = qpos[k]
        mujoco.mj_kinematics(model, data)
        for slot, bone in mapping.items():
            body = model.body(slot).id
            expected = data.xpos[body] + data.xmat[body].reshape(3, 3) @ marks[slot]
            got = np.array(rig.matrix_world @ rig.pose.bones[bone].head)
            worst = max(worst, float(np.linalg.norm(got - expected)))
            assert np.linalg.norm(got - expected) < 1e-3, f"{name} {bone} frame {k}: {got} vs {expected}"
            # and the bone turns with its body: their relative rotation never changes
            turned = np.array((rig.matrix_world @ rig.pose.bones[bone].matrix).to_3x3().normalized())
            offset = data.xmat[body].reshape(3, 3).T @ turned
            first = offsets.setdefault(slot, offset)
            np.testing.assert_allclose(offset, first, atol=1e-5, err_msg=f"{name} {bone} frame {k}")
    print(f"{name}: worst head error {worst * 1000:.4f} mm")
    paths = {fc.data_path for fc in fcurves(module, rig.animation_data.action)}
    keyed = {p.split('"')[1] for p in paths if p.startswith("pose.bones")}
    if name == "rigify generated":  # on the controls an animator keys, FK and IK, never on the mechanism
        assert not [p for p in paths if p.endswith('["IK_FK"]')]  # the switches as the animator set them
        assert {"thigh_fk.L", "torso", "foot_ik.L", "thigh_ik.L"} <= keyed
        assert not [b for b in keyed if b.startswith(("ORG-", "DEF-", "MCH-"))]
        for deform in ("DEF-thigh.L", "DEF-shin.R", "DEF-upper_arm.L", "DEF-spine.001"):  # the mesh follows
            org = "ORG-" + deform[4:]
            assert (rig.pose.bones[deform].head - rig.pose.bones[org].head).length < 1e-4
    else:  # fingers and face keep the animator's pose: not keyed; the toes are, off the floor (test_toe_bend.py)
        assert not [b for b in keyed if any(k in b.lower() for k in ("index", "heel", "breast", "face"))]
        assert len([b for b in keyed if "toe" in b.lower()]) == 2


@pytest.mark.every_blender
@pytest.mark.parametrize("name", ["basic human", "human", "rigify generated", "mixamo"])
def test_solve_and_keep_bake_onto_the_animators_rig(rigs, name):
    """Through the operators, as an animator would: a short simulate solve of the physics humanoid
    made from the rig, then Keep — a new action on the physics character and one on the animator's
    rig, whose mapped bone heads sit on the physics character's."""
    import json
    bpy, module, by_name = rigs
    rig = by_name[name]
    rig.animation_data_create()
    own = bpy.data.actions.new("animator's walk")
    rig.animation_data.action = own
    physics, _ = _physics(bpy, module, rig)
    _select(bpy, physics)
    props = bpy.context.scene.physkey
    props.method, props.num_seeds = "simulate", 1
    props.settings_json = json.dumps({"duration": 0.4})
    props.solutions.clear()
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    props.active_solution = 0  # selecting it previews it on the animator's rig too
    assert rig.animation_data.action.name == "PhysKey Preview (your rig)"
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
    assert "PhysKey Preview (your rig)" not in bpy.data.actions
    kept = rig.animation_data.action
    assert kept is not None and kept != own and own.use_fake_user  # the animator's action set aside, kept
    assert kept.name == f"{physics.animation_data.action.name}_{rig.name}"
    retarget = addon(module, "retarget")
    mapping = retarget.mapping_of(rig)
    scene = bpy.context.scene
    for frame in (scene.frame_start, scene.frame_start + 6, scene.frame_start + 12):
        scene.frame_set(frame)
        for slot in ("thigh_left", "shin_right", "foot_left", "lower_arm_right", "hand_left"):
            got = rig.matrix_world @ rig.pose.bones[mapping[slot]].head
            want = physics.matrix_world @ physics.pose.bones[slot].head
            assert (got - want).length < 1e-3, f"{slot} at frame {frame}: {got} vs {want}"


@pytest.mark.parametrize("name", ["basic human", "rigify generated", "mixamo"])
def test_a_bake_onto_a_rig_keys_its_curves_at_once(rigs, name):
    """The keys go into the curves through foreach_set, never one by one: ten times the frames add
    only the per-frame conversion of the bones keyed in Euler or axis-angle (a compatible Euler angle
    follows the previous frame's, through mathutils) — at most 3 calls per bone and frame."""
    bpy, module, by_name = rigs
    rig = by_name[name]
    retarget = addon(module, "retarget")
    physics, _ = _physics(bpy, module, rig)
    model = _model(bpy, module, physics)
    qpos = _motion(model, 1000)
    Clip = addon(module, "bake").Clip
    calls = {}
    for n in (100, 1000):
        calls[n], (action, _) = python_calls(
            lambda n=n: retarget.bake_onto_rig(rig, physics, Clip(model, np.arange(n) / 30.0, qpos[:n], 1, 30.0),
                                               "calls"))
    bones = {fc.group.name for fc in fcurves(module, action) if fc.group}
    per_frame = (calls[1000] - calls[100]) / 900
    assert len(bones) >= 15 and per_frame <= 3 * len(bones), (name, calls, len(bones))


def _fresh_mixamo_with_physics(bpy, module):
    rig = _mixamo(bpy)
    _select(bpy, rig)
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    _select(bpy, rig)  # the animator works on their own rig
    return rig, next(o for o in bpy.data.objects if o.physkey.animator_rig == rig)


def test_pose_keys_and_contact_pairs_are_authored_on_the_animators_bones(rigs):
    """Keyed poses and Add Pair on the animator's rig reach the solver as the physics humanoid's: a
    knee bent on the rig is the physics knee bent (its shin's origin where the rig's knee is,
    MuJoCo forward kinematics), and a pair on a finger is a pair on the physics hand at that point."""
    from mathutils import Quaternion, Vector
    bpy, module, _ = rigs
    taskio = addon(module, "taskio")
    retarget = addon(module, "retarget")
    rig, physics = _fresh_mixamo_with_physics(bpy, module)
    scene = bpy.context.scene
    props = scene.physkey
    props.method = "assist"
    rig.animation_data_create()
    rig.animation_data.action = bpy.data.actions.new("keys")
    for frame, bend in ((1, 0.0), (20, 0.9)):
        scene.frame_set(frame)
        for side in ("Left", "Right"):
            pb = rig.pose.bones[f"mixamorig:{side}UpLeg"]
            pb.rotation_mode = "QUATERNION"
            pb.rotation_quaternion = Quaternion((1.0, 0.0, 0.0), -bend)  # thigh forward (the rig's X: left)
            pb.keyframe_insert("rotation_quaternion", frame=frame)
    assert bpy.ops.physkey.sync_pose_keys() == {"FINISHED"}
    assert [k.frame for k in props.pose_keys] == [1, 20]
    scene_desc = taskio.extract_scene(bpy.context)
    keyframes = taskio.pose_keyframes_from_action(bpy.context, scene_desc)
    assert len(keyframes) == 2
    assert keyframes[1]["time"] == pytest.approx(19 / (scene.render.fps / scene.render.fps_base), abs=1e-6)
    from solver.builders import mjcf
    model = mujoco.MjModel.from_xml_string(mjcf.scene_to_xml(scene_desc))
    data = mujoco.MjData(model)
    bent = keyframes[1]
    assert bent["joints"]["hip_y_left"] < -0.7  # flexed, in the physics humanoid's own terms
    data.qpos[:3], data.qpos[3:7] = bent["root_pos"], bent["root_quat"]
    for joint, angle in bent["joints"].items():
        data.qpos[model.jnt_qposadr[model.joint(joint).id]] = angle
    mujoco.mj_kinematics(model, data)
    scene.frame_set(20)
    knee = np.array(rig.matrix_world @ rig.pose.bones["mixamorig:LeftLeg"].head)
    assert np.linalg.norm(data.xpos[model.body("shin_left").id] - knee) < 0.01
    # a pair on a finger is on the physics hand, at the same point in the world
    scene.frame_set(1)
    props.method = "contact"
    bpy.ops.physkey.contact_keyframe_edit(action="ADD")
    finger = rig.data.bones["mixamorig:LeftHandIndex1"]
    rig.data.bones.active = finger
    tip = rig.matrix_world @ rig.pose.bones[finger.name].tail
    scene.cursor.location = tip + Vector((0.0, 0.0, 0.05))
    assert bpy.ops.physkey.add_pair() == {"FINISHED"}
    pair = props.contact_keyframes[props.active_contact_keyframe].pairs[-1]
    assert pair.body1 == "hand_left"
    c, p = retarget.alignment(rig, physics, retarget.mapping_of(rig))["hand_left"]  # the body's frame, from
    bone = np.array(rig.matrix_world @ rig.pose.bones["mixamorig:LeftHand"].matrix)  # the hand bone's as posed
    turn = bone[:3, :3] / np.linalg.norm(bone[:3, :3], axis=0)
    body_turn = turn @ c.T
    body_origin = bone[:3, 3] - body_turn @ p
    assert np.linalg.norm(body_origin + body_turn @ np.array(pair.pos1) - np.array(tip)) < 1e-4


@pytest.mark.every_blender
def test_a_preset_loads_onto_the_animators_rig(rigs):
    """Load Scene Preset with the animator's rig selected: the physics humanoid made from it sits in
    the armchair, rested (no overlap over 2 mm), and the rig is posed on it."""
    bpy, module, _ = rigs
    rig = _mixamo(bpy)
    _select(bpy, rig)
    assert bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand") == {"FINISHED"}
    assert bpy.context.active_object == rig
    physics = next(o for o in bpy.data.objects if o.physkey.animator_rig == rig)
    model = _model(bpy, module, physics)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    assert max([-c.dist for c in data.contact[: data.ncon]] + [0.0]) < 0.0025
    # seated, not standing: the butt just above the seat (rest_pose moves the authored pose only out of
    # overlaps, which leaves it up to 3 cm above the seat for this rig's legs; issue 62 seats it)
    gap = mujoco.mj_geomDistance(model, data, model.geom("butt").id, model.geom("seat").id, 0.5, np.zeros(6))
    assert gap < 0.03, gap
    retarget = addon(module, "retarget")
    for slot in ("thigh_right", "shin_left", "hand_right"):  # limbs start at the physics limbs' origins
        bone = retarget.mapping_of(rig)[slot]
        got = rig.matrix_world @ rig.pose.bones[bone].head
        assert (got - physics.matrix_world @ physics.pose.bones[slot].head).length < 1e-3, slot
    assert len(bpy.context.scene.physkey.contact_keyframes) > 0


@pytest.mark.every_blender
def test_a_rigify_rig_keyed_on_its_ik_feet_torso_hips_and_chest(rigs):
    """As animators key a generated Rigify rig: the torso lowered (the IK hands with it), the hips turned,
    the chest leant and the left IK foot raised. The physics character's start pose fits every mapped bone within 2 cm
    (nothing to report on the key). Kept at a frame where hips and chest are turned, the solved motion
    puts every mapped ORG and deform bone head on its body within 1 cm at every frame — hips and chest
    held at rest over the clip, not added on top. The limbs, keyed in IK, stay in IK (the switches are
    not keyed) with their IK controls snapped to the solved motion; switched to FK they land as well.
    The animator's own action, assigned back, plays as they keyed it."""
    import json

    from mathutils import Matrix
    bpy, module, by_name = rigs
    rig = by_name["rigify generated"]
    physics, mapping = _physics(bpy, module, rig)
    scene = bpy.context.scene
    rig.animation_data_create()
    rig.animation_data.action = bpy.data.actions.new("animator's keys")
    bones = rig.pose.bones
    for pb in bones:  # what earlier tests' bakes left on the controls: an animator's rig starts at rest
        pb.matrix_basis = Matrix.Identity(4)
    for switch in IK_SWITCHES:
        bones[switch]["IK_FK"] = 0.0  # in IK, as generated
    rig.update_tag()
    for frame, lower, turn, lean, lift in ((1, 0.0, 0.0, 0.0, 0.0), (12, 0.08, 15.0, 10.0, 0.05)):
        scene.frame_set(frame)
        controls = ("torso", "hips", "chest", "foot_ik.L", "foot_ik.R", "hand_ik.L", "hand_ik.R")
        for name in controls:
            bones[name].matrix_basis = Matrix.Identity(4)
        bpy.context.view_layer.update()
        for name in ("torso", "hand_ik.L", "hand_ik.R"):  # the hands (IK, held in the world) go down with it
            bones[name].matrix = Matrix.Translation((0.0, 0.0, -lower)) @ bones[name].matrix
        bones["foot_ik.L"].matrix = Matrix.Translation((0.0, 0.0, lift)) @ bones["foot_ik.L"].matrix
        bpy.context.view_layer.update()
        for name, angle, axis in (("hips", turn, "Z"), ("chest", lean, "X")):
            m = bones[name].matrix.copy()
            turned = Matrix.Rotation(np.radians(angle), 4, axis) @ m
            turned.translation = m.translation
            bones[name].matrix = turned
            bpy.context.view_layer.update()
        for name in controls:
            bones[name].keyframe_insert("location", frame=frame)
            bones[name].keyframe_insert({"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}.get(
                bones[name].rotation_mode, "rotation_euler"), frame=frame)
    lifted = rig.matrix_world @ bones["foot_ik.L"].head  # where the animator put it at frame 12
    scene.frame_set(12)
    _select(bpy, physics)
    taskio = addon(module, "taskio")
    model = _model(bpy, module, physics)
    qpos, problems, _ = taskio.poses_at(bpy.context, physics, model, [12])
    data = mujoco.MjData(model)
    data.qpos[:] = qpos[0]
    mujoco.mj_kinematics(model, data)
    off = {}
    for slot in mapping:
        if slot.rsplit("_", 1)[0] in ("thigh", "shin", "foot", "upper_arm", "lower_arm", "hand"):
            head = np.array(rig.matrix_world @ bones[mapping[slot]].head)  # limbs start at the physics joints
            off[mapping[slot]] = float(np.linalg.norm(data.xpos[model.body(slot).id] - head))
    print({bone: round(100 * d, 2) for bone, d in off.items()})
    assert max(off[b] for b in off if "foot" in b or "hand" in b) < 0.015  # hands and feet where keyed (a foot
    # lifted 8 mm out of the floor: the rig's heel bone reaches below its sole)
    assert max(off.values()) < 0.03  # the knees bent by IK with the hips turned: 2.5 cm (the note of issue 60)
    for bone, d in off.items():  # and what is over 2 cm is said on the key
        assert d < 0.02 or f"'{bone}'" in problems[0], (bone, d, problems)
    props = scene.physkey
    props.method, props.num_seeds = "simulate", 1
    props.settings_json = json.dumps({"duration": 0.4})
    props.solutions.clear()
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    import re
    assert re.fullmatch(r"Simulate \d\d:\d\d:\d\d · seed 0", props.solutions[0].name)  # which solve, which seed
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}  # at frame 12: hips and chest turned
    kept = rig.animation_data.action
    assert kept.name.startswith(f"{scene.name}_simulate_seed0")  # the solution's own method and seed
    keyed = {p.split('"')[1] for p in (fc.data_path for fc in fcurves(module, kept)) if p.startswith("pose.bones")}
    assert {"hips", "chest", "foot_ik.L", "thigh_ik.L", "hand_ik.R", "upper_arm_ik.R"} <= keyed

    def worst(slots) -> float:
        out = 0.0
        for frame in range(scene.frame_start, scene.frame_start + 13):
            scene.frame_set(frame)
            for slot in slots:
                want = physics.matrix_world @ physics.pose.bones[slot].head
                for bone in (mapping[slot], "DEF-" + mapping[slot][4:]):
                    if bone in bones:
                        out = max(out, (rig.matrix_world @ bones[bone].head - want).length)
        return out

    limbs = [s for s in mapping if s not in ("pelvis", "waist_lower", "torso", "head")]
    assert not [fc for fc in fcurves(module, kept) if fc.data_path.endswith('["IK_FK"]')]
    assert all(bones[switch]["IK_FK"] == 0.0 for switch in IK_SWITCHES)  # the limbs still in IK
    in_ik = worst(limbs)  # knees and elbows bent by Blender's IK onto their bodies (the roots turned)
    rig.animation_data.action = bpy.data.actions["animator's keys"]  # their own action back: as they keyed it
    scene.frame_set(12)
    assert all(bones[switch]["IK_FK"] == 0.0 for switch in IK_SWITCHES)
    assert (rig.matrix_world @ bones["foot_ik.L"].head - lifted).length < 1e-4
    rig.animation_data.action = kept
    for switch in IK_SWITCHES:  # the animator switches the limbs to FK
        bones[switch]["IK_FK"] = 1.0
    rig.update_tag()
    in_fk = worst(limbs)
    print(f"after Keep, worst limb head: in IK {in_ik * 100:.2f} cm, in FK {in_fk * 100:.2f} cm")
    assert in_ik < 0.01 and in_fk < 0.01, (in_ik, in_fk)


@pytest.mark.every_blender
def test_a_preset_loads_onto_a_generated_rigify_rig_in_ik(rigs):
    """Load Scene Preset with a generated Rigify rig selected, its limbs in IK as generated (channels of its
    IK roots carry a scale besides location and rotation): the preset loads, and the rig is posed on the
    physics humanoid seated in the armchair — every mapped limb's head within 1 cm of its body (Blender's IK
    bends the knees and elbows within a few mm, as after a bake), the limbs still in IK. An assisted preset's
    pose keys are keyed on the rig's controls, the IK roots' scale with them, at every key."""
    from mathutils import Matrix
    bpy, module, by_name = rigs
    rig = by_name["rigify generated"]
    for pb in rig.pose.bones:  # an animator's rig starts at rest, in IK
        pb.matrix_basis = Matrix.Identity(4)
    for switch in IK_SWITCHES:
        rig.pose.bones[switch]["IK_FK"] = 0.0
    if rig.animation_data:
        rig.animation_data.action = None
    _select(bpy, rig)
    assert bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand") == {"FINISHED"}
    assert bpy.context.active_object == rig
    physics, mapping = _physics(bpy, module, rig)
    bpy.context.view_layer.update()
    bones = rig.pose.bones
    limbs = [s for s in mapping if s not in ("pelvis", "waist_lower", "torso", "head")]
    off = {s: (rig.matrix_world @ bones[mapping[s]].head - physics.matrix_world @ physics.pose.bones[s].head).length
           for s in limbs}
    assert max(off.values()) < 0.01, off
    assert all(bones[switch]["IK_FK"] == 0.0 for switch in IK_SWITCHES)
    assert bpy.ops.physkey.load_preset(preset="assist_sit_armchair") == {"FINISHED"}  # pose keys, keyed on the rig
    keys = sorted(k.frame for k in bpy.context.scene.physkey.pose_keys)
    curves = list(fcurves(module, rig.animation_data.action))
    scaled = {fc.data_path.split('"')[1] for fc in curves if fc.data_path.endswith(".scale")}
    assert scaled and all(sorted(int(p.co[0]) for p in fc.keyframe_points) == keys
                          for fc in curves if fc.data_path.endswith(".scale")), scaled


def test_a_pair_on_a_rigify_control_goes_on_the_body_the_control_moves(rigs):
    """Add Pair on the controls an animator clicks on a generated Rigify rig: each goes on the body of the ORG
    bone it lies on — the IK hand on the hand (refused before: no mapped bone above it), the FK foot and the
    IK thigh on theirs (put on the pelvis before, through the parent chain), a finger on the hand."""
    from mathutils import Matrix, Vector
    bpy, module, by_name = rigs
    rig = by_name["rigify generated"]
    for pb in rig.pose.bones:
        pb.matrix_basis = Matrix.Identity(4)
    bpy.context.view_layer.update()
    physics, mapping = _physics(bpy, module, rig)
    retarget = addon(module, "retarget")
    want = {"hand_ik.R": "hand_right", "hand_fk.L": "hand_left", "foot_fk.L": "foot_left", "foot_ik.R": "foot_right",
            "thigh_ik.L": "thigh_left", "shin_fk.R": "shin_right", "DEF-hand.R": "hand_right",
            "f_index.01.R": "hand_right", "ORG-shin.L": "shin_left", "head": "head"}
    got = {bone: retarget.body_of(rig, bone, mapping) for bone in want}
    assert got == want
    _select(bpy, rig)
    bpy.ops.object.mode_set(mode="POSE")
    props = bpy.context.scene.physkey
    props.method = "contact"
    bpy.ops.physkey.contact_keyframe_edit(action="ADD")
    rig.data.bones.active = rig.data.bones["hand_ik.R"]
    bpy.context.scene.cursor.location = rig.matrix_world @ rig.pose.bones["hand_ik.R"].head + Vector((0, 0, 0.05))
    assert bpy.ops.physkey.add_pair() == {"FINISHED"}
    assert props.contact_keyframes[props.active_contact_keyframe].pairs[-1].body1 == "hand_right"
    bpy.ops.object.mode_set(mode="OBJECT")


@pytest.mark.parametrize("name", ["rigify generated", "mixamo"])
def test_a_standing_preset_loads_onto_the_animators_rig_standing_on_its_feet(rigs, name):
    """Load Scene Preset (the reach, a standing start) with the animator's rig selected: the physics humanoid made
    from it starts upright on its feet on the floor, fitted by roles. With the default humanoid's torso height and
    joint angles it had started with its feet 11 cm in the floor, rested with the legs thrown 40° forward (feet
    48–76 cm ahead of the pelvis), and fell at the start."""
    from mathutils import Matrix
    bpy, module, by_name = rigs
    rig = by_name[name]
    for pb in rig.pose.bones:
        pb.matrix_basis = Matrix.Identity(4)
    # the animator's own action plays on the rig (its root moved 40 cm, the whole rig off the floor): it is set
    # aside, kept and said, or it would pose the rig over the preset's start at every frame
    root = next(pb for pb in rig.pose.bones if pb.parent is None)
    root.location = (0.4, 0.4, 0.4)
    rig.animation_data_create()
    rig.animation_data.action = own = bpy.data.actions.new("animator's own")
    own.use_fake_user = False
    root.keyframe_insert("location", frame=bpy.context.scene.frame_current)
    _select(bpy, rig)
    said = []
    addon(module, "presets").load(bpy.context, "reach_hand_targets", said.append)
    assert rig.animation_data.action is None and own.use_fake_user and own.name in bpy.data.actions
    assert any("animator's own" in msg and "set aside" in msg for msg in said), said
    physics = next(o for o in bpy.data.objects if o.physkey.animator_rig == rig)
    model = _model(bpy, module, physics)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    pos = {b: data.xpos[model.body(b).id] for b in ("pelvis", "head", "foot_left", "foot_right")}
    feet = (pos["foot_left"] + pos["foot_right"]) / 2
    assert np.linalg.norm((pos["pelvis"] - feet)[:2]) < 0.08  # the feet under the hips
    assert np.linalg.norm((pos["head"] - pos["pelvis"])[:2]) < 0.08  # the head over them
    floor = model.geom("floor").id
    soles = [mujoco.mj_geomDistance(model, data, g, floor, 0.5, None) for g in range(model.ngeom)
             if model.body(int(model.geom_bodyid[g])).name.startswith("foot_")]
    assert -0.005 < min(soles) < 0.015, soles


def test_what_is_said_of_a_rigify_rig_names_the_controls_the_animator_keys(rigs):
    """Solve's reports and the solution rows name a generated Rigify rig's controls, not its hidden ORG bones: the
    IK foot where the leg is in IK, the FK foot once its switch stands on FK, the torso for the pelvis."""
    bpy, module, by_name = rigs
    rig = by_name["rigify generated"]
    physics, _ = _physics(bpy, module, rig)
    names_of = addon(module, "rig_names")
    switch = rig.pose.bones["thigh_parent.L"]
    before = switch["IK_FK"]
    _select(bpy, rig)
    try:
        switch["IK_FK"] = 0.0
        names = names_of.rig_names(bpy.context)
        assert (names["foot_left"], names["shin_left"], names["thigh_left"], names["pelvis"]) == \
            ("foot_ik.L", "shin.L", "thigh_ik.L", "torso")
        assert names_of.in_rig_names("foot_left 3.1 cm into the floor at 1.20 s", names) == \
            "foot_ik.L 3.1 cm into the floor at 1.20 s"
        named = addon(module, "panels")._named  # the Contact Keyframes panel's pairs
        assert (named("foot_left", names), named("world", names)) == ("foot_ik.L (foot_left)", "world")
        switch["IK_FK"] = 1.0
        names = names_of.rig_names(bpy.context)
        assert (names["foot_left"], names["shin_left"], names["thigh_left"]) == ("foot_fk.L", "shin_fk.L", "thigh_fk.L")
        assert not [bone for bone in names.values() if bone.startswith(("ORG-", "DEF-", "MCH-"))], names
    finally:
        switch["IK_FK"] = before
