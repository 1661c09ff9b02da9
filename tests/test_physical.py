"""Physical versions of assisted solutions: every assisted solution is tracked with no assist, the
result lists it (`physical`, its own npz beside the solution's) with a verdict per keyframe, and the
assisted solution's own files are what they were without it."""
import json
import subprocess
import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest
from shared_solves import solution, solved

from solver.formats.solution import Solution
from solver.methods.track import Track

ROOT = Path(__file__).resolve().parents[1]
TASK = ROOT / "tests" / "data" / "golden" / "assist.json"  # a box jump with a tiny budget
# Where a test checks what is done with trackings and not how well they track: a small tracking budget.
QUICK_TRACKING = {"rollouts": 16, "max_iterations": 2}


def _run(out: Path, **settings) -> dict:
    doc = json.loads(TASK.read_text())
    doc["settings"].update(settings)
    task = out.parent / f"{out.name}.json"
    task.write_text(json.dumps(doc))
    done = subprocess.run([sys.executable, "-m", "solver", "run", str(task), "--out", str(out), "--num-seeds", "1",
                           "--workers", "1"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((out / "result.json").read_text())["solutions"][0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The task solved with its physical versions — the golden test's own solve, shared — and without."""
    folder = tmp_path_factory.mktemp("physical")
    shared = solved(TASK)
    return {"with": (solution(shared, 0), shared),
            "without": (_run(folder / "without", physical=False), folder / "without")}


def test_each_assisted_solution_has_a_physical_version_with_verdicts(runs):
    entry, out = runs["with"]
    physical = entry["physical"]
    assert physical["npz"] == "seed_0/physical.npz"
    with np.load(out / physical["npz"]) as z:
        assert z["frame_qpos"].shape[1] == z["qpos"].shape[1] and len(z["frame_times"]) > 1
    names = [k["name"] for k in json.loads(TASK.read_text())["keyframes"][1:]]
    verdicts = physical["verdicts"]
    assert [v["name"] for v in verdicts] == names
    assert {v["verdict"] for v in verdicts} <= {"physical", "assist only", "not reached"}
    assert all((v["why"] is None) == (v["verdict"] == "physical") for v in verdicts)
    assert physical["kf_error_relative"] == pytest.approx(physical["kf_error"] / entry["kf_error_initial"])
    assert physical["whole"] == all(v["verdict"] == "reached" for v in physical["keyframes"])
    from solver.methods.physical import outcome_of_entry, passes
    assert physical["success"] == (physical["whole"] and passes(outcome_of_entry(physical), physical["quality"],
                                                                physical["airborne"]))
    # the box jump's 'airborne' key is in the air (the keys on the box are on the scene, not in the air)
    assert [a["name"] for a in physical["airborne"]] == [a["name"] for a in entry["airborne"]] == ["airborne"]


def test_a_whole_physical_version_is_marked_only_near_the_sketch_clean_and_without_a_stumble():
    """✓ on a physical version means an animator can take it: every keyframe reached (`whole`) is not
    enough. An animator's squat-jump's physical version was marked at 59% of the sketch's error, ending in
    a stumble. Within 10%, shallow and upright it passes; past 10% it does not, and says by how much; a
    stumble, a fall or 2.1 cm of sinking each keep the mark off (their own words say them)."""
    from solver.methods.physical import error_words, passes
    whole = {"success": True, "keyframes_reached": 3, "kf_error_relative": 0.08, "max_penetration_m": 0.01,
             "fall_s": 0.0}
    upright = {"stumble": None}
    assert passes(whole, upright) and error_words(whole) == []
    far = dict(whole, kf_error_relative=0.59)
    assert not passes(far, upright)
    assert error_words(far) == ["misses the keys by 59% of the sketch's error (10% passes)"]
    assert not passes(whole, {"stumble": {"time_s": 1.2, "body": "shin_left"}})
    assert not passes(dict(whole, fall_s=0.4), upright) and not passes(dict(whole, max_penetration_m=0.021), upright)
    assert not passes(dict(whole, success=False), upright)


def test_the_assist_impulses_add_up_to_the_mean_assist_force(runs):
    """The impulse per keyframe segment, summed, is the mean assist force (in body weights, which the
    assisted solution reports) times the character's weight times the motion's length."""
    entry, out = runs["with"]
    model = mujoco.MjModel.from_xml_path(str(out / "model.xml"))
    weight = float(model.body_subtreemass[model.jnt_bodyid[model.joint("root").id]]) * 9.81
    total = sum(v["assist_impulse_ns"] for v in entry["physical"]["verdicts"])
    expected = entry["assist_mean_force_bw"] * weight * entry["keyframe_times"][-1]
    assert total == pytest.approx(expected, rel=0.02)


def test_the_assisted_solution_is_the_same_with_or_without_its_physical_version(runs):
    (_, out_a), (b, out_b) = runs["with"], runs["without"]
    assert (out_a / "seed_0" / "result.npz").read_bytes() == (out_b / "seed_0" / "result.npz").read_bytes()
    assert "physical" not in b and not (out_b / "seed_0" / "physical.npz").exists()


def test_a_physical_version_that_fails_retries_but_does_not_back_up(runs):
    """Where physics cannot follow the assist (this box jump's take-off), the tracker retries the
    failed segment with twice the effort, then stops: a back-up would redo the segment before with
    fresh noise and change no verdict (benchmarks/RESULTS.md)."""
    physical = runs["with"][0]["physical"]
    assert not physical["success"]  # the case this is about
    log = physical["particles"]
    assert log["backups"] == 0
    failed = physical["failed_keyframe"]
    keyframes = [a["keyframe"] for a in log["attempts"]]
    assert keyframes == sorted(keyframes)  # never back to an earlier segment
    assert [a["attempt"] for a in log["attempts"] if a["keyframe"] == failed] == [0, 1]  # the retry is kept


def test_a_physical_version_that_stops_short_is_tracked_again_with_fresh_noise_and_the_best_kept(runs, monkeypatch):
    """`physical_retries` (default 1): this box jump's physical version stops short, so it is tracked
    again from the start with the noise of seed + TRY_STRIDE and the keyframes pulled harder (RETRY);
    `tries` lists both, and the kept one is the better. The second try is what tracking with that
    noise and those settings alone gives."""
    from solver.formats.settings import AssistSettings, TrackSettings
    from solver.formats.solution import Solution
    from solver.formats.task import task_from_dict
    from solver.methods import physical as physical_module
    from solver.methods.assist import ASSIST
    entry, out = runs["with"]
    tries = entry["physical"]["tries"]
    assert AssistSettings().physical_retries == 1 and len(tries) == 2
    assert [t["seed"] for t in tries] == [0, physical_module.TRY_STRIDE]
    kept = min(tries, key=lambda t: (not t["success"], -t["keyframes_reached"], t["kf_error_relative"]))
    assert entry["physical"]["kf_error_relative"] == pytest.approx(kept["kf_error_relative"], rel=1e-12)
    prep = ASSIST.prepare(task_from_dict(json.loads((out / "task.json").read_text())))
    with np.load(out / "seed_0" / "result.npz") as z:
        assisted = Solution(times=z["times"], qpos=z["qpos"], success=True, cost=0.0)
    assert physical_module.RETRY["key_boost"] > TrackSettings().terms.key_boost
    for key, value in physical_module.RETRY.items():
        monkeypatch.setitem(physical_module.ASSISTED_REFERENCE, key, value)
    alone = physical_module.physical_version(prep, assisted, entry["keyframe_times"], np.zeros(0),
                                             prep.built.model.opt.timestep, entry["kf_error_initial"],
                                             physical_module.TRY_STRIDE, 2)
    assert alone.summary["kf_error_relative"] == pytest.approx(tries[1]["kf_error_relative"], rel=1e-12)
    assert alone.success == tries[1]["success"]


def test_bench_track_reports_what_the_solve_wrote(runs):
    """`bench track` on this task, seed 0: per seed what the solve's result.json says of the physical
    version (its error, verdicts, tries, plans, penetration and where), the tracking's wall time per
    second of its motion; a task of another method is refused naming it."""
    entry, _ = runs["with"]
    physical = entry["physical"]
    done = subprocess.run([sys.executable, "-m", "benchmarks.bench", "track", "--task", str(TASK), "--seeds", "1",
                           "--workers", "1", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    (run,) = report["runs"]
    assert report["successes"] == int(run["success"]) and run["success"] == physical["success"]
    assert run["kf_error_relative"] == pytest.approx(physical["kf_error_relative"], rel=1e-12)
    assert run["assisted_kf_error_relative"] == pytest.approx(entry["kf_error"] / entry["kf_error_initial"], rel=1e-12)
    assert run["verdicts"] == [[v["name"], v["verdict"]] for v in physical["verdicts"]]
    assert run["tries"] == len(physical["tries"]) and len(run["plans"]) == len(entry["plans"])
    assert run["max_penetration_m"] == physical["quality"]["max_penetration_m"]
    at = run["max_penetration_at"]
    assert at == physical["quality"]["max_penetration_at"] and 0.0 <= at["time_s"] <= run["duration_s"]
    assert run["duration_s"] == physical["duration_s"] and run["wall_s_per_s"] > 0
    contact = ROOT / "tests" / "data" / "golden" / "contact_partwise.json"
    refused = subprocess.run([sys.executable, "-m", "benchmarks.bench", "track", "--task", str(contact)], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "bench track needs an assist or a track task" in refused.stderr


def test_the_second_tracking_does_not_retry_where_the_first_stopped(runs, monkeypatch):
    """The first tracking of this box jump stops at a keyframe after retrying its segment (twice the
    effort, fresh noise); the second tries that segment once. Its motion is what the track method
    gives with the second try's settings, seed and `retried` alone; without `retried` the same
    tracking would have retried that segment."""
    from solver.formats.task import task_from_dict
    from solver.methods import physical as physical_module
    from solver.methods.assist import ASSIST
    from solver.physics.rollout import RolloutEngine
    entry, out = runs["with"]
    doc = json.loads((out / "task.json").read_text())
    doc["settings"]["physical_settings"] = QUICK_TRACKING  # which segment is retried is checked, not how well
    prep = ASSIST.prepare(task_from_dict(doc))
    with np.load(out / "seed_0" / "result.npz") as z:
        assisted = Solution(times=z["times"], qpos=z["qpos"], success=True, cost=0.0)
    track, calls = physical_module.TRACK, []

    def spy(prep_, seed, engine, progress=None, retried=None, judge_clip=True):
        solved = Track.solve(track, prep_, seed, engine, progress, retried=retried, judge_clip=judge_clip)
        calls.append((seed, retried, solved))
        return solved
    monkeypatch.setattr(track, "solve", spy)
    physical_module.physical_version(prep, assisted, entry["keyframe_times"], np.zeros(0),
                                     prep.built.model.opt.timestep, entry["kf_error_initial"], 0, 2, retries=1)
    monkeypatch.undo()
    (_, none, first), (seed, retried, second) = calls
    stop = first.summary["particles"]["stopped_at"]
    assert none is None and stop is not None and retried == stop and seed == physical_module.TRY_STRIDE

    def attempts(solved):
        return [a["attempt"] for a in solved.summary["particles"]["attempts"] if a["keyframe"] == stop]
    assert attempts(first) == [0, 1] and attempts(second) in ([0], [])
    harder = Track().prepare(physical_module.tracking_task(prep, assisted, entry["keyframe_times"],
                                                           **physical_module.RETRY))
    with RolloutEngine(harder.engine_model(), 2) as engine:
        alone = Track().solve(harder, seed, engine, retried=stop)
        with_retry = Track().solve(harder, seed, engine)
    assert alone.qpos.tobytes() == second.qpos.tobytes()
    assert attempts(with_retry) == ([0, 1] if attempts(second) else [])  # what the second try saves


def test_which_physical_try_is_kept_and_when_another_is_needed():
    """Whole before stopped, then further, then near the sketch, shallow and upright, then closer;
    one near the sketch but deeper than MAX_PENETRATION, or fallen, needs another try."""
    from solver.methods.physical import CLOSE_RATIO, MAX_PENETRATION, better, close_enough

    def t(success, reached, rel, depth=0.01):
        return {"success": success, "keyframes_reached": reached, "kf_error_relative": rel, "max_penetration_m": depth}
    assert better(t(True, 4, 0.5), t(False, 3, 0.05))  # whole beats stopped, however close
    assert better(t(False, 3, 0.9), t(False, 2, 0.1))  # then the further it got
    assert better(t(True, 4, 0.07), t(True, 4, 0.08)) and not better(t(True, 4, 0.08), t(True, 4, 0.07))
    assert better(t(False, 1, 2.0), t(False, 1, None))  # a blow-up's error is the worst
    assert close_enough(t(True, 4, CLOSE_RATIO)) and not close_enough(t(True, 4, CLOSE_RATIO + 1e-9))
    assert not close_enough(t(False, 3, 0.01)) and not close_enough(t(True, 4, None))
    deep = t(True, 4, 0.03, MAX_PENETRATION + 1e-6)
    assert close_enough(t(True, 4, 0.03, MAX_PENETRATION)) and not close_enough(deep)
    assert close_enough({k: v for k, v in deep.items() if k != "max_penetration_m"})  # a result from before depth
    assert better(t(True, 4, 0.09), deep) and better(deep, t(True, 4, 0.11))  # shallow first, then the closer
    fell = dict(t(True, 4, 0.03), fall_s=0.4)  # its head down where the assisted motion's is up
    assert not close_enough(fell) and close_enough(dict(fell, fall_s=0.0)) and close_enough(dict(fell, fall_s=None))
    assert better(t(True, 4, 0.09), fell) and better(fell, t(True, 4, 0.11))


def test_a_physical_version_counts_its_bodies_sinking_in(runs):
    """An assisted motion's physical version is tracked with each body's sinking past 1 cm counted
    (`w_penetration` in ASSISTED_REFERENCE, the track method's default too): its planning model carries a
    contact sensor per body."""
    from solver.formats.settings import TrackSettings
    from solver.formats.task import task_from_dict
    from solver.methods import physical as physical_module
    from solver.methods.assist import ASSIST
    entry, out = runs["with"]
    prep = ASSIST.prepare(task_from_dict(json.loads((out / "task.json").read_text())))
    with np.load(out / "seed_0" / "result.npz") as z:
        assisted = Solution(times=z["times"], qpos=z["qpos"], success=True, cost=0.0)
    track_prep = Track().prepare(physical_module.tracking_task(prep, assisted, entry["keyframe_times"]))
    assert track_prep.settings.terms.w_penetration == physical_module.ASSISTED_REFERENCE["w_penetration"] > 0
    assert TrackSettings().terms.w_penetration == physical_module.ASSISTED_REFERENCE["w_penetration"]
    sensors = [name for name in track_prep.plan.sensor_slices if name.endswith("_contact")]
    assert sensors == [f"{b}_contact" for b in track_prep.plan.character_bodies]
    assert all(t["max_penetration_m"] >= 0 for t in entry["physical"]["tries"])


def test_a_plan_whose_physical_version_misses_is_searched_anew_and_the_better_plan_kept(monkeypatch):
    """`replans` (default 2): where the search reached the sketch (here every search counts as within
    its 5%) and this box jump's physical version stops short, the assisted search is done anew — its
    searches draw the noise of the attempts after the first plan's, each plan searching up to
    `search_restarts` + 1 times — and its motion tracked (the progress counts the search started over as
    a retry); `plans` lists both, and the solution kept is the better plan's, its physical version with it. Each plan's
    search is what the optimizer gives alone for its attempt. Both plans' physical versions stop at the
    same keyframe (the take-off): no third plan. A search that missed its 5% (it had its own fresh
    starts), a first plan close enough, or `replans` 0 plans once."""
    from solver.assist.optimizer import AssistOptimizer
    from solver.assist.problem import Problem
    from solver.formats.settings import AssistSettings
    from solver.formats.task import task_from_dict
    from solver.methods import assist as assist_module
    from solver.methods.assist import ASSIST, initial_state
    from solver.methods.physical import close_enough
    from solver.physics.rollout import RolloutEngine
    doc = json.loads(TASK.read_text())
    doc["settings"] = dict(doc["settings"], search_restarts=1, replans=2, physical_retries=0,
                          physical_settings=QUICK_TRACKING)
    prep = ASSIST.prepare(task_from_dict(doc))
    K = len(prep.keyframes.qpos)
    with RolloutEngine(prep.engine_model(), 2) as engine:
        missed = ASSIST.solve(prep, 0, engine)  # a 160-rollout search misses its 5%
        monkeypatch.setattr(assist_module, "SUCCESS_RATIO", 1e9)  # every search counts as within
        events = []
        sol = ASSIST.solve(prep, 0, engine, events.append)
        opt = AssistOptimizer(Problem(prep.built, prep.keyframes, prep.settings), engine, initial_state(prep.built))
        alone = [float(opt.evaluate(opt.run(0, attempt=a)[0][None], K - 1).kf_error[0]) for a in (0, 2)]
        once = ASSIST.solve(ASSIST.prepare(task_from_dict(dict(doc, settings=dict(doc["settings"], replans=0)))),
                            0, engine)
        monkeypatch.setattr(assist_module, "close_enough", lambda outcome: True)
        close = ASSIST.solve(prep, 0, engine)
    assert not missed.success and len(missed.summary["plans"]) == 1 and len(missed.summary["searches"]) == 2
    assert not close_enough(missed.summary["plans"][0]["physical"])  # it would have planned anew
    plans = sol.summary["plans"]
    assert AssistSettings().replans == 2 and len(plans) == 2
    assert not close_enough(plans[0]["physical"])  # the case this is about
    assert not plans[0]["physical"]["success"] and not plans[1]["physical"]["success"]  # and what ends it:
    assert plans[0]["physical"]["keyframes_reached"] == plans[1]["physical"]["keyframes_reached"]
    assert [p["kf_error"] for p in plans] == pytest.approx(alone, rel=1e-12)
    assert [p["searches"] for p in plans] == [1, 1]
    assert {e.retries for e in events} == {None, 1}  # the progress counts the search started over, once
    assert alone[0] != pytest.approx(alone[1], rel=1e-6)  # another plan, another motion
    kept = min((0, 1), key=lambda i: (not close_enough(plans[i]["physical"]), not plans[i]["success"],
                                      not plans[i]["physical"]["success"],
                                      -plans[i]["physical"]["keyframes_reached"],
                                      plans[i]["physical"]["kf_error_relative"], plans[i]["kf_error"]))
    assert sol.summary["kf_error"] == pytest.approx(plans[kept]["kf_error"], rel=1e-12)
    assert [s["kf_error"] for s in sol.summary["searches"]] == pytest.approx([alone[kept]], rel=1e-12)
    physical = sol.variants["physical"]
    assert physical.summary["kf_error_relative"] == pytest.approx(plans[kept]["physical"]["kf_error_relative"],
                                                                  rel=1e-12)
    assert physical.success is plans[kept]["physical"]["success"]
    assert len(once.summary["plans"]) == 1 and once.summary["kf_error"] == pytest.approx(alone[0], rel=1e-12)
    assert len(close.summary["plans"]) == 1


def test_when_to_plan_again():
    """After a plan whose search reached the sketch and whose physical version missed, plan anew —
    unless two plans' physical versions stopped at the same keyframe."""
    from solver.methods.assist import _plan_again
    from solver.methods.physical import CLOSE_RATIO

    def plan(success, whole, reached, rel):
        return {"success": success, "physical": {"success": whole, "keyframes_reached": reached,
                                                 "kf_error_relative": rel}}
    far = 1.5 * CLOSE_RATIO
    assert _plan_again([plan(True, True, 4, far)]) and _plan_again([plan(True, False, 2, 3.0)])
    assert not _plan_again([plan(True, True, 4, CLOSE_RATIO)])  # close enough
    assert not _plan_again([plan(False, True, 4, far)])  # the search missed the sketch
    assert not _plan_again([{"success": True, "physical": None}])  # no physical version
    assert _plan_again([plan(True, True, 4, far), plan(True, True, 4, far)])  # whole twice, far twice
    assert _plan_again([plan(True, False, 2, 3.0), plan(True, True, 4, far)])
    assert _plan_again([plan(True, False, 2, 3.0), plan(True, False, 3, 2.0)])  # stopped, elsewhere
    assert not _plan_again([plan(True, False, 2, 3.0), plan(True, False, 2, 2.0)])  # the same keyframe twice
    assert not _plan_again([plan(True, False, 2, 3.0), plan(False, True, 4, far), plan(True, False, 2, 1.0)])


def test_which_plan_is_kept():
    """A plan (an assisted solution and its physical version) beats another by: a physical version
    close to the sketch, then an assisted search within its 5%, then the better physical version,
    then the closer assisted motion."""
    from solver.formats.solution import Solution
    from solver.methods.assist import _better_plan
    from solver.methods.physical import CLOSE_RATIO, MAX_PENETRATION

    def plan(success, kf_error, whole, reached, rel, depth=0.01):
        keyframes = [{"verdict": "reached" if k < reached else "not reached"} for k in range(3)]
        physical = Solution(np.zeros(1), np.zeros((1, 1)), whole, 0.0,
                            summary={"keyframes": keyframes, "kf_error_relative": rel,
                                     "quality": {"max_penetration_m": depth, "fall_s": 0.0}})
        return Solution(np.zeros(1), np.zeros((1, 1)), success, 0.0, summary={"kf_error": kf_error},
                        variants={"physical": physical})
    close, far = CLOSE_RATIO, CLOSE_RATIO * 1.5
    assert _better_plan(plan(False, 9.0, True, 3, close), plan(True, 0.1, True, 3, far))  # close physics first
    deep = MAX_PENETRATION * 1.5  # close to the sketch but too deep is not close enough
    assert _better_plan(plan(False, 9.0, True, 3, close), plan(True, 0.1, True, 3, close / 2, deep))
    assert _better_plan(plan(True, 0.5, False, 1, None), plan(False, 0.1, True, 3, far))  # then the 5% search
    assert _better_plan(plan(True, 0.5, True, 3, 0.9), plan(True, 0.1, False, 2, 0.2))  # then whole physics
    assert _better_plan(plan(True, 0.5, False, 2, 0.9), plan(True, 0.1, False, 1, 0.2))  # then the further
    assert _better_plan(plan(True, 0.5, True, 3, far), plan(True, 0.1, True, 3, far * 1.01))  # then closer
    assert _better_plan(plan(True, 0.1, True, 3, far), plan(True, 0.5, True, 3, far))  # then the closer search
    assert not _better_plan(plan(True, 0.1, True, 3, far), plan(True, 0.1, True, 3, far))
