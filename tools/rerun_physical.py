"""Make the assisted solutions of a finished run physical again, with the tracker's settings changed.

The assisted search is capped by wall time, so two runs of a seed differ; the tracking that makes
its solution physical is deterministic. Re-running only the tracking on the solutions a run kept
(`python -m solver run TASK --out DIR`, an assist task) compares tracker settings on the same
assisted motions. Prints one line per seed (physical or not, the keyframe error relative to the
unoptimized motion's, the verdict letters — p physical, a assist only, n not reached — tracking wall
time per second of motion, deepest penetration, each try — whole or stopped after k keyframes, its
error and depth —, where it departs) and a summary. `--noise K` tracks
with the sampling noise of seed + K instead of the seed's own: whether a motion that stops does so
whatever the noise (its assisted motion's doing) or by chance. Usage:
  .venv/bin/python tools/rerun_physical.py DIR [--seeds 0,1,2] [--set '{"w_root_pos": 10}'] [--noise 100] [--retries 0]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from solver.formats.settings import AssistSettings  # noqa: E402
from solver.formats.solution import Solution  # noqa: E402
from solver.formats.task import task_from_dict  # noqa: E402
from solver.methods import physical  # noqa: E402
from solver.methods.assist import ASSIST  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="a run's output folder (task.json, seed_N/entry.json and result.npz)")
    ap.add_argument("--seeds", help="comma-separated seeds (default: every seed_N in the folder)")
    ap.add_argument("--set", default="{}", help="tracking settings over the physical version's, as JSON")
    ap.add_argument("--retries", type=int, default=AssistSettings().physical_retries,
                    help="trackings again from the start with fresh noise where one stops short or ends past 10%% "
                         "(default: the assist method's physical_retries)")
    ap.add_argument("--noise", type=int, default=0, help="track with the noise of seed + this (default 0: the "
                                                         "seed's own, as the run did)")
    args = ap.parse_args(argv)
    physical.ASSISTED_REFERENCE.update(json.loads(args.set))
    with open(os.path.join(args.out, "task.json")) as f:
        prep = ASSIST.prepare(task_from_dict(json.load(f)))
    seeds = ([int(s) for s in args.seeds.split(",")] if args.seeds else
             sorted(int(d.split("_")[1]) for d in os.listdir(args.out) if d.startswith("seed_")))
    whole = []
    for seed in seeds:
        folder = os.path.join(args.out, f"seed_{seed}")
        with open(os.path.join(folder, "entry.json")) as f:
            entry = json.load(f)
        with np.load(os.path.join(folder, "result.npz"), allow_pickle=False) as npz:
            assisted = Solution(times=npz["times"], qpos=npz["qpos"], success=True, cost=0.0)
        tracked = physical.physical_version(prep, assisted, entry["keyframe_times"], np.zeros(0),
                                            prep.built.model.opt.timestep, entry["kf_error_initial"],
                                            seed + args.noise, os.cpu_count() or 1, retries=args.retries)
        s = tracked.summary
        rel = s["kf_error_relative"]
        letters = "".join(v["verdict"][0] for v in s["verdicts"])
        shown = "-" if rel is None else f"{rel:.3f}"  # None: no error to compare (a blow-up, or nothing to reach)
        print(f"seed {seed}: physical {tracked.success} rel {shown} verdicts {letters} "
              f"s/s {s['physical_wall_s'] / max(float(tracked.times[-1]), 1e-9):.1f} "
              f"penetration {s['quality']['max_penetration_m']:.4f} m tries {len(s['tries'])} "
              f"{[_brief(t) for t in s['tries']]} | "
              f"{s['departs'] or '-'}", flush=True)
        if tracked.success:
            whole.append(rel)
    known = [r for r in whole if r is not None]
    print(f"physical {len(whole)}/{len(seeds)}, within 10%: {sum(r <= 0.1 for r in known)}; "
          f"rel of the physical ones: {sorted(round(100 * r, 1) for r in known)}%")
    return 0


def _brief(track: dict) -> str:
    """One try of `tries` in a few characters: whole or stopped at keyframes reached, error, depth."""
    rel = track["kf_error_relative"]
    return (f"{'whole' if track['success'] else 'stop@' + str(track['keyframes_reached'])} "
            f"{'-' if rel is None else f'{rel:.3f}'} {100 * track['max_penetration_m']:.1f}cm")


if __name__ == "__main__":
    sys.exit(main())
