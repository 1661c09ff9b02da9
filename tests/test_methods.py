"""The method contract: every registered method is a `Method` under its registered name with its
settings dataclass and declared capabilities; solves report typed `Progress`; a task's method name
is validated from the registry without importing any method (or pycma)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from solver.core.errors import InvalidInput
from solver.core.registry import METHODS
from solver.formats import settings as settings_module
from solver.formats.solution import Progress, Solution
from solver.formats.task import task_from_dict
from solver.methods import get_method
from solver.methods.base import Capabilities, Method, Prepared
from solver.physics.rollout import RolloutEngine

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", list(METHODS))
def test_every_registered_method_keeps_the_contract(name):
    method = get_method(name)
    assert isinstance(method, Method) and method.name == name
    assert isinstance(method.capabilities, Capabilities)
    assert getattr(settings_module, method.settings_type.__name__) is method.settings_type


def test_capabilities_are_declared_not_probed():
    assert get_method("contact").capabilities.appended_keyframes
    assert not get_method("assist").capabilities.appended_keyframes
    assert get_method("assist").capabilities.partial_solutions
    with pytest.raises(NotImplementedError):
        get_method("simulate").check_appended([], None, "append_keyframes")


def test_an_unknown_method_names_the_registered_ones():
    with pytest.raises(InvalidInput) as e:
        get_method("tracking")
    assert e.value.path == "method" and all(name in str(e.value) for name in METHODS)


def test_a_simulate_solve_reports_typed_progress_to_the_end():
    doc = json.loads((ROOT / "scenes/tasks/drop_onto_armchair.json").read_text())
    doc["settings"].update(duration=0.5, chunk=0.1)
    method = get_method("simulate")
    prepared = method.prepare(task_from_dict(doc))
    assert isinstance(prepared, Prepared) and prepared.batch() is None
    reports = []
    with RolloutEngine(prepared.engine_model(), 1) as engine:
        solution = method.solve(prepared, 0, engine, reports.append)
    assert isinstance(solution, Solution) and solution.success
    assert reports and all(isinstance(r, Progress) for r in reports)
    fractions = [r.fraction for r in reports]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)


def test_task_validation_imports_no_method():
    code = ("import json, sys; from solver.formats.task import load_task; "
            "load_task('scenes/tasks/armchair_stand_sit_stand.json'); "
            "load_task('scenes/tasks/assist_box_jump_low.json'); "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('solver.methods', 'solver.mpc', "
            "'solver.assist', 'cma', 'scipy')))))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []
