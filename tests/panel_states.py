"""The scene states the panel tests draw PhysKey's sidebar in (`STATES`: name → context manager that
sets the scene up and tears it down): empty, a character, a bone selected, presets, solutions, an
unstable solution, a solve running, a file saved during a solve, the animator's own rig and the
physics humanoid made from it, an MJCF character imported with its roles. Used by tests/test_panels.py and
tools/panel_outline.py."""
from __future__ import annotations

import contextlib
import types

# What the status line says while a solve runs (addon/progress.py's format).
RUNNING_STATUS = "40%, furthest keyframe 2/6, 310 planning iterations, cost 12.5, about 45 s left"


def _fresh(bpy, preset=None):
    bpy.ops.wm.read_homefile(use_empty=True)
    if preset is not None:
        assert bpy.ops.physkey.load_preset(preset=preset) == {"FINISHED"}
    return bpy.context.active_object


@contextlib.contextmanager
def _empty(bpy, module):
    _fresh(bpy)
    yield


@contextlib.contextmanager
def _character(bpy, module):
    _fresh(bpy)
    assert bpy.ops.physkey.add_character() == {"FINISHED"}
    yield


@contextlib.contextmanager
def _character_bone(bpy, module):
    _fresh(bpy)
    bpy.ops.physkey.add_character()
    arm = bpy.context.active_object
    arm.data.bones.active = arm.data.bones["foot_right"]  # two joints, two shapes
    arm.data.bones["foot_right"].physkey.geoms[1].use_mass = True  # one by mass, one by density
    yield


@contextlib.contextmanager
def _preset(bpy, module):
    arm = _fresh(bpy, "armchair_stand_sit_stand")
    arm.data.bones.active = arm.data.bones["pelvis"]
    yield


@contextlib.contextmanager
def _preset_collider(bpy, module):
    _fresh(bpy, "armchair_stand_sit_stand")
    seat = bpy.data.objects["seat"]
    bpy.context.view_layer.objects.active = seat
    yield


@contextlib.contextmanager
def _hits(bpy, module):
    """A hit-reaction preset (a push in the chest) and a ball added on the selected bone."""
    arm = _fresh(bpy, "hit_stand_chest")
    bpy.ops.object.mode_set(mode="POSE")
    arm.data.bones.active = arm.data.bones["head"]
    assert bpy.ops.physkey.hit_edit(action="ADD_BALL") == {"FINISHED"}
    bpy.ops.object.mode_set(mode="OBJECT")
    yield


@contextlib.contextmanager
def _assist(bpy, module):
    _fresh(bpy, "assist_box_jump_low")  # five keyed poses: the first at a fixed time, four free
    yield


def _solve_two_seeds(bpy):
    import json
    _fresh(bpy, "drop_onto_armchair")
    props = bpy.context.scene.physkey
    props.settings_json = json.dumps({"duration": 0.5})
    props.num_seeds = 2
    assert bpy.ops.physkey.solve(wait=True) == {"FINISHED"}
    return props


@contextlib.contextmanager
def _solutions(bpy, module):
    import json
    props = _solve_two_seeds(bpy)
    props.active_solution = 0  # previewed
    props.solutions[1].assist = 0.0125  # as an assisted solution reports it: the β² column
    props.solutions[0].object_penetration, props.solutions[0].object_loose = 0.012, 0.0  # as a box scene's
    deep = props.solutions[0]  # as a deep overlap arrives: 3 cm, a shin into the armchair, 0.5 s in
    deep.penetration, deep.penetration_time = 0.03, 0.5
    deep.penetration_bodies = json.dumps(["shin_left", "armchair"])
    deep.words = "stumbles at 0.50 s (shin_left on the floor), feet slide 12 cm (foot_right 9 cm from 0.25 s to 1.00 s)"
    deep.fall, deep.stumbled = 0.0, True  # caught itself on a knee without falling
    props.solutions[0].grasps_json = json.dumps([{"body": "hand_right", "object": "box", "held_s": 2.5,
                                                  "max_force_n": 31.0, "object_weight_n": 19.6,
                                                  "max_squeeze_n": 24.0, "max_shear_n": 30.0, "max_couple_nm": 7.4,
                                                  "friction": 0.9,
                                                  "beyond_friction_s": 0.4},
                                                 {"body": "hand_left", "object": "box", "held_s": 0.0,
                                                  "max_force_n": 0.0, "object_weight_n": 19.6}])
    yield


@contextlib.contextmanager
def _unstable_solution(bpy, module):
    props = _solve_two_seeds(bpy)
    props.active_solution = 1
    props.solutions[1].unstable, props.solutions[1].unstable_time = True, 0.31  # as a blown-up one arrives
    yield


@contextlib.contextmanager
def _running(bpy, module):
    """A contact solve in progress, the way PHYSKEY_OT_solve leaves the scene (a stand-in job)."""
    import importlib
    _fresh(bpy, "armchair_stand_sit_stand")
    session = importlib.import_module(f"{module.__name__}.addon.session")
    scene = bpy.context.scene
    scene.physkey.progress, scene.physkey.status, scene.physkey.running = 0.4, RUNNING_STATUS, True
    session.add_job(scene, types.SimpleNamespace(close=lambda: None, cancel=lambda: None))
    try:
        yield
    finally:
        session.pop_job(scene)
        scene.physkey.running = False


@contextlib.contextmanager
def _saved_while_running(bpy, module):
    """A file saved during a solve: `running` is stored with the scene, but no solve runs."""
    _fresh(bpy, "armchair_stand_sit_stand")
    props = bpy.context.scene.physkey
    props.progress, props.status, props.running = 0.4, RUNNING_STATUS, True
    yield


@contextlib.contextmanager
def _own_rig(bpy, module):
    """The animator's own rig selected, its humanoid bones found."""
    from humanoid_rigs import mixamo_skeleton
    _fresh(bpy)
    mixamo_skeleton(bpy)
    assert bpy.ops.physkey.map_humanoid() == {"FINISHED"}
    yield


@contextlib.contextmanager
def _own_rig_physics(bpy, module):
    """The physics humanoid made from the animator's rig, selected."""
    from humanoid_rigs import mixamo_skeleton
    _fresh(bpy)
    mixamo_skeleton(bpy)
    assert bpy.ops.physkey.character_from_rig() == {"FINISHED"}
    yield


@contextlib.contextmanager
def _imported_mjcf(bpy, module):
    """dm_control's humanoid imported from its MJCF file (`tests/data/dm_control`): its roles stored."""
    from pathlib import Path
    _fresh(bpy)
    path = Path(__file__).resolve().parent / "data" / "dm_control" / "humanoid.xml"
    assert bpy.ops.physkey.import_mjcf(filepath=str(path)) == {"FINISHED"}
    yield


STATES = {"empty": _empty, "character": _character, "character_bone": _character_bone, "preset": _preset,
          "preset_collider": _preset_collider, "hits": _hits, "assist": _assist, "solutions": _solutions,
          "unstable_solution": _unstable_solution, "running": _running,
          "saved_while_running": _saved_while_running, "own_rig": _own_rig, "own_rig_physics": _own_rig_physics,
          "imported_mjcf": _imported_mjcf}
