"""The extension's manifest passes Blender's own validator (shipped inside the bpy wheel)."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _blender_ext_tool() -> Path:
    bpy_spec = __import__("importlib.util").util.find_spec("bpy")
    if bpy_spec is None:
        pytest.fail("bpy is not installed: run `make venv`")
    base = Path(bpy_spec.origin).parent
    tools = sorted(base.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    assert tools, f"blender_ext.py not found under {base}"
    return tools[-1]


def test_manifest_validates_with_blenders_tool():
    p = subprocess.run([sys.executable, str(_blender_ext_tool()), "validate", str(ROOT)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Success" in p.stdout


def test_validator_rejects_a_broken_manifest(tmp_path):
    (tmp_path / "blender_manifest.toml").write_text('schema_version = "1.0.0"\nid = "physkey"\n')
    p = subprocess.run([sys.executable, str(_blender_ext_tool()), "validate", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
