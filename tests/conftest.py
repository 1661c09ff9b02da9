import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTHONPATH", str(ROOT))

from solver.mujoco_log import route_warnings  # noqa: E402

route_warnings()  # MuJoCo's warnings from in-process tests: stderr, never MUJOCO_LOG.TXT in the checkout

_EXIT: dict = {}


def pytest_sessionfinish(session, exitstatus):
    _EXIT["status"] = int(exitstatus)


def pytest_unconfigure(config):
    """Blender 4.2 as a Python module crashes in its own teardown at exit once Rigify has been enabled
    (a segfault after every test has passed: `import bpy`, enable Rigify, add a meta-rig, exit; 4.5 and
    later do not). Where that Blender runs the tests, the process ends here with pytest's own status."""
    bpy = sys.modules.get("bpy")
    if bpy is not None and bpy.app.version < (4, 5, 0) and "status" in _EXIT:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT["status"])
