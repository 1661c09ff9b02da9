"""SceneDesc → MJCF (through mujoco.MjSpec, never string templates) and MJCF → SceneDesc.

The MJCF written here is deterministic (same SceneDesc → same bytes) and loads in MuJoCo's viewer.
Reading MJCF uses MuJoCo's own parser and compiler, so defaults classes, `fromto`, degrees and
Euler angles in users' files are resolved by MuJoCo, not re-implemented.
"""
from __future__ import annotations

import contextlib
import math
import os

import mujoco
import numpy as np

from ..core import rotations
from ..core.errors import InvalidInput
from ..formats.roles import MJCF_TEXT as MJCF_ROLES
from ..formats.roles import format_roles, parse_roles
from ..formats.scene import (
    GEOM_SIZE_COUNT,
    SCHEMA_VERSION,
    Actuator,
    Body,
    Character,
    EnvBody,
    Environment,
    Geom,
    Joint,
    Pose,
    SceneDesc,
    Site,
    Velocity,
)

_GEOM = {
    "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE,
    "box": mujoco.mjtGeom.mjGEOM_BOX,
    "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
    "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
    "ellipsoid": mujoco.mjtGeom.mjGEOM_ELLIPSOID,
    "mesh": mujoco.mjtGeom.mjGEOM_MESH,
}
_GEOM_NAME = {int(v): k for k, v in _GEOM.items()}
ROOT_JOINT = "root"
FREE, BALL, HINGE = (int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL),
                     int(mujoco.mjtJoint.mjJNT_HINGE))
# Contact softness of the character's geoms and joint limits, as in MuJoCo MPC's humanoid.
CHARACTER_SOLIMP = (0.9, 0.99, 0.003, 0.5, 2.0)
CHARACTER_SOLREF = (0.015, 1.0)
LIMIT_SOLIMP = (0.0, 0.99, 0.01, 0.5, 2.0)


# ------------------------------------------------------------------------------------------------
# SceneDesc → MjSpec
# ------------------------------------------------------------------------------------------------
# Objects the character handles: a hand is a sphere, and two point contacts let a squeezed box
# pivot and creep out (MuJoCo's default pyramidal, impratio-1 friction is soft). A contact patch's
# torsional friction (condim 4, this many metres) and elliptic cones with a harder friction
# (impratio, MuJoCo's advice for grasping) let two hands hold what their squeeze and friction can.
OBJECT_TORSION = 0.03
GRASP_IMPRATIO = 10.0


def _add_geom(spec: mujoco.MjSpec, body, g: Geom, character: bool, held: bool = False):
    geom = body.add_geom()
    geom.name = g.name
    geom.type = _GEOM[g.type]
    geom.pos = g.pos
    geom.quat = rotations.normalize(g.quat)
    if g.type == "mesh":
        mesh = spec.add_mesh()
        mesh.name = f"{g.name}_mesh"
        mesh.uservert = np.asarray(g.vertices, dtype=float).reshape(-1)
        geom.meshname = mesh.name
    else:
        size = np.zeros(3)
        size[: len(g.size)] = g.size
        geom.size = size
    if g.mass is not None:
        geom.mass = g.mass
    else:
        geom.density = g.density
    geom.friction = [g.friction, OBJECT_TORSION if held else 0.005, 0.0001]
    geom.condim = 4 if held else g.condim
    geom.rgba = g.rgba
    if character:
        geom.solimp = CHARACTER_SOLIMP
        geom.solref = CHARACTER_SOLREF
    return geom


def _add_site(body, s: Site):
    site = body.add_site()
    site.name = s.name
    site.pos = s.pos
    site.size = [0.02, 0.02, 0.02]
    site.group = 3


def _add_joint(body, j: Joint):
    joint = body.add_joint()
    joint.name = j.name
    joint.type = mujoco.mjtJoint.mjJNT_HINGE if j.type == "hinge" else mujoco.mjtJoint.mjJNT_BALL
    joint.axis = rotations.normalize(j.axis)
    joint.pos = j.pos
    joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
    joint.range = j.range
    joint.damping = [j.damping, 0.0, 0.0]
    joint.stiffness = [j.stiffness, 0.0, 0.0]
    joint.armature = j.armature
    joint.solimp_limit = LIMIT_SOLIMP


def _add_actuator(spec, a: Actuator, joint: Joint, actuation: str, target_margin: float = 0.0):
    act = spec.add_actuator()
    act.name = a.joint
    act.target = a.joint
    act.trntype = mujoco.mjtTrn.mjTRN_JOINT
    if actuation == "motor":
        act.set_to_motor()
        act.gear = [a.gear, 0, 0, 0, 0, 0]
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.ctrlrange = [-1.0, 1.0]
    else:
        act.set_to_position(kp=a.kp, kv=a.kv)
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.ctrlrange = [joint.range[0] - target_margin, joint.range[1] + target_margin]
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-a.gear, a.gear]


def env_body_quat(b: EnvBody) -> np.ndarray:
    """Orientation of an environment body in the world, its tilt included."""
    return rotations.mul(rotations.tilt(b.tilt_deg), rotations.normalize(b.quat))


@contextlib.contextmanager
def mujoco_errors(what: str = "scene"):
    """MuJoCo's own refusals while a spec is built or compiled (MjSpec checks names as they are set:
    a name clashing with one the builder adds, like an assist site) as InvalidInput."""
    try:
        yield
    except InvalidInput:
        raise
    except ValueError as e:
        lines = [line.strip() for line in str(e).strip().splitlines()] or [type(e).__name__]
        where = next((line for line in lines[1:] if line.startswith("Element")), None)  # names the element
        detail = f"{lines[0]} ({where})" if where else lines[0]
        raise InvalidInput(what, f"MuJoCo cannot compile it: {detail}") from None


def scene_to_spec(scene: SceneDesc, actuation: str = "motor", target_margin: float = 0.0) -> mujoco.MjSpec:
    """Build the MuJoCo model of `scene`. `actuation` is "motor" (torques, ctrl in [-1, 1]) or
    "position" (PD servos whose ctrl is the joint target in radians, within the joint's range widened
    by `target_margin` on each side: a target past the limit lets the servo push at full force all
    the way to it, as an explosive extension needs; the force range still caps the torque)."""
    if actuation not in ("motor", "position"):
        raise InvalidInput("actuation", f"must be motor or position, got {actuation!r}")
    with mujoco_errors():
        return _build_spec(scene, actuation, target_margin)


def _build_spec(scene: SceneDesc, actuation: str, target_margin: float = 0.0) -> mujoco.MjSpec:
    spec = mujoco.MjSpec()
    spec.modelname = scene.name
    spec.compiler.degree = False  # every angle in a SceneDesc is in radians
    spec.compiler.autolimits = True
    spec.option.timestep = scene.timestep
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.visual.global_.offwidth = 1280
    spec.visual.global_.offheight = 720
    world = spec.worldbody
    env = scene.environment
    if any(b.kind == "free" for b in env.bodies):
        spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
        spec.option.impratio = GRASP_IMPRATIO
    if env.floor:
        floor = world.add_geom()
        floor.name = "floor"
        floor.type = mujoco.mjtGeom.mjGEOM_PLANE
        floor.size = [50, 50, 0.05]
        floor.friction = [env.floor_friction, 0.005, 0.0001]
        floor.rgba = [0.35, 0.4, 0.45, 1]
    light = world.add_light()
    light.name = "sun"
    light.pos = [0, 0, 4]
    light.dir = [0, 0, -1]
    light.type = mujoco.mjtLightType.mjLIGHT_DIRECTIONAL
    for b in env.bodies:
        body = world.add_body()
        body.name = b.name
        body.pos = b.pos
        body.quat = env_body_quat(b)
        if b.kind == "free":
            joint = body.add_freejoint()
            joint.name = f"{b.name}_free"
        for g in b.geoms:
            _add_geom(spec, body, g, character=False, held=b.kind == "free")
        for s in b.sites:
            _add_site(body, s)
    joints = {j.name: j for j in scene.joints()}
    bodies = {}
    for i, b in enumerate(scene.character.bodies):
        parent = world if i == 0 else bodies[b.parent]
        body = parent.add_body()
        body.name = b.name
        body.pos = b.pos
        body.quat = rotations.normalize(b.quat)
        if i == 0:
            root = body.add_freejoint()
            root.name = ROOT_JOINT
        for j in b.joints:
            _add_joint(body, j)
        for g in b.geoms:
            _add_geom(spec, body, g, character=True)
        for s in b.sites:
            _add_site(body, s)
        bodies[b.name] = body
    for b1, b2 in scene.character.exclude_contacts:
        ex = spec.add_exclude()
        ex.bodyname1, ex.bodyname2 = b1, b2
    for a in scene.character.actuators:
        _add_actuator(spec, a, joints[a.joint], actuation, target_margin)
    if scene.character.roles:
        text = spec.add_text()
        text.name, text.data = MJCF_ROLES, format_roles(scene.character.roles)
    return spec


def compile_spec(spec: mujoco.MjSpec, what: str = "scene") -> mujoco.MjModel:
    """Compile, turning MuJoCo's compiler errors into InvalidInput."""
    with mujoco_errors(what):
        return spec.compile()


def model_from_xml(xml: str, what: str = "scene") -> mujoco.MjModel:
    """Load MJCF text written by `MjSpec.to_xml`, turning MuJoCo's errors into InvalidInput: the XML
    parser checks what the spec compiler let through (the fuzzer found a zero quaternion and a
    near-zero size that compiled from the spec but not from the text)."""
    with mujoco_errors(what):
        return mujoco.MjModel.from_xml_string(xml)


def initial_qpos(scene: SceneDesc, model: mujoco.MjModel) -> np.ndarray:
    """qpos of the scene's initial pose (environment free bodies at their authored placement)."""
    qpos = model.qpos0.copy()
    pose = scene.initial_pose
    adr = model.jnt_qposadr[model.joint(ROOT_JOINT).id]
    qpos[adr:adr + 3] = pose.root_pos
    qpos[adr + 3:adr + 7] = rotations.normalize(pose.root_quat)
    for name, angle in pose.joints.items():
        qpos[model.jnt_qposadr[model.joint(name).id]] = angle
    for name, quat in pose.ball_joints.items():
        a = model.jnt_qposadr[model.joint(name).id]
        qpos[a:a + 4] = rotations.normalize(quat)
    return qpos


def initial_qvel(scene: SceneDesc, model: mujoco.MjModel) -> np.ndarray:
    """qvel of the scene's initial velocity (zero where it says nothing, and when it has none)."""
    qvel = np.zeros(model.nv)
    vel = scene.initial_velocity
    if vel is None:
        return qvel
    adr = model.jnt_dofadr[model.joint(ROOT_JOINT).id]
    qvel[adr:adr + 3] = vel.root_linear
    qvel[adr + 3:adr + 6] = vel.root_angular
    for name, rate in vel.joints.items():
        qvel[model.jnt_dofadr[model.joint(name).id]] = rate
    return qvel


def scene_to_xml(scene: SceneDesc, actuation: str = "motor") -> str:
    """MJCF text of the scene with its initial pose (and velocity) as keyframe `initial` (6 significant
    digits, as MuJoCo writes it)."""
    spec = scene_to_spec(scene, actuation)
    model = compile_spec(spec)
    key = spec.add_key()
    key.name = "initial"
    key.qpos = initial_qpos(scene, model)
    key.qvel = initial_qvel(scene, model)
    compile_spec(spec)
    return spec.to_xml()


# ------------------------------------------------------------------------------------------------
# MJCF → SceneDesc
# ------------------------------------------------------------------------------------------------
def _name(model, objtype, i, prefix):
    name = mujoco.mj_id2name(model, objtype, i)
    return name if name else f"{prefix}{i}"


def guess_group(joint_name: str) -> str:
    """Body-part group from a joint or bone name (right/left + leg/arm words, or .R/.L)."""
    n = joint_name.lower()
    right = "right" in n or n.endswith(("_r", ".r")) or ".r." in n
    left = "left" in n or n.endswith(("_l", ".l")) or ".l." in n
    side = "right" if right else "left" if left else None
    limb = "leg" if any(k in n for k in ("hip", "knee", "ankle", "thigh", "shin", "foot", "leg", "toe")) else \
        "arm" if any(k in n for k in ("shoulder", "elbow", "wrist", "arm", "hand", "clavicle")) else None
    return f"{side}_{limb}" if side and limb else "core"


def _read_geom(model, spec_geoms, gid) -> Geom:
    gtype = _GEOM_NAME.get(int(model.geom_type[gid]))
    name = _name(model, mujoco.mjtObj.mjOBJ_GEOM, gid, "geom")
    if gtype is None:
        kind = mujoco.mjtGeom(int(model.geom_type[gid])).name.removeprefix("mjGEOM_").lower()
        raise InvalidInput(f"geom '{name}'", f"a {kind} geom is not supported here (use capsule, box, sphere, "
                           "cylinder, ellipsoid or mesh)")
    count = GEOM_SIZE_COUNT[gtype]
    sg = spec_geoms[gid]
    mass = None if (sg.mass is None or not np.isfinite(sg.mass) or sg.mass < 0) else float(sg.mass)
    geom = Geom(name=name, type=gtype, size=[float(x) for x in model.geom_size[gid][:count]],
                pos=[float(x) for x in model.geom_pos[gid]], quat=[float(x) for x in model.geom_quat[gid]],
                mass=mass, density=float(sg.density), friction=float(model.geom_friction[gid][0]),
                condim=int(model.geom_condim[gid]), rgba=[float(x) for x in model.geom_rgba[gid]])
    if gtype == "mesh":
        mid = int(model.geom_dataid[gid])
        a, n = model.mesh_vertadr[mid], model.mesh_vertnum[mid]
        geom.vertices = [[float(x) for x in v] for v in model.mesh_vert[a:a + n]]
    return geom


def _read_sites(model, bid) -> list[Site]:
    return [Site(name=_name(model, mujoco.mjtObj.mjOBJ_SITE, s, "site"), pos=[float(x) for x in model.site_pos[s]])
            for s in range(model.nsite) if model.site_bodyid[s] == bid]


def spec_to_scene(spec: mujoco.MjSpec, name: str = "imported", notes: list[str] | None = None) -> SceneDesc:
    """Read a parsed MJCF into a SceneDesc: the subtree of the first free-jointed body that has hinge
    or ball joints below it is the character — or, where none is free, of the first world child that
    has (a walker made to be attached to an arena), which gets a free joint in place of the joints that
    held it to the world; other world children are the environment. The character's roles are those
    the file names (`physkey_roles`). What was changed on the way is appended to `notes`, in words."""
    notes = [] if notes is None else notes
    model = compile_spec(spec, name)
    geoms_by_id = {g.id: g for g in spec.geoms}
    spec_geoms = [geoms_by_id[i] for i in range(model.ngeom)]
    children = {i: [c for c in range(1, model.nbody) if model.body_parentid[c] == i] for i in range(model.nbody)}

    def subtree(b):
        out = [b]
        for c in children[b]:
            out += subtree(c)
        return out

    def has_free(b):
        return any(model.jnt_type[j] == FREE for j in range(model.njnt)
                   if model.jnt_bodyid[j] == b)

    def jointed_below(b):
        below = subtree(b)[1:]
        return any(model.jnt_type[j] in (HINGE, BALL) for j in range(model.njnt) if model.jnt_bodyid[j] in below)

    root = next((b for b in children[0] if has_free(b) and len(subtree(b)) > 1), None)
    attached = []  # the joints that held a fixed-base character to the world, replaced by a free joint
    if root is None:
        root = next((b for b in children[0] if jointed_below(b)), None)
        if root is None:
            raise InvalidInput(name, "no character: no body with jointed children")
        attached = [j for j in range(model.njnt) if model.jnt_bodyid[j] == root]
        held = ", ".join(_name(model, mujoco.mjtObj.mjOBJ_JOINT, j, "joint") for j in attached) or "nothing (welded)"
        notes.append(f"'{_name(model, mujoco.mjtObj.mjOBJ_BODY, root, 'body')}' was attached to the world by "
                     f"{held}: it gets a free joint, so it stands on its own")
    bodies = []
    for b in subtree(root):
        bname = _name(model, mujoco.mjtObj.mjOBJ_BODY, b, "body")
        joints = []
        for j in range(model.njnt):
            if model.jnt_bodyid[j] != b or model.jnt_type[j] == FREE or j in attached:
                continue
            jname = _name(model, mujoco.mjtObj.mjOBJ_JOINT, j, "joint")
            jt = int(model.jnt_type[j])
            if jt not in (HINGE, BALL):
                raise InvalidInput(f"joint '{jname}'", "slide joints are not supported in a character")
            rng = [float(x) for x in model.jnt_range[j]] if model.jnt_limited[j] else [-math.pi, math.pi]
            joints.append(Joint(name=jname, type="hinge" if jt == HINGE else "ball",
                                axis=[float(x) for x in model.jnt_axis[j]], pos=[float(x) for x in model.jnt_pos[j]],
                                range=rng, group=guess_group(jname),
                                damping=float(model.dof_damping[model.jnt_dofadr[j]]),
                                stiffness=float(model.jnt_stiffness[j]),
                                armature=float(model.dof_armature[model.jnt_dofadr[j]])))
        geoms = [_read_geom(model, spec_geoms, g) for g in range(model.ngeom) if model.geom_bodyid[g] == b]
        kids = children[b]
        length = float(np.linalg.norm(model.body_pos[kids[0]])) if kids else 0.1
        bodies.append(Body(name=bname,
                           parent=None if b == root else _name(model, mujoco.mjtObj.mjOBJ_BODY, model.body_parentid[b],
                                                               "body"),
                           pos=[float(x) for x in model.body_pos[b]], quat=[float(x) for x in model.body_quat[b]],
                           length=max(length, 1e-3), joints=joints, geoms=geoms, sites=_read_sites(model, b)))
    actuators = []
    for a in range(model.nu):
        if int(model.actuator_trntype[a]) != int(mujoco.mjtTrn.mjTRN_JOINT):
            continue
        jname = _name(model, mujoco.mjtObj.mjOBJ_JOINT, model.actuator_trnid[a][0], "joint")
        is_position = int(model.actuator_biastype[a]) == int(mujoco.mjtBias.mjBIAS_AFFINE)
        if is_position:
            kp = float(model.actuator_gainprm[a][0])
            kv = float(-model.actuator_biasprm[a][2])
            gear = float(max(abs(model.actuator_forcerange[a][0]), abs(model.actuator_forcerange[a][1]))) \
                if model.actuator_forcelimited[a] else kp
        else:
            gear = float(abs(model.actuator_gear[a][0]) * max(abs(model.actuator_ctrlrange[a][0]),
                                                           abs(model.actuator_ctrlrange[a][1]), 1e-9)
                         if model.actuator_ctrllimited[a] else abs(model.actuator_gear[a][0]))
            kp, kv = 5.0 * gear, 0.5 * gear
        actuators.append(Actuator(joint=jname, gear=gear, kp=kp, kv=max(kv, 0.0)))
    excludes = [[e.bodyname1, e.bodyname2] for e in spec.excludes]
    char_names = {b.name for b in bodies}
    excludes = [p for p in excludes if p[0] in char_names and p[1] in char_names]
    env_bodies = []
    for b in children[0]:
        if b == root:
            continue
        env_bodies.append(_read_env_body(model, spec_geoms, b, subtree(b), has_free(b)))
    floor = None
    for g in range(model.ngeom):
        if model.geom_bodyid[g] == 0 and int(model.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_PLANE):
            floor = g
            break
    extra = [g for g in range(model.ngeom) if model.geom_bodyid[g] == 0 and g != floor]
    if extra:
        env_bodies.insert(0, EnvBody(name="world_geoms", geoms=[_read_geom(model, spec_geoms, g) for g in extra]))
    env = Environment(floor=floor is not None,
                      floor_friction=float(model.geom_friction[floor][0]) if floor is not None else 0.7,
                      bodies=env_bodies)
    qpos = model.key_qpos[0] if model.nkey else model.qpos0
    keyed_root = model.nkey and not attached
    pose = Pose(root_pos=[float(x) for x in (model.body_pos[root] if not keyed_root
                                             else qpos[model.jnt_qposadr[_root_joint(model, root)]:][:3])],
                root_quat=[float(x) for x in (model.body_quat[root] if not keyed_root
                                              else qpos[model.jnt_qposadr[_root_joint(model, root)] + 3:][:4])])
    if model.nkey:
        for j in range(model.njnt):
            if model.jnt_type[j] == HINGE and model.jnt_bodyid[j] in subtree(root):
                pose.joints[_name(model, mujoco.mjtObj.mjOBJ_JOINT, j, "joint")] = float(qpos[model.jnt_qposadr[j]])
    velocity = None
    if keyed_root and np.any(model.key_qvel[0]):
        qvel, dof = model.key_qvel[0], model.jnt_dofadr[_root_joint(model, root)]
        velocity = Velocity(root_linear=[float(x) for x in qvel[dof:dof + 3]],
                            root_angular=[float(x) for x in qvel[dof + 3:dof + 6]])
        for j in range(model.njnt):
            if model.jnt_type[j] == HINGE and model.jnt_bodyid[j] in subtree(root) and qvel[model.jnt_dofadr[j]]:
                velocity.joints[_name(model, mujoco.mjtObj.mjOBJ_JOINT, j, "joint")] = float(qvel[model.jnt_dofadr[j]])
    char = Character(name=_name(model, mujoco.mjtObj.mjOBJ_BODY, root, "character"), bodies=bodies,
                     actuators=actuators, exclude_contacts=excludes)
    _read_roles(spec, char, name)
    return SceneDesc(schema_version=SCHEMA_VERSION, name=name, character=char, environment=env,
                     initial_pose=pose, initial_velocity=velocity, timestep=float(model.opt.timestep))


def _read_roles(spec: mujoco.MjSpec, char: Character, where: str) -> None:
    """The roles the file names for its character (`physkey_roles`; `character_files` infers the rest)."""
    from ..formats.roles import check_roles
    for text in spec.texts:
        if text.name == MJCF_ROLES:
            char.roles = parse_roles(text.data, f"{where}: custom text '{MJCF_ROLES}'")
    check_roles(char.roles, {b.name for b in char.bodies}, f"{where}: custom text '{MJCF_ROLES}'")


def _root_joint(model, root) -> int:
    return next(j for j in range(model.njnt) if model.jnt_bodyid[j] == root)


def _read_env_body(model, spec_geoms, b, tree, free) -> EnvBody:
    """A world child and everything rigidly below it, as one environment body (nested bodies'
    geoms re-expressed in its frame)."""
    name = _name(model, mujoco.mjtObj.mjOBJ_BODY, b, "body")
    for c in tree[1:]:
        if model.body_jntnum[c]:
            raise InvalidInput(f"body '{_name(model, mujoco.mjtObj.mjOBJ_BODY, c, 'body')}'",
                               "jointed bodies below an environment body are not supported")
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    base_r, base_p = data.xmat[b].reshape(3, 3), data.xpos[b]
    geoms, sites = [], []
    for g in range(model.ngeom):
        if model.geom_bodyid[g] not in tree:
            continue
        geom = _read_geom(model, spec_geoms, g)
        gr = data.geom_xmat[g].reshape(3, 3)
        geom.pos = [float(x) for x in base_r.T @ (data.geom_xpos[g] - base_p)]
        geom.quat = [float(x) for x in rotations.from_matrix(base_r.T @ gr)]
        geoms.append(geom)
    for s in range(model.nsite):
        if model.site_bodyid[s] in tree:
            sites.append(Site(name=_name(model, mujoco.mjtObj.mjOBJ_SITE, s, "site"),
                              pos=[float(x) for x in base_r.T @ (data.site_xpos[s] - base_p)]))
    return EnvBody(name=name, kind="free" if free else "static", pos=[float(x) for x in model.body_pos[b]],
                   quat=[float(x) for x in model.body_quat[b]], geoms=geoms, sites=sites)


def load_mjcf(path, notes: list[str] | None = None) -> SceneDesc:
    """Read an MJCF file (a scene from `scenes/` or the user's own) into a SceneDesc; files it refers
    to must lie in its own folder. What the import changed or inferred is appended to `notes`."""
    from .mjcf_paths import check_file_references
    check_file_references(os.fspath(path))
    try:
        spec = mujoco.MjSpec.from_file(os.fspath(path))
    except (ValueError, FileNotFoundError) as e:
        raise InvalidInput(os.fspath(path), f"cannot read MJCF: {str(e).strip().splitlines()[0]}") from None
    return spec_to_scene(spec, name=os.path.splitext(os.path.basename(path))[0], notes=notes)
