"""The motion as it is found, through the installed extension: while a contact solve runs, its committed
frames reach Blender and are drawn as a live ghost (orange, the latest pose found once the playhead is
past it); what arrived before each seed's solution is that solution's motion, frame for
frame; a seed's live ghost goes when its solution arrives, and every live ghost when the solve ends.
Contact keyframes edited or added while it runs reach it (steering)."""
import json
import time
from pathlib import Path

import mujoco
import numpy as np
import pytest
from blender_env import addon, installed_extension
from layout_recorder import outline_text

from solver.formats.preview_frames import apply, canonical


def test_the_committed_motion_is_drawn_while_the_solve_runs_and_is_the_solutions():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset="reach_hand_targets") == {"FINISHED"}
    scene = bpy.context.scene
    props = scene.physkey
    props.settings_json = json.dumps({"rollouts": 12, "max_iterations": 2, "segment_retries": 0, "backups": 0})
    props.num_seeds = 2
    solve_ops, ghosts = addon(module, "solve_ops"), addon(module, "ghosts")
    seen = []  # per batch of events handled: seed → (frames so far, the live ghost's lines at the start frame)
    original = solve_ops.handle_events

    def watching(scene_, job, events, warn=None):
        error = original(scene_, job, events, warn)
        live = getattr(job, "live", None)
        if live is not None and live.frames:
            coords, colors = ghosts.live_lines(scene_)
            assert len(coords) and np.allclose(colors, ghosts.LIVE_COLOR)
            seen.append({seed: frames.copy() for seed, frames in live.frames.items()})
        return error
    solve_ops.handle_events = watching
    try:
        scene.frame_set(scene.frame_start + 10_000)  # far past anything found: the front of each seed is drawn
        assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    finally:
        solve_ops.handle_events = original
    assert len(props.solutions) == 2
    assert len(ghosts.live_lines(scene)[0]) == 0  # the solve is over: no live ghost left
    for item in props.solutions:
        shown = [batch[item.seed] for batch in seen if item.seed in batch]
        assert len({len(f) for f in shown}) >= 3, "the preview grew while the seed ran"
        path = Path(bpy.path.abspath(item.result_path))
        with np.load(path) as z:
            final = canonical(mujoco.MjModel.from_xml_path(str(path.parents[1] / "model.xml")), z["frame_qpos"])
        last = shown[-1]
        assert 0 < len(last) <= len(final)
        np.testing.assert_array_equal(last, final[:len(last)])


def test_a_cancelled_solve_keeps_what_each_seed_had_found_as_an_unfinished_solution():
    """Cancel once the preview shows a third of a second and the first keyframe reached: each seed's motion
    found so far is listed as "seed k · unfinished", not a success, its file holding exactly the frames shown
    and the keyframe reached; it previews on the rig and Keep bakes it like any solution, the keyframe it
    reached marked on the timeline where it was reached."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand") == {"FINISHED"}
    scene = bpy.context.scene
    props = scene.physkey
    props.settings_json = json.dumps({"rollouts": 12, "max_iterations": 2})
    props.num_seeds = 1
    solve_ops = addon(module, "solve_ops")
    shown = {}
    original = solve_ops.handle_events

    def cancelling(scene_, job, events, warn=None):
        error = original(scene_, job, events, warn)
        live = getattr(job, "live", None)
        if live is not None and 0 in live.frames:
            shown["frames"], shown["reached"] = live.frames[0].copy(), list(live.reached.get(0, []))
            if len(live.frames[0]) >= 10 and any(t is not None for t in shown["reached"]) \
                    and not getattr(job, "cancelled", False):
                job.cancel()  # what Esc and the Cancel button do
                job.cancelled = True
        return error
    solve_ops.handle_events = cancelling
    try:
        bpy.ops.physkey.solve(wait=True)
    finally:
        solve_ops.handle_events = original
    (item,) = props.solutions
    assert item.name.endswith("seed 0 · unfinished") and not item.success and item.variant == "unfinished"
    assert "unfinished: cancelled at" in item.words and props.status.startswith("cancelled: 1 unfinished")
    row = next(line for line in outline_text(bpy, module.__name__).splitlines() if "· unfinished" in line)
    assert "cost" not in row and "nan" not in row, row  # no cost to show: the row says what it is
    with np.load(bpy.path.abspath(item.result_path)) as z:
        np.testing.assert_array_equal(z["frame_qpos"], shown["frames"].astype(float))
        assert item.duration == pytest.approx(z["frame_times"][-1]) and len(z["frame_times"]) >= 10
        reached = [None if np.isnan(t) else float(t) for t in z["keyframes_reached"]]
    assert reached == shown["reached"] and len(reached) == 6 and reached[0] is not None
    assert (item.keys_reached, item.keys_total) == (sum(t is not None for t in reached), 6)
    props.active_solution = 0
    assert bpy.ops.physkey.keep_solution() == {"FINISHED"}
    assert any(a.name.endswith("_unfinished") for a in bpy.data.actions)
    first = props.contact_keyframes[0].name  # the marker named after the keyframe it marks
    (marker,) = [m for m in scene.timeline_markers if m.name.startswith(f"{first} · ")]
    assert marker.frame == round(scene.frame_start + reached[0] * scene.render.fps / scene.render.fps_base)


def test_a_search_started_over_is_said_in_blenders_reports():
    """An assisted search that misses its 5% (a search of 40 samples always does) starts over: Blender's
    reports say so for the seed, once, while it runs."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset="assist_sit_armchair") == {"FINISHED"}
    props = bpy.context.scene.physkey
    props.settings_json = json.dumps({"population": 8, "samples": 40, "search_restarts": 1, "replans": 0,
                                      "physical": False})
    props.num_seeds = 1
    solve_ops = addon(module, "solve_ops")
    said, original = [], solve_ops.handle_events

    def listening(scene_, job, events, warn=None):
        return original(scene_, job, events, lambda line: (said.append(line), warn(line)))
    solve_ops.handle_events = listening
    try:
        assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    finally:
        solve_ops.handle_events = original
    assert said.count("seed 0: search missed 5%, started over (1×)") == 1, said


def _running(bpy, module, tmp_path):
    """A contact solve of the scene, started as Solve starts it (one seed), and the session that holds it."""
    session, taskio, job_mod = addon(module, "session"), addon(module, "taskio"), addon(module, "job")
    scene = bpy.context.scene
    task = taskio.task_from_scene(bpy.context, taskio.extract_scene(bpy.context))
    job = job_mod.SolveJob(task, str(tmp_path), 1, addon(module, "solve_context").make("contact", scene.frame_start))
    job.steer(scene.physkey.contact_keyframes)  # as Solve does
    session.add_job(scene, job)
    return session, job


def _until(job, kinds: set, seen: list, limit_s: float = 600.0) -> None:
    """Read the job's events into `seen` until every kind in `kinds` has come (a hang guard, not a timing)."""
    deadline = time.time() + limit_s
    while time.time() < deadline and not kinds <= {e.get("event") for e in seen}:
        seen += job.poll()
        time.sleep(0.05)
    assert kinds <= {e.get("event") for e in seen}, [e.get("event") for e in seen][-5:]


@pytest.mark.every_blender
def test_keyframes_sent_to_a_running_contact_solve_are_edits_of_its_own_or_new_ones(tmp_path):
    """One the solve has is sent as an edit of its own index — the preset's second 'sit_leanforward1' too, and
    'stand' after a Duplicate has moved it down the list; the copy Duplicate made is new, appended; sent again
    it is an edit of the solve's keyframe it became. One the solver refuses never becomes the solve's; one
    whose id an undo took back is known by its place and name."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand") == {"FINISHED"}
    props = bpy.context.scene.physkey
    session, job = _running(bpy, module, tmp_path)
    solve_ops = addon(module, "solve_ops")
    seen = []
    try:
        for index in (5, 2):  # 'stand', and the second 'sit_leanforward1'
            props.active_contact_keyframe = index
            assert bpy.ops.physkey.send_keyframe() == {"FINISHED"}
        typo = props.contact_keyframes.add()
        typo.name = "typo"
        pair = typo.pairs.add()
        pair.body1, pair.body2 = "hand_rigth", "world"
        props.active_contact_keyframe = 6
        assert bpy.ops.physkey.send_keyframe() == {"FINISHED"}  # refused by the solver: never the solve's
        deadline = time.time() + 600  # a hang guard, not a timing: Blender's timer hands the answer over
        while not any(e["event"] == "error" for e in seen) and time.time() < deadline:
            events = job.poll()
            assert solve_ops.handle_events(bpy.context.scene, job, events) is None
            seen += events
            time.sleep(0.05)
        assert not job.pending and len(job.keyframes_sent) == 6
        props.contact_keyframes.remove(6)
        props.active_contact_keyframe = 1
        assert bpy.ops.physkey.contact_keyframe_edit(action="DUPLICATE") == {"FINISHED"}  # 'armchair0' again, at 2
        assert props.active_contact_keyframe == 2 and props.contact_keyframes[2].name == "armchair0"
        assert bpy.ops.physkey.send_keyframe() == {"FINISHED"}  # the copy: appended, the solve's 7th
        props.active_contact_keyframe = 6
        assert props.contact_keyframes[6].name == "stand"
        props.contact_keyframes[6].tolerance = 0.4
        assert bpy.ops.physkey.send_keyframe() == {"FINISHED"}  # 'stand', moved down: still an edit of 5
        props.active_contact_keyframe = 2
        props.contact_keyframes[2].tolerance = 0.35
        assert bpy.ops.physkey.send_keyframe() == {"FINISHED"}  # the copy again: an edit of the solve's 7th
        props.contact_keyframes[0].uid = 0  # as Ctrl+Z to before the solve leaves it
        props.active_contact_keyframe = 0
        assert bpy.ops.physkey.send_keyframe() == {"FINISHED"}  # still at its place, by its name: an edit of 0
        changes, deadline = [], time.time() + 600  # a hang guard, not a timing
        while len(changes) < 6 and time.time() < deadline:
            events = job.poll()
            assert solve_ops.handle_events(bpy.context.scene, job, events) is None
            seen += events
            changes = [e.get("keyframes", e.get("count")) for e in seen
                       if e["event"] in ("keyframes_appended", "keyframes_edited")]
            time.sleep(0.05)
    finally:
        session.pop_job(bpy.context.scene)
        job.close()
    assert changes == [[5], [2], 1, [5], [6], [0]]
    assert [e["path"] for e in seen if e["event"] == "error"] == ["append_keyframes[0].pairs[0].body1"]
    assert job.keyframes_sent[-1][0] == props.contact_keyframes[2].uid and len(job.keyframes_sent) == 7
    assert not job.pending
    assert len({kf.uid for kf in props.contact_keyframes}) == len(props.contact_keyframes)


def test_a_keyframe_edited_while_the_solve_runs_is_solved_as_edited(tmp_path):
    """The sit (held a second) edited, as the solve starts, into the lean before it, met at once: the solution
    says the edit was taken, holds no sit, and is what the live preview showed."""
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.physkey.load_preset(preset="armchair_stand_sit_stand") == {"FINISHED"}
    scene = bpy.context.scene
    props = scene.physkey
    while len(props.contact_keyframes) > 2:
        props.contact_keyframes.remove(2)
    for kf in props.contact_keyframes:
        kf.time_limit = 0.3
    props.settings_json = json.dumps({"rollouts": 12, "max_iterations": 2, "segment_retries": 0, "backups": 0})
    sit_sustain = props.contact_keyframes[1].sustain
    session, job = _running(bpy, module, tmp_path)
    solve_ops = addon(module, "solve_ops")
    seen = []
    try:
        lean, sit = props.contact_keyframes[0], props.contact_keyframes[1]
        sit.pairs.clear()
        for p in lean.pairs:
            q = sit.pairs.add()
            q.body1, q.pos1, q.body2, q.pos2 = p.body1, p.pos1, p.body2, p.pos2
        sit.tolerance, sit.sustain = 0.5, 0.0
        props.active_contact_keyframe = 1
        assert bpy.ops.physkey.send_keyframe() == {"FINISHED"}
        _until(job, {"solution"}, seen)
        assert solve_ops.handle_events(scene, job, seen) is None
    finally:
        session.pop_job(scene)
        job.close()
    entry = next(e for e in seen if e["event"] == "solution")["solution"]
    assert entry["particles"]["edits"] == [{"keyframe": 1, "name": "armchair0", "taken": True}]
    reached = entry["keyframes_reached"]
    assert entry["success"] and reached[1] - reached[0] < sit_sustain  # no second held in the chair
    path = Path(bpy.path.abspath(props.solutions[0].result_path))
    with np.load(path) as z:
        final = canonical(mujoco.MjModel.from_xml_path(str(path.parents[1] / "model.xml")), z["frame_qpos"])
    shown = None
    for e in (e for e in seen if e["event"] == "preview"):
        shown = apply(shown, e)
    assert 0 < len(shown) <= len(final)
    np.testing.assert_array_equal(shown, final[:len(shown)])
