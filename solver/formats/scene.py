"""SceneDesc: the physics description of a character and its environment.

This is the one schema shared by the solver, the scene files in `scenes/` and the Blender add-on.
Every character body frame is the frame of its Blender bone at rest (origin at the bone's head, Y
along the bone), so a body's world pose is its bone's world pose; joints, geoms and sites are
expressed in that frame. Lengths are metres, angles radians, quaternions (w, x, y, z).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..core import schema
from ..core.errors import InvalidInput
from .roles import check_roles

SCHEMA_VERSION = 1
GROUPS = ("core", "right_leg", "left_leg", "right_arm", "left_arm")
GEOM_TYPES = ("capsule", "box", "sphere", "cylinder", "ellipsoid", "mesh")
# Number of size parameters per geom type (MuJoCo conventions: half-sizes, capsule radius + half-length).
GEOM_SIZE_COUNT = {"capsule": 2, "box": 3, "sphere": 1, "cylinder": 2, "ellipsoid": 3, "mesh": 0}

_IDENTITY_QUAT = (1.0, 0.0, 0.0, 0.0)
MIN_SIZE = 1e-6  # m, the smallest geom size


def _vec3(default=(0.0, 0.0, 0.0)):
    return field(default_factory=lambda: list(default), metadata={"length": 3})


def _quat():
    return field(default_factory=lambda: list(_IDENTITY_QUAT), metadata={"length": 4})


def _check_quat(quat, path):
    if sum(q * q for q in quat) < 1e-12:
        raise InvalidInput(path, "quaternion must not be zero")


def check_softness(solref, solimp, path, suffix=""):
    """MuJoCo's constraint softness, as its documentation defines it: solref a positive time constant and
    damping ratio, or a negative stiffness and damping; solimp's impedances within [0, 1], a positive
    width, a midpoint within (0, 1) and a power of at least 1."""
    if solref is not None and not (all(v > 0 for v in solref) or all(v <= 0 for v in solref)):
        raise InvalidInput(f"{path}.solref{suffix}", "must be a positive time constant and damping ratio, or a "
                           f"negative stiffness and damping, got {list(solref)}")
    if solimp is not None:
        dmin, dmax, width, mid, power = solimp
        if not (0 <= dmin <= 1 and 0 <= dmax <= 1 and width > 0 and 0 < mid < 1 and power >= 1):
            raise InvalidInput(f"{path}.solimp{suffix}", "must be [dmin, dmax, width, midpoint, power] with dmin and "
                               "dmax within [0, 1], width > 0, midpoint within (0, 1) and power >= 1, got "
                               f"{list(solimp)}")


@dataclass
class Geom:
    """A collision and mass shape. Mass wins over density when both are given."""
    name: str
    type: str = field(metadata={"choices": GEOM_TYPES})
    size: list[float] = field(default_factory=list, metadata={"positive": True})
    pos: list[float] = _vec3()
    quat: list[float] = _quat()
    mass: Optional[float] = field(default=None, metadata={"positive": True})
    density: float = field(default=1000.0, metadata={"positive": True})
    friction: float = field(default=0.7, metadata={"nonneg": True})
    condim: int = field(default=3, metadata={"choices": (1, 3, 4, 6)})  # MuJoCo's contact dimensionality
    vertices: list[list[float]] = field(default_factory=list)  # mesh only: convex hull points
    rgba: list[float] = field(default_factory=lambda: [0.8, 0.6, 0.4, 1.0], metadata={"length": 4})
    # MuJoCo's contact softness where the shape's file gives its own (an imported MJCF keeps it); None:
    # PhysKey's for the character (`mjcf.CHARACTER_SOLREF`, `CHARACTER_SOLIMP`), MuJoCo's for the world.
    solref: Optional[list[float]] = field(default=None, metadata={"length": 2})
    solimp: Optional[list[float]] = field(default=None, metadata={"length": 5})

    def check(self, path):
        check_softness(self.solref, self.solimp, path)
        want = GEOM_SIZE_COUNT[self.type]
        if len(self.size) != want:
            raise InvalidInput(f"{path}.size", f"a {self.type} needs {want} size values, got {len(self.size)}")
        for i, v in enumerate(self.size):
            if v < MIN_SIZE:  # MuJoCo treats sizes this small as zero
                raise InvalidInput(f"{path}.size[{i}]", f"must be at least {MIN_SIZE} m, got {v}")
        if self.type == "mesh":
            if len(self.vertices) < 4:
                raise InvalidInput(f"{path}.vertices", "a mesh needs at least 4 vertices")
            for i, v in enumerate(self.vertices):
                if len(v) != 3:
                    raise InvalidInput(f"{path}.vertices[{i}]", f"must have 3 entries, got {len(v)}")
        elif self.vertices:
            raise InvalidInput(f"{path}.vertices", f"only mesh geoms have vertices, this is a {self.type}")
        _check_quat(self.quat, f"{path}.quat")
        for i, c in enumerate(self.rgba):
            if not 0.0 <= c <= 1.0:
                raise InvalidInput(f"{path}.rgba[{i}]", f"must be within [0, 1], got {c}")


@dataclass
class Joint:
    """A hinge (1 DoF about `axis`) or ball (3 DoF) joint at `pos` in the body frame.

    `range` is [low, high] in radians for a hinge, [0, max swing] for a ball; `group` is the body-part
    group used by partwise planning.
    """
    name: str
    type: str = field(default="hinge", metadata={"choices": ("hinge", "ball")})
    axis: list[float] = _vec3((0.0, 0.0, 1.0))
    pos: list[float] = _vec3()
    range: list[float] = field(default_factory=lambda: [-3.14159, 3.14159], metadata={"length": 2})
    group: str = field(default="core", metadata={"choices": GROUPS})
    damping: float = field(default=0.2, metadata={"nonneg": True})
    stiffness: float = field(default=0.0, metadata={"nonneg": True})
    armature: float = field(default=0.01, metadata={"nonneg": True})
    # The softness of the joint's range limit where its file gives its own; None: PhysKey's
    # (`mjcf.LIMIT_SOLIMP`, MuJoCo's solref).
    solref_limit: Optional[list[float]] = field(default=None, metadata={"length": 2})
    solimp_limit: Optional[list[float]] = field(default=None, metadata={"length": 5})

    def check(self, path):
        check_softness(self.solref_limit, self.solimp_limit, path, "_limit")
        if sum(a * a for a in self.axis) < 1e-12:
            raise InvalidInput(f"{path}.axis", "must not be zero")
        lo, hi = self.range
        if lo > hi:
            raise InvalidInput(f"{path}.range", f"low {lo} is greater than high {hi}")


@dataclass
class Actuator:
    """Drive of one joint: a torque motor (`gear` × ctrl in [-1, 1]) or, in position mode, a PD servo
    with gains kp/kv and torque limit `gear` (the same strength either way)."""
    joint: str
    gear: float = field(metadata={"positive": True})
    kp: float = field(metadata={"positive": True})
    kv: float = field(metadata={"nonneg": True})


@dataclass
class Site:
    """A named point on a body (keypoints, contact markers, sensors)."""
    name: str
    pos: list[float] = _vec3()


@dataclass
class Body:
    """One rigid link = one Blender bone. `pos`/`quat` place it in its parent's frame; `length` is
    the bone length (head to tail along local Y), used by Blender and for display only."""
    name: str
    parent: Optional[str] = None
    pos: list[float] = _vec3()
    quat: list[float] = _quat()
    length: float = field(default=0.1, metadata={"positive": True})
    joints: list[Joint] = field(default_factory=list)
    geoms: list[Geom] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)

    def check(self, path):
        _check_quat(self.quat, f"{path}.quat")


@dataclass
class Character:
    """An articulated character: bodies listed parents-first; the first body is the free root. `roles`
    {role: body}: which body plays which part (`formats/roles.py`), where given; the rest are inferred."""
    name: str
    bodies: list[Body] = field(metadata={"min_length": 1})
    actuators: list[Actuator] = field(default_factory=list)
    exclude_contacts: list[list[str]] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)


@dataclass
class EnvBody:
    """A piece of the environment. Static bodies are welded to the world; free bodies can be pushed
    around (they need mass). `tilt_deg` = [about x, about y] rotates the body about its origin in
    world axes, on top of `quat` (PartwiseMPC's tilted furniture)."""
    name: str
    kind: str = field(default="static", metadata={"choices": ("static", "free")})
    pos: list[float] = _vec3()
    quat: list[float] = _quat()
    tilt_deg: list[float] = field(default_factory=lambda: [0.0, 0.0], metadata={"length": 2})
    geoms: list[Geom] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)

    def check(self, path):
        _check_quat(self.quat, f"{path}.quat")
        for i, (name, limit) in enumerate((("x", 89.0), ("y", 89.0))):
            if abs(self.tilt_deg[i]) > limit:
                raise InvalidInput(f"{path}.tilt_deg[{i}]", f"tilt about {name} must be within ±{limit}°")


@dataclass
class Environment:
    """The world: an optional floor plane and furniture bodies."""
    floor: bool = True
    floor_friction: float = field(default=0.7, metadata={"nonneg": True})
    bodies: list[EnvBody] = field(default_factory=list)
    # the floor's contact softness where its file gives its own (as `Geom.solref`, `Geom.solimp`)
    floor_solref: Optional[list[float]] = field(default=None, metadata={"length": 2})
    floor_solimp: Optional[list[float]] = field(default=None, metadata={"length": 5})

    def check(self, path):
        check_softness(self.floor_solref, self.floor_solimp, f"{path}.floor")


@dataclass
class Pose:
    """A character configuration: root position/orientation and hinge angles by joint name
    (ball joints by quaternion under `ball_joints`). Joints not named stay at 0."""
    root_pos: list[float] = _vec3((0.0, 0.0, 1.0))
    root_quat: list[float] = _quat()
    joints: dict[str, float] = field(default_factory=dict)
    ball_joints: dict[str, list[float]] = field(default_factory=dict)

    def check(self, path):
        _check_quat(self.root_quat, f"{path}.root_quat")
        for name, q in self.ball_joints.items():
            if len(q) != 4:
                raise InvalidInput(f"{path}.ball_joints.{name}", f"must have 4 entries, got {len(q)}")
            _check_quat(q, f"{path}.ball_joints.{name}")


@dataclass
class Velocity:
    """The character's velocity at the start, for a solve that continues an earlier motion from one of
    its frames: the root's linear velocity (world frame, m/s) and angular velocity (the root body's own
    frame, rad/s: MuJoCo's free-joint convention), and hinge velocities by joint name (rad/s). Joints not
    named start still."""
    root_linear: list[float] = _vec3()
    root_angular: list[float] = _vec3()
    joints: dict[str, float] = field(default_factory=dict)


@dataclass
class SceneDesc:
    schema_version: int
    name: str
    character: Character
    environment: Environment = field(default_factory=Environment)
    initial_pose: Pose = field(default_factory=Pose)
    initial_velocity: Optional[Velocity] = None
    timestep: float = field(default=0.005, metadata={"positive": True})

    def check(self, path):
        if self.schema_version != SCHEMA_VERSION:
            raise InvalidInput(_sub(path, "schema_version"),
                               f"unknown schema_version {self.schema_version} (this PhysKey reads {SCHEMA_VERSION})")
        check_timestep(self.timestep, _sub(path, "timestep"))
        check_references(self, path)

    # Convenience lookups -------------------------------------------------------------------
    def body(self, name: str) -> Body:
        return next(b for b in self.character.bodies if b.name == name)

    def joints(self) -> list[Joint]:
        return [j for b in self.character.bodies for j in b.joints]


MIN_TIMESTEP = 1e-4  # s; below this a second of motion takes more than 10,000 steps (and 1e-308 never ends)


def check_timestep(timestep: float, path: str) -> None:
    """A physics timestep a solve can use: small enough for stable contact, large enough to finish."""
    if timestep > 0.05:
        raise InvalidInput(path, f"{timestep} s is too large for stable contact (max 0.05)")
    if timestep < MIN_TIMESTEP:
        raise InvalidInput(path, f"{timestep} s is too small (min {MIN_TIMESTEP}: a second of motion would take "
                           f"more than {round(1 / MIN_TIMESTEP)} steps)")


def _sub(path, key):
    return f"{path}.{key}" if path else key


def check_references(scene: SceneDesc, path: str = "") -> None:
    """Cross-field checks: unique names, parents that exist and come first, actuators and contact
    exclusions that name existing joints/bodies, an initial pose over existing joints."""
    ch, cpath = scene.character, _sub(path, "character")
    bodies = _check_names(scene, path)
    joints = {j.name: j for b in ch.bodies for j in b.joints}
    driven = {}
    for i, a in enumerate(ch.actuators):
        apath = f"{cpath}.actuators[{i}].joint"
        if a.joint not in joints:
            raise InvalidInput(apath, f"no joint '{a.joint}' in character")
        if a.joint in driven:
            raise InvalidInput(apath, f"joint '{a.joint}' already has an actuator ({driven[a.joint]})")
        driven[a.joint] = apath
    for i, pair in enumerate(ch.exclude_contacts):
        if len(pair) != 2:
            raise InvalidInput(f"{cpath}.exclude_contacts[{i}]", f"must be a pair of body names, got {len(pair)} names")
        for k, name in enumerate(pair):
            if name not in bodies:
                raise InvalidInput(f"{cpath}.exclude_contacts[{i}][{k}]", f"no body '{name}' in character")
    check_roles(ch.roles, bodies, cpath)
    _check_initial_state(scene, {name: j.type for name, j in joints.items()}, path)


def _check_names(scene: SceneDesc, path: str) -> set[str]:
    """Every body, joint, geom and site name unique (the builder's own names included); each character
    body's parent listed before it. The character's body names."""
    ch, cpath = scene.character, _sub(path, "character")
    seen_bodies: dict[str, str] = {}
    names = {"body": {}, "joint": {}, "geom": {}, "site": {}}

    def claim(kind, name, where):
        if name in names[kind]:
            raise InvalidInput(f"{where}.name", f"duplicate {kind} name '{name}' (also {names[kind][name]})")
        names[kind][name] = where

    # Names the model builder gives its own elements (mjcf.scene_to_spec).
    names["body"]["world"] = "MuJoCo's world body"
    names["joint"]["root"] = "the character's root joint"
    if scene.environment.floor:
        names["geom"]["floor"] = "the floor"
    for b in scene.environment.bodies:
        if b.kind == "free":
            names["joint"].setdefault(f"{b.name}_free", f"the free joint of environment body '{b.name}'")

    for i, b in enumerate(ch.bodies):
        bpath = f"{cpath}.bodies[{i}]"
        claim("body", b.name, bpath)
        if i == 0 and b.parent is not None:
            raise InvalidInput(f"{bpath}.parent", "the first body is the root and has no parent")
        if i > 0:
            if b.parent is None:
                raise InvalidInput(f"{bpath}.parent", "only the first body may lack a parent")
            if b.parent not in seen_bodies:
                why = "is listed after it" if any(x.name == b.parent for x in ch.bodies) else "does not exist"
                raise InvalidInput(f"{bpath}.parent", f"parent body '{b.parent}' {why}")
        seen_bodies[b.name] = bpath
        for kind, items in (("joint", b.joints), ("geom", b.geoms), ("site", b.sites)):
            for k, item in enumerate(items):
                claim(kind, item.name, f"{bpath}.{kind}s[{k}]")
    epath = _sub(path, "environment")
    for i, b in enumerate(scene.environment.bodies):
        bpath = f"{epath}.bodies[{i}]"
        claim("body", b.name, bpath)
        if b.kind == "free" and not b.geoms:
            raise InvalidInput(f"{bpath}.geoms", "a free body needs at least one geom to have mass")
        for kind, items in (("geom", b.geoms), ("site", b.sites)):
            for k, item in enumerate(items):
                claim(kind, item.name, f"{bpath}.{kind}s[{k}]")
    return set(seen_bodies)


def _check_initial_state(scene: SceneDesc, kinds: dict[str, str], path: str) -> None:
    """The initial pose and velocity name existing joints of the kind their field holds."""
    ppath = _sub(path, "initial_pose")
    for field_name, kind, items in (("joints", "hinge", scene.initial_pose.joints),
                                    ("ball_joints", "ball", scene.initial_pose.ball_joints)):
        for name in items:
            if name not in kinds:
                raise InvalidInput(f"{ppath}.{field_name}.{name}", f"no joint '{name}' in character")
            if kinds[name] != kind:
                raise InvalidInput(f"{ppath}.{field_name}.{name}", f"'{name}' is a {kinds[name]} joint; "
                                   f"{field_name} holds {kind} joints")
    if scene.initial_velocity is not None:
        vpath = _sub(path, "initial_velocity")
        for name in scene.initial_velocity.joints:
            if kinds.get(name) != "hinge":
                raise InvalidInput(f"{vpath}.joints.{name}", f"no hinge joint '{name}' in character")


def depth_first(scene: SceneDesc) -> SceneDesc:
    """The scene with its character's bodies in depth-first order (children in listed order), the
    order MuJoCo numbers bodies and joints in. A SceneDesc only needs parents before children, but
    code that lines up `scene.joints()` with qpos columns needs the model's order."""
    children: dict[Optional[str], list[Body]] = {}
    for b in scene.character.bodies[1:]:
        children.setdefault(b.parent, []).append(b)
    order, stack = [], [scene.character.bodies[0]]
    while stack:
        b = stack.pop()
        order.append(b)
        stack.extend(reversed(children.get(b.name, [])))
    if [b.name for b in order] != [b.name for b in scene.character.bodies]:
        scene.character.bodies = order
    return scene


def scene_from_dict(data, path: str = "") -> SceneDesc:
    if not isinstance(data, dict):
        raise InvalidInput(path or "scene", f"must be a JSON object {{...}}, got {schema.describe(data)}")
    if "character" not in data:
        raise InvalidInput(_sub(path, "character"), "the scene has no character")
    return schema.from_dict(SceneDesc, data, path)


def save_scene(scene: SceneDesc, file_path) -> None:
    from ..core.fileio import write_text_atomic
    write_text_atomic(file_path, schema.dumps(scene))
