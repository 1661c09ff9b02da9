"""Where a bench finds its task: a file given by path, or a preset by name."""
from __future__ import annotations

import os

from solver.core.paths import task_path


def task_file(task_name: str) -> str:
    """A task file given by path, or by name from scenes/tasks."""
    if os.path.exists(task_name):
        return task_name
    return task_path(task_name)
