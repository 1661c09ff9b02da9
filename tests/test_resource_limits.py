"""Requests too big for this machine's memory are refused up front, with the estimate in the message,
before anything is written; the estimate covers what the rollout engine really allocates."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from solver.core.memory import physical_memory

ROOT = Path(__file__).resolve().parents[1]


def _run(args):
    return subprocess.run([sys.executable, "-m", "solver", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_out_of_memory_sized_requests_are_refused_with_the_estimate(tmp_path):
    contact = json.loads((ROOT / "scenes/tasks/armchair_stand_sit_stand.json").read_text())
    contact["settings"] = {"rollouts": 4096, "horizon": 15.0}
    assist = json.loads((ROOT / "scenes/tasks/assist_box_jump_low.json").read_text())
    assist["settings"] = {"population": 4096}
    assist["keyframes"][-1]["time_range"] = [0.5, 500.0]
    cases = [("assist", assist, "settings.population")]  # about 2,800 GB
    if 26e9 > physical_memory() / 2:  # 4096 × 1000 steps: about 26 GB, refused on machines under 52 GB
        cases.append(("contact", contact, "settings.rollouts"))
    for name, doc, field in cases:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        for args in (["validate", path], ["run", path, "--out", tmp_path / f"out_{name}"]):
            proc = _run(args)
            assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
            line = proc.stderr.strip()
            assert "\n" not in line and line.startswith(f"error: {field}: ") and " GB of memory" in line
            assert "the limit is" in line
        assert not (tmp_path / f"out_{name}").exists()


def test_memory_estimate_covers_the_engines_buffers():
    import mujoco

    from solver.core.memory import WORKING_COPIES, batch_bytes, check_batch
    from solver.formats.task import load_task
    from solver.methods import get_method
    from solver.physics.rollout import RolloutEngine, get_state
    task = load_task(str(ROOT / "scenes/tasks/armchair_stand_sit_stand.json"))
    prepared = get_method("contact").prepare(task)
    batch = prepared.batch()
    path, model, nroll, nstep = batch.setting, batch.model, batch.rollouts, batch.steps
    assert (path, nroll, nstep) == ("settings.rollouts", 45, 40)  # the rise's 0.6 s look-ahead, in 15 ms steps
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    with RolloutEngine(model, 1) as engine:
        ctrl = np.zeros((nroll, nstep, model.nu))
        out = engine.run(get_state(model, data), ctrl)
        allocated = out.state.nbytes + out.sensordata.nbytes + ctrl.nbytes
    assert allocated <= batch_bytes(model, nroll, nstep) / WORKING_COPIES <= 1.2 * allocated
    assert check_batch(path, model, nroll, nstep, workers=2) == 2 * batch_bytes(model, nroll, nstep)


def test_particles_beyond_memory_are_refused_and_the_record_estimate_is_what_a_run_keeps(tmp_path):
    from solver.core.memory import run_record_bytes
    from solver.formats.task import task_from_dict
    from solver.methods.contact import CONTACT
    from solver.mpc.agent import Agent
    from solver.physics.rollout import RolloutEngine
    doc = json.loads((ROOT / "scenes/tasks/armchair_stand_sit_stand.json").read_text())
    doc["settings"] = {"particles": 64, "backups": 16}
    for kf in doc["keyframes"]:
        kf["time_limit"] = 600.0  # 64 particles × 19 runs of an hour: about 800 GB
    path = tmp_path / "many.json"
    path.write_text(json.dumps(doc))
    proc = _run(["run", path, "--out", tmp_path / "out"])
    line = proc.stderr.strip()
    assert proc.returncode == 2 and "\n" not in line, proc.stderr
    assert line.startswith("error: settings.particles: 64 particles") and " GB of memory" in line
    assert not (tmp_path / "out").exists()
    # The estimate of one run's records against what a real agent's checkpoint holds after 0.3 s.
    golden = json.loads((ROOT / "tests/data/golden/contact_partwise.json").read_text())
    golden["settings"] = {"rollouts": 8, "budget": 1}
    prep = CONTACT.prepare(task_from_dict(golden))
    with RolloutEngine(prep.plan.model, 1) as engine:
        agent = Agent(prep.built, prep.plan, prep.keyframes, prep.settings, 0, engine)
        for _ in range(20):
            agent.step()
        held = sum(v.nbytes for k, v in agent.checkpoint().arrays.items() if k.startswith("record."))
    estimate = run_record_bytes(prep.built.model, agent.data.time, prep.settings.sampling.planning_timestep)
    assert held <= estimate <= 1.05 * held
