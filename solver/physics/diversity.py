"""How different a run's alternative solutions are: the mean and the smallest pairwise joint-angle
distance at the keyframes, so that "alternatives" are measurably different motions and near-copies
show (a smallest distance near zero).

Two solutions are compared at each keyframe both reached — each at its own time of reaching it,
since alternatives reach a keyframe at different moments — by the RMS difference of the
character's hinge angles; where they share no reached keyframe, by their final poses. A pair's
distance is the mean over those poses.
"""
from __future__ import annotations

import itertools
import os

import mujoco
import numpy as np

from ..core.resample import good_prefix
from .quality import character_hinges


def keyframe_poses(times: np.ndarray, qpos: np.ndarray, reached: np.ndarray, hinges: np.ndarray) -> np.ndarray:
    """Hinge angles at each keyframe's reached time (NaN rows for keyframes not reached), then the
    final pose as one more row."""
    rows = []
    for t in np.asarray(reached, dtype=float):
        if np.isfinite(t):
            i = min(int(np.searchsorted(times, t - 1e-9)), len(times) - 1)
            rows.append(qpos[i, hinges])
        else:
            rows.append(np.full(len(hinges), np.nan))
    rows.append(qpos[-1, hinges])
    return np.asarray(rows, dtype=float)


def pair_distance(a: np.ndarray, b: np.ndarray) -> float:
    """RMS hinge-angle difference (rad) of two solutions' keyframe poses (as `keyframe_poses` gives
    them), over the keyframes both reached, or of their final poses where they share none."""
    n = min(len(a), len(b)) - 1  # keyframe rows; the last row is the final pose
    both = [k for k in range(n) if np.all(np.isfinite(a[k])) and np.all(np.isfinite(b[k]))]
    rows = both if both else [-1]
    return float(np.mean([np.sqrt(np.mean((a[k] - b[k]) ** 2)) for k in rows]))


def diversity(poses: list[np.ndarray]) -> dict | None:
    """Mean and smallest pairwise distance (rad) of solutions' keyframe poses; None with fewer than two."""
    if len(poses) < 2:
        return None
    d = [pair_distance(a, b) for a, b in itertools.combinations(poses, 2)]
    return {"mean_pairwise_rad": round(float(np.mean(d)), 6), "min_pairwise_rad": round(float(np.min(d)), 6),
            "pairs": len(d), "solutions": len(poses)}


def motions_diversity(model: mujoco.MjModel, character_bodies: list[str], motions) -> dict | None:
    """`diversity` of motions given as (times, qpos, keyframes reached: times, NaN or None where not)."""
    hinges = np.asarray(character_hinges(model, character_bodies), dtype=int)
    poses = []
    for times, qpos, reached in motions:
        keep = good_prefix(qpos)  # an unstable run: compare the motion up to its last good pose
        times, qpos = times[keep], qpos[keep]
        if len(qpos):
            reached = np.array([np.nan if t is None else t for t in reached], dtype=float)
            poses.append(keyframe_poses(times, qpos, reached, hinges))
    return diversity(poses)


def solutions_diversity(model: mujoco.MjModel, character_bodies: list[str], out_dir: str, entries: list[dict],
                        successful_only: bool = False) -> dict | None:
    """`diversity` of a run's solutions (result.json entries, their npz files under `out_dir`)."""
    motions = []
    for e in entries:
        if successful_only and not e.get("success"):
            continue
        with np.load(os.path.join(out_dir, e["npz"]), allow_pickle=False) as z:
            motions.append((z["times"], z["qpos"], z["keyframes_reached"]))
    return motions_diversity(model, character_bodies, motions)
