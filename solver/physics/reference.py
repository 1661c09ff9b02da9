"""A reference motion to track: a qpos trajectory of the task's model (an assisted solution, a kept
action, any motion), resampled on the planning model's time grid with what the tracking objective
compares against — joint angles, joint and root velocities (MuJoCo's own finite difference of
consecutive poses), the character's body positions, root frame and centre of mass (MuJoCo forward
kinematics), which bodies touch the scene and are planted there, and whether the centre of mass is
over what touches.

Past its end the reference holds its last pose at rest, so a horizon that looks beyond the end asks
the character to stay there. Where the reference moves faster than a body can (`teleports`), it is
flagged: no physical motion follows it there.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from ..core.errors import InvalidInput
from ..core.limits import MAX_MOTION_S
from ..core.resample import resample_qpos

# Faster than this the reference is not a motion a body makes: a root moving this fast (m/s) or a
# joint turning this fast (rad/s) between two samples is a jump cut (a teleport).
TELEPORT_ROOT_SPEED = 12.0
TELEPORT_JOINT_SPEED = 60.0
# A character body within this gap (m) of the scene in the reference, moving slower than this speed
# (m/s), is planted there: the tracking objective holds it closer than the rest (a body the reference
# slides along the scene — an assisted motion's skidding feet — is not held).
CONTACT_GAP = 0.02
PLANTED_SPEED = 0.1
# The reference is balanced where its centre of mass lies over the convex hull of the bodies it has on
# the scene (their geoms' centres, seen from above) widened by this margin (m).
SUPPORT_MARGIN = 0.05


@dataclass
class Reference:
    """The reference on the grid t_i = i·dt, i = 0 … len − 1 (its end held for `pad` more steps)."""
    dt: float
    duration: float  # the reference's own length (s)
    qpos: np.ndarray  # (n, nq)
    qvel: np.ndarray  # (n, nv)
    xpos: dict[str, np.ndarray]  # character body → (n, 3) world position
    xquat: dict[str, np.ndarray]  # character body → (n, 4) world orientation
    feedforward: np.ndarray | None = None  # (n, nu_character) controls plans correct (servo targets)
    planted: dict[str, np.ndarray] | None = None  # character body → (n,) bool: at rest on the scene
    touching: dict[str, np.ndarray] | None = None  # character body → (n,) bool: within CONTACT_GAP of the scene
    com: np.ndarray | None = None  # (n, 3) the character's centre of mass
    balanced: np.ndarray | None = None  # (n,) bool: the centre of mass over the support of what touches
    comvel: np.ndarray | None = None  # (n, 3) its velocity

    def index(self, times: np.ndarray) -> np.ndarray:
        """Grid rows of `times` (clamped to the held end)."""
        return np.clip(np.rint(np.asarray(times) / self.dt).astype(int), 0, len(self.qpos) - 1)

    def digest(self) -> str:
        """A short hash of the reference (checkpoints are only valid for the same one)."""
        import hashlib
        h = hashlib.sha256(np.ascontiguousarray(self.qpos).tobytes())
        h.update(np.float64(self.dt).tobytes())
        return h.hexdigest()[:16]


def check_motion(times, qpos, nq: int, path: str) -> tuple[np.ndarray, np.ndarray]:
    """The reference's arrays as floats, or InvalidInput naming what is wrong."""
    try:
        times = np.asarray(times, dtype=float)
        qpos = np.asarray(qpos, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInput(path, "times and qpos must be numbers") from None
    if times.ndim != 1 or len(times) < 2:
        raise InvalidInput(f"{path}.times", "needs at least two samples")
    if qpos.ndim != 2 or qpos.shape[0] != len(times):
        raise InvalidInput(f"{path}.qpos", f"needs one row per time ({len(times)}), got shape {qpos.shape}")
    if qpos.shape[1] != nq:
        raise InvalidInput(f"{path}.qpos", f"rows have {qpos.shape[1]} numbers; the scene's model has nq = {nq} "
                           "(a motion of another scene?)")
    if not (np.all(np.isfinite(times)) and np.all(np.isfinite(qpos))):
        raise InvalidInput(path, "contains non-finite numbers")
    if np.any(np.diff(times) <= 0):
        i = int(np.argmax(np.diff(times) <= 0))
        raise InvalidInput(f"{path}.times[{i + 1}]", "times must increase")
    if abs(times[0]) > 1e-9:
        raise InvalidInput(f"{path}.times[0]", f"the reference starts at time 0, got {times[0]}")
    if times[-1] > MAX_MOTION_S:
        raise InvalidInput(f"{path}.times", f"the reference lasts {times[-1]:.6g} s; at most {MAX_MOTION_S:g} s")
    return times, qpos


def build_reference(model: mujoco.MjModel, bodies: list[str], times: np.ndarray, qpos: np.ndarray, dt: float,
                    pad_s: float) -> Reference:
    """The reference on the grid of `dt`, with `pad_s` seconds of its end held at rest."""
    duration = float(times[-1])
    n_motion = int(np.floor(duration / dt + 1e-9)) + 1
    n = n_motion + int(np.ceil(pad_s / dt)) + 1
    grid = np.minimum(np.arange(n) * dt, duration)
    q = resample_qpos(model, times, qpos, grid)
    v = np.zeros((n, model.nv))  # the held end is at rest
    for i in range(n_motion - 1):
        mujoco.mj_differentiatePos(model, v[i], dt, q[i], q[i + 1])
    if n_motion > 1:  # the motion's last sample moves as the one before it
        v[n_motion - 1] = v[n_motion - 2]
    data = mujoco.MjData(model)
    ids = [model.body(b).id for b in bodies]
    xpos = {b: np.zeros((n, 3)) for b in bodies}
    xquat = {b: np.zeros((n, 4)) for b in bodies}
    com = np.zeros((n, 3))
    touching = touching_scene(model, bodies, q)
    balanced = np.zeros(n, dtype=bool)
    for i in range(n):
        data.qpos[:] = q[i]
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        com[i] = data.subtree_com[ids[0]]  # the character's root body: its whole subtree
        for b, k in zip(bodies, ids):
            xpos[b][i] = data.xpos[k]
            xquat[b][i] = data.xquat[k]
        balanced[i] = over_support(model, data, [b for b in bodies if touching[b][i]], com[i])
    comvel = np.zeros((n, 3))  # the held end is at rest
    if n_motion > 1:
        comvel[:n_motion] = np.gradient(com[:n_motion], dt, axis=0)
    planted = {}
    for b in bodies:
        speed = np.zeros(n)
        if n_motion > 1:
            speed[:n_motion] = np.linalg.norm(np.gradient(xpos[b][:n_motion], dt, axis=0), axis=1)
        planted[b] = touching[b] & (speed < PLANTED_SPEED)
    return Reference(dt=dt, duration=duration, qpos=q, qvel=v, xpos=xpos, xquat=xquat, planted=planted,
                     touching=touching, com=com, comvel=comvel, balanced=balanced)


def support_points(model: mujoco.MjModel, data: mujoco.MjData, bodies: list[str]) -> np.ndarray:
    """(k, 2) where `bodies` bear weight, seen from above: their geoms' centres (in `data`'s pose) — the middle
    of the feet, a support narrower than the soles. With the capsules' ends too (what this said until a numpy
    geom type compared with MuJoCo's enum never matched), the capture's walk tracked 16.7 cm off on average
    against 9.4: more of its frames counted as balanced and held to their centre of mass (RESULTS)."""
    points = [data.geom_xpos[g][:2] for b in bodies for g in np.flatnonzero(model.geom_bodyid == model.body(b).id)]
    return np.array(points).reshape(-1, 2)


def over_support(model: mujoco.MjModel, data: mujoco.MjData, bodies: list[str], com: np.ndarray,
                 margin: float = SUPPORT_MARGIN) -> bool:
    """Whether `com` lies over the support of `bodies` in `data`'s pose (kinematics done): within
    `margin` of the convex hull of their support points (seen from above). No bodies: no support."""
    if not bodies:
        return False
    return hull_distance(support_points(model, data, bodies), com[:2]) <= margin


def convex_hull(points: np.ndarray) -> np.ndarray:
    """The corners of the convex hull of 2-D `points`, counter-clockwise (Andrew's monotone chain;
    scipy's Qhull would do, but Blender's Python has no scipy and the extension does not ship it)."""
    pts = sorted(set(map(tuple, np.round(np.asarray(points, dtype=float), 12))))
    if len(pts) <= 2:
        return np.array(pts).reshape(-1, 2)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    lower: list = []
    upper: list = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1])


def hull_distance(points: np.ndarray, x: np.ndarray) -> float:
    """Distance from 2-D point x to the convex hull of `points` (0 inside)."""
    ring = convex_hull(points)
    x = np.asarray(x, dtype=float)
    if len(ring) >= 3:
        edges = np.roll(ring, -1, axis=0) - ring
        rel = x - ring
        if np.all(edges[:, 0] * rel[:, 1] - edges[:, 1] * rel[:, 0] >= 0.0):  # left of every edge
            return 0.0
    if len(ring) == 1:
        return float(np.linalg.norm(x - ring[0]))
    best = np.inf
    for a, b in zip(ring, np.roll(ring, -1, axis=0) if len(ring) > 2 else ring[1:]):
        ab = b - a
        u = float(np.clip((x - a) @ ab / (ab @ ab), 0.0, 1.0))
        best = min(best, float(np.linalg.norm(x - (a + u * ab))))
    return best


def touching_scene(model: mujoco.MjModel, bodies: list[str], qpos: np.ndarray,
                   gap: float = CONTACT_GAP) -> dict[str, np.ndarray]:
    """Per character body, per pose of `qpos`: whether it is within `gap` of a body not in `bodies`
    (the floor, the furniture)."""
    near, _ = scene_distances(model, bodies, qpos, gap)
    return {b: near[:, j] <= gap for j, b in enumerate(bodies)}


def scene_distances(model: mujoco.MjModel, bodies: list[str], qpos: np.ndarray,
                    gap: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Per pose of `qpos` and body of `bodies`: the signed distance (m; negative inside) to the nearest
    geom of a body not in `bodies` (the floor, the furniture) where it is within `gap` (inf further),
    and that geom (-1 for none). Every pair that may collide (contype/conaffinity) is measured with
    `mj_geomDistance`: widening the geoms' margins after compiling would not do, as MuJoCo's broadphase
    keeps the bounding boxes compiled with the old ones (a foot 2 cm above the floor went unseen)."""
    index = {model.body(b).id: j for j, b in enumerate(bodies)}
    owner = model.geom_bodyid
    mine = [g for g in range(model.ngeom) if int(owner[g]) in index]
    scene = [g for g in range(model.ngeom) if int(owner[g]) not in index]
    ct, ca = model.geom_contype, model.geom_conaffinity
    pairs = [(c, g) for c in mine for g in scene if (ct[c] & ca[g]) or (ct[g] & ca[c])]
    dist = np.full((len(qpos), len(bodies)), np.inf)
    other = np.full((len(qpos), len(bodies)), -1, dtype=int)
    data = mujoco.MjData(model)
    fromto = np.zeros(6)
    for i, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        for c, g in pairs:
            d = mujoco.mj_geomDistance(model, data, c, g, gap, fromto)
            j = index[int(owner[c])]
            if d < gap and d < dist[i, j]:  # mj_geomDistance says `gap` for anything further
                dist[i, j], other[i, j] = d, g
    return dist, other


def servo_targets(model: mujoco.MjModel, reference: Reference, nu: int) -> np.ndarray:
    """Per grid row, the reference's angle of the joint each of the first `nu` actuators (PD servos
    on single joints) drives: the targets a tracking plan corrects."""
    joints = model.actuator_trnid[:nu, 0]
    return reference.qpos[:, model.jnt_qposadr[joints]].copy()


def teleports(model: mujoco.MjModel, times: np.ndarray, qpos: np.ndarray, root_dof: int,
              joint_dofs: np.ndarray) -> list[tuple[float, str]]:
    """(time, what) of every jump of the reference no body can make: the root (free joint at dof
    `root_dof`) moving faster than TELEPORT_ROOT_SPEED or a joint (`joint_dofs`) turning faster than
    TELEPORT_JOINT_SPEED between two samples."""
    out = []
    v = np.zeros(model.nv)
    for i in range(len(times) - 1):
        dt = float(times[i + 1] - times[i])
        mujoco.mj_differentiatePos(model, v, dt, qpos[i], qpos[i + 1])
        root = float(np.linalg.norm(v[root_dof:root_dof + 3]))
        joints = np.abs(v[joint_dofs])
        if root > TELEPORT_ROOT_SPEED:
            out.append((float(times[i + 1]), f"the root moves {root * dt:.2f} m in {dt:.3g} s"))
        elif joints.size and float(joints.max()) > TELEPORT_JOINT_SPEED:
            k = int(np.argmax(joints))
            out.append((float(times[i + 1]), f"joint dof {int(joint_dofs[k])} turns {np.degrees(joints[k] * dt):.0f}° "
                        f"in {dt:.3g} s"))
    return out
