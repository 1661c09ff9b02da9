"""How faithfully a physical motion follows its reference (a capture, a kept action), in the figures an
animator reads: how many centimetres each body is off the reference on average and at worst, the feet's
sliding added or removed compared with the reference's own (the same function on both), floating where
the reference touches, and a verdict — within the tolerances over the whole clip, or where it departs,
by how much, and what in the reference makes it hard to follow there.

What the reference itself asks that no body can do is found before any physics (`reference_problems`):
a body sunk into the floor, and weight resting on nothing (a capture that sits on a chair the scene
does not have).
"""
from __future__ import annotations

import mujoco
import numpy as np

from .quality import FOOT_ROLES, geom_owner, planted_sliding, runs
from .reference import Reference, hull_distance, scene_distances, support_points, touching_scene

# The whole-clip tolerances of a physical version of a capture: the character's bodies off the
# reference by this much on average over the clip (m), and in no frame by more than WORST_TOLERANCE
# on average over its bodies.
MEAN_TOLERANCE = 0.05
WORST_TOLERANCE = 0.15
# A body of the reference sunk deeper than this into the scene (m) is a pose no body can take.
SUNK_DEPTH = 0.03
# The reference's weight outside what it touches (its centre of mass this far, m, outside the support of
# the bodies within SUPPORT_GAP of the scene, seen from above) for this long (s) rests on something the
# scene lacks. A captured foot standing hovers up to a few centimetres above the floor.
UNSUPPORTED_DISTANCE = 0.1
UNSUPPORTED_S = 0.3
SUPPORT_GAP = 0.05
# A body the reference has on the scene floats where the motion holds it further than this (m) off it.
FLOAT_GAP = 0.04


def body_positions(model: mujoco.MjModel, bodies: list[str], qpos: np.ndarray) -> np.ndarray:
    """(n, nbody, 3) world positions of `bodies` in each pose (MuJoCo forward kinematics)."""
    data = mujoco.MjData(model)
    ids = [model.body(b).id for b in bodies]
    out = np.zeros((len(qpos), len(ids), 3))
    for i, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        out[i] = data.xpos[ids]
    return out


def reference_problems(model: mujoco.MjModel, bodies: list[str], reference: Reference) -> list[dict]:
    """What the reference asks that no body can do, in time order: `{"from_s", "to_s", "body", "what"}`
    — a body sunk more than SUNK_DEPTH into the scene (its deepest moment), and weight resting on
    nothing for longer than UNSUPPORTED_S (its centre of mass more than UNSUPPORTED_DISTANCE outside
    what the reference touches while it touches something)."""
    n = int(np.floor(reference.duration / reference.dt + 1e-9)) + 1
    out = []
    dist, against = scene_distances(model, bodies, reference.qpos[:n], SUPPORT_GAP)  # sunk and near, one scan
    for j, body in enumerate(bodies):
        if -dist[:, j].min() > SUNK_DEPTH:
            i = int(np.argmin(dist[:, j]))
            out.append({"from_s": round(i * reference.dt, 3), "to_s": round(i * reference.dt, 3), "body": body,
                        "what": f"the reference's {body} is {-100 * dist[i, j]:.0f} cm inside "
                                f"{geom_owner(model, int(against[i, j]))} at {i * reference.dt:.2f} s"})
    if reference.com is not None:
        touching = dist < SUPPORT_GAP
        outside = _support_distance(model, bodies, reference, n, touching)
        lost = (outside > UNSUPPORTED_DISTANCE) & touching.any(axis=1)
        for a, b in runs(lost):
            if (b - a) * reference.dt >= UNSUPPORTED_S:
                worst = a + int(np.argmax(outside[a:b]))
                out.append({"from_s": round(a * reference.dt, 3), "to_s": round((b - 1) * reference.dt, 3),
                            "body": None,
                            "what": f"from {a * reference.dt:.2f} s to {(b - 1) * reference.dt:.2f} s the reference's "
                                    f"weight rests on nothing ({100 * outside[worst]:.0f} cm outside what it touches "
                                    "at worst): add a collider where it sits or leans"})
    return sorted(out, key=lambda p: p["from_s"])


def fidelity(model: mujoco.MjModel, bodies: list[str], roles: dict[str, str], reference: Reference,
             times: np.ndarray, qpos: np.ndarray, problems: list[dict] | None = None, judge: bool = True) -> dict:
    """The motion (`qpos` at `times`) against the reference at the same times: `mean_cm` (the bodies'
    distance from the reference's, averaged), `worst` (the frame whose bodies are furthest off on
    average: time, cm, and its furthest body), `per_body_cm` ({body: [mean, max]}),
    `foot_sliding_cm` (where the reference plants a foot: the motion's sliding and the reference's own,
    the same function), `floating` (seconds a body the reference has on the scene is held more than
    FLOAT_GAP off it, and the longest-floating body), `covers_s`
    (how much of the reference the motion covers), and `within` with `why`: the whole reference
    covered, MEAN_TOLERANCE and WORST_TOLERANCE met (with `judge`; else `within` is None)."""
    rows = reference.index(times)
    got = body_positions(model, bodies, qpos)
    want = np.stack([reference.xpos[b][rows] for b in bodies], axis=1)
    off = np.linalg.norm(got - want, axis=-1)  # (n, nbody)
    per_frame = off.mean(axis=1)
    w = int(np.argmax(per_frame))
    far = int(np.argmax(off[w]))
    feet = [bodies.index(roles[r]) for r in FOOT_ROLES if roles.get(r) in bodies]
    planted = np.stack([reference.planted[bodies[f]][rows] for f in feet], axis=1) if feet and reference.planted \
        else np.zeros((len(rows), len(feet)), dtype=bool)
    sliding = planted_sliding(got[:, feet, :2], planted)
    own = planted_sliding(want[:, feet, :2], planted)
    floating = _floating(model, bodies, reference, rows, qpos, times)
    covers = min(float(times[-1]), reference.duration) if len(times) else 0.0
    out = {"mean_cm": round(100 * float(off.mean()), 2),
           "worst": {"time_s": round(float(times[w]), 3), "cm": round(100 * float(per_frame[w]), 2),
                     "body": bodies[far], "body_cm": round(100 * float(off[w, far]), 2)},
           "per_body_cm": {b: [round(100 * float(off[:, j].mean()), 2), round(100 * float(off[:, j].max()), 2)]
                           for j, b in enumerate(bodies)},
           "foot_sliding_cm": {"motion": round(100 * sliding, 2), "reference": round(100 * own, 2),
                               "added": round(100 * (sliding - own), 2)},
           "floating": floating, "covers_s": round(covers, 3), "duration_s": round(reference.duration, 3),
           "within": None, "why": None}
    if judge:
        out["within"], out["why"] = _verdict(out, reference, problems or [])
    return out


def _verdict(fig: dict, reference: Reference, problems: list[dict]) -> tuple[bool, str | None]:
    """Within the tolerances over the whole clip, or why not in an animator's words (and what in the
    reference near there no body can do)."""
    why = []
    if fig["covers_s"] < reference.duration - 2 * reference.dt:
        why.append(f"follows the reference only to {fig['covers_s']:.2f} s of {reference.duration:.2f} s")
    if fig["mean_cm"] > 100 * MEAN_TOLERANCE:
        why.append(f"{fig['mean_cm']:.1f} cm off the reference on average ({100 * MEAN_TOLERANCE:.0f} cm allowed)")
    worst = fig["worst"]
    if worst["cm"] > 100 * WORST_TOLERANCE:
        why.append(f"{worst['cm']:.0f} cm off at {worst['time_s']:.2f} s ({worst['body']} {worst['body_cm']:.0f} cm; "
                   f"{100 * WORST_TOLERANCE:.0f} cm allowed)")
    if not why:
        return True, None
    at = min(fig["covers_s"], worst["time_s"]) if fig["covers_s"] < reference.duration else worst["time_s"]
    near = [p["what"] for p in problems if p["from_s"] - 0.5 <= at <= p["to_s"] + 0.5]
    return False, "; ".join(why + near)


def _floating(model: mujoco.MjModel, bodies: list[str], reference: Reference, rows: np.ndarray, qpos: np.ndarray,
              times: np.ndarray) -> dict:
    """Seconds some body the reference has on the scene is more than FLOAT_GAP off it in the motion, and
    the longest-floating body."""
    if reference.touching is None or len(qpos) < 2:
        return {"s": 0.0, "body": None}
    near = touching_scene(model, bodies, qpos, FLOAT_GAP)
    dt = np.diff(times, append=times[-1])
    off = np.stack([reference.touching[b][rows] & ~near[b] for b in bodies], axis=1)  # (n, nbody)
    per_body = dt @ off
    j = int(np.argmax(per_body))
    return {"s": round(float(dt @ off.any(axis=1)), 3), "body": bodies[j] if per_body[j] > 0 else None}


def _support_distance(model: mujoco.MjModel, bodies: list[str], reference: Reference, n: int,
                      touching: np.ndarray) -> np.ndarray:
    """Per grid row: how far (m, seen from above) the reference's centre of mass is outside the support
    of the bodies it touches the scene with (0 inside or touching nothing)."""
    data = mujoco.MjData(model)
    out = np.zeros(n)
    for i in range(n):
        on = [b for b, t in zip(bodies, touching[i]) if t]
        if not on:
            continue
        data.qpos[:] = reference.qpos[i]
        mujoco.mj_kinematics(model, data)
        out[i] = hull_distance(support_points(model, data, on), reference.com[i][:2])
    return out
