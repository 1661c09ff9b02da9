"""MuJoCo's warnings go to stderr, once per kind, instead of MuJoCo's default MUJOCO_LOG.TXT in the
current folder: the solver writes nothing outside `--out`. Blow-up warnings ("the simulation is
unstable") are not printed at all: the solver detects blow-ups from the states, scores such rollouts
+inf and reports an unstable solution with its time, and a planner with exploding candidates would
otherwise flood the log."""
from __future__ import annotations

import re
import sys
import threading

_SEEN: dict[str, int] = {}
_LOCK = threading.Lock()


def _warn(message: str) -> None:
    if "unstable" in message.lower():
        return
    kind = re.sub(r"[-+0-9.e]+", "#", message)  # "… at DOF 3 … Time = 1.25" and "… DOF 4 …" are one kind
    with _LOCK:
        _SEEN[kind] = _SEEN.get(kind, 0) + 1
        if _SEEN[kind] > 1:
            return
    sys.stderr.write(f"mujoco warning: {message.strip()} (further ones like it are not shown)\n")


def route_warnings() -> None:
    """Process-wide; idempotent."""
    import mujoco
    if mujoco.get_mju_user_warning() is not _warn:
        mujoco.set_mju_user_warning(_warn)
