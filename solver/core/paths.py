"""Where PhysKey's data lives: the `scenes/` folder beside the solver (in the repository and in
the installed extension alike), or inside it as `solver/_scenes` where the solver travels alone (a
`pip install`, a Ray worker), and its parts. The one place these paths are written."""
from __future__ import annotations

import os

SOLVER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # this module is in solver/core
ROOT_DIR = os.path.dirname(SOLVER_DIR)
_CARRIED = os.path.join(SOLVER_DIR, "_scenes")
SCENES_DIR = _CARRIED if os.path.isdir(_CARRIED) else os.path.join(ROOT_DIR, "scenes")
TASKS_DIR = os.path.join(SCENES_DIR, "tasks")
CHARACTERS_DIR = os.path.join(SCENES_DIR, "characters")
ENVIRONMENTS_DIR = os.path.join(SCENES_DIR, "environments")
PARTITIONINGS_FILE = os.path.join(SCENES_DIR, "planner", "partitionings.json")


def task_names() -> list[str]:
    """The tasks of `scenes/tasks` by name (the Blender presets and `bench --task NAME`)."""
    return sorted(f[:-5] for f in os.listdir(TASKS_DIR) if f.endswith(".json"))


def task_path(name: str) -> str:
    """The file of task `name` in `scenes/tasks`."""
    return os.path.join(TASKS_DIR, f"{name}.json")
