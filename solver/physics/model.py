"""The MuJoCo model a solve runs on: the scene plus what the methods need.

On top of `mjcf.scene_to_spec` this adds sensors for cost features (body positions, orientations,
the character's centre of mass) and, optionally, assist forces (Kim et al. 2021): per keypoint body a
site at the link's centre of mass, a mocap target, a spatial tendon between the two and a `general`
actuator with affine gain (0, −kp, −kv), so ctrl = β ∈ [0, 1] pulls the link to its target with
force β(−kp·L − kv·L̇) with no Python in the simulation loop.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import mujoco
import numpy as np

from ..builders.mjcf import compile_spec, initial_qpos, initial_qvel, model_from_xml, mujoco_errors, scene_to_spec
from ..formats.perturbations import Perturbations, add_balls
from ..formats.scene import SceneDesc
from .grasp import add_grasp_welds

ASSIST_PREFIX = "assist_"
CONTACT_DIST, CONTACT_MINDIST = 8, 1  # a contact sensor's data="dist" bit and reduce="mindist"
# a contact sensor's data="found", "force" and "pos" bits, and reduce="netforce"
CONTACT_FOUND, CONTACT_FORCE, CONTACT_POS, CONTACT_NETFORCE = 1, 2, 16, 3


@dataclass
class BuiltModel:
    """A compiled model with the index information the rollout engine and costs need."""
    xml: str  # the MJCF text `model` was compiled from
    model: mujoco.MjModel
    scene: SceneDesc
    actuation: str
    character_bodies: list[str]
    nu_character: int  # the first nu_character actuators drive the character's joints
    assist_bodies: list[str] = field(default_factory=list)  # ctrl columns nu_character.. are their β
    sensor_slices: dict[str, slice] = field(default_factory=dict)
    perturbations: Perturbations | None = None  # what strikes the character (its balls are in the model)
    grasps: list[tuple[str, str]] = field(default_factory=list)  # (body, object) of each sticky-hand weld

    @functools.cached_property
    def roles(self) -> dict[str, str]:
        """{role: body} of the parts the character's bodies play (`builders/roles.py`)."""
        from ..builders.roles import roles_of
        return roles_of(self.scene.character)

    @property
    def nassist(self) -> int:
        return len(self.assist_bodies)

    def initial_qpos(self) -> np.ndarray:
        return initial_qpos(self.scene, self.model)

    def initial_qvel(self) -> np.ndarray:
        return initial_qvel(self.scene, self.model)

    def to_xml(self) -> str:
        return self.xml


def _add_sensors(spec: mujoco.MjSpec, bodies: list[str], env_bodies: list[str]) -> None:
    for name in bodies + env_bodies:
        for kind, tag in ((mujoco.mjtSensor.mjSENS_FRAMEPOS, "pos"), (mujoco.mjtSensor.mjSENS_FRAMEQUAT, "quat")):
            s = spec.add_sensor()
            s.name = f"{name}_{tag}"
            s.type = kind
            s.objtype = mujoco.mjtObj.mjOBJ_XBODY
            s.objname = name
    for kind, tag in ((mujoco.mjtSensor.mjSENS_SUBTREECOM, "com"), (mujoco.mjtSensor.mjSENS_SUBTREELINVEL, "comvel")):
        s = spec.add_sensor()
        s.name = f"character_{tag}"
        s.type = kind
        s.objtype = mujoco.mjtObj.mjOBJ_BODY
        s.objname = bodies[0]


def _add_contact_sensors(spec: mujoco.MjSpec, bodies: list[str], suffix: str, data: int, reduce: int) -> None:
    """Per body, MuJoCo's contact sensor `{body}{suffix}` on its contacts with anything: `data` (bits of
    "found", "force", "dist", "pos" …) of the one contact (or the net of all) `reduce` picks; 0 without."""
    for name in bodies:
        s = spec.add_sensor()
        s.name = f"{name}{suffix}"
        s.type = mujoco.mjtSensor.mjSENS_CONTACT
        s.objtype = mujoco.mjtObj.mjOBJ_BODY
        s.objname = name
        s.intprm = [data, reduce, 1]


def _add_contact_depths(spec: mujoco.MjSpec, bodies: list[str]) -> None:
    """Per character body, the distance of its deepest contact with anything (`{body}_contact`,
    negative where it sinks in; 0 without contact)."""
    _add_contact_sensors(spec, bodies, "_contact", CONTACT_DIST, CONTACT_MINDIST)


def _add_touches(spec: mujoco.MjSpec, bodies: list[str]) -> None:
    """Per body, its contacts taken together (`{body}_touch`: how many, the net force in the world frame,
    the force-weighted point they press at; all 0 without contact): where and how hard a foot presses, so
    that the objective can tell a loaded foot slipping on the floor from one rolling over its toes, lifted
    or drawn back lightly."""
    _add_contact_sensors(spec, bodies, "_touch", CONTACT_FOUND | CONTACT_FORCE | CONTACT_POS, CONTACT_NETFORCE)


def _add_assist(spec: mujoco.MjSpec, model: mujoco.MjModel, bodies: list[str], kp_per_kg: float,
                kv_per_kg: float) -> None:
    for name in bodies:
        body = spec.body(name)
        b = model.body(name)
        mass = float(model.body_mass[b.id])
        site = body.add_site()
        site.name = f"{ASSIST_PREFIX}{name}_com"
        site.pos = model.body_ipos[b.id]
        site.group = 4
        target = spec.worldbody.add_body()
        target.name = f"{ASSIST_PREFIX}{name}_target"
        target.mocap = True
        tsite = target.add_site()
        tsite.name = f"{ASSIST_PREFIX}{name}_target"
        tsite.group = 4
        tendon = spec.add_tendon()
        tendon.name = f"{ASSIST_PREFIX}{name}"
        tendon.wrap_site(site.name)
        tendon.wrap_site(tsite.name)
        act = spec.add_actuator()
        act.name = f"{ASSIST_PREFIX}{name}"
        act.target = tendon.name
        act.trntype = mujoco.mjtTrn.mjTRN_TENDON
        act.gaintype = mujoco.mjtGain.mjGAIN_AFFINE
        gain = np.zeros(10)
        gain[1], gain[2] = -kp_per_kg * mass, -kv_per_kg * mass
        act.gainprm = gain
        act.biastype = mujoco.mjtBias.mjBIAS_NONE
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.ctrlrange = [0.0, 1.0]
        sensor = spec.add_sensor()  # the assist force, to report how much help was used
        sensor.name = f"{ASSIST_PREFIX}{name}_force"
        sensor.type = mujoco.mjtSensor.mjSENS_ACTUATORFRC
        sensor.objtype = mujoco.mjtObj.mjOBJ_ACTUATOR
        sensor.objname = act.name


def build_model(scene: SceneDesc, actuation: str = "motor", assist_bodies: list[str] | None = None,
                assist_kp_per_kg: float = 400.0, assist_kv_per_kg: float = 40.0,
                target_margin: float = 0.0, perturbations: Perturbations | None = None,
                grasps: list[tuple[str, str]] | None = None, contact_depths: bool = False,
                touch_bodies: list[str] | None = None) -> BuiltModel:
    """Compile `scene` for solving. `assist_bodies` (character body names) get assist channels;
    `target_margin` widens position servos' target range past the joint limits (`scene_to_spec`);
    `perturbations`' balls become free bodies waiting on their rack; `grasps` (character body,
    free object) get inactive welds (sticky hands, `grasp.py`); `contact_depths` adds each
    character body's deepest contact as a sensor (`_add_contact_depths`); `touch_bodies` where their
    deepest contact is (`_add_touches`)."""
    spec = scene_to_spec(scene, actuation, target_margin)
    bodies = [b.name for b in scene.character.bodies]
    with mujoco_errors():  # the scene's own names may clash with the sensors', assist channels' and balls'
        _add_sensors(spec, bodies, [b.name for b in scene.environment.bodies])
        if contact_depths:
            _add_contact_depths(spec, bodies)
        _add_touches(spec, list(touch_bodies or []))
        add_balls(spec, perturbations.balls if perturbations else [])
        add_grasp_welds(spec, list(grasps or []))
    model = compile_spec(spec)
    assist = list(assist_bodies or [])
    if assist:
        with mujoco_errors():
            _add_assist(spec, model, assist, assist_kp_per_kg, assist_kv_per_kg)
        model = compile_spec(spec)
    # Keyframe so that the saved model.xml opens in the viewer at the initial pose.
    key = spec.add_key()
    key.name = "initial"
    key.qpos = initial_qpos(scene, model)
    key.qvel = initial_qvel(scene, model)
    key.mpos = model.key_mpos[0] if model.nkey else np.zeros(3 * model.nmocap)
    compile_spec(spec)
    # MuJoCo writes MJCF with 6 significant digits; solving the model read back from that text makes
    # model.xml exactly the model solved.
    xml = spec.to_xml()
    model = model_from_xml(xml)
    slices = {}
    for i in range(model.nsensor):
        a = int(model.sensor_adr[i])
        slices[model.sensor(i).name] = slice(a, a + int(model.sensor_dim[i]))
    return BuiltModel(xml=xml, model=model, scene=scene, actuation=actuation, character_bodies=bodies,
                      nu_character=len(scene.character.actuators), assist_bodies=assist, sensor_slices=slices,
                      perturbations=perturbations, grasps=list(grasps or []))
