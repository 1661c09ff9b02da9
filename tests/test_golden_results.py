"""Refactors keep results: each golden task (tests/data/golden/, written by
tools/make_golden_results.py before the Method/Planner contracts) solved again gives byte-identical
result.npz files, for every method and for the partwise and baseline planners."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "golden"
NAMES = ["simulate", "contact_partwise", "contact_baseline", "assist"]


@pytest.mark.parametrize("name", NAMES)
def test_solve_gives_the_golden_bytes(tmp_path, name):
    out = tmp_path / name
    proc = subprocess.run([sys.executable, "-m", "solver", "run", str(GOLDEN / f"{name}.json"), "--out", str(out),
                           "--num-seeds", "2", "--workers", "2"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for seed in (0, 1):
        got = (out / f"seed_{seed}" / "result.npz").read_bytes()
        assert got == (GOLDEN / f"{name}_seed_{seed}.npz").read_bytes(), f"{name} seed {seed} differs from its golden"


def test_goldens_are_distinct_motions():
    """A golden that equalled another would not guard the planner that produced it."""
    blobs = {p.name: p.read_bytes() for p in GOLDEN.glob("*.npz")}
    assert len(blobs) == 2 * len(NAMES)
    assert len(set(blobs.values())) == len(blobs)
