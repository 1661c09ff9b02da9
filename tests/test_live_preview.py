"""The motion as it is found, through the installed extension: while a contact solve runs, its committed
frames reach Blender and are drawn as a live ghost (orange, the latest pose found once the playhead is
past it); what arrived before each seed's solution is that solution's motion, frame for
frame; a seed's live ghost goes when its solution arrives, and every live ghost when the solve ends."""
import json
from pathlib import Path

import mujoco
import numpy as np
import pytest
from blender_env import addon, installed_extension

from solver.formats.preview_frames import canonical


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
    """Cancel once the preview shows a third of a second: each seed's motion found so far is listed as
    "seed k · unfinished", not a success, its file holding exactly the frames shown; it previews on the rig
    and Keep bakes it like any solution."""
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
            shown["frames"] = live.frames[0].copy()
            if len(live.frames[0]) >= 10 and not getattr(job, "cancelled", False):
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
    with np.load(bpy.path.abspath(item.result_path)) as z:
        np.testing.assert_array_equal(z["frame_qpos"], shown["frames"].astype(float))
        assert item.duration == pytest.approx(z["frame_times"][-1]) and len(z["frame_times"]) >= 10
    props.active_solution = 0
    assert bpy.ops.physkey.keep_solution() == {"FINISHED"}
    assert any(a.name.endswith("_unfinished") for a in bpy.data.actions)


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
