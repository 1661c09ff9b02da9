"""The sidebar panels' draw code, run in realistic scenes through a strict recording layout
(tests/layout_recorder.py): every prop, operator, icon, list and layout call is checked against
Blender's own data, and what each panel shows is checked as a text outline."""
import inspect
import re
import textwrap

import pytest
from blender_env import installed_extension
from layout_recorder import Layout, LayoutError, Session, draw_panel, physkey_lists, physkey_panels
from panel_states import RUNNING_STATUS, STATES

PANELS = ("PHYSKEY_PT_character", "PHYSKEY_PT_roles", "PHYSKEY_PT_colliders", "PHYSKEY_PT_contacts", "PHYSKEY_PT_hits",
          "PHYSKEY_PT_pose_keys",
          "PHYSKEY_PT_solve", "PHYSKEY_PT_own_rig")
_DRAWN: dict = {}  # state → {panel idname: outline lines (None: hidden by poll)}, lists drawn


def _draw_state(state):
    if state not in _DRAWN:
        bpy, module = installed_extension()
        panels = physkey_panels(bpy, module.__name__)
        with STATES[state](bpy, module):
            drawn, lists = {}, set()
            for cls in panels:
                lines, session = draw_panel(bpy, cls)
                drawn[cls.bl_idname] = lines
                lists |= session.lists_drawn
        _DRAWN[state] = drawn, lists
    return _DRAWN[state]


def _text(state, panel):
    lines = _draw_state(state)[0][panel]
    assert lines is not None, f"{panel} hidden in state {state}"
    return "\n".join(lines)


@pytest.mark.every_blender
def test_every_physkey_panel_and_list_is_found():
    bpy, module = installed_extension()
    assert tuple(c.bl_idname for c in physkey_panels(bpy, module.__name__)) == PANELS
    assert {c.__name__ for c in physkey_lists(bpy, module.__name__)} == {
        "PHYSKEY_UL_contact_keyframes", "PHYSKEY_UL_hits", "PHYSKEY_UL_pose_keys", "PHYSKEY_UL_solutions",
        "PHYSKEY_UL_humanoid_map"}


@pytest.mark.every_blender
@pytest.mark.parametrize("state", list(STATES))
def test_panels_draw_only_what_blender_has(state):
    drawn, _ = _draw_state(state)  # raises LayoutError on a missing prop, operator, icon, list, …
    assert set(drawn) == set(PANELS)


def test_every_panel_and_list_item_is_drawn_somewhere():
    bpy, module = installed_extension()
    shown, lists = set(), set()
    for state in STATES:
        drawn, drawn_lists = _draw_state(state)
        shown |= {p for p, lines in drawn.items() if lines}
        lists |= drawn_lists
    assert shown == set(PANELS)
    assert lists == {c.__name__ for c in physkey_lists(bpy, module.__name__)}


def test_character_panel():
    empty = _text("empty", "PHYSKEY_PT_character")
    assert "operator physkey.add_character 'Add Physics Character' [ARMATURE_DATA]" in empty
    assert "physkey.load_preset" in empty
    assert "label 'Select an armature to see its physics' [INFO]" in empty
    assert "label 'Select a bone' [INFO]" in _text("character", "PHYSKEY_PT_character")
    bone = _text("character_bone", "PHYSKEY_PT_character")
    assert "label 'foot_right' [BONE_DATA]" in bone
    assert bone.count("prop PHYSKEY_PG_joint.range_min") == 2 and bone.count("prop PHYSKEY_PG_joint.strength") == 2
    assert "prop PHYSKEY_PG_geom.mass" in bone and "prop PHYSKEY_PG_geom.density" in bone  # one of each
    assert "operator physkey.export_mjcf" in bone and "operator physkey.autofill_rig" in bone


def test_roles_panel():
    """A physics character's roles: inferred for the default humanoid (nothing stored), listed for
    editing where an import stored them."""
    assert "label 'Inferred from the bone names' [INFO]" in _text("character", "PHYSKEY_PT_roles")
    imported = _text("imported_mjcf", "PHYSKEY_PT_roles")
    assert imported.count("prop_search PHYSKEY_PG_slot.bone") == 15, imported


def test_your_rig_panel():
    assert "label \"Select your character's armature\" [INFO]" in _text("empty", "PHYSKEY_PT_own_rig")
    mapped = _text("own_rig", "PHYSKEY_PT_own_rig")
    assert "operator physkey.map_humanoid 'Find Humanoid Bones' [VIEWZOOM]" in mapped
    assert "PHYSKEY_UL_humanoid_map" in mapped and "operator physkey.character_from_rig" in mapped
    assert "Keep bakes onto 'mixamo' too" in _text("own_rig_physics", "PHYSKEY_PT_own_rig")


def test_colliders_panel():
    assert "label 'Select a mesh to make it a collider' [INFO]" in _text("preset", "PHYSKEY_PT_colliders")
    seat = _text("preset_collider", "PHYSKEY_PT_colliders")
    for line in ("prop PHYSKEY_PG_object.collider 'Collider' = True", "prop PHYSKEY_PG_object.shape",
                 "prop PHYSKEY_PG_object.friction", "prop PHYSKEY_PG_object.dynamic 'Free (can be pushed)' = False",
                 "prop PHYSKEY_PG_object.mass"):
        assert line in seat, line


def test_contact_keyframes_panel_lists_the_presets_keyframes():
    bpy, module = installed_extension()
    text = _text("preset", "PHYSKEY_PT_contacts")
    assert "list PHYSKEY_UL_contact_keyframes PHYSKEY_PG_scene.contact_keyframes: 6 items, active 0" in text
    for name in ("sit_leanforward1", "armchair0", "sit_leanforward2", "sit2stand", "stand"):
        assert f"prop PHYSKEY_PG_contact_keyframe.name '' = '{name}'" in text
    assert "item 0 (active)" in text
    for action, icon in (("ADD", "ADD"), ("REMOVE", "REMOVE"), ("DUPLICATE", "DUPLICATE"), ("UP", "TRIA_UP"),
                         ("DOWN", "TRIA_DOWN"), ("REVERSE", "ARROW_LEFTRIGHT")):
        assert f"operator physkey.contact_keyframe_edit '' [{icon}] {{action='{action}'}}" in text
    assert "operator physkey.contact_style 'Seated' {style='seated'}" in text
    assert "operator physkey.add_pair 'Add Pair' [CURSOR]" in text
    assert "label 'pelvis ↔ chair' [LINKED]" in text
    assert "send_keyframe" not in text  # only while a contact solve runs
    assert "send_keyframe" in _text("running", "PHYSKEY_PT_contacts")
    assert "0 items" in _text("empty", "PHYSKEY_PT_contacts")


def test_hits_panel_lists_the_pushes_and_balls():
    text = _text("hits", "PHYSKEY_PT_hits")
    assert "list PHYSKEY_UL_hits PHYSKEY_PG_scene.hits: 2 items, active 1" in text
    for action, icon in (("ADD_PUSH", "FORCE_FORCE"), ("ADD_BALL", "SPHERE"), ("DUPLICATE", "DUPLICATE"),
                         ("REMOVE", "REMOVE")):
        assert f"operator physkey.hit_edit '' [{icon}] {{action='{action}'}}" in text
    assert "label '8 N·s'" in text and "label '3 kg · 6 m/s'" in text  # the preset's push, the new ball
    for field in ("kind", "frame", "point", "direction", "speed", "mass", "radius", "distance", "friction"):
        assert f"prop PHYSKEY_PG_hit.{field}" in text, field
    assert "prop_search PHYSKEY_PG_hit.body" in text and "magnitude" not in text  # a ball has no impulse
    assert "0 items" in _text("preset", "PHYSKEY_PT_hits")


def test_pose_keyframes_panel_lists_the_keyed_poses():
    text = _text("assist", "PHYSKEY_PT_pose_keys")
    assert "operator physkey.sync_pose_keys 'Read Keyed Poses' [FILE_REFRESH]" in text
    assert "list PHYSKEY_UL_pose_keys PHYSKEY_PG_scene.pose_keys: 5 items" in text
    assert text.count("[KEYFRAME]") == 5 and text.count("prop PHYSKEY_PG_pose_key.weight 'w'") == 5
    assert text.count("prop PHYSKEY_PG_pose_key.free 'free' = True") == 4
    assert text.count("prop PHYSKEY_PG_pose_key.range_min") == 4  # only the free ones show their range


def test_solve_panel_idle_running_and_with_solutions():
    idle = _text("preset", "PHYSKEY_PT_solve")
    assert "operator physkey.solve 'Solve' [PLAY]" in idle and "cancel_solve" not in idle
    assert "prop PHYSKEY_PG_scene.method '' = 'contact'" in idle and "mpc_rollouts" in idle
    assert "assist_population" in _text("assist", "PHYSKEY_PT_solve")
    running = _text("running", "PHYSKEY_PT_solve")
    assert "operator physkey.cancel_solve '' [CANCEL]" in running and "physkey.solve " not in running
    assert f"progress factor=0.4000000059604645 type='BAR' text='{RUNNING_STATUS}'" in running  # a bar, not a slider
    assert "prop PHYSKEY_PG_scene.progress" not in running
    sols = _text("solutions", "PHYSKEY_PT_solve")
    assert "list PHYSKEY_UL_solutions PHYSKEY_PG_scene.solutions: 2 items, active 0" in sols
    for seed in (0, 1):  # which solve (its method and start time) and which seed
        assert re.search(rf"label 'Simulate \d\d:\d\d:\d\d · seed {seed}' \[CHECKMARK\]", sols), sols
    assert "label 'β² 0.013'" in sols  # only the assisted solution shows β²
    assert "label 'done: 2 solution(s)" in sols
    assert "operator physkey.keep_solution 'Keep' [ACTION]" in sols and "enabled=False" not in sols
    unstable = _text("unstable_solution", "PHYSKEY_PT_solve")
    assert "label 'unstable at 0.31 s'" in unstable and unstable.count("[CANCEL]") == 1
    assert "label 'Blew up at 0.31 s: preview only' [ERROR]" in unstable
    assert "row enabled=False\n    operator physkey.keep_solution 'Keep' [ACTION]" in unstable
    assert "operator physkey.import_result 'Import…' [IMPORT]" in unstable
    solutions = _text("solutions", "PHYSKEY_PT_solve")
    assert "label 'Object: penetration 1.2 cm · loose 0.00 s'" in solutions
    # 0.5 s into a motion that starts at frame 1, at 24 fps: frame 13
    assert "label 'Penetration 3.0 cm: shin_left into armchair at frame 13' [ERROR]" in solutions
    # the words' times as frames, the same way; a stumble without a fall is not "No fall"
    assert "label 'stumbles at frame 13 (shin_left on the floor)' [INFO]" in solutions
    assert "label 'feet slide 12 cm (foot_right 9 cm from frame 7 to frame 25)' [INFO]" in solutions
    assert "No fall" not in solutions  # its fall is 0 s: "No fall" beside "stumbles" read as a contradiction
    assert ("label 'hand_right holds box 2.5 s: beyond friction 0.4 s (squeeze up to 24 N, shear 30 N)' [ERROR]"
            in solutions)
    assert "label '  turning it with up to 7 N·m'" in solutions
    assert "label 'hand_left holds box 0.0 s, up to 0 N (it weighs 20 N)'" in solutions  # never held: no split


def test_a_file_saved_during_a_solve_opens_ready_to_solve():
    """`running` is saved with the scene; with no solve process, the panels offer Solve, not Cancel."""
    text = _text("saved_while_running", "PHYSKEY_PT_solve")
    assert "operator physkey.solve 'Solve' [PLAY]" in text and "cancel_solve" not in text
    assert "send_keyframe" not in _text("saved_while_running", "PHYSKEY_PT_contacts")


def test_the_recorder_rejects_what_blender_would_not_draw():
    bpy, module = installed_extension()
    bpy.ops.wm.read_homefile(use_empty=True)
    p = bpy.context.scene.physkey
    bad = {
        "prop name": lambda l: l.prop(p, "num_seed"),
        "prop index": lambda l: l.prop(p, "num_seeds", index=0),
        "prop text": lambda l: l.prop(p, "method", text=3),
        "prop_enum value": lambda l: l.prop_enum(p, "method", "walk"),
        "icon": lambda l: l.label(text="x", icon="WEIGHT"),
        "operator": lambda l: l.operator("physkey.solv"),
        "operator property": lambda l: setattr(l.operator("physkey.contact_keyframe_edit"), "actoin", "ADD"),
        "operator enum value": lambda l: setattr(l.operator("physkey.contact_keyframe_edit"), "action", "LEFT"),
        "operator int": lambda l: setattr(l.operator("physkey.keep_solution"), "index", "first"),
        "dynamic choice never set": lambda l: l.operator("physkey.load_preset"),
        "operator_menu_enum": lambda l: l.operator_menu_enum("physkey.load_preset", "presets"),
        "list class": lambda l: l.template_list("PHYSKEY_UL_nope", "", p, "contact_keyframes", p,
                                                "active_contact_keyframe"),
        "list collection": lambda l: l.template_list("PHYSKEY_UL_contact_keyframes", "", p, "contact_keyframe", p,
                                                     "active_contact_keyframe"),
        "list active index": lambda l: l.template_list("PHYSKEY_UL_contact_keyframes", "", p, "contact_keyframes",
                                                       p, "method"),
        "layout keyword": lambda l: l.row(aligned=True),
        "layout method": lambda l: l.colum(),
        "layout attribute": lambda l: setattr(l.row(), "enable", False),
        "layout attribute type": lambda l: setattr(l, "scale_y", "big"),
        "menu": lambda l: l.menu("PHYSKEY_MT_nope"),
        "missing argument": lambda l: l.prop(p),
        "bare identifier as label": lambda l: l.prop(p, "mpc_rollouts"),
    }
    for what, draw in bad.items():
        session = Session(bpy, bpy.context, what)
        with pytest.raises(LayoutError):
            draw(Layout(session))
            session.finish()
            pytest.fail(f"accepted: {what}")


@pytest.mark.parametrize("panel, old, new", [
    ("PHYSKEY_PT_solve", '"num_seeds"', '"num_seed"'),
    ("PHYSKEY_PT_solve", '"physkey.keep_solution"', '"physkey.keep"'),
    ("PHYSKEY_PT_contacts", 'icon="CURSOR"', 'icon="CURSORS"'),
    ("PHYSKEY_PT_contacts", '"active_contact_keyframe"', '"active_keyframe"'),
    ("PHYSKEY_PT_character", '"range_max"', '"range_maximum"'),
])
def test_a_mistake_in_a_panel_fails(panel, old, new):
    """A copy of a real panel's draw with one name wrong is caught in the state where it draws."""
    bpy, module = installed_extension()
    cls = getattr(bpy.types, panel)
    source = textwrap.dedent(inspect.getsource(cls.draw))
    assert old in source
    namespace = dict(vars(inspect.getmodule(cls)))
    exec(compile(source.replace(old, new), "<broken draw>", "exec"), namespace)
    broken = type("Broken", (), {"draw": namespace["draw"], "bl_idname": panel, "bl_label": cls.bl_label})
    with STATES["character_bone" if panel == "PHYSKEY_PT_character" else "preset"](bpy, module):
        draw_panel(bpy, cls)  # the real one draws
        with pytest.raises(LayoutError):
            draw_panel(bpy, broken)


def test_the_panel_outlines_in_the_docs_are_current():
    """docs/PANELS.md is what the panels draw now (tools/panel_outline.py --write)."""
    import importlib.util
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("panel_outline", root / "tools" / "panel_outline.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.DOC.read_text(encoding="utf-8") == tool.page(), \
        "docs/PANELS.md is out of date: run .venv/bin/python tools/panel_outline.py --write"


def test_more_settings_say_which_fields_they_override():
    """A setting in More (JSON) that a field also holds is named under the fields: the JSON wins."""
    bpy, module = installed_extension()
    props = bpy.context.scene.physkey
    taskio = __import__(f"{module.__name__}.addon.taskio", fromlist=["taskio"])
    props.method, props.settings_json = "contact", '{"rollouts": 12, "horizon": 0.5}'
    try:
        assert taskio.shadowed_settings(props) == ["rollouts"]
        assert taskio.settings_from_scene(props)["rollouts"] == 12
        props.settings_json = "not json"
        assert taskio.shadowed_settings(props) == []
    finally:
        props.settings_json = "{}"
