"""Project boundaries: solver/ never imports bpy; the fixed top-level layout exists."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {"bpy", "mathutils", "bmesh", "gpu", "bl_ui", "addon"}


def _imported_modules(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0], node.lineno
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            yield str(node.args[0].value).split(".")[0], node.lineno


def test_solver_never_imports_blender():
    files = sorted((ROOT / "solver").rglob("*.py"))
    assert len(files) > 10
    bad = [f"{f.relative_to(ROOT)}:{line} imports {mod}" for f in files for mod, line in _imported_modules(f)
           if mod in FORBIDDEN]
    assert not bad, bad


def test_the_checker_catches_a_blender_import(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text("import os\nfrom bpy.types import Operator\nimportlib.import_module('mathutils')\n")
    assert {m for m, _ in _imported_modules(sample)} >= {"bpy", "mathutils"}


def test_top_level_layout():
    for name in ("blender_manifest.toml", "__init__.py", "addon", "solver", "scenes", "tests", "README.md",
                 "Makefile", "pyproject.toml", ".ci/run", "benchmarks", "tools"):
        assert (ROOT / name).exists(), name


def test_extension_entry_imports_bpy_only_inside_register():
    tree = ast.parse((ROOT / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:  # module level: no bpy import
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            assert not any(n.split(".")[0] == "bpy" for n in names)
    funcs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"register", "unregister"} <= funcs
