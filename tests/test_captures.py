"""Real motion capture through Blender's own BVH importer and the installed extension: the BVH files of
the `bvhtoolbox` 0.1.3 sdist (`tests/data/bvh`, MIT) — a walk with Mixamo names and a sit-down-and-stand-up
with Biovision names. Mapped by their names, made into person-sized characters at any import scale, and
every frame fitted onto the physics character with the hands and feet where the capture has them."""
import json
from pathlib import Path

import mujoco
import numpy as np
import pytest
from blender_env import addon, installed_extension
from humanoid_rigs import select as _select
from layout_recorder import outline_text
from own_rigs import _model, _physics


@pytest.fixture(scope="module")
def blender():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    return bpy, module


BVH = Path(__file__).resolve().parent / "data" / "bvh"


def _import_bvh(bpy, name: str, scale: float, fps: bool = False):
    """A BVH capture through Blender's own importer (`fps`: setting the scene's frame rate to its own),
    selected and active."""
    bpy.ops.object.select_all(action="DESELECT")
    assert bpy.ops.import_anim.bvh(filepath=str(BVH / name), global_scale=scale,
                                   update_scene_fps=fps) == {"FINISHED"}
    return bpy.context.active_object


def _capture_character(bpy, name: str, fps: bool = False):
    """A BVH capture in metres, its humanoid bones found and its physics character made: the rig."""
    rig = _import_bvh(bpy, name, 0.01, fps)
    _select(bpy, rig)
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    return rig


def test_a_capture_in_centimetres_is_converted_and_one_of_no_size_is_refused(blender):
    """Blender's BVH importer at its default scale takes the capture's centimetres for metres (a 176 m
    character): Make Physics Character scales the rig by 0.01 and says so (the Your Rig panel keeps
    it), making a person-sized, person-weighted character. At a scale that is neither metres nor
    centimetres (0.1: 17.6 m) it is refused, naming the height."""
    bpy, module = blender
    rig = _import_bvh(bpy, "test_freebvh.bvh", 1.0)
    _select(bpy, rig)
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    assert tuple(rig.scale) == pytest.approx((0.01, 0.01, 0.01))
    note = rig.physkey.units_note
    assert note.startswith(f"'{rig.name}' was 17") and "scaled by 0.01 to 1.7" in note, note
    physics, _ = _physics(bpy, module, rig)
    model = _model(bpy, module, physics)
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    ids = [model.body(b.name).id for b in physics.pose.bones]
    mass, span = float(model.body_mass[ids].sum()), float(np.ptp(data.xpos[ids, 2]))  # head to feet origins
    assert 1.2 < span < 2.0 and 40.0 < mass < 120.0, (span, mass)
    ankles = [i for i in range(model.nu) if model.actuator(i).name.startswith("ankle")]
    assert len(ankles) == 4 and np.allclose(model.actuator_gear[ankles, 0], 1.6 * mass, rtol=1e-4)  # a person's
    odd = _import_bvh(bpy, "test_freebvh.bvh", 0.1)
    _select(bpy, odd)
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    with pytest.raises(RuntimeError, match=r"would be 17\.\d m tall; PhysKey characters are 0\.3–3\.0 m"):
        bpy.ops.physkey.character_from_rig()
    assert not any(o.physkey.animator_rig == odd for o in bpy.data.objects) and tuple(odd.scale) == (1.0, 1.0, 1.0)


def test_a_biovision_capture_maps_by_its_names_and_makes_a_person_sized_character(blender):
    """Biovision names (`Hips`, `LeftHip`, `LeftCollar` → `LeftShoulder` → `LeftElbow` → `LeftWrist`):
    the shoulder is the upper arm there (Mixamo's `LeftShoulder` is the clavicle)."""
    bpy, module = blender
    rig = _import_bvh(bpy, "test_mocapbank.bvh", 0.01)
    _select(bpy, rig)
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    mapping = addon(module, "retarget").mapping_of(rig)
    for side, prefix in (("left", "Left"), ("right", "Right")):
        assert [mapping[f"{slot}_{side}"] for slot in ("thigh", "shin", "foot", "upper_arm", "lower_arm", "hand")] \
            == [f"{prefix}{b}" for b in ("Hip", "Knee", "Ankle", "Shoulder", "Elbow", "Wrist")]
    assert mapping["pelvis"] == "Hips" and mapping["head"] == "Head"
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}


@pytest.mark.parametrize("name", ["test_freebvh.bvh", "test_mocapbank.bvh"])
def test_every_frame_of_a_capture_is_fitted_with_hands_and_feet_where_captured(blender, name):
    """A real capture (a walk; sitting down and standing up), every frame read from the evaluated rig and
    fitted whole-body: the targets are the capture's bone heads (read here from the posed bones), MuJoCo's
    forward kinematics of the fit puts each foot within 2 cm and each hand within 3 cm of them, nothing is
    deeper in the floor than resting, and every frame with a bone further off says so."""
    from solver.physics import pose_fit
    bpy, module = blender
    rig = _capture_character(bpy, name)
    physics, mapping = _physics(bpy, module, rig)
    model = _model(bpy, module, physics)
    reading = addon(module, "pose_reading")
    start, end = (int(v) for v in rig.animation_data.action.frame_range)
    frames = list(range(start, end + 1))
    targets = reading.read_targets(bpy.context, rig, physics, model, frames)
    fit = pose_fit.fit_poses(model, targets)
    slots = list(addon(module, "humanoid_map").SLOTS)
    data = mujoco.MjData(model)
    floor = model.geom("floor").id
    worst = {"foot": 0.0, "hand": 0.0}
    for f in range(0, len(frames), 4):
        bpy.context.scene.frame_set(frames[f])
        heads = np.array([rig.matrix_world @ rig.pose.bones[mapping[s]].head for s in slots])
        np.testing.assert_allclose(targets.positions[f], heads, atol=1e-5)  # what the capture shows
        data.qpos[:] = fit.qpos[f]
        mujoco.mj_forward(model, data)
        for k, slot in enumerate(slots):
            body = model.body(slot).id
            got = data.xpos[body] + data.xmat[body].reshape(3, 3) @ targets.points[k]
            off = float(np.linalg.norm(got - heads[k]))
            if slot.startswith(("foot", "hand")):
                worst[slot[:4]] = max(worst[slot[:4]], off)
            if off >= reading.REPORT_DISTANCE + 1e-4:
                assert reading.misfit(fit, f, mapping), (frames[f], slot, off)
        assert max([-c.dist for c in data.contact[:data.ncon] if floor in c.geom] + [0.0]) < pose_fit.FLOOR_SLACK + 1e-3
    print(name, {k: round(100 * v, 2) for k, v in worst.items()}, "cm")
    assert worst["foot"] < 0.02 and worst["hand"] < 0.03, worst


def test_a_capture_without_hands_has_its_hands_at_the_forearms_ends(blender):
    """A skeleton whose arms end at the wrist (the Biovision capture with its wrist bones deleted in Edit
    Mode): Find maps each hand to its forearm's bone — the hand is where the forearm ends — the physics
    character is made with its hands there, every frame is fitted with the hands within 3 cm of the
    forearms' tails, and a baked motion puts each forearm's tail on its hand body (MuJoCo's forward
    kinematics)."""
    from test_bake import _random_motion
    bpy, module = blender
    rig = _import_bvh(bpy, "test_mocapbank.bvh", 0.01)
    _select(bpy, rig)
    bpy.ops.object.mode_set(mode="EDIT")
    for name in ("LeftWrist", "RightWrist"):
        rig.data.edit_bones.remove(rig.data.edit_bones[name])
    bpy.ops.object.mode_set(mode="OBJECT")
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    mapping = addon(module, "retarget").mapping_of(rig)
    assert (mapping["hand_left"], mapping["hand_right"]) == ("LeftElbow", "RightElbow")
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    physics, _ = _physics(bpy, module, rig)
    model = _model(bpy, module, physics)
    start, end = (int(v) for v in rig.animation_data.action.frame_range)
    frames = list(range(start, end + 1, 8))
    fit = addon(module, "pose_reading").fitted_poses(bpy.context, rig, physics, model, frames)
    data = mujoco.MjData(model)
    worst = 0.0
    for f, frame in enumerate(frames):
        bpy.context.scene.frame_set(frame)
        data.qpos[:] = fit.qpos[f]
        mujoco.mj_kinematics(model, data)
        for side, bone in (("left", "LeftElbow"), ("right", "RightElbow")):
            tail = np.array(rig.matrix_world @ rig.pose.bones[bone].tail)
            worst = max(worst, float(np.linalg.norm(data.xpos[model.body(f"hand_{side}").id] - tail)))
    print(f"hands at the forearms' ends: worst {100 * worst:.2f} cm")
    assert worst < 0.03
    qpos = _random_motion(model, 12)
    retarget = addon(module, "retarget")
    retarget.bake_onto_rig(rig, physics, addon(module, "bake").Clip(model, np.arange(12) / 30.0, qpos, 1, 30.0),
                           "no hands")
    for k in range(12):
        bpy.context.scene.frame_set(1 + k)
        data.qpos[:] = qpos[k]
        mujoco.mj_kinematics(model, data)
        for side, bone in (("left", "LeftElbow"), ("right", "RightElbow")):
            tail = np.array(rig.matrix_world @ rig.pose.bones[bone].tail)
            assert np.linalg.norm(data.xpos[model.body(f"hand_{side}").id] - tail) < 1e-3, (k, side)


def test_a_capture_is_made_physical_over_the_frame_range_and_a_kept_motion_is_a_reference_too(blender):
    """Make Physical on the walk as imported (at its own frame rate): a motion keyed on every frame is a
    reference, not 69 pose keyframes — Assisted keyframes refuses it, naming it; the frame the animator
    marks is the one keyframe; the solve follows the whole frame range from its first frame (a small
    planning budget: what reaches Blender is checked, not how closely it follows) and the solution shows
    its fidelity figures. Kept, the physical motion is a reference in turn: read back, it is the solved
    motion (within the whole-body fit's centimetre) — the other methods refuse it."""
    bpy, module = blender
    rig = _capture_character(bpy, "test_freebvh.bvh", fps=True)
    scene = bpy.context.scene
    start, end = (int(v) for v in rig.animation_data.action.frame_range)
    scene.frame_start, scene.frame_end = start, end
    props = scene.physkey
    props.method, props.num_seeds = "assist", 1
    with pytest.raises(RuntimeError, match=r"is keyed on 69 of the 69 frames it spans .* Make Physical follows it"):
        bpy.ops.physkey.solve(wait=True)
    props.method = "track"
    props.settings_json = json.dumps({"rollouts": 16, "max_iterations": 2, "segment_retries": 0, "backups": 0})
    props.pose_keys.clear()
    scene.frame_set(start + 30)
    assert bpy.ops.physkey.mark_pose_key() == {"FINISHED"}
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    assert [(k.frame, k.marked) for k in props.pose_keys] == [(start + 30, True)]
    (item,) = props.solutions
    result = Path(bpy.path.abspath(item.result_path)).parents[1] / "result.json"
    entry = json.loads(result.read_text())["solutions"][0]
    fps = scene.render.fps / scene.render.fps_base
    assert abs(fps - 30.0) < 1e-3 and item.start_frame == start
    marked = entry["keyframes"][0]
    assert marked["name"] == f"frame_{start + 30}" and marked["time"] == pytest.approx(30 / fps)
    # the capture's own pose every second stands in between (the one at 1 s gives way to the marked frame)
    assert [k["name"] for k in entry["keyframes"]] == [f"frame_{start + 30}", "t=2s", "end"]
    # the marked key is the reference's own pose at its frame (grounded alike), not a fit of its own
    sent = json.loads((result.parent / "task.json").read_text())
    key = next(k for k in sent["keyframes"] if k["name"] == f"frame_{start + 30}")
    assert key["root_pos"] == pytest.approx(sent["reference"]["qpos"][30][:3], abs=1e-9)
    fid = json.loads(item.fidelity_json)
    assert fid["duration_s"] == pytest.approx((end - start) / fps, abs=1e-3)
    assert fid["covers_s"] == pytest.approx(fid["duration_s"], abs=0.02) or fid["why"].startswith(
        "follows the reference only")
    assert fid["mean_cm"] > 0 and item.success == (entry["success"] and fid["within"])
    props.active_solution = 0
    # the verdict names the capture's own bones, not the physics humanoid's bodies
    bones = {slot.name: slot.bone for slot in rig.physkey.humanoid_map if slot.bone}
    text = outline_text(bpy, module.__name__)
    off = next(line for line in text.splitlines() if "Off the animation" in line)
    passed = f"'{sum(t is not None for t in entry['keyframes_reached'])}/{len(entry['keyframes_reached'])} poses'"
    assert passed in text and " keys'" not in text  # the poses it passed (marked and the capture's own), not keys
    assert f"({bones[fid['worst']['body']]} " in off and f"({fid['worst']['body']} " not in off, off
    assert bpy.ops.physkey.keep_solution() == {"FINISHED"}
    taskio = addon(module, "taskio")
    desc = taskio.extract_scene(bpy.context)
    task = taskio.task_from_scene(bpy.context, desc)
    with np.load(bpy.path.abspath(item.result_path)) as z:
        times, qpos = z["times"], z["qpos"]
    ref_t, ref_q = np.array(task["reference"]["times"]), np.array(task["reference"]["qpos"])
    kept_end = min(scene.frame_end, int(np.ceil(rig.animation_data.action.frame_range[1])))  # the frames it animates
    assert ref_t[-1] == pytest.approx((kept_end - scene.frame_start) / fps)
    covered = ref_t <= times[-1] + 1e-9
    solved_root = np.stack([np.interp(ref_t[covered], times, qpos[:, k]) for k in range(3)], axis=1)
    assert np.max(np.linalg.norm(ref_q[covered, :3] - solved_root, axis=1)) < 0.02
    props.method = "assist"
    with pytest.raises(ValueError, match="a solved motion, not your pose keys"):
        taskio.task_from_scene(bpy.context, desc)


def test_make_physical_follows_the_frames_the_capture_animates_and_says_so(blender):
    """Blender's importer leaves the scene's range as it was (1-250) round a 69-frame capture: Make Physical
    follows the capture's own frames within the range, not the range's end held still, and says which; a
    preview range inside the capture is followed as set."""
    bpy, module = blender
    rig = _capture_character(bpy, "test_freebvh.bvh", fps=True)
    scene = bpy.context.scene
    start, end = (int(v) for v in rig.animation_data.action.frame_range)
    scene.frame_start, scene.frame_end = start, end + 181
    taskio = addon(module, "taskio")
    _select(bpy, rig)
    said = []
    assert taskio.track_range(scene, taskio.active_character(bpy.context), said.append) == (start, end)
    assert said == [f"the animation is keyed from frame {start} to {end}: followed frames {start}–{end}, not the "
                    f"whole frame range {start}–{end + 181}"]
    scene.use_preview_range, scene.frame_preview_start, scene.frame_preview_end = True, start + 5, end - 5
    said.clear()
    assert taskio.track_range(scene, taskio.active_character(bpy.context), said.append) == (start + 5, end - 5)
    assert said == []
    # a range past the capture's frames would be its last pose held still, followed and marked a success
    scene.frame_preview_start, scene.frame_preview_end = end + 231, end + 281
    with pytest.raises(ValueError, match=rf"the preview range {end + 231}–{end + 281} misses the animation, keyed "
                                         rf"from frame {start} to {end}: set it over the frames to make physical"):
        taskio.track_range(scene, taskio.active_character(bpy.context), said.append)
    scene.use_preview_range = False
    scene.frame_start, scene.frame_end = end, end + 81  # one frame of it
    with pytest.raises(ValueError, match=rf"the frame range {end}–{end + 81} misses the animation"):
        taskio.track_range(scene, taskio.active_character(bpy.context), said.append)
    scene.physkey.method, scene.physkey.num_seeds = "track", 1
    with pytest.raises(RuntimeError, match="misses the animation"):  # Solve says it, and starts nothing
        bpy.ops.physkey.solve(wait=True)
    assert not scene.physkey.running
    scene.frame_start, scene.frame_end = start, end


def test_solve_while_a_solution_is_previewed_follows_the_capture_not_the_solution(blender):
    """Clicking a solution's row plays it on the rig in place of the capture; Solve then ends the preview and
    follows the capture (it had followed the solution shown, 9 cm from the capture, saying nothing)."""
    bpy, module = blender
    rig = _capture_character(bpy, "test_freebvh.bvh", fps=True)
    scene, props = bpy.context.scene, bpy.context.scene.physkey
    start = int(rig.animation_data.action.frame_range[0])
    scene.frame_start, scene.frame_end, scene.use_preview_range = start, start + 12, False
    props.method, props.num_seeds = "track", 1
    props.settings_json = json.dumps({"rollouts": 8, "max_iterations": 1, "segment_retries": 0, "backups": 0})
    props.pose_keys.clear()
    capture = rig.animation_data.action
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    props.active_solution = 0
    assert rig.animation_data.action.name == "PhysKey Preview (your rig)"
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    assert rig.animation_data.action == capture
    assert not [a.name for a in bpy.data.actions if a.name.startswith("PhysKey Preview")]
    taskio = addon(module, "taskio")
    want = taskio.task_from_scene(bpy.context, taskio.extract_scene(bpy.context))["reference"]["qpos"]
    (item,) = props.solutions
    sent = json.loads((Path(bpy.path.abspath(item.result_path)).parents[1] / "task.json").read_text())
    assert np.max(np.abs(np.array(sent["reference"]["qpos"]) - np.array(want))) < 1e-6


def test_solve_on_a_rig_without_physics_or_a_character_without_its_rig_says_what_to_do(blender):
    """Solve on a capture's armature before Make Physics Character: its bones have no shapes, no mass — said as
    what to do, not as MuJoCo's "mass and inertia of moving bodies must be larger than mjMINVAL". Make Physical
    on a physics character whose capture rig was deleted: nothing animates it — said, where its rest pose had
    been followed "100 cm inside floor" and marked done."""
    bpy, module = blender
    rig = _import_bvh(bpy, "test_freebvh.bvh", 0.01, True)
    _select(bpy, rig)
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    bpy.context.scene.physkey.method = "track"
    with pytest.raises(RuntimeError, match=rf"'{rig.name}' has no physics shapes on its bones: select it and click "
                                           "Make Physics Character"):
        bpy.ops.physkey.solve(wait=True)
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    physics, _ = _physics(bpy, module, rig)
    bpy.data.objects.remove(rig, do_unlink=True)
    _select(bpy, physics)
    with pytest.raises(RuntimeError, match=rf"nothing animates '{physics.name}' \(nor a rig it was made from\)"):
        bpy.ops.physkey.solve(wait=True)


# The walk's feet, labelled by hand from the capture's own bones (tests/data/bvh/README.md): frames where
# the foot's ankle stands still (under 5 cm/s) with its toe on the floor, and frames where it swings
# faster than 0.9 m/s. The frames between (heel-off, toe-off, landing) are left unlabelled.
WALK_FEET = {"foot_left": {"planted": [*range(14, 24), *range(44, 57)], "swing": [*range(2, 9), *range(62, 70)]},
             "foot_right": {"planted": [*range(1, 6), *range(27, 39), *range(64, 70)],
                            "swing": [*range(11, 24), *range(46, 58)]}}


def test_the_walks_feet_are_planted_where_the_capture_plants_them(blender):
    """Contact inference against the hand-labelled walk: the reference Make Physical tracks (the capture
    fitted frame by frame and put on the floor, `physics.reference.build_reference`) plants each foot in at
    least 90% of the frames labelled planted and in none of those labelled swinging."""
    from solver.physics.reference import build_reference
    bpy, module = blender
    rig = _capture_character(bpy, "test_freebvh.bvh")
    physics, _ = _physics(bpy, module, rig)
    model = _model(bpy, module, physics)
    frames = list(range(1, 70))
    fit = addon(module, "pose_reading").fitted_poses(bpy.context, rig, physics, model, frames, clip_dt=1 / 30.0)
    bodies = [b.name for b in physics.pose.bones]
    ref = build_reference(model, bodies, (np.array(frames) - 1) / 30.0, fit.qpos, 1 / 30.0, 0.0)
    for foot, labels in WALK_FEET.items():
        planted = ref.planted[foot][np.array(labels["planted"]) - 1]
        swing = ref.planted[foot][np.array(labels["swing"]) - 1]
        print(foot, f"planted {planted.mean():.2f}, swinging {swing.mean():.2f}")
        assert planted.mean() >= 0.9 and not swing.any(), (foot, planted.astype(int), swing.astype(int))


def _soles(model, qpos) -> np.ndarray:
    """Per frame (F, 2, 2), each foot's (lowest point's height, tilt of its sole from flat in degrees):
    MuJoCo's forward kinematics, the sole's normal the foot's up at the model's rest."""
    data = mujoco.MjData(model)
    feet = [model.body(f"foot_{s}").id for s in ("left", "right")]
    data.qpos[:] = model.qpos0
    mujoco.mj_kinematics(model, data)
    up = data.xmat[feet].reshape(-1, 3, 3)[:, 2, :]
    out = np.empty((len(qpos), 2, 2))
    for f, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        for k, body in enumerate(feet):
            low = min(data.geom_xpos[g][2] - abs(data.geom_xmat[g][8]) * model.geom_size[g][1] - model.geom_size[g][0]
                      for g in np.flatnonzero(model.geom_bodyid == body))
            normal = data.xmat[body].reshape(3, 3) @ up[k]
            out[f, k] = low, np.degrees(np.arccos(np.clip(normal[2], -1.0, 1.0)))
    return out


def test_a_capture_standing_above_the_floor_is_followed_standing_flat_on_it(blender):
    """The stand–kneel–stand capture floats 2–3 cm over the floor (its toe ends 2.2–3.2 cm up) with its left
    foot tipped 4° from its rest: the reference Make Physical sends (`task_from_scene`) stands both feet flat
    on the floor (within 3 mm, under 2°) where the capture stands, keeps the kneeling leg's foot on its toes,
    and the animator is told by how much it was lowered."""
    bpy, module = blender
    bpy.ops.wm.read_homefile(use_empty=True)
    rig = _capture_character(bpy, "test_mocapbank.bvh", fps=True)
    physics, _ = _physics(bpy, module, rig)
    model = _model(bpy, module, physics)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = (int(v) for v in rig.animation_data.action.frame_range)
    scene.physkey.method = "track"
    taskio = addon(module, "taskio")
    said = []
    task = taskio.task_from_scene(bpy.context, taskio.extract_scene(bpy.context), warn=said.append)
    assert any(s.startswith("the animation stands up to 3.3 cm above the floor") and "LeftAnkle " in s
               for s in said), said  # the foot set down by itself, in the rig's bone names
    soles = _soles(model, np.array(task["reference"]["qpos"]))
    t = np.array(task["reference"]["times"])
    standing = (t < 2.5) | (t > 13.5)
    low, tilt = soles[standing, :, 0], soles[standing, :, 1]
    print("standing: lowest", low.min().round(4), low.max().round(4), "tilt max", tilt.max().round(2))
    assert low.min() > -0.003 and low.max() < 0.003 and tilt.max() < 2.0
    assert soles[(t > 6) & (t < 10), 1, 1].min() > 30.0  # the kneeling right foot stays on its toes


def test_a_foot_at_the_rigs_rest_is_flat_on_the_physics_foots_sole(blender):
    """The BVH skeleton's shins are swung 5–6° onto the physics shins; its feet are not: read at the rig's
    rest, each physics foot's target turn is the physics foot's own at rest (under 0.5°), so a foot flat on
    the rig's floor is flat on the physics sole."""
    bpy, module = blender
    bpy.ops.wm.read_homefile(use_empty=True)
    rig = _capture_character(bpy, "test_mocapbank.bvh")
    physics, _ = _physics(bpy, module, rig)
    model = _model(bpy, module, physics)
    rig.animation_data.action = None
    for bone in rig.pose.bones:
        bone.matrix_basis.identity()
    bpy.context.view_layer.update()
    targets = addon(module, "pose_reading").read_targets(bpy.context, rig, physics, model)
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    slots = list(addon(module, "humanoid_map").SLOTS)
    for side in ("left", "right"):
        k = slots.index(f"foot_{side}")
        rest = data.xmat[model.body(f"foot_{side}").id].reshape(3, 3)
        turn = targets.rotations[0, k] @ rest.T
        angle = np.degrees(np.arccos(np.clip((np.trace(turn) - 1) / 2, -1.0, 1.0)))
        assert angle < 0.5, (side, angle)
