"""The physical version of an assisted solution: the track method follows it with no assist, and
each of the sketch's keyframes gets a verdict — reached physically, reached only with assist (and
the assist impulse it took), or not reached.

The assisted motion is the plan; the tracker makes it physical or says where it cannot. The
keyframe error of the physical version is the assist method's (Kim et al. eq. (2), the sketch's
poses at the times the assisted solution reached them), so it compares with the assisted one's.
"""
from __future__ import annotations

import copy
import time

import numpy as np

from ..core import schema
from ..formats.pose_keyframes import pose_error
from ..formats.settings import TrackSettings, method_settings
from ..formats.solution import Progress, Solution
from ..formats.task import Task, task_from_dict
from ..mpc.objectives.tracking import pose_columns
from ..physics.airborne import airborne_keys, airborne_words, rises
from ..physics.rollout import RolloutEngine
from .track import TRACK

# An assisted motion balances on the assist: where its centre of mass goes and which bodies it plants
# are the invisible hand's doing, so its physical version follows its poses, not its balance or its
# contacts (with them it loses the armchair sit). Nor does it back up: where physics cannot follow the
# assist, redoing the segment before changes no verdict and only costs time. It still retries.
# Its bodies' sinking into the scene past 1 cm counts where the reference keeps them off it
# (`w_penetration`): a get-up's legs dropping out of the V-sit would otherwise slam a foot into the
# floor. Only there: where the reference rests a body on the scene (a seat taking the weight), counting
# it would pull the motion off its sketch. Its keyframes are the sketch's alone (`stand_ins` off): the
# assisted motion's in-betweens are the assist's doing too. Its bodies' positions weigh what they did when
# its retries, back-ups and penetration were measured (`w_body` 2; a capture's 12 is newer), and it plans on
# the 15 ms step they were measured with (a capture's 10 ms step is newer, measured on captures and sketches).
ASSISTED_REFERENCE = {"w_com": 0.0, "w_com_vel": 0.0, "w_contact": 0.0, "w_slip": 0.0, "w_anchor": 0.0, "backups": 0,
                      "w_penetration": 30.0, "stand_ins": False, "w_body": 2.0, "planning_timestep": 0.015}
# A physical version that stops short or lands further than CLOSE_RATIO from the sketch is tracked
# again from the start with fresh noise, its keyframes pulled three times as hard (RETRY): where an
# assisted motion only passes near the sketch's poses, the second try aims at them. Pulled that hard
# from the start, a motion that already passes through its keys (the armchair sit) loses its balance
# to the pull, so only a try that needs it pulls so.
# The keyframe the first tracking stopped at gets no segment retry in the tries after it: the first
# spent its retry there (twice the effort, fresh noise) in vain, and a second one changes no verdict.
# One deeper than MAX_PENETRATION into anything is tracked again as well, and one that fell (its head
# below the fall line after having been up, where the assisted motion's is not: `fall_s`).
# Measured figures for each of these: benchmarks/RESULTS.md, "The tracking defaults and why".
CLOSE_RATIO = 0.1  # of the unoptimized motion's keyframe error: the physical version's target
MAX_PENETRATION = 0.02  # m: the deepest a physical version may sink into anything and still be clean
RETRY = {"key_boost": 30.0}  # a second tracking's settings over ASSISTED_REFERENCE
TRY_STRIDE = 1_000_003  # a tracking done again draws its noise this far from the first (prime)


def timed_keyframes(items: list, times: list[float]) -> list:
    """The sketch's pose keyframes with the times a solution reached them (fixed, as tracking needs)."""
    out = []
    for i, item in enumerate(items):
        item = copy.deepcopy(item)
        item.pop("time_range", None)
        item.pop("time", None)
        if i > 0:
            item["time"] = round(float(times[i]), 6)
        out.append(item)
    return out


def physical_settings(given: dict) -> dict:
    """The settings of a physical version's tracking: ASSISTED_REFERENCE's, the assisted task's
    `physical_settings` over them; InvalidInput naming the setting where the track method refuses one."""
    settings = dict(ASSISTED_REFERENCE, **given)
    method_settings(TrackSettings, settings, "settings.physical_settings")
    return settings


def tracking_task(prep, assisted: Solution, keyframe_times: list[float], **settings) -> Task:
    """The track task that follows `assisted` (a solution of the assist method's `prep`) with no
    assist: ASSISTED_REFERENCE's settings, the task's `physical_settings` and then `settings` over them."""
    return task_from_dict({"schema_version": 1, "name": f"{prep.task.name} physical", "method": "track",
                           "scene": {"desc": schema.to_dict(prep.built.scene)},
                           "keyframes": timed_keyframes(prep.task.keyframes, keyframe_times),
                           "reference": {"times": assisted.times.tolist(), "qpos": assisted.qpos.tolist()},
                           "settings": dict(physical_settings(prep.settings.physical_settings), **settings)})


def physical_version(prep, assisted: Solution, keyframe_times: list[float], assist_force: np.ndarray,
                     dt_sim: float, kf_error_initial: float, seed: int, nthread: int, progress=None,
                     retries: int = 0) -> Solution:
    """Track `assisted` (a solution of the assist method's `prep`) with no assist. `assist_force` is
    the summed assist force per simulation step after t = 0 (N). Its summary says how close it came
    (`kf_error`, relative to the unoptimized motion's), the tracking errors, where it departs, and a
    verdict per keyframe. A tracking that stops short of a keyframe, ends further than CLOSE_RATIO
    from the sketch, sinks deeper than MAX_PENETRATION into anything or falls is done again from the start
    with fresh noise and the keyframes pulled harder (RETRY), up to `retries` times (`tries` lists
    each) — where the first stopped, without its segment retry; the best is kept (`better`)."""
    start = time.perf_counter()
    first = TRACK.prepare(tracking_task(prep, assisted, keyframe_times))
    cols = pose_columns(first.built)
    kfs = prep.keyframes
    tries, kept, harder, retried = [], None, None, None
    with RolloutEngine(first.engine_model(), nthread) as engine:
        for attempt in range(retries + 1):
            if attempt == 1:  # every try after the first pulls the keys harder
                harder = TRACK.prepare(tracking_task(prep, assisted, keyframe_times, **RETRY))
            track_prep = first if attempt == 0 else harder
            report = None if progress is None else (
                lambda p, a=attempt: progress(Progress(p.fraction, p.cost, retries=a or None, motion=p.motion)))
            tracked = TRACK.solve(track_prep, seed + attempt * TRY_STRIDE, engine, report, retried=retried,
                                  judge_clip=False)
            if attempt == 0:
                retried = tracked.summary["particles"]["stopped_at"]
            err = sum(float(kfs.weights[k] * pose_error(_at(tracked, keyframe_times[k])[cols], kfs.qpos[k]))
                      for k in range(1, len(kfs.qpos)))
            tracked.summary["kf_error_relative"] = (err / kf_error_initial if kf_error_initial > 0 and np.isfinite(err)
                                                    else None)
            tries.append({"seed": seed + attempt * TRY_STRIDE, **outcome(tracked)})
            if kept is None or better(tries[-1], kept[2]):
                kept = (tracked, err, tries[-1])
            if close_enough(tries[-1]):
                break
    tracked, err, best = kept
    # ✓ is what an animator accepts: whole, near the sketch, clean, upright, no knee or hand put down to
    # catch itself; `whole` (every keyframe reached) is what ranks tries and plans (`outcome`)
    tracked.summary["whole"] = bool(tracked.success)
    airborne = airborne_of(first.built, kfs, keyframe_times, tracked.times, tracked.qpos)
    tracked.summary["airborne"] = airborne
    tracked.summary["words"] = [*tracked.summary.get("words", []), *airborne_words(airborne)]
    if tracked.success and not passes(best, tracked.summary["quality"], airborne):
        tracked.success = False
        tracked.summary["words"] = [*tracked.summary["words"], *error_words(best)]
    low = {a["key"]: a for a in airborne if not a["reached"] and a["apex_cm"] is not None}
    assisted_low = {a["key"] for a in assisted.summary.get("airborne", []) if not a["reached"]}
    verdicts = []
    for k in range(1, len(kfs.qpos)):
        t = float(keyframe_times[k])
        theirs = _at(assisted, t)[cols]
        key = first.keyframes[k - 1]
        # the assisted motion reaches the key: its pose within tolerance and, in the air, its height
        with_assist = key.distance(theirs[:3], theirs[3:7], theirs[7:]) <= key.tolerance and k not in assisted_low
        steps = (np.arange(len(assist_force)) + 1) * dt_sim
        segment = (steps > float(keyframe_times[k - 1]) + 1e-12) & (steps <= t + 1e-12)
        impulse = float(assist_force[segment].sum() * dt_sim)
        tracked_verdict = tracked.summary["keyframes"][k - 1]
        if tracked_verdict["verdict"] == "reached" and k in low:  # its pose, not its height
            a = low[k]
            verdict = "assist only" if with_assist else "not reached"
            why = rises(a)
        elif tracked_verdict["verdict"] == "reached":
            verdict, why = "physical", None
        elif with_assist:
            verdict, why = "assist only", tracked_verdict["why"]
        else:
            verdict, why = "not reached", tracked_verdict["why"] or "the assisted solution does not reach it either"
        verdicts.append({"name": kfs.names[k], "time": round(t, 6), "verdict": verdict, "why": why,
                         "assist_impulse_ns": round(impulse, 3)})
    tracked.summary.update(
        kf_error=err,
        verdicts=verdicts, tries=tries, physical_wall_s=round(time.perf_counter() - start, 3))
    return tracked


def _at(solution: Solution, t: float) -> np.ndarray:
    """The solution's qpos at the sample nearest time t."""
    return solution.qpos[int(np.argmin(np.abs(solution.times - float(t))))]


def outcome(tracked: Solution) -> dict:
    """How far a physical version got: whole (`success`), `keyframes_reached`, `kf_error_relative`,
    how deep it sank into anything (`max_penetration_m`) and how long it lay fallen where the
    assisted motion stands (`fall_s`)."""
    return outcome_of_entry({"success": tracked.success, **tracked.summary})


def airborne_of(built, keyframes, key_times, times: np.ndarray, qpos: np.ndarray) -> list[dict]:
    """`airborne.airborne_keys` of a motion of `built`'s model against the sketch's keyframes (`Keyframes`,
    their times in this motion)."""
    cols, base = pose_columns(built), built.initial_qpos()
    poses = []
    for q in keyframes.qpos[:len(key_times)]:
        full = np.array(base, dtype=float)
        full[cols] = q
        poses.append(full)
    return airborne_keys(built.model, built.character_bodies, poses, keyframes.names, list(key_times), times, qpos)


def outcome_of_entry(entry: dict) -> dict:
    """`outcome` of a physical version as its result.json entry has it."""
    return {"success": bool(entry.get("whole", entry["success"])), "keyframes_reached":
            sum(v["verdict"] == "reached" for v in entry["keyframes"]), "kf_error_relative": entry["kf_error_relative"],
            "max_penetration_m": entry["quality"]["max_penetration_m"], "fall_s": entry["quality"]["fall_s"]}


def passes(track: dict, quality: dict, airborne: list[dict] = ()) -> bool:
    """Whether a physical version (an `outcome`, its motion's `quality`, its `airborne` keys) is marked ✓:
    whole, within CLOSE_RATIO of the sketch, no deeper than MAX_PENETRATION, never fallen (`close_enough`),
    never catching itself on a knee or a hand (`stumble`), every key in the air risen to its height."""
    return close_enough(track) and not quality.get("stumble") and all(a["reached"] for a in airborne)


def error_words(track: dict) -> list[str]:
    """The words of a physical version's keyframe error past CLOSE_RATIO (its falls, stumbles and sinking
    are said by `quality_words` already)."""
    rel = track["kf_error_relative"]
    if rel is None or rel > CLOSE_RATIO:
        return [f"misses the keys by {'?' if rel is None else f'{rel:.0%}'} of the sketch's error "
                f"({CLOSE_RATIO:.0%} passes)"]
    return []


def close_enough(track: dict) -> bool:
    """Whether a tracking (an `outcome`, e.g. an entry of `tries`) needs no other try: whole, within
    CLOSE_RATIO, no deeper into anything than MAX_PENETRATION and never fallen where the assisted
    motion stands (an outcome without the depth or the fall, as a result written before they were,
    counts as shallow and upright)."""
    rel = track["kf_error_relative"]
    return (track["success"] and rel is not None and rel <= CLOSE_RATIO
            and track.get("max_penetration_m", 0.0) <= MAX_PENETRATION and not track.get("fall_s"))


def physical_rank(track: dict) -> tuple:
    """A tracking's (an `outcome`) place, smaller first: whole before stopped, then the more
    keyframes reached, then one close enough (`close_enough`: near the sketch, shallow, upright),
    then the smaller keyframe error."""
    rel = track["kf_error_relative"]
    return (not track["success"], -track["keyframes_reached"], not close_enough(track),
            float("inf") if rel is None else rel)


def better(a: dict, b: dict) -> bool:
    """Whether tracking `a` beats `b` (entries of `tries`, `physical_rank`)."""
    return physical_rank(a) < physical_rank(b)
