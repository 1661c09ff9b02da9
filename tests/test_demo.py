"""`make demo` in its reduced mode: the whole Blender path, rendering a few frames."""
import os
import subprocess
import sys

from blender_env import ROOT


def test_demo_quick(tmp_path):
    env = dict(os.environ, DEMO_QUICK="1", PHYSKEY_DEMO_OUT=str(tmp_path))
    env.pop("BLENDER_USER_RESOURCES", None)
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "demo.py")], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=2400)  # a hang guard only
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    for name in ("demo.blend", "demo.mp4", "demo_contact_sheet.png"):
        assert (tmp_path / name).stat().st_size > 1000, name
    assert "kept seed" in p.stdout and "wrote" in p.stdout
