"""Particles across runs: resampling keeps survivors in proportion to their weights, copies get
their own noise streams, a solve with particles is deterministic per seed, and retries and
back-ups are bounded — a keyframe no particle can reach ends the solve with the furthest keyframe
reported after exactly the attempts the settings allow."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_bad_input import check_invalid, run_cli

from solver.formats.task import task_from_dict
from solver.methods.contact import CONTACT
from solver.mpc.recovery.particles import fresh_stream, run_particles, softmin_weights, systematic_resample
from solver.physics.rollout import RolloutEngine

ROOT = Path(__file__).resolve().parents[1]


def test_systematic_resampling_keeps_survivors_in_proportion():
    w = np.array([0.5, 0.25, 0.125, 0.125])
    for u in range(20):
        idx = systematic_resample(w, 8, np.random.default_rng(u))
        counts = np.bincount(idx, minlength=4)
        assert np.all(np.abs(counts - 8 * w) < 1.0), counts  # ⌊n·w⌋ or ⌈n·w⌉ each
    many = np.bincount(np.concatenate([systematic_resample(np.array([0.7, 0.2, 0.1]), 10, np.random.default_rng(s))
                                       for s in range(200)]), minlength=3) / 2000
    np.testing.assert_allclose(many, [0.7, 0.2, 0.1], atol=0.01)


def test_softmin_weights_favour_the_cheaper():
    w = softmin_weights(np.array([1.0, 2.0, 3.0]))
    assert w.sum() == pytest.approx(1.0) and w[0] > w[1] > w[2] > 0
    np.testing.assert_allclose(softmin_weights(np.array([5.0, 5.0])), [0.5, 0.5])
    np.testing.assert_allclose(softmin_weights(np.array([1.0, np.inf])), [0.5, 0.5])  # unknown: as the worst


def test_copies_get_different_streams_derived_from_the_seed():
    a, b = fresh_stream(7, 1, 0, 0, 2), fresh_stream(7, 1, 0, 1, 2)
    assert a != b and a == fresh_stream(7, 1, 0, 0, 2)
    draw = [np.random.default_rng(0) for _ in range(2)]
    for g, s in zip(draw, (a, b)):
        g.bit_generator.state = s
    assert draw[0].random() != draw[1].random()


def _prepared(**settings):
    doc = json.loads((ROOT / "tests/data/golden/contact_partwise.json").read_text())
    doc["settings"] = {"rollouts": 16, "max_iterations": 2, **settings}
    for kf in doc["keyframes"]:
        kf["time_limit"] = 1.0
    return doc


def _run(doc, seed=0, progress=None, **options):
    prep = CONTACT.prepare(task_from_dict(doc))
    with RolloutEngine(prep.plan.model, 2) as engine:
        return run_particles(prep.agent_setup(), seed, engine, progress, **options)


def test_particles_are_deterministic_per_seed_and_reach_every_keyframe():
    doc = _prepared(particles=3)
    (a, log_a), (b, log_b) = _run(doc), _run(doc)
    assert a.success and log_a.furthest == 2 and 1 <= log_a.lineages <= 3
    assert a.qpos.tobytes() == b.qpos.tobytes() and log_a.summary() == log_b.summary()


def test_a_sustain_longer_than_the_time_limit_can_be_met():
    """The time limit bounds how long a keyframe may take to be *reached*; holding it for its sustain
    afterwards may take longer (the loop guard counted time limits only and cut such a keyframe
    off, with no reason given)."""
    doc = _prepared(segment_retries=0, backups=0)
    doc["keyframes"] = doc["keyframes"][:1]
    doc["keyframes"][0].update(tolerance=10.0, sustain=1.5, time_limit=0.2)  # met from the start
    run, _ = _run(doc)
    assert run.success and run.reached[0] == pytest.approx(1.5, abs=0.02)


def test_retries_and_backups_are_bounded_and_the_furthest_keyframe_is_reported():
    doc = _prepared(particles=2, segment_retries=1, backups=1)
    doc["keyframes"][1]["pairs"] = [{"body1": "pelvis", "pos1": [0, 0, 0], "body2": "world", "pos2": [10, 0, 1]}]
    doc["keyframes"][1]["time_limit"] = 0.15  # 10 m away in 0.15 s: no particle can
    seen = []
    run, log = _run(doc, progress=lambda p: seen.append((p.reached, p.retries, p.backups)))
    assert not run.success and run.failed_keyframe == 1 and log.furthest == 1 and log.backups == 1
    # kf 0 once; kf 1 twice (a retry); back up: kf 0 again; kf 1 twice more; then it gives up.
    assert [(a["keyframe"], a["attempt"]) for a in log.attempts] == [(0, 0), (1, 0), (1, 1), (0, 0), (1, 0), (1, 1)]
    # and the progress said so as it went: (segment, retries so far, back-ups so far)
    assert list(dict.fromkeys(seen)) == [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 1), (1, 1, 1), (1, 2, 1)]
    assert [a["survivors"] for a in log.attempts] == [2, 0, 0, 2, 0, 0]
    # the redone segment is not a replay: the same noise would reach the same state, and fail the same way
    assert log.attempts[3]["best_cost"] != log.attempts[0]["best_cost"]
    # each particle's try is in the log: the first segment's reached, the unreachable one's ran out of time
    first, hopeless = log.attempts[0]["particles"], log.attempts[1]["particles"]
    assert len(first) == len(hopeless) == 2 and all(t["failure"] is None for t in first)
    for t in hopeless:
        assert t["failure"] == "time limit" and t["seconds"] == pytest.approx(0.15, abs=0.02)
        assert 9.0 < t["closest"] < 10.5 and 0.0 <= t["longest_stall_s"] <= t["seconds"] + 1e-9


def test_a_keyframe_retried_elsewhere_gets_no_retry():
    """`retried`: the segment of that keyframe is tried once each time the solve gets there (another
    run retried it in vain); the others keep their retries and the back-ups are as before."""
    doc = _prepared(particles=2, segment_retries=1, backups=1)
    doc["keyframes"][1]["pairs"] = [{"body1": "pelvis", "pos1": [0, 0, 0], "body2": "world", "pos2": [10, 0, 1]}]
    doc["keyframes"][1]["time_limit"] = 0.15  # no particle can
    run, log = _run(doc, retried=1)
    assert not run.success and log.stopped_at == 1 and log.backups == 1
    assert [(a["keyframe"], a["attempt"]) for a in log.attempts] == [(0, 0), (1, 0), (0, 0), (1, 0)]
    whole, log = _run(_prepared(particles=1, segment_retries=1, backups=1))
    assert whole.success and log.stopped_at is None


def test_a_retry_weighs_the_contact_term_more(monkeypatch):
    """The keyframe that no particle can reach, tried four times (`retries` 3) with `retry_contact`
    1: the planner weighs its contact term 100 (the keyframe's own) on the first try and the first
    retry, then 200, then 300 (1 + 1 × each retry past the first); after the back-up, the first
    keyframe's segment is redone with its own weight and the far one is tried the same way again."""
    import solver.mpc.agent as agent_module
    seen, last_t = [], [np.inf]
    plan = agent_module.plan_iteration

    def watched(planner, scorer, state, t, kf, noise):
        key = (kf.name, kf.weight("Contact"))
        if not seen or seen[-1] != key or t < last_t[0]:  # each change of what is planned for, each new try
            seen.append(key)
        last_t[0] = t
        return plan(planner, scorer, state, t, kf, noise)

    monkeypatch.setattr(agent_module, "plan_iteration", watched)
    doc = _prepared(segment_retries=3, backups=1, retry_contact=1.0)
    doc["keyframes"] = doc["keyframes"][:2]
    doc["keyframes"][1].update(name="far", time_limit=0.15, weights={"Contact": 100.0},
                               pairs=[{"body1": "pelvis", "pos1": [0, 0, 0], "body2": "world", "pos2": [10, 0, 1]}])
    run, log = _run(doc)
    assert not run.success and [(a["keyframe"], a["attempt"]) for a in log.attempts] == [
        (0, 0), (1, 0), (1, 1), (1, 2), (1, 3)] * 2
    first = CONTACT.prepare(task_from_dict(doc)).keyframes[0]
    own = (first.name, first.weight("Contact"))
    assert seen == [own, ("far", 100.0), ("far", 100.0), ("far", 200.0), ("far", 300.0)] * 2 and own[1] == 100.0


def _report(dist, start=1.0, dt=0.1, keyframe=2, reached=False, failure="time limit"):
    """attempt_report of a segment from `start` whose distances to keyframe `keyframe` were `dist`,
    one per `dt`."""
    from solver.mpc.recovery.checkpoint import Checkpoint
    from solver.mpc.recovery.segments import SegmentJob, SegmentOutcome, attempt_report
    times = start + dt * np.arange(1, len(dist) + 1)
    before = Checkpoint({}, {"record.times": np.array([0.0, start])})
    after = Checkpoint({"tracker": {"failure": None if reached else failure}},
                       {"record.times": np.concatenate([[0.0, start], times]),
                        "record.dist": np.concatenate([[5.0, 5.0], dist]),
                        "record.kf_idx": np.array([keyframe - 1, keyframe] + [keyframe] * len(dist))})
    outcome = SegmentOutcome(after, reached, keyframe + reached, float(times[-1]), None, 0)
    return attempt_report(SegmentJob(before, keyframe), outcome, tolerance=0.1)


def test_a_particles_try_reports_how_long_it_went_without_coming_closer():
    """Hand-computed: 0.05 m closer each 0.1 s for 1 s, then no closer for 1 s: a 1 s stall at the
    end of a 2 s try that came within 0.45 m. Creeping 4 mm per 0.1 s (less than a tenth of the
    0.1 m tolerance each step) is still progress, every third step; holding within the tolerance is
    not a stall."""
    stuck = _report(np.concatenate([0.95 - 0.05 * np.arange(10), np.full(10, 0.5)]))
    assert stuck == {"seconds": 2.0, "failure": "time limit", "closest": 0.5, "longest_stall_s": 1.0}
    creeping = _report(1.0 - 0.004 * np.arange(30), reached=True)
    assert creeping["failure"] is None and creeping["longest_stall_s"] == pytest.approx(0.2)
    assert creeping["closest"] == pytest.approx(1.0 - 0.004 * 29)
    held = _report(np.concatenate([0.3 - 0.05 * np.arange(5), np.full(10, 0.09)]), reached=True)
    assert held["longest_stall_s"] == pytest.approx(0.0)  # within the tolerance, sustaining: not stuck


def test_a_failed_first_keyframe_starts_over_with_its_backups():
    """Nothing comes before the first segment: a back-up starts it over (fresh noise, retries again),
    still bounded."""
    doc = _prepared(particles=1, segment_retries=1, backups=2)
    doc["keyframes"][0]["pairs"] = [{"body1": "pelvis", "pos1": [0, 0, 0], "body2": "world", "pos2": [10, 0, 1]}]
    doc["keyframes"][0]["time_limit"] = 0.1
    run, log = _run(doc)
    assert not run.success and run.failed_keyframe == 0 and log.backups == 2
    assert [(a["keyframe"], a["attempt"]) for a in log.attempts] == [(0, 0), (0, 1)] * 3


@pytest.mark.parametrize("field, value, words", [("particles", 0, "must be > 0"), ("particles", 1000, "at most 64"),
                                                 ("segment_retries", -1, "must be >= 0"),
                                                 ("max_iterations", 0, "must be > 0"),
                                                 ("improvement", -0.1, "must be >= 0")])
def test_bad_particle_and_effort_settings_are_exit_2(tmp_path, field, value, words):
    doc = _prepared(**{field: value})
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    rc, out, err = run_cli(path, tmp_path / "out")
    check_invalid(rc, out, err, [f"settings.{field}", words])


@pytest.mark.parametrize("particles", [1, 2])
def test_keyframes_appended_while_solving_are_taken_between_segments(particles):
    """A keyframe appended while the solve runs (Blender's `append_keyframes` line) is attempted
    after the ones before it, by every particle, as a single run's tracker would."""
    from solver.methods.contact import keyframe_changes
    doc = _prepared(particles=particles, segment_retries=0, backups=0)
    doc["keyframes"] = doc["keyframes"][:1]
    extra = dict(doc["keyframes"][0], name="again", sustain=0.05)
    prep = CONTACT.prepare(task_from_dict(doc))
    calls = []

    def poll():
        calls.append(len(calls))
        return keyframe_changes([extra], prep.built.scene) if len(calls) == 2 else []  # after segment 0
    with RolloutEngine(prep.plan.model, 2) as engine:
        run, log = run_particles(prep.agent_setup(), 0, engine, poll_keyframes=poll)
    assert run.success and log.furthest == 2 and len(run.reached) == 2
    assert run.reached[0] <= run.reached[1] and run.keyframe_index.max() >= 1
    assert [(a["keyframe"], a["survivors"] > 0) for a in log.attempts] == [(0, True), (1, True)]


def _edit_after_segment_0(doc: dict, index: int, edited: dict):
    """A poll that edits keyframe `index` as it is asked after segment 0 (Blender's `edit_keyframes` line)."""
    from solver.methods.contact import keyframe_changes
    prep = CONTACT.prepare(task_from_dict(doc))
    calls = []

    def poll():
        calls.append(len(calls))
        return keyframe_changes([{"edit": index, "keyframe": edited}], prep.built.scene) if len(calls) == 2 else []
    return prep, poll


@pytest.mark.parametrize("particles", [1, 2])
def test_a_keyframe_edited_while_solving_is_taken_by_a_seed_that_has_not_started_it(particles, tmp_path):
    """The sit (1 s of sustain, in a chair) edited into the lean it follows, met at once: the seed, past the
    lean, goes for the edit, and ends as soon as it settles there instead of sitting for a second first.
    The same with its segments run elsewhere (through disk, as on Ray)."""
    from test_segments import ElsewhereSegments
    doc = _prepared(particles=particles, segment_retries=0, backups=0)
    edited = dict(doc["keyframes"][0], name="lean_again", sustain=0.0, tolerance=0.5)
    prep, poll = _edit_after_segment_0(doc, 1, edited)
    with RolloutEngine(prep.plan.model, 2) as engine:
        run, log = run_particles(prep.agent_setup(), 0, engine, poll_keyframes=poll)
        plain = run_particles(prep.agent_setup(), 0, engine)[0]
        elsewhere = ElsewhereSegments(doc, tmp_path)
        prep, poll = _edit_after_segment_0(doc, 1, edited)
        there = run_particles(prep.agent_setup(), 0, engine, poll_keyframes=poll, segments=elsewhere)[0]
        elsewhere.engine.close()
    assert log.summary()["edits"] == [{"keyframe": 1, "name": "lean_again", "taken": True}]
    assert run.success and plain.success
    sit = doc["keyframes"][1]["sustain"]  # held a second (then settled) where the lean is met and settles at once
    assert run.reached[1] - run.reached[0] < sit <= plain.reached[1] - plain.reached[0]
    assert run.qpos.tobytes() == there.qpos.tobytes()


def test_a_keyframe_edited_after_the_seed_reached_it_is_not_taken_and_said():
    doc = _prepared(particles=1, segment_retries=0, backups=0)
    prep, poll = _edit_after_segment_0(doc, 0, dict(doc["keyframes"][0], name="too_late", tolerance=0.01))
    with RolloutEngine(prep.plan.model, 2) as engine:
        run, log = run_particles(prep.agent_setup(), 0, engine, poll_keyframes=poll)
        plain = run_particles(prep.agent_setup(), 0, engine)[0]
    assert log.summary()["edits"] == [{"keyframe": 0, "name": "too_late", "taken": False}]
    assert run.qpos.tobytes() == plain.qpos.tobytes()


@pytest.mark.parametrize("particles", [1, 2])
def test_a_keyframe_passed_in_the_control_step_that_reached_the_one_before_it_is_not_edited(particles):
    """Two keyframes met at once (no sustain, a loose tolerance) are both passed within the first control
    step: the particles that start segment 1 have begun keyframe 1 already, so its edit is not taken (and the
    seed goes on as if never sent) rather than half taken."""
    doc = _prepared(particles=particles, segment_retries=0, backups=0)
    loose = [dict(doc["keyframes"][0], name=f"at_once_{i}", tolerance=5.0, sustain=0.0) for i in range(2)]
    doc["keyframes"] = loose + doc["keyframes"][1:]
    prep, poll = _edit_after_segment_0(doc, 1, dict(loose[1], name="too_late"))
    with RolloutEngine(prep.plan.model, 2) as engine:
        run, log = run_particles(prep.agent_setup(), 0, engine, poll_keyframes=poll)
        plain = run_particles(prep.agent_setup(), 0, engine)[0]
    assert plain.reached[1] - plain.reached[0] < prep.settings.sampling.planning_timestep  # the same control step
    assert log.summary()["edits"] == [{"keyframe": 1, "name": "too_late", "taken": False}]
    assert run.qpos.tobytes() == plain.qpos.tobytes()


def test_an_edit_is_carried_through_retries_and_a_back_up_here_and_elsewhere_alike(tmp_path):
    """Keyframe 1 edited into another no particle can reach: its retries and the back-up to segment 0 (whose
    checkpoints the edit was carried into) run on the edited keyframe, and segments run elsewhere (through
    disk, as on Ray) give the same bytes."""
    from test_segments import ElsewhereSegments
    doc = _prepared(particles=2, segment_retries=1, backups=1)
    doc["keyframes"][1]["time_limit"] = 0.15
    edited = dict(doc["keyframes"][1], name="out_of_reach",
                  pairs=[{"body1": "pelvis", "pos1": [0, 0, 0], "body2": "world", "pos2": [10, 0, 1]}])
    runs = []
    for segments in (None, ElsewhereSegments(doc, tmp_path)):
        prep, poll = _edit_after_segment_0(doc, 1, edited)
        with RolloutEngine(prep.plan.model, 2) as engine:
            runs.append(run_particles(prep.agent_setup(), 1, engine, poll_keyframes=poll, segments=segments))
        if segments is not None:
            segments.engine.close()
    (here, log), (there, log_there) = runs
    assert log.summary() == log_there.summary() and here.qpos.tobytes() == there.qpos.tobytes()
    assert log.edits == [{"keyframe": 1, "name": "out_of_reach", "taken": True}] and log.backups == 1
    assert not here.success and log.stopped_at == 1 and log.keyframes[1].name == "out_of_reach"


def _lineage_run(folder: Path) -> Path:
    """A seed whose particles reach the end from two lineages (3 particles, a second keyframe few reach)."""
    doc = _prepared(particles=3, segment_retries=1, backups=1)
    doc["keyframes"][1]["time_limit"] = 0.25
    doc["seeds"] = [1]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.json").write_text(json.dumps(doc))
    proc = subprocess.run([sys.executable, "-m", "solver", "run", str(folder / "task.json"), "--out",
                           str(folder / "out"), "--workers", "0"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return folder / "out"


def test_other_lineages_are_the_seeds_alternatives(tmp_path):
    """Each lineage that reaches the last keyframe gives an alternative (its cheapest run), written
    beside the seed's solution, listed in its entry, and measured for how different it is."""
    from solver.physics.diversity import solutions_diversity
    out = _lineage_run(tmp_path)
    entry = json.loads((out / "result.json").read_text())["solutions"][0]
    assert entry["particles"]["lineages"] == 2 and entry["variants"] == ["lineage_2"]
    alt = entry["lineage_2"]
    assert alt["npz"] == "seed_1/lineage_2.npz" and alt["success"] and entry["success"]
    assert entry["cost"] <= alt["cost"]  # the seed's solution is the cheapest run
    with np.load(out / entry["npz"]) as a, np.load(out / alt["npz"]) as b:
        assert a["qpos"].shape[1] == b["qpos"].shape[1] and not np.array_equal(a["qpos"][-1], b["qpos"][-1])
    figure = entry["particles"]["lineage_diversity"]
    built = CONTACT.prepare(task_from_dict(json.loads((tmp_path / "task.json").read_text()))).built
    again = solutions_diversity(built.model, built.character_bodies, str(out), [entry, alt])
    assert figure["solutions"] == 2 and figure == again and figure["mean_pairwise_rad"] > 0.01
