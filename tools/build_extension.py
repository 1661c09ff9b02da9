"""Build the Blender extension zip `dist/physkey-<version>.zip` with Blender's own extension tool.

Downloads (once, cached in the git-ignored `.cache/wheels/`) the runtime wheels for every supported
platform and Python (Blender 4.2–5.0 ship Python 3.11, Blender 5.1+ Python 3.13): mujoco-core per
platform, and the pure-Python mujoco and cma. numpy comes with Blender. Then stages the extension
(entry point, addon/, solver/, scenes/, wheels/ and a manifest listing them), builds it with
`blender_ext.py build` and checks the zip with `blender_ext.py validate`.

Run: .venv/bin/python tools/build_extension.py   (or `make extension`)

`main(folder)` stages and writes the zip in `folder` instead, so that processes building at once (the
test workers) never share a half-written zip; the wheel cache is shared under a file lock.
"""
from __future__ import annotations

import fcntl
import glob
import os
import shutil
import subprocess
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(ROOT, ".cache", "wheels")
STAGE = os.path.join(ROOT, "build", "extension")
DIST = os.path.join(ROOT, "dist")
PURE = ["mujoco==4.0.0", "cma==4.5.0"]
BINARY = ["mujoco-core==4.0.0"]
PYTHONS = ["3.11", "3.13"]
PLATFORMS = {  # Blender platform name → pip platform tags
    "linux-x64": ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux2014_x86_64"],
    "macos-arm64": ["macosx_11_0_arm64", "macosx_12_0_arm64", "macosx_13_0_arm64", "macosx_14_0_arm64"],
    "windows-x64": ["win_amd64"],
}
SOURCES = ["__init__.py", "addon", "solver", "scenes"]


def blender_ext_tool() -> str:
    import importlib.util
    spec = importlib.util.find_spec("bpy")
    if spec is None:
        raise SystemExit("bpy is not installed in this Python: run `make venv` first")
    tools = sorted(glob.glob(os.path.join(os.path.dirname(spec.origin), "*", "scripts", "addons_core", "bl_pkg",
                                          "cli", "blender_ext.py")))
    if not tools:
        raise SystemExit("Blender's extension tool (bl_pkg/cli/blender_ext.py) was not found in the bpy wheel")
    return tools[-1]


def pip_download(packages, extra) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "-d", CACHE,
           *extra, *packages]
    subprocess.run(cmd, check=True)


def fetch_wheels() -> list[str]:
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        pip_download(PURE, [])
        for py in PYTHONS:
            for tags in PLATFORMS.values():
                plat = [a for t in tags for a in ("--platform", t)]
                pip_download(BINARY, ["--python-version", py, *plat])
    wheels = sorted(os.path.basename(p) for p in glob.glob(os.path.join(CACHE, "*.whl")))
    wanted = []
    for w in wheels:
        name = w.split("-")[0].replace("_", "-").lower()
        if name in ("mujoco", "cma") or (name == "mujoco-core"
                                         and any(f"cp{py.replace('.', '')}" in w for py in PYTHONS)):
            wanted.append(w)
    return wanted


def stage(wheels: list[str], folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "wheels"))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for src in SOURCES:
        path = os.path.join(ROOT, src)
        if os.path.isdir(path):
            shutil.copytree(path, os.path.join(folder, src), ignore=ignore)
        else:
            shutil.copy2(path, os.path.join(folder, src))
    for w in wheels:
        shutil.copy2(os.path.join(CACHE, w), os.path.join(folder, "wheels", w))
    with open(os.path.join(ROOT, "blender_manifest.toml"), encoding="utf-8") as f:
        text = f.read()
    text = text.split("[build]")[0].rstrip() + "\n"  # the staged tree holds only what ships
    top, _, tables = text.partition("\n[")  # top-level keys must come before the first table
    top += "\nplatforms = [" + ", ".join(f'"{p}"' for p in PLATFORMS) + "]\n"
    top += "wheels = [\n" + "".join(f'  "./wheels/{w}",\n' for w in wheels) + "]\n"
    text = top + "\n[" + tables
    with open(os.path.join(folder, "blender_manifest.toml"), "w", encoding="utf-8") as f:
        f.write(text)


def main(folder: str | None = None) -> str:
    """Build and validate the zip; in `folder` (staging and zip) if given, else build/extension and dist/."""
    staging, dist = (os.path.join(folder, "extension"), folder) if folder else (STAGE, DIST)
    wheels = fetch_wheels()
    stage(wheels, staging)
    tool = blender_ext_tool()
    with open(os.path.join(ROOT, "blender_manifest.toml"), "rb") as f:
        manifest = tomllib.load(f)
    os.makedirs(dist, exist_ok=True)
    out = os.path.join(dist, f"{manifest['id']}-{manifest['version']}.zip")
    if os.path.exists(out):
        os.remove(out)
    subprocess.run([sys.executable, tool, "build", "--source-dir", staging, "--output-filepath", out], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, tool, "validate", out], check=True)
    print(f"built {out} ({os.path.getsize(out) / 1e6:.1f} MB, {len(wheels)} wheels)")
    return out


if __name__ == "__main__":
    main()
