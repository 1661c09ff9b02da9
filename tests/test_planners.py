"""The planner contract: every registered planner runs a contact solve through the CLI, proposes
candidates within the control range starting from its shifted nominal, and is told costs; the
cross-entropy planner refits its plan to the elite (checked against hand-computed means and
spreads); a planner name nobody registered is a clear error (exit 2) listing the registered ones."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_bad_input import check_invalid, run_cli

from solver.core.registry import PLANNERS
from solver.formats.settings import SamplingSettings
from solver.mpc.objectives.contact import Costs
from solver.mpc.planners.base import NOMINAL, ORIGINS, SAMPLED, ControlSpace, make_planner, planner_class
from solver.mpc.planners.cem import CrossEntropyPlanner

ROOT = Path(__file__).resolve().parents[1]
NU, KNOTS = 4, 3


def _space():
    return ControlSpace(nu=NU, lo=-np.ones(NU), hi=np.ones(NU), act_group=np.array([0, 1, 2, 3]),
                        offsets=np.linspace(0.0, 0.35, KNOTS), spline="cubic")


def _costs(total):
    total = np.asarray(total, dtype=float)
    return Costs(total=total.copy(), components=total[:, None].copy(), membership=np.ones((1, 5), dtype=bool),
                 per_step=np.zeros((len(total), 1))).exclude(~np.isfinite(total))


def _short_contact_task(tmp_path, planner, **settings):
    doc = json.loads((ROOT / "tests/data/golden/contact_partwise.json").read_text())
    doc["settings"].update(planner=planner, **settings)
    path = tmp_path / f"{planner}.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("name", list(PLANNERS))
def test_every_registered_planner_solves_through_the_cli(tmp_path, name):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "solver", "run", str(_short_contact_task(tmp_path, name)),
                           "--out", str(out), "--workers", "0"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (entry,) = json.loads((out / "result.json").read_text())["solutions"]
    assert entry["planner"] == name and entry["iterations"] > 0
    assert set(entry["won_by"]) == set(ORIGINS) and sum(entry["won_by"].values()) == pytest.approx(1.0)
    if name != "partwise":
        assert entry["won_by"]["composed"] == 0.0


@pytest.mark.parametrize("name", list(PLANNERS))
def test_proposals_start_from_the_shifted_nominal_within_the_control_range(name):
    settings = SamplingSettings(rollouts=12, exploration=2.0, planner=name)
    planner = make_planner(_space(), settings, np.random.default_rng(0))
    planner.nominal = np.full((KNOTS, NU), 0.25)
    candidates = planner.propose(None, 0.1)
    assert candidates.shape == (12, KNOTS, NU)
    assert np.all(candidates >= -1.0) and np.all(candidates <= 1.0)
    np.testing.assert_allclose(candidates[0], 0.25)  # a constant plan shifted is the same constant
    assert len(np.unique(candidates[1:].round(9), axis=0)) == 11  # the rest are samples, all different
    outcome = planner.tell(_costs(np.arange(12.0)[::-1]))  # the last candidate is the best
    assert outcome.best_index == 11 and outcome.best_cost == 0.0 and ORIGINS[outcome.origin] == "sampled"


def test_cross_entropy_refits_the_plan_to_the_elite():
    settings = SamplingSettings(rollouts=10, exploration=0.05, planner="cem",
                               planner_options={"elite_fraction": 0.3, "min_std": 0.01})
    planner = make_planner(_space(), settings, np.random.default_rng(1))
    assert isinstance(planner, CrossEntropyPlanner) and planner.elites() == 3
    candidates = planner.propose(None, 0.0)
    total = np.array([5.0, 9.0, np.inf, 1.0, 7.0, 2.0, 8.0, 0.5, 6.0, 4.0])  # candidate 2 diverged
    outcome = planner.tell(_costs(total))
    elite = candidates[[7, 3, 5]]  # the three cheapest
    np.testing.assert_allclose(planner.nominal, elite.mean(axis=0))
    np.testing.assert_allclose(planner.std, elite.std(axis=0, ddof=1))
    assert outcome.best_index == 7 and ORIGINS[outcome.origin] == "sampled"
    # The next samples spread by the elite's std, floored at min_std × half the range.
    planner.std[:] = 0.0
    again = planner.propose(None, 0.0)
    spread = (again[1:] - again[0]).std(axis=0)
    assert np.all(spread > 0.005) and np.all(spread < 0.02)


def test_cross_entropy_keeps_the_plan_when_every_candidate_diverges():
    settings = SamplingSettings(rollouts=6, planner="cem")
    planner = make_planner(_space(), settings, np.random.default_rng(2))
    planner.nominal = np.full((KNOTS, NU), -0.5)
    planner.propose(None, 0.0)
    outcome = planner.tell(_costs(np.full(6, np.inf)))
    assert outcome.best_index == 0 and ORIGINS[outcome.origin] == "nominal" and outcome.origin == NOMINAL
    np.testing.assert_allclose(planner.nominal, -0.5)
    assert SAMPLED != NOMINAL


def test_planner_classes_come_from_the_registry():
    for name in PLANNERS:
        cls = planner_class(name)
        assert hasattr(cls, "propose") and hasattr(cls, "tell") and hasattr(cls, "Options")


def test_an_unregistered_planner_in_the_task_is_exit_2_listing_the_planners(tmp_path):
    rc, out, err = run_cli(_short_contact_task(tmp_path, "ilqg"), tmp_path / "out")
    check_invalid(rc, out, err, ["settings.planner", 'got "ilqg"'] + [f"{n}" for n in PLANNERS])
    assert not (tmp_path / "out").exists()


def test_bad_planner_options_name_the_field(tmp_path):
    rc, out, err = run_cli(_short_contact_task(tmp_path, "cem", planner_options={"elite_fraction": 2}),
                           tmp_path / "out")
    check_invalid(rc, out, err, ["settings.planner_options.elite_fraction", "at most 1.0"])
    rc, out, err = run_cli(_short_contact_task(tmp_path, "partwise", planner_options={"elite_fraction": 0.2}),
                           tmp_path / "out2")
    check_invalid(rc, out, err, ["settings.planner_options", "elite_fraction"])


def test_bench_with_an_unregistered_planner_is_exit_2_listing_the_planners():
    proc = subprocess.run([sys.executable, "-m", "benchmarks.bench", "mpc", "--task", "reach_hand_targets",
                           "--planner", "nope"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --planner: unknown planner 'nope'"), lines
    assert all(name in lines[0] for name in PLANNERS)
