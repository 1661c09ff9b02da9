import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTHONPATH", str(ROOT))

from solver.core.mujoco_log import route_warnings  # noqa: E402

route_warnings()  # MuJoCo's warnings from in-process tests: stderr, never MUJOCO_LOG.TXT in the checkout

_EXIT: dict = {}


@pytest.fixture(scope="module")
def fall():
    """A passive 1.5 s simulation of the humanoid standing limp: a motion physics can certainly do (the
    track method's tests follow it: `track_cases`)."""
    from solver.formats.task import task_from_dict
    from solver.methods import get_method
    from solver.physics.rollout import RolloutEngine
    from solver.run.cli import prepare_task
    _, prep = prepare_task(task_from_dict({"schema_version": 1, "name": "fall", "method": "simulate",
                                           "settings": {"duration": 1.5, "perturb": 0.0}}))
    with RolloutEngine(prep.engine_model(), 1) as engine:
        sol = get_method("simulate").solve(prep, 0, engine)
    return sol.times, sol.qpos


def pytest_configure(config):
    """Every temporary folder of the run — the add-on's solve folders of an unsaved file, Blender's
    user folder, the solver's scratch — goes into one folder removed when the tests end (Blender's
    exit below skips Python's own cleanup, so it is removed in `pytest_sessionfinish`)."""
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the run's folder is its controller's
        tempfile.tempdir = os.environ["TMPDIR"]
        return
    folder = tempfile.mkdtemp(prefix="physkey-tests-")
    _EXIT["tmp"] = folder
    os.environ["TMPDIR"] = folder
    tempfile.tempdir = folder


def pytest_sessionfinish(session, exitstatus):
    _EXIT["status"] = int(exitstatus)
    folder = _EXIT.pop("tmp", None)
    if folder:
        tempfile.tempdir = None
        shutil.rmtree(folder, ignore_errors=True)


def pytest_unconfigure(config):
    """Blender as a Python module does not always exit cleanly after the tests are done: 4.2 segfaults
    in its teardown once Rigify has been enabled, 4.5 deadlocks in a static destructor (its delayed
    file-close thread) once a .blend file has been opened — after every test has passed. Where Blender
    was loaded, the process ends here with pytest's own status (a solver still running sees its stdin
    close and stops: `--exit-with-stdin`)."""
    if "bpy" in sys.modules and "status" in _EXIT:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT["status"])
