"""Blender properties made from the solver's settings fields (`solver.formats.settings`): one source for every
default, bound and description. A field's metadata says what the solver accepts — `min`/`max`
(inclusive), `positive`, `nonneg`, `choices` — and what a user interface should suggest
(`soft_min`/`soft_max`); the property gets the same, so the panel offers only what a solve accepts."""
from __future__ import annotations

from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty

from ..solver.formats.settings import setting_field
from .i18n import rpt_

POSITIVE_FLOAT_MIN = 1e-6  # a float that must be > 0 and has no `min` of its own: the least the field takes


def _bounds(meta, kind) -> dict:
    """min/max/soft_min/soft_max for an Int or Float property from a field's metadata."""
    out = {k: kind(meta[k]) for k in ("min", "max", "soft_min", "soft_max") if k in meta}
    floor = None
    if meta.get("positive"):
        floor = 1 if kind is int else POSITIVE_FLOAT_MIN
    elif meta.get("nonneg"):
        floor = kind(0)
    if floor is not None:
        out["min"] = max(out.get("min", floor), floor)
    return out


def setting_property(settings_class, name: str, **overrides):
    """The bpy property for setting `name` of a method's settings class: Bool, Int, Float, or Enum (a
    field with `choices`, or `items=` given), with the field's default for that method, its description
    and bounds; `overrides` (any bpy.props keyword) win."""
    try:
        f, method_default = setting_field(settings_class, name)
    except KeyError:
        raise KeyError(rpt_("{} has no setting '{}'").format(settings_class.__name__, name)) from None
    meta = f.metadata
    default = overrides.pop("default", method_default)
    kw = {"description": meta.get("description", ""), "default": default}
    if "items" in overrides or "choices" in meta:
        kw["items"] = [(c, c.replace("_", " ").capitalize(), "") for c in meta.get("choices", ())]
        kw.update(overrides)
        return EnumProperty(**kw)
    if isinstance(default, bool):
        kw.update(overrides)
        return BoolProperty(**kw)
    if isinstance(default, int):
        kw.update(_bounds(meta, int))
        kw.update(overrides)
        return IntProperty(**kw)
    if isinstance(default, float):
        kw.update(_bounds(meta, float))
        kw.update(overrides)
        return FloatProperty(**kw)
    raise TypeError(rpt_("{}.{}: no Blender property for a {} "
                         "setting").format(settings_class.__name__, name, type(default).__name__))
