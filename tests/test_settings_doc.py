"""docs/SETTINGS.md stays current: it is what `tools/settings_doc.py` renders, every setting of every
method and every planner option appears in it with its default (found here from the registry and
`dataclasses.fields`, not from the tool), and a setting added without regenerating the page fails."""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
from pathlib import Path

from solver.core.registry import METHODS, PLANNERS
from solver.formats.settings import SimulateSettings, groups_of, method_settings, setting
from solver.methods import get_method
from solver.mpc.planners.base import planner_class, planner_options

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "SETTINGS.md"
REGENERATE = "docs/SETTINGS.md is out of date: run python tools/settings_doc.py"


def _tool():
    spec = importlib.util.spec_from_file_location("settings_doc", ROOT / "tools" / "settings_doc.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def _sections(doc: str) -> dict[str, str]:
    """Each `### name` section of the page by its name (a settings class or a planner)."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^### (\S+)\n(.*?)(?=^##|\Z)", doc, re.S | re.M)}


def _default(f: dataclasses.Field):
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


def _documented_classes() -> list[tuple[type, list[str]]]:
    """(dataclass, the section names where its fields may be listed): each method's settings class
    (its own section or a base class's), the dataclasses nested in it, each planner's options."""
    out, queue = [], [get_method(name).settings_type for name in METHODS]
    while queue:
        cls = queue.pop(0)
        out.append((cls, [c.__name__ for c in cls.__mro__ if dataclasses.is_dataclass(c)]))
        queue += [type(_default(f)) for f in dataclasses.fields(cls) if dataclasses.is_dataclass(_default(f))]
    for name in PLANNERS:
        options = planner_class(name).Options
        out.append((options, [n for n in PLANNERS if planner_class(n).Options is options]
                    + [c.__name__ for c in options.__mro__ if dataclasses.is_dataclass(c)]))
    return out


def missing_fields(doc: str) -> list[str]:
    """`Class.field` for each field not in a table row of its sections with its default as JSON."""
    sections = _sections(doc)
    missing = []
    for cls, names in _documented_classes():
        grouped = bool(groups_of(cls))
        for f in dataclasses.fields(cls):
            value = _default(f)
            if grouped:  # a method's group: linked, with the method's own defaults where they differ
                plain = type(value)()
                rows = [f"- [{type(value).__name__}](#{type(value).__name__.lower()})"]
                rows += [f"`{g.name}` `{json.dumps(getattr(value, g.name))}`" for g in dataclasses.fields(value)
                         if getattr(value, g.name) != getattr(plain, g.name)]
            else:
                rows = [f"| `{f.name}` |" if dataclasses.is_dataclass(value) else
                        f"| `{f.name}` | `{json.dumps(value, ensure_ascii=False)}`"]
            if not all(any(row in sections.get(name, "") for name in names) for row in rows):
                missing.append(f"{cls.__name__}.{f.name}")
    return missing


def test_settings_doc_is_current():
    tool = _tool()
    assert DOC.read_text(encoding="utf-8") == tool.render(), REGENERATE
    assert tool.main(["--check"]) == 0


def test_every_setting_and_planner_option_is_documented_with_its_default():
    doc = DOC.read_text(encoding="utf-8")
    assert not missing_fields(doc), f"{REGENERATE} (missing: {missing_fields(doc)})"
    assert not missing_fields(_tool().render())
    for name in list(METHODS) + list(PLANNERS):
        assert f"**{name}**" in doc or f"### {name}\n" in doc, name


def test_a_setting_added_without_regenerating_fails(monkeypatch, capsys):
    tool = _tool()
    stale = DOC.read_text(encoding="utf-8")
    extra = dataclasses.make_dataclass(
        "SimulateSettings", [("extra_setting", float, setting(1.5, "A setting added after the page", positive=True))],
        bases=(SimulateSettings,))
    monkeypatch.setattr(type(get_method("simulate")), "settings_type", extra)
    fresh = tool.render()
    assert fresh != stale
    assert "| `extra_setting` | `1.5` | number | > 0 | A setting added after the page |" in fresh
    assert missing_fields(stale) == ["SimulateSettings.extra_setting"]
    assert not missing_fields(fresh)
    capsys.readouterr()
    assert tool.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == REGENERATE and err.count("\n") == 1


def test_a_changed_default_or_description_fails(monkeypatch):
    tool = _tool()
    stale = DOC.read_text(encoding="utf-8")
    options = planner_class("cem").Options
    changed = dataclasses.make_dataclass(
        options.__name__, [("min_std", float, dataclasses.field(default=0.07, metadata={"description": "Other"}))],
        bases=(options,))
    monkeypatch.setattr(planner_class("cem"), "Options", changed)
    fresh = tool.render()
    assert fresh != stale and "| `min_std` | `0.07` |" in fresh
    assert missing_fields(stale) == [f"{options.__name__}.min_std"]


def test_the_example_is_a_valid_choice_of_planner_and_options():
    doc = DOC.read_text(encoding="utf-8")
    example = json.loads(re.search(r"```json\n(.*?)```", doc, re.S).group(1))
    method = get_method(example["method"])
    settings = method_settings(method.settings_type, example["settings"])
    assert planner_options(settings.sampling) is not None
