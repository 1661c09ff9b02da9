"""Body roles: which body of a character is its pelvis, chest, head, feet, hands … inferred for the
characters users bring — dm_control's humanoid and CMU humanoid as they ship in the `dm-control` 1.0.50
wheel (`tests/data/dm_control`, Apache 2.0), a Mixamo-named one, one proportioned from a Rigify rig, one
whose names say nothing — and what is off for a role no body plays said by name, never dropped silently.
MJCF characters as they come: ellipsoids, condim, pivots, a walker attached to the world."""
import copy
import json
from pathlib import Path

import mujoco
import numpy as np
import pytest
from test_cli import run_cli

from solver.builders.character_files import load_character_mjcf as _load
from solver.builders.characters import humanoid
from solver.builders.mjcf import scene_to_xml
from solver.builders.roles import missing_terms, roles_of
from solver.core import schema
from solver.core.errors import InvalidInput
from solver.formats.roles import ROLES
from solver.formats.scene import SceneDesc

ROOT = Path(__file__).resolve().parents[1]
DM = ROOT / "tests" / "data" / "dm_control"
LIMBS = ("thigh", "shin", "foot", "upper_arm", "lower_arm", "hand")


def _renamed(names: dict[str, str]):
    """The default humanoid with its bodies (and what names them) renamed by `names`."""
    ch = copy.deepcopy(humanoid())
    for b in ch.bodies:
        b.name = names.get(b.name, b.name)
        b.parent = names.get(b.parent, b.parent)
    ch.exclude_contacts = [[names.get(a, a), names.get(b, b)] for a, b in ch.exclude_contacts]
    return ch


def test_the_default_and_rig_proportioned_humanoids_play_every_role_with_their_own_names():
    from test_proportions import _default_points  # the default's own joints as a rig's bone heads and tails

    from solver.builders.proportions import proportioned_humanoid
    for ch in (humanoid(), proportioned_humanoid(_default_points(), name="from a rig")):
        roles = roles_of(ch)
        assert roles == {r: r for r in ROLES}
        assert missing_terms(roles) == []


@pytest.mark.parametrize("file, expected", [
    ("humanoid.xml", {"pelvis": "pelvis", "torso": "torso", "head": "head", "foot_left": "left_foot",
                      "shin_right": "right_shin", "upper_arm_left": "left_upper_arm", "hand_right": "right_hand"}),
    ("humanoid_CMU.xml", {"pelvis": "root", "torso": "thorax", "head": "head", "thigh_left": "lfemur",
                          "shin_left": "ltibia", "foot_right": "rfoot", "upper_arm_right": "rhumerus",
                          "lower_arm_left": "lradius", "hand_left": "lhand"}),
])
def test_dm_control_characters_play_every_role_by_their_names(file, expected):
    notes = []
    ch = load_mjcf(DM / file, notes).character
    assert set(ch.roles) == set(ROLES) and expected.items() <= ch.roles.items()  # stored with the character
    assert notes[0].startswith("roles inferred from the body names and tree: pelvis = ")
    assert not [n for n in notes if "no body plays" in n]


def test_joints_whose_names_say_no_side_are_put_in_body_parts_by_the_roles():
    """The CMU humanoid's joints (`lfemurrx`, `rthumbrz`) name no side in words: every one was in the
    core, and the partwise planner had no parts to recombine. Below a limb's role they are in its part,
    the spine and the clavicles stay in the core, and the import says so; dm_control's humanoid, whose
    names say it, keeps its own."""
    notes = []
    ch = load_mjcf(DM / "humanoid_CMU.xml", notes).character
    group = {j.name: j.group for b in ch.bodies for j in b.joints}
    assert (group["lfemurrx"], group["rtoesrx"], group["rthumbrz"], group["lhumerusry"]) == \
        ("left_leg", "right_leg", "right_arm", "left_arm")
    assert group["lowerbackrx"] == group["lclaviclerz"] == group["headrx"] == "core"
    assert any(n.startswith("body parts for partwise planning from the roles") and "7 joint(s) in left leg" in n
               for n in notes)
    notes = []
    dm = load_mjcf(DM / "humanoid.xml", notes).character
    assert {j.name: j.group for b in dm.bodies for j in b.joints}["left_knee"] == "left_leg"
    assert not [n for n in notes if n.startswith("body parts")]


def test_mixamo_names_and_names_that_say_nothing():
    mixamo = {"torso": "Spine2", "waist_lower": "Spine", "pelvis": "Hips", "head": "Head"}
    for side, s in (("left", "Left"), ("right", "Right")):
        mixamo.update({f"thigh_{side}": f"{s}UpLeg", f"shin_{side}": f"{s}Leg", f"foot_{side}": f"{s}Foot",
                       f"upper_arm_{side}": f"{s}Arm", f"lower_arm_{side}": f"{s}ForeArm", f"hand_{side}": f"{s}Hand"})
    assert roles_of(_renamed(mixamo)) == {r: mixamo[r] for r in ROLES}
    nameless = {b.name: f"b{k}" for k, b in enumerate(humanoid().bodies)}
    roles = roles_of(_renamed(nameless))  # the kinematic tree: legs reach lowest, left is +y
    expected = {r: nameless[r] for r in ROLES}
    assert roles == expected, {r: (roles.get(r), expected[r]) for r in ROLES if roles.get(r) != expected[r]}


def test_a_role_no_body_plays_is_said_with_the_terms_it_turns_off(tmp_path):
    """The planar walker has one trunk body (the pelvis) and no head: the import, `validate` and a run's
    start event name the roles and the terms that are off."""
    notes = []
    scene = load_mjcf(DM / "walker.xml", notes)
    assert "head" not in scene.character.roles and scene.character.roles["foot_left"] == "left_foot"
    said = [n for n in notes if "no body plays the role 'head'" in n]
    assert said and "Head Height" in said[0] and "fall watch" in said[0], notes
    task = {"schema_version": 1, "name": "walker stands", "method": "simulate", "settings": {"duration": 0.02},
            "scene": {"desc": json.loads(json.dumps(__import__("solver.core.schema", fromlist=["x"]).to_dict(scene)))}}
    path = tmp_path / "walker.json"
    path.write_text(json.dumps(task))
    rc, out, err = run_cli("validate", path)
    assert rc == 0, err
    assert "note: no body plays the role 'torso': the term Torso Up" in out and "role 'head'" in out, out
    rc, out, err = run_cli("run", path, "--out", tmp_path / "out", "--jsonl", "--workers", "0")
    assert rc == 0, err
    start = json.loads(out.splitlines()[0])
    assert start["event"] == "start" and any("role 'head'" in n for n in start["notes"])


def test_a_walker_attached_to_the_world_gets_a_free_joint():
    notes = []
    scene = load_mjcf(DM / "walker.xml", notes)
    assert notes[0] == "'torso' was attached to the world by rootz, rootx, rooty: it gets a free joint, so it " \
                       "stands on its own"
    model = mujoco.MjModel.from_xml_string(scene_to_xml(scene))
    assert model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE and model.body(model.jnt_bodyid[0]).name == "torso"
    assert {model.joint(j).name for j in range(1, model.njnt)} == {
        f"{s}_{j}" for s in ("left", "right") for j in ("hip", "knee", "ankle")}
    original = mujoco.MjModel.from_xml_path(str(DM / "walker.xml"))
    assert model.body("torso").pos == pytest.approx(original.body("torso").pos)


@pytest.mark.parametrize("file", ["humanoid_CMU.xml", "humanoid.xml"])
def test_mjcf_characters_round_trip_with_their_masses_shapes_contacts_and_pivots(file):
    """MJCF → scene → MJCF: every body's mass and inertia as MuJoCo computes them from the original
    (6 significant digits, what MJCF text holds), the CMU hands' ellipsoids kept, dm_control's condim 1
    kept, the ankles turning about their own two pivots, the contacts' and limits' softness (solref,
    solimp: the CMU humanoid's and its floor's are not PhysKey's), through the scene file too, and the
    roles in the MJCF's custom text."""
    original = mujoco.MjModel.from_xml_path(str(DM / file))
    scene = schema.from_dict(SceneDesc, json.loads(schema.dumps(load_mjcf(DM / file))), "scene")
    xml = scene_to_xml(scene)
    model = mujoco.MjModel.from_xml_string(xml)
    for b in scene.character.bodies:
        np.testing.assert_allclose(model.body(b.name).mass, original.body(b.name).mass, rtol=1e-5, err_msg=b.name)
        np.testing.assert_allclose(model.body(b.name).inertia, original.body(b.name).inertia, rtol=1e-4, atol=1e-9,
                                   err_msg=b.name)
    for g in (g.name for b in scene.character.bodies for g in b.geoms):
        k, o = model.geom(g).id, original.geom(g).id
        assert model.geom_type[k] == original.geom_type[o] and model.geom_condim[k] == original.geom_condim[o], g
    for g in [g.name for b in scene.character.bodies for g in b.geoms] + ["floor"]:
        k, o = model.geom(g).id, original.geom(g).id
        np.testing.assert_allclose(model.geom_solref[k], original.geom_solref[o], err_msg=g)
        np.testing.assert_allclose(model.geom_solimp[k], original.geom_solimp[o], err_msg=g)
    for j in (j.name for b in scene.character.bodies for j in b.joints):
        np.testing.assert_allclose(model.joint(j).solref, original.joint(j).solref, err_msg=j)
        np.testing.assert_allclose(model.joint(j).solimp, original.joint(j).solimp, err_msg=j)
    if file == "humanoid_CMU.xml":
        assert model.geom_solimp[model.geom("lhand").id][0] == 0.95  # dm_control's, not PhysKey's 0.9
        assert model.geom_type[model.geom("lhand").id] == mujoco.mjtGeom.mjGEOM_ELLIPSOID
    else:
        assert set(model.geom_condim[[model.geom(g.name).id for b in scene.character.bodies for g in b.geoms]]) == {1}
        for j in ("right_ankle_x", "right_ankle_y"):
            np.testing.assert_allclose(model.joint(j).pos, original.joint(j).pos, atol=1e-9)
    again = load_mjcf_text(xml)
    assert again.character.roles == scene.character.roles


def test_softness_a_file_gives_is_kept_and_a_wrong_one_is_refused(tmp_path):
    """A shape's, a limit's and the floor's own softness survive the import; a scene whose solimp is
    out of MuJoCo's range is refused with the field named."""
    xml = ('<mujoco><worldbody><geom name="ground" type="plane" size="5 5 .1" solref="0.01 1"/>'
           '<body name="a" pos="0 0 1"><freejoint/><geom name="ga" size=".1" solimp="0.8 0.9 0.01"/>'
           '<body name="b"><joint name="j" range="-1 1" solreflimit="0.03 1"/><geom size=".1" pos="0 0 .2"/>'
           '</body></body></worldbody></mujoco>')
    scene = load_mjcf_text(xml)
    assert scene.environment.floor_solref == [0.01, 1.0]
    assert scene.character.bodies[0].geoms[0].solimp == pytest.approx([0.8, 0.9, 0.01, 0.5, 2.0])
    assert scene.character.bodies[0].geoms[0].solref == [0.02, 1.0]  # MuJoCo's default: what the file means
    assert scene.character.bodies[1].joints[0].solref_limit == [0.03, 1.0]
    data = json.loads(schema.dumps(scene))
    data["character"]["bodies"][0]["geoms"][0]["solimp"] = [0.8, 1.5, 0.01, 0.5, 2.0]
    with pytest.raises(InvalidInput, match=r"scene.character.bodies\[0\].geoms\[0\].solimp: must be \[dmin"):
        schema.from_dict(SceneDesc, data, "scene")


def load_mjcf_text(xml: str):
    from solver.builders.mjcf_read import spec_to_scene
    return spec_to_scene(mujoco.MjSpec.from_string(xml))


def load_mjcf(path, notes=None):
    return _load(path, [] if notes is None else notes)


def test_a_roles_text_naming_no_body_is_refused():
    xml = scene_to_xml(load_mjcf(DM / "humanoid.xml")).replace("head=head", "head=skull")
    with pytest.raises(InvalidInput, match=r"'physkey_roles'.roles.head: the character has no body 'skull'"):
        load_mjcf_text(xml)


def test_a_preset_runs_on_a_character_brought_from_a_file(tmp_path):
    """`--character FILE`: the reach preset's pairs name roles (`hand_right`), put on the dm_control
    humanoid's `right_hand` (the model has its bodies, the task its pairs); a character that plays no hand
    exits 2 naming the role."""
    reach = Path(__file__).resolve().parents[1] / "scenes" / "tasks" / "reach_hand_targets.json"
    rc, out, err = run_cli("validate", reach, "--character", DM / "humanoid.xml")
    assert rc == 0, err
    assert "note: the character of 'humanoid.xml' (16 bodies) replaces the task's" in out
    from solver.run.cli import _prepare
    _, prepared = _prepare(str(reach), character=str(DM / "humanoid.xml"))
    pairs = [(p.body1, p.pos1) for kf in prepared.keyframes for p in kf.pairs]
    assert {b for b, _ in pairs} == {"right_hand", "left_hand"} and prepared.built.model.body("right_hand")
    rc, out, err = run_cli("validate", reach, "--character", DM / "walker.xml")
    assert rc == 2 and "keyframes[0].pairs[0].body1: no body 'hand_right' in the character or the scene's " \
                       "objects, and no body of the character plays the role 'hand_right'" in err, err


def test_a_character_brought_to_a_preset_faces_where_the_presets_character_faces():
    """The CMU humanoid stands facing -y in its file (its left hip at +x): run with a preset it is turned
    about the vertical to face as the preset's character does (+x, left at +y), at the preset's place,
    at its own height."""
    from solver.builders.character_files import character_file, placed_like
    from solver.builders.proportions import rest_frames
    from solver.core import rotations
    from solver.formats.scene import Pose
    character, own = character_file(DM / "humanoid_CMU.xml", [])
    frames, roles = rest_frames(character), character.roles
    hips = frames[roles["thigh_left"]][0] - frames[roles["thigh_right"]][0]
    assert hips[0] > 0.15 and abs(hips[1]) < 1e-6  # as it comes: its left at +x
    for yaw in (0.0, np.pi / 2):
        preset = Pose(root_pos=[0.5, 0.2, 1.0], root_quat=[np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
        pose = placed_like(character, own, preset)
        turn = rotations.to_matrix(pose.root_quat) @ rotations.to_matrix(character.bodies[0].quat).T
        left = turn @ hips
        np.testing.assert_allclose(left / np.linalg.norm(left), [-np.sin(yaw), np.cos(yaw), 0.0], atol=1e-9)
        assert pose.root_pos == [0.5, 0.2, pytest.approx(own.root_pos[2])]


def test_pair_points_are_carried_onto_a_brought_characters_bodies():
    """The stand → sit → stand preset's points (the seat under the pelvis, the soles, the chest), written in
    the default humanoid's bone frames, on dm_control's humanoid: the same offset from the joint each body
    turns about (the chest's from the shoulders), as both stand at rest facing +x, scaled by height — the
    seat point under dm's butt capsule (its frame is world-aligned, its origin at the butt), not 19 cm to its
    left; on the default humanoid and one proportioned from a rig, the pairs as written."""
    from solver.builders.character_files import character_file
    from solver.builders.proportions import rest_frames
    from solver.builders.roles import by_role
    from solver.formats.contact_keyframes import parse_keyframes
    preset = json.loads((ROOT / "scenes/tasks/armchair_stand_sit_stand.json").read_text())
    keyframes = parse_keyframes(preset["keyframes"][:1])
    assert by_role(keyframes, humanoid(), {"chair"})[0].pairs == keyframes[0].pairs
    dm, _ = character_file(DM / "humanoid.xml", [])
    moved = {p.body1: np.array(p.pos1) for p in by_role(keyframes, dm, {"chair"})[0].pairs}
    assert set(moved) == {"pelvis", "right_foot", "left_foot", "torso"}
    ours, theirs = rest_frames(humanoid()), rest_frames(dm)
    def pivot_of(character, frames, body):
        b = next(b for b in character.bodies if b.name == body)
        return frames[body][0] + frames[body][1] @ (np.array(b.joints[0].pos) if b.joints else np.zeros(3))

    def hung_height(character, frames, r):  # head above the lower foot, thigh and shin hung as the default's
        lowest = []
        for side in ("left", "right"):
            hip, knee, ankle = (pivot_of(character, frames, r[f"{p}_{side}"]) for p in ("thigh", "shin", "foot"))
            d_hip, d_knee, d_ankle = (pivot_of(humanoid(), ours, f"{p}_{side}") for p in ("thigh", "shin", "foot"))
            drop = (np.linalg.norm(knee - hip) * (d_hip - d_knee)[2] / np.linalg.norm(d_hip - d_knee)
                    + np.linalg.norm(ankle - knee) * (d_knee - d_ankle)[2] / np.linalg.norm(d_knee - d_ankle))
            lowest.append(frames[r[f"foot_{side}"]][0][2] - (drop - (hip[2] - ankle[2])))
        return frames[r["head"]][0][2] - min(lowest)

    scale = hung_height(dm, theirs, dm.roles) / hung_height(humanoid(), ours, {k: k for k in ROLES})

    def hang(side):  # the smallest turn taking dm's shin (knee to ankle) along the default humanoid's
        d = [pivot_of(c, f, r[f"foot_{side}"]) - pivot_of(c, f, r[f"shin_{side}"])
             for c, f, r in ((dm, theirs, dm.roles), (humanoid(), ours, {k: k for k in ROLES}))]
        a, b = (v / np.linalg.norm(v) for v in d)
        axis = np.cross(a, b)
        k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        return np.eye(3) + k + k @ k / (1 + a @ b)  # Rodrigues' formula for the turn from a onto b

    def shoulders(character, frames, r):  # the chest's points are placed from the shoulders, in its frame
        middle = np.mean([pivot_of(character, frames, r[f"upper_arm_{s}"]) for s in ("left", "right")], axis=0)
        pos, rot = frames[r["torso"]]
        return rot.T @ (middle - pos)

    for pair in keyframes[0].pairs:
        body = dm.roles[pair.body1]
        pivot = next((np.array(b.joints[0].pos) for b in dm.bodies if b.name == body and b.joints), np.zeros(3))
        ours_pivot = np.zeros(3)
        if pair.body1 == "torso":
            pivot = shoulders(dm, theirs, dm.roles)
            ours_pivot = shoulders(humanoid(), ours, {k: k for k in ROLES})
        rest = theirs[body][1]
        if pair.body1.startswith("foot_"):  # the feet hang with the shins (`roles.standing`)
            rest = hang(pair.body1.split("_")[1]) @ rest
        np.testing.assert_allclose(rest @ (moved[body] - pivot),
                                   scale * (ours[pair.body1][1] @ (np.array(pair.pos1) - ours_pivot)), atol=1e-9)
    butt = mujoco.MjModel.from_xml_path(str(DM / "humanoid.xml")).geom("butt")
    assert abs(moved["pelvis"][1]) < 0.02 and moved["pelvis"][2] < -butt.size[0]  # under the butt, mid-seat


def test_a_brought_character_starts_in_the_presets_pose():
    """Stand → sit → stand starts seated in the armchair: dm_control's humanoid brought to it is fitted
    into that pose by its roles (pose_fit) and rested on the chair — seated where the default humanoid
    sits (pelvis within 5 cm, scaled by height), its feet on the floor, nothing in the chair or the floor
    deeper than resting (MuJoCo's contacts at the start)."""
    from solver.builders.rest import REST_TOLERANCE_M
    from solver.formats.task import build_scene, load_task
    from solver.physics.character_start import with_character
    from solver.physics.model import build_model
    task = load_task(Path(__file__).resolve().parents[1] / "scenes/tasks/armchair_stand_sit_stand.json")
    default = build_model(build_scene(task.scene))
    task = with_character(task, DM / "humanoid.xml", [])
    built = build_model(build_scene(task.scene))
    where = {}
    for b, model in (("default", default), ("dm", built)):
        data = mujoco.MjData(model.model)
        data.qpos[:] = model.initial_qpos()
        mujoco.mj_forward(model.model, data)
        roles = model.roles
        where[b] = {r: data.xpos[model.model.body(roles[r]).id].copy() for r in ("pelvis", "foot_left", "foot_right")}
        if b == "dm":
            assert min([c.dist for c in data.contact[:data.ncon]] + [0.0]) > -REST_TOLERANCE_M - 1e-4
    for r in ("pelvis",):
        assert np.linalg.norm(where["dm"][r][:2] - where["default"][r][:2]) < 0.05, (r, where)
    assert max(where["dm"][f][2] for f in ("foot_left", "foot_right")) < 0.1  # on the floor, not dangling


@pytest.mark.parametrize("task_name", ["armchair_stand_sit_stand", "reach_hand_targets"])
def test_the_cmu_humanoid_starts_with_its_spine_off_its_limits(task_name):
    """The CMU humanoid's rest spreads its legs 20° and holds its arms out; brought to a preset, its three
    spine joints between the pelvis and the chest (no role pins them) were fitted zig-zag from limit to
    limit, and seated it started 7.5 cm into the chair. Now every joint no role pins is off its limits and
    the seated start is at most 1.2 cm deep (what `rest_pose` leaves of it)."""
    from solver.formats.task import build_scene, load_task
    from solver.physics.character_start import with_character
    from solver.physics.model import build_model
    task = load_task(ROOT / f"scenes/tasks/{task_name}.json")
    built = build_model(build_scene(with_character(task, DM / "humanoid_CMU.xml", []).scene))
    m, data = built.model, mujoco.MjData(built.model)
    data.qpos[:] = built.initial_qpos()
    mujoco.mj_forward(m, data)
    assert min([c.dist for c in data.contact[:data.ncon]] + [0.0]) > -0.012
    pinned = {m.body(b).id for b in built.roles.values()}
    loose = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE and m.jnt_bodyid[j] not in pinned]
    assert {"lowerbackrx", "upperbackrx"} <= {m.joint(j).name for j in loose}
    for j in loose:
        lo, hi = m.jnt_range[j]
        if not lo + 0.05 < 0.0 < hi - 0.05:  # a joint whose rest is at a limit (a clavicle, a wrist) may stay there
            continue
        assert lo + 0.05 < data.qpos[m.jnt_qposadr[j]] < hi - 0.05, (m.joint(j).name, data.qpos[m.jnt_qposadr[j]])


def test_the_cmu_humanoid_starts_the_reach_upright_and_reaches_with_its_palm():
    """The CMU humanoid's height was measured on its spread rest legs, 5 cm short: every point of the reach's
    start pose was scaled 4% low, and the fit met the low head by leaning the chest 21° forward on a pelvis
    tipped 10° back. Standing as tall as its legs held together make it, its pelvis and chest start within
    8° of upright. Its hand's origin is its wrist (the default humanoid's and dm_control's hand is a ball
    round its origin): the pairs on a hand go on the centre of the hand's shape, the CMU's palm."""
    import xml.etree.ElementTree as ET

    from solver.builders.character_files import character_file
    from solver.builders.roles import by_role
    from solver.formats.contact_keyframes import parse_keyframes
    from solver.formats.task import build_scene, load_task
    from solver.physics.character_start import with_character
    from solver.physics.model import build_model
    task = load_task(ROOT / "scenes/tasks/reach_hand_targets.json")
    built = build_model(build_scene(with_character(task, DM / "humanoid_CMU.xml", []).scene))
    m, data, rest = built.model, mujoco.MjData(built.model), mujoco.MjData(built.model)
    data.qpos[:] = built.initial_qpos()
    mujoco.mj_kinematics(m, data)
    mujoco.mj_kinematics(m, rest)
    for role in ("pelvis", "torso"):
        b = m.body(built.roles[role]).id
        up = data.xmat[b].reshape(3, 3) @ rest.xmat[b].reshape(3, 3).T @ [0.0, 0.0, 1.0]
        assert np.degrees(np.arccos(up[2])) < 8.0, role
    cmu, _ = character_file(DM / "humanoid_CMU.xml", [])
    palm = {g.get("name"): [float(v) for v in g.get("pos").split()]
            for g in ET.parse(DM / "humanoid_CMU.xml").iter("geom") if g.get("name") in ("lhand", "rhand")}
    for pair in by_role(parse_keyframes(task.keyframes[:1]), cmu, set())[0].pairs:
        np.testing.assert_allclose(pair.pos1, palm[pair.body1], atol=1e-9)


def test_the_cmu_humanoids_chest_point_is_placed_from_its_shoulders():
    """The CMU humanoid's thorax starts 19 cm below its shoulders, the default humanoid's torso 6 cm: the
    preset's back point (the armchair's backrest under the shoulder blades), carried from the body's joint,
    sat 22 cm below the CMU's shoulders — on its mid-back — where the default's sits 9 cm below its own.
    Carried from the shoulders, it is as far below them as the default's, times the heights' ratio."""
    from solver.builders.character_files import character_file
    from solver.builders.roles import by_role, standing
    from solver.formats.contact_keyframes import parse_keyframes
    from solver.formats.task import build_scene, load_task
    from solver.physics.character_start import with_character
    from solver.physics.model import build_model
    preset = json.loads((ROOT / "scenes/tasks/armchair_stand_sit_stand.json").read_text())
    armchair0 = parse_keyframes([preset["keyframes"][1]])
    cmu, _ = character_file(DM / "humanoid_CMU.xml", [])
    scale = standing(cmu, cmu.roles)[1] / standing(humanoid(), roles_of(humanoid()))[1]
    below = {}
    for name, keyframes in (("default", armchair0), ("cmu", by_role(armchair0, cmu, {"chair"}))):
        task = load_task(ROOT / "scenes/tasks/armchair_stand_sit_stand.json")
        if name == "cmu":
            task = with_character(task, DM / "humanoid_CMU.xml", [])
        built = build_model(build_scene(task.scene))
        m, data = built.model, mujoco.MjData(built.model)
        mujoco.mj_kinematics(m, data)  # at rest: standing, its joints at zero
        roles = built.roles
        pair = next(p for p in keyframes[0].pairs if p.body1 == roles["torso"])
        chest = m.body(roles["torso"]).id
        point = data.xpos[chest] + data.xmat[chest].reshape(3, 3) @ np.array(pair.pos1)
        arms = [m.body(roles[f"upper_arm_{s}"]).id for s in ("left", "right")]
        shoulders = np.mean([data.xanchor[m.body_jntadr[b]] for b in arms], axis=0)
        below[name] = shoulders[2] - point[2]
    assert 0.08 < below["default"] < 0.1
    assert below["cmu"] == pytest.approx(scale * below["default"], abs=0.005)


@pytest.mark.parametrize("file", ["humanoid_CMU.xml", "humanoid.xml"])
def test_facing_is_read_the_way_the_character_faces_at_rest(file):
    """The CMU humanoid faces −y in its file; the Facing Dir term read every character's forward as +x at
    rest, so the CMU turned to face a target was charged as if it looked 90° away. Brought to a preset
    (turned to face +x), a target straight ahead of its chest costs nothing, one to its side costs what a
    90° miss costs the default humanoid."""
    from solver.formats.contact_keyframes import ContactKeyframe, ContactPair
    from solver.formats.objective_terms import TERM_NAMES
    from solver.formats.task import build_scene, load_task
    from solver.mpc.objectives.contact import Objective
    from solver.physics.character_start import with_character
    from solver.physics.model import build_model
    costs = {}
    for name in ("default", file):
        task = load_task(ROOT / "scenes/tasks/reach_hand_targets.json")
        if name != "default":
            task = with_character(task, DM / file, [])
        built = build_model(build_scene(task.scene))
        m, data = built.model, mujoco.MjData(built.model)
        data.qpos[:] = built.initial_qpos()
        mujoco.mj_forward(m, data)
        objective = Objective(built, speed_weight=0.0)
        chest = built.roles["torso"]
        feat = {"pos": {b: np.broadcast_to(data.xpos[m.body(b).id], (1, 1, 3)) for b in objective.body_group},
                "quat": {b: np.broadcast_to(data.xquat[m.body(b).id], (1, 1, 4)) for b in objective.body_group},
                "com": np.zeros((1, 1, 3)), "comvel": np.zeros((1, 1, 3))}
        torso = data.xpos[m.body(chest).id]
        row = []
        for ahead in ([3.0, 0.0], [0.0, 3.0]):  # the preset's character faces +x
            kf = ContactKeyframe(pairs=[ContactPair(chest, [0, 0, 0])], facing_target=list(torso[:2] + ahead),
                                 weights={t: (1.0 if t == "Facing Dir" else 0.0) for t in TERM_NAMES})
            row.append(float(objective.evaluate(feat, np.zeros((1, 1, m.nv)), np.zeros((1, 1, m.nu)), kf).total[0]))
        costs[name] = row
    assert costs["default"][0] < 0.01 and costs["default"][1] > 0.5
    np.testing.assert_allclose(costs[file], costs["default"], atol=0.02)
