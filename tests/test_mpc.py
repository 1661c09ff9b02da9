"""PartwiseMPC: the contact objective, group bookkeeping, composition, the dart board, keyframe
timing, and a short real run."""
import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from solver.formats.contact_keyframes import ContactKeyframe, ContactPair
from solver.formats.objective_terms import TERM_NAMES
from solver.formats.scene import GROUPS
from solver.formats.settings import SamplingSettings
from solver.formats.task import SceneRef, build_scene
from solver.mpc.keyframe_tracker import KeyframeTracker
from solver.mpc.objectives.contact import ALPHA, Costs, Objective, capture_point
from solver.mpc.planners.base import ControlSpace
from solver.mpc.planners.partwise import PartwisePlanner, compose
from solver.physics.model import build_model
from solver.physics.rollout import RolloutEngine

ROOT = Path(__file__).resolve().parents[1]
# The paper's Table 1, written out independently of the code: term → groups it lands in.
TABLE_1 = {
    "Torso Up": {"core"}, "Pelvis Up": {"core"}, "LFoot Up": {"left_leg"}, "RFoot Up": {"right_leg"},
    "Head Height": {"core"}, "Torso Height": {"core"}, "Knee Feet XY": {"right_leg", "left_leg"},
    "COM Feet XY": set(GROUPS), "Facing Dir": {"core"}, "CoM Vel.": set(GROUPS),
}


@pytest.fixture(scope="module")
def objective():
    """The paper's terms alone (the speed-limit term, on by default, has its own test)."""
    return Objective(build_model(build_scene(SceneRef(environment="armchair"))), speed_weight=0.0)


def only(term, weight=1.0, **kw):
    return ContactKeyframe(pairs=kw.pop("pairs", [ContactPair("pelvis", [0, 0, 0])]),
                           weights={t: (weight if t == term else 0.0) for t in TERM_NAMES}, **kw)


def fake_features(objective, nroll=3, nstep=4, seed=0):
    """Random but valid features: unit quaternions, positions, COM."""
    rng = np.random.default_rng(seed)
    bodies = list(objective.body_group) + ["chair"]
    q = rng.normal(size=(len(bodies), nroll, nstep, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return {"pos": {b: rng.normal(size=(nroll, nstep, 3)) for b in bodies},
            "quat": {b: q[i] for i, b in enumerate(bodies)},
            "com": rng.normal(size=(nroll, nstep, 3)), "comvel": rng.normal(size=(nroll, nstep, 3))}


def test_contact_term_is_eq5_by_hand(objective):
    feat = fake_features(objective)
    nroll, nstep = 3, 4
    qvel, ctrl = np.zeros((nroll, nstep, 27)), np.zeros((nroll, nstep, 21))
    local = np.array([0.01, -0.02, 0.05])
    target = np.array([0.3, -0.1, 0.5])
    kf = only("Contact", 100.0, pairs=[ContactPair("pelvis", list(local), "world", list(target))])
    costs = objective.evaluate(feat, qvel, ctrl, kf)
    for r, t in itertools.product(range(nroll), range(nstep)):
        w, x, y, z = feat["quat"]["pelvis"][r, t]
        R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                      [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                      [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
        d = feat["pos"]["pelvis"][r, t] + R @ local - target
        want = 100.0 * sum(np.sqrt(dk * dk + ALPHA ** 2) - ALPHA for dk in d)
        assert costs.per_step[r, t] == pytest.approx(want, rel=1e-12)
    # Coincident points cost nothing.
    feat["pos"]["pelvis"][:] = target
    feat["quat"]["pelvis"][:] = [1, 0, 0, 0]
    zero = objective.evaluate(feat, qvel, ctrl,
                              only("Contact", 100.0, pairs=[ContactPair("pelvis", [0, 0, 0], "world", list(target))]))
    assert np.all(zero.total == 0.0)


def test_speed_limit_term_by_hand_lands_in_the_moving_bodys_group(objective):
    """A hand moving at 4 m/s (limit 2.5, weight 10) costs 10 × ½ × 1.5² = 11.25 a step in the right
    arm's group and nowhere else; bodies at rest or under the limit cost nothing; weight 0 adds no term."""
    built = objective.built
    limited = Objective(built, speed_limit=2.5, speed_weight=10.0)
    nroll, nstep = 2, 5
    dt = built.model.opt.timestep
    feat = fake_features(limited, nroll, nstep)
    for b in limited.character_bodies:  # at rest, except a hand and a foot
        feat["pos"][b] = np.broadcast_to(feat["pos"][b][:, :1], (nroll, nstep, 3)).copy()
    feat["pos"]["hand_right"] = np.zeros((nroll, nstep, 3))
    feat["pos"]["hand_right"][..., 0] = 4.0 * dt * np.arange(nstep)  # 4 m/s along x
    feat["pos"]["foot_left"] = np.zeros((nroll, nstep, 3))
    feat["pos"]["foot_left"][..., 2] = 2.0 * dt * np.arange(nstep)  # 2 m/s: under the limit
    qvel, ctrl = np.zeros((nroll, nstep, 27)), np.zeros((nroll, nstep, 21))
    kf = only("Torso Up", 0.0)  # no other term
    costs = limited.evaluate(feat, qvel, ctrl, kf)
    assert costs.per_step == pytest.approx(np.full((nroll, nstep), 10.0 * 0.5 * 1.5 ** 2), rel=1e-9)
    arm = GROUPS.index(objective.body_group["hand_right"])
    seen = costs.membership[costs.components.sum(axis=0) > 0]
    assert seen.shape[0] == 1 and list(np.flatnonzero(seen[0])) == [arm]
    assert "hand_right" in limited.bodies_for(kf) and "hand_right" not in objective.bodies_for(kf)
    assert objective.evaluate(feat, qvel, ctrl, kf).components.shape[1] == 0


def test_height_targets_are_mujoco_mpcs_for_the_default_humanoid_and_scaled_for_another(objective):
    """Head Height and Torso Height aim at MuJoCo MPC's 1.4 / 1.3 m for the default humanoid, exactly (its
    results do not move), and for dm_control's humanoid at those times its own head's and torso's height
    above its lower foot at rest over the default's (MuJoCo forward kinematics of each at qpos0)."""
    import mujoco

    from solver.run.cli import _prepare
    assert (objective.head_height, objective.torso_height) == (1.4, 1.3)
    reach = ROOT / "scenes" / "tasks" / "reach_hand_targets.json"
    _, prepared = _prepare(str(reach), character=str(ROOT / "tests" / "data" / "dm_control" / "humanoid.xml"))
    dm = Objective(prepared.plan, speed_weight=0.0)

    def above_feet(built, head, torso, feet):
        data = mujoco.MjData(built.model)
        mujoco.mj_kinematics(built.model, data)
        z = {b: data.xpos[built.model.body(b).id, 2] for b in (head, torso, *feet)}
        low = min(z[f] for f in feet)
        return z[head] - low, z[torso] - low
    default = above_feet(objective.built, "head", "torso", ("foot_left", "foot_right"))
    mine = above_feet(dm.built, "head", "torso", ("left_foot", "right_foot"))
    assert dm.head_height == pytest.approx(1.4 * mine[0] / default[0], abs=1.4 * 6e-4)
    assert dm.torso_height == pytest.approx(1.3 * mine[1] / default[1], abs=1.3 * 6e-4)
    assert abs(dm.head_height - 1.4) > 0.01  # not the default's


def test_the_standing_style_charges_a_lean_about_as_it_judges_one(objective):
    """A Standing keyframe counts only with the torso within 15° of upright and the head at 93% of its standing
    height. Torso Up is ½-square-like in (1 − cos tilt) below its smooth-abs's 0.1: at the paper's weight 10, a
    torso at the edge of its judgment cost a fiftieth of what a head at the edge of its own does, so plans leaned
    17° and failed for style. The style weighs it so the two edges cost within a factor of ten (by hand: weight
    × (√((1 − cos 15°)² + 0.1²) − 0.1) against 80 × (√(0.07 · 1.4)² + 0.1²) − 0.1))."""
    import mujoco

    from solver.formats.objective_terms import STYLES
    from solver.physics.posture import STANDING_HEAD_SHARE, STANDING_TILT_DEG
    weights = STYLES["standing"][1]
    feat = fake_features(objective, nroll=1, nstep=1)
    tilt = np.radians(STANDING_TILT_DEG)
    model = objective.built.model
    rest = mujoco.MjData(model)
    mujoco.mj_kinematics(model, rest)  # the torso upright at rest, tilted 15° forward about the world's y
    leaned = np.zeros(4)
    mujoco.mju_mulQuat(leaned, [np.cos(tilt / 2), 0.0, np.sin(tilt / 2), 0.0], rest.xquat[model.body("torso").id])
    feat["quat"]["torso"] = leaned.reshape(1, 1, 4)
    feat["pos"]["head"] = np.array([[[0.0, 0.0, STANDING_HEAD_SHARE * objective.head_height]]])
    still = np.zeros((1, 1, 27)), np.zeros((1, 1, 21))
    lean = objective.evaluate(feat, *still, only("Torso Up", weights["Torso Up"]))
    low = objective.evaluate(feat, *still, only("Head Height", weights["Head Height"]))
    by_hand = weights["Torso Up"] * (np.hypot(1 - np.cos(tilt), 0.1) - 0.1)
    assert float(lean.total[0]) == pytest.approx(by_hand, rel=1e-9)
    short = (1 - STANDING_HEAD_SHARE) * objective.head_height
    assert float(low.total[0]) == pytest.approx(weights["Head Height"] * (np.hypot(short, 0.1) - 0.1), rel=1e-9)
    assert float(lean.total[0]) > float(low.total[0]) / 10


def test_com_feet_xy_charges_where_the_centre_of_mass_is_headed(objective):
    """COM Feet XY by hand: a centre of mass 0.9 m up, 3 cm ahead of the feet's midpoint and moving forward at
    0.2 m/s is charged as 3 cm + 0.2 m/s × ½ √(0.9 m / 9.81 m/s²) = 6.03 cm ahead (its capture point at half the
    lead), w × smooth-abs of that, every step; the same centre of mass moving back towards the feet at that
    speed is charged as 0.03 cm behind them; one at rest where it is (the paper's term); one lying on the floor
    (below 0.1 m) leads as if 0.1 m up."""
    feat = fake_features(objective, nroll=4, nstep=2)
    for foot, y in (("foot_right", -0.1), ("foot_left", 0.1)):
        feat["pos"][foot][:] = [0.5, y, 0.05]
    feat["com"][:] = [0.53, 0.0, 0.9]
    feat["com"][3] = [0.53, 0.0, 0.05]
    feat["comvel"][:] = 0.0
    feat["comvel"][0, :, :] = [0.2, 0.0, -0.3]  # forward (the vertical speed is not a lead)
    feat["comvel"][1, :, :] = [-0.2, 0.0, 0.0]  # back towards the feet
    feat["comvel"][3, :, :] = [0.2, 0.0, 0.0]  # lying, moving forward
    qvel, ctrl = np.zeros((4, 2, 27)), np.zeros((4, 2, 21))
    costs = objective.evaluate(feat, qvel, ctrl, only("COM Feet XY", weight=100.0))
    lead, lying = 0.5 * np.sqrt(0.9 / 9.81), 0.5 * np.sqrt(0.1 / 9.81)
    ahead = [0.03 + 0.2 * lead, abs(0.03 - 0.2 * lead), 0.03, 0.03 + 0.2 * lying]
    assert 0.0602 < ahead[0] < 0.0604 and ahead[1] < 0.001
    assert costs.total == pytest.approx([100.0 * (np.hypot(a, 0.1) - 0.1) for a in ahead], rel=1e-9)
    # With no gravity nothing topples: the centre of mass is charged where it is, never NaN.
    np.testing.assert_array_equal(capture_point(feat["com"], feat["comvel"], 0.0), feat["com"][..., :2])


def test_each_term_lands_in_exactly_the_groups_of_table_1(objective):
    feat = fake_features(objective)
    qvel, ctrl = np.ones((3, 4, 27)), 0.3 * np.ones((3, 4, 21))
    for term, groups in TABLE_1.items():
        kw = {"facing_target": [2.0, 0.0]} if term == "Facing Dir" else {}
        costs = objective.evaluate(feat, qvel, ctrl, only(term, **kw))
        assert costs.membership.shape[0] == 1, term
        assert {g for g, seen in zip(GROUPS, costs.membership[0]) if seen} == groups, term
    for term in ("Joint Vel.", "Control"):  # every group sees its own joints' share
        costs = objective.evaluate(feat, qvel, ctrl, only(term))
        assert costs.membership.sum(axis=0).tolist() == [1] * len(GROUPS), term
        assert np.allclose(costs.components.sum(axis=1), costs.total)
    # Contact terms land in the groups of the bodies in the pair.
    kf = only("Contact", pairs=[ContactPair("hand_left", [0, 0, 0], "foot_right", [0, 0, 0]),
                                ContactPair("head", [0, 0, 0], "chair", [0, 0, 0])])
    costs = objective.evaluate(feat, qvel, ctrl, kf)
    seen = [{g for g, s in zip(GROUPS, row) if s} for row in costs.membership]
    assert seen == [{"left_arm", "right_leg"}, {"core"}]


def test_part_cost_counts_shared_terms_once(objective):
    feat = fake_features(objective)
    costs = objective.evaluate(feat, np.ones((3, 4, 27)), np.zeros((3, 4, 21)), only("CoM Vel."))
    everyone = costs.part(range(len(GROUPS)))
    np.testing.assert_allclose(everyone, costs.total)
    np.testing.assert_allclose(costs.part([0]), costs.total)


def _planner(objective, **settings):
    plan = objective.built
    settings = SamplingSettings(**settings)
    return PartwisePlanner(ControlSpace.of(plan, objective.act_group, settings), settings, None,
                           np.random.default_rng(0))


def test_composition_takes_each_parts_knots_from_its_best_rollout(objective):
    planner = _planner(objective)
    nroll, nknots, nu = 6, 3, 21
    candidates = np.arange(nroll)[:, None, None] * np.ones((nroll, nknots, nu))  # rollout r's knots are all r
    # One component per group; group g's best rollout is r = g + 1.
    comp = np.full((nroll, len(GROUPS)), 10.0)
    for g in range(len(GROUPS)):
        comp[g + 1, g] = 0.0
    costs = Costs(total=comp.sum(1), components=comp, membership=np.eye(len(GROUPS), dtype=bool),
                  per_step=np.zeros((nroll, 1)))
    composed = compose(candidates, costs, [[0], [1], [2], [3], [4]], planner.part_columns)
    for a in range(nu):
        assert np.all(composed[:, a] == objective.act_group[a] + 1)
    # A part spanning several groups picks the rollout best for their sum.
    comp2 = comp.copy()
    comp2[5, [1, 2]] = 1.0  # rollout 5 is second-best for both legs: best for the legs together
    costs2 = Costs(total=comp2.sum(1), components=comp2, membership=np.eye(len(GROUPS), dtype=bool),
                   per_step=np.zeros((nroll, 1)))
    composed2 = compose(candidates, costs2, [[1, 2], [0, 3, 4]], planner.part_columns)
    legs = np.isin(objective.act_group, [1, 2])
    assert np.all(composed2[:, legs] == 5)


def test_dart_board_partwise_finds_the_optimum_far_more_often(objective):
    """Paper §3.1: D independent dimensions, 5 cells each, the optimum in one cell per dimension.
    Baseline keeps the best of N joint samples; partwise composes per-dimension bests."""
    planner = _planner(objective)
    rng = np.random.default_rng(7)
    D, cells, N, trials = len(GROUPS), 5, 45, 200
    optimum = rng.integers(0, cells, D)
    base_hits = part_hits = 0
    for _ in range(trials):
        samples = rng.integers(0, cells, (N, D))
        comp = (samples != optimum).astype(float)  # J_i ∈ {0, 1} per dimension
        costs = Costs(total=comp.sum(1), components=comp, membership=np.eye(D, dtype=bool), per_step=np.zeros((N, 1)))
        base_hits += comp.sum(1).min() == 0
        knots = np.repeat(samples[:, None, :], 1, axis=1)
        # Map dimension g to the actuators of group g: each group's actuators carry that dimension's value.
        cand = np.stack([samples[:, objective.act_group]], axis=1).astype(float)
        composed = compose(cand, costs, [[g] for g in range(D)], planner.part_columns)
        per_dim = np.array([composed[0, objective.act_group == g][0] for g in range(D)])
        part_hits += bool(np.all(per_dim == optimum))
        del knots
    assert part_hits / trials > 0.95
    assert base_hits / trials < 0.1


def test_keyframe_success_and_failure_timing():
    kf1 = ContactKeyframe(pairs=[ContactPair("pelvis", [0, 0, 0])], tolerance=0.1, sustain=0.5, time_limit=3.0)
    kf2 = ContactKeyframe(pairs=[ContactPair("pelvis", [0, 0, 0])], tolerance=0.1, sustain=0.0, time_limit=1.0)
    tr = KeyframeTracker([kf1, kf2])
    dt = 0.01
    script = [(t * dt, 0.5 if t * dt < 1.0 else (0.05 if t * dt < 1.3 else (0.5 if t * dt < 1.4 else 0.05)))
              for t in range(1, 300)]
    for t, d in script:
        tr.update(t, d)
        if tr.index == 1:
            break
    # Within tolerance from 1.0 s, out at 1.3 s (sustain restarts), back at 1.4 s: reached at 1.9 s.
    assert tr.reached[0] == pytest.approx(1.9, abs=1e-9)
    assert not tr.failed
    t0 = tr.reached[0]
    for k in range(1, 200):  # never within tolerance: fails once 1 s has passed
        tr.update(t0 + k * dt, 0.5)
        if tr.failed:
            break
    assert tr.failed and t0 + k * dt == pytest.approx(t0 + 1.01, abs=1e-9)
    assert tr.reached[1] is None and tr.index == 1
    # Sustain 0: success the first instant it is within tolerance.
    tr2 = KeyframeTracker([kf2])
    tr2.update(0.2, 0.5)
    tr2.update(0.25, 0.09)
    assert tr2.reached == [0.25] and tr2.done and not tr2.failed


def test_short_real_run_reaches_hand_targets(tmp_path):
    doc = json.loads((ROOT / "scenes" / "tasks" / "reach_hand_targets.json").read_text())
    doc["keyframes"] = doc["keyframes"][:1]
    doc["keyframes"][0]["time_limit"] = 1.0  # the report's measures are checked, not the reach: one short try
    doc["settings"].update(segment_retries=0, backups=0)
    doc["seeds"] = [2]  # a seed that holds the single reach still in time (seeds 0 and 1 topple while settling)
    path = tmp_path / "reach.json"
    path.write_text(json.dumps(doc))
    p = subprocess.run([sys.executable, "-m", "solver", "run", str(path), "--out", str(tmp_path / "o"),
                        "--workers", "0"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    sol = json.loads((tmp_path / "o" / "result.json").read_text())["solutions"][0]
    assert sol["success"], sol
    assert sol["keyframes_reached"][0] < 8.0
    assert 0.0 < sol["partwise_win_fraction"] < 1.0


def test_keyframes_appended_on_stdin_reach_the_running_solve(tmp_path):
    doc = json.loads((ROOT / "scenes" / "tasks" / "reach_hand_targets.json").read_text())
    first = doc["keyframes"][0]
    # Appended: the same targets with a looser tolerance and no sustain, so it is met at once (this
    # tests the mechanism, not the planner's balance).
    second = dict(first, name="still_there", sustain=0.0, tolerance=0.3)
    doc["keyframes"] = [first]
    path = tmp_path / "reach.json"
    path.write_text(json.dumps(doc))
    bad = json.dumps({"append_keyframes": [dict(second, pairs=[dict(second["pairs"][0], body1="hand_rigth")])]})
    good = json.dumps({"append_keyframes": [second]})
    # then the appended keyframe edited (the animator moved it before the seed got there), and an edit of a
    # keyframe the solve does not have
    edit = json.dumps({"edit_keyframes": [{"index": 1, "keyframe": dict(second, name="moved", tolerance=0.35)}]})
    nowhere = json.dumps({"edit_keyframes": [{"index": 2, "keyframe": second}]})
    lines = "\n".join([bad, good, nowhere, edit]) + "\n"
    p = subprocess.run([sys.executable, "-m", "solver", "run", str(path), "--out", str(tmp_path / "o"), "--workers",
                        "0", "--jsonl"], cwd=ROOT, input=lines, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    events = [json.loads(line) for line in p.stdout.splitlines()]
    errors = [e for e in events if e["event"] == "error"]
    assert [(e["path"], e["fatal"]) for e in errors] == [("append_keyframes[0].pairs[0].body1", False),
                                                          ("edit_keyframes[0].index", False)]
    assert "2 is not a keyframe of this solve (it has 2)" in errors[1]["message"]
    assert [e["count"] for e in events if e["event"] == "keyframes_appended"] == [1]
    assert [e["keyframes"] for e in events if e["event"] == "keyframes_edited"] == [[1]]
    sol = json.loads((tmp_path / "o" / "result.json").read_text())["solutions"][0]
    assert len(sol["keyframes_reached"]) == 2 and sol["success"], sol
    assert sol["particles"]["edits"] == [{"keyframe": 1, "name": "moved", "taken": True}]


def test_bench_mpc_reports_table_2_measures(tmp_path):
    doc = json.loads((ROOT / "scenes" / "tasks" / "reach_hand_targets.json").read_text())
    doc["keyframes"] = doc["keyframes"][:1]
    doc["keyframes"][0]["time_limit"] = 0.6  # the report's measures are checked, not the reach: one short try
    # the task's own planner is kept, its rollouts replaced by --rollouts (a bench once ran partwise silently)
    doc["settings"].update(segment_retries=0, backups=0, planner="baseline", rollouts=30)
    path = tmp_path / "reach.json"
    path.write_text(json.dumps(doc))
    p = subprocess.run([sys.executable, "-m", "benchmarks.bench", "mpc", "--task", str(path), "--trials", "1",
                        "--rollouts", "15", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    r = json.loads(p.stdout)
    assert r["trials"] == 1 and r["rollouts"] == 15 and r["planner"] == "baseline"
    assert 0 <= r["success_rate"] <= 1 and r["partwise_win_fraction"] == 0.0
    assert r["iteration_ms"] > 0 and r["floor_iteration_ms"] > 0 and r["overhead_vs_floor"] > 0.5
    assert r["realtime_factor"] > 0


def test_slowdown_plans_only_the_iterations_that_fit(monkeypatch):
    """With Γ the planner iterates while another iteration still fits in control_dt / Γ of wall time
    (at least once): where 1.5 iterations fit it plans one per control step, where 3.5 fit three —
    planning until the budget is *passed* would make one more. The agent's clock is a stand-in that
    advances by a fixed time per planning iteration (the rollouts are MuJoCo's), so what fits does not
    depend on how loaded the machine is."""
    import types

    from solver.formats.task import task_from_dict
    from solver.methods.contact import CONTACT as contact
    from solver.mpc import agent
    from solver.mpc.agent import run_agent
    doc = json.loads((ROOT / "scenes" / "tasks" / "reach_hand_targets.json").read_text())
    doc["keyframes"] = doc["keyframes"][:1]
    doc["keyframes"][0]["time_limit"] = 0.3  # 20 control steps, then the keyframe fails
    iteration_s = 0.01
    clock = {"now": 0.0}
    real_iteration = agent.plan_iteration

    def timed_iteration(*args, **kwargs):
        clock["now"] += iteration_s
        return real_iteration(*args, **kwargs)

    monkeypatch.setattr(agent, "time", types.SimpleNamespace(perf_counter=lambda: clock["now"]))
    monkeypatch.setattr(agent, "plan_iteration", timed_iteration)
    per_step = {}
    for fits in (1.5, 3.5):
        doc["settings"]["slowdown"] = 0.015 / (fits * iteration_s)  # control_dt / Γ = fits iterations
        prep = contact.prepare(task_from_dict(doc))
        assert prep.settings.sampling.planning_timestep == 0.015
        substeps = round(0.015 / prep.built.model.opt.timestep)
        with RolloutEngine(prep.plan.model, 1) as engine:
            run = run_agent(prep.built, prep.plan, prep.keyframes, prep.settings, 0, engine)
        per_step[fits] = run.iterations / -(-(len(run.times) - 1) // substeps)
        assert abs(run.plan_wall_s - run.iterations * iteration_s) < 1e-9  # the plan's wall time: the clock's
    assert per_step == {1.5: 1.0, 3.5: 3.0}, per_step
