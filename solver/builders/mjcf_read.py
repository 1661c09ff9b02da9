"""MJCF → SceneDesc: a user's MJCF file (or a scene of `scenes/`) as PhysKey's scene, read by MuJoCo's own
parser and compiler, so defaults classes, `fromto`, degrees and Euler angles in users' files are resolved
by MuJoCo, not re-implemented. Writing MJCF is `mjcf.py`'s.
"""
from __future__ import annotations

import math
import os

import mujoco
import numpy as np

from ..core import rotations
from ..core.errors import InvalidInput
from ..formats.roles import MJCF_TEXT as MJCF_ROLES
from ..formats.roles import parse_roles
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
from .mjcf import (
    _GEOM,
    BALL,
    CHARACTER_SOLIMP,
    CHARACTER_SOLREF,
    FREE,
    HINGE,
    LIMIT_SOLIMP,
    OBJECT_TORSION,
    TORSION_ROLLING,
    compile_spec,
)

_GEOM_NAME = {int(v): k for k, v in _GEOM.items()}
# MuJoCo's own softness of a contact or a limit, what a scene without its own gets outside the character
MUJOCO_SOLREF = (0.02, 1.0)
MUJOCO_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)


def _own(values, default) -> list[float] | None:
    """`values` where they differ from what PhysKey would write anyway (`default`), else None: a file's
    own softness is kept, and a scene read back from PhysKey's own MJCF stays as it was."""
    values = [float(x) for x in values]
    return None if np.allclose(values, default, rtol=0.0, atol=1e-9) else values


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


def _read_geom(model, spec_geoms, gid, character: bool = False) -> Geom:
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
                condim=int(model.geom_condim[gid]), rgba=[float(x) for x in model.geom_rgba[gid]],
                solref=_own(model.geom_solref[gid], CHARACTER_SOLREF if character else MUJOCO_SOLREF),
                solimp=_own(model.geom_solimp[gid], CHARACTER_SOLIMP if character else MUJOCO_SOLIMP))
    if gtype == "mesh":
        mid = int(model.geom_dataid[gid])
        a, n = model.mesh_vertadr[mid], model.mesh_vertnum[mid]
        geom.vertices = [[float(x) for x in v] for v in model.mesh_vert[a:a + n]]
    return geom


def _note_friction_dropped(model, notes: list[str]) -> None:
    """Say which shapes lose their own torsional or rolling friction (a scene keeps one friction per
    shape): it acts only in condim 4 and 6 contacts, so only those are named."""
    ours = (TORSION_ROLLING, (OBJECT_TORSION, TORSION_ROLLING[1]))  # what PhysKey writes (a held object's)
    lost = [_name(model, mujoco.mjtObj.mjOBJ_GEOM, g, "geom") for g in range(model.ngeom)
            if model.geom_condim[g] > 3 and not any(np.allclose(model.geom_friction[g][1:], f) for f in ours)]
    if lost:
        notes.append(f"torsional and rolling friction of {len(lost)} shape(s) ({', '.join(lost[:4])}"
                     f"{' …' if len(lost) > 4 else ''}) are PhysKey's ({TORSION_ROLLING[0]}, "
                     f"{TORSION_ROLLING[1]}), not the file's: a scene keeps one friction per shape")


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
                                armature=float(model.dof_armature[model.jnt_dofadr[j]]),
                                solref_limit=_own(model.jnt_solref[j], MUJOCO_SOLREF),
                                solimp_limit=_own(model.jnt_solimp[j], LIMIT_SOLIMP)))
        geoms = [_read_geom(model, spec_geoms, g, character=True) for g in range(model.ngeom)
                 if model.geom_bodyid[g] == b]
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
    _note_friction_dropped(model, notes)
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
                      bodies=env_bodies,
                      floor_solref=None if floor is None else _own(model.geom_solref[floor], MUJOCO_SOLREF),
                      floor_solimp=None if floor is None else _own(model.geom_solimp[floor], MUJOCO_SOLIMP))
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
