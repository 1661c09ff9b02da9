"""Your own character, found: the humanoid mapping of rigs built with Blender's own operators (Rigify's meta-rigs
and generated rig, a Mixamo-named skeleton) is found with no manual fix and the physics humanoid with the rig's
proportions is stable when dropped; a rig with no humanoid is a clear error, a mapping fixed or finished by hand is
checked, a rig with meaningless names is mapped by its shape, limbs are as thick as the mesh they deform, and a rig
rescaled after linking is linked again to one physics character."""
import mujoco
import numpy as np
import pytest
from blender_env import addon
from humanoid_rigs import mixamo_skeleton as _mixamo
from humanoid_rigs import select as _select
from own_rigs import SLOT_COUNT, _lamp, _model, _physics, built_rigs
from test_bake import _random_motion as _motion  # every hinge swept, the root moved and turned


@pytest.fixture(scope="module")
def rigs():
    return built_rigs()


@pytest.mark.parametrize("name", ["basic human", "human", "rigify generated", "mixamo"])
def test_mapping_is_found_and_the_physics_humanoid_is_stable(rigs, name):
    bpy, module, by_name = rigs
    rig = by_name[name]
    physics, mapping = _physics(bpy, module, rig)
    assert len(mapping) == SLOT_COUNT and len(set(mapping.values())) == SLOT_COUNT
    model = _model(bpy, module, physics)
    actuated = model.nu
    assert actuated == 21, f"{name}: {actuated} actuators"
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    for _ in range(int(5.0 / model.opt.timestep)):
        mujoco.mj_step(model, data)
    warnings = {mujoco.mjtWarning(i).name: int(data.warning[i].number) for i in range(len(data.warning))
                if data.warning[i].number}
    assert not warnings, f"{name}: {warnings}"
    assert np.all(np.isfinite(data.qpos))


def test_a_rig_with_no_humanoid_is_a_clear_error(rigs):
    bpy, module, _ = rigs
    lamp = _lamp(bpy)
    with pytest.raises(RuntimeError, match=r"no humanoid legs or arms: no bone is named like a thigh.*Your Rig panel"):
        bpy.ops.physkey.character_from_rig()
    assert not any(o.physkey.animator_rig == lamp for o in bpy.data.objects)  # nothing made


def test_a_mapping_fixed_by_hand_is_checked(rigs):
    bpy, module, _ = rigs
    rig = _mixamo(bpy)
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    slots = {item.name: item for item in rig.physkey.humanoid_map}
    slots["hand_left"].bone = slots["upper_arm_left"].bone  # two slots, one bone
    with pytest.raises(RuntimeError, match=r"bone 'mixamorig:LeftArm' is mapped to both Upper arm \(left\) "
                                           r"and Hand \(left\)"):
        bpy.ops.physkey.character_from_rig()
    slots["hand_left"].bone = "mixamorig:NoSuchBone"
    with pytest.raises(RuntimeError, match=r"Hand \(left\): the rig has no bone 'mixamorig:NoSuchBone'"):
        bpy.ops.physkey.character_from_rig()
    slots["hand_left"].bone = "mixamorig:LeftHand"
    rig.scale = (1.0, 2.0, 1.0)
    with pytest.raises(RuntimeError, match=r"'mixamo.*' is scaled non-uniformly .*apply the scale"):
        bpy.ops.physkey.character_from_rig()
    rig.scale = (1.0, 1.0, 1.0)
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}


@pytest.mark.parametrize("add", ["armature_basic_human_metarig_add", "armature_human_metarig_add"])
def test_auto_fill_of_a_meta_rig_drops_stably(rigs, add):
    """Auto-fill stays for rigs that are not humanoids, made safe: on Rigify's meta-rigs (whose capsules
    overlap at rest, with fingers and face bones) a passive 5 s drop has no MuJoCo warning."""
    bpy, module, _ = rigs
    getattr(bpy.ops.object, add)()
    rig = bpy.context.active_object
    rig.location = (0.0, 6.0, 0.3)
    _select(bpy, rig)
    assert bpy.ops.physkey.autofill_rig() == {"FINISHED"}
    model = _model(bpy, module, rig)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    for _ in range(int(5.0 / model.opt.timestep)):
        mujoco.mj_step(model, data)
    assert not [mujoco.mjtWarning(i).name for i in range(len(data.warning)) if data.warning[i].number]
    assert model.nv < 100  # fingers and face welded (the Human meta-rig had 475 hinges)
    assert len(rig.physkey.exclude_contacts) > 0
    roles = {item.name: item.bone for item in rig.physkey.roles}  # stored for the animator to check
    assert (roles["foot_left"], roles["lower_arm_right"], roles["torso"]) == ("foot.L", "forearm.R", "spine.003")
    assert len(roles) == 15, sorted(set(["pelvis", "torso", "head"]) - set(roles))


def test_a_rig_with_meaningless_names_is_mapped_by_its_shape(rigs):
    bpy, module, _ = rigs
    rig = _mixamo(bpy)
    original = {}
    for k, bone in enumerate(list(rig.data.bones)):
        old = bone.name
        bone.name = f"Bone.{k:03d}"
        original[bone.name] = old
    _select(bpy, rig)
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    found = {item.name: original[item.bone] for item in rig.physkey.humanoid_map}
    expected = {"pelvis": "Hips", "thigh_left": "LeftUpLeg", "shin_right": "RightLeg", "foot_left": "LeftFoot",
                "upper_arm_right": "RightArm", "lower_arm_left": "LeftForeArm", "hand_right": "RightHand",
                "head": "Head"}
    assert {slot: found[slot] for slot in expected} == {slot: "mixamorig:" + b for slot, b in expected.items()}


def test_limb_thickness_comes_from_the_mesh_the_rig_deforms(rigs):
    """A character with thick thighs (a 0.1 m cylinder skinned to each thigh bone) gets thigh capsules
    of that radius; bodies with no skinned vertices keep the scaled default."""
    bpy, module, _ = rigs
    rig = _mixamo(bpy)
    for side, x in (("Left", 0.09), ("Right", -0.09)):
        bpy.ops.mesh.primitive_cylinder_add(radius=0.1, depth=0.43, location=(x, 0.0, 0.735), vertices=24)
        leg = bpy.context.active_object
        group = leg.vertex_groups.new(name=f"mixamorig:{side}UpLeg")
        group.add([v.index for v in leg.data.vertices], 1.0, "REPLACE")
        leg.modifiers.new("Armature", "ARMATURE").object = rig
    physics, _ = _physics(bpy, module, rig)
    thigh = physics.data.bones["thigh_left"].physkey.geoms[0]
    shin = physics.data.bones["shin_left"].physkey.geoms[0]
    assert thigh.size[0] == pytest.approx(0.1, abs=1e-3)
    plain, _ = _physics(bpy, module, rigs[2]["mixamo"])  # the same skeleton, no mesh
    assert shin.size[0] == pytest.approx(plain.data.bones["shin_left"].physkey.geoms[0].size[0], rel=1e-6)


def retarget_slot(module, rig, slot: str) -> str:
    """The rig's bone mapped to `slot`."""
    return addon(module, "retarget").mapping_of(rig)[slot]


def test_a_rig_rescaled_after_linking_is_linked_again_to_one_physics_character(rigs):
    """Scaled after its physics character was made, a rig no longer matches it: Solve says so; Make
    Physics Character again replaces the old one (one physics character, the rig's new size), and a
    solved motion kept then puts every mapped bone head on its body."""
    bpy, module, _ = rigs
    rig = _mixamo(bpy)
    _select(bpy, rig)
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    physics, _ = _physics(bpy, module, rig)
    height = physics.dimensions.z
    rig.scale = (0.5, 0.5, 0.5)
    bpy.context.view_layer.update()
    _select(bpy, physics)
    with pytest.raises(ValueError, match=r"was scaled from 1 to 0\.5 since .* Make Physics Character again"):
        addon(module, "taskio").extract_scene(bpy.context)
    # Load Scene Preset and Add Pair say so too, before anything changes (they had gone on with the old size)
    _select(bpy, rig)
    scene = bpy.context.scene.physkey
    with pytest.raises(RuntimeError, match=r"was scaled from 1 to 0\.5 since .* Make Physics Character again"):
        bpy.ops.physkey.load_preset(preset="reach_hand_targets")
    assert scene.preset != "reach_hand_targets"
    scene.contact_keyframes.add()
    scene.active_contact_keyframe = len(scene.contact_keyframes) - 1
    rig.data.bones.active = rig.data.bones[retarget_slot(module, rig, "hand_right")]
    with pytest.raises(RuntimeError, match=r"was scaled from 1 to 0\.5 since .* Make Physics Character again"):
        bpy.ops.physkey.add_pair()
    assert not len(scene.contact_keyframes[-1].pairs)
    scene.contact_keyframes.remove(len(scene.contact_keyframes) - 1)
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    linked = [o for o in bpy.data.objects if o.physkey.animator_rig == rig]
    assert len(linked) == 1 and linked[0].dimensions.z == pytest.approx(0.5 * height, rel=0.02)
    physics = linked[0]
    model = _model(bpy, module, physics)
    qpos = _motion(model, 12)
    retarget = addon(module, "retarget")
    retarget.bake_onto_rig(rig, physics, addon(module, "bake").Clip(model, np.arange(12) / 30.0, qpos, 1, 30.0), "t")
    mapping = retarget.mapping_of(rig)
    data = mujoco.MjData(model)
    for k in (0, 6, 11):
        bpy.context.scene.frame_set(1 + k)
        data.qpos[:] = qpos[k]
        mujoco.mj_kinematics(model, data)
        for slot in ("foot_left", "hand_right", "shin_right"):
            got = np.array(rig.matrix_world @ rig.pose.bones[mapping[slot]].head)
            assert np.linalg.norm(got - data.xpos[model.body(slot).id]) < 1e-3, (slot, k)


def test_a_failed_find_is_finished_by_hand(rigs):
    """Find names what it could not find and lists every slot anyway, those it found filled in: the
    animator picks the missing bones, and Find again keeps the picks and finds the rest around them."""
    bpy, module, _ = rigs
    rig = _mixamo(bpy)
    arm = ("mixamorig:RightArm", "mixamorig:RightForeArm", "mixamorig:RightHand")
    for old, new in zip(arm, ("bone_a", "bone_b", "bone_c")):
        rig.data.bones[old].name = new
    with pytest.raises(RuntimeError, match=r"no bone found for Upper arm \(right\), Forearm \(right\), Hand \(right\)"):
        bpy.ops.physkey.map_humanoid()
    slots = {item.name: item for item in rig.physkey.humanoid_map}
    assert len(slots) == 16 and slots["thigh_left"].bone == "mixamorig:LeftUpLeg"
    assert [slots[s].bone for s in ("upper_arm_right", "lower_arm_right", "hand_right")] == ["", "", ""]
    with pytest.raises(RuntimeError, match=r"no bone for .*Upper arm \(right\), Forearm \(right\), Hand \(right\)"):
        bpy.ops.physkey.character_from_rig()
    for slot, bone in zip(("upper_arm_right", "lower_arm_right", "hand_right"), ("bone_a", "bone_b", "bone_c")):
        slots[slot].bone = bone
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}  # Find again: the picks kept, the trunk found
    slots = {item.name: item.bone for item in rig.physkey.humanoid_map}
    assert (slots["upper_arm_right"], slots["pelvis"], slots["head"]) == ("bone_a", "mixamorig:Hips", "mixamorig:Head")
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
