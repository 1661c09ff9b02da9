"""How high a keyed jump rises. An animator keys "airborne, the feet 25 cm off the floor" and judges the
apex: a jump whose feet rose 6.5 cm has not reached that key, however close its joint angles came. A key
is airborne where its keyed pose's lowest point is AIRBORNE_M or more off the scene; the motion's apex is
the highest its lowest point gets off the scene between the keys before and after it."""
from __future__ import annotations

import mujoco
import numpy as np

AIRBORNE_M = 0.05  # a keyed pose this far off the scene (its lowest point) is in the air
APEX_SHARE = 0.8  # an airborne key's apex counts within 20% of its keyed height
REACH_M = 1.0  # clearances are measured up to this (MuJoCo's distance bound)


def clearance_of(model: mujoco.MjModel, character_bodies: list[str]):
    """A function of a full pose (qpos): how far its lowest point is off the scene (the floor and furniture:
    static geoms that collide), up to REACH_M."""
    ours = {model.body(b).id for b in character_bodies}
    mine = [g for g in range(model.ngeom) if int(model.geom_bodyid[g]) in ours]
    scene = [g for g in range(model.ngeom) if int(model.body_weldid[model.geom_bodyid[g]]) == 0  # the floor, furniture
             and (model.geom_contype[g] or model.geom_conaffinity[g])]
    data = mujoco.MjData(model)

    def clearance(q: np.ndarray) -> float:
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        return min((mujoco.mj_geomDistance(model, data, a, b, REACH_M, None) for a in mine for b in scene),
                   default=REACH_M)
    return clearance


def in_the_air(clearance, key_qpos: list[np.ndarray]) -> list[tuple[int, float]]:
    """(index, keyed clearance) of each key whose pose (full qpos) is AIRBORNE_M or more off the scene, by
    `clearance` (`clearance_of`); the start pose (key 0) is where the motion begins, not a key it goes to."""
    return [(k, c) for k, q in enumerate(key_qpos) if k > 0 and (c := clearance(q)) >= AIRBORNE_M]


def airborne_keys(model: mujoco.MjModel, character_bodies: list[str], key_qpos: list[np.ndarray],
                  names: list[str], key_times: list[float], times: np.ndarray, qpos: np.ndarray) -> list[dict]:
    """Per airborne key (`key_qpos`: full model poses, at `key_times` in the motion `times`/`qpos`):
    {"key" (its index), "name", "keyed_cm" (its pose's clearance), "apex_cm" (the motion's highest between
    the neighbouring keys; None where the motion stops before them), "apex_at_s", "reached" (apex within
    APEX_SHARE of keyed)}; [] for a motion with no key in the air. The start pose (key 0) is not judged."""
    clearance = clearance_of(model, character_bodies)
    out = []
    times = np.asarray(times, float)
    for k, keyed in in_the_air(clearance, key_qpos[:len(key_times)]):
        name, t = names[k], key_times[k]
        lo = key_times[k - 1] if k > 0 else times[0]
        hi = key_times[k + 1] if k + 1 < len(key_times) else times[-1]
        rows = np.flatnonzero((times > lo) & (times < hi))
        rows = rows[::max(1, len(rows) // 200)]  # a clearance every few milliseconds is plenty for an apex
        heights = [clearance(qpos[i]) for i in rows]
        best = int(np.argmax(heights)) if heights else None  # None: the motion stops before it gets there
        out.append({"key": k, "name": name, "time": round(float(t), 6), "keyed_cm": round(100 * keyed, 1),
                    "apex_cm": None if best is None else round(100 * heights[best], 1),
                    "apex_at_s": None if best is None else round(float(times[rows[best]]), 6),
                    "reached": best is not None and bool(heights[best] >= APEX_SHARE * keyed)})
    return out


def rises(key: dict) -> str:
    """How high an airborne key's motion rose: "rises 6 of the 25 cm keyed" (never "-0": a foot's contact
    depth rounds to it)."""
    return f"rises {max(0.0, key['apex_cm']):.0f} of the {key['keyed_cm']:.0f} cm keyed"


def airborne_words(keys: list[dict]) -> list[str]:
    """The words of airborne keys whose apex falls short: "'airborne' rises 6 of the 25 cm keyed" (not of
    one the motion stops before: where it stops says why)."""
    return [f"'{a['name']}' {rises(a)}" for a in keys if not a["reached"] and a["apex_cm"] is not None]
