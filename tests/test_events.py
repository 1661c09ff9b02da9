"""The events a solve streams are declared once (`solver/formats/events.py`): every kind has its
meaning, the docs list every kind, no emitter or reader spells a kind as a bare string, and a real
solve streams only declared kinds."""
import ast
import json
import subprocess
import sys
from pathlib import Path

from solver.formats.events import MEANING, Event

ROOT = Path(__file__).resolve().parents[1]
JOB_OWN = {"log", "exit"}  # addon/job.py's own events about the process (not the solver's)


def _spelled_kinds(roots=("solver", "addon")):
    """(file:line, kind) of every `{"event": "<literal>"}` and `… == "<literal>"` against an event."""
    found = []
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Dict):
                    for k, v in zip(node.keys, node.values):
                        if (isinstance(k, ast.Constant) and k.value == "event" and isinstance(v, ast.Constant)
                                and isinstance(v.value, str)):
                            found.append((f"{path.relative_to(ROOT)}:{node.lineno}", v.value))
    return found


def test_every_kind_has_its_meaning_and_the_docs_list_it():
    assert set(MEANING) == set(Event)
    methods_doc = (ROOT / "docs" / "METHODS.md").read_text(encoding="utf-8")
    assert [k.value for k in Event if f"`{k.value}`" not in methods_doc] == []


def test_no_event_kind_is_spelled_as_a_bare_string():
    assert [(where, kind) for where, kind in _spelled_kinds() if kind not in JOB_OWN] == []


def test_the_check_finds_a_bare_kind(tmp_path, monkeypatch):
    sample = tmp_path / "solver" / "x.py"
    sample.parent.mkdir()
    sample.write_text('emit({"event": "progres", "seed": 0})\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert _spelled_kinds(("solver",)) == [("solver/x.py:1", "progres")]


def test_a_solve_streams_only_declared_kinds(tmp_path):
    doc = json.loads((ROOT / "scenes/tasks/drop_onto_armchair.json").read_text())
    doc["settings"]["duration"] = 0.3
    task = tmp_path / "task.json"
    task.write_text(json.dumps(doc))
    proc = subprocess.run([sys.executable, "-m", "solver", "run", str(task), "--out", str(tmp_path / "out"),
                           "--num-seeds", "2", "--workers", "2", "--jsonl"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    kinds = [json.loads(line)["event"] for line in proc.stdout.splitlines()]
    assert set(kinds) <= {k.value for k in Event}
    assert {"start", "seed_start", "progress", "solution", "done"} <= set(kinds)
