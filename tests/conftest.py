import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTHONPATH", str(ROOT))

from solver.mujoco_log import route_warnings  # noqa: E402

route_warnings()  # MuJoCo's warnings from in-process tests: stderr, never MUJOCO_LOG.TXT in the checkout
