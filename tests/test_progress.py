"""The solve's progress as Blender shows it: the mean over every seed (one not heard from counts as
not started, a finished one as done), never jumping back when the seeds' events interleave; the
furthest keyframe any seed reached; the effort spent; an estimate of the time left."""
import pytest

from addon.progress import SolveProgress


def _event(seed, fraction, reached=None, iterations=None, cost=1.0):
    e = {"event": "progress", "seed": seed, "fraction": fraction, "cost": cost}
    if reached is not None:
        e.update(reached=reached, keyframes=5)
    if iterations is not None:
        e["iterations"] = iterations
    return e


def test_the_bar_is_the_mean_over_seeds_and_does_not_jump():
    p = SolveProgress(num_seeds=4)
    seen = []
    for e in (_event(0, 0.5, 2, 100), _event(1, 0.1, 0, 30), _event(0, 0.6, 3, 150), _event(1, 0.2, 1, 60)):
        p.update(e)
        seen.append(p.overall)
    assert seen == pytest.approx([0.125, 0.15, 0.175, 0.2]) and seen == sorted(seen)
    p.update({"event": "solution", "solution": {"seed": 1}})
    assert p.overall == pytest.approx((0.6 + 1.0) / 4)
    text = p.text(elapsed_s=40.0)
    assert "furthest keyframe 3/5" in text and "210 planning iterations" in text
    assert "about 60 s left" in text  # 40 s for 40%: 60 s for the rest


def test_retries_and_back_ups_are_summed_over_seeds_and_shown_once_there_are_any():
    p = SolveProgress(num_seeds=2)
    p.update(_event(0, 0.3, 1, 100))
    assert "retries" not in p.text(10.0)
    for seed, retries, backups in ((0, 2, 0), (1, 1, 1), (0, 3, 1), (0, 2, 1)):  # a late event never lowers it
        p.update({**_event(seed, 0.3, 1, 100), "retries": retries, "backups": backups})
    assert "4 retries, 2 back-ups" in p.text(10.0)


def test_an_assisted_search_started_over_shows_its_retries_alone():
    """An assisted search reports `retries` (searches started over) and never back-ups."""
    p = SolveProgress(num_seeds=2)
    p.update(_event(0, 0.3))
    p.update({**_event(1, 0.2), "retries": 1})
    assert "search missed 5%, started over (1×)" in p.text(10.0) and "back-ups" not in p.text(10.0)


def test_no_estimate_before_there_is_anything_to_go_on():
    p = SolveProgress(num_seeds=2)
    assert p.eta_s(5.0) is None and p.text(5.0) == "0%"
    p.update(_event(0, 0.02))
    assert p.eta_s(5.0) is None


def test_the_time_reached_in_the_motion_is_the_furthest_seeds():
    """MPC methods say where in the clip their simulation is (`motion_time`): the text shows the furthest
    seed's, as the latest event of each seed has it (a back-up goes back in time)."""
    p = SolveProgress(num_seeds=2)
    p.update(_event(0, 0.1, 0, 10))
    assert "of motion" not in p.text(5.0)
    for seed, t in ((0, 1.25), (1, 0.5), (0, 2.0), (0, 1.5)):
        p.update({**_event(seed, 0.2, 1, 10), "motion_time": t})
    assert "at 1.5 s of motion" in p.text(5.0)


def test_a_keyframe_tried_again_is_named_with_its_try_until_the_seed_moves_on():
    p = SolveProgress(num_seeds=2)
    p.update({**_event(1, 0.3, reached=2), "attempt": 0, "retries": 0, "backups": 0})
    assert "retrying" not in p.text(10.0)
    p.update({**_event(1, 0.3, reached=2), "attempt": 1, "retries": 1, "backups": 0})
    assert "seed 1 retrying keyframe 3/5 (try 2)" in p.text(10.0)
    # another seed going well says nothing of seed 1
    p.update({**_event(0, 0.2, reached=1), "attempt": 0, "retries": 0, "backups": 0})
    assert "seed 1 retrying keyframe 3/5 (try 2)" in p.text(10.0)
    p.update({**_event(1, 0.5, reached=3), "attempt": 0, "retries": 1, "backups": 0})  # seed 1 got past it
    assert "retrying" not in p.text(10.0) and "1 retries, 0 back-ups" in p.text(10.0)


def test_a_search_started_over_and_a_keyframe_tried_again_are_news_once_each_for_blenders_reports():
    p = SolveProgress(num_seeds=2)
    p.update({**_event(1, 0.2), "retries": 1})  # an assisted search (no `attempt`)
    p.update({**_event(1, 0.3), "retries": 1})
    p.update({**_event(0, 0.1, reached=2), "attempt": 1, "retries": 1, "backups": 0})  # MPC: keyframe 3, try 2
    p.update({**_event(1, 0.1, reached=0), "attempt": 1, "retries": 1, "backups": 0})  # interleaved seeds
    p.update({**_event(0, 0.1, reached=2), "attempt": 1, "retries": 1, "backups": 0})
    assert p.news == ["seed 1: search missed 5%, started over (1×)", "seed 0 retrying keyframe 3/5 (try 2)",
                      "seed 1 retrying keyframe 1/5 (try 2)"]
