"""Safety: nothing pickled crosses a process or file boundary, subprocesses start without a shell,
the solver writes only inside --out, MJCF imports cannot reach outside their folder, and the
add-on's job folders are private to the user."""
import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for d in ("solver", "addon", "tools") for p in (ROOT / d).rglob("*.py"))


def _calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
            yield owner, name, node


def test_nothing_is_pickled_across_process_or_file_boundaries():
    assert len(SOURCES) > 40
    for path in SOURCES:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                for bad in ("pickle", "multiprocessing", "concurrent.futures", "shelve", "marshal", "dill"):
                    assert not any(n == bad or n.startswith(bad + ".") for n in names), f"{path}: imports {bad}"
        for owner, name, node in _calls(tree):
            if owner in ("np", "numpy") and name == "load":
                kw = {k.arg: k.value for k in node.keywords}
                assert isinstance(kw.get("allow_pickle"), ast.Constant) and kw["allow_pickle"].value is False, \
                    f"{path}:{node.lineno}: np.load without allow_pickle=False"
            if name in ("write_array", "save", "savez", "savez_compressed") and owner in ("np", "numpy", "format"):
                kw = {k.arg: k.value for k in node.keywords}
                if name == "write_array":
                    assert kw["allow_pickle"].value is False, f"{path}:{node.lineno}"


def test_subprocesses_start_without_a_shell():
    started = 0
    for path in SOURCES:
        tree = ast.parse(path.read_text(), str(path))
        for owner, name, node in _calls(tree):
            assert not (owner == "os" and name in ("system", "popen", "execl", "spawnl")), f"{path}:{node.lineno}"
            if owner == "subprocess" and name in ("Popen", "run", "call", "check_call", "check_output"):
                started += 1
                kw = {k.arg: k.value for k in node.keywords}
                assert "shell" not in kw or (isinstance(kw["shell"], ast.Constant) and kw["shell"].value is False), \
                    f"{path}:{node.lineno}: shell=True"
                assert not isinstance(node.args[0], (ast.Constant, ast.JoinedStr)), \
                    f"{path}:{node.lineno}: a command line as a string"
    assert started >= 3  # the add-on's solve, the worker pool, the extension build


def _snapshot(*folders):
    return {str(p): p.stat().st_mtime_ns for f in folders for p in Path(f).rglob("*")}


def test_solver_writes_only_inside_out(tmp_path):
    cwd, home, tmp, tasks = (tmp_path / n for n in ("cwd", "home", "tmp", "tasks"))
    for d in (cwd, home, tmp, tasks):
        d.mkdir()
    doc = json.loads((ROOT / "scenes/tasks/drop_onto_armchair.json").read_text())
    doc["settings"]["duration"] = 0.5
    (tasks / "task.json").write_text(json.dumps(doc))
    from test_divergence import stiff_scene  # a knee spring that blows up at 0.14 s: MuJoCo warns

    from solver.core import schema
    unstable = doc | {"name": "unstable", "scene": {"desc": schema.to_dict(stiff_scene())},
                      "settings": {"duration": 0.5, "mode": "passive", "perturb": 0.0}}
    (tasks / "unstable.json").write_text(json.dumps(unstable))
    before = _snapshot(cwd, home, tmp, tasks)
    env = dict(os.environ, HOME=str(home), TMPDIR=str(tmp), PYTHONPATH=str(ROOT))
    for args in (["run", str(tasks / "task.json"), "--out", str(tmp_path / "out"), "--num-seeds", "2"],
                 ["run", str(tasks / "unstable.json"), "--out", str(tmp_path / "out2"), "--workers", "0"],
                 ["export-mjcf", str(tasks / "task.json"), "--out", str(tmp_path / "out3" / "scene.xml")]):
        proc = subprocess.run([sys.executable, "-m", "solver", *args], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode in (0, 1), proc.stderr
    assert json.loads((tmp_path / "out2" / "result.json").read_text())["solutions"][0]["status"] == "unstable"
    assert _snapshot(cwd, home, tmp, tasks) == before
    assert not (cwd / "MUJOCO_LOG.TXT").exists()


def _mjcf(folder: Path, body: str, name="robot.xml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"<mujoco>{body}<worldbody><geom name='floor' type='plane' size='5 5 0.1'/>"
                    "<body name='b' pos='0 0 1'><freejoint/><geom size='0.1'/><body name='c'><joint type='hinge'/>"
                    "<geom size='0.05' pos='0 0 -0.2'/></body></body></worldbody></mujoco>")
    return path


OUTSIDE = [
    ("<include file='../secret.xml'/>", "include file '../secret.xml'"),
    ("<asset><mesh name='m' file='/etc/passwd'/></asset>", "mesh file '/etc/passwd'"),
    ("<compiler meshdir='../..'/>", "compiler meshdir '../..'"),
    ("<compiler assetdir='/'/>", "compiler assetdir '/'"),
    ("<asset><texture name='t' type='cube' fileright='../x.png'/></asset>", "texture fileright '../x.png'"),
    ("<asset><hfield name='h' file='sub/../../h.png'/></asset>", "hfield file 'sub/../../h.png'"),
]


@pytest.mark.parametrize("body,named", OUTSIDE)
def test_mjcf_import_refuses_files_outside_its_folder(tmp_path, body, named):
    (tmp_path / "secret.xml").write_text("<mujoco/>")
    path = _mjcf(tmp_path / "robot", body)
    proc = subprocess.run([sys.executable, "-m", "solver", "import-mjcf", str(path), "--out", str(tmp_path / "o.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert named in proc.stderr and "outside the MJCF's folder" in proc.stderr
    assert not (tmp_path / "o.json").exists()


def test_mjcf_import_follows_includes_and_asset_folders_inside_its_folder(tmp_path):
    from solver.builders.mjcf_read import load_mjcf
    folder = tmp_path / "robot"
    (folder / "assets").mkdir(parents=True)
    (folder / "assets" / "tet.obj").write_text("v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\n"
                                               "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    (folder / "parts.xml").write_text("<mujoco><asset><mesh name='tet' file='tet.obj'/></asset></mujoco>")
    path = _mjcf(folder, "<compiler meshdir='assets'/><include file='parts.xml'/>")
    path.write_text(path.read_text().replace("<worldbody>", "<worldbody><geom type='mesh' mesh='tet'/>"))
    assert load_mjcf(path) is not None
    (folder / "parts.xml").write_text("<mujoco><include file='../../evil.xml'/></mujoco>")
    from solver.core.errors import InvalidInput
    with pytest.raises(InvalidInput, match="include file '../../evil.xml' lies outside"):
        load_mjcf(path)


def test_job_folders_are_private_to_the_user(tmp_path):
    from blender_env import addon, installed_extension
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.physkey.load_preset(preset="drop_onto_armchair")
    session = addon(module, "session")
    unsaved = session.job_folder(bpy.context.scene)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    saved = session.job_folder(bpy.context.scene)
    try:
        assert Path(saved).parent == tmp_path / "physkey"
        for folder in (unsaved, saved):
            assert os.stat(folder).st_mode & 0o077 == 0, oct(os.stat(folder).st_mode)
    finally:
        shutil.rmtree(unsaved)
