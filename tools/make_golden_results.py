"""Write the golden result files the refactor test compares against (tests/data/golden/).

Each golden is a short task (task JSON beside it) solved with two seeds on two workers; its
`seed_<k>.npz` are the bytes `tests/test_golden_results.py` expects a run of the same task to
write. Regenerate only on purpose (a change meant to alter results), and say so in the commit.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "golden"


def golden_tasks() -> dict[str, dict]:
    """name → task document: every method, and the contact method with each planner that existed
    before the planner contract (partwise, baseline)."""
    tasks = {}
    doc = json.loads((ROOT / "scenes/tasks/drop_onto_armchair.json").read_text())
    doc["settings"]["duration"] = 0.4
    tasks["simulate"] = doc
    for planner in ("partwise", "baseline"):
        doc = json.loads((ROOT / "scenes/tasks/armchair_stand_sit_stand.json").read_text())
        doc["keyframes"] = doc["keyframes"][:2]
        for kf in doc["keyframes"]:
            kf["time_limit"] = 0.3
            kf["weights"]["Foot Slip"] = 0.0  # it came later
        # Fixed effort and a single run with no retries: the only behaviour before the contracts and particles;
        # no speed-limit term (it came later).
        doc["settings"].update(planner=planner, budget=1, retries=0, backups=0, speed_weight=0.0)
        tasks[f"contact_{planner}"] = doc
    doc = json.loads((ROOT / "scenes/tasks/assist_box_jump_low.json").read_text())
    # no search or plan again, no apex term: they came later
    doc["settings"] = {"population": 8, "samples": 160, "retries": 0, "replans": 0, "w_apex": 0.0}
    tasks["assist"] = doc
    return tasks


def solve(task_path: Path, out: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "solver", "run", str(task_path), "--out", str(out),
                           "--num-seeds", "2", "--workers", "2"], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{task_path.name}: solver exit {proc.returncode}\n{proc.stderr[-2000:]}")


def main() -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, doc in golden_tasks().items():
            task_path = GOLDEN / f"{name}.json"
            task_path.write_text(json.dumps(doc, indent=1) + "\n")
            out = Path(tmp) / name
            solve(task_path, out)
            for seed in (0, 1):
                shutil.copyfile(out / f"seed_{seed}" / "result.npz", GOLDEN / f"{name}_seed_{seed}.npz")
            print(f"{name}: written")


if __name__ == "__main__":
    main()
