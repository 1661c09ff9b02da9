"""SceneDesc → MJCF, through mujoco.MjSpec, never string templates (reading MJCF: `mjcf_read.py`).

The MJCF written here is deterministic (same SceneDesc → same bytes) and loads in MuJoCo's viewer.
"""
from __future__ import annotations

import contextlib

import mujoco
import numpy as np

from ..core import rotations
from ..core.errors import InvalidInput
from ..formats.roles import MJCF_TEXT as MJCF_ROLES
from ..formats.roles import format_roles
from ..formats.scene import Actuator, EnvBody, Geom, Joint, SceneDesc, Site

_GEOM = {
    "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE,
    "box": mujoco.mjtGeom.mjGEOM_BOX,
    "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
    "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
    "ellipsoid": mujoco.mjtGeom.mjGEOM_ELLIPSOID,
    "mesh": mujoco.mjtGeom.mjGEOM_MESH,
}
ROOT_JOINT = "root"
FREE, BALL, HINGE = (int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL),
                     int(mujoco.mjtJoint.mjJNT_HINGE))
# Contact softness of the character's geoms and joint limits, as in MuJoCo MPC's humanoid.
CHARACTER_SOLIMP = (0.9, 0.99, 0.003, 0.5, 2.0)
CHARACTER_SOLREF = (0.015, 1.0)
LIMIT_SOLIMP = (0.0, 0.99, 0.01, 0.5, 2.0)
TORSION_ROLLING = (0.005, 0.0001)  # every shape's torsional and rolling friction (they act in condim 4 and 6)


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
    geom.friction = [g.friction, OBJECT_TORSION if held else TORSION_ROLLING[0], TORSION_ROLLING[1]]
    geom.condim = 4 if held else g.condim
    geom.rgba = g.rgba
    if g.solimp is not None or character:
        geom.solimp = g.solimp if g.solimp is not None else CHARACTER_SOLIMP
    if g.solref is not None or character:
        geom.solref = g.solref if g.solref is not None else CHARACTER_SOLREF
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
    joint.solimp_limit = j.solimp_limit if j.solimp_limit is not None else LIMIT_SOLIMP
    if j.solref_limit is not None:
        joint.solref_limit = j.solref_limit


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
        floor.friction = [env.floor_friction, *TORSION_ROLLING]
        if env.floor_solref is not None:
            floor.solref = env.floor_solref
        if env.floor_solimp is not None:
            floor.solimp = env.floor_solimp
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
