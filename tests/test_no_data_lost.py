"""No data lost: every solution is on disk as it arrives, so a Blender crash loses nothing
(`physkey.import_result` brings them back); saving during a solve is safe; Keep never overwrites."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from blender_env import _STATE, MODULE, addon, fcurves, installed_extension

CRASHING_BLENDER = textwrap.dedent("""
    import json, sys
    import bpy
    bpy.ops.preferences.addon_enable(module="{module}")
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="drop_onto_armchair")
    scene = bpy.context.scene
    scene.physkey.settings_json = json.dumps({{"duration": 300.0}})  # seconds of simulation per seed
    scene.physkey.num_seeds = 4
    bpy.ops.wm.save_as_mainfile(filepath=sys.argv[-1])
    print("saved", flush=True)
    bpy.ops.physkey.solve(wait=True)
""")


def _solver_processes(folder: Path) -> list:
    """Live processes whose command line mentions `folder` (the solver and its workers)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if str(folder) in cmd and "solver" in cmd and (proc / "stat").read_text().split()[2] != "Z":
                found.append(int(proc.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _npz_files(folder: Path):
    """Finished solutions: a seed's npz is whole once its entry.json is written beside it."""
    return sorted(p.parent / "result.npz" for p in folder.glob("physkey/*/result/seed_*/entry.json"))


@pytest.mark.every_blender
def test_solutions_survive_a_blender_crash_and_import_result_brings_them_back(tmp_path):
    bpy, module = installed_extension()
    blend = tmp_path / "shot.blend"
    env = dict(os.environ, BLENDER_USER_RESOURCES=_STATE["user_folder"])
    script = CRASHING_BLENDER.format(module=MODULE)
    proc = subprocess.Popen([sys.executable, "-c", script, str(blend)], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not _npz_files(tmp_path) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)  # Blender crashes after its first solution arrived
    proc.wait(timeout=30)
    deadline = time.time() + 10  # its solver sees its stdin close and stops: nothing left running
    while _solver_processes(tmp_path) and time.time() < deadline:
        time.sleep(0.1)
    assert not _solver_processes(tmp_path)
    assert _npz_files(tmp_path), proc.stderr.read()[-2000:]
    folder = _npz_files(tmp_path)[0].parents[2]  # the job folder: //physkey/<scene>-<time>-xxxx
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    scene = bpy.context.scene
    assert len(scene.physkey.solutions) == 0  # what the crash lost from the scene
    assert bpy.ops.physkey.import_result(directory=str(folder)) == {"FINISHED"}
    listed = {e["seed"] for e in json.loads((folder / "result" / "result.json").read_text())["solutions"]}
    on_disk = listed | {int(p.parent.name.split("_")[1]) for p in (folder / "result").glob("seed_*/entry.json")}
    assert len(scene.physkey.solutions) == len(on_disk) >= 1  # result.json's, and any it had no time to list
    assert bpy.ops.physkey.import_result(directory=str(folder / "result")) == {"FINISHED"}  # again: no duplicates
    assert len(scene.physkey.solutions) == len(on_disk)
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
    kept = bpy.context.active_object.animation_data.action
    assert kept.name.startswith(f"{scene.name}_simulate_seed")


def test_a_solution_written_but_not_yet_listed_is_imported_too(tmp_path):
    """The window a crash can hit: a seed's npz (and its entry.json beside it) written by a worker,
    result.json not yet rewritten by the stopped solver. Import brings that seed back as well."""
    bpy, module = installed_extension()
    task = json.loads((Path(__file__).resolve().parents[1] / "scenes/tasks/drop_onto_armchair.json").read_text())
    task["settings"]["duration"] = 0.2
    (tmp_path / "task.json").write_text(json.dumps(task))
    out = tmp_path / "job"
    proc = subprocess.run([sys.executable, "-m", "solver", "run", str(tmp_path / "task.json"), "--out", str(out),
                           "--num-seeds", "2", "--workers", "2"], cwd=Path(__file__).resolve().parents[1],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    index = json.loads((out / "result.json").read_text())
    index["solutions"] = [e for e in index["solutions"] if e["seed"] == 0]  # seed 1 not listed yet
    (out / "result.json").write_text(json.dumps(index))
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.import_result(directory=str(out)) == {"FINISHED"}
    assert sorted(s.seed for s in bpy.context.scene.physkey.solutions) == [0, 1]


def test_a_seeds_other_lineages_are_listed_under_it_and_kept_as_their_own_actions(tmp_path):
    """Particles that reached the end another way: Blender lists each lineage right under its seed's
    solution, and Keep bakes it into an action named after it."""
    from test_particles import _lineage_run
    bpy, module = installed_extension()
    out = _lineage_run(tmp_path)  # the armchair stand-sit-stand's character and scene
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand")
    assert bpy.ops.physkey.import_result(directory=str(out)) == {"FINISHED"}
    items = bpy.context.scene.physkey.solutions
    assert [(s.name, s.variant, s.success) for s in items] == [("seed 1", "", True),
                                                              ("seed 1 · lineage 2", "lineage_2", True)]
    assert items[1].result_path.endswith("lineage_2.npz") and items[1].cost >= items[0].cost
    assert bpy.ops.physkey.keep_solution(index=1) == {"FINISHED"}
    assert bpy.context.active_object.animation_data.action.name.endswith("_seed1_lineage_2")


def test_import_result_refuses_folders_without_results(tmp_path):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    with pytest.raises(RuntimeError, match="holds no result.json"):
        bpy.ops.physkey.import_result(directory=str(tmp_path))
    with pytest.raises(RuntimeError, match="is not a folder"):
        bpy.ops.physkey.import_result(directory=str(tmp_path / "nowhere"))
    (tmp_path / "result.json").write_text('{"solutions": [')  # truncated
    with pytest.raises(RuntimeError, match="result.json cannot be read"):
        bpy.ops.physkey.import_result(directory=str(tmp_path))


def test_saving_the_blend_during_a_solve_is_safe(tmp_path):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="drop_onto_armchair")
    scene = bpy.context.scene
    scene.physkey.settings_json = json.dumps({"duration": 2.0})
    ops = addon(module, "solve_ops")
    session = addon(module, "session")
    taskio = addon(module, "taskio")
    job_mod = addon(module, "job")
    task = taskio.task_from_scene(bpy.context, taskio.extract_scene(bpy.context))
    job = job_mod.SolveJob(task, str(tmp_path / "job"), 3, addon(module, "solve_context").make(task["method"], 1),
                           workers=1)
    session.add_job(scene, job)
    scene.physkey.running = True  # as PHYSKEY_OT_solve leaves it
    saved, error, deadline = 0, None, time.time() + 120
    while time.time() < deadline:
        events = job.poll()
        error = ops.handle_events(scene, job, events) or error
        if saved < 3:  # save while the solver is still writing
            bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / f"during_{saved}.blend"))
            saved += 1
        if any(e.get("event") == "exit" for e in events):
            break
        time.sleep(0.02)
    session.pop_job(scene)
    job.close()
    assert error is None and job.proc.returncode == 0
    assert len(scene.physkey.solutions) == 3 and saved == 3
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "during_2.blend"))
    props = bpy.context.scene.physkey
    assert props.method == "simulate" and not props.running  # the file saved mid-solve opens ready to solve
    assert "Import" in props.status


@pytest.mark.every_blender
def test_keep_never_overwrites_an_existing_action(tmp_path):
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="drop_onto_armchair")
    scene = bpy.context.scene
    scene.physkey.settings_json = json.dumps({"duration": 0.3})
    scene.physkey.num_seeds = 1
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    name = f"{scene.name}_simulate_seed0"
    theirs = bpy.data.actions.new(name)  # the animator already has an action by that name
    theirs.use_fake_user = True
    theirs["note"] = "the animator's"
    assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
    kept = bpy.context.active_object.animation_data.action
    assert kept.name != name and bpy.data.actions[name] == theirs
    assert theirs["note"] == "the animator's" and not fcurves(module, theirs) and fcurves(module, kept)


@pytest.mark.every_blender
def test_keep_of_an_imported_solution_uses_its_own_solve_context(tmp_path):
    """A solution brings its solve's context (method, start frame) from its folder: imported into a
    scene whose last solve and frame range are different, Keep still bakes it where and as it was
    solved. A folder without the context (a solve run from the command line) starts at the scene's
    start frame and takes the task's method."""
    import shutil
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="drop_onto_armchair")
    scene = bpy.context.scene
    scene.frame_start = 40
    scene.physkey.settings_json = json.dumps({"duration": 0.3})
    scene.physkey.num_seeds = 1
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    assert scene.physkey.solutions[0].start_frame == 40
    job = Path(scene.physkey.solutions[0].result_path).parents[2]
    assert json.loads((job / "solve_context.json").read_text())["start_frame"] == 40

    def kept_after_import(folder):
        bpy.ops.wm.read_homefile(use_empty=True)
        bpy.ops.physkey.load_preset(preset="drop_onto_armchair")
        bpy.context.scene.physkey.method = "contact"  # what a later solve would leave on the scene
        assert bpy.context.scene.frame_start == 1
        assert bpy.ops.physkey.import_result(directory=str(folder)) == {"FINISHED"}
        assert bpy.ops.physkey.keep_solution(index=0) == {"FINISHED"}
        action = bpy.context.active_object.animation_data.action
        first = min(k.co[0] for fc in fcurves(module, action) for k in fc.keyframe_points)
        return action.name, first

    name, first = kept_after_import(job)
    assert "_simulate_seed0" in name and first == 40
    bare = tmp_path / "bare"
    shutil.copytree(job / "result", bare)  # the solver's own files, as `solver run` leaves them
    name, first = kept_after_import(bare)
    assert "_simulate_seed0" in name and first == 1


def test_results_are_written_atomically(tmp_path):
    """Killing the solver at any moment leaves only whole files: result.json parses and lists only
    seeds whose result.npz loads."""
    import numpy as np
    root = Path(__file__).resolve().parents[1]
    doc = json.loads((root / "scenes/tasks/drop_onto_armchair.json").read_text())
    doc["settings"]["duration"] = 1.0
    task = tmp_path / "task.json"
    task.write_text(json.dumps(doc))
    checked = 0
    def solved(out):  # seeds listed so far (the index is written whole, or not at all)
        index = out / "result.json"
        return len(json.loads(index.read_text())["solutions"]) if index.exists() else 0
    for k, delay in enumerate((0.0, 0.05, 0.1, 0.15, 0.2, 0.3)):  # after the first seed is on disk
        out = tmp_path / f"out{k}"
        proc = subprocess.Popen([sys.executable, "-m", "solver", "run", str(task), "--out", str(out),
                                 "--num-seeds", "40", "--workers", "0"], cwd=root,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while proc.poll() is None and not solved(out):  # however slow the machine
            time.sleep(0.01)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if not (out / "result.json").exists():
            continue
        index = json.loads((out / "result.json").read_text())
        for entry in index["solutions"]:
            with np.load(out / entry["npz"], allow_pickle=False) as z:
                assert z["frame_qpos"].shape[1] == 28
            checked += 1
    assert checked > 0
