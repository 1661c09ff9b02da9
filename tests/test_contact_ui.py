"""Editing contact keyframes in Blender: list operations and Add Pair from the 3D cursor."""
import numpy as np
import pytest
from blender_env import addon, installed_extension


def _names(bpy):
    return [k.name for k in bpy.context.scene.physkey.contact_keyframes]


def test_list_operations():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="bed_lie_down_get_up")
    props = bpy.context.scene.physkey
    original = _names(bpy)
    assert bpy.ops.physkey.contact_keyframe_edit(action="REVERSE") == {"FINISHED"}
    assert _names(bpy) == original[::-1]
    bpy.ops.physkey.contact_keyframe_edit(action="REVERSE")
    props.active_contact_keyframe = 1
    bpy.ops.physkey.contact_keyframe_edit(action="DUPLICATE")
    assert _names(bpy) == original[:2] + [original[1]] + original[2:]
    assert len(props.contact_keyframes[2].pairs) == len(props.contact_keyframes[1].pairs)
    bpy.ops.physkey.contact_keyframe_edit(action="UP")
    assert props.active_contact_keyframe == 1
    bpy.ops.physkey.contact_keyframe_edit(action="REMOVE")
    assert _names(bpy) == original
    bpy.ops.physkey.contact_keyframe_edit(action="ADD")
    assert len(props.contact_keyframes) == len(original) + 1
    from solver.formats.objective_terms import style_weights
    # a new keyframe weighs MuJoCo MPC's defaults and is judged by no style until the animator picks one
    assert props.contact_keyframes[-1].style == ""
    assert list(props.contact_keyframes[-1].weights) == pytest.approx(style_weights("seated"))
    assert props.contact_keyframes[-1].horizon == 0.0  # the solve's planning horizon
    bpy.ops.physkey.contact_style(style="standing")
    assert list(props.contact_keyframes[-1].weights) == pytest.approx(style_weights("standing"))
    # The style goes with the keyframe to the solver, which then counts it only standing, and plans its
    # balance over the longer look-ahead the style gives it.
    taskio = addon(module, "taskio")
    sent = taskio.contact_keyframe_dict(props.contact_keyframes[-1])
    assert sent["style"] == "standing" and sent["horizon"] == pytest.approx(0.6)
    bpy.ops.physkey.contact_keyframe_edit(action="DUPLICATE")
    assert props.contact_keyframes[-1].style == "standing"
    assert props.contact_keyframes[-1].horizon == pytest.approx(0.6)
    bpy.ops.physkey.contact_style(style="seated")  # a style without one: the solve's horizon again
    assert "horizon" not in taskio.contact_keyframe_dict(props.contact_keyframes[-1])


def test_add_pair_from_the_3d_cursor():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand")
    arm = bpy.context.active_object
    props = bpy.context.scene.physkey
    bpy.ops.physkey.contact_keyframe_edit(action="ADD")
    arm.data.bones.active = arm.data.bones["hand_right"]
    chair = bpy.data.objects["chair"]
    seat = bpy.data.objects["seat"]
    seat.select_set(True)  # a piece of the chair: the pair goes to the chair's body
    cursor = np.array([-0.3, -0.3, 0.45])
    bpy.context.scene.cursor.location = cursor
    assert bpy.ops.physkey.add_pair() == {"FINISHED"}
    pair = props.contact_keyframes[-1].pairs[0]
    assert pair.body1 == "hand_right" and pair.body2 == "chair"
    w = chair.matrix_world.normalized()
    from mathutils import Vector
    np.testing.assert_allclose(np.array(w @ Vector(pair.pos2)), cursor, atol=1e-5)
    bone_world = arm.matrix_world @ arm.pose.bones["hand_right"].matrix
    p1 = np.array(bone_world.normalized() @ Vector(pair.pos1))
    head = np.array(bone_world.to_translation())
    tail = np.array(bone_world @ Vector((0, arm.data.bones["hand_right"].length, 0)))
    t = np.dot(p1 - head, tail - head) / np.dot(tail - head, tail - head)
    assert -1e-6 <= t <= 1 + 1e-6 and np.linalg.norm(head + t * (tail - head) - p1) < 1e-5
    for o in bpy.context.selected_objects:
        o.select_set(False)
    arm.select_set(True)
    bpy.ops.physkey.add_pair()
    assert props.contact_keyframes[-1].pairs[1].body2 == "world"
    # a keyframe left without pairs is named before anything starts (the solver had stopped with exit 2,
    # "keyframes[6].pairs: must have at least 1 entry")
    bpy.ops.physkey.contact_keyframe_edit(action="ADD")
    empty = props.contact_keyframes[-1].name
    props.method, props.num_seeds = "contact", 1
    with pytest.raises(RuntimeError, match=rf"contact keyframe '{empty}' has no pairs: add one \(Add Pair\)"):
        bpy.ops.physkey.solve(wait=True)
    assert not props.running
    # a pair on an armature that is no physics character (a capture or a rig before Make Physics Character)
    # is refused at Add Pair, as Solve would refuse it, not kept until Solve
    bpy.ops.object.armature_add()
    other = bpy.context.active_object
    other.data.bones.active = other.data.bones[0]
    count = len(props.contact_keyframes[-1].pairs)
    with pytest.raises(RuntimeError, match=rf"'{other.name}' has no physics shapes on its bones: select it and click "
                       "Make Physics Character"):
        bpy.ops.physkey.add_pair()
    assert len(props.contact_keyframes[-1].pairs) == count


@pytest.mark.every_blender
def test_drawn_pairs_are_the_keyframes_points_in_the_world():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand")
    draw = addon(module, "draw")
    assert len(draw._handles) == 2  # registered with the add-on
    props = bpy.context.scene.physkey
    props.active_contact_keyframe = 0
    segments = draw.pair_segments(bpy.context)
    kf = props.contact_keyframes[0]
    assert len(segments) == len(kf.pairs)
    # The first pair (pelvis ↔ chair seat) starts nearly met: the character is seated.
    p, q, color = segments[0]
    assert (kf.pairs[0].body1, kf.pairs[0].body2) == ("pelvis", "chair")
    assert (p - q).length < kf.tolerance
    assert len({tuple(c) for _, _, c in segments}) == len(segments)  # one colour per pair


def test_add_pair_with_a_free_object_puts_its_bottom_at_the_cursor():
    """With the box (a free object) active and the target platform selected, Add Pair pairs the box's
    bottom centre with the 3D cursor on the platform; the solver takes the pair as the task file's
    (box first) and its points are where they were picked, by MuJoCo's kinematics."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="box_lift_place")
    props = bpy.context.scene.physkey
    bpy.ops.physkey.contact_keyframe_edit(action="ADD")
    box_mesh = next(o for o in bpy.data.objects["box"].children if o.physkey.collider)
    platform = next(o for o in bpy.data.objects["to_platform"].children if o.physkey.collider)
    for o in bpy.context.selected_objects:
        o.select_set(False)
    platform.select_set(True)
    box_mesh.select_set(True)
    bpy.context.view_layer.objects.active = box_mesh
    cursor = np.array([0.52, 0.45, 0.85])
    bpy.context.scene.cursor.location = cursor
    assert bpy.ops.physkey.add_pair() == {"FINISHED"}
    pair = props.contact_keyframes[-1].pairs[0]
    assert (pair.body1, pair.body2) == ("box", "to_platform")
    import mujoco

    from solver.formats.contact_keyframes import ContactKeyframe, ContactPair
    from solver.formats.task import task_from_dict
    from solver.mpc.keyframe_tracker import pair_distance
    from solver.physics.model import build_model
    taskio = addon(module, "taskio")
    task = task_from_dict(taskio.task_from_scene(bpy.context, taskio.extract_scene(bpy.context)))
    built = build_model(task.scene.desc)
    m, d = built.model, mujoco.MjData(built.model)
    d.qpos[:] = built.initial_qpos()
    mujoco.mj_kinematics(m, d)
    box = m.body("box").id
    bottom = d.xpos[box] + d.xmat[box].reshape(3, 3) @ np.array(pair.pos1)
    np.testing.assert_allclose(bottom, [0.42 + 0.11, 0.0, 0.75], atol=1e-4)  # the bottom centre, on its platform
    kf = ContactKeyframe(pairs=[ContactPair(body1="box", pos1=list(pair.pos1), body2="to_platform",
                                            pos2=list(pair.pos2))])
    assert pair_distance(m, d, kf) == pytest.approx(np.linalg.norm(cursor - bottom), abs=1e-4)


@pytest.mark.every_blender
def test_a_file_saved_before_a_newer_objective_term_keeps_its_weights(tmp_path):
    """A contact keyframe stored with the 13 weights of before `Foot Slip` (Blender would read them back as
    zeros, the new length not matching) keeps them on load, the newer terms (`Foot Slip`, `Feet Down`, `Feet Flat`)
    at their defaults, and says so."""
    bpy, module = installed_extension()
    from solver.formats.objective_terms import DEFAULT_WEIGHTS, TERM_NAMES
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand")
    item = bpy.context.scene.physkey.contact_keyframes[1]
    old = [float(w) for w in item.weights][:13]
    assert TERM_NAMES[13] == "Foot Slip" and old[TERM_NAMES.index("Contact")] == 100.0
    stored = item.bl_system_properties_get() if hasattr(item, "bl_system_properties_get") else item
    del stored["weights"]
    stored["weights"] = old  # as an earlier PhysKey saved it
    path = str(tmp_path / "old.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    props = bpy.context.scene.physkey
    assert TERM_NAMES[13:] == ("Foot Slip", "Feet Down", "Feet Flat")
    newer = [DEFAULT_WEIGHTS[t] for t in TERM_NAMES[13:]]
    assert list(props.contact_keyframes[1].weights) == pytest.approx(old + newer)
    assert "contact keyframes saved by an earlier PhysKey (1)" in props.status
