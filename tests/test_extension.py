"""The extension as Blender sees it: zip built and validated by Blender's tool, installed into a
sandboxed `bpy`, enabled, disabled and enabled again."""
import zipfile
from pathlib import Path

import pytest
from blender_env import MODULE, ROOT, build_zip, installed_extension

PLATFORM_TAGS = {"linux": "manylinux", "macos": "macosx_11_0_arm64", "windows": "win_amd64"}



pytestmark = pytest.mark.every_blender  # every test here differs by Blender version

def test_zip_bundles_the_runtime_wheels_for_every_platform_and_python():
    path = build_zip()
    assert path.name == "physkey-0.1.0.zip"
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        manifest = z.read("blender_manifest.toml").decode()
    wheels = [n for n in names if n.startswith("wheels/") and n.endswith(".whl")]
    for py in ("cp311", "cp313"):
        for tag in PLATFORM_TAGS.values():
            assert any(f"mujoco_core-4.0.0-{py}" in w and tag in w for w in wheels), (py, tag, wheels)
    assert any("/mujoco-4.0.0-py3" in "/" + w for w in wheels) and any("cma-" in w for w in wheels)
    assert not any("scipy" in w or "numpy" in w for w in wheels)  # Blender ships numpy
    for w in wheels:
        assert f'"./{w}"' in manifest
    assert 'blender_version_min = "4.2.0"' in manifest and "[permissions]" in manifest
    assert "solver/run/cli.py" in names and "scenes/characters/humanoid.json" in names
    assert not any(n.startswith(("tests/", "tools/", ".venv/")) for n in names)


def test_install_enable_disable_reenable():
    bpy, module = installed_extension()
    import addon_utils
    assert Path(module.__file__).is_relative_to(Path(bpy.utils.user_resource("EXTENSIONS")))
    assert not Path(module.__file__).is_relative_to(ROOT)  # the installed copy, not the source tree
    assert addon_utils.check(MODULE) == (True, True)
    bpy.ops.preferences.addon_disable(module=MODULE)
    assert addon_utils.check(MODULE)[1] is False
    bpy.ops.preferences.addon_enable(module=MODULE)
    assert addon_utils.check(MODULE) == (True, True)
    # The bundled solver is importable from the installed extension.
    import importlib
    cli = importlib.import_module(f"{MODULE}.solver.run.cli")
    assert Path(cli.__file__).is_relative_to(Path(bpy.utils.user_resource("EXTENSIONS")))


def test_sidebar_panels_and_operators_are_registered():
    bpy, module = installed_extension()
    for panel in ("PHYSKEY_PT_character", "PHYSKEY_PT_colliders", "PHYSKEY_PT_solve"):
        cls = getattr(bpy.types, panel)
        assert cls.bl_category == "PhysKey" and cls.bl_space_type == "VIEW_3D" and cls.bl_region_type == "UI"
    for op in ("add_character", "export_mjcf", "load_preset", "import_mjcf", "autofill_rig", "solve",
               "cancel_solve", "keep_solution"):
        assert hasattr(bpy.ops.physkey, op)
    assert "UNDO" in bpy.types.PHYSKEY_OT_add_character.bl_options
