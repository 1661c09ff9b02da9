"""Environment builders: floor, armchair, stool, bench, bed, table, box platform, and two platforms
with a free box to pick up and place.

Each builder takes the PartwiseMPC Table 3 parameters (height, tilt, friction) and returns the
environment plus the scene's default initial character pose. Furniture geometry comes from
`scenes/environments/*.json` (carried over from MuJoCo MPC's scenes); the builders only move, tilt
and resize it.
"""
from __future__ import annotations

import copy
import functools
import math
import os

from ..core import schema
from ..core.errors import InvalidInput
from ..core.paths import ENVIRONMENTS_DIR
from ..formats.scene import EnvBody, Environment, Geom, Pose

# Torso bone frame of the humanoid standing upright facing +x (Y along the spine).
UPRIGHT_QUAT = [math.sqrt(0.5), math.sqrt(0.5), 0.0, 0.0]
STANDING_HEIGHT = 1.282


def standing_pose(x: float = 0.0, y: float = 0.0, yaw_deg: float = 0.0) -> Pose:
    """The humanoid upright on the floor at (x, y), facing +x rotated by `yaw_deg`."""
    from ..core.rotations import from_axis_angle, mul
    q = mul(from_axis_angle((0, 0, 1), math.radians(yaw_deg)), UPRIGHT_QUAT)
    return Pose(root_pos=[x, y, STANDING_HEIGHT], root_quat=[float(v) for v in q])


@functools.cache
def _furniture(name: str):
    path = os.path.join(ENVIRONMENTS_DIR, f"{name}.json")
    with open(path, encoding="utf-8") as f:
        doc = schema.load_json_text(f.read(), path)
    bodies = [schema.from_dict(EnvBody, b, f"{name}.bodies[{i}]") for i, b in enumerate(doc["bodies"])]
    pose = schema.from_dict(Pose, doc["initial_pose"], f"{name}.initial_pose") if doc.get("initial_pose") else None
    return bodies, pose


def _check(params: dict, allowed: dict, scene: str) -> dict:
    out = dict(allowed)
    for key, value in params.items():
        path = f"scene.params.{key}"
        if key not in allowed:
            raise InvalidInput(path, f"'{scene}' has no parameter '{key}' (has: {', '.join(allowed) or 'none'})")
        meta = {"nonneg": True} if key in ("friction",) else {"positive": True} if key in (
            "height", "width", "depth", "distance") else {}
        out[key] = schema.parse(float, value, path, meta)
        if key == "tilt" and abs(out[key]) > 89.0:  # as EnvBody.tilt_deg
            raise InvalidInput(path, f"tilt must be within ±89°, got {out[key]}")
    return out


def _furniture_scene(name, p, *, height_default):
    """The furniture `name` raised or lowered to `p["height"]` (its bodies, so points given on them
    move too, and its seated pose with them), with `p["friction"]` on its geoms."""
    bodies, pose = _furniture(name)
    bodies, pose = copy.deepcopy(bodies), copy.deepcopy(pose)
    dz = p["height"] - height_default
    for b in bodies:
        b.pos[2] += dz
        if "friction" in p:
            for g in b.geoms:
                g.friction = p["friction"]
    if pose is not None:
        pose.root_pos[2] += dz
    return bodies, pose


def floor(**params):
    p = _check(params, {"friction": 0.7}, "floor")
    return Environment(floor=True, floor_friction=p["friction"], bodies=[]), standing_pose()


def armchair(**params):
    """Seat frame height 0.2 m (the seat cushion's top is 0.17 m above it); `tilt` tips the whole
    chair backwards by that many degrees."""
    p = _check(params, {"height": 0.2, "tilt": 0.0, "friction": 0.7}, "armchair")
    bodies, pose = _furniture_scene("armchair", p, height_default=0.2)
    bodies[0].tilt_deg = [0.0, -p["tilt"]]
    return Environment(bodies=bodies), pose


def stool(**params):
    """A cylinder of radius 0.3 m whose top is `height` above the floor. The body moves with the top
    (its lower part goes into the floor) so that a keyframe's point on the stool, in the stool's frame,
    stays on the seat at any height: "pelvis on the stool" at (0, 0, 0.4) is the top."""
    p = _check(params, {"height": 0.4, "friction": 1.0}, "stool")
    bodies, pose = _furniture_scene("stool", p, height_default=0.4)
    return Environment(bodies=bodies), pose


def bench(**params):
    """Seat frame height 0.25 m; `tilt` raises the bench's left (+y) side by that many degrees."""
    p = _check(params, {"height": 0.25, "tilt": 0.0, "friction": 0.7}, "bench")
    bodies, pose = _furniture_scene("bench", p, height_default=0.25)
    bodies[0].tilt_deg = [p["tilt"], 0.0]
    return Environment(bodies=bodies), pose


def bed(**params):
    """Mattress top `height` above the floor (0.3 m by default), pillow at +y."""
    p = _check(params, {"height": 0.3, "friction": 0.7}, "bed")
    bodies, pose = _furniture_scene("bed", p, height_default=0.3)
    return Environment(bodies=bodies), pose


def table(**params):
    """Table top surface `height` above the floor. The reference table's top is at 0.7 m; the
    paper's Table 3 lists 0.35 / 0.55 / 0.75 variants."""
    p = _check(params, {"height": 0.7, "friction": 0.7}, "table")
    bodies, _ = _furniture_scene("table", p, height_default=0.7)
    return Environment(bodies=bodies), standing_pose()


def box(**params):
    """A box platform to jump onto: `height` tall, its near face `distance` in front (+x) of the
    standing character."""
    p = _check(params, {"height": 0.3, "distance": 0.5, "depth": 0.8, "width": 1.0, "friction": 0.9}, "box")
    hx, hy, hz = p["depth"] / 2, p["width"] / 2, p["height"] / 2
    geom = Geom(name="platform", type="box", size=[hx, hy, hz], friction=p["friction"],
                rgba=[0.6, 0.55, 0.5, 1.0])
    body = EnvBody(name="platform", pos=[p["distance"] + hx, 0.0, hz], geoms=[geom])
    return Environment(bodies=[body]), standing_pose()


def pick_place(**params):
    """A free box in front of the standing character and a platform to put it on (the box
    loco-manipulation setting): the box (`box_width` across the hands × `box_depth` × `box_height`,
    `box_mass` kg) rests `distance` in front (+x) and `from_offset` to the left (+y) on the first
    platform, whose top is `from_height` above the floor (0: the box lies on the floor, with no
    platform); the second platform's top is `to_height`, its centre `offset` to the character's
    left and `to_distance` in front."""
    p = _check(params, {"from_height": 0.75, "to_height": 0.85, "distance": 0.42, "offset": 0.45,
                        "to_distance": 0.42, "from_offset": 0.0, "box_width": 0.3, "box_depth": 0.22,
                        "box_height": 0.22, "box_mass": 2.0, "friction": 0.9}, "pick_place")
    for key in ("to_height", "box_width", "box_depth", "box_height", "box_mass"):
        if p[key] <= 0:
            raise InvalidInput(f"scene.params.{key}", f"must be positive, got {p[key]}")
    if p["from_height"] < 0:
        raise InvalidInput("scene.params.from_height", f"must be 0 (the floor) or more, got {p['from_height']}")
    platform = 0.4  # m: each platform's depth and width

    def stand(name, x, y, height):
        geom = Geom(name=name, type="box", size=[platform / 2, platform / 2, height / 2], friction=p["friction"],
                    rgba=[0.55, 0.5, 0.45, 1.0])
        return EnvBody(name=name, pos=[x, y, height / 2], geoms=[geom])

    half = [p["box_depth"] / 2, p["box_width"] / 2, p["box_height"] / 2]
    box_geom = Geom(name="box", type="box", size=half, mass=p["box_mass"], friction=p["friction"],
                    rgba=[0.75, 0.55, 0.3, 1.0])
    x0 = p["distance"] + platform / 2 - 0.1  # the box's near face 0.1 m behind the platform's near edge
    on_floor = p["from_height"] == 0.0
    if not on_floor and abs(p["offset"] - p["from_offset"]) < platform:
        raise InvalidInput("scene.params.offset", f"the platforms ({platform} m wide) overlap: |offset − from_offset| "
                           f"must be at least {platform}, got {abs(p['offset'] - p['from_offset']):g}")
    if on_floor and abs(p["offset"] - p["from_offset"]) < (platform + p["box_width"]) / 2:
        raise InvalidInput("scene.params.offset", f"the box on the floor would stand inside the platform: "
                           f"|offset − from_offset| must be at least {(platform + p['box_width']) / 2:g}, "
                           f"got {abs(p['offset'] - p['from_offset']):g}")
    bodies = [] if on_floor else [stand("from_platform", x0, p["from_offset"], p["from_height"])]
    bodies += [stand("to_platform", p["to_distance"] + platform / 2 - 0.1, p["offset"], p["to_height"]),
               EnvBody(name="box", kind="free", pos=[p["distance"] + half[0], p["from_offset"],
                                                     p["from_height"] + half[2]], geoms=[box_geom])]
    return Environment(bodies=bodies), standing_pose()


BUILDERS = {"floor": floor, "armchair": armchair, "stool": stool, "bench": bench, "bed": bed,
            "table": table, "box": box, "pick_place": pick_place}


def build(name: str, params: dict | None = None):
    """(Environment, default initial pose) of the built-in environment `name`."""
    if name not in BUILDERS:
        raise InvalidInput("scene.environment", f"unknown environment '{name}' (have: {', '.join(BUILDERS)})")
    return BUILDERS[name](**(params or {}))
