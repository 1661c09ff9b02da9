"""The presets a tool writes are the tool's output: a preset derived from another one (the hit reactions'
seated keyframe is stand → sit → stand's `armchair0`) follows it when that one changes, instead of
keeping a copy of what it was. (The box presets' own check is in test_box_tasks.py.)"""
import importlib.util
import json
from pathlib import Path

import pytest

from solver.core import schema
from solver.core.paths import task_path

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def _written(tool: str) -> list[dict]:
    """The task documents `tools/<tool>.py` writes, as its `main` writes them (JSON)."""
    module = _tool(tool)
    docs = module.TASKS if tool == "make_hit_tasks" else [module.squat(), module.step_up()]
    return [json.loads(schema.format_json(doc)) for doc in docs]


@pytest.mark.parametrize("tool", ["make_hit_tasks", "make_track_tasks"])
def test_the_presets_are_the_tools_output(tool):
    for doc in _written(tool):
        assert json.loads(Path(task_path(doc["name"])).read_text(encoding="utf-8")) == doc, doc["name"]


def test_the_seated_hit_sits_as_stand_sit_stand_sits():
    """Judged seated (the weight on the seat, the feet down) with the same weights as the armchair's sit."""
    (seated,) = json.loads(Path(task_path("hit_seated")).read_text(encoding="utf-8"))["keyframes"]
    sit = next(k for k in json.loads(Path(task_path("armchair_stand_sit_stand")).read_text(encoding="utf-8"))
               ["keyframes"] if k["name"] == "armchair0")
    assert seated["style"] == sit["style"] == "seated"
    assert seated["weights"] == sit["weights"] and seated["pairs"] == sit["pairs"]
