"""The command line as users and the Blender add-on meet it: events, files, pool, determinism."""
import json
import os
import subprocess
import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest
from reference_impl import load_result_npz

ROOT = Path(__file__).resolve().parents[1]
DEMO_TASK = ROOT / "scenes" / "tasks" / "drop_onto_armchair.json"


def run_cli(*args, timeout=300, module="solver"):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def run_bench(*args):
    """The benchmarks' command line (`python -m benchmarks.bench`, not shipped with the extension)."""
    return run_cli(*args, module="benchmarks.bench")


def short_task(tmp_path, duration=0.4, seeds=(0,), **settings):
    doc = json.loads(DEMO_TASK.read_text())
    doc["settings"].update(duration=duration, **settings)
    doc["seeds"] = list(seeds)
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    return path


def test_run_jsonl_events_and_files(tmp_path):
    out = tmp_path / "out"
    rc, stdout, stderr = run_cli("run", short_task(tmp_path), "--out", out, "--jsonl", "--workers", "0",
                                 "--num-seeds", "2")
    assert rc == 0, stderr
    events = [json.loads(line) for line in stdout.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert kinds.count("solution") == 2 and "progress" in kinds
    assert all(0 <= e["fraction"] <= 1 for e in events if e["event"] == "progress")
    summary = json.loads((out / "result.json").read_text())
    assert summary["status"] == "done" and [s["seed"] for s in summary["solutions"]] == [0, 1]
    for sol in summary["solutions"]:
        for key in ("seed", "success", "keyframes_reached", "duration_s", "cost", "wall_s", "npz"):
            assert key in sol
        arrays = load_result_npz(out / sol["npz"])
        model = mujoco.MjModel.from_xml_path(str(out / "model.xml"))
        assert arrays["qpos"].shape == (len(arrays["times"]), model.nq)
        assert arrays["times"][0] == 0 and arrays["times"][-1] == pytest.approx(0.4)
        assert arrays["frame_times"][-1] == pytest.approx(0.4) and len(arrays["frame_times"]) == 13
        # frame 0 is the initial pose; frames agree with the steps they fall on (t = 0.1 s → step 20).
        np.testing.assert_allclose(arrays["frame_qpos"][0], arrays["qpos"][0])
        np.testing.assert_allclose(arrays["frame_qpos"][3], arrays["qpos"][20], atol=1e-9)
    solution_events = [e for e in events if e["event"] == "solution"]
    assert all(Path(e["result_path"]).exists() for e in solution_events)


def test_pool_gives_the_same_result_as_inline(tmp_path):
    task = short_task(tmp_path, seeds=(3, 4))
    rc, _, err = run_cli("run", task, "--out", tmp_path / "inline", "--workers", "0")
    assert rc == 0, err
    rc, _, err = run_cli("run", task, "--out", tmp_path / "pool", "--workers", "2")
    assert rc == 0, err
    for seed in (3, 4):
        a = load_result_npz(tmp_path / "inline" / f"seed_{seed}" / "result.npz")
        b = load_result_npz(tmp_path / "pool" / f"seed_{seed}" / "result.npz")
        np.testing.assert_array_equal(a["qpos"], b["qpos"])
    a0 = load_result_npz(tmp_path / "inline" / "seed_3" / "result.npz")["qpos"]
    a1 = load_result_npz(tmp_path / "inline" / "seed_4" / "result.npz")["qpos"]
    assert not np.allclose(a0, a1)  # seeds are alternatives, not copies


def test_same_task_and_seed_give_identical_result_files(tmp_path):
    task = short_task(tmp_path, seeds=(7,))
    blobs = []
    for i in range(2):
        rc, _, err = run_cli("run", task, "--out", tmp_path / f"r{i}", "--workers", "0")
        assert rc == 0, err
        blobs.append((tmp_path / f"r{i}" / "seed_7" / "result.npz").read_bytes())
        assert (tmp_path / f"r{i}" / "model.xml").read_bytes() == (tmp_path / "r0" / "model.xml").read_bytes()
    assert blobs[0] == blobs[1]


def test_validate_and_export_mjcf(tmp_path):
    rc, out, err = run_cli("validate", DEMO_TASK)
    assert rc == 0 and out.startswith("ok:"), err
    xml = tmp_path / "scene.xml"
    rc, out, err = run_cli("export-mjcf", DEMO_TASK, "--out", xml)
    assert rc == 0, err
    model = mujoco.MjModel.from_xml_path(str(xml))
    assert model.nu == 21 and model.body("chair").id > 0
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("initial").id)
    assert data.qpos[2] == pytest.approx(0.9018, abs=1e-4)


def test_every_shipped_task_validates_without_a_warning(capsys):
    """The presets are what an animator starts from: none of them is clamped or corrected on loading
    (three keyed a joint a hair past its range, and every solve of them printed a warning)."""
    from solver.run.cli import main
    for path in sorted((ROOT / "scenes" / "tasks").glob("*.json")):
        assert main(["validate", str(path)]) == 0, path.name
        err = capsys.readouterr().err
        assert err == "", f"{path.name}: {err}"


def test_import_mjcf_writes_a_scene_that_runs(tmp_path):
    xml = tmp_path / "scene.xml"
    assert run_cli("export-mjcf", DEMO_TASK, "--out", xml)[0] == 0
    scene_json = tmp_path / "scene.json"
    rc, out, err = run_cli("import-mjcf", xml, "--out", scene_json)
    assert rc == 0, err
    task = json.loads(short_task(tmp_path).read_text())
    task["scene"] = {"desc": json.loads(scene_json.read_text())}
    path = tmp_path / "inline.json"
    path.write_text(json.dumps(task))
    rc, _, err = run_cli("run", path, "--out", tmp_path / "o", "--workers", "0")
    assert rc == 0, err


def test_bench_rollout_reports_ratio_to_the_physics_floor():
    rc, out, err = run_bench("rollout", "--json", "--repeats", "2")
    assert rc == 0, err
    report = json.loads(out)
    assert report["rollouts"] == 45 and report["steps"] == 70
    assert 0 < report["ratio"] < 2 and report["floor_steps_per_s"] > 0


def test_bench_mpc_reports_success_effort_quality_and_diversity_of_a_variant(tmp_path):
    """`bench mpc` on a generalization variant (PartwiseMPC Table 3: a lower chair, big legs): the
    report says which variant ran and carries what RESULTS' tables need, per trial too; a malformed
    --params is exit 2 naming it."""
    doc = json.loads((ROOT / "tests/data/golden/contact_partwise.json").read_text())
    doc["settings"] = {"rollouts": 12}
    path = tmp_path / "short.json"
    path.write_text(json.dumps(doc))
    kept = tmp_path / "kept"
    rc, out, err = run_bench("mpc", "--task", path, "--trials", "2", "--rollouts", "12", "--budget", "1",
                           "--params", "height=0.12", "--variant", "big_legs", "--keep", kept, "--json")
    assert rc == 0, err
    r = json.loads(out)
    # --keep keeps each seed's motion, failed or not, and refuses a folder that already holds results.
    for t in r["per_trial"]:
        with np.load(kept / f"seed_{t['seed']}" / "result.npz") as z:
            assert abs(float(z["times"][-1]) - t["duration_s"]) < 1e-6 and len(z["qpos"]) == len(z["times"])
    rc2, _, err2 = run_bench("mpc", "--task", path, "--trials", "1", "--keep", kept)
    assert rc2 == 2 and err2.strip().startswith("error: --keep: ") and "not an empty folder" in err2
    assert r["scene_params"] == {"height": 0.12} and r["variant"] == "big_legs" and r["trials"] == 2
    assert [t["seed"] for t in r["per_trial"]] == [0, 1] and r["particles"] == 1
    for t in r["per_trial"]:
        assert set(t["quality"]) >= {"max_penetration_m", "fall_s"} and t["iterations"] > 0
        assert t["success"] == (t["failed_keyframe"] is None) and (t["failure"] is None) == t["success"]
    assert r["successes"] == sum(t["success"] for t in r["per_trial"])
    assert r["diversity"] is None or r["diversity"]["solutions"] == r["successes"]
    # Stderr says what each seed is doing and keeps each finished seed's report, as it happens.
    lines = err.splitlines()
    assert any(line.startswith("seed 0: keyframe ") and "retries" in line for line in lines), err
    done = {int(line.split()[1]): json.loads(line.split(" done: ", 1)[1]) for line in lines if " done: " in line}
    assert done == {t["seed"]: t for t in r["per_trial"]}
    rc, _, err = run_bench("mpc", "--task", path, "--params", "height=low")
    assert rc == 2 and err.strip() == "error: --params: 'height=low' is not NAME=NUMBER"
    # A task that does not load leaves no --keep folder behind.
    fresh = tmp_path / "fresh"
    rc, _, err = run_bench("mpc", "--task", tmp_path / "missing.json", "--keep", fresh)
    assert rc == 2 and err.strip().startswith("error: ") and not fresh.exists(), err


def test_the_progress_bar_shows_an_assisted_search_started_over(capsys):
    """An assisted seed whose search starts over reports `retries` alone (it has no back-ups); the bar
    names it and does not fail on the missing back-ups."""
    from solver.run.cli import Events
    events = Events(jsonl=False)
    events.seeds = [0]
    events({"event": "progress", "seed": 0, "fraction": 0.4, "cost": 0.5, "retries": 1})
    events({"event": "progress", "seed": 0, "fraction": 0.5, "cost": 0.4, "reached": 2, "keyframes": 4,
            "retries": 0, "backups": 1})
    assisted, contact = capsys.readouterr().err.split("\r")[1:]
    assert "retries 1" in assisted and "back-ups" not in assisted
    assert "keyframe 2/4  retries 0, back-ups 1" in contact


def test_draft_quality_sets_its_documented_settings_over_the_tasks_and_says_so(tmp_path):
    """`run --draft`: the task as solved (its task.json) has DRAFT's settings for its method over its own, and
    the start event's notes say what Draft set; the settings reference lists the same values."""
    from solver.formats.settings import DRAFT
    doc = json.loads((ROOT / "tests/data/golden/contact_partwise.json").read_text())  # two 0.3 s keyframes
    doc["settings"]["rollouts"] = 45
    task = tmp_path / "task.json"
    task.write_text(json.dumps(doc))
    rc, stdout, stderr = run_cli("run", task, "--out", tmp_path / "out", "--jsonl", "--draft", "--workers", "0")
    assert rc == 0, stderr
    solved = json.loads((tmp_path / "out" / "task.json").read_text())["settings"]
    assert DRAFT["contact"] == {"rollouts": 20, "max_iterations": 3, "segment_retries": 0, "backups": 0}
    assert {k: solved[k] for k in DRAFT["contact"]} == DRAFT["contact"]
    assert solved["planner"] == doc["settings"]["planner"] and solved["budget"] == doc["settings"]["budget"]
    start = json.loads(stdout.splitlines()[0])
    assert "Draft quality: rollouts 20, max_iterations 3, segment_retries 0, backups 0" in start["notes"]
    reference = (ROOT / "docs" / "SETTINGS.md").read_text()
    for method, values in DRAFT.items():
        if values:
            assert f"| {method} | " + ", ".join(f"`{k}` {json.dumps(v)}" for k, v in values.items()) in reference
