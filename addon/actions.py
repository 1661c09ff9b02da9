"""The one place that knows Blender's two Action APIs.

Blender 4.4 gave actions slots, layers, strips and channelbags (`action.slots`, `strip.channelbag`,
`AnimData.action_slot`); 5.0 removed the older `action.fcurves` / `action.groups`. Blender 4.2 LTS and
4.3 have only those older ones. Everything else in the add-on reads and writes F-curves through these
functions, so it works on every Blender the manifest claims."""
from __future__ import annotations

import bpy

from .i18n import rpt_


def slotted() -> bool:
    """Whether this Blender has slotted actions (4.4 and later)."""
    return "slots" in bpy.types.Action.bl_rna.properties


def new_channels(action, obj):
    """(slot, channels) for writing `obj`'s curves into the new, empty `action`: `channels` has
    `.fcurves.new(path, index=…)` and `.groups.new(name)` — a channelbag of a fresh layer and keyframe
    strip on slotted Blenders, the action itself on older ones (slot None)."""
    if not slotted():
        return None, action
    slot = action.slots.new(id_type="OBJECT", name=obj.name)
    strip = action.layers.new("PhysKey").strips.new(type="KEYFRAME")
    return slot, strip.channelbag(slot, ensure=True)


def channels_for(action):
    """Where new curves of `action` go: its first channelbag on slotted Blenders (the one a bake made),
    the action itself on older ones."""
    if not slotted():
        return action
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                return bag
    raise ValueError(rpt_("action '{}' has no channels to add curves to").format(action.name))


def assign(obj, action, slot) -> None:
    """Make `action` (and its `slot`, where slots exist) the one `obj` plays."""
    obj.animation_data_create()
    obj.animation_data.action = action
    if slot is not None:
        obj.animation_data.action_slot = slot


def fcurves(action, slot=None) -> list:
    """The F-curves of `action` that animate `slot` (every slot's when None; all of them on Blenders
    without slots)."""
    if action is None:
        return []
    if not slotted():
        return list(action.fcurves)
    out = []
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                if slot is None or bag.slot_handle == slot.handle:
                    out.extend(bag.fcurves)
    return out


def played_fcurves(obj) -> list:
    """The F-curves `obj` plays: those of its action's assigned slot (all of them before 4.4)."""
    ad = obj.animation_data
    if ad is None or ad.action is None:
        return []
    if not slotted():
        return list(ad.action.fcurves)
    if ad.action_slot is None:
        return []
    return fcurves(ad.action, ad.action_slot)
