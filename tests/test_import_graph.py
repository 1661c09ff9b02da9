"""The layers hold: every import (function-level ones included) goes to the importer's floor or
below, there is no import cycle, and Blender's side never imports the optimizers."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The floors, lowest first, by folder: a module's floor is the folder it is in (the package's floor
# where a subfolder is not listed). A module imports only from its own floor or below.
FLOORS = [
    {"solver.core"},  # 0 ground: errors, paths, limits, registry, schema, rotations, splines, file io
    {"solver.formats", "solver.builders"},  # 1 the formats (scene, task, settings, keyframes) and the scene builders
    {"solver.physics"},  # 2 the compiled model, rollouts, features, quality, results, a reference motion
    {"solver.mpc", "solver.assist"},  # 3 the algorithms
    {"solver.methods"},  # 4 the methods
    {"solver.run", "solver.__main__", "solver"},  # 5 running them: processes, the command line
    {"addon"},  # 6 Blender
]
ADDON_FORBIDDEN = ("solver.methods", "solver.assist", "solver.mpc", "solver.run", "benchmarks", "cma", "scipy", "ray")
LOOSE_ALLOWED = {"solver", "solver.__main__"}  # every other solver module lives in a floor's folder


def modules(roots=("solver", "addon")) -> dict[str, Path]:
    out = {}
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = path
    return out


def imports(name: str, path: Path):
    """(imported module, line) for every import in the file, relative ones resolved; `from X import
    y` yields X.y where that is a module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            yield base, node.lineno
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def floor(name: str) -> int:
    while True:
        for i, members in enumerate(FLOORS):
            if name in members:
                return i
        if "." not in name:
            raise AssertionError(f"{name} is on no floor: add it to FLOORS")
        name = name.rpartition(".")[0]


def graph():
    mods = modules()
    edges = {m: set() for m in mods}
    for m, path in mods.items():
        for target, _ in imports(m, path):
            if target in mods and target != m and target not in ("solver", "addon"):
                edges[m].add(target)
    return edges


def find_cycle(edges) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(u, stack):
        state[u] = 1
        stack.append(u)
        for v in sorted(edges[u]):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if not state.get(v):
                found = visit(v, stack)
                if found:
                    return found
        state[u] = 2
        stack.pop()
        return None

    for u in sorted(edges):
        if not state.get(u):
            found = visit(u, [])
            if found:
                return found
    return None


def test_every_import_goes_to_the_same_floor_or_below():
    edges = graph()
    up = [f"{m} (floor {floor(m)}) imports {t} (floor {floor(t)})" for m, ts in edges.items() for t in ts
          if floor(t) > floor(m)]
    assert not up, up


def test_no_import_cycles():
    cycle = find_cycle(graph())
    assert cycle is None, " -> ".join(cycle)


def test_blender_side_never_imports_the_optimizers():
    bad = []
    for m, path in modules(("addon",)).items():
        for target, line in imports(m, path):
            if target.startswith("addon.") or target == "addon":
                continue
            name = target.removeprefix("addon.")
            if any(name == f or name.startswith(f + ".") for f in ADDON_FORBIDDEN):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not bad, bad


NOT_IN_BLENDER = ("scipy",)  # Blender's Python has numpy; the extension bundles mujoco and cma, nothing else


def test_nothing_the_blender_side_reaches_needs_what_blender_lacks():
    """Transitively: a solver module the add-on imports (e.g. the scene builders, for presets) must
    not import scipy — it would fail only inside a real Blender, where scipy is not installed."""
    mods, edges = modules(), graph()
    seen, todo = set(), [m for m in mods if m == "addon" or m.startswith("addon.")]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(edges[m])
    bad = [f"{mods[m].relative_to(ROOT)}:{line} imports {target}" for m in sorted(seen)
           for target, line in imports(m, mods[m]) if target.split(".")[0] in NOT_IN_BLENDER]
    assert not bad, bad


def test_no_solver_module_needs_what_blender_lacks():
    """The add-on runs its solves in Blender's own Python (`python -m solver` with the extension's
    bundled wheels): no solver module may import scipy (tools may)."""
    mods = modules(("solver",))
    bad = [f"{path.relative_to(ROOT)}:{line} imports {target}" for m, path in sorted(mods.items())
           for target, line in imports(m, path) if target.split(".")[0] in NOT_IN_BLENDER]
    assert not bad, bad


def test_every_solver_module_is_in_a_floor_folder():
    """A module put loose in solver/ has no floor of its own: it must go into the folder of its floor."""
    loose = [m for m in modules(("solver",)) if m.count(".") < 2 and m not in LOOSE_ALLOWED
             and not any(m in members for members in FLOORS)]
    assert not loose, loose


def test_the_checks_catch_a_cycle_an_upward_import_and_a_forbidden_one(tmp_path):
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert (floor("solver.formats.scene") < floor("solver.physics.model") < floor("solver.mpc.agent")
            < floor("solver.methods.contact") < floor("addon.rig"))
    assert floor("solver.mpc.planners.smc") == floor("solver.mpc") and floor("solver.core.new_module") == 0
    with pytest.raises(AssertionError, match="on no floor"):
        floor("solver_elsewhere.thing")
    # a module placed on the wrong floor: physics importing a planner is an upward import
    edges = {"solver.physics.model": {"solver.mpc.planners.base"}, "solver.mpc.planners.base": set()}
    assert [(m, t) for m, ts in edges.items() for t in ts if floor(t) > floor(m)] == [
        ("solver.physics.model", "solver.mpc.planners.base")]
    sample = tmp_path / "x.py"
    sample.write_text("def f():\n    from ..solver.mpc.planners.base import Planner\n    import scipy.optimize\n")
    found = {t for t, _ in imports("addon.x", sample)}
    assert "solver.mpc.planners.base" in found and "scipy.optimize" in found
