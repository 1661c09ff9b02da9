"""One solve shared by the tests that read it: `solved(task)` runs `solver run` on a task file once per
test run and gives every later caller the same output folder — across pytest-xdist's workers too
(they share the run's temporary folder; the first caller solves under a file lock, the others wait).
Tests that check what a solve wrote (its bytes, its quality, its physical version) then pay for one
solve between them, not one each."""
from __future__ import annotations

import fcntl
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def solved(task: Path, seeds: int = 2, workers: int = 2) -> Path:
    """The output folder of `solver run TASK --num-seeds SEEDS --workers WORKERS`, solved once per run
    (a solve is deterministic per seed: which worker process ran it changes no byte)."""
    key = hashlib.sha256(Path(task).read_bytes() + f"|{seeds}|{workers}".encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / "physkey-shared-solves"
    folder.mkdir(exist_ok=True)
    out = folder / key
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = out / "result.json"
        if not (done.exists() and json.loads(done.read_text())["status"] == "done"):
            proc = subprocess.run([sys.executable, "-m", "solver", "run", str(task), "--out", str(out), "--num-seeds",
                                   str(seeds), "--workers", str(workers)], cwd=ROOT, capture_output=True, text=True,
                                  timeout=1800)  # a hang guard only
            assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def solution(out: Path, seed: int) -> dict:
    """The entry of seed `seed` in a solve's result.json."""
    return next(s for s in json.loads((out / "result.json").read_text())["solutions"] if s["seed"] == seed)


def short_contact_task() -> dict:
    """The armchair's first two keyframes, 0.3 s each, on a small planning budget with one retry and one back-up:
    seed 0 reaches both, seed 1 misses, is retried once and backs up once — the retries, back-ups, rewound previews
    and worker placement the tests check, not the motion. In the preset's weights before its seated feet were
    kept planted (`Foot Slip`, 2026-12-04), under which both seeds reach both keyframes first time."""
    doc = json.loads((ROOT / "scenes/tasks/armchair_stand_sit_stand.json").read_text())
    doc["keyframes"] = doc["keyframes"][:2]
    for kf in doc["keyframes"]:
        kf["time_limit"] = 0.3
        kf["weights"].pop("Foot Slip", None)
    doc["settings"].update(backups=1, segment_retries=1, rollouts=16, max_iterations=2)
    return doc
