"""A keyframe's own planning horizon: while it is active every iteration rolls out as many steps as
cover it, the carried plan is carried across the change of horizon unchanged in time, a checkpoint
keeps where its plan's knots lie, and a horizon the planning steps cannot cover is refused by name."""
import copy
import json
from pathlib import Path

import numpy as np
import pytest
from test_checkpoint import _fields, _prepared
from test_planners import _costs

from solver.core.errors import InvalidInput
from solver.formats.settings import SamplingSettings
from solver.formats.task import task_from_dict
from solver.methods.contact import CONTACT
from solver.mpc.agent import Agent
from solver.mpc.planners.base import ControlSpace, make_planner
from solver.mpc.recovery.checkpoint import Checkpoint
from solver.physics.rollout import RolloutEngine

ROOT = Path(__file__).resolve().parents[1]


def test_a_plan_made_on_one_horizon_is_carried_onto_a_longer_one_unchanged_in_time():
    settings = SamplingSettings(spline="linear", rollouts=4, planner="baseline")
    space = ControlSpace(nu=1, lo=-5 * np.ones(1), hi=5 * np.ones(1), act_group=np.zeros(1, int),
                         offsets=np.linspace(0.0, 0.35, 3), spline="linear")
    planner = make_planner(space, settings, np.random.default_rng(0))
    planner.nominal = np.array([[0.0], [1.0], [2.0]])  # made at t = 0: u(t) = t / 0.175, 2 past 0.35
    space.look_ahead(0.6)
    assert space.offsets == pytest.approx([0.0, 0.3, 0.6])
    # on the new horizon from t = 0.1 the knots lie at 0.1, 0.4, 0.7: the old plan read there
    assert planner.shifted(planner.nominal, 0.1)[:, 0] == pytest.approx([0.1 / 0.175, 2.0, 2.0])
    assert planner.action(0.1)[0] == pytest.approx(0.1 / 0.175)  # the character plays the plan it was given
    planner.propose(None, 0.1)
    planner.tell(_costs(np.arange(settings.rollouts)))
    assert planner.plan_offsets == pytest.approx([0.0, 0.3, 0.6])
    assert planner.action(0.4)[0] == pytest.approx(planner.nominal[1, 0])


def _rolled_steps(prep, keyframes):
    """Planning steps of the rollouts of an agent's first control step on `keyframes`."""
    with RolloutEngine(prep.plan.model, 1) as engine:
        seen = []
        run = engine.run

        def spy(state, ctrl, *args, **kwargs):
            seen.append(ctrl.shape[1])
            return run(state, ctrl, *args, **kwargs)

        engine.run = spy
        Agent(prep.built, prep.plan, keyframes, prep.settings, 0, engine).step()
    return set(seen)


def test_each_iteration_rolls_out_the_active_keyframes_horizon():
    prep = _prepared("partwise")
    assert (prep.settings.sampling.horizon, prep.settings.sampling.planning_timestep) == (0.35, 0.015)
    assert _rolled_steps(prep, prep.keyframes) == {24}  # 0.35 s: 23⅓ steps of 15 ms, rounded up
    longer = copy.deepcopy(prep.keyframes)
    longer[0].horizon = 0.6
    assert _rolled_steps(prep, longer) == {40}  # 0.6 s of 15 ms steps


def test_a_run_resumed_across_a_change_of_horizon_is_the_uninterrupted_run(tmp_path):
    """The checkpoint is taken at the first keyframe's end, its plan made on that keyframe's 0.6 s; the
    second plans on the settings' 0.35 s. Resumed, the plan is read where it was made."""
    prep = _prepared("partwise")
    prep.keyframes[0].horizon = 0.6
    saved = tmp_path / "checkpoint.npz"
    with RolloutEngine(prep.plan.model, 2) as engine:
        agent = Agent(prep.built, prep.plan, prep.keyframes, prep.settings, 3, engine)
        while not agent.done:
            if agent.tracker.index == 1 and not saved.exists():
                agent.checkpoint().save(saved)
            agent.step()
        whole = agent.result()
    assert saved.exists(), "the first keyframe must be reached to checkpoint it"
    with RolloutEngine(prep.plan.model, 1) as engine:
        resumed = Agent.resume(Checkpoint.load(saved), prep.built, prep.plan, prep.keyframes, prep.settings,
                               engine).run()
    a, b = _fields(whole), _fields(resumed)
    for name, value in a.items():
        if isinstance(value, np.ndarray):
            assert value.tobytes() == b[name].tobytes(), name
        else:
            assert value == b[name], name


def _task(horizon):
    doc = json.loads((ROOT / "scenes/tasks/armchair_stand_sit_stand.json").read_text())
    doc["keyframes"][4]["horizon"] = horizon
    return task_from_dict(doc)


def test_the_rollout_batch_is_sized_for_the_longest_keyframe_horizon():
    assert CONTACT.prepare(_task(0.9)).batch().steps == 60  # 0.9 s of 15 ms steps


@pytest.mark.parametrize("horizon, says", [(0.02, "shorter than two planning steps"), (2.5, "at most 2 s")])
def test_a_keyframe_horizon_out_of_range_is_refused_by_name(horizon, says):
    with pytest.raises(InvalidInput, match=says) as err:
        CONTACT.prepare(_task(horizon))
    assert "keyframes[4].horizon" in str(err.value)


def test_a_keyframe_sent_to_a_running_solve_with_a_horizon_too_short_is_refused_by_name():
    prep = CONTACT.prepare(_task(None))
    item = json.loads((ROOT / "scenes/tasks/armchair_stand_sit_stand.json").read_text())["keyframes"][5]
    check = CONTACT.check_appended
    assert check([item], prep.built.scene, "append_keyframes", prep.settings.sampling) == 1  # its own 0.6 s
    with pytest.raises(InvalidInput, match=r"append_keyframes\[0\]\.horizon: 0.02 s is shorter than two planning"):
        check([dict(item, horizon=0.02)], prep.built.scene, "append_keyframes", prep.settings.sampling)
