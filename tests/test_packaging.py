"""The solver installable without Blender (`pip install .`, a render-farm node): the wheel carries
every solver module and every scene file (as `solver/_scenes`), declares the `physkey` command and
the optional Ray extra, and leaves the Blender add-on out; installed into a folder of its own it
validates and solves a preset from anywhere, its scenes found inside it."""
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _wheel(tmp_path) -> Path:
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("physkey-*.whl")
    return wheel


def test_the_wheel_carries_the_solver_and_its_scenes_and_the_physkey_command(tmp_path):
    wheel = _wheel(tmp_path / "wheel")
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "solver").rglob("*.py")}
    assert modules <= names, sorted(modules - names)
    scenes = {"solver/_scenes/" + p.relative_to(ROOT / "scenes").as_posix() for p in (ROOT / "scenes").rglob("*.json")}
    assert scenes <= names, sorted(scenes - names)
    assert not [n for n in names if n.startswith(("addon/", "tests/", "tools/")) or n == "__init__.py"]
    meta = zipfile.ZipFile(wheel)
    (entry_points,) = [n for n in names if n.endswith("entry_points.txt")]
    assert "physkey = solver.run.cli:console" in meta.read(entry_points).decode()
    (metadata,) = [n for n in names if n.endswith("METADATA")]
    text = meta.read(metadata).decode()
    assert "Provides-Extra: ray" in text and "extra == \"ray\"" in text
    assert "Requires-Dist: mujoco" in text and "bpy" not in text

    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                           str(wheel)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    script = ("import sys; from solver.core import paths; from solver.run.cli import console; "
              "print(paths.SCENES_DIR); sys.argv = ['physkey'] + sys.argv[1:]; sys.exit(console())")
    task = site / "solver/_scenes/tasks/box_lift_place.json"
    proc = subprocess.run([sys.executable, "-c", script, "validate", str(task)], cwd=elsewhere, capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    scenes_dir, ok = proc.stdout.splitlines()[:2]
    assert Path(scenes_dir) == site / "solver" / "_scenes" and ok.startswith("ok: task 'box_lift_place'")
    proc = subprocess.run([sys.executable, "-c", script, "--help"], cwd=elsewhere, capture_output=True, text=True,
                          env=env, timeout=300)
    assert "usage: physkey" in proc.stdout and "--backend" not in proc.stdout  # run's options are run's
