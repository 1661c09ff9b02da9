"""SceneDesc ↔ JSON and SceneDesc → MJCF → SceneDesc round trips; the default humanoid and scenes."""
import copy
import math

import mujoco
import numpy as np
import pytest

from solver.builders import characters, environments, mjcf, mjcf_read
from solver.core import schema
from solver.core.errors import InvalidInput
from solver.formats.scene import GROUPS, scene_from_dict
from solver.formats.task import SceneRef, build_scene

ENVS = list(environments.BUILDERS)


@pytest.mark.parametrize("env", ENVS)
def test_json_round_trip_is_identity(env):
    scene = build_scene(SceneRef(environment=env))
    text = schema.dumps(scene)
    again = scene_from_dict(schema.load_json_text(text, "scene"))
    assert again == scene
    assert schema.dumps(again) == text


def _compiled(scene):
    return mjcf.compile_spec(mjcf.scene_to_spec(scene))


@pytest.mark.parametrize("env,params", [("armchair", {"tilt": 15}), ("bench", {"tilt": 10, "friction": 0.1}),
                                        ("bed", {}), ("box", {"height": 0.6}), ("stool", {"height": 0.2}),
                                        ("table", {})])
def test_mjcf_round_trip_keeps_compiled_physics(env, params, tmp_path):
    scene = build_scene(SceneRef(environment=env, params=params))
    path = tmp_path / "scene.xml"
    path.write_text(mjcf.scene_to_xml(scene))
    back = mjcf_read.load_mjcf(path)
    m1, m2 = _compiled(scene), _compiled(back)
    assert (m1.nbody, m1.njnt, m1.ngeom, m1.nu) == (m2.nbody, m2.njnt, m2.ngeom, m2.nu)
    # MJCF holds 6 significant digits, so the first trip agrees to that precision ...
    np.testing.assert_allclose(m2.body_mass, m1.body_mass, rtol=1e-5)
    np.testing.assert_allclose(m2.body_inertia, m1.body_inertia, rtol=3e-5, atol=1e-9)
    np.testing.assert_allclose(m2.jnt_axis, m1.jnt_axis, atol=1e-6)
    np.testing.assert_allclose(m2.geom_friction, m1.geom_friction, atol=1e-9)
    # ... and from then on MJCF → SceneDesc → MJCF is exact.
    m3 = mujoco.MjModel.from_xml_path(str(path))
    m4 = mujoco.MjModel.from_xml_string(mjcf.scene_to_xml(back))
    for field in ("body_mass", "body_inertia", "jnt_axis", "jnt_range", "geom_size", "geom_pos", "body_pos",
                  "body_quat", "actuator_gear", "dof_damping"):
        np.testing.assert_array_equal(getattr(m4, field), getattr(m3, field), err_msg=field)
    np.testing.assert_allclose(mjcf.initial_qpos(back, m3), mjcf.initial_qpos(scene, m3), atol=1e-5)


def test_mjcf_output_is_deterministic():
    a = mjcf.scene_to_xml(build_scene(SceneRef(environment="armchair")))
    b = mjcf.scene_to_xml(build_scene(SceneRef(environment="armchair")))
    assert a == b and "<mujoco" in a


def test_position_actuation_gives_pd_servos():
    scene = build_scene(SceneRef(environment="floor"))
    m = _compiled(copy.deepcopy(scene))
    mp = mjcf.compile_spec(mjcf.scene_to_spec(scene, actuation="position"))
    a = scene.character.actuators[0]
    i = mp.actuator(a.joint).id
    assert mp.actuator_gainprm[i][0] == pytest.approx(a.kp)
    assert mp.actuator_biasprm[i][2] == pytest.approx(-a.kv)
    assert mp.actuator_forcerange[i][1] == pytest.approx(a.gear)
    assert m.actuator_gear[m.actuator(a.joint).id][0] == pytest.approx(a.gear)


def test_default_humanoid_matches_the_standard_one():
    ch = characters.humanoid()
    assert len(ch.bodies) == 16
    hinges = [j for b in ch.bodies for j in b.joints if j.type == "hinge"]
    assert len(hinges) == 21 and len(ch.actuators) == 21
    assert all(g.type in ("capsule", "sphere") for b in ch.bodies for g in b.geoms)
    assert characters.character_mass(ch) == pytest.approx(40.84, abs=0.05)
    assert {j.group for j in hinges} == set(GROUPS)
    gear = {a.joint: a.gear for a in ch.actuators}
    assert gear["hip_y_right"] == 120 and gear["knee_left"] == 100 and gear["ankle_x_right"] == 20


def test_humanoid_body_frames_are_bone_frames():
    """Each body's Y axis points along its bone (to its child) and joints pivot at the origin."""
    ch = characters.humanoid()
    by_name = {b.name: b for b in ch.bodies}
    for b in ch.bodies:
        assert all(j.pos == [0.0, 0.0, 0.0] for j in b.joints)
        kids = [c for c in ch.bodies if c.parent == b.name]
        if len(kids) == 1:
            direction = np.asarray(kids[0].pos) / np.linalg.norm(kids[0].pos)
            np.testing.assert_allclose(direction, [0, 1, 0], atol=1e-9, err_msg=b.name)
            assert b.length == pytest.approx(np.linalg.norm(kids[0].pos), abs=1e-6)
    assert by_name["shin_right"].parent == "thigh_right"


@pytest.mark.parametrize("variant,mass", [("big_arms", 52.65), ("big_legs", 47.31), ("big_belly", 64.95)])
def test_character_variants_reach_the_papers_masses(variant, mass):
    assert characters.character_mass(characters.humanoid(variant)) == pytest.approx(mass, abs=0.01)


def test_environment_parameters_move_the_furniture():
    low = build_scene(SceneRef(environment="armchair", params={"height": 0.12}))
    high = build_scene(SceneRef(environment="armchair"))
    assert high.environment.bodies[0].pos[2] - low.environment.bodies[0].pos[2] == pytest.approx(0.08)
    # the seated pose goes down with the seat, then rests: the legs fold a little rather than enter the floor
    assert high.initial_pose.root_pos[2] - low.initial_pose.root_pos[2] == pytest.approx(0.08, abs=0.015)
    stool = build_scene(SceneRef(environment="stool", params={"height": 0.2}))
    m = _compiled(stool)
    data = mujoco.MjData(m)
    mujoco.mj_kinematics(m, data)
    base = m.geom("base").id
    assert data.geom_xpos[base][2] + m.geom_size[base][1] == pytest.approx(0.2)  # the seat's top
    # a keyframe's point on the stool, (0, 0, 0.4) in its frame as the task gives it, is on that top
    assert data.xpos[m.body("stool").id][2] + 0.4 == pytest.approx(0.2)
    tilted = _compiled(build_scene(SceneRef(environment="bench", params={"tilt": 15})))
    zaxis = tilted.body_quat[tilted.body("bench").id]
    assert 2 * math.degrees(math.acos(zaxis[0])) == pytest.approx(15, abs=1e-6)
    with pytest.raises(InvalidInput, match="scene.params.colour"):
        build_scene(SceneRef(environment="bench", params={"colour": 1}))


@pytest.mark.parametrize("env", ENVS)
def test_default_pose_settles_without_blowing_up(env):
    """Each environment's default initial pose is physically sensible: 1 s passive stays finite
    and the character stays above the floor and roughly where it started."""
    scene = build_scene(SceneRef(environment=env))
    m = _compiled(scene)
    d = mujoco.MjData(m)
    d.qpos[:] = mjcf.initial_qpos(scene, m)
    mujoco.mj_step(m, d, nstep=200)
    assert np.all(np.isfinite(d.qpos))
    root = d.qpos[m.jnt_qposadr[m.joint("root").id]:][:3]
    assert root[2] > 0.15
    assert np.linalg.norm(root[:2] - scene.initial_pose.root_pos[:2]) < 0.6


def test_mjcf_import_of_users_file(tmp_path):
    """A user's MJCF with defaults classes, fromto, degrees and a free prop is understood."""
    path = tmp_path / "lamp.xml"
    path.write_text("""<mujoco><compiler angle="degree"/>
      <default><joint damping="0.5"/><geom density="500"/></default>
      <worldbody><geom name="ground" type="plane" size="5 5 .1"/>
        <body name="base" pos="0 0 0.1"><freejoint/><geom type="cylinder" size=".1 .02"/>
          <body name="arm" pos="0 0 .02"><joint name="tilt" axis="0 1 0" range="-45 45"/>
            <geom type="capsule" fromto="0 0 0 0 0 .3" size=".015"/>
            <body name="shade" pos="0 0 .3"><joint name="nod" axis="0 1 0" range="-90 30"/>
              <geom type="sphere" size=".05"/></body></body></body>
        <body name="ball" pos="1 0 .1"><freejoint/><geom type="sphere" size=".1" mass="2"/></body>
      </worldbody>
      <actuator><motor joint="tilt" gear="5"/><position joint="nod" kp="20" kv="1"/></actuator></mujoco>""")
    scene = mjcf_read.load_mjcf(path)
    assert [b.name for b in scene.character.bodies] == ["base", "arm", "shade"]
    tilt = scene.character.bodies[1].joints[0]
    assert tilt.range == pytest.approx([-math.pi / 4, math.pi / 4])
    assert tilt.damping == pytest.approx(0.5)
    assert scene.environment.bodies[0].kind == "free" and scene.environment.bodies[0].geoms[0].mass == 2
    assert {a.joint for a in scene.character.actuators} == {"tilt", "nod"}
    m_user = mujoco.MjModel.from_xml_path(str(path))
    m_ours = _compiled(scene)
    for name in ("base", "arm", "shade", "ball"):
        assert m_ours.body_mass[m_ours.body(name).id] == pytest.approx(m_user.body_mass[m_user.body(name).id])


def test_mesh_and_free_bodies_round_trip(tmp_path):
    """A convex mesh prop that can be pushed around survives SceneDesc → MJCF → SceneDesc."""
    from solver.formats.scene import EnvBody, Geom
    scene = build_scene(SceneRef(environment="floor"))
    wedge = [[0, 0, 0], [0.4, 0, 0], [0, 0.3, 0], [0, 0, 0.2], [0.4, 0.3, 0], [0, 0.3, 0.2]]
    scene.environment.bodies.append(EnvBody(name="wedge", kind="free", pos=[1.0, 0.0, 0.0], geoms=[
        Geom(name="wedge_hull", type="mesh", size=[], vertices=wedge, density=300.0)]))
    path = tmp_path / "wedge.xml"
    path.write_text(mjcf.scene_to_xml(scene))
    back = mjcf_read.load_mjcf(path)
    prop = next(b for b in back.environment.bodies if b.name == "wedge")
    assert prop.kind == "free" and prop.geoms[0].type == "mesh" and len(prop.geoms[0].vertices) == 6
    m1, m2 = _compiled(scene), _compiled(back)
    volume = 0.4 * 0.3 * 0.2 / 2  # a triangular prism
    assert m1.body_mass[m1.body("wedge").id] == pytest.approx(300 * volume, rel=1e-6)
    assert m2.body_mass[m2.body("wedge").id] == pytest.approx(300 * volume, rel=1e-5)
    np.testing.assert_allclose(m2.body_inertia[m2.body("wedge").id], m1.body_inertia[m1.body("wedge").id], rtol=1e-4)


def test_mesh_needs_enough_vertices():
    data = schema.to_dict(build_scene(SceneRef(environment="floor")))
    data["environment"]["bodies"] = [{"name": "m", "geoms": [{"name": "g", "type": "mesh", "vertices": [[0, 0, 0]]}]}]
    with pytest.raises(InvalidInput, match=r"environment.bodies\[0\].geoms\[0\].vertices: a mesh needs at least 4"):
        scene_from_dict(data)


def test_table3_variants_move_world_heights_with_the_furniture():
    """tools/make_table3_tasks.py: a torso target over the table stays as high above the top (MuJoCo's
    top face, default table against a 0.35 m one); points on the floor and on the table stay as given."""
    import importlib.util
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("make_table3_tasks", root / "tools" / "make_table3_tasks.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    task = json.loads((root / "scenes" / "tasks" / "table_climb.json").read_text())
    low = tool.variant(task, 0.7, 0.35)

    def top(params):
        m = _compiled(build_scene(SceneRef(environment="table", params=params)))
        data = mujoco.MjData(m)
        mujoco.mj_kinematics(m, data)
        g = m.geom("top").id
        return data.geom_xpos[g][2] + np.abs(data.geom_xmat[g].reshape(3, 3)[2]) @ m.geom_size[g]

    moved = 0
    for kf, kf_low in zip(task["keyframes"], low["keyframes"]):
        for pair, pair_low in zip(kf["pairs"], kf_low["pairs"]):
            if pair["body2"] == "world" and pair["pos2"][2] > 0.05:
                assert pair_low["pos2"][2] - top({"height": 0.35}) == pytest.approx(pair["pos2"][2] - top({}), abs=1e-6)
                moved += 1
            else:
                assert pair_low["pos2"] == pair["pos2"]
    assert moved >= 9 and low["scene"]["params"] == {"height": 0.35}
