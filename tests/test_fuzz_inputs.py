"""Property-based fuzzing of the solver's input surface (issue 7): task files and inline SceneDesc JSON.

Starting from the real task files in `scenes/tasks` (simulate, contact and assist) and from tasks that
carry a whole SceneDesc inline (what the Blender add-on sends), hypothesis applies random structural
mutations — deleted and unknown keys, wrong types, huge and tiny numbers, NaN/inf, unicode and control
characters in names, empty, huge and deeply nested lists — and also mangles whole documents (bytes,
BOM, 10 MB, nesting 10,000 deep). The property is the CLI's contract: validation (what
`python -m solver validate` runs) either succeeds, or raises `InvalidInput` whose message is one line
starting with a field path; any other exception is a solver bug. A few cases go through the real
command line too. Every run generates the same cases (derandomized, no example database).
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from solver.core import schema  # noqa: E402
from solver.core.errors import MAX_PATH, InvalidInput, one_line  # noqa: E402
from solver.formats.task import SceneRef, Task, build_scene, load_task, task_from_dict  # noqa: E402
from solver.methods.contact import CONTACT  # noqa: E402
from solver.run import cli  # noqa: E402
from solver.run.cli import prepare_task  # noqa: E402
from solver.run.feed import validate_line  # noqa: E402

# Fuzzed models are often odd (near-singular inertia): MuJoCo's warnings about them are expected.
pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning:solver.builders.mjcf"),
              pytest.mark.filterwarnings("ignore::UserWarning:solver.physics.model")]

FUZZ = settings(deadline=None, derandomize=True, database=None, print_blob=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example])

# Top-level task fields, plus `task` for the document as a whole: every field path starts at one.
ROOTS = {f.name for f in dataclasses.fields(Task)} | {"task"}
MAX_MESSAGE = 1200  # characters: a one-line message, even for a 100,000-character name


from fuzz_mutations import BASES, INLINE, NASTY, _scene_desc, _task_file, apply, json_values, mutations  # noqa: E402

# -- the property -------------------------------------------------------------------------------------------

def assert_field_error(e: InvalidInput, file_path: str | None = None, doc=None) -> None:
    """The error is what `exit 2` prints: one line, `<field path>: <message>`, the path rooted at a task
    field or at a key of the document (an unknown field), or the task file itself for a file that is
    not a JSON task."""
    msg = str(e)
    assert e.path, f"no field path: {msg!r}"
    assert msg == f"{e.path}: {e.message}", msg
    assert len(msg.splitlines()) == 1 and "\n" not in msg and "\r" not in msg, f"not one line: {msg[:300]!r}"
    assert len(msg) <= MAX_MESSAGE, f"{len(msg)} characters: {msg[:300]!r}"
    msg.encode("utf-8")  # printable on any UTF-8 terminal: no lone surrogates
    if file_path is not None and e.path == file_path:
        return
    roots = ROOTS | {one_line(k or '""', MAX_PATH) for k in (doc if isinstance(doc, dict) else ())}
    assert any(e.path == r or e.path.startswith((r + ".", r + "[", r + "<")) for r in roots), \
        f"path {e.path!r} does not start at a task field: {msg[:300]!r}"


def _accepted(task, prepared) -> None:
    """What `run` does with an accepted task before it solves: print, write task.json and model.xml."""
    f"ok: task '{task.name}'".encode()
    schema.format_json(schema.to_dict(task)).encode("utf-8")
    prepared.built.to_xml().encode("utf-8")
    json.dumps({"event": "start", "task": task.name, "seeds": task.seeds}, allow_nan=False)
    # Workers get the task as strict JSON and parse it again: the round trip must be accepted too.
    task_from_dict(json.loads(json.dumps(schema.to_dict(task), allow_nan=False)))


def check_document(doc) -> str:
    """Validate an in-memory task document; 'valid' or 'invalid' (a proper field error), else fail."""
    try:
        task, prepared = prepare_task(task_from_dict(doc))
    except InvalidInput as e:
        assert_field_error(e, doc=doc)
        return "invalid"
    _accepted(task, prepared)
    return "valid"


def _top_keys(path: Path) -> dict:
    """The file's top-level object as the harness reads it (to recognise unknown-field paths)."""
    try:
        doc = json.loads(path.read_bytes().decode("utf-8-sig", errors="replace"))
    except (ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def check_file(path: Path) -> str:
    """Validate a task file the way `python -m solver validate FILE` does."""
    try:
        task, prepared = prepare_task(load_task(path))
    except InvalidInput as e:
        assert_field_error(e, str(path), _top_keys(path))
        return "invalid"
    _accepted(task, prepared)
    return "valid"


def test_bases_are_valid():
    """The starting documents themselves pass, so mutations start from working tasks."""
    for name, doc in BASES.items():
        assert check_document(copy.deepcopy(doc)) == "valid", name


# Inputs the fuzzer found that crashed the solver (a traceback during validation, or, accepted, a
# crash or endless loop in the run; see each), or slipped past a rule: each is now refused with a field path.
DESC = ("scene", "desc")
REGRESSIONS = [
    ("reach_hand_targets", [("replace", (), ("nasty", "empty_list"))]),  # not an object: no field path
    ("drop_onto_armchair", [("add_key", (), ("", ("int", 1)))]),  # an empty unknown key: path ""
    ("drop_onto_armchair", [("add_key", (), ("bad\x0bkey", ("int", 1)))]),  # a line break in the path
    ("bench_shuffle", [("edit", ("keyframes", 0, "pairs", 0, "body1"), ("zero", "repeat"))]),  # 10 kB line
    ("drop_onto_armchair", [("replace", ("output_fps",), ("nasty", "int_5000_digits"))]),  # ValueError
    ("drop_onto_armchair", [("replace", ("output_fps",), ("nasty", "int_1e400"))]),  # OverflowError
    ("drop_onto_armchair", [("replace", ("name",), ("nasty", "lone_surrogate"))]),  # UnicodeEncodeError
    ("drop_onto_armchair", [("replace", ("seeds",), ("json", [-1]))]),  # accepted, then failed in run
    ("drop_onto_armchair", [("add_key", ("scene",), ("params", ("json", {"tilt": 1e6})))]),  # inline: ±89° max
    ("reach_hand_targets", [("replace", ("settings",), ("json", {"horizon": 1e308}))]),  # OverflowError in run
    ("reach_hand_targets", [("replace", ("settings",), ("json", {"slowdown": 1e-308}))]),  # endless loop
    ("assist_box_jump_low", [("replace", ("keyframes", 1, "time_range"), ("json", [0.5, 1e308]))]),  # run: Overflow
    ("assist_box_jump_low", [("replace", ("settings",), ("json", {"pieces": 10 ** 9}))]),  # MemoryError
    ("inline_simulate", [("replace", DESC + ("timestep",), ("nasty", "tiny"))]),  # 1e-308 s: ValueError in run
]
DESC_REGRESSIONS = [
    ("inline_simulate", [("edit", DESC + ("character", "bodies", 16, "name"), ("zero", "append_nul"))]),
    ("inline_simulate", [("replace", DESC + ("character", "bodies", 16, "name"), ("nasty", "lone_surrogate"))]),
    ("inline_simulate", [("replace", DESC + ("character", "bodies", 16, "name"), ("nasty", "world"))]),
    ("inline_simulate", [("replace", DESC + ("environment", "bodies", 0, "geoms", 0, "name"), ("nasty", "floor"))]),
    ("inline_simulate", [("replace", DESC + ("character", "exclude_contacts", 0),
                          ("json", ["torso", "head", "pelvis"]))]),  # unpacking a 3-name pair
    ("inline_simulate", [("replace", DESC + ("initial_pose", "ball_joints"),
                          ("json", {"elbow_left": [1.0, 0.0, 0.0, 0.0]}))]),  # a hinge's qpos as a quat
    ("inline_simulate", [("replace", DESC + ("initial_pose", "ball_joints", "tail_ball"), ("nasty", "zero_quat"))]),
    ("inline_assist", [("replace", DESC, ("json", _scene_desc("box", True)))]),  # ball joint in assist
    ("inline_simulate", [("replace", DESC + ("character", "bodies", 0, "geoms", 0, "rgba", 0),
                          ("nasty", "max_float"))]),  # overflowed MuJoCo's float colour
]


@pytest.mark.parametrize("case", REGRESSIONS + DESC_REGRESSIONS,
                         ids=[f"{i}-{c[0]}" for i, c in enumerate(REGRESSIONS + DESC_REGRESSIONS)])
def test_regressions_are_refused_with_a_field_path(case):
    assert check_document(apply(*case)) == "invalid"


def test_huge_quaternion_is_normalized():
    """A quaternion entry near 1e308 overflowed the norm: the geom got a zero quaternion and the
    model read back from model.xml failed to load (a ValueError past validation)."""
    doc = apply("inline_simulate", [("replace", DESC + ("character", "bodies", 1, "geoms", 0, "quat"),
                                     ("json", [1.0, 0.0, 1e308, 0.0]))])
    assert check_document(doc) == "valid"


@settings(FUZZ, max_examples=1000)
@given(mutations())
def test_mutated_task_validates_or_names_the_field(case):
    base, ops = case
    doc = apply(base, ops)
    event(check_document(doc))


@settings(FUZZ, max_examples=700)
@given(mutations(bases=tuple(INLINE), desc_only=True))
def test_mutated_scene_desc_validates_or_names_the_field(case):
    base, ops = case
    event(check_document(apply(base, ops)))


@pytest.fixture(scope="module")
def fuzz_dir():
    with tempfile.TemporaryDirectory(prefix="physkey-fuzz-") as d:
        yield Path(d)


@pytest.fixture(scope="module", autouse=True)
def _cwd_in_temp_dir():
    """MuJoCo appends its warnings about the fuzzed models to MUJOCO_LOG.TXT in the working folder;
    keep that out of the checkout."""
    before = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="physkey-fuzz-cwd-") as d:
        os.chdir(d)
        try:
            yield
        finally:
            os.chdir(before)


def _raw_json(value) -> str | None:
    """JSON text for the planted values json.dumps cannot write (nesting 10,000 deep, an integer of
    5000 digits), else None."""
    if value is NASTY["deep_list"]:
        return "[" * 10_000 + "1.0" + "]" * 10_000
    if value is NASTY["deep_object"]:
        return '{"a": ' * 10_000 + "1.0" + "}" * 10_000
    if value is NASTY["deep_list_900"]:
        return "[" * 900 + "1.0" + "]" * 900
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 14_000:
        return "1" + "0" * 5000
    return None


def to_text(doc, ensure_ascii: bool, indent) -> str:
    """The document as a task file would hold it (NaN and Infinity written as JSON literals)."""
    spliced = {}

    def replace(value):
        raw = _raw_json(value)
        if raw is not None:
            token = f"@@raw{len(spliced)}@@"
            spliced[token] = raw
            return token
        if isinstance(value, dict):
            return {k: replace(v) for k, v in value.items()}
        if isinstance(value, list):
            return [replace(v) for v in value]
        return value

    text = json.dumps(replace(doc), ensure_ascii=ensure_ascii, indent=indent)
    for token, raw in spliced.items():
        text = text.replace(json.dumps(token), raw)
    return text


@settings(FUZZ, max_examples=300)
@given(mutations(), st.booleans(), st.sampled_from([None, 1]),
       st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-8-sig", "utf-16"]))
def test_mutated_task_file_validates_or_names_the_field(fuzz_dir, case, ensure_ascii, indent, encoding):
    """The same mutations written to a file (NaN/Infinity literals, non-ASCII, BOM, UTF-16) and read
    back by the CLI's loader."""
    base, ops = case
    text = to_text(apply(base, ops), ensure_ascii, indent)
    path = fuzz_dir / "task.json"
    path.write_bytes(text.encode(encoding, errors="surrogatepass"))
    event(check_file(path))


_GOOD_TEXT = (ROOT / "scenes" / "tasks" / "drop_onto_armchair.json").read_bytes()


@settings(FUZZ, max_examples=300)
@given(st.lists(st.tuples(st.integers(0, len(_GOOD_TEXT)), st.integers(0, 8), st.binary(max_size=6)),
                min_size=1, max_size=4))
def test_mangled_task_bytes_validate_or_name_the_field(fuzz_dir, edits):
    """Byte-level damage to a real task file: cut, spliced and foreign bytes anywhere."""
    data = bytearray(_GOOD_TEXT)
    for pos, cut, insert in edits:
        pos = min(pos, len(data))
        data[pos:pos + cut] = insert
    path = fuzz_dir / "bytes.json"
    path.write_bytes(bytes(data))
    event(check_file(path))


@settings(FUZZ, max_examples=150)
@given(json_values)
def test_any_json_document_validates_or_names_the_field(doc):
    """Arbitrary JSON as the whole document: objects, arrays, scalars."""
    event(check_document(doc))


_runs = itertools.count()


@settings(FUZZ, max_examples=120)
@given(mutations(bases=("inline_simulate", "drop_onto_armchair")))
def test_accepted_simulate_task_runs(fuzz_dir, case):
    """What validation accepts also runs (`run --workers 0`, 0.05 s of motion, one seed): exit 0
    with one solution — a scene that blows up numerically is an unstable solution, not a crash."""
    base, ops = case
    doc = apply(base, ops)
    outcome = check_document(doc)
    event(outcome)
    if outcome != "valid":
        return
    doc["settings"] = {**doc.get("settings", {}), "duration": 0.05, "chunk": 0.05}
    doc["seeds"] = doc.get("seeds", [0])[:1]
    path = fuzz_dir / "run.json"
    path.write_text(to_text(doc, True, None), encoding="utf-8")
    out_dir = fuzz_dir / f"run_{next(_runs)}"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        rc = cli.main(["run", str(path), "--out", str(out_dir), "--workers", "0", "--jsonl"])
    events = [json.loads(line) for line in stdout.getvalue().splitlines() if line.strip()]
    assert rc == 0, f"exit {rc}\n{stdout.getvalue()[-2000:]}\n{stderr.getvalue()[-2000:]}"
    assert events[-1]["event"] == "done" and events[-1]["solutions"] == 1, events[-1]
    shutil.rmtree(out_dir)


_FEED_SCENE = build_scene(SceneRef(environment="armchair"))
_FEED_BASE = _task_file("armchair_stand_sit_stand")["keyframes"]


@settings(FUZZ, max_examples=150)
@example(("armchair_stand_sit_stand", [("replace", ("keyframes", 0, "tolerance"), ("nasty", "deep_list"))]),
         "object", "")  # RecursionError killed the stdin reader
@example(("armchair_stand_sit_stand", [("replace", ("keyframes", 0, "tolerance"), ("nasty", "int_5000_digits"))]),
         "object", "")
@given(mutations(bases=("armchair_stand_sit_stand",)), st.sampled_from(["object", "text", "raw"]),
       st.text(max_size=20))
def test_appended_keyframes_line_validates_or_names_the_field(case, form, raw):
    """A `run --jsonl` stdin line `{"append_keyframes": [...]}` (solver.run.feed): the line is accepted
    or refused with a one-line field error; a bad line must not kill the reader thread."""
    base, ops = case
    doc = apply(base, ops)
    items = doc.get("keyframes", _FEED_BASE) if isinstance(doc, dict) else doc
    line = raw if form == "raw" else to_text({"append_keyframes": items} if form == "object" else items, True, None)
    try:
        validate_line(line, lambda items, path: CONTACT.check_appended(items, _FEED_SCENE, path))
        event("valid")
    except InvalidInput as e:
        msg = str(e)
        assert e.path.startswith(("stdin", "append_keyframes")), msg
        assert len(msg.splitlines()) == 1 and len(msg) <= MAX_MESSAGE, msg[:300]
        event("invalid")


# -- whole documents ------------------------------------------------------------------------------------------

def _good() -> dict:
    return _task_file("drop_onto_armchair")


WHOLE_DOCUMENTS = {
    "not_json": b"this is not JSON",
    "empty_file": b"",
    "only_whitespace": b"   \n\t ",
    "nan_literal": json.dumps({**_good(), "output_fps": math.nan}).encode(),
    "infinity_literal": json.dumps({**_good(), "settings": {"duration": math.inf}}).encode(),
    "top_level_array": json.dumps([_good()]).encode(),
    "top_level_string": b'"task"',
    "top_level_null": b"null",
    "bom": b"\xef\xbb\xbf" + json.dumps(_good()).encode(),
    "utf16": json.dumps(_good()).encode("utf-16"),
    "latin1_name": json.dumps({**_good(), "name": "caf\u00e9"}, ensure_ascii=False).encode("latin-1"),
    "nul_bytes": b"\x00" * 64,
    "trailing_garbage": json.dumps(_good()).encode() + b" }",
    "duplicate_keys": b'{"schema_version": 1, "schema_version": 2, "name": "x", "method": "simulate"}',
    "deep_list_10000": b"[" * 10_000 + b"]" * 10_000,
    "deep_object_10000": b'{"a":' * 10_000 + b"1" + b"}" * 10_000,
    "deep_in_settings": json.dumps({**_good(), "settings": "@@"}).encode().replace(
        b'"@@"', b'{"duration":' + b"[" * 10_000 + b"]" * 10_000 + b"}"),
    "int_5000_digits": json.dumps({**_good(), "output_fps": "@@"}).encode().replace(b'"@@"', b"9" * 5000),
    "float_1e400": json.dumps({**_good(), "output_fps": "@@"}).encode().replace(b'"@@"', b"1e400"),
    "escaped_lone_surrogate_name": json.dumps({**_good(), "name": "\ud800"}).encode(),
    "escaped_nul_name": json.dumps({**_good(), "name": "a\x00b"}).encode(),
    "newline_in_unknown_key": json.dumps({**_good(), "bad\nkey": 1}).encode(),
    "ten_megabyte_unknown_field": json.dumps({**_good(), "padding": "x" * 10_000_000}).encode(),
    "ten_megabyte_seed_list": json.dumps({**_good(), "seeds": [-1] + list(range(1_500_000))}).encode(),
    "valid_10000_seeds": json.dumps({**_good(), "seeds": list(range(10_000))}).encode(),
    "too_many_seeds": json.dumps({**_good(), "seeds": list(range(10_001))}).encode(),
}


WHOLE_VALID = {"bom", "valid_10000_seeds"}  # a UTF-8 byte order mark (Windows editors) is skipped


@pytest.mark.parametrize("name", sorted(WHOLE_DOCUMENTS))
def test_whole_document(fuzz_dir, name):
    path = fuzz_dir / f"{name}.json"
    path.write_bytes(WHOLE_DOCUMENTS[name])
    assert check_file(path) == ("valid" if name in WHOLE_VALID else "invalid")


def test_folder_and_missing_file(fuzz_dir):
    for path in (fuzz_dir, fuzz_dir / "missing.json"):
        with pytest.raises(InvalidInput) as info:
            load_task(path)
        assert_field_error(info.value, str(path))


# -- through the real command line -----------------------------------------------------------------------------

def run_cli(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "solver", *map(str, args)], cwd=ROOT, env=env,
                       capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def assert_cli_field_error(rc, out, err, path_prefix: str):
    assert rc == 2, f"exit {rc}\nstdout:\n{out[-2000:]}\nstderr:\n{err[-2000:]}"
    assert "Traceback" not in err, err[-2000:]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {path_prefix}"), err[-2000:]
    assert len(lines[0]) <= MAX_MESSAGE + len("error: ")


E2E_INVALID = {
    "ten_megabyte_file": ("ten_megabyte_unknown_field", "padding: unknown field"),
    "nesting_10000_deep": ("deep_list_10000", "{file}: malformed JSON: nested too deeply"),
    "nan_literal": ("nan_literal", "output_fps: must be finite"),
    "top_level_array": ("top_level_array", "task: must be"),
    "lone_surrogate_name": ("escaped_lone_surrogate_name", "name: "),
    "newline_in_key": ("newline_in_unknown_key", "bad\\nkey: unknown field"),
}


@pytest.mark.parametrize("name", sorted(E2E_INVALID))
def test_cli_validate_invalid_document(fuzz_dir, name):
    document, expected = E2E_INVALID[name]
    path = fuzz_dir / f"cli_{name}.json"
    path.write_bytes(WHOLE_DOCUMENTS[document])
    rc, out, err = run_cli("validate", path)
    assert_cli_field_error(rc, out, err, expected.replace("{file}", str(path)))


def test_cli_run_invalid_writes_nothing(fuzz_dir):
    """exit 2 leaves --out untouched, whether it does not exist yet or exists and is empty."""
    path = fuzz_dir / "cli_run_nan.json"
    path.write_bytes(WHOLE_DOCUMENTS["infinity_literal"])
    for out_dir in (fuzz_dir / "never_created", fuzz_dir / "empty_out"):
        if out_dir.name == "empty_out":
            out_dir.mkdir()
        rc, out, err = run_cli("run", path, "--out", out_dir, "--workers", "0", "--jsonl")
        assert_cli_field_error(rc, out, err, "settings.duration: must be finite")
        assert json.loads(out.strip())["kind"] == "invalid_input"
        assert (not out_dir.exists()) if out_dir.name == "never_created" else not any(out_dir.iterdir())


def _unicode_task() -> dict:
    """A valid inline-scene task whose names are emoji, right-to-left and accented text, solved briefly."""
    task = copy.deepcopy(BASES["inline_simulate"])
    task["name"] = "🪑 drop ﺏﺍﺭ"
    task["about"] = "multi-line\nnote\twith tabs: 💥"
    task["settings"] = {"duration": 0.05, "mode": "hold", "perturb": 0.0, "chunk": 0.05}
    desc = task["scene"]["desc"]
    desc["name"] = "scène"
    desc["character"]["bodies"][-1]["name"] = "queue 🦎"
    desc["character"]["bodies"][-1]["joints"][0]["name"] = "ﺏﺍﺭ"
    desc["initial_pose"]["ball_joints"] = {"ﺏﺍﺭ": [1.0, 0.0, 0.0, 0.0]}
    desc["environment"]["bodies"][-1]["name"] = "caisse ✓"
    return task


def test_cli_run_valid_unicode_task(fuzz_dir):
    """A valid document with unicode names, validated and then actually run (0.05 s of motion)."""
    path = fuzz_dir / "cli_unicode.json"
    path.write_text(json.dumps(_unicode_task(), ensure_ascii=False), encoding="utf-8")
    rc, out, err = run_cli("validate", path)
    assert rc == 0 and out.startswith("ok: task '🪑 drop ﺏﺍﺭ'"), (rc, out, err)
    out_dir = fuzz_dir / "unicode_out"
    rc, out, err = run_cli("run", path, "--out", out_dir, "--workers", "0", "--jsonl")
    assert rc == 0, f"exit {rc}\n{out[-2000:]}\n{err[-2000:]}"
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert events[-1]["event"] == "done" and events[-1]["solutions"] == 1
    assert "queue 🦎" in (out_dir / "model.xml").read_text(encoding="utf-8")
    assert json.loads((out_dir / "task.json").read_text(encoding="utf-8"))["name"] == "🪑 drop ﺏﺍﺭ"


@pytest.mark.parametrize("edits, path", [
    ([], "edit_keyframes"),
    ([{"index": 0}], "edit_keyframes[0]"),
    ([{"index": True, "keyframe": {}}], "edit_keyframes[0].index"),
    ([{"index": 6, "keyframe": {}}], "edit_keyframes[0].index"),
    ([{"index": 1, "keyframe": dict(_FEED_BASE[0], pairs=[dict(_FEED_BASE[0]["pairs"][0], body1="hand_rigth")])}],
     "edit_keyframes[0].keyframe.pairs[0].body1"),
    ([{"index": 1, "keyframe": {"include": "armchair_stand_sit_stand"}}], "edit_keyframes[0].keyframe")])
def test_an_edited_keyframes_line_names_the_field_or_is_taken(edits, path):
    """`{"edit_keyframes": [{"index": k, "keyframe": {…}}]}` on stdin: k must be one of the solve's keyframes
    and the keyframe one keyframe the scene can take; a good line is written as an edit item."""
    check = lambda items, p: CONTACT.check_appended(items, _FEED_SCENE, p)  # noqa: E731
    with pytest.raises(InvalidInput) as e:
        validate_line(json.dumps({"edit_keyframes": edits}), check, known=len(_FEED_BASE))
    assert e.value.path == path and len(str(e.value).splitlines()) == 1
    good = {"index": 5, "keyframe": _FEED_BASE[0]}
    assert validate_line(json.dumps({"edit_keyframes": [good]}), check, known=6) == ([{"edit": 5, "keyframe":
                                                                                    _FEED_BASE[0]}], None)
