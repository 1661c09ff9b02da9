"""The documents and mutations the input fuzzing (tests/test_fuzz_inputs.py) starts from: the real
task files and inline-SceneDesc tasks, the values planted in them (huge and tiny numbers, NaN/inf,
odd unicode, deep nesting) and the hypothesis strategy that mutates a document at random paths."""
from __future__ import annotations

import copy
import glob
import json
import math
import sys
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from solver.core import schema  # noqa: E402
from solver.formats.task import SceneRef, build_scene  # noqa: E402

# -- the starting documents ---------------------------------------------------------------------------------

def _scene_desc(environment: str, rich: bool) -> dict:
    """A built-in scene as the inline SceneDesc the add-on sends; `rich` adds what the humanoid lacks
    (a free environment body with a mesh hull and sites, a ball joint with its initial orientation)."""
    desc = schema.to_dict(build_scene(SceneRef(environment=environment)))
    if rich:
        cube = [[x, y, z] for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)]
        desc["environment"]["bodies"].append(
            {"name": "crate", "kind": "free", "pos": [1.5, 0.0, 0.2],
             "geoms": [{"name": "crate_hull", "type": "mesh", "vertices": cube, "mass": 2.0}],
             "sites": [{"name": "crate_top", "pos": [0.0, 0.0, 0.1]}]})
        root = desc["character"]["bodies"][0]["name"]
        desc["character"]["bodies"].append(
            {"name": "tail", "parent": root, "pos": [0.0, -0.1, -0.1], "length": 0.1,
             "joints": [{"name": "tail_ball", "type": "ball", "range": [0.0, 1.0]}],
             "geoms": [{"name": "tail_tip", "type": "sphere", "size": [0.03]}]})
        desc["initial_pose"]["ball_joints"] = {"tail_ball": [1.0, 0.0, 0.0, 0.0]}
    return desc


def _task_file(name: str) -> dict:
    return json.loads((ROOT / "scenes" / "tasks" / f"{name}.json").read_text(encoding="utf-8"))


def _inline(name: str, environment: str, rich: bool, **changes) -> dict:
    task = _task_file(name)
    task["scene"] = {"desc": _scene_desc(environment, rich)}
    task.update(changes)
    return task


def _bases() -> dict[str, dict]:
    bases = {Path(p).stem: json.loads(Path(p).read_text(encoding="utf-8"))
             for p in sorted(glob.glob(str(ROOT / "scenes" / "tasks" / "*.json")))}
    bases["inline_simulate"] = _inline("drop_onto_armchair", "armchair", True, seeds=[0])
    bases["inline_contact"] = _inline("armchair_stand_sit_stand", "armchair", True)
    bases["inline_assist"] = _inline("assist_box_jump_low", "box", False)
    return bases


BASES = _bases()
INLINE = sorted(name for name in BASES if name.startswith("inline_"))


def _paths(doc) -> list[tuple]:
    """Every node of a JSON tree as a key path (the root is ()), in a fixed order."""
    out, stack = [], [((), doc)]
    while stack:
        path, value = stack.pop()
        out.append(path)
        if isinstance(value, dict):
            stack.extend((path + (k,), v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((path + (i,), v) for i, v in reversed(list(enumerate(value))))
    return out


def _by_shape(paths: list[tuple]) -> list[list[tuple]]:
    """Paths grouped by shape (list indices as *): a mutation first picks a shape, then one of its
    paths, so the one `character.bodies[*].name` is hit as often as the hundreds of `geoms[*].size[*]`."""
    groups: dict[tuple, list[tuple]] = {}
    for p in paths:
        groups.setdefault(tuple("*" if isinstance(k, int) else k for k in p), []).append(p)
    return list(groups.values())


PATHS = {name: _by_shape(_paths(doc)) for name, doc in BASES.items()}
DESC_PATHS = {name: _by_shape([p for p in _paths(BASES[name]) if p[:2] == ("scene", "desc")]) for name in INLINE}


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


# Strings of each document (names of bodies, joints, …): swapping them in mixes up references.
STRINGS = {name: sorted({v for v in (_get(doc, p) for p in _paths(doc)) if isinstance(v, str)})
           for name, doc in BASES.items()}


# -- values to plant ----------------------------------------------------------------------------------------

def _deep(n: int, kind: str):
    value: object = 1.0
    for _ in range(n):
        value = [value] if kind == "list" else {"a": value}
    return value


NASTY = {
    "null": None, "true": True, "false": False, "zero": 0, "one": 1, "minus_one": -1,
    "max_float": 1e308, "min_float": -1e308, "tiny": 1e-308, "minus_tiny": -1e-308, "denormal": 5e-324,
    "minus_zero": -0.0, "nan": math.nan, "inf": math.inf, "minus_inf": -math.inf,
    "int64_overflow": 2 ** 63, "int_1e30": 10 ** 30, "int_1e400": 10 ** 400, "int_5000_digits": 10 ** 5000,
    "empty_string": "", "space": " ", "nul": "\x00", "nul_inside": "hip\x00_x", "emoji": "🦴💥",
    "rtl": "\u202eﺏﺍﺭ", "newline": "a\nb", "line_separator": "a\u2028b", "lone_surrogate": "\ud800",
    "long_string": "x" * 100_000, "world": "world", "root": "root", "floor": "floor", "nan_string": "NaN",
    "empty_list": [], "empty_object": {}, "vec3": [0.0, 0.0, 0.0], "quat": [1.0, 0.0, 0.0, 0.0],
    "zero_quat": [0.0, 0.0, 0.0, 0.0], "huge_quat": [1e308, 1e308, 1e308, 1e308],
    "tiny_quat": [1e-200, 0.0, 0.0, 0.0], "nan_list": [math.nan] * 3, "string_list": ["a", "b"],
    "nested_list": [[1.0]], "null_list": [None], "pair3": [["a", "b", "c"]], "pair1": [["a"]],
    "huge_list": [0.0] * 100_000, "huge_string_list": ["x"] * 20_000,
    "deep_list": _deep(10_000, "list"), "deep_object": _deep(10_000, "dict"),
    "deep_list_900": _deep(900, "list"),
}
NASTY_NAMES = sorted(NASTY)
_SHARED = {"deep_list", "deep_object", "deep_list_900"}  # too deep to copy; the solver must not mutate input

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)

# A value is drawn as a small tagged tuple (readable in a falsifying example) and built by _value().
values = st.one_of(
    st.tuples(st.just("nasty"), st.sampled_from(NASTY_NAMES)),
    st.tuples(st.just("float"), st.floats()),
    st.tuples(st.just("int"), st.integers()),
    st.tuples(st.just("text"), st.text(max_size=12)),
    st.tuples(st.just("json"), json_values),
    st.tuples(st.just("name"), st.integers(0, 10_000)),
)


def _value(tagged, base: str):
    kind, v = tagged
    if kind == "nasty":
        return NASTY[v] if v in _SHARED else copy.deepcopy(NASTY[v])
    if kind == "name":
        pool = STRINGS[base]
        return pool[v % len(pool)] if pool else ""
    return copy.deepcopy(v)


NUMBER_EDITS = ("negate", "times_1e308", "times_1e-308", "zero", "to_int", "to_bool", "to_string", "plus_tiny",
                "times_1e6", "to_nan", "to_list")
STRING_EDITS = ("append_nul", "append_emoji", "append_rtl", "append_newline", "append_space", "upper",
                "repeat", "truncate", "to_number", "to_list")


def _edit_number(x, how):
    return {"negate": lambda: -x, "times_1e308": lambda: x * 1e308 if x else 1e308,
            "times_1e-308": lambda: x * 1e-308, "zero": lambda: 0, "to_int": lambda: int(x),
            "to_bool": lambda: bool(x), "to_string": lambda: str(x), "plus_tiny": lambda: x + 1e-12,
            "times_1e6": lambda: x * 1e6, "to_nan": lambda: math.nan, "to_list": lambda: [x]}[how]()


def _edit_string(s, how):
    return {"append_nul": lambda: s + "\x00", "append_emoji": lambda: s + "🦴", "append_rtl": lambda: "\u202e" + s,
            "append_newline": lambda: s + "\n", "append_space": lambda: s + " ", "upper": lambda: s.upper(),
            "repeat": lambda: s * 1000, "truncate": lambda: s[:-1], "to_number": lambda: len(s),
            "to_list": lambda: [s]}[how]()


OPS = ("replace", "replace", "replace", "delete", "add_key", "insert_item", "duplicate_item", "swap_items",
       "edit", "edit", "wrap")


BASE_NAMES = tuple(sorted(BASES))


@st.composite
def mutations(draw, bases=BASE_NAMES, desc_only=False):
    """(base name, [ops]): each op = (op, path, planted value or edit)."""
    base = draw(st.sampled_from(bases))
    shapes = DESC_PATHS[base] if desc_only else PATHS[base]
    ops = []
    for _ in range(draw(st.integers(1, 3))):
        paths = shapes[draw(st.integers(0, len(shapes) - 1))]
        path = paths[draw(st.integers(0, len(paths) - 1))]
        op = draw(st.sampled_from(OPS))
        arg = None
        if op in ("replace", "add_key", "insert_item"):
            arg = draw(values)
            if op == "add_key":
                arg = (draw(st.one_of(st.text(max_size=8), st.sampled_from(["name", "mass", "desc", "include",
                                                                            "\x00", "🦴", ""]))), arg)
        elif op == "edit":
            arg = (draw(st.sampled_from(NUMBER_EDITS)), draw(st.sampled_from(STRING_EDITS)))
        elif op in ("swap_items", "duplicate_item"):
            arg = draw(st.integers(0, 1000))
        ops.append((op, path, arg))
    return base, ops


def _locate(doc, path):
    """(container, key) of `path` in doc, or None when an earlier mutation removed it."""
    node = doc
    for k in path[:-1]:
        if isinstance(node, dict) and isinstance(k, str) and k in node:
            node = node[k]
        elif isinstance(node, list) and isinstance(k, int) and k < len(node):
            node = node[k]
        else:
            return None
    k = path[-1]
    if isinstance(node, dict) and isinstance(k, str) and k in node:
        return node, k
    if isinstance(node, list) and isinstance(k, int) and k < len(node):
        return node, k
    return None


def _copy(value):
    try:
        return copy.deepcopy(value)
    except RecursionError:  # a planted 10,000-deep value is shared, not copied
        return value


def apply(base: str, ops) -> object:
    """The base document with `ops` applied (a fresh copy; the bases are never touched)."""
    doc = copy.deepcopy(BASES[base])
    holder = [doc]  # the root as a container, so path () can be replaced too
    for op, path, arg in ops:
        loc = (holder, 0) if not path else _locate(holder[0], path)
        if loc is None:
            continue
        container, key = loc
        target = container[key]
        if op == "replace":
            container[key] = _value(arg, base)
        elif op == "delete":
            if container is holder:
                holder[0] = {}
            else:
                del container[key]
        elif op == "add_key":
            name, value = arg
            if isinstance(target, dict):
                target[name] = _value(value, base)
            elif isinstance(container, dict):
                container[name] = _value(value, base)
        elif op == "insert_item":
            if isinstance(target, list):
                target.insert(len(target) // 2, _value(arg, base))
            elif isinstance(container, list):
                container.insert(key, _value(arg, base))
        elif op == "duplicate_item":
            if isinstance(target, list) and target:
                target.append(_copy(target[arg % len(target)]))
            elif isinstance(container, list) and container is not holder:
                container.append(_copy(target))
        elif op == "swap_items":
            lst = target if isinstance(target, list) else container if isinstance(container, list) else None
            if lst and len(lst) > 1:
                i, j = arg % len(lst), (arg // len(lst) + 1) % len(lst)
                lst[i], lst[j] = lst[j], lst[i]
        elif op == "edit":
            number_edit, string_edit = arg
            if isinstance(target, (int, float)) and not isinstance(target, bool):
                container[key] = _edit_number(target, number_edit)
            elif isinstance(target, str):
                container[key] = _edit_string(target, string_edit)
            elif isinstance(target, bool):
                container[key] = int(target)
            elif isinstance(target, list):
                container[key] = len(target)  # an int where a list belongs
            elif isinstance(target, dict):
                container[key] = list(target.values())
        elif op == "wrap":
            container[key] = [target]
    return holder[0]
