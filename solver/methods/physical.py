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

from .. import schema
from ..mpc.tracking import pose_columns
from ..pose_keyframes import pose_error
from ..rollout import RolloutEngine
from ..solution import Progress, Solution
from ..task import task_from_dict
from .track import TRACK

# An assisted motion balances on the assist: where its centre of mass goes and which bodies it plants
# are the invisible hand's doing, so its physical version follows its poses, not its balance or its
# contacts (measured: with them the armchair sit's physical versions reached 'seated' on 1 seed of 3,
# without them on 3 of 3; benchmarks/RESULTS.md). Nor does it back up: where physics cannot follow
# the assist, redoing the segment before changed no verdict and cost half the tracking's time
# (measured on the same assisted solutions with and without; benchmarks/RESULTS.md). It still retries.
ASSISTED_REFERENCE = {"w_com": 0.0, "w_com_vel": 0.0, "w_contact": 0.0, "backups": 0}


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


def physical_version(prep, assisted: Solution, keyframe_times: list[float], assist_force: np.ndarray,
                     dt_sim: float, kf_error_initial: float, seed: int, nthread: int, progress=None) -> Solution:
    """Track `assisted` (a solution of the assist method's `prep`) with no assist. `assist_force` is
    the summed assist force per simulation step after t = 0 (N). Its summary says how close it came
    (`kf_error`, relative to the unoptimized motion's), the tracking errors, where it departs, and a
    verdict per keyframe."""
    start = time.perf_counter()
    doc = {"schema_version": 1, "name": f"{prep.task.name} physical", "method": "track",
           "scene": {"desc": schema.to_dict(prep.built.scene)},
           "keyframes": timed_keyframes(prep.task.keyframes, keyframe_times),
           "reference": {"times": assisted.times.tolist(), "qpos": assisted.qpos.tolist()},
           "settings": dict(ASSISTED_REFERENCE)}
    track_prep = TRACK.prepare(task_from_dict(doc))
    report = None if progress is None else (lambda p: progress(Progress(p.fraction, p.cost)))
    with RolloutEngine(track_prep.engine_model(), nthread) as engine:
        tracked = TRACK.solve(track_prep, seed, engine, report)
    cols = pose_columns(track_prep.built)
    kfs = prep.keyframes
    err = 0.0
    verdicts = []
    for k in range(1, len(kfs.qpos)):
        t = float(keyframe_times[k])
        mine = tracked.qpos[int(np.argmin(np.abs(tracked.times - t)))][cols]
        err += float(kfs.weights[k] * pose_error(mine, kfs.qpos[k]))
        theirs = assisted.qpos[int(np.argmin(np.abs(assisted.times - t)))][cols]
        key = track_prep.keyframes[k - 1]
        with_assist = key.distance(theirs[:3], theirs[3:7], theirs[7:]) <= key.tolerance
        steps = (np.arange(len(assist_force)) + 1) * dt_sim
        segment = (steps > float(keyframe_times[k - 1]) + 1e-12) & (steps <= t + 1e-12)
        impulse = float(assist_force[segment].sum() * dt_sim)
        tracked_verdict = tracked.summary["keyframes"][k - 1]
        if tracked_verdict["verdict"] == "reached":
            verdict, why = "physical", None
        elif with_assist:
            verdict, why = "assist only", tracked_verdict["why"]
        else:
            verdict, why = "not reached", tracked_verdict["why"] or "the assisted solution does not reach it either"
        verdicts.append({"name": kfs.names[k], "time": round(t, 6), "verdict": verdict, "why": why,
                         "assist_impulse_ns": round(impulse, 3)})
    tracked.summary.update(
        kf_error=err, kf_error_relative=err / kf_error_initial if kf_error_initial > 0 else None,
        verdicts=verdicts, physical_wall_s=round(time.perf_counter() - start, 3))
    return tracked
