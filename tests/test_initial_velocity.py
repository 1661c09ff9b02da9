"""A solve can start moving (what *Solve from Here* sends: the pose and velocity of a frame of an earlier
solution): the scene's `initial_velocity` is in model.xml's `initial` keyframe, and every method starts
from it — checked against MuJoCo stepping that keyframe on its own, and against the method started
still."""
import json
from pathlib import Path

import mujoco
import numpy as np
import pytest

from solver.builders.mjcf import scene_to_xml
from solver.builders.mjcf_read import spec_to_scene
from solver.core import schema
from solver.formats.scene import Velocity
from solver.formats.task import SceneRef, build_scene, task_from_dict
from solver.methods import get_method
from solver.physics.rollout import RolloutEngine

ROOT = Path(__file__).resolve().parents[1]


def _moving_scene():
    scene = build_scene(SceneRef(environment="floor"))
    scene.initial_pose.root_pos = [0.0, 0.0, 2.0]  # in the air: nothing but gravity acts for a while
    scene.initial_velocity = Velocity(root_linear=[1.5, -0.5, 0.0], root_angular=[0.0, 0.3, 0.0],
                                      joints={"knee_right": -2.0, "elbow_left": 1.0})
    return scene


def test_model_xml_keeps_the_velocity_and_reads_it_back():
    scene = _moving_scene()
    xml = scene_to_xml(scene)
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("initial").id)
    assert data.qvel[:3] == pytest.approx([1.5, -0.5, 0.0]) and data.qvel[4] == pytest.approx(0.3)
    assert data.qvel[model.jnt_dofadr[model.joint("knee_right").id]] == pytest.approx(-2.0)
    back = spec_to_scene(mujoco.MjSpec.from_string(xml), "back")
    assert back.initial_velocity.root_linear == pytest.approx([1.5, -0.5, 0.0])
    assert back.initial_velocity.joints == pytest.approx({"knee_right": -2.0, "elbow_left": 1.0})


def test_simulate_starts_with_the_velocity():
    scene = _moving_scene()
    doc = {"schema_version": 1, "name": "moving", "method": "simulate", "scene": {"desc": schema.to_dict(scene)},
           "settings": {"duration": 0.2, "chunk": 0.1, "perturb": 0.0, "mode": "passive"}, "seeds": [0]}
    method = get_method("simulate")
    prepared = method.prepare(task_from_dict(doc))
    with RolloutEngine(prepared.engine_model(), 1) as engine:
        solution = method.solve(prepared, 0, engine, lambda report: None)
    model = mujoco.MjModel.from_xml_string(prepared.built.xml)  # model.xml, and MuJoCo alone from its keyframe
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("initial").id)
    steps = int(round(0.2 / model.opt.timestep))
    for _ in range(steps):
        mujoco.mj_step(model, data)
    np.testing.assert_allclose(solution.qpos[-1], data.qpos, atol=1e-5)  # model.xml: 6 significant digits
    assert solution.qpos[-1][0] == pytest.approx(1.5 * 0.2, abs=1e-3)  # drifting at about 1.5 m/s in the air


@pytest.mark.parametrize("method", ["contact", "assist"])
def test_the_other_methods_start_with_it_too(method):
    """Their first simulated state moves as the velocity says (the contact planner's first control step,
    the assisted keyframes' initial state), where started still it would not."""
    task = json.loads((ROOT / "scenes/tasks" / ("armchair_stand_sit_stand.json" if method == "contact"
                                                 else "assist_box_jump_low.json")).read_text())
    scene = build_scene(task_from_dict(task).scene)
    scene.initial_velocity = Velocity(root_linear=[0.0, 0.0, 0.7])
    task["scene"] = {"desc": schema.to_dict(scene)}
    prepared = get_method(method).prepare(task_from_dict(task))
    if method == "contact":
        from solver.mpc.agent import Agent
        with RolloutEngine(prepared.engine_model(), 1) as engine:
            agent = Agent(prepared.built, prepared.plan, prepared.keyframes, prepared.settings, 0, engine)
            qvel = agent.data.qvel.copy()
    else:
        from solver.methods.assist import initial_state
        from solver.physics.rollout import state_layout
        state = initial_state(prepared.built)
        layout = state_layout(prepared.built.model)
        qvel = state[layout["qvel"]]
    assert qvel[2] == pytest.approx(0.7)
