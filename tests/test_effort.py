"""Adaptive planning effort: a control step stops planning when an iteration no longer improves on
the plan it started from, continues while it does (up to the cap), plans more after a keyframe
switch or while the state degrades, and anneals the noise of all but the wide samples; a fixed
budget plans exactly that many iterations with the noise untouched."""
import numpy as np
import pytest

from solver.formats.settings import EffortSettings, SamplingSettings
from solver.mpc.effort import Effort
from solver.mpc.planners.base import ControlSpace, Noise, make_planner

DT = 0.015


def _iterations(effort, costs, t=1.0, switched=False, head=None):
    """Run one control step over the synthetic (nominal cost, best cost) pairs; iterations made."""
    effort.begin_step(t, switched, head)
    done = 0
    for nominal, best in costs:
        done += 1
        if not effort.more(done, nominal, best):
            break
    effort.end_step()
    return done


def test_stops_on_a_converged_cost_and_continues_on_an_improving_one():
    s = EffortSettings(improvement=0.02, max_iterations=6)
    effort = Effort(s, DT)
    _iterations(effort, [(10.0, 10.0)], t=0.0)  # a first step, to leave the start's boost behind
    converged = [(10.0, 9.99)] * 10  # 0.1% better each time
    assert _iterations(Effort(s, DT), converged, t=1.0) == 1
    improving = [(10.0 * 0.9 ** k, 10.0 * 0.9 ** (k + 1)) for k in range(10)]  # 10% better each time
    assert _iterations(Effort(s, DT), improving, t=1.0) == 6  # the cap


def test_more_effort_after_a_keyframe_switch_and_while_falling_or_the_cost_rises():
    s = EffortSettings(improvement=0.02, max_iterations=3, boost_s=0.5, fall_speed=0.5)
    improving = [(10.0 * 0.9 ** k, 10.0 * 0.9 ** (k + 1)) for k in range(20)]
    converged = [(10.0, 10.0)] * 20
    effort = Effort(s, DT)
    assert _iterations(effort, improving, t=1.0, switched=True) == 6  # twice the cap
    assert _iterations(effort, converged, t=1.2) == 2  # still boosted: at least two
    assert _iterations(effort, converged, t=1.6) == 1  # the boost is over
    effort = Effort(s, DT)
    _iterations(effort, converged, t=2.0, head=1.40)
    assert _iterations(effort, converged, t=2.015, head=1.39) == 2  # 0.67 m/s down: falling
    assert _iterations(effort, converged, t=2.03, head=1.389) == 1  # 0.07 m/s: not
    effort = Effort(s, DT)
    _iterations(effort, [(10.0, 10.0)], t=3.0)
    assert _iterations(effort, [(12.0, 12.0)] * 5, t=3.015) == 2  # the cost rose by 20%


def test_a_retry_plans_at_least_its_escalation_per_step_with_a_finer_stopping_rule():
    """Escalation e (the particle layer's retry of a failed segment) is real effort: at least e
    iterations per control step, a cap e times higher, and the improvement threshold divided by e."""
    s = EffortSettings(improvement=0.02, max_iterations=3)
    converged = [(10.0, 10.0)] * 40
    steady = [(10.0 * 0.985 ** k, 10.0 * 0.985 ** (k + 1)) for k in range(40)]  # 1.5% better each time
    counts = {}
    for e in (1, 2, 4):
        effort = Effort(s, DT)
        effort.escalation = e
        _iterations(effort, converged, t=0.0)  # past the start's boost
        counts[e] = (_iterations(effort, converged, t=1.0), _iterations(effort, steady, t=1.1))
    # 1.5% improvements: under the 2% threshold at once; over 1% (e = 2) and 0.5% (e = 4): to the cap.
    assert counts == {1: (1, 1), 2: (2, 6), 4: (4, 12)}


def test_a_fixed_budget_plans_exactly_that_many():
    effort = Effort(EffortSettings(budget=3), DT)
    assert _iterations(effort, [(10.0, 10.0)] * 10, switched=True) == 3
    assert effort.noise_scale(2) == 1.0 and effort.wide_fraction() == 0.0


def test_noise_anneals_except_for_the_wide_samples():
    s = SamplingSettings(rollouts=12, planner="baseline", exploration=0.1)
    e = EffortSettings(anneal=0.5, wide_fraction=0.2)
    space = ControlSpace(nu=2, lo=-np.ones(2) * 100, hi=np.ones(2) * 100, act_group=np.array([0, 1]),
                         offsets=np.linspace(0.0, 0.35, 3), spline="cubic")
    effort = Effort(e, DT)
    full = make_planner(space, s, np.random.default_rng(5))
    annealed = make_planner(space, s, np.random.default_rng(5))
    noise = Noise(effort.noise_scale(2), effort.wide_fraction())
    assert noise.scale == pytest.approx(0.25)
    a, b = full.propose(None, 0.0)[1:], annealed.propose(None, 0.0, noise)[1:]  # 11 samples
    wide = int(round(0.2 * 11))
    np.testing.assert_allclose(b[:wide], a[:wide])  # the same draws, full spread
    np.testing.assert_allclose(b[wide:], 0.25 * a[wide:])  # a quarter of the spread


def test_progress_events_say_the_keyframes_reached_and_the_effort_spent(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "solver", "run", str(root / "tests/data/golden/contact_partwise.json"),
                           "--out", str(tmp_path / "out"), "--workers", "0", "--jsonl"], cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    progress = [e for e in events if e["event"] == "progress"]
    assert progress and all(e["keyframes"] == 2 and 0 <= e["reached"] <= 2 for e in progress)
    spent = [e["iterations"] for e in progress]
    assert spent == sorted(spent) and spent[-1] > spent[0]
    (solution,) = [e["solution"] for e in events if e["event"] == "solution"]
    assert spent[-1] <= solution["iterations"]
