"""MJCF → rig: a user's model with world-aligned body frames and joints away from the body origins
comes in as bones that move exactly like its bodies."""
from pathlib import Path

import mujoco
import numpy as np
import pytest
from blender_env import addon, installed_extension

LAMP = """<mujoco><compiler angle="degree"/>
  <worldbody><geom type="plane" size="5 5 .1"/>
    <body name="table" pos="1 0 0.2"><geom type="box" size=".3 .3 .2"/></body>
    <body name="base" pos="0 0 0.3"><freejoint/><geom type="box" size=".1 .1 .05"/>
      <body name="arm" pos="0.05 0 .05">
        <joint name="tilt" pos="0 0 0.02" axis="0 1 0" range="-45 45"/>
        <joint name="pan" pos="0 0 0.02" axis="0 0 1" range="-90 90"/>
        <geom type="capsule" fromto="0 0 0 0.1 0 .3" size=".015"/>
        <body name="shade" pos="0.1 0 .3"><joint name="nod" pos="0.01 0 0" axis="0 1 0" range="-90 30"/>
          <geom type="sphere" size=".05" pos="0.05 0 0"/></body></body></body>
  </worldbody>
  <actuator><motor joint="tilt" gear="5"/><position joint="nod" kp="20" kv="1"/></actuator></mujoco>"""


@pytest.mark.every_blender
def test_imported_rig_moves_like_the_original_model(tmp_path):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    src = tmp_path / "lamp.xml"
    src.write_text(LAMP)
    assert bpy.ops.physkey.import_mjcf(filepath=str(src)) == {"FINISHED"}
    obj = bpy.context.active_object
    assert [b.name for b in obj.data.bones] == ["base", "arm", "shade"]
    assert bpy.data.objects["table"].physkey.is_body
    assert bpy.ops.physkey.export_mjcf(filepath=str(tmp_path / "out.xml")) == {"FINISHED"}
    m1 = mujoco.MjModel.from_xml_path(str(src))
    m2 = mujoco.MjModel.from_xml_path(str(tmp_path / "out.xml"))
    rig = addon(module, "rig")
    rng = np.random.default_rng(0)
    d1, d2 = mujoco.MjData(m1), mujoco.MjData(m2)
    for _ in range(4):
        # Pose the rig by joint angles (root left where the import put it) ...
        q2 = m2.qpos0.copy()
        for name in ("tilt", "pan", "nod"):
            q2[m2.jnt_qposadr[m2.joint(name).id]] = rng.uniform(*m1.jnt_range[m1.joint(name).id])
        rig.pose_from_qpos(obj, m2, q2)
        bpy.context.view_layer.update()
        # ... and the original model with the same angles: every mesh lands on its original geom.
        q1 = m1.qpos0.copy()
        for name in ("tilt", "pan", "nod"):
            q1[m1.jnt_qposadr[m1.joint(name).id]] = q2[m2.jnt_qposadr[m2.joint(name).id]]
        d1.qpos[:] = q1
        mujoco.mj_kinematics(m1, d1)
        bodies = [m1.body(n).id for n in ("arm", "shade")]
        for g in range(m1.ngeom):
            if m1.geom_bodyid[g] not in bodies:
                continue
            mesh = next(o for o in obj.children if o.parent_bone == m1.body(m1.geom_bodyid[g]).name)
            np.testing.assert_allclose(np.array(mesh.matrix_world.to_translation()), d1.geom_xpos[g], atol=1e-5)
        d2.qpos[:] = q2
        mujoco.mj_kinematics(m2, d2)
        np.testing.assert_allclose(d2.geom_xpos[1:], d1.geom_xpos[1:], atol=1e-5)
    assert m2.actuator("tilt").gear[0] == pytest.approx(5.0)


def test_exported_task_mjcf_imports_as_the_humanoid(tmp_path):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    from solver.builders.mjcf import scene_to_xml
    from solver.formats.task import SceneRef, build_scene
    path = tmp_path / "armchair.xml"
    path.write_text(scene_to_xml(build_scene(SceneRef(environment="armchair"))))
    assert bpy.ops.physkey.import_mjcf(filepath=str(path)) == {"FINISHED"}
    assert len(bpy.context.active_object.data.bones) == 16
    with pytest.raises(RuntimeError, match="no file"):
        bpy.ops.physkey.import_mjcf(filepath=str(tmp_path / "missing.xml"))


BALL = """<mujoco>
  <worldbody>
    <body name="pelvis" pos="0 0 1"><freejoint/><geom type="sphere" size=".1"/>
      <body name="leg" pos="0 0.1 -0.05"><joint name="hip" type="ball" range="0 1.2"/>
        <geom type="capsule" fromto="0 0 0 0 0 -.4" size=".04"/>
        <body name="shin" pos="0 0 -.45"><joint name="knee" axis="0 1 0" range="-2 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -.4" size=".035"/></body></body></body>
  </worldbody></mujoco>"""


def test_ball_joints_pose_both_ways(tmp_path):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    src = tmp_path / "ball.xml"
    src.write_text(BALL)
    assert bpy.ops.physkey.import_mjcf(filepath=str(src)) == {"FINISHED"}
    obj = bpy.context.active_object
    assert bpy.ops.physkey.export_mjcf(filepath=str(tmp_path / "out.xml")) == {"FINISHED"}
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "out.xml"))
    assert model.jnt_type[model.joint("hip").id] == mujoco.mjtJoint.mjJNT_BALL
    rig = addon(module, "rig")
    from test_rig import _rotation_angle
    rng = np.random.default_rng(4)
    data = mujoco.MjData(model)
    for _ in range(3):
        q = model.qpos0.copy()
        a = model.jnt_qposadr[model.joint("hip").id]
        quat = rng.normal(size=4)
        q[a:a + 4] = quat / np.linalg.norm(quat)
        q[model.jnt_qposadr[model.joint("knee").id]] = rng.uniform(*model.jnt_range[model.joint("knee").id])
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        rig.pose_from_qpos(obj, model, q)
        bpy.context.view_layer.update()
        for name, (pos, rot) in rig.world_bone_poses(obj).items():
            b = model.body(name).id
            np.testing.assert_allclose(pos, data.xpos[b], atol=1e-5, err_msg=name)
            assert _rotation_angle(rot, data.xmat[b].reshape(3, 3)) < 1e-5, name
        back = rig.qpos_from_pose(obj, model)
        data.qpos[:] = back
        mujoco.mj_kinematics(model, data)
        for name, (pos, _rot) in rig.world_bone_poses(obj).items():
            np.testing.assert_allclose(data.xpos[model.body(name).id], pos, atol=1e-5, err_msg=name)


@pytest.mark.every_blender
def test_mjcf_is_in_file_import_and_export_with_an_xml_filter():
    bpy, module = installed_extension()
    for menu, name in ((bpy.types.TOPBAR_MT_file_import, "menu_import"),
                       (bpy.types.TOPBAR_MT_file_export, "menu_export")):
        drawn = [f for f in menu._dyn_ui_initialize() if getattr(f, "__name__", "") == name]
        assert drawn and drawn[0].__module__.startswith(module.__name__)
    for op in (bpy.ops.physkey.import_mjcf, bpy.ops.physkey.export_mjcf):
        props = op.get_rna_type().properties
        assert props["filter_glob"].default == "*.xml;*.mjcf" and "filepath" in props


DM = Path(__file__).resolve().parent / "data" / "dm_control"
ROOT = Path(__file__).resolve().parents[1]


def _shapes_on_geoms(obj, model, data):
    """(geom index, name, the rig's shape object) for every geom of `model` on a body, each shape checked to
    stand where MuJoCo puts its geom in `data` (0.1 mm)."""
    for g in range(model.ngeom):
        body = model.body(model.geom_bodyid[g]).name
        if body == "world":
            continue
        geom = model.geom(g).name
        mesh = next(o for o in obj.children if o.name.endswith("_" + geom) and o.parent_bone == body)
        np.testing.assert_allclose(np.array(mesh.matrix_world.to_translation()), data.geom_xpos[g], atol=1e-4,
                                   err_msg=geom)
        yield g, geom, mesh


@pytest.mark.every_blender
@pytest.mark.parametrize("name", ["humanoid.xml", "humanoid_CMU.xml"])
def test_dm_control_humanoids_come_in_as_they_are(tmp_path, name):
    """dm_control's humanoids as they ship (`tests/data/dm_control`): the rig moves like the original
    model — every shape on its original geom, the ankles turning about their two pivots 4 cm apart —
    the CMU hands are drawn as the ellipsoids they are, the roles are kept on the rig (shown for editing)
    and go out with the exported MJCF, and so does the softness of its contacts and limits (the CMU
    humanoid's is not PhysKey's)."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.import_mjcf(filepath=str(DM / name)) == {"FINISHED"}
    obj = bpy.context.active_object
    roles = {item.name: item.bone for item in obj.physkey.roles}
    assert roles["foot_left"] == ("left_foot" if name == "humanoid.xml" else "lfoot") and len(roles) == 15
    original = mujoco.MjModel.from_xml_path(str(DM / name))
    assert bpy.ops.physkey.export_mjcf(filepath=str(tmp_path / "out.xml")) == {"FINISHED"}
    exported = mujoco.MjModel.from_xml_path(str(tmp_path / "out.xml"))
    assert f"foot_left={roles['foot_left']}" in (tmp_path / "out.xml").read_text()
    rig = addon(module, "rig")
    rng = np.random.default_rng(1)
    d1, d2 = mujoco.MjData(original), mujoco.MjData(exported)
    hinges = [original.joint(j).name for j in range(original.njnt)
              if original.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    q1, q2 = original.qpos0.copy(), exported.key_qpos[0].copy()  # both roots where the file puts them
    for j in hinges:
        angle = rng.uniform(*original.jnt_range[original.joint(j).id])
        q1[original.jnt_qposadr[original.joint(j).id]] = angle
        q2[exported.jnt_qposadr[exported.joint(j).id]] = angle
    rig.pose_from_qpos(obj, exported, q2)
    bpy.context.view_layer.update()
    d1.qpos[:], d2.qpos[:] = q1, q2
    mujoco.mj_kinematics(original, d1)
    mujoco.mj_kinematics(exported, d2)
    for g, geom, mesh in _shapes_on_geoms(obj, original, d1):
        np.testing.assert_allclose(d2.geom_xpos[exported.geom(geom).id], d1.geom_xpos[g], atol=1e-5, err_msg=geom)
        if original.geom_type[g] == mujoco.mjtGeom.mjGEOM_ELLIPSOID:  # drawn with its three half-sizes
            assert sorted(mesh.dimensions) == pytest.approx(sorted(2 * original.geom_size[g]), rel=1e-3)
        np.testing.assert_allclose(exported.geom(geom).solimp, original.geom_solimp[g], rtol=1e-6, err_msg=geom)
        np.testing.assert_allclose(exported.geom(geom).solref, original.geom_solref[g], rtol=1e-6, err_msg=geom)
    for j in hinges:
        np.testing.assert_allclose(exported.joint(j).solimp, original.joint(j).solimp, rtol=1e-6, err_msg=j)


def test_a_motion_in_the_mjcf_files_own_frames_poses_the_rig_where_mujoco_puts_it():
    """`solver run TASK --character humanoid_CMU.xml` writes its model in the file's body frames, not the
    rig's (the CMU root's rest turned 90° about x, its hinge axes along its own bodies' x): Import Result
    and Keep of such a run posed the imported CMU rig lying across the chair, legs up, where the motion
    sits. Posed with the file's own model at a configuration with the root moved and turned and every
    hinge turned, each shape of the rig is where MuJoCo puts the file's geom."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.import_mjcf(filepath=str(DM / "humanoid_CMU.xml")) == {"FINISHED"}
    obj = bpy.context.active_object
    original = mujoco.MjModel.from_xml_path(str(DM / "humanoid_CMU.xml"))
    rng = np.random.default_rng(3)
    q = original.qpos0.copy()
    a = original.jnt_qposadr[original.joint("root").id]
    turn = rng.normal(size=4)
    q[a:a + 3], q[a + 3:a + 7] = [0.3, -0.2, 1.1], turn / np.linalg.norm(turn)
    for j in range(original.njnt):
        if original.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE:
            q[original.jnt_qposadr[j]] = rng.uniform(*original.jnt_range[j])
    addon(module, "rig").pose_from_qpos(obj, original, q)
    bpy.context.view_layer.update()
    data = mujoco.MjData(original)
    data.qpos[:] = q
    mujoco.mj_kinematics(original, data)
    assert len(list(_shapes_on_geoms(obj, original, data))) == original.ngeom - 1  # every geom but the floor


def test_a_preset_loads_onto_an_imported_character_and_its_solution_is_kept(tmp_path):
    """The CMU humanoid imported, Load Scene Preset (reach) with it selected: no second character, the
    reach's pairs on the CMU hands (`rhand`, `lhand`: the roles the preset names); a contact solve (cut
    short: its keyframes given 0.3 s, 8 rollouts, no retries) and Keep bake onto it."""
    import json
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.import_mjcf(filepath=str(DM / "humanoid_CMU.xml")) == {"FINISHED"}
    cmu = bpy.context.active_object
    assert bpy.ops.physkey.load_preset(preset="reach_hand_targets") == {"FINISHED"}
    characters = [o for o in bpy.data.objects if o.type == "ARMATURE" and o.physkey.is_character]
    assert characters == [cmu]
    props = bpy.context.scene.physkey
    assert {p.body1 for kf in props.contact_keyframes for p in kf.pairs} == {"rhand", "lhand"}
    # it starts standing on the floor in the reach's start pose, fitted onto it as the solver's --character fits
    # it (not the default humanoid's root pose put on the CMU skeleton: lying 1.3 m up in the air)
    from solver.builders.mjcf import compile_spec, initial_qpos, scene_to_spec
    from solver.formats.task import load_task
    from solver.physics.character_start import with_character
    desc = addon(module, "taskio").extract_scene(bpy.context)
    model = compile_spec(scene_to_spec(desc))
    data = mujoco.MjData(model)
    data.qpos[:] = initial_qpos(desc, model)
    mujoco.mj_forward(model, data)
    reach = load_task(ROOT / "scenes" / "tasks" / "reach_hand_targets.json")
    cli = with_character(reach, str(DM / "humanoid_CMU.xml"), [])
    cli_model = compile_spec(scene_to_spec(cli.scene.desc))
    cli_data = mujoco.MjData(cli_model)
    cli_data.qpos[:] = initial_qpos(cli.scene.desc, cli_model)
    mujoco.mj_kinematics(cli_model, cli_data)
    for body in ("root", "lfoot", "rfoot", "head", "lhand", "rhand"):
        got, want = data.xpos[model.body(body).id], cli_data.xpos[cli_model.body(body).id]
        assert np.linalg.norm(got - want) < 0.01, (body, got, want)
    feet = max(data.xpos[model.body(f).id][2] for f in ("lfoot", "rfoot"))
    assert data.xpos[model.body("head").id][2] > 1.4 and feet < 0.15
    # a contact solve, cut short: each keyframe 0.3 s and no retries (its first reach is not met in that)
    props.method, props.num_seeds = "contact", 1
    for kf in props.contact_keyframes:
        kf.time_limit = 0.3
    props.settings_json = json.dumps({"rollouts": 8, "segment_retries": 0, "backups": 0, "overtime": 0.0})
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    row = props.solutions[0]
    assert row.method == "contact" and not row.success and 0.25 <= row.duration <= 0.5, (row.method, row.duration)
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
    assert cmu.animation_data.action is not None
    assert [o for o in bpy.data.objects if o.type == "ARMATURE" and o.physkey.is_character] == [cmu]
