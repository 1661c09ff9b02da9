"""Drawing PhysKey's sidebar panels without a UI: a strict stand-in for Blender's `UILayout`.

Headless Blender (the `bpy` module) has no windows, so `Panel.draw` never runs in the tests. Here a
panel's `draw(self, context)` runs against `Layout`, which records what it would show and checks
every call against Blender's own descriptions (`bpy.types.UILayout.bl_rna.functions`) and data:

- each layout method exists, with the positional/keyword arguments it has in Blender, of their
  types (an icon is one of Blender's icons, an enum value one of its items), required ones given;
- layout attributes set (`enabled`, `alert`, `scale_y`, …) exist and take that type;
- `prop(data, name)`: `name` is an RNA property of `data` (or `["custom"]` one it has), `index`
  within its array, a label (`text=`, or the property's name: not its bare identifier);
  `prop_enum` value among its items; `template_list`: the UIList is registered,
  the collection and the active index property exist; each item is drawn with the list's
  `draw_item` into a nested recorder;
- `operator(idname)`: the operator exists; properties set on the returned button exist on it with
  values of their type; a button whose operator has a choice (a dynamic enum) that the panel leaves
  unset and no `invoke` to ask the user would always run the first item: an error.

Real Blender only prints "property not found" and draws a red label (or raises mid-draw for a bad icon).
`Layout.outline()` gives what was drawn as text (labels, props with values, operators);
`panel_states.STATES` are the scenes the panels are drawn in; `tools/panel_outline.py` prints them.
"""
from __future__ import annotations

import difflib
import inspect
import math
import types


class LayoutError(AssertionError):
    """A panel asked the layout for something Blender would not draw."""


def _close(name, names) -> str:
    near = difflib.get_close_matches(name, list(names), n=3)
    return f" (did you mean {', '.join(near)}?)" if near else ""


class Session:
    """One panel drawn once: Blender's descriptions, the context, and the buttons to check at the end."""

    def __init__(self, bpy, context, where: str):
        self.bpy, self.context, self.where = bpy, context, where
        self.ui = bpy.types.UILayout.bl_rna
        self.buttons: list[OperatorProps] = []
        self.lists_drawn: set[str] = set()

    def fail(self, msg: str):
        raise LayoutError(f"{self.where}: {msg}")

    # -- values against RNA parameter/property descriptions ------------------------------------
    def check_value(self, what: str, rna, value) -> None:
        """`value` is acceptable for the RNA parameter or property `rna` (as Blender would take it)."""
        bpy = self.bpy
        kind = rna.type
        if getattr(rna, "array_length", 0) and kind in ("BOOLEAN", "INT", "FLOAT") and \
                not isinstance(value, (int, float)):
            items = list(value)
            if len(items) != rna.array_length:
                self.fail(f"{what}: expected {rna.array_length} values, got {len(items)}")
            for v in items:
                self._check_scalar(what, kind, rna, v)
            return
        if kind == "POINTER":
            if value is None:
                if rna.is_required:
                    self.fail(f"{what}: required, got None")
                return
            if not isinstance(value, bpy.types.bpy_struct):
                self.fail(f"{what}: expected Blender data, got {type(value).__name__} {value!r}")
            return
        if kind == "COLLECTION":
            return
        if kind == "ENUM":
            keys = set(rna.enum_items.keys())
            if rna.is_enum_flag:
                if not isinstance(value, (set, frozenset)) or (keys and not set(value) <= keys):
                    self.fail(f"{what}: expected a set of {sorted(keys)}, got {value!r}")
                return
            if not isinstance(value, str):
                self.fail(f"{what}: expected an enum identifier (str), got {value!r}")
            if keys and value not in keys:
                label = "icon" if rna.identifier == "icon" else "value"
                self.fail(f"{what}: no {label} '{value}'{_close(value, keys)}")
            return
        self._check_scalar(what, kind, rna, value)

    def _check_scalar(self, what, kind, rna, value) -> None:
        if kind == "STRING":
            if not isinstance(value, str):
                self.fail(f"{what}: expected a str, got {type(value).__name__} {value!r}")
        elif kind == "BOOLEAN":
            if not isinstance(value, int) or value not in (0, 1):
                self.fail(f"{what}: expected True/False, got {value!r}")
        elif kind == "INT":
            if not isinstance(value, int):
                self.fail(f"{what}: expected an int, got {type(value).__name__} {value!r}")
            if not rna.hard_min <= value <= rna.hard_max:
                self.fail(f"{what}: {value} outside [{rna.hard_min}, {rna.hard_max}]")
        elif kind == "FLOAT":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.fail(f"{what}: expected a number, got {type(value).__name__} {value!r}")

    # -- Blender data ---------------------------------------------------------------------------
    def rna_property(self, what: str, data, name: str):
        """The RNA property `name` of `data` (None for an existing `["custom"]` property)."""
        if data is None or not hasattr(data, "bl_rna"):
            self.fail(f"{what}: data is {data!r}, not Blender data")
        if name.startswith("[") and name.endswith("]"):
            key = name[1:-1].strip()
            if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"":
                key = key[1:-1]
            if not hasattr(data, "keys") or key not in data.keys():
                self.fail(f"{what}: {data.bl_rna.identifier} has no custom property {key!r}")
            return None
        props = data.bl_rna.properties
        if name == "rna_type" or name not in props.keys():
            self.fail(f"{what}: {data.bl_rna.identifier} has no property '{name}'{_close(name, props.keys())}")
        return props[name]

    def operator_rna(self, what: str, idname: str):
        """The RNA description of operator `idname` ("module.name")."""
        if not isinstance(idname, str) or idname.count(".") != 1 or idname != idname.lower():
            self.fail(f"{what}: '{idname}' is not an operator id (module.name)")
        mod, name = idname.split(".")
        try:
            return getattr(getattr(self.bpy.ops, mod), name).get_rna_type()
        except (AttributeError, KeyError):
            self.fail(f"{what}: no operator '{idname}'")

    def registered(self, what: str, name: str, base):
        cls = getattr(self.bpy.types, name, None) if isinstance(name, str) else None
        if cls is None or not isinstance(cls, type) or not issubclass(cls, base) or not cls.is_registered:
            self.fail(f"{what}: no registered {base.__name__} '{name}'")
        return cls

    def finish(self) -> None:
        for button in self.buttons:
            button._check_complete()


class OperatorProps:
    """What `layout.operator()` returns: setting a property checks that the operator has it."""

    def __init__(self, session: Session, rna, idname: str):
        d = self.__dict__
        d["_s"], d["_rna"], d["_idname"], d["_set"] = session, rna, idname, {}

    def __setattr__(self, name, value):
        props = self._rna.properties
        if name == "rna_type" or name not in props.keys():
            self._s.fail(f"operator {self._idname}: no property '{name}'{_close(name, props.keys())}")
        if props[name].is_readonly:
            self._s.fail(f"operator {self._idname}: '{name}' is read-only")
        self._s.check_value(f"operator {self._idname}.{name}", props[name], value)
        self._set[name] = value

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        props = self._rna.properties
        if name == "rna_type" or name not in props.keys():
            self._s.fail(f"operator {self._idname}: no property '{name}'{_close(name, props.keys())}")
        return self._set.get(name, getattr(props[name], "default", None))

    def _check_complete(self) -> None:
        cls = getattr(self._s.bpy.types, self._rna.identifier, None)
        if cls is None or getattr(cls, "invoke", None) is not None:
            return  # a built-in operator, or one that asks (file browser, dialog, search)
        for p in self._rna.properties:
            if p.type == "ENUM" and not p.is_enum_flag and not len(p.enum_items) and \
                    p.identifier not in self._set and not p.is_hidden:
                self._s.fail(f"operator {self._idname}: the button never sets '{p.identifier}' (a dynamic "
                             f"choice) and the operator has no invoke to ask for it, so it always runs the "
                             f"first item; use operator_menu_enum or set it")

    def describe(self) -> str:
        return " ".join(f"{k}={v!r}" for k, v in self._set.items())


def _format_value(data, rna, index: int) -> str:
    if rna is None:
        return ""
    value = getattr(data, rna.identifier)
    if rna.type == "COLLECTION":
        return f"[{len(value)} items]"
    if rna.type == "POINTER":
        return repr(getattr(value, "name", value.bl_rna.identifier if value is not None else None))
    if rna.type == "ENUM":
        return repr(value)

    def one(v):
        if rna.type == "FLOAT":
            if rna.subtype == "ANGLE":
                return f"{math.degrees(v):.4g}°"
            return f"{v:.4g}"
        return repr(v)

    if getattr(rna, "array_length", 0):
        if index >= 0:
            return one(value[index])
        return "(" + ", ".join(one(v) for v in value) + ")"
    return one(value)


class Instance:
    """`self` for a Blender class's draw methods, drawn outside Blender: the class's attributes and
    methods (bound to this object; mixins included), the RNA properties' defaults, plus `attrs`."""

    def __init__(self, cls, **attrs):
        self.__dict__.update(attrs)
        self.__dict__["_cls"] = cls

    def __getattr__(self, name):
        cls = self.__dict__["_cls"]
        try:
            raw = inspect.getattr_static(cls, name)
        except AttributeError:
            rna = getattr(cls, "bl_rna", None)
            if rna is not None and name in rna.properties.keys():
                return getattr(rna.properties[name], "default", None)
            raise
        if isinstance(raw, staticmethod):
            return raw.__func__
        if isinstance(raw, classmethod):
            return getattr(cls, name)
        if isinstance(raw, types.FunctionType):
            return types.MethodType(raw, self)
        if isinstance(raw, property):
            return raw.fget(self)
        return getattr(cls, name)


class Layout:
    """A recording, validating `UILayout`."""

    def __init__(self, session: Session, kind: str = "layout", detail: str = ""):
        d = self.__dict__
        d["_s"], d["_kind"], d["_detail"], d["_attrs"], d["_items"] = session, kind, detail, {}, []

    # -- attributes -----------------------------------------------------------------------------
    def __setattr__(self, name, value):
        props = self._s.ui.properties
        if name == "rna_type" or name not in props.keys():
            self._s.fail(f"UILayout has no attribute '{name}'{_close(name, props.keys())}")
        if props[name].is_readonly:
            self._s.fail(f"UILayout.{name} is read-only")
        self._s.check_value(f"UILayout.{name}", props[name], value)
        self._attrs[name] = value

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        ui = self._s.ui
        if name in ui.properties.keys() and name != "rna_type":
            return self._attrs.get(name, getattr(ui.properties[name], "default", None))
        if name in ui.functions.keys():
            return lambda *args, **kwargs: self._call(name, args, kwargs)
        self._s.fail(f"UILayout has no '{name}'{_close(name, list(ui.functions.keys()) + list(ui.properties.keys()))}")

    # -- calls ----------------------------------------------------------------------------------
    def _call(self, fname, args, kwargs):
        s = self._s
        fn = s.ui.functions[fname]
        inputs = [p for p in fn.parameters if not p.is_output]
        names = [p.identifier for p in inputs]
        if len(args) > len(inputs):
            s.fail(f"{fname}(): takes {len(inputs)} arguments, got {len(args)}")
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                s.fail(f"{fname}(): no keyword '{k}'{_close(k, names)}")
            if k in bound:
                s.fail(f"{fname}(): '{k}' given twice")
            bound[k] = v
        for p in inputs:
            if p.identifier in bound:
                s.check_value(f"{fname}({p.identifier}=)", p, bound[p.identifier])
            elif p.is_required:
                s.fail(f"{fname}(): missing '{p.identifier}'")
        handler = getattr(type(self), f"_do_{fname}", None)
        if handler is not None:
            return handler(self, **bound)
        layouts = [p for p in fn.parameters if p.is_output and p.type == "POINTER"
                   and p.fixed_type.identifier == "UILayout"]
        detail = " ".join(f"{k}={v!r}" for k, v in bound.items() if k not in ("layout",) and v not in (None, ""))
        if layouts:
            subs = [Layout(s, fname if len(layouts) == 1 else f"{fname}.{p.identifier}", detail) for p in layouts]
            self._items.extend(subs)
            return subs[0] if len(subs) == 1 else tuple(subs)
        self._items.append(f"{fname} {detail}".rstrip())
        return None

    @staticmethod
    def _icon(icon) -> str:
        return f" [{icon}]" if icon and icon != "NONE" else ""

    def _do_label(self, text="", icon="NONE", **_):
        self._items.append(f"label {text!r}{self._icon(icon)}")

    def _do_prop(self, data, property, text=None, icon="NONE", index=-1, **kw):
        s = self._s
        rna = s.rna_property(f"prop({property!r})", data, property)
        if index != -1:
            if rna is None or not getattr(rna, "array_length", 0):
                s.fail(f"prop({property!r}, index={index}): not an array property")
            if not 0 <= index < rna.array_length:
                s.fail(f"prop({property!r}, index={index}): the array has {rna.array_length} items")
        if text is None:
            if rna is not None and rna.name in ("", rna.identifier) and rna.identifier.islower():
                s.fail(f"prop({property!r}): labelled with the raw identifier '{rna.identifier}' (the property "
                       f"has no name): give it a name or pass text=")
            text = (rna.name or rna.identifier) if rna is not None else property
        where = f"{data.bl_rna.identifier}.{property}" + (f"[{index}]" if index >= 0 else "")
        flags = "".join(f" {k}" for k in ("toggle", "expand", "slider", "icon_only")
                        if kw.get(k) not in (None, False, -1))
        if kw.get("emboss") is False:
            flags += " emboss=False"
        self._items.append(f"prop {where} {text!r} = {_format_value(data, rna, index)}{self._icon(icon)}{flags}")

    def _do_prop_enum(self, data, property, value, text=None, icon="NONE", **_):
        s = self._s
        rna = s.rna_property(f"prop_enum({property!r})", data, property)
        if rna is None or rna.type != "ENUM":
            s.fail(f"prop_enum({property!r}): not an enum property")
        if len(rna.enum_items) and value not in rna.enum_items.keys():
            s.fail(f"prop_enum({property!r}): no item '{value}'{_close(value, rna.enum_items.keys())}")
        self._items.append(f"prop_enum {data.bl_rna.identifier}.{property}={value!r} {text!r}{self._icon(icon)}")

    def _enum_prop(self, fname, data, property, text=None, icon="NONE", **_):
        rna = self._s.rna_property(f"{fname}({property!r})", data, property)
        if rna is None or rna.type != "ENUM":
            self._s.fail(f"{fname}({property!r}): not an enum property")
        self._items.append(f"{fname} {data.bl_rna.identifier}.{property} = {_format_value(data, rna, -1)}"
                           f"{'' if text is None else ' ' + repr(text)}{self._icon(icon)}")

    def _do_props_enum(self, data, property, **kw):
        self._enum_prop("props_enum", data, property, **kw)

    def _do_prop_menu_enum(self, data, property, **kw):
        self._enum_prop("prop_menu_enum", data, property, **kw)

    def _do_prop_tabs_enum(self, data, property, **kw):
        self._enum_prop("prop_tabs_enum", data, property, **kw)

    def _do_prop_search(self, data, property, search_data, search_property, text=None, icon="NONE", **_):
        s = self._s
        s.rna_property(f"prop_search({property!r})", data, property)
        coll = s.rna_property(f"prop_search({search_property!r})", search_data, search_property)
        if coll is None or coll.type != "COLLECTION":
            s.fail(f"prop_search({search_property!r}): not a collection")
        self._items.append(f"prop_search {data.bl_rna.identifier}.{property} in "
                           f"{search_data.bl_rna.identifier}.{search_property}{self._icon(icon)}")

    def _do_prop_decorator(self, data, property, index=-1, **_):
        self._s.rna_property(f"prop_decorator({property!r})", data, property)

    def _button(self, fname, operator, text, icon):
        rna = self._s.operator_rna(f"{fname}({operator!r})", operator)
        props = OperatorProps(self._s, rna, operator)
        self._s.buttons.append(props)
        label = rna.name if text is None else text
        self._items.append(lambda: f"operator {operator} {label!r}{self._icon(icon)}"
                           + (f" {{{props.describe()}}}" if props._set else ""))
        return props

    def _do_operator(self, operator, text=None, icon="NONE", **_):
        return self._button("operator", operator, text, icon)

    def _do_operator_menu_hold(self, operator, text=None, icon="NONE", menu="", **_):
        self._s.registered(f"operator_menu_hold(menu={menu!r})", menu, self._s.bpy.types.Menu)
        return self._button("operator_menu_hold", operator, text, icon)

    def _operator_enum(self, fname, operator, property, text=None, icon="NONE"):
        s = self._s
        rna = s.operator_rna(f"{fname}({operator!r})", operator)
        if property not in rna.properties.keys() or rna.properties[property].type != "ENUM":
            s.fail(f"{fname}({operator!r}, {property!r}): the operator has no enum property '{property}'")
        label = rna.name if text is None else text
        self._items.append(f"{fname} {operator}.{property} {label!r}{self._icon(icon)}")

    def _do_operator_menu_enum(self, operator, property, text=None, icon="NONE", **_):
        self._operator_enum("operator_menu_enum", operator, property, text, icon)

    def _do_operator_enum(self, operator, property, icon="NONE", **_):
        self._operator_enum("operator_enum", operator, property, None, icon)

    def _do_menu(self, menu, text=None, icon="NONE", **_):
        cls = self._s.registered(f"menu({menu!r})", menu, self._s.bpy.types.Menu)
        self._items.append(f"menu {menu} {cls.bl_label if text is None else text!r}{self._icon(icon)}")

    def _do_popover(self, panel, text=None, icon="NONE", **_):
        cls = self._s.registered(f"popover({panel!r})", panel, self._s.bpy.types.Panel)
        self._items.append(f"popover {panel} {cls.bl_label if text is None else text!r}{self._icon(icon)}")

    def _do_template_list(self, listtype_name, list_id, dataptr, propname, active_dataptr, active_propname,
                          **kw):
        s = self._s
        what = f"template_list({listtype_name!r})"
        cls = s.registered(what, listtype_name, s.bpy.types.UIList)
        coll = s.rna_property(what, dataptr, propname)
        if coll is None or coll.type != "COLLECTION":
            s.fail(f"{what}: {dataptr.bl_rna.identifier}.{propname} is not a collection")
        active = s.rna_property(what, active_dataptr, active_propname)
        if active is None or active.type != "INT" or getattr(active, "array_length", 0):
            s.fail(f"{what}: {active_dataptr.bl_rna.identifier}.{active_propname} is not an int")
        items = getattr(dataptr, propname)
        index = getattr(active_dataptr, active_propname)
        node = Layout(s, "list", f"{listtype_name} {dataptr.bl_rna.identifier}.{propname}: {len(items)} items, "
                                 f"active {index}")
        self._items.append(node)
        ul = Instance(cls, layout_type="DEFAULT", list_id=list_id, use_filter_show=False, filter_name="",
                      bitflag_filter_item=1 << 30)
        if "draw_filter" in _own(cls):
            ul.draw_filter(s.context, Layout(s, "filter"))
        shown = range(len(items))
        if "filter_items" in _own(cls):
            flags, order = ul.filter_items(s.context, dataptr, propname)
            for name, seq in (("flags", flags), ("order", order)):
                if len(seq) not in (0, len(items)):
                    s.fail(f"{what}: filter_items returned {len(seq)} {name} for {len(items)} items")
            if len(flags):
                shown = [i for i in shown if flags[i] & ul.bitflag_filter_item]
        if "draw_item" in _own(cls):
            s.lists_drawn.add(listtype_name)
            for i in shown:
                row = Layout(s, "item", f"{i}{' (active)' if i == index else ''}")
                node._items.append(row)
                ul.draw_item(s.context, row, dataptr, items[i], 0, active_dataptr, active_propname, i)

    # -- outline --------------------------------------------------------------------------------
    def outline(self, indent: int = 0) -> list[str]:
        lines = []
        for item in self._items:
            if isinstance(item, Layout):
                flags = "".join(f" {k}={v!r}" for k, v in item._attrs.items())
                lines.append("  " * indent + f"{item._kind}{(' ' + item._detail) if item._detail else ''}{flags}")
                lines.extend(item.outline(indent + 1))
            else:
                lines.append("  " * indent + (item() if callable(item) else item))
        return lines


def _own(cls) -> set[str]:
    """Names defined by `cls` and its Python bases (not by Blender's base types)."""
    names = set()
    for k in cls.__mro__:
        if k.__module__.startswith("bpy") or k is object:
            continue
        names.update(vars(k))
    return names


def physkey_panels(bpy, module_name: str) -> list:
    """The registered Panel classes of the installed add-on whose idname starts with PHYSKEY_, in
    registration order."""
    found, todo = [], list(bpy.types.Panel.__subclasses__())
    while todo:
        cls = todo.pop(0)
        todo.extend(cls.__subclasses__())
        if getattr(cls, "bl_idname", "").startswith("PHYSKEY_") and cls.__module__.startswith(module_name) \
                and cls.is_registered and cls not in found:
            found.append(cls)
    return found


def physkey_lists(bpy, module_name: str) -> list:
    return [c for c in bpy.types.UIList.__subclasses__()
            if c.__name__.startswith("PHYSKEY_") and c.__module__.startswith(module_name) and c.is_registered]


def draw_panel(bpy, cls, context=None):
    """Draw panel `cls` into a recorder: (outline lines, session); (None, session) when its poll says no."""
    context = context or bpy.context
    session = Session(bpy, context, cls.bl_idname)
    if "poll" in _own(cls) and not cls.poll(context):
        return None, session
    layout = Layout(session)
    panel = Instance(cls, layout=layout, bl_idname=cls.bl_idname)
    own = _own(cls)
    lines = []
    for name in ("draw_header_preset", "draw_header"):
        if name in own:
            header = Layout(session, "header")
            getattr(Instance(cls, layout=header), name)(context)
            lines += ["header"] + header.outline(1)
    panel.draw(context)
    session.finish()
    return lines + layout.outline(), session


def outline_text(bpy, module_name: str, context=None) -> str:
    """Every PhysKey panel drawn in the current state, as text."""
    out = []
    for cls in physkey_panels(bpy, module_name):
        lines, _ = draw_panel(bpy, cls, context)
        out.append(f"== {cls.bl_label} ({cls.bl_idname}) ==")
        out.extend(["(hidden: poll is False)"] if lines is None else lines)
    return "\n".join(out)
