"""Bad input through the real CLI: every case must exit 2 with one `error: <path>: ...` line on
stderr, one `invalid_input` JSON event on stdout, and nothing written to --out."""
from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOOD_TASK = ROOT / "scenes" / "tasks" / "drop_onto_armchair.json"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from solver.core import schema  # noqa: E402
from solver.formats.task import SceneRef, build_scene  # noqa: E402

SCENE = "scene.desc"
CH = f"{SCENE}.character"


def run_cli(task_path, out_dir, timeout=300):
    """Run `python -m solver run` on a task; returns (returncode, stdout, stderr)."""
    cmd = [sys.executable, "-m", "solver", "run", str(task_path), "--out", str(out_dir),
           "--jsonl", "--workers", "0"]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def good_task() -> dict:
    return json.loads(GOOD_TASK.read_text(encoding="utf-8"))


_SCENE_DESC = None


def inline_scene() -> dict:
    """The armchair scene as a full SceneDesc dict (what the Blender add-on sends)."""
    global _SCENE_DESC
    if _SCENE_DESC is None:
        _SCENE_DESC = schema.to_dict(build_scene(SceneRef(environment="armchair")))
    return copy.deepcopy(_SCENE_DESC)


def mutated(fn) -> dict:
    """The good task with an inline scene, after `fn(task, desc)` has broken it."""
    task = good_task()
    desc = inline_scene()
    task["scene"] = {"desc": desc}
    fn(task, desc)
    return task


def first_body_with_joints(desc) -> int:
    return next(i for i, b in enumerate(desc["character"]["bodies"]) if b["joints"])


def _swap_range(t, d):
    j = d["character"]["bodies"][first_body_with_joints(d)]["joints"][0]
    lo, hi = j["range"]
    assert lo < hi
    j["range"] = [hi, lo]


def _set(path_fn, value):
    """A mutation that sets `path_fn(task, desc)` = (container, key) to `value`."""
    def fn(t, d):
        container, key = path_fn(t, d)
        container[key] = value
    return fn


def _body(d, i):
    return d["character"]["bodies"][i]


def _geom0(d):
    return _body(d, 0)["geoms"][0]


# (id, task dict or None for a raw-text case, raw file text or None, substrings expected on stderr)
CASES = [
    ("malformed_json", None, '{"schema_version": 1,', ["{task}", "malformed JSON"]),
    ("task_schema_version", {**good_task(), "schema_version": 99}, None, ["schema_version"]),
    ("perturbations_for_simulate",
     {**good_task(), "perturbations": {"impulses": [{"time": 0.5, "body": "torso", "impulse": [1.0, 0.0, 0.0]}]}},
     None, ["perturbations", "does not react"]),
    ("scene_schema_version", mutated(_set(lambda t, d: (d, "schema_version"), 99)), None,
     [f"{SCENE}.schema_version"]),
    ("actuator_unknown_joint",
     mutated(_set(lambda t, d: (d["character"]["actuators"][0], "joint"), "no_such_joint")), None,
     [f"{CH}.actuators[0].joint"]),
    ("parent_missing", mutated(_set(lambda t, d: (_body(d, 1), "parent"), "no_such_body")), None,
     [f"{CH}.bodies[1].parent"]),
    ("exclude_contacts_missing_body",
     mutated(_set(lambda t, d: (d["character"]["exclude_contacts"][0], 0), "no_such_body")), None,
     [f"{CH}.exclude_contacts[0][0]"]),
    ("duplicate_body_name",
     mutated(lambda t, d: _body(d, 2).update(name=_body(d, 1)["name"])), None, ["duplicate body name"]),
    ("duplicate_geom_name",
     mutated(lambda t, d: _body(d, 1)["geoms"][0].update(name=_geom0(d)["name"])), None,
     ["duplicate geom name"]),
    ("zero_geom_size", mutated(_set(lambda t, d: (_geom0(d)["size"], 0), 0.0)), None,
     [f"{CH}.bodies[0].geoms[0].size[0]"]),
    ("negative_geom_mass", mutated(_set(lambda t, d: (_geom0(d), "mass"), -1.0)), None,
     [f"{CH}.bodies[0].geoms[0].mass"]),
    ("nan_geom_size", mutated(_set(lambda t, d: (_geom0(d)["size"], 0), math.nan)), None,
     [f"{CH}.bodies[0].geoms[0].size[0]", "finite"]),
    ("infinite_gear", mutated(_set(lambda t, d: (d["character"]["actuators"][0], "gear"), math.inf)), None,
     [f"{CH}.actuators[0].gear"]),
    ("zero_kp", mutated(_set(lambda t, d: (d["character"]["actuators"][0], "kp"), 0.0)), None,
     [f"{CH}.actuators[0].kp"]),
    ("negative_timestep", mutated(_set(lambda t, d: (d, "timestep"), -0.001)), None, [f"{SCENE}.timestep"]),
    ("zero_timestep", mutated(_set(lambda t, d: (d, "timestep"), 0.0)), None, [f"{SCENE}.timestep"]),
    ("negative_duration", mutated(_set(lambda t, d: (t["settings"], "duration"), -1.0)), None,
     ["settings.duration"]),
    ("nan_output_fps", mutated(_set(lambda t, d: (t, "output_fps"), math.nan)), None, ["output_fps"]),
    ("joint_range_low_gt_high", mutated(_swap_range), None, [".range"]),
    ("scene_without_character", mutated(lambda t, d: d.pop("character")), None, [f"{CH}"]),
    ("unknown_method", {**good_task(), "method": "teleport"}, None, ["method"]),
    ("scene_field_beside_full_scene", mutated(lambda t, d: t["scene"].update(timestep=0.01)), None,
     ["scene.timestep", "scene.desc.timestep"]),
    ("unknown_environment", {**good_task(), "scene": {"environment": "spaceship"}}, None,
     ["scene.environment"]),
    ("unknown_task_field", {**good_task(), "colour": 1}, None, ["colour"]),
    ("seeds_wrong_type", {**good_task(), "seeds": "abc"}, None, ["seeds"]),
    ("initial_pose_unknown_joint_inline",
     mutated(lambda t, d: d["initial_pose"]["joints"].update(no_such_joint=0.1)), None,
     [f"{SCENE}.initial_pose.joints.no_such_joint"]),
    ("initial_velocity_unknown_joint",
     mutated(lambda t, d: d.update(initial_velocity={"joints": {"no_such_joint": 0.1}})), None,
     [f"{SCENE}.initial_velocity.joints.no_such_joint"]),
    ("initial_velocity_nan",
     mutated(lambda t, d: d.update(initial_velocity={"root_linear": [0.0, math.nan, 0.0]})), None,
     [f"{SCENE}.initial_velocity.root_linear[1]", "finite"]),
    ("initial_velocity_short",
     mutated(lambda t, d: d.update(initial_velocity={"root_angular": [0.0, 1.0]})), None,
     [f"{SCENE}.initial_velocity.root_angular"]),
    ("initial_pose_unknown_joint_builtin",
     {**good_task(), "scene": {"environment": "armchair", "initial_pose": {"joints": {"no_such_joint": 0.1}}}},
     None, ["initial_pose.joints.no_such_joint"]),
]


def check_invalid(rc, out, err, expected):
    assert rc == 2, f"exit code {rc}\nstdout:\n{out}\nstderr:\n{err}"
    err_lines = [line for line in err.splitlines() if line.strip()]
    assert len(err_lines) == 1, f"want one stderr line, got:\n{err}"
    assert err_lines[0].startswith("error: "), err_lines[0]
    for text in expected:
        assert text in err_lines[0], f"{text!r} not in {err_lines[0]!r}"
    out_lines = [line for line in out.splitlines() if line.strip()]
    assert len(out_lines) == 1, f"want one stdout line, got:\n{out}"
    event = json.loads(out_lines[0])
    assert event["event"] == "error" and event["kind"] == "invalid_input", event
    assert isinstance(event.get("path"), str) and event["path"], event
    assert err_lines[0].startswith(f"error: {event['path']}: "), (event["path"], err_lines[0])


@pytest.mark.parametrize("task,raw,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(tmp_path, task, raw, expected):
    task_path = tmp_path / "task.json"
    # json.dumps (allow_nan=True) writes NaN/Infinity, which the solver must reject as non-finite.
    task_path.write_text(raw if raw is not None else json.dumps(task), encoding="utf-8")
    out_dir = tmp_path / "out"
    rc, out, err = run_cli(task_path, out_dir)
    check_invalid(rc, out, err, [s.replace("{task}", str(task_path)) for s in expected])
    assert not out_dir.exists(), f"--out was created: {list(out_dir.iterdir())}"


def test_missing_task_file(tmp_path):
    out_dir = tmp_path / "out"
    missing = tmp_path / "nope.json"
    rc, out, err = run_cli(missing, out_dir)
    check_invalid(rc, out, err, [str(missing), "not found"])
    assert not out_dir.exists()


def test_out_is_existing_file(tmp_path):
    task_path = tmp_path / "task.json"
    task_path.write_text(json.dumps(good_task()), encoding="utf-8")
    out_file = tmp_path / "out"
    out_file.write_text("keep me\n", encoding="utf-8")
    rc, out, err = run_cli(task_path, out_file)
    check_invalid(rc, out, err, ["--out"])
    assert out_file.is_file() and out_file.read_text(encoding="utf-8") == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "task.json"]


def test_good_task_runs(tmp_path):
    """Positive control: the harness can see a passing run."""
    task = good_task()
    task["settings"]["duration"] = 0.2
    task["seeds"] = [0]
    task_path = tmp_path / "task.json"
    task_path.write_text(json.dumps(task), encoding="utf-8")
    out_dir = tmp_path / "out"
    rc, out, err = run_cli(task_path, out_dir)
    assert rc == 0, f"exit code {rc}\nstdout:\n{out}\nstderr:\n{err}"
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert events[0]["event"] == "start" and events[-1]["event"] == "done"
    result = json.loads((out_dir / "result.json").read_text(encoding="utf-8"))
    assert isinstance(result["solutions"], list) and len(result["solutions"]) == 1


# -- the `contact` method: keyframes of point pairs and the planner's settings -----------------------------

CONTACT_TASK = ROOT / "scenes" / "tasks" / "armchair_stand_sit_stand.json"
KF0 = "keyframes[0]"
PAIR0 = f"{KF0}.pairs[0]"


def contact_task() -> dict:
    return json.loads(CONTACT_TASK.read_text(encoding="utf-8"))


def contact_mutated(fn) -> dict:
    """The good contact task after `fn(task)` has broken it."""
    task = contact_task()
    fn(task)
    return task


def _pair0(t):
    return t["keyframes"][0]["pairs"][0]


def _kf0(t):
    return t["keyframes"][0]


IMP0 = "perturbations.impulses[0]"
BALL0 = "perturbations.balls[0]"


def _push(**change):
    return dict({"time": 1.0, "body": "torso", "impulse": [-10.0, 0.0, 0.0]}, **change)


def _ball(**change):
    return dict({"time": 1.0, "aim": "torso", "direction": [-1.0, 0.0, 0.0], "speed": 8.0}, **change)


# (id, mutation of the good contact task, [exact error path, other substrings expected on stderr])
CONTACT_CASES = [
    ("pair_unknown_body1", lambda t: _pair0(t).update(body1="hand_rigth"), [f"{PAIR0}.body1", "hand_rigth"]),
    ("pair_unknown_body2", lambda t: _pair0(t).update(body2="no_such_body"), [f"{PAIR0}.body2", "no_such_body"]),
    ("pair_nan_pos1", lambda t: _pair0(t)["pos1"].__setitem__(0, math.nan), [f"{PAIR0}.pos1[0]", "finite"]),
    ("pair_inf_pos2", lambda t: _pair0(t)["pos2"].__setitem__(1, math.inf), [f"{PAIR0}.pos2[1]", "finite"]),
    ("pair_pos1_two_entries", lambda t: _pair0(t).update(pos1=[0.0, 0.1]), [f"{PAIR0}.pos1"]),
    ("zero_tolerance", lambda t: _kf0(t).update(tolerance=0.0), [f"{KF0}.tolerance"]),
    ("negative_tolerance", lambda t: _kf0(t).update(tolerance=-0.1), [f"{KF0}.tolerance"]),
    ("negative_sustain", lambda t: _kf0(t).update(sustain=-1.0), [f"{KF0}.sustain"]),
    ("zero_time_limit", lambda t: _kf0(t).update(time_limit=0.0), [f"{KF0}.time_limit"]),
    ("keyframe_without_pairs", lambda t: _kf0(t).update(pairs=[]), [f"{KF0}.pairs"]),
    ("unknown_weight_name", lambda t: _kf0(t)["weights"].update({"Torso Upp": 1.0}), [f"{KF0}.weights.Torso Upp"]),
    # The default partwise planner composes one candidate per partitioning (5) and needs the nominal
    # and at least one sample besides: 7 rollouts at least.
    ("too_few_rollouts_partwise", lambda t: t["settings"].update(rollouts=6), ["settings.rollouts", "at least 7"]),
    ("horizon_under_two_planning_steps", lambda t: t["settings"].update(horizon=0.02, planning_timestep=0.015),
     ["settings.horizon"]),
    ("unknown_settings_field", lambda t: t["settings"].update(rollout=50), ["settings.rollout"]),
    ("include_missing_task", lambda t: t.update(keyframes=[{"include": "no_such_task"}]),
     [f"{KF0}.include", "no_such_task"]),
    ("empty_keyframes", lambda t: t.update(keyframes=[]), ["keyframes"]),
    # Perturbations (hit reactions): a push or a ball outside the task, on no body, of no mass.
    ("impulse_after_the_task", lambda t: t.update(perturbations={"impulses": [_push(time=1000.0)]}),
     [f"{IMP0}.time", "within the task"]),
    ("impulse_negative_time", lambda t: t.update(perturbations={"impulses": [_push(time=-0.5)]}),
     [f"{IMP0}.time", ">= 0"]),
    ("impulse_unknown_body", lambda t: t.update(perturbations={"impulses": [_push(body="chest")]}),
     [f"{IMP0}.body", "chest"]),
    ("impulse_nan", lambda t: t.update(perturbations={"impulses": [_push(impulse=[0.0, math.nan, 0.0])]}),
     [f"{IMP0}.impulse[1]", "finite"]),
    ("impulse_inf_point", lambda t: t.update(perturbations={"impulses": [_push(point=[math.inf, 0.0, 0.0])]}),
     [f"{IMP0}.point[0]", "finite"]),
    ("ball_zero_mass", lambda t: t.update(perturbations={"balls": [_ball(mass=0.0)]}), [f"{BALL0}.mass", "> 0"]),
    ("ball_negative_mass", lambda t: t.update(perturbations={"balls": [_ball(mass=-2.0)]}), [f"{BALL0}.mass"]),
    ("ball_zero_radius", lambda t: t.update(perturbations={"balls": [_ball(radius=0.0)]}), [f"{BALL0}.radius"]),
    ("ball_unknown_aim", lambda t: t.update(perturbations={"balls": [_ball(aim="nose")]}), [f"{BALL0}.aim", "nose"]),
    ("ball_zero_direction", lambda t: t.update(perturbations={"balls": [_ball(direction=[0.0, 0.0, 0.0])]}),
     [f"{BALL0}.direction", "zero"]),
    ("ball_nan_direction", lambda t: t.update(perturbations={"balls": [_ball(direction=[math.nan, 0.0, 0.0])]}),
     [f"{BALL0}.direction[0]", "finite"]),
    ("ball_thrown_before_the_start", lambda t: t.update(perturbations={"balls": [_ball(time=0.1)]}),
     [f"{BALL0}.time", "at least 0.25"]),
    ("ball_after_the_task", lambda t: t.update(perturbations={"balls": [_ball(time=999.0)]}),
     [f"{BALL0}.time", "within the task"]),
    ("perturbation_unknown_kind", lambda t: t.update(perturbations={"explosions": []}),
     ["perturbations.explosions", "unknown field"]),
]


@pytest.mark.parametrize("mutate,expected", [c[1:] for c in CONTACT_CASES], ids=[c[0] for c in CONTACT_CASES])
def test_bad_contact_input(tmp_path, mutate, expected):
    task = contact_mutated(mutate)
    assert task["method"] == "contact"
    task_path = tmp_path / "task.json"
    # json.dumps (allow_nan=True) writes NaN/Infinity, which the solver must reject as non-finite.
    task_path.write_text(json.dumps(task), encoding="utf-8")
    out_dir = tmp_path / "out"
    rc, out, err = run_cli(task_path, out_dir)
    check_invalid(rc, out, err, expected)
    event = json.loads(out.strip())
    assert event["path"] == expected[0], (event["path"], expected[0])
    assert not out_dir.exists(), f"--out was created: {list(out_dir.iterdir())}"


def test_contact_reverse_include_validates(tmp_path):
    """Positive control for the contact cases: an included, reversed task passes `validate`."""
    task = contact_task()
    task["keyframes"] = [{"include": "armchair_stand_sit_stand", "reverse": True}]
    task_path = tmp_path / "task.json"
    task_path.write_text(json.dumps(task), encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "solver", "validate", str(task_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"exit code {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    assert p.stdout.startswith("ok: "), p.stdout
    assert "method contact" in p.stdout, p.stdout


BOX_TASK = ROOT / "scenes" / "tasks" / "box_lift_place.json"


def _box_pair0(t, **change):
    t["keyframes"][0]["pairs"][0].update(change)


# Objects the character handles (the box presets): pairs on fixed bodies, unknown objects, bad boxes.
BOX_CASES = [
    ("pair_between_two_fixed_bodies", lambda t: _box_pair0(t, body1="from_platform", body2="world"),
     [f"{PAIR0}.body1", "can never move"]),
    ("pair_fixed_body_first", lambda t: _box_pair0(t, body1="to_platform", body2="box"),
     [f"{PAIR0}.body1", "moving side first"]),
    ("pair_unknown_object", lambda t: _box_pair0(t, body2="crate"), [f"{PAIR0}.body2", "crate"]),
    ("pair_unknown_object_first", lambda t: _box_pair0(t, body1="crate"), [f"{PAIR0}.body1", "crate"]),
    ("pair_object_with_itself", lambda t: _box_pair0(t, body1="box", body2="box"), [f"{PAIR0}.body2", "itself"]),
    ("box_zero_mass", lambda t: t["scene"]["params"].update(box_mass=0.0), ["scene.params.box_mass", "positive"]),
    ("box_negative_width", lambda t: t["scene"]["params"].update(box_width=-0.3),
     ["scene.params.box_width", "positive"]),
    ("grasp_unknown_mode", lambda t: t["settings"].update(grasp="glue"), ["settings.grasp", "glue"]),
    ("box_below_the_floor", lambda t: t["scene"]["params"].update(from_height=-0.1),
     ["scene.params.from_height", "the floor"]),
    ("platforms_overlap", lambda t: t["scene"]["params"].update(from_offset=0.2), ["scene.params.offset", "overlap"]),
    ("box_on_the_floor_inside_the_platform", lambda t: t["scene"]["params"].update(from_height=0.0, offset=0.3),
     ["scene.params.offset", "inside the platform"]),
]


@pytest.mark.parametrize("mutate,expected", [c[1:] for c in BOX_CASES], ids=[c[0] for c in BOX_CASES])
def test_bad_box_input(tmp_path, mutate, expected):
    task = json.loads(BOX_TASK.read_text(encoding="utf-8"))
    mutate(task)
    task_path = tmp_path / "task.json"
    task_path.write_text(json.dumps(task), encoding="utf-8")
    out_dir = tmp_path / "out"
    rc, out, err = run_cli(task_path, out_dir)
    check_invalid(rc, out, err, expected)
    assert json.loads(out.strip())["path"] == expected[0]
    assert not out_dir.exists()
