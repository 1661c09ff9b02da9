"""Typed JSON ↔ dataclass conversion with validation that names the failing field path.

The scene and task formats are plain dataclasses; this module turns JSON objects into them (checking
types, unknown keys, finiteness and sign) and back, so every format shares one set of rules and every
error reads like `character.bodies[3].geoms[0].size[1]: must be > 0, got -0.1`.

Field metadata understood: `positive` (> 0), `nonneg` (>= 0), `length` (exact list length),
`min_length`, `min` and `max` (inclusive bounds of a number), `choices` (allowed strings), `nonempty`
(strings; default true), `multiline` (a string that may hold newlines and tabs; other control
characters are refused in every string). Settings fields also carry `description`, `soft_min` and
`soft_max` for the people and user interfaces that set them (Blender's properties read them); the
checks here ignore those.
"""
from __future__ import annotations

import dataclasses
import json
import math
import re
import types
import typing
import unicodedata
from typing import Any

from .errors import InvalidInput

_MISSING = dataclasses.MISSING


def _join(path: str, key) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    key = str(key) or '""'  # an empty key still shows in the path
    return f"{path}.{key}" if path else key


def describe(value) -> str:
    """A short rendering of a JSON value for error messages: scalars as JSON, containers by type."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        # str() of a huge int is slow, and refused past 4300 digits.
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    if isinstance(value, str) and len(value) > 40:
        value = value[:40]
    text = json.dumps(value) if isinstance(value, (int, float, str, bool, type(None))) else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


INT_LIMIT = 2 ** 63 - 1  # integers beyond int64 cannot reach numpy or MuJoCo


def _check_number(value, path: str, meta: dict, integer: bool) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInput(path, f"must be a number, got {describe(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(path, f"must be finite, got {value}")
    if integer:
        if isinstance(value, float) and not value.is_integer():
            raise InvalidInput(path, f"must be an integer, got {describe(value)}")
        if abs(value) > INT_LIMIT:
            raise InvalidInput(path, f"must be between -{INT_LIMIT} and {INT_LIMIT}, got {describe(value)}")
        value = int(value)
    else:
        try:
            value = float(value)  # an integer beyond ±1.8e308 has no float
        except OverflowError:
            raise InvalidInput(path, f"must be finite, got {describe(value)}") from None
    if meta.get("positive") and not value > 0:
        raise InvalidInput(path, f"must be > 0, got {value}")
    if meta.get("nonneg") and not value >= 0:
        raise InvalidInput(path, f"must be >= 0, got {value}")
    if "min" in meta and not value >= meta["min"]:
        raise InvalidInput(path, f"must be at least {meta['min']}, got {value}")
    if "max" in meta and not value <= meta["max"]:
        raise InvalidInput(path, f"must be at most {meta['max']}, got {value}")
    return value


def _check_text(value: str, path: str, multiline: bool) -> None:
    """Names end up in MuJoCo (C strings: a NUL cuts them short), in MJCF (XML has no control
    characters) and in UTF-8 files, so control characters and lone surrogates (which JSON's \\ud800
    escapes can produce) are refused; a `multiline` note may hold newlines and tabs."""
    allowed = "\n\r\t" if multiline else ""
    for i, c in enumerate(value):
        if unicodedata.category(c) in ("Cc", "Cs") and c not in allowed:
            kind = "a lone surrogate" if unicodedata.category(c) == "Cs" else "a control character"
            raise InvalidInput(path, f"must not contain {kind} ({repr(c)[1:-1]} at position {i})")


def parse(tp, value, path: str, meta: dict | None = None):
    """Convert a JSON value to type `tp`, raising InvalidInput(path, …) on anything wrong."""
    meta = meta or {}
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return parse(args[0], value, path, meta)
    if tp is Any:
        return value
    if tp is float or tp is int:
        return _check_number(value, path, meta, integer=tp is int)
    if tp is bool:
        if not isinstance(value, bool):
            raise InvalidInput(path, f"must be true or false, got {describe(value)}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise InvalidInput(path, f"must be a string, got {describe(value)}")
        if "choices" in meta and value not in meta["choices"]:
            raise InvalidInput(path, f"must be one of {', '.join(meta['choices'])}; got {describe(value)}")
        if meta.get("nonempty", True) and not value:
            raise InvalidInput(path, "must not be empty")
        if not value.isprintable():
            _check_text(value, path, multiline=meta.get("multiline", False))
        return value
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise InvalidInput(path, f"must be a list, got {describe(value)}")
        if "length" in meta and len(value) != meta["length"]:
            raise InvalidInput(path, f"must have {meta['length']} entries, got {len(value)}")
        if len(value) < meta.get("min_length", 0):
            n = meta["min_length"]
            raise InvalidInput(path, f"must have at least {n} {'entry' if n == 1 else 'entries'}, got {len(value)}")
        item_meta = {k: v for k, v in meta.items() if k in ("positive", "nonneg", "choices")}
        return [parse(item_tp, v, _join(path, i), item_meta) for i, v in enumerate(value)]
    if origin is dict:
        _, val_tp = typing.get_args(tp)
        if not isinstance(value, dict):
            raise InvalidInput(path, f"must be an object, got {describe(value)}")
        item_meta = {k: v for k, v in meta.items() if k in ("positive", "nonneg")}
        return {str(k): parse(val_tp, v, _join(path, k), item_meta) for k, v in value.items()}
    if dataclasses.is_dataclass(tp):
        return from_dict(tp, value, path)
    raise TypeError(f"schema: unsupported type {tp!r} at {path}")


def from_dict(cls, data, path: str = ""):
    """Build dataclass `cls` from a JSON object: unknown keys, missing required keys and bad values
    are reported with their path."""
    if not isinstance(data, dict):
        raise InvalidInput(path, f"must be an object, got {describe(data)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for key in data:
        if key not in fields:
            raise InvalidInput(_join(path, key), f"unknown field (expected one of: {', '.join(fields)})")
    kwargs = {}
    for name, f in fields.items():
        sub = _join(path, name)
        if name not in data:
            if f.default is _MISSING and f.default_factory is _MISSING:
                raise InvalidInput(sub, "is required")
            continue
        kwargs[name] = parse(hints[name], data[name], sub, dict(f.metadata))
    obj = cls(**kwargs)
    check = getattr(obj, "check", None)
    if check is not None:
        check(path)
    return obj


def to_dict(obj) -> Any:
    """Dataclass tree → JSON-ready dict, fields in declaration order (deterministic output)."""
    if dataclasses.is_dataclass(obj):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


_FLAT_LIST = re.compile(r"\[\s*((?:[-+0-9.eE]+|null|true|false|\"[^\"\n]*\")"
                        r"(?:,\s*(?:[-+0-9.eE]+|null|true|false|\"[^\"\n]*\"))*)\s*\]")


def format_json(data) -> str:
    """Indented JSON with short lists of scalars kept on one line (readable, diff-friendly, stable)."""
    text = json.dumps(data, indent=1, allow_nan=False)
    return _FLAT_LIST.sub(lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text) + "\n"


def dumps(obj) -> str:
    return format_json(to_dict(obj))


def load_json_text(text: str, what: str):
    """Parse JSON text, turning syntax errors into one-line InvalidInput messages."""
    try:
        return json.loads(text, parse_constant=lambda c: float(c))
    except json.JSONDecodeError as e:
        raise InvalidInput(what, f"malformed JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise InvalidInput(what, "malformed JSON: nested too deeply") from None
    except ValueError:  # Python refuses integer literals of more than 4300 digits
        raise InvalidInput(what, "malformed JSON: a number with more than 4300 digits") from None
