"""Keyframe checkpoints: a run resumed from the checkpoint taken after a reached keyframe — saved to
a file and loaded into a fresh agent, engine and RNG — gives the same run as the uninterrupted one,
array for array and bit for bit, for every planner; a checkpoint made for other settings is refused."""
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from solver.core.errors import InvalidInput
from solver.core.registry import PLANNERS
from solver.formats.task import task_from_dict
from solver.methods.contact import CONTACT
from solver.mpc.agent import Agent
from solver.mpc.recovery.checkpoint import Checkpoint
from solver.physics.rollout import RolloutEngine

ROOT = Path(__file__).resolve().parents[1]


def _prepared(planner):
    doc = json.loads((ROOT / "scenes/tasks/armchair_stand_sit_stand.json").read_text())
    doc["keyframes"] = doc["keyframes"][:2]
    doc["settings"].update(planner=planner, rollouts=16, max_iterations=2)
    for kf in doc["keyframes"]:  # the first is reached within this; the rest is what is compared
        kf["time_limit"] = 1.0
    return CONTACT.prepare(task_from_dict(doc))


def _fields(run):
    return {f.name: getattr(run, f.name) for f in dataclasses.fields(run) if f.name != "plan_wall_s"}


@pytest.mark.parametrize("planner", list(PLANNERS))
def test_a_run_resumed_from_a_keyframe_checkpoint_is_the_uninterrupted_run(tmp_path, planner):
    prep = _prepared(planner)
    saved = []
    with RolloutEngine(prep.plan.model, 2) as engine:
        agent = Agent(prep.built, prep.plan, prep.keyframes, prep.settings, 3, engine)
        while not agent.done:  # checkpoint at the first control step after each reached keyframe
            if agent.tracker.index > len(saved):
                saved.append(tmp_path / f"checkpoint_{agent.tracker.index}.npz")
                agent.checkpoint().save(saved[-1])
            agent.step()
        whole = agent.result()
    assert whole.reached[0] is not None and saved, "the first keyframe must be reached to checkpoint it"
    with RolloutEngine(prep.plan.model, 1) as engine:  # a fresh engine, another thread count
        resumed = Agent.resume(Checkpoint.load(saved[0]), prep.built, prep.plan, prep.keyframes, prep.settings,
                               engine).run()
    a, b = _fields(whole), _fields(resumed)
    for name, value in a.items():
        if isinstance(value, np.ndarray):
            assert value.dtype == b[name].dtype and value.shape == b[name].shape, name
            assert value.tobytes() == b[name].tobytes(), name
        else:
            assert value == b[name], name
    assert len(a["times"]) > 100


def test_a_checkpoint_for_other_settings_is_refused(tmp_path):
    prep = _prepared("partwise")
    with RolloutEngine(prep.plan.model, 1) as engine:
        agent = Agent(prep.built, prep.plan, prep.keyframes, prep.settings, 0, engine)
        agent.step()
        agent.checkpoint().save(tmp_path / "c.npz")
        other = dataclasses.replace(prep.settings, sampling=dataclasses.replace(prep.settings.sampling, rollouts=17))
        with pytest.raises(InvalidInput, match="another model, planner settings or keyframes"):
            Agent.resume(Checkpoint.load(tmp_path / "c.npz"), prep.built, prep.plan, prep.keyframes, other, engine)
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(InvalidInput, match="is not a checkpoint"):
        Checkpoint.load(tmp_path / "junk.npz")


def test_a_keyframe_tracker_restored_from_its_state_is_the_same_tracker():
    """Every field the tracker carries between control steps goes through its state, as JSON."""
    from solver.mpc.keyframe_tracker import KeyframeTracker
    keyframes = _prepared("partwise").keyframes
    tracker = KeyframeTracker(list(keyframes), overtime=1.0)
    tracker.index, tracker.start, tracker.within_since, tracker.failed = 1, 0.6, 0.9, True
    tracker.failure, tracker.fallen_since, tracker.head_was_up = "fell", 1.2, True
    tracker.progress_mark, tracker.progress_since, tracker.reached[0] = 0.05, 1.1, 0.55
    state = json.loads(json.dumps(tracker.get_state()))
    fresh = KeyframeTracker(list(keyframes), overtime=1.0)
    fresh.set_state(state)
    assert fresh == tracker and state["keyframes"] == len(keyframes)
    unset = {f.name for f in dataclasses.fields(KeyframeTracker)} - set(KeyframeTracker.STATE)
    assert unset == {"keyframes", "overtime"}  # the run's own, not state: a new field must be one or the other
