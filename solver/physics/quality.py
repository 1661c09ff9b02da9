"""How good a solved motion looks, in the figures an animator checks before rendering: the deepest
penetration into anything, how far the feet slide while they touch something, how jerky the joints
are, and how long the character lies fallen when it should not.

Computed once per solution from its trajectory (MuJoCo's collision detection on each recorded
pose, `mj_fwdPosition`), so every method's solutions are measured alike.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from .foot_roll import end_pitch, forward_axes, roll_deg, side_axes, worst_roll
from .posture import CARRY_PELVIS_SHARE, LYING_TILT_DEG, Posture, at_rest, feet_down, standing_above_feet

FOOT_ROLES = ("foot_left", "foot_right")  # whose sliding is measured (a character playing neither: none)
FALLEN_HEAD_HEIGHT = 0.5  # m: a head below this, the torso lying (posture.LYING_TILT_DEG), has fallen
# m: a head has got up once it is this high; until then a head dipping below FALLEN_HEAD_HEIGHT is
# still getting up (a head lying on a 0.3 m bed sits at 0.48-0.53 m and bobs across the line).
RISEN_HEAD_HEIGHT = FALLEN_HEAD_HEIGHT + 0.1
MOVING_OBJECT_SPEED = 0.05  # m/s: a free object moving faster than this touches something, or it flies
# m: an object this close to something touches it. A box slid along a platform or held by a weld
# keeps a fraction of a millimetre of air now and then (MuJoCo's soft contacts), which is no flight.
TOUCH_TOLERANCE = 0.005
# deg: a foot that lost its touch and found it again turned less than this was dragged (its sole carried across);
# turned further, it rocked over (onto its heel, its toes or an edge), and its sole is not carried.
DRAG_TURN_DEG = 5.0
DRAG_COS = float(np.cos(np.radians(DRAG_TURN_DEG)))
END_WINDOW_S = 0.1  # s: the root's speed at the clip's end is measured over its last this long
# s: a foot that stops touching for less than this is still planted (MuJoCo's soft contacts chatter: a
# standing foot loses its touch for a step or two dozens of times a second; a step takes far longer).
PLANTED_GAP_S = 0.05


def character_hinges(model: mujoco.MjModel, character_bodies: list[str]) -> list[int]:
    """qpos addresses of the character's hinge joints."""
    ids = {model.body(b).id for b in character_bodies}
    return [int(model.jnt_qposadr[j]) for j in range(model.njnt)
            if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE and model.jnt_bodyid[j] in ids]


def head_was_up(head_z: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Per pose: whether the head has been at or above RISEN_HEAD_HEIGHT since its segment (the
    active keyframe, contiguous runs of `segment`) began — a low head before that is getting up, not
    a fall (the agent's `KeyframeTracker.watch_fall` reads it the same way)."""
    up = np.asarray(head_z) >= RISEN_HEAD_HEIGHT
    seg = np.asarray(segment)
    out = np.zeros(len(up), dtype=bool)
    starts = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]]) if len(seg) else np.zeros(0, dtype=int)
    for a, b in zip(starts, np.r_[starts[1:], len(seg)]):
        out[a:b] = np.logical_or.accumulate(up[a:b])
    return out


def motion_quality(model: mujoco.MjModel, character_bodies: list[str], times: np.ndarray, qpos: np.ndarray,
                   may_lie: np.ndarray | None = None, fps: float = 30.0, segment: np.ndarray | None = None,
                   roles: dict[str, str] | None = None, expected_touch: dict[str, np.ndarray] | None = None,
                   seated: np.ndarray | None = None) -> dict:
    """The quality figures of a trajectory (`qpos` per time in `times`), the feet and head read by their
    `roles` ({role: body}; the default humanoid's body names where not given):

    - `max_penetration_m`: the deepest overlap of a character geom with anything (the environment
      or its own other bodies), over every recorded pose, and `max_penetration_at`: where and when
      (`{"time_s", "bodies": [character body, what it went into]}`; None without any overlap), so the
      animator can go to that frame;
    - `foot_sliding_m`: how far the feet slide while they touch something outside the character: how far the
      soles' touching points travel over what they touch (`sole_tracks`; a foot rolling over its toes does not
      slide, one dragged while its contacts chatter does), per planted phase (touch lost for under PLANTED_GAP_S
      does not end one) from where each foot was set down (`planted_sliding`), summed over phases and feet, and
      `foot_sliding_most`: the phase that slid farthest (`{"m", "body", "from_s", "farthest_s", "to_s"}`: set
      down, farthest from there, lifted; None without any), where the animator looks first;
    - `foot_roll`: how far the planted feet roll onto their edges (`foot_roll.worst_roll`: the largest sideways
      tilt a planted foot held, which foot and when, and the time some planted foot spent past
      `foot_roll.ROLLED_DEG`); None without both feet or where none is planted;
    - `foot_end_pitch`: the planted foot left furthest on its heel (positive: toes up) or its toes over the clip's
      last half second (`foot_roll.end_pitch`: `{"deg", "body"}`); None without both feet or none planted there;
    - `jerk_rms`: the RMS of the hinge angles' third time derivative (rad/s³, finite differences)
      at `fps` frames per second — the rate the animator renders, where jitter shows;
    - `max_body_speed`: the fastest any character body moved between consecutive poses
      (`{"mps", "body", "time_s"}`; None with fewer than two poses): a limb whipped at 4 m/s into the
      scene sinks about 2 cm into it, and the animator sees a flail;
    - `fall_s`: the time the head spends below FALLEN_HEAD_HEIGHT, the torso lying (at least LYING_TILT_DEG from
      upright: sitting low is no fall; the head alone without a torso), while `may_lie` (per pose) does not allow
      lying — with `segment` (the active keyframe per pose), only after the head has risen to RISEN_HEAD_HEIGHT
      in that segment, so getting up from lying is not a fall; None where `may_lie` is None (the method does not
      say when lying is meant) or the character has no head;
    - `stumble`: the first time a body other than the feet (and what they carry: the toes) touches the
      floor where lying is not allowed (`may_lie`; with `segment`, once the head has risen in that
      segment, as for falls) and `expected_touch` ({body: (n,) bool}, a reference's own touching) does
      not have it touching — a knee or a hand put down to catch the character (`{"time_s", "body"}`; None
      without one, or where `may_lie` is None);
    - `end`: how the clip ends (`end_state`): the root's speed over its last END_WINDOW_S, the head's
      height above the feet as a share of its standing height, the torso's lean from upright;
    - with free objects in the scene (a box): `object_penetration_m`, the deepest overlap of an
      object with anything, and `object_unsupported_s`, the time an object moves (faster than
      MOVING_OBJECT_SPEED) touching nothing (within TOUCH_TOLERANCE) in two consecutive poses —
      thrown, dropped, or carried by no hand; and `carry` (`carry_posture`): how the character carries
      it, None where nothing is carried;
    - with `seated` (per pose: the active keyframe means sitting), `feet_up`: how long a foot is up by the
      seat there (`feet_up_seated`) — squatting or kneeling on the seat between the keyframes' holds, which
      count only with the feet down.
    """
    qpos = np.asarray(qpos, dtype=float)
    times = np.asarray(times, dtype=float)
    ids = [model.body(b).id for b in character_bodies]
    objects = free_objects(model, ids)
    roles = {b: b for b in character_bodies} if roles is None else roles
    head = roles.get("head")
    foot_ids = [model.body(roles[r]).id for r in FOOT_ROLES if r in roles]  # the columns of the scan's feet
    rest = at_rest(model)
    torso = model.body(roles["torso"]).id if "torso" in roles else None
    torso = None if torso is None else (torso, rest.xmat[torso].reshape(3, 3).T @ [0.0, 0.0, 1.0])
    scan = _scan(model, ids, foot_ids, model.body(head).id if head is not None else None, objects, qpos, torso)
    n = len(qpos)
    dt = float(np.median(np.diff(times))) if n > 1 else 0.0
    planted = bridged(scan.foot_down, int(round(PLANTED_GAP_S / dt)) if dt else 0)
    slides = planted_slides(sole_tracks(scan), planted)
    feet = [roles[r] for r in FOOT_ROLES if r in roles]
    sides, forward = side_axes(model, rest, foot_ids), forward_axes(model, rest, foot_ids)
    fall = None
    if head is not None and may_lie is not None:
        # lying down, not sitting low (a seat on the floor puts the head near the line, the torso up)
        fallen = (scan.head_z < FALLEN_HEAD_HEIGHT) & (scan.torso_up <= np.cos(np.radians(LYING_TILT_DEG)))
        fallen &= ~np.asarray(may_lie, dtype=bool) & (True if segment is None else head_was_up(scan.head_z, segment))
        fall = float(np.sum(np.diff(times, append=times[-1])[fallen])) if n else 0.0
    char_geom = np.isin(model.geom_bodyid, ids)
    stumble = None
    if may_lie is not None:
        stumble = _first_stumble(model, character_bodies, ids, roles, times, scan, np.asarray(may_lie, dtype=bool),
                                 segment, expected_touch)
    out = {"max_penetration_m": round(float(scan.depth.max(initial=0.0)), 6),
           "max_penetration_at": _deepest(model, char_geom, times, scan.depth, scan.deepest_pair),
           "foot_sliding_m": round(_slid_in_all(slides), 6),
           "foot_sliding_most": _most_slid(feet, times, slides),
           "foot_roll": None if sides is None else worst_roll(feet, times, roll_deg(scan.foot_mat, sides), planted),
           "foot_end_pitch": None if forward is None else end_pitch(feet, times, scan.foot_mat, forward, planted),
           "jerk_rms": round(_jerk_rms(model, character_bodies, times, qpos, fps), 3),
           "max_body_speed": _fastest(character_bodies, times, scan.body_xyz),
           "fall_s": None if fall is None else round(fall, 6),
           "stumble": stumble,
           "end": end_state(model, roles, model.body(character_bodies[0]).id, times, qpos)}
    if objects and n > 1:  # objects the character handles: never through anything, never carried by nothing
        speed = np.linalg.norm(np.diff(scan.obj_xyz, axis=0), axis=-1) / np.maximum(np.diff(times), 1e-12)[:, None]
        loose = (speed > MOVING_OBJECT_SPEED) & ~scan.obj_touch[1:] & ~scan.obj_touch[:-1]
        out["object_penetration_m"] = round(float(scan.obj_depth.max(initial=0.0)), 6)
        out["object_unsupported_s"] = round(float(np.sum(np.diff(times)[:, None] * loose)), 6)
        out["carry"] = carry_posture(model, roles, ids, times, scan)
    if seated is not None:
        out["feet_up"] = feet_up_seated(model, roles, ids, foot_ids, times, scan, np.asarray(seated, dtype=bool))
    return out


def feet_up_seated(model: mujoco.MjModel, roles: dict[str, str], ids: list[int], foot_ids: list[int],
                   times: np.ndarray, scan: _PoseScan, seated: np.ndarray) -> dict | None:
    """Where the character is meant to sit (`seated`, per pose) but has a foot up by the seat — off the floor
    and not as far below its pelvis as `posture.FeetDown` asks: `{"s", "from_s"}`, the time of it and when it
    first happens; None where it never does, or without the pelvis and feet roles."""
    if "pelvis" not in roles or not scan.foot_pos.shape[1]:
        return None
    down = feet_down(model, at_rest(model), roles)
    if down is None:
        return None
    pelvis = scan.body_xyz[:, ids.index(model.body(roles["pelvis"]).id), 2]
    up = seated & np.any([down.up_by(pelvis, scan.foot_pos[:, k, 2], foot) > 0.0 for k, foot in enumerate(foot_ids)],
                         axis=0)
    if not up.any():
        return None
    dt = np.diff(times, append=times[-1])
    return {"s": round(float(dt[up].sum()), 6), "from_s": round(float(times[int(np.argmax(up))]), 6)}


def carry_posture(model: mujoco.MjModel, roles: dict[str, str], ids: list[int], times: np.ndarray,
                  scan: _PoseScan) -> dict | None:
    """How the character carries what it holds, where an object touches the character and nothing else:
    `held_s`, that time; `pelvis_share`, the median height of the pelvis above the lower foot over it, as
    a share of its standing height (`posture.standing_above_feet`); `crouched_s`, the time of it with the
    pelvis below CARRY_PELVIS_SHARE — a box lifted from knee height and carried in a deep crouch.
    None where nothing is carried, or without the pelvis and feet roles."""
    held = (scan.obj_touch & ~scan.obj_rests).any(axis=1)
    if not held.any() or "pelvis" not in roles or not scan.foot_pos.shape[1]:
        return None
    standing = standing_above_feet(model, at_rest(model), roles, "pelvis")
    if not standing or standing <= 0:
        return None
    pelvis = scan.body_xyz[:, ids.index(model.body(roles["pelvis"]).id), 2]
    share = (pelvis - scan.foot_pos[:, :, 2].min(axis=1)) / standing
    dt = np.diff(times, append=times[-1])
    return {"held_s": round(float(dt[held].sum()), 6), "pelvis_share": round(float(np.median(share[held])), 4),
            "crouched_s": round(float(dt[held & (share < CARRY_PELVIS_SHARE)].sum()), 6)}


def _first_stumble(model: mujoco.MjModel, bodies: list[str], ids: list[int], roles: dict[str, str],
                   times: np.ndarray, scan: _PoseScan, may_lie: np.ndarray, segment: np.ndarray | None,
                   expected: dict[str, np.ndarray] | None) -> dict | None:
    """`motion_quality`'s `stumble`: when and with which body the character first caught itself on the
    floor with something other than its feet."""
    carried = foot_carried(model, ids, roles)
    if carried is None:  # nothing to stand on by role: every touch would read as a stumble
        return None
    caught = scan.on_floor & ~carried & ~may_lie[:, None]
    if segment is not None and "head" in roles:
        caught &= head_was_up(scan.head_z, segment)[:, None]
    if expected:
        for k, name in enumerate(bodies):
            if name in expected:
                caught[:, k] &= ~np.asarray(expected[name], dtype=bool)
    hits = np.argwhere(caught)
    if not len(hits):
        return None
    i, k = hits[0]
    return {"time_s": round(float(times[i]), 6), "body": bodies[k]}


def foot_carried(model: mujoco.MjModel, ids: list[int], roles: dict[str, str]) -> np.ndarray | None:
    """(len(ids),) bool: the bodies the feet carry — the feet and what hangs below them (the toes), which may
    touch the floor without a stumble; None where no body plays a foot."""
    feet = [model.body(roles[r]).id for r in FOOT_ROLES if r in roles]
    if not feet:
        return None
    return np.array([any(hangs_below(model, int(b), f) for f in feet) for b in ids], dtype=bool)


def floor_planes(model: mujoco.MjModel) -> np.ndarray:
    """(ngeom,) bool: the world's planes, the floor a body is on (not a seat or a table)."""
    return (model.geom_bodyid == 0) & (model.geom_type == int(mujoco.mjtGeom.mjGEOM_PLANE))


def hangs_below(model: mujoco.MjModel, body: int, ancestor: int) -> bool:
    """Whether `body` is `ancestor` or hangs below it in the tree."""
    while body > 0:
        if body == ancestor:
            return True
        body = int(model.body_parentid[body])
    return False


def end_state(model: mujoco.MjModel, roles: dict[str, str], root: int, times: np.ndarray,
              qpos: np.ndarray) -> dict | None:
    """How the clip ends, as an animator reads its last frames: `root_speed_mps`, the root's speed over
    the last END_WINDOW_S (a clip that ends mid-stride or toppling); `head_share`, the head's height
    above the feet as a share of its standing height (a "stand" that ends crouched); `torso_tilt_deg`,
    the torso's lean from upright (`posture.Posture`; None without the role). None without poses."""
    if not len(qpos):
        return None
    posture = Posture(model, roles, root)
    last = max(0, int(np.searchsorted(times, times[-1] - END_WINDOW_S)) - 1)
    span = max(float(times[-1] - times[last]), 1e-9)
    speed = 0.0
    if posture.root_dof is not None:
        adr = int(model.jnt_qposadr[model.body_jntadr[root]])
        speed = float(np.linalg.norm(qpos[-1, adr:adr + 3] - qpos[last, adr:adr + 3]) / span)
    data = mujoco.MjData(model)
    data.qpos[:] = qpos[-1]
    mujoco.mj_kinematics(model, data)
    share, tilt = posture.head_share(data), posture.torso_tilt_deg(data)
    return {"root_speed_mps": round(speed, 4), "head_share": None if share is None else round(share, 4),
            "torso_tilt_deg": None if tilt is None else round(tilt, 2)}


def planted_sliding(xy: np.ndarray, planted: np.ndarray) -> float:
    """Metres the feet (`xy`, (n, nfeet, 2) their positions seen from above) slide where they are planted
    (`planted`, (n, nfeet): where the foot touches the scene, or where a reference has it at rest there):
    per planted phase of a foot (a run of planted poses), how far from where it was set down it gets, summed
    over the phases and feet. A foot set down and left there slides 0 however its contact chatters; one dragged 10 cm
    slides 10 cm. The same function measures a motion and its reference."""
    return _slid_in_all(planted_slides(xy, planted))


def _slid_in_all(slides: list[tuple[int, int, int, int, float]]) -> float:
    """The metres of every phase of `planted_slides`, summed in their order."""
    return sum((phase[-1] for phase in slides), 0.0)


def planted_slides(xy: np.ndarray, planted: np.ndarray) -> list[tuple[int, int, int, int, float]]:
    """Each planted phase of `planted_sliding` as (foot, pose it was set down at, pose it got farthest at, its
    last pose, metres it got from where it was set down)."""
    phases = []
    for k in range(xy.shape[1]):
        for a, b in runs(planted[:, k]):
            away = np.linalg.norm(xy[a:b, k] - xy[a, k], axis=-1)
            far = int(np.argmax(away))
            phases.append((k, int(a), int(a) + far, int(b) - 1, float(away[far])))
    return phases


def _most_slid(feet: list[str], times: np.ndarray, slides: list[tuple[int, int, int, int, float]]) -> dict | None:
    """The planted phase that slid farthest, for the animator to go to: `{"m", "body", "from_s", "farthest_s",
    "to_s"}` (set down, farthest from there, lifted or the clip's end); None where no foot slid."""
    if not slides:
        return None
    k, a, far, b, slid = max(slides, key=lambda phase: phase[-1])
    if slid <= 0.0:
        return None
    return {"m": round(slid, 6), "body": feet[k], "from_s": round(float(times[a]), 6),
            "farthest_s": round(float(times[far]), 6), "to_s": round(float(times[b]), 6)}


def sole_tracks(scan: _PoseScan) -> np.ndarray:
    """(n, nfeet, 2) where each foot's sole has slipped to, seen from above: from pose to pose, the point
    where the foot touched (the mean of its contacts with the scene) carried with the foot to the next pose it
    touches at, its horizontal move added up, where the foot stays within TOUCH_TOLERANCE of the scene between
    them — so a foot rolling from heel to toe or turning on its heel stays put, one dragged moves as far as it is
    dragged (its contacts chattering, lost for a step a fraction of a millimetre up and found again a centimetre
    on, as MuJoCo's soft contacts do under a dragged foot), and one that grazes the scene and swings on is not
    carried across its swing. Across a lost touch only a drag is carried: the point still on the scene and the
    foot turned less than DRAG_TURN_DEG — one rocking over onto its heel or edge meanwhile slid nowhere."""
    n, nfeet = scan.foot_down.shape
    steps = np.zeros((n, nfeet, 2))
    for k in range(nfeet):
        at = np.flatnonzero(scan.foot_down[:, k])
        if len(at) < 2:
            continue
        before, after = at[:-1], at[1:]
        away = np.cumsum(~scan.foot_near[:, k])  # near the scene all the way from one touch to the next
        joined = away[after] == away[before]
        before, after = before[joined], after[joined]
        arm = np.einsum("nji,nj->ni", scan.foot_mat[before, k], scan.foot_touch[before, k] - scan.foot_pos[before, k])
        carried = np.einsum("nij,nj->ni", scan.foot_mat[after, k], arm) + scan.foot_pos[after, k]
        moved = carried - scan.foot_touch[before, k]
        turn = np.einsum("nij,nij->n", scan.foot_mat[before, k], scan.foot_mat[after, k])  # 1 + 2 cos(angle)
        slid = (after == before + 1) | ((np.abs(moved[:, 2]) <= TOUCH_TOLERANCE) & (turn >= 1 + 2 * DRAG_COS))
        steps[after[slid], k] = moved[slid, :2]
    return np.cumsum(steps, axis=0)


def bridged(planted: np.ndarray, gap: int) -> np.ndarray:
    """`planted` (n, nfeet) with each foot's gaps of fewer than `gap` poses between two planted runs filled
    in: one planted phase, not two."""
    out = np.array(planted, dtype=bool)
    for k in range(out.shape[1]):
        spans = runs(out[:, k])
        for (_, end), (start, _) in zip(spans[:-1], spans[1:]):
            if start - end < gap:
                out[end:start, k] = True
    return out


def runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of each run of True in `flags`."""
    edges = np.diff(np.r_[0, flags.astype(np.int8), 0])
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)))



@dataclass
class _PoseScan:
    """Per pose of a trajectory: the deepest character contact (depth and geoms), the feet's positions,
    orientations, touch and where they touch (the mean of their contacts with the scene), the head's
    height, the bodies' and the free objects' positions, the objects' deepest overlap and touch, and
    whether they touch anything but the character."""
    depth: np.ndarray
    deepest_pair: np.ndarray
    foot_pos: np.ndarray
    foot_mat: np.ndarray
    foot_down: np.ndarray
    foot_near: np.ndarray  # (n, nfeet): within TOUCH_TOLERANCE of the scene (touching or not)
    foot_touch: np.ndarray
    head_z: np.ndarray
    torso_up: np.ndarray  # (n,): the height of the torso's up axis (the cosine of its lean; 0 without a torso)
    body_xyz: np.ndarray
    obj_xyz: np.ndarray
    obj_depth: np.ndarray
    obj_touch: np.ndarray
    obj_rests: np.ndarray  # (n, objects): touching something other than the character (set down, or sliding)
    on_floor: np.ndarray  # (n, bodies): which character bodies touch the floor plane


def _scan(model: mujoco.MjModel, ids: list[int], feet: list[int], head: int | None, objects: list[int],
          qpos: np.ndarray, torso: tuple[int, np.ndarray] | None = None) -> _PoseScan:
    """Every pose's contacts and positions (`_PoseScan`), from MuJoCo's collision of each pose."""
    char_body = np.isin(np.arange(model.nbody), ids)
    char_geom = char_body[model.geom_bodyid]
    obj_geom = np.isin(model.geom_bodyid, objects)
    # near-contacts reported too (positive distances), for the objects' touch and the feet's nearness only
    near_geom = obj_geom | np.isin(model.geom_bodyid, feet)
    if near_geom.any():
        model = _with_margin(model, near_geom, TOUCH_TOLERANCE)
    data = mujoco.MjData(model)
    n = len(qpos)
    nf = len(feet)
    scan = _PoseScan(depth=np.zeros(n), deepest_pair=np.zeros((n, 2), dtype=int), foot_pos=np.zeros((n, nf, 3)),
                     foot_mat=np.zeros((n, nf, 3, 3)), foot_down=np.zeros((n, nf), dtype=bool),
                     foot_near=np.zeros((n, nf), dtype=bool),
                     foot_touch=np.zeros((n, nf, 3)), head_z=np.zeros(n), torso_up=np.zeros(n),
                     body_xyz=np.zeros((n, len(ids), 3)), obj_xyz=np.zeros((n, len(objects), 3)),
                     obj_depth=np.zeros(n), obj_touch=np.zeros((n, len(objects)), dtype=bool),
                     obj_rests=np.zeros((n, len(objects)), dtype=bool),
                     on_floor=np.zeros((n, len(ids)), dtype=bool))
    floor_geom = floor_planes(model)
    column = {b: k for k, b in enumerate(ids)}
    for i in range(n):
        data.qpos[:] = qpos[i]
        mujoco.mj_fwdPosition(model, data)
        con = data.contact[: data.ncon]
        if data.ncon:
            g = np.asarray(con.geom)
            mine = char_geom[g[:, 0]] | char_geom[g[:, 1]]
            if mine.any():
                k = int(np.argmin(np.where(mine, np.asarray(con.dist), np.inf)))
                scan.depth[i], scan.deepest_pair[i] = max(0.0, -float(con.dist[k])), g[k]
            bodies = model.geom_bodyid[g]
            on_obj = obj_geom[g[:, 0]] | obj_geom[g[:, 1]]
            if on_obj.any():
                scan.obj_depth[i] = max(0.0, -float(np.min(np.asarray(con.dist)[on_obj])))
            for k, o in enumerate(objects):
                on = (bodies[:, 0] == o) | (bodies[:, 1] == o)
                scan.obj_touch[i, k] = bool(on.any())
                other = np.where(bodies[:, 0] == o, bodies[:, 1], bodies[:, 0])[on]
                scan.obj_rests[i, k] = bool((~char_body[other]).any())  # MuJoCo never pairs a body with itself
            near = np.asarray(con.dist) > 0.0  # within the margin, not touching: counts for nothing else
            for k, f in enumerate(feet):
                scan.foot_near[i, k] = bool(_with_scene(bodies, f, char_body).any())
            points = np.asarray(con.pos)
            if near.any():
                g, bodies, mine, points = g[~near], bodies[~near], mine[~near], points[~near]
            for a, b in ((0, 1), (1, 0)):
                for body in bodies[floor_geom[g[:, b]] & char_geom[g[:, a]], a]:
                    scan.on_floor[i, column[int(body)]] = True
            for k, f in enumerate(feet):
                touching = _with_scene(bodies, f, char_body)
                if touching.any():
                    scan.foot_down[i, k] = True
                    scan.foot_touch[i, k] = points[touching].mean(axis=0)
        scan.foot_pos[i] = data.xpos[feet]
        scan.foot_mat[i] = data.xmat[feet].reshape(-1, 3, 3)
        scan.body_xyz[i] = data.xpos[ids]
        scan.obj_xyz[i] = data.xpos[objects]
        if head is not None:
            scan.head_z[i] = data.xpos[head, 2]
        if torso is not None:  # (the body, its up axis in its own frame)
            scan.torso_up[i] = data.xmat[torso[0]].reshape(3, 3)[2] @ torso[1]
    return scan


def _jerk_rms(model: mujoco.MjModel, character_bodies: list[str], times: np.ndarray, qpos: np.ndarray,
              fps: float) -> float:
    """RMS of the hinge angles' third derivative at `fps` frames per second (0 with under 4 frames)."""
    hinge = character_hinges(model, character_bodies)
    frames = np.arange(times[0], times[-1] + 1e-9, 1.0 / fps) if len(qpos) else np.zeros(0)
    if len(frames) <= 3 or not hinge:
        return 0.0
    angles = np.stack([np.interp(frames, times, qpos[:, a]) for a in hinge], axis=1)
    return float(np.sqrt(np.mean((np.diff(angles, n=3, axis=0) * fps ** 3) ** 2)))


def _fastest(bodies: list[str], times: np.ndarray, xyz: np.ndarray) -> dict | None:
    """The fastest body between consecutive poses and when (the later pose's time)."""
    if len(times) < 2 or not bodies:
        return None
    speed = np.linalg.norm(np.diff(xyz, axis=0), axis=-1) / np.maximum(np.diff(times), 1e-12)[:, None]
    i, b = np.unravel_index(int(np.argmax(speed)), speed.shape)
    return {"mps": round(float(speed[i, b]), 4), "body": bodies[b], "time_s": round(float(times[i + 1]), 6)}


def _with_scene(bodies: np.ndarray, body: int, char_body: np.ndarray) -> np.ndarray:
    """Which contacts (their two bodies per row of `bodies`) are between `body` and something not the character."""
    return ((bodies[:, 0] == body) & ~char_body[bodies[:, 1]]) | ((bodies[:, 1] == body) & ~char_body[bodies[:, 0]])


def _deepest(model: mujoco.MjModel, char_geom: np.ndarray, times: np.ndarray, depth: np.ndarray,
             pairs: np.ndarray) -> dict | None:
    """When the deepest overlap happened and between what: the character's body first, then the body it
    went into (a world geom by its own name, e.g. the floor); None where nothing overlapped."""
    if not len(depth) or depth.max() <= 0.0:
        return None
    i = int(np.argmax(depth))
    a, b = (int(x) for x in pairs[i])
    if not char_geom[a]:
        a, b = b, a
    return {"time_s": round(float(times[i]), 6), "bodies": [geom_owner(model, a), geom_owner(model, b)]}


def geom_owner(model: mujoco.MjModel, geom: int) -> str:
    """A geom's body by name; a geom of the world body (floor, walls) by its own name."""
    body = int(model.geom_bodyid[geom])
    if body == 0:
        return model.geom(geom).name or "world"
    return model.body(body).name


def _with_margin(model: mujoco.MjModel, geoms: np.ndarray, margin: float) -> mujoco.MjModel:
    """A copy of `model` whose `geoms` report contacts up to `margin` apart."""
    import copy
    out = copy.deepcopy(model)
    out.geom_margin[geoms] = margin
    return out


def free_objects(model: mujoco.MjModel, character_ids) -> list[int]:
    """Body ids of the free objects of the scene (free-jointed, not the character, not a thrown ball)."""
    from ..formats.perturbations import BALL_PREFIX
    out = []
    for j in range(model.njnt):
        b = int(model.jnt_bodyid[j])
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE and b not in character_ids \
                and not model.body(b).name.startswith(BALL_PREFIX):
            out.append(b)
    return out
