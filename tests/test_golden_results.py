"""Refactors keep results: each golden task (tests/data/golden/, written by
tools/make_golden_results.py before the Method/Planner contracts) solved again gives the same
result.npz arrays, for every method and for the partwise and baseline planners.

The same arrays, not always the same bytes: numpy's and OpenBLAS's SIMD kernels are chosen per CPU,
and on another CPU than the goldens' a reduction (a cost's sum, CMA-ES's linear algebra) may differ
in its last bit (measured: 7e-15 in a cost, 1e-14 in an assisted motion's qpos). So every array has
the golden's name, dtype and shape, integers are equal, and floats agree to 1e-9 — where any change
of algorithm or setting moves them by orders of magnitude more. Bytes across runs and backends on
one machine are held elsewhere (`test_determinism_soak`, `test_ray`)."""
from pathlib import Path

import numpy as np
import pytest
from shared_solves import solved

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "golden"
NAMES = ["simulate", "contact_partwise", "contact_baseline", "assist"]


@pytest.mark.parametrize("name", NAMES)
def test_solve_gives_the_golden_bytes(name):
    out = solved(GOLDEN / f"{name}.json", seeds=2, workers=2)  # shared with the tests that read these solves
    for seed in (0, 1):
        with np.load(out / f"seed_{seed}" / "result.npz", allow_pickle=False) as got, \
                np.load(GOLDEN / f"{name}_seed_{seed}.npz", allow_pickle=False) as golden:
            assert sorted(got.files) == sorted(golden.files), f"{name} seed {seed}"
            for key in golden.files:
                a, b = got[key], golden[key]
                where = f"{name} seed {seed} {key} differs from its golden"
                assert a.dtype == b.dtype and a.shape == b.shape, where
                if np.issubdtype(b.dtype, np.floating):
                    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=where)
                else:
                    assert np.array_equal(a, b), where


def test_goldens_are_distinct_motions():
    """A golden that equalled another would not guard the planner that produced it."""
    blobs = {p.name: p.read_bytes() for p in GOLDEN.glob("*.npz")}
    assert len(blobs) == 2 * len(NAMES)
    assert len(set(blobs.values())) == len(blobs)
