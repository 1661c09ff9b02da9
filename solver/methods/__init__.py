"""Solve methods, looked up by the task's `method` name (see `base.Method` for the contract and
`solver/core/registry.py` for the names)."""
from __future__ import annotations

from ..core.registry import METHODS, check_name, resolve


def get_method(name: str):
    """The method registered as `name` (InvalidInput listing the registered names otherwise)."""
    check_name("method", METHODS, name, "method")
    return resolve(METHODS, name)
