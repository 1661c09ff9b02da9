"""The motion as it is found: while a contact solve runs, `preview` events carry the frames it has committed,
and a retry or a back-up rewinds them; an assisted search sends its best motion so far. Applied in order,
each seed's events give exactly its result's frames (quaternions up to sign) wherever they overlap — the
retried and backed-up seed too, whose events go back."""
import json
import subprocess
import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest
from shared_solves import short_contact_task

from solver.formats.preview_frames import apply, canonical
from solver.run.preview import CHUNK_FRAMES

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The armchair's first two keyframes, 0.3 s each, on a small budget: seed 1 misses, is retried once
    and backs up once (as `test_ray` has it)."""
    doc = short_contact_task()
    folder = tmp_path_factory.mktemp("preview")
    task = folder / "task.json"
    task.write_text(json.dumps(doc))
    out = folder / "out"
    proc = subprocess.run([sys.executable, "-m", "solver", "run", str(task), "--out", str(out), "--jsonl",
                           "--num-seeds", "2", "--workers", "2"], cwd=ROOT, capture_output=True, text=True,
                          timeout=1800)  # a hang guard only
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out, [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.parametrize("seed", [0, 1])
def test_preview_frames_arrive_while_the_solve_runs_and_are_its_results_frames(run, seed):
    out, events = run
    mine = [e for e in events if e.get("seed") == seed and e["event"] == "preview"]
    solved = next(i for i, e in enumerate(events) if e["event"] == "solution" and e["solution"]["seed"] == seed)
    assert mine and all(events.index(e) < solved for e in mine)  # while it runs, not after
    frames, rewinds, sent = None, 0, 0
    for e in mine:
        assert e["fps"] == 30.0 and e["frames"] >= 0
        rewinds += e["first_frame"] < sent
        frames = apply(frames, e)
        sent = len(frames)
        assert frames.shape[1] == e["nq"]
    model = mujoco.MjModel.from_xml_path(str(out / "model.xml"))
    with np.load(out / f"seed_{seed}" / "result.npz") as z:
        final = canonical(model, z["frame_qpos"])
    assert len(final) - CHUNK_FRAMES <= len(frames) <= len(final)  # all but the last chunk shown before the end
    np.testing.assert_array_equal(frames, final[:len(frames)])
    entry = json.loads((out / f"seed_{seed}" / "entry.json").read_text())
    log = entry["particles"]
    if seed == 1:  # its retry and back-up went back over frames already shown
        assert log["backups"] == 1 and rewinds >= 1
    else:
        assert log["backups"] == 0 and rewinds == 0
    # Each event says when in its motion the keyframes were reached: the result's times, within the frames
    # shown; a back-up takes back the keyframe it redoes.
    reached = [e["keyframes_reached"] for e in mine]
    assert all(len(r) == len(entry["keyframes_reached"]) for r in reached)
    for r, e in zip(reached, mine):
        assert all(t is None or t <= (e["first_frame"] + e["frames"]) / e["fps"] + 0.05 for t in r)
    assert any(t is not None for t in reached[-1])
    for t, final in zip(reached[-1], entry["keyframes_reached"]):
        assert t is None or t == pytest.approx(final, abs=1e-6)
    taken_back = any(a is not None and b is None for r0, r1 in zip(reached, reached[1:]) for a, b in zip(r0, r1))
    assert taken_back == (seed == 1)


def _assisted_sit(folder: Path, settings: dict) -> tuple[list, dict]:
    """The armchair sit's assisted solve with `settings`, seed 0, in one process: its events, and its frames
    (canonical qpos) by file name (`result`, `physical` where it has one)."""
    doc = json.loads((ROOT / "scenes/tasks/assist_sit_armchair.json").read_text())
    doc["settings"] = settings
    path, out = folder / "task.json", folder / "out"
    path.write_text(json.dumps(doc))
    proc = subprocess.run([sys.executable, "-m", "solver", "run", str(path), "--out", str(out), "--jsonl",
                           "--num-seeds", "1", "--workers", "0"], cwd=ROOT, capture_output=True, text=True,
                          timeout=1800)  # a hang guard only
    assert proc.returncode == 0, proc.stderr[-2000:]
    model = mujoco.MjModel.from_xml_path(str(out / "model.xml"))
    frames = {}
    for npz in (out / "seed_0").glob("*.npz"):
        with np.load(npz) as z:
            frames[npz.stem] = canonical(model, z["frame_qpos"])
    return [json.loads(line) for line in proc.stdout.splitlines()], frames


def test_an_assisted_search_shows_its_best_motion_so_far_and_ends_on_the_solutions(tmp_path):
    """The assisted search sends its best rollout each time one is found (the curriculum's stages included),
    from the start pose; the last is the solution's motion, frame for frame."""
    events, solved_frames = _assisted_sit(tmp_path, {"population": 8, "samples": 400, "search_restarts": 0,
                                                     "replans": 0, "physical": False})
    previews = [e for e in events if e["event"] == "preview"]
    solved = next(i for i, e in enumerate(events) if e["event"] == "solution")
    assert len(previews) >= 2 and all(events.index(e) < solved for e in previews)
    frames = None
    for e in previews:
        frames = apply(frames, e)
    np.testing.assert_array_equal(frames, solved_frames["result"])


def test_an_assisted_motions_physical_version_is_shown_as_it_is_tracked(tmp_path):
    """After the search, its physical version replaces the searched motion on screen as it is tracked (from
    the first frame where the two differ); the last frames shown are the physical version's own."""
    events, solved = _assisted_sit(tmp_path, {
        "population": 8, "samples": 200, "search_restarts": 0, "replans": 0, "physical": True, "physical_retries": 0,
        "physical_settings": {"rollouts": 12, "max_iterations": 1, "segment_retries": 0}})
    searched, physical = solved["result"], solved["physical"]
    frames, at_search_end = None, None
    for e in (e for e in events if e["event"] == "preview"):
        frames = apply(frames, e)
        if at_search_end is None and len(frames) == len(searched) and np.array_equal(frames, searched):
            at_search_end = len(frames)
    assert at_search_end is not None  # the search's motion was shown whole first
    assert len(physical) - CHUNK_FRAMES <= len(frames) <= len(physical)
    np.testing.assert_array_equal(frames, physical[:len(frames)])
    assert not np.array_equal(frames, searched[:len(frames)])  # replaced, not the search's motion
