"""Physics divergence: scenes deliberately too stiff (or too strong) for their timestep blow up; the
rollout engine flags exactly the rollouts MuJoCo warned about, the planner and CMA-ES never prefer
them, an agent that blows up is reported `unstable` at the time a plain mj_step loop first warns,
and Blender's *Keep* refuses such a solution.

Every "truth" here comes from a slow per-step `mujoco.mj_step` loop reading `MjData.warning`, never
from the code under test.
"""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

from solver.assist.optimizer import PENALTY, AssistOptimizer
from solver.assist.problem import Problem
from solver.core import schema
from solver.formats.contact_keyframes import parse_keyframes
from solver.formats.settings import SamplingSettings, contact_settings
from solver.formats.task import SceneRef, build_scene, task_from_dict
from solver.methods.assist import ASSIST as assist
from solver.methods.assist import initial_state
from solver.methods.contact import CONTACT as contact
from solver.methods.contact import ContactPrepared
from solver.mpc.agent import run_agent
from solver.mpc.iteration import Scorer, plan_iteration
from solver.mpc.objectives.contact import Objective
from solver.mpc.planners.base import ControlSpace, make_planner
from solver.physics.model import BuiltModel, build_model
from solver.physics.result import write_solution
from solver.physics.rollout import FULLPHYSICS, RolloutEngine, find_divergence, get_state, state_layout

ROOT = Path(__file__).resolve().parents[1]
STIFF_KNEE = 1e4  # N·m/rad on knee_right: explicit spring, unstable at 5 ms; blows up at 0.14 s


# -- the truth: a per-step loop ------------------------------------------------------------------
def reference_divergence(model, initial_state, ctrl, mocap_pos=None):
    """Per rollout, (index of the first step during which MuJoCo warned or -1, time that step
    started) from a plain mj_step loop."""
    nroll, nstep = ctrl.shape[:2]
    init = np.broadcast_to(np.asarray(initial_state, float), (nroll, mujoco.mj_stateSize(model, FULLPHYSICS)))
    data = mujoco.MjData(model)
    first, started = np.full(nroll, -1), np.full(nroll, np.nan)
    for r in range(nroll):
        mujoco.mj_resetData(model, data)
        mujoco.mj_setState(model, data, init[r], FULLPHYSICS)
        for t in range(nstep):
            data.ctrl[:] = ctrl[r, t]
            if mocap_pos is not None:
                data.mocap_pos[:] = mocap_pos[r, t]
            before = data.time
            mujoco.mj_step(model, data)
            if data.warning.number.any():
                first[r], started[r] = t, before
                break
    return first, started


def stiff_scene(environment="armchair", knee=STIFF_KNEE):
    scene = build_scene(SceneRef(environment=environment))
    for body in scene.character.bodies:
        for joint in body.joints:
            if joint.name == "knee_right":
                joint.stiffness = knee
    return scene


def start_state(built, model=None):
    m = model or built.model
    d = mujoco.MjData(m)
    d.qpos[:] = built.initial_qpos()
    mujoco.mj_forward(m, d)
    return get_state(m, d)


def plan_model(built, dt=0.015):
    pm = mujoco.MjModel.from_xml_string(built.xml)
    pm.opt.timestep = dt
    return BuiltModel(xml=built.xml, model=pm, scene=built.scene, actuation=built.actuation,
                      character_bodies=built.character_bodies, nu_character=built.nu_character,
                      sensor_slices=built.sensor_slices)


# -- the rollout engine ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stiff_assist():
    """Assist spring-dampers 2500× too stiff for 5 ms: a rollout is stable with β = 0 and blows up
    within a few steps once β > 0 (MuJoCo warns bad qacc and resets)."""
    scene = build_scene(SceneRef(environment="floor"))
    return build_model(scene, actuation="position", assist_bodies=[b.name for b in scene.character.bodies],
                       assist_kp_per_kg=1e6)


def test_engine_flags_exactly_the_rollouts_mujoco_warned_about(stiff_assist):
    built = stiff_assist
    m, nu = built.model, built.nu_character
    lay = state_layout(m)
    s0 = start_state(built)
    nroll, nstep = 9, 60
    ctrl = np.zeros((nroll, nstep, m.nu))
    ctrl[:, :, :nu] = built.initial_qpos()[m.jnt_qposadr[m.actuator_trnid[:nu, 0]]]
    on = [None, 0, 7, 23, 41, 59, None, None, None]  # step at which β switches on (None: never)
    for r, t in enumerate(on):
        if t is not None:
            ctrl[r, t:, nu:] = 0.5
    mocap = np.broadcast_to(np.asarray(m.key_mpos[0]).reshape(m.nmocap, 3) + [0.3, 0.0, 0.0],
                            (nroll, nstep, m.nmocap, 3))
    init = np.stack([s0] * nroll)
    init[6, lay["qvel"].start + 8] = 1e11  # bad qvel: MuJoCo resets in the very first step, from t = 0 …
    init[7, lay["time"]] = 0.7
    init[7, lay["qvel"].start + 8] = 1e11  # … and from t = 0.7
    ctrl[8, 30:, 0] = np.nan  # a bad control: MuJoCo warns (no reset) and the rollout stops there
    truth, _ = reference_divergence(m, init, ctrl, mocap)
    assert (truth < 0).sum() >= 2 and (truth >= 0).sum() >= 5, truth
    with RolloutEngine(m, 2) as engine:
        traj = engine.run(init, ctrl, mocap)
        again = engine.run(init, ctrl, mocap, copy=False)
    np.testing.assert_array_equal(traj.diverged_at, truth)
    np.testing.assert_array_equal(again.diverged_at, truth)
    np.testing.assert_array_equal(traj.diverged, truth >= 0)
    # What the engine hides: no NaN anywhere, MuJoCo's reset state and repeats instead of physics.
    assert np.isfinite(traj.state).all()
    t = traj.state[..., lay["time"].start]
    assert np.all(np.diff(t[truth < 0], axis=1) > 0)


def test_non_finite_states_are_flagged_at_their_step():
    dt, nstep = 0.01, 8
    state = np.zeros((4, nstep, 5))
    state[..., 0] = 0.3 + dt * np.arange(1, nstep + 1)
    state[1, 5, 3] = np.nan
    state[2, 2, 1] = np.inf
    state[3, 4, 0] = np.nan  # time itself
    np.testing.assert_array_equal(find_divergence(state, 0.3, dt), [-1, 5, 2, 4])
    np.testing.assert_array_equal(find_divergence(state[:, :0], 0.3, dt), [-1] * 4)


# -- the planner --------------------------------------------------------------------------------
class _ElbowQuietRng:
    """The planner's noise source, except that every other noisy candidate leaves the right elbow
    alone: with a 1e12 N·m elbow motor those stay stable, the others blow up at once."""

    def __init__(self, column):
        self.rng, self.column = np.random.default_rng(0), column

    def standard_normal(self, shape):
        z = self.rng.standard_normal(shape)
        z[::2, :, self.column] = 0.0
        return z


def test_planner_scores_diverged_candidates_inf_and_never_adopts_one():
    scene = build_scene(SceneRef(environment="armchair"))
    for a in scene.character.actuators:
        if a.joint == "elbow_right":
            a.gear = 1e12  # a light forearm, an absurd motor
    built = build_model(scene, actuation="motor")
    plan = plan_model(built)
    pm = plan.model
    column = next(i for i in range(plan.nu_character) if pm.joint(int(pm.actuator_trnid[i, 0])).name == "elbow_right")
    # Ask for the pose MuJoCo resets to (qpos0, standing): a blown-up rollout frozen there looks
    # like the perfect plan unless it is recognised.
    d0 = mujoco.MjData(pm)
    mujoco.mj_forward(pm, d0)
    kf = parse_keyframes([{"pairs": [{"body1": "pelvis", "pos1": [0, 0, 0], "body2": "world",
                                      "pos2": d0.xpos[pm.body("pelvis").id].tolist()}]}])[0]
    s0 = start_state(built, pm)
    with RolloutEngine(pm, 2) as engine:
        seen = []
        run = engine.run

        def spy(state, ctrl, mocap_pos=None, copy=True, eq_active=None):
            seen.append(np.array(ctrl))
            return run(state, ctrl, mocap_pos, copy, eq_active)

        engine.run = spy
        settings = SamplingSettings(rollouts=16, exploration=0.3)
        objective = Objective(plan)
        space = ControlSpace.of(plan, objective.act_group, settings)
        planner = make_planner(space, settings, _ElbowQuietRng(column))
        scorer = Scorer(plan, objective, space, engine)
        for _ in range(3):
            info = plan_iteration(planner, scorer, s0, 0.0, kf)
            truth, _ = reference_divergence(pm, s0, seen[-1])
            bad = truth >= 0
            assert bad.sum() >= 4 and (~bad).sum() >= 4, truth
            assert not np.isnan(info.costs).any()
            assert np.all(np.isinf(info.costs[bad])) and np.all(np.isfinite(info.costs[~bad]))
            assert not bad[info.best_index] and np.isfinite(info.best_cost)
            np.testing.assert_array_equal(info.diverged, bad)
            assert np.all(planner.nominal[:, column] == 0.0)  # the adopted plan never moved the elbow


# -- CMA-ES -------------------------------------------------------------------------------------
def test_cma_es_ranks_diverged_candidates_last_and_finishes_without_nan(monkeypatch):
    import cma
    doc = json.loads((ROOT / "scenes" / "tasks" / "assist_box_jump_low.json").read_text())
    doc["settings"].update(assist_kp_per_kg=1e6, population=16, samples=160, curriculum=False)
    prep = assist.prepare(task_from_dict(doc))
    problem = Problem(prep.built, prep.keyframes, prep.settings)
    told = []
    tell = cma.CMAEvolutionStrategy.tell

    def spy_tell(self, solutions, function_values, *a, **kw):
        told.append(np.array(function_values, dtype=float))
        return tell(self, solutions, function_values, *a, **kw)

    monkeypatch.setattr(cma.CMAEvolutionStrategy, "tell", spy_tell)
    K = len(prep.keyframes.qpos)
    with RolloutEngine(prep.built.model, 2) as engine:
        opt = AssistOptimizer(problem, engine, initial_state(prep.built))
        # One population against the per-step loop: diverged (before its own last keyframe) ⇔ +inf.
        X = np.random.default_rng(1).normal(0.0, 0.3, (16, problem.ndim))
        beta = slice(prep.settings.pieces * problem.nu, prep.settings.pieces * problem.nu + problem.n_beta)
        X[::2, beta] = -np.abs(X[::2, beta])  # β = 0 throughout: these stay stable
        ev = opt.evaluate(X, K - 1)
        d = problem.decode(X)
        ctrl, mocap, _ = problem.controls(d, problem.nstep_for(d))
        first, _ = reference_divergence(prep.built.model, opt.state0, ctrl, mocap)
        truth = (first >= 0) & (first <= problem.end_step(d, K - 1, ctrl.shape[1]))
        assert truth.any() and not truth.all(), first
        np.testing.assert_array_equal(np.isinf(ev.fitness), truth)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # pycma warns about non-finite f-values: none must reach it
            x, f, hist, samples = opt.run(0)
        _, replay, _ = opt.simulate(x[None], keep=True)
    assert told and all(np.isfinite(v).all() for v in told)
    diverged_any = False
    for values in told:  # every blown-up candidate ranked after every stable one
        big = values >= PENALTY
        diverged_any |= big.any()
        if big.any() and (~big).any():
            assert values[big].min() > values[~big].max()
    assert diverged_any
    assert np.isfinite(hist.best).all() and np.isfinite(f) and f < PENALTY
    assert replay.diverged_at[0] < 0  # the best motion, replayed to its last keyframe, is stable


# -- the agent and the methods -----------------------------------------------------------------------
def test_agent_that_blows_up_is_unstable_at_the_reference_time(tmp_path):
    built = build_model(stiff_scene(), actuation="motor")
    plan = plan_model(built)
    keyframes = parse_keyframes([{"pairs": [{"body1": "pelvis", "pos1": [0, 0, 0], "body2": "world",
                                             "pos2": [0, 0, 0.9]}], "time_limit": 2.0}])
    with RolloutEngine(plan.model, 2) as engine:
        # give_up_fallen_s 0: the stiff character goes down before it blows up, and a catch on the floor would end
        # the keyframe first
        run = run_agent(built, plan, keyframes, contact_settings(rollouts=16, give_up_fallen_s=0.0), 0, engine)
    assert run.unstable_at is not None and not run.success and "BADQACC" in run.unstable_reason
    # Replaying the agent's own controls in a plain loop warns in the step that starts at unstable_at.
    m, dt = built.model, built.model.opt.timestep
    ctrl = np.concatenate([run.ctrl[1:], np.repeat(run.ctrl[-1:], 20, axis=0)])[None]
    first, started = reference_divergence(m, start_state(built), ctrl)
    assert first[0] == len(run.times) - 1  # the agent kept every step before the blow-up, and no more
    assert run.unstable_at == pytest.approx(started[0], abs=1e-9)
    assert 0.05 < run.unstable_at < 0.5
    assert run.times[-1] == pytest.approx(run.unstable_at) and np.isfinite(run.qpos).all()
    assert np.all(np.diff(run.times) > 0.5 * dt)
    # The method packages it as an unstable solution; result.json says so.
    # No retries or back-ups: each would blow up again (the packaging is checked, not the recovery).
    prep = ContactPrepared(None, contact_settings(rollouts=16, segment_retries=0, backups=0, give_up_fallen_s=0.0),
                           built, keyframes, plan)
    with RolloutEngine(plan.model, 2) as engine:
        sol = contact.solve(prep, 0, engine)
    assert sol.unstable_time == pytest.approx(run.unstable_at)
    entry = write_solution(str(tmp_path), m, 0, sol, 30.0, 1.0)
    assert entry["status"] == "unstable" and entry["unstable_time"] == pytest.approx(run.unstable_at)
    assert entry["success"] is False
    json.dumps(entry, allow_nan=False)


def test_assist_whose_every_candidate_blows_up_is_unstable(tmp_path):
    doc = json.loads((ROOT / "scenes" / "tasks" / "assist_box_jump_low.json").read_text())
    doc["settings"].update(population=8, samples=16, curriculum=False)
    prep = assist.prepare(task_from_dict(doc))
    scene = prep.built.scene
    for body in scene.character.bodies:
        for joint in body.joints:
            if joint.name == "knee_right":
                joint.stiffness = 1e6
    prep.built = build_model(scene, actuation="position", assist_bodies=prep.built.assist_bodies)
    with RolloutEngine(prep.built.model, 2) as engine:
        sol = assist.solve(prep, 0, engine)
    assert sol.unstable_time is not None and not sol.success
    assert sol.times[-1] == pytest.approx(sol.unstable_time) and np.isfinite(sol.qpos).all()
    entry = write_solution(str(tmp_path), prep.built.model, 0, sol, 30.0, 1.0)
    assert entry["status"] == "unstable" and entry["kf_error"] is None
    json.dumps(entry, allow_nan=False)


def test_cli_result_json_reports_unstable_with_the_reference_time(tmp_path):
    task = {"schema_version": 1, "name": "stiff_drop", "method": "simulate",
            "scene": {"desc": schema.to_dict(stiff_scene())},
            "settings": {"duration": 0.5, "mode": "passive", "perturb": 0.0}, "seeds": [0], "output_fps": 30}
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task))
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "solver", "run", str(path), "--out", str(out), "--jsonl",
                        "--workers", "0"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    events = [json.loads(line) for line in p.stdout.splitlines()]
    sol = json.loads((out / "result.json").read_text())["solutions"][0]
    assert [e["solution"]["status"] for e in events if e["event"] == "solution"] == ["unstable"]
    assert sol["status"] == "unstable" and sol["success"] is False
    model = mujoco.MjModel.from_xml_path(str(out / "model.xml"))
    z = np.load(out / sol["npz"], allow_pickle=False)
    d = mujoco.MjData(model)
    d.qpos[:] = z["qpos"][0]
    mujoco.mj_forward(model, d)
    first, started = reference_divergence(model, get_state(model, d), np.zeros((1, 100, model.nu)))
    assert first[0] >= 0 and sol["unstable_time"] == pytest.approx(started[0], abs=1e-9)
    assert (z["times"][-1] == pytest.approx(sol["unstable_time"])
            and sol["duration_s"] == pytest.approx(sol["unstable_time"]))
    assert len(z["times"]) == first[0] + 1 and np.isfinite(z["qpos"]).all()
    assert z["frame_times"][-1] <= sol["unstable_time"] + 1e-9
    assert "WARNING" not in p.stderr and not (tmp_path / "MUJOCO_LOG.TXT").exists()  # warnings are not spilled


def test_stable_solutions_say_ok(tmp_path):
    scene = build_scene(SceneRef(environment="armchair"))
    task = {"schema_version": 1, "name": "calm_drop", "method": "simulate", "scene": {"desc": schema.to_dict(scene)},
            "settings": {"duration": 0.2, "perturb": 0.0}, "seeds": [0], "output_fps": 30}
    from solver.methods.simulate import SIMULATE as simulate
    prep = simulate.prepare(task_from_dict(task))
    with RolloutEngine(prep.built.model, 1) as engine:
        sol = simulate.solve(prep, 0, engine)
    entry = write_solution(str(tmp_path), prep.built.model, 0, sol, 30.0, 1.0)
    assert entry["status"] == "ok" and entry["unstable_time"] is None and entry["success"] is True


# -- Blender ------------------------------------------------------------------------------------------
def test_keep_refuses_an_unstable_solution_and_adds_no_action():
    from blender_env import installed_extension
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset="drop_onto_armchair") == {"FINISHED"}
    arm = bpy.context.active_object
    scene = bpy.context.scene
    arm.data.bones["shin_right"].physkey.joints["knee_right"].stiffness = STIFF_KNEE  # the animator's typo
    scene.physkey.settings_json = json.dumps({"duration": 0.5, "perturb": 0.0})
    scene.physkey.num_seeds = 1
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    item = scene.physkey.solutions[0]
    assert item.unstable and not item.success and 0.05 < item.unstable_time < 0.5
    assert scene.physkey.status.startswith("done: 1 solution(s), 1 unstable")
    before = sorted(a.name for a in bpy.data.actions)
    with pytest.raises(RuntimeError, match=rf"unstable: its simulation blew up at {item.unstable_time:.3f} s"):
        bpy.ops.physkey.keep_solution(index=0)
    assert sorted(a.name for a in bpy.data.actions) == before and len(scene.timeline_markers) == 0
    scene.physkey.active_solution = 0  # the preview still shows the motion up to the blow-up
    assert arm.animation_data.action.name == "PhysKey Preview"
    with pytest.raises(RuntimeError, match="cannot be kept"):
        bpy.ops.physkey.keep_solution()
    assert not any(a.name.startswith(f"{scene.name}_simulate_seed") for a in bpy.data.actions)
