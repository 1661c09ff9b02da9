"""The motion as it is found, through the installed extension: while a contact solve runs, its committed
frames reach Blender and are drawn as a live ghost (its own colour, the latest pose found once the
playhead is past it); what arrived before each seed's solution is that solution's motion, frame for
frame; a seed's live ghost goes when its solution arrives, and every live ghost when the solve ends."""
import json
from pathlib import Path

import mujoco
import numpy as np
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
