"""Print what PhysKey's sidebar panels show, as text, in the scenes the panel tests draw them in
(tests/layout_recorder.py): `.venv/bin/python tools/panel_outline.py [STATE ...]` (default: all)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from blender_env import installed_extension  # noqa: E402
from layout_recorder import outline_text  # noqa: E402
from panel_states import STATES  # noqa: E402


def main(states: list[str]) -> None:
    unknown = [s for s in states if s not in STATES]
    if unknown:
        sys.exit(f"error: no state {', '.join(unknown)} (have: {', '.join(STATES)})")
    bpy, module = installed_extension()
    for state in states or list(STATES):
        with STATES[state](bpy, module):
            text = outline_text(bpy, module.__name__)
        print(f"##### {state}\n{text}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
