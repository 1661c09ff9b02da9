"""Write docs/SETTINGS.md, the reference of every method's settings and every planner's options,
from the settings dataclasses' own metadata (`description`, bounds, choices; see `solver/core/schema.py`).

The settings classes are found through the registry (`solver/core/registry.py`): each method's
`settings_type` in the registry's order, the dataclasses nested in their fields, then each planner's
`Options`. Nothing here names a field: a setting added, removed or re-described changes the page the
next time this runs, and `tests/test_settings_doc.py` fails until it has. Run:
.venv/bin/python tools/settings_doc.py            (writes docs/SETTINGS.md)
.venv/bin/python tools/settings_doc.py --check    (exit 1 if docs/SETTINGS.md is out of date)
"""
from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import sys
import types
import typing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver.core.registry import METHODS, PLANNERS  # noqa: E402
from solver.formats.settings import DRAFT, RENAMED, field_default, groups_of  # noqa: E402
from solver.methods import get_method  # noqa: E402
from solver.mpc.planners.base import planner_class  # noqa: E402

DOC = ROOT / "docs" / "SETTINGS.md"
OPTIONS_FIELD = "planner_options"  # the settings field that holds the chosen planner's `Options`
# Fields whose allowed values are a registry's names: checked by the class's `check`, not by metadata.
REGISTRY_CHOICES = {"planner": PLANNERS}
# Metadata keys rendered in the "Allowed" column by `allowed`; any other key is shown as `key: value`,
# so that a key added to the settings (units, say) shows up instead of being dropped.
KNOWN_META = {"description", "positive", "nonneg", "min", "max", "soft_min", "soft_max", "choices", "length",
              "min_length", "nonempty", "multiline"}


# -- which classes ----------------------------------------------------------------------------------
def method_classes() -> dict[type, list[str]]:
    """Settings class → the methods that take it, in the registry's order of methods."""
    classes: dict[type, list[str]] = {}
    for name in METHODS:
        classes.setdefault(get_method(name).settings_type, []).append(name)
    return classes


def field_types(cls) -> dict[str, object]:
    """The resolved type of each field of dataclass `cls` (the modules use postponed annotations)."""
    return typing.get_type_hints(cls)


def inner_types(tp) -> list:
    """`tp` and the types inside it (Optional's, a list's items, a dict's values), outermost first."""
    return [tp] + [t for arg in typing.get_args(tp) for t in inner_types(arg)]


def key_paths(roots: list[type]) -> dict[type, str]:
    """Every settings dataclass reachable from `roots` → where it sits in a task file (`settings`, or
    `settings.<field>` for a dataclass nested in a field; a method's groups sit flat in `settings`),
    roots first, nested ones after their parent."""
    paths: dict[type, str] = {}
    queue = [(cls, "settings") for cls in roots]
    while queue:
        cls, path = queue.pop(0)
        if cls in paths:
            continue
        paths[cls] = path
        hints = field_types(cls)
        flat = bool(groups_of(cls))
        for f in dataclasses.fields(cls):
            sub = path if flat else f"{path}.{f.name}"
            queue += [(t, sub) for t in inner_types(hints[f.name]) if dataclasses.is_dataclass(t)]
    return paths


def options_classes() -> dict[str, type]:
    """Planner name → its `Options` dataclass, in the registry's order of planners."""
    return {name: planner_class(name).Options for name in PLANNERS}


def options_key(cls) -> str | None:
    """Where settings class `cls` (or a dataclass nested in it) holds `OPTIONS_FIELD` in a task file,
    or None where it takes no planner."""
    for holder, path in key_paths([cls]).items():
        if OPTIONS_FIELD in {f.name for f in dataclasses.fields(holder)}:
            return f"{path}.{OPTIONS_FIELD}"
    return None


def planner_methods(methods: dict[type, list[str]]) -> tuple[list[str], str]:
    """The methods that take a planner, in the registry's order, and where its options go. Raises where
    none does: the page's account of planner options would be wrong."""
    takers = {m: options_key(cls) for cls, ms in methods.items() for m in ms if options_key(cls)}
    if not takers:
        raise LookupError(f"no settings class has a '{OPTIONS_FIELD}' field: update tools/settings_doc.py")
    if len(set(takers.values())) > 1:
        raise LookupError(f"'{OPTIONS_FIELD}' sits in several places ({sorted(set(takers.values()))}): "
                          "update tools/settings_doc.py")
    return sorted(takers, key=list(METHODS).index), next(iter(takers.values()))


# -- one field ------------------------------------------------------------------------------------
def default_text(f: dataclasses.Field) -> str:
    """The default as a user writes it in the task's JSON: `null`, `true`, `"cubic"`, `{}`."""
    value = field_default(f)
    if value is dataclasses.MISSING:
        return "required"
    if dataclasses.is_dataclass(value):
        return f"see [{type(value).__name__}](#{type(value).__name__.lower()})"
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def json_type(tp) -> str:
    """A field's type in JSON's words (what a task file may hold there)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        kinds = [json_type(a) for a in args if a is not type(None)]
        return " or ".join(kinds) + (" or null" if type(None) in args else "")
    if dataclasses.is_dataclass(tp):
        return f"object ([{tp.__name__}](#{tp.__name__.lower()}))"
    if origin is list:
        return f"list of {json_type(args[0])}" if args else "list"
    if origin is dict or tp is dict:
        return "object"
    return {int: "integer", float: "number", bool: "true/false", str: "string"}.get(tp, "any")


def number(x) -> str:
    """A bound as people read it: 600 rather than 600.0, full precision otherwise."""
    return str(int(x)) if isinstance(x, float) and x.is_integer() and abs(x) < 1e15 else repr(x)


def lower_bound(meta: dict) -> str | None:
    """The tightest of `positive` (> 0), `nonneg` (≥ 0) and `min` (≥ min), or None."""
    bounds = [(0, 1, "> 0")] if meta.get("positive") else []
    bounds += [(0, 0, "≥ 0")] if meta.get("nonneg") else []
    bounds += [(meta["min"], 0, f"≥ {number(meta['min'])}")] if "min" in meta else []
    return max(bounds, key=lambda b: (b[0], b[1]))[2] if bounds else None


def allowed(name: str, tp, meta: dict) -> str:
    """What values the field accepts, from its metadata: choices, hard bounds, list lengths, then
    soft bounds (the range Blender's sliders suggest) and any metadata key this tool does not know."""
    registry = name in REGISTRY_CHOICES  # its choices linked to their sections below
    parts = [", ".join(f"`{json.dumps(c)}`" for c in meta["choices"])] if "choices" in meta and not registry else []
    if registry:
        parts.append(", ".join(f"[`{json.dumps(c)}`](#{c})" for c in REGISTRY_CHOICES[name]))
    parts += [b for b in (lower_bound(meta),) if b]
    parts += [f"≤ {number(meta['max'])}"] if "max" in meta else []
    parts += [f"exactly {meta['length']} items"] if "length" in meta else []
    parts += [f"at least {meta['min_length']} items"] if "min_length" in meta else []
    if tp in (str, typing.Optional[str]) and not parts and meta.get("nonempty", True):
        parts.append("not empty")
    parts += [f"suggested ≥ {number(meta['soft_min'])}"] if "soft_min" in meta else []
    parts += [f"suggested ≤ {number(meta['soft_max'])}"] if "soft_max" in meta else []
    parts += [f"{k}: {v}" for k, v in meta.items() if k not in KNOWN_META]
    return "; ".join(parts) or "any"


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell (no pipes, no line breaks)."""
    return " ".join(str(text).split()).replace("|", "\\|")


# -- tables and sections --------------------------------------------------------------------------
def documented_base(cls, documented) -> type | None:
    """The nearest base class of `cls` that has fields and a section of its own on the page."""
    for base in cls.__mro__[1:]:
        if base in documented and dataclasses.fields(base):
            return base
    return None


def same_field(a: dataclasses.Field, b: dataclasses.Field) -> bool:
    """Whether two fields read alike to a user: the same default, type and metadata."""
    return field_default(a) == field_default(b) and a.type == b.type and dict(a.metadata) == dict(b.metadata)


def table(cls, base: type | None) -> list[str]:
    """The Markdown table of `cls`'s fields: all of them, or, where it extends the documented `base`,
    those it adds or changes (a changed default shows the base's beside it)."""
    inherited = {f.name: f for f in dataclasses.fields(base)} if base else {}
    hints = field_types(cls)
    rows = ["| Setting | Default | Type | Allowed | Description |", "|---|---|---|---|---|"]
    for f in dataclasses.fields(cls):
        was = inherited.get(f.name)
        if was is not None and same_field(f, was):
            continue
        default = default_text(f)
        if was is not None and field_default(was) != field_default(f):
            default += f" ({base.__name__}: {default_text(was)})"
        description = f.metadata.get("description", "*(no description)*")
        rows.append(f"| `{f.name}` | {cell(default)} | {cell(json_type(hints[f.name]))} | "
                    f"{cell(allowed(f.name, hints[f.name], dict(f.metadata)))} | {cell(description)} |")
    return rows if len(rows) > 2 else ["*(nothing of its own)*"]


def class_doc(cls) -> str | None:
    """The class's own docstring as one paragraph (not the signature dataclasses make up)."""
    doc = cls.__dict__.get("__doc__")
    if not doc or doc.startswith(f"{cls.__name__}("):
        return None
    return " ".join(inspect.cleandoc(doc).split())


def method_line(methods: list[str]) -> str:
    """Which methods take a settings class, with the label and description users see."""
    return "; ".join(f"**{m}** ({METHODS[m].label}: {METHODS[m].description})" for m in methods)


def group_lines(cls) -> list[str]:
    """A method's settings made of groups: the groups, the defaults it gives them where they differ
    from the group's own, and the earlier names it still reads."""
    lines = ["Its settings are these groups' (each read by one part of the solver), all flat in `settings`:", ""]
    changed = []
    for f in groups_of(cls).values():
        value = f.default_factory()
        group = type(value)
        lines.append(f"- [{group.__name__}](#{group.__name__.lower()})")
        plain = group()
        changed += [f"`{g.name}` {default_json(getattr(value, g.name))} ({group.__name__}: "
                    f"{default_json(getattr(plain, g.name))})" for g in dataclasses.fields(group)
                    if getattr(value, g.name) != getattr(plain, g.name)]
    lines.append("")
    if changed:
        lines += [f"Its own defaults: {', '.join(changed)}.", ""]
    return lines + renamed_lines(cls)


def renamed_lines(cls) -> list[str]:
    """The earlier names of settings a method's class still reads (`RENAMED`)."""
    names = RENAMED.get(cls.__name__)
    return ["Earlier names it still reads: " + ", ".join(f"`{old}` as `{new}`" for old, new in names.items()) + ".",
            ""] if names else []


def default_json(value) -> str:
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def settings_section(cls, path: str, methods: list[str], documented, readers: list[str]) -> list[str]:
    """One settings class: who takes it, where it goes in a task file, what it extends, its table."""
    lines = [f"### {cls.__name__}", ""]
    lines += [f"The settings of the method{'s' if len(methods) > 1 else ''} {method_line(methods)}.", ""] \
        if methods else []
    lines += [f"In the settings of: {', '.join(f'**{m}**' for m in readers)}.", ""] if readers and not methods else []
    lines += [f"In a task file: `{path}`.", ""]
    lines += [doc, ""] if (doc := class_doc(cls)) else []
    if groups_of(cls):
        return lines + group_lines(cls)
    lines += renamed_lines(cls)
    base = documented_base(cls, documented)
    if base is not None:
        lines += [f"Extends [{base.__name__}](#{base.__name__.lower()}): it takes every setting there, with "
                  f"the defaults there except where this table gives its own. Its own and changed settings:", ""]
    return lines + table(cls, base) + [""]


def planner_section(name: str, options, first_user: dict, documented, options_path: str) -> list[str]:
    """One planner: its label and description from the registry, and its options' table."""
    entry = PLANNERS[name]
    lines = [f"### {name}", "", f"**{entry.label}**: {entry.description}.", ""]
    if not dataclasses.fields(options):
        return lines + [f"No options of its own: `{options_path}` stays empty.", ""]
    if first_user[options] != name:
        return lines + [f"Takes the options of [{first_user[options]}](#{first_user[options]}).", ""]
    lines += [f"`{options_path}` (`{options.__name__}`):", ""]
    lines += [doc, ""] if (doc := class_doc(options)) else []
    base = documented_base(options, documented)
    if base is not None:
        lines += [f"Extends [{base.__name__}](#{base.__name__.lower()}); its own and changed options:", ""]
    return lines + table(options, base) + [""]


# -- the page -------------------------------------------------------------------------------------
def example(method: str, options: dict[str, type]) -> str:
    """A task-file excerpt choosing a planner and one of its options (the first ones that have any)."""
    planner = next(n for n, o in options.items() if dataclasses.fields(o))
    first = dataclasses.fields(options[planner])[0]
    settings = {next(iter(REGISTRY_CHOICES)): planner, OPTIONS_FIELD: {first.name: field_default(first)}}
    return json.dumps({"method": method, "settings": settings}, indent=2, ensure_ascii=False)


def intro(takers: list[str], options_path: str, options: dict[str, type]) -> list[str]:
    """The top of the page: what it is, where settings go in a task file, how they are checked."""
    planner_path = options_path.rpartition(".")[0] + "." + next(iter(REGISTRY_CHOICES))
    return [
        "# Settings", "",
        "<!-- Generated by `python tools/settings_doc.py` from the settings' metadata (solver/formats/settings.py "
        "and the planners' `Options`): edit those and run it again; tests/test_settings_doc.py fails while this "
        "page is out of date. -->", "",
        "A task file's `settings` object holds its method's settings: the method's settings class below (one "
        "per method, in the order the methods are registered). The sampling-MPC methods' settings are groups, "
        "each read by one part of the solver, all written flat in `settings`. A setting left out takes its "
        "method's default; an unknown "
        "key, a value of the wrong type or one outside its allowed range is refused with an error that names it "
        "(`settings.horizon: must be > 0, got -1.0`). The Blender panels build their fields for these settings "
        "from the same metadata: the same defaults, bounds and descriptions.", "",
        f"The {' and '.join(takers)} methods choose a sampling planner by name (`{planner_path}`); that planner's "
        f"own options go in `{options_path}` (see [Planner options](#planner-options)). A task-file excerpt:", "",
        "```json", example(takers[0], options), "```", "",
        "*Allowed* lists the checks a value must pass (`suggested` bounds are only the range Blender's sliders "
        "offer); `unit` is the unit of a value. Some checks span several settings (the horizon against "
        "the planning timestep, the knots against the spline, the rollouts against the planner): they are "
        "not in the tables, and their errors name the setting.", "",
    ]


def quality_section() -> list[str]:
    """Draft quality: what it sets per method (`solver run --draft`, Blender's Quality menu)."""
    lines = ["## Quality: Draft and Final", "",
             "*Final* is every method's defaults above, for the clip to keep. *Draft* (`python -m solver run TASK "
             "--draft`, Blender's Quality menu) is a plausible first motion quickly, for a look: it sets these "
             "over the task's own settings (in Blender over the panel's fields; More still wins). Its figures: "
             "benchmarks/RESULTS.md, \"Draft and Final\".", "",
             "| Method | Draft sets |", "|---|---|"]
    for method, values in DRAFT.items():
        lines.append(f"| {method} | " + (", ".join(f"`{k}` {json.dumps(v)}" for k, v in values.items())
                                        or "nothing (Draft is Final)") + " |")
    return lines + [""]


def render() -> str:
    """The whole of docs/SETTINGS.md, from the registry and the settings' metadata."""
    methods = method_classes()
    paths = key_paths(list(methods))
    takers, options_path = planner_methods(methods)
    options = options_classes()
    first_user = {}
    for name, cls in options.items():
        first_user.setdefault(cls, name)
    documented = set(paths) | set(options.values())
    lines = intro(takers, options_path, options) + ["## Method settings", ""]
    readers: dict[type, list[str]] = {}
    for cls, ms in methods.items():
        for f in groups_of(cls).values():
            readers.setdefault(type(f.default_factory()), []).extend(ms)
    for cls, path in paths.items():
        lines += settings_section(cls, path, methods.get(cls, []), documented, readers.get(cls, []))
    lines += quality_section()
    lines += ["## Planner options", "",
              f"Each planner's options, for `{options_path}` when the settings choose that planner.", ""]
    for name, cls in options.items():
        lines += planner_section(name, cls, first_user, documented, options_path)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write docs/SETTINGS.md, or with --check say whether it is current (exit status 1 if not)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/SETTINGS.md is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not DOC.exists() or DOC.read_text(encoding="utf-8") != text:
            print(f"{DOC.relative_to(ROOT)} is out of date: run python tools/settings_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
