"""Process faults: a worker killed mid-run costs only a retry of its seed; a seed whose worker dies
twice is reported lost while the others finish; a killed solver leaves no worker running."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _slow_assist_task(tmp_path, wall_s=2.0):
    """An assist task whose seeds each take about `wall_s` seconds: long enough to be killed mid-seed."""
    doc = json.loads((ROOT / "scenes/tasks/assist_box_jump_low.json").read_text())
    # The search alone (no physical version, no search started over): only how long a seed runs matters.
    doc["settings"] = {"population": 8, "samples": 10 ** 6, "max_wall_s": wall_s, "physical": False,
                       "search_restarts": 0}
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    return path


def _start(task, out, seeds, workers):
    return subprocess.Popen([sys.executable, "-m", "solver", "run", str(task), "--out", str(out), "--jsonl",
                             "--num-seeds", str(seeds), "--workers", str(workers)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def _worker_pids_once_running(proc, workers: int) -> set[int]:
    """Read a --jsonl run's events until `workers` seed workers have started and one reports
    progress; their pids."""
    pids = set()
    for line in proc.stdout:
        e = json.loads(line)
        if e["event"] == "seed_start":
            pids.add(e["pid"])
        if len(pids) == workers and e["event"] == "progress":
            break
    return pids


def _gone_within(pids, seconds: float) -> bool:
    """Whether every process in `pids` has ended within `seconds`."""
    deadline = time.time() + seconds
    while any(_alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.1)
    return not any(_alive(p) for p in pids)


def _events_killing(proc, victim_seed: int, times: int):
    """Read the solver's events; SIGKILL the worker solving `victim_seed` once it has made progress,
    up to `times` times."""
    events, pids, kills = [], {}, 0
    for line in proc.stdout:
        e = json.loads(line)
        events.append(e)
        if e["event"] == "seed_start":
            pids[e["seed"]] = e["pid"]
        if e["event"] == "progress" and e["seed"] == victim_seed and kills < times and victim_seed in pids:
            os.kill(pids.pop(victim_seed), signal.SIGKILL)
            kills += 1
    proc.wait(timeout=60)
    return events, kills


def test_worker_killed_mid_seed_is_retried_and_every_seed_finishes(tmp_path):
    proc = _start(_slow_assist_task(tmp_path), tmp_path / "out", seeds=3, workers=2)
    events, kills = _events_killing(proc, victim_seed=1, times=1)
    assert kills == 1 and proc.returncode == 0
    retries = [e for e in events if e["event"] == "seed_retry"]
    assert [e["seed"] for e in retries] == [1] and "SIGKILL" in retries[0]["message"]
    result = json.loads((tmp_path / "out/result.json").read_text())
    assert sorted(s["seed"] for s in result["solutions"]) == [0, 1, 2] and result["status"] == "done"
    assert all((tmp_path / "out" / s["npz"]).is_file() for s in result["solutions"])


def test_worker_killed_twice_loses_only_that_seed(tmp_path):
    proc = _start(_slow_assist_task(tmp_path), tmp_path / "out", seeds=3, workers=2)
    events, kills = _events_killing(proc, victim_seed=1, times=2)
    assert kills == 2 and proc.returncode == 0
    failed = [e for e in events if e["event"] == "seed_failed"]
    assert [e["seed"] for e in failed] == [1] and "died twice" in failed[0]["message"]
    result = json.loads((tmp_path / "out/result.json").read_text())
    assert sorted(s["seed"] for s in result["solutions"]) == [0, 2] and result["status"] == "partial"
    assert [f["seed"] for f in result["failed"]] == [1]


def test_killed_solver_leaves_no_worker_running(tmp_path):
    proc = _start(_slow_assist_task(tmp_path, wall_s=30.0), tmp_path / "out", seeds=2, workers=2)
    pids = _worker_pids_once_running(proc, 2)
    proc.kill()  # what Blender's Cancel does when the solver does not stop when asked
    proc.wait(timeout=10)
    assert _gone_within(pids, 10)


def test_a_stopped_solve_says_so_in_its_result(tmp_path):
    """Asked to stop (SIGTERM: Blender's Cancel, `kill`), the solver marks its result.json stopped —
    not left 'running' — and its workers end."""
    proc = _start(_slow_assist_task(tmp_path, wall_s=30.0), tmp_path / "out", seeds=2, workers=2)
    pids = _worker_pids_once_running(proc, 2)
    proc.terminate()
    proc.wait(timeout=30)
    assert json.loads((tmp_path / "out/result.json").read_text())["status"] == "stopped"
    assert _gone_within(pids, 10)


QUITTING_BLENDER = """
import json, sys
import bpy
bpy.ops.preferences.addon_enable(module="{module}")
bpy.ops.wm.read_homefile(use_empty=True)
bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand")
import importlib
session = importlib.import_module("{module}.addon.session")
taskio = importlib.import_module("{module}.addon.taskio")
job_mod = importlib.import_module("{module}.addon.job")
task = taskio.task_from_scene(bpy.context, taskio.extract_scene(bpy.context))
context = importlib.import_module("{module}.addon.solve_context").make(task["method"], 1)
job = job_mod.SolveJob(task, sys.argv[-1], 2, context, workers=2)
session.add_job(bpy.context.scene, job)
while not any(e.get("event") == "progress" for e in job.poll()):
    pass
print(job.proc.pid, flush=True)
sys.exit(0)  # quit Blender with the solve running
"""


def test_quitting_blender_during_a_solve_ends_the_solver(tmp_path):
    from blender_env import _STATE, MODULE, installed_extension
    installed_extension()
    env = dict(os.environ, BLENDER_USER_RESOURCES=_STATE["user_folder"])
    proc = subprocess.run([sys.executable, "-c", QUITTING_BLENDER.format(module=MODULE), str(tmp_path / "job")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    solver_pid = int(proc.stdout.strip().splitlines()[-1])
    assert _gone_within([solver_pid], 10)


def test_solver_stops_when_the_process_that_started_it_is_gone(tmp_path):
    """With --exit-with-stdin (what Blender passes), the end of stdin — its parent crashed — ends the
    run and its workers at once; the solutions already finished stay on disk."""
    task = _slow_assist_task(tmp_path, wall_s=30.0)
    proc = subprocess.Popen([sys.executable, "-m", "solver", "run", str(task), "--out", str(tmp_path / "out"),
                             "--jsonl", "--exit-with-stdin", "--num-seeds", "2", "--workers", "2"],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = _worker_pids_once_running(proc, 2)
    started = time.time()
    proc.stdin.close()  # the parent is gone
    assert proc.wait(timeout=10) == 3 and time.time() - started < 5
    assert "the process that started this run is gone" in proc.stderr.read()
    assert _gone_within(pids, 10)
