"""Settings by consumer: a method's settings are groups (sampling, effort, recovery, the objective's
terms …) each read by one part of the solver, while task files stay flat. Every preset and every task
of tests/data must resolve, through the groups, to exactly the settings it resolved to before the
groups existed (`tests/data/settings_resolved.json`, written by the flat classes of commit b04c8b9)."""
import dataclasses
import json
from pathlib import Path

import pytest

from solver.core.errors import InvalidInput
from solver.formats.settings import (
    RENAMED,
    AssistSettings,
    ContactSettings,
    EffortSettings,
    SamplingSettings,
    SimulateSettings,
    TrackSettings,
    flat_settings,
    groups_of,
    method_settings,
    setting_field,
    setting_names,
)
from solver.methods.physical import ASSISTED_REFERENCE

ROOT = Path(__file__).resolve().parents[1]
RESOLVED = json.loads((ROOT / "tests" / "data" / "settings_resolved.json").read_text())
CLASSES = {"contact": ContactSettings, "track": TrackSettings, "assist": AssistSettings, "simulate": SimulateSettings}


def _given(key: str) -> dict:
    """The flat settings object the entry of RESOLVED was made from."""
    if key.startswith("defaults:"):
        return {}
    if key == "solver/methods/physical.py:ASSISTED_REFERENCE":
        return dict(ASSISTED_REFERENCE)
    return json.loads((ROOT / key).read_text()).get("settings", {})


# Fields tracking inherited from the contact planner's settings and never read (its objective has no
# speed term, its model no sticky hands): no longer settings of the track method.
NEVER_READ = {"TrackSettings": {"grasp", "speed_limit", "speed_weight"}}


# Settings added since the record, with their defaults where the task or preset does not set them.
ADDED = {"AssistSettings": {"physical_settings": {}, "w_apex": 10.0},
         "ContactSettings": {"give_up_style_s": 1.0},
         "TrackSettings": {"w_slip": 20.0, "stand_ins": True, "w_anchor": 100.0, "give_up_style_s": 1.0}}
# Defaults changed since the record (measured: benchmarks/RESULTS.md), with their new values where the task
# or preset does not set them.
CHANGED = {"ContactSettings": {"give_up_fallen_s": 0.1},
           "TrackSettings": {"w_body": 12.0, "planning_timestep": 0.01, "w_penetration": 30.0, "give_up_fallen_s": 0.1}}


def _renamed(cls, flat: dict) -> dict:
    names = RENAMED.get(cls.__name__, {})
    return {names.get(k, k): v for k, v in flat.items() if k not in NEVER_READ.get(cls.__name__, ())}


@pytest.mark.parametrize("key", sorted(RESOLVED))
def test_every_preset_and_task_resolves_through_the_groups_to_the_same_settings(key):
    entry = RESOLVED[key]
    cls = CLASSES[entry["method"]]
    settings = method_settings(cls, _given(key))
    given = _given(key)
    added = {k: given.get(k, v) for k, v in {**ADDED.get(cls.__name__, {}), **CHANGED.get(cls.__name__, {})}.items()}
    assert flat_settings(settings) == dict(_renamed(cls, entry["settings"]), **added)


def test_the_record_covers_every_preset_and_every_method():
    presets = {f"scenes/tasks/{p.name}" for p in (ROOT / "scenes" / "tasks").glob("*.json")}
    assert presets <= set(RESOLVED)
    assert {e["method"] for e in RESOLVED.values()} == set(CLASSES)


def test_names_are_unique_across_the_groups_of_each_method_and_every_group_has_one_reader():
    for cls in (ContactSettings, TrackSettings):
        names = setting_names(cls)
        assert len(names) == len(set(names)), cls.__name__
        assert "retries" not in names and "segment_retries" in names  # one meaning per name
    assert "search_restarts" in setting_names(AssistSettings) and "retries" not in setting_names(AssistSettings)
    # the two sampling-MPC methods share their groups' classes; tracking composes, it does not inherit
    contact, track = groups_of(ContactSettings), groups_of(TrackSettings)
    assert {g: type(f.default_factory()) for g, f in contact.items() if g in ("sampling", "effort", "recovery")} == \
        {g: type(f.default_factory()) for g, f in track.items() if g in ("sampling", "effort", "recovery")}
    assert not issubclass(TrackSettings, ContactSettings)


def test_tracking_keeps_its_own_defaults_for_the_shared_groups():
    assert setting_field(TrackSettings, "horizon")[1] == 0.6 and setting_field(ContactSettings, "horizon")[1] == 0.35
    assert setting_field(TrackSettings, "planning_timestep")[1] == 0.01
    assert setting_field(ContactSettings, "planning_timestep")[1] == 0.015
    track = method_settings(TrackSettings, {"rollouts": 20})
    assert (track.sampling.horizon, track.sampling.rollouts, track.recovery.segment_retries, track.recovery.backups,
            track.effort.improvement, track.sampling.planning_timestep) == (0.6, 20, 1, 1, 0.05, 0.01)


def test_an_earlier_name_is_read_as_its_new_one():
    assert method_settings(ContactSettings, {"retries": 0}).recovery.segment_retries == 0
    assert method_settings(TrackSettings, {"retries": 3}).recovery.segment_retries == 3
    assert method_settings(AssistSettings, {"retries": 0}).search_restarts == 0


@pytest.mark.parametrize("flat, words", [
    ({"rollouts": 1}, "settings.rollouts: must be at least 2"),
    ({"horizon": 0.01}, "settings.horizon: 0.01 s is shorter than two planning steps"),
    ({"nonsense": 1}, "settings.nonsense: unknown field (expected one of: rollouts, horizon"),
    ({"budget": 0}, "settings.budget: must be > 0"),
    ({"w_joint": 1.0}, "settings.w_joint: unknown field"),  # a tracking weight in a contact task
])
def test_a_bad_setting_is_named_as_the_file_has_it(flat, words):
    with pytest.raises(InvalidInput) as e:
        method_settings(ContactSettings, flat)
    assert words in str(e.value)


def test_each_group_is_what_its_reader_takes():
    """The effort reads only EffortSettings and a planner only SamplingSettings: handing either the
    whole method's settings fails at once instead of reading a field of the wrong group."""
    import numpy as np

    from solver.mpc.effort import Effort
    from solver.mpc.planners.base import ControlSpace, make_planner
    settings = method_settings(ContactSettings, {"rollouts": 8, "planner": "baseline", "budget": 2})
    assert Effort(settings.effort, 0.015).fixed
    with pytest.raises(AttributeError):
        Effort(settings, 0.015)
    space = ControlSpace(nu=2, lo=-np.ones(2), hi=np.ones(2), act_group=np.zeros(2, dtype=int),
                         offsets=np.linspace(0.0, 0.3, 3), spline="cubic")
    assert make_planner(space, settings.sampling, np.random.default_rng(0)).nominal.shape == (3, 2)
    with pytest.raises(AttributeError):
        make_planner(space, settings, np.random.default_rng(0))
    assert {f.name for f in dataclasses.fields(EffortSettings)}.isdisjoint(f.name for f in
                                                                          dataclasses.fields(SamplingSettings))
