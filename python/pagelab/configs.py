"""Configuration dicts (TOML tables as Python dicts): laying one over another, and
naming a value's type in an error message as TOML calls it."""

from __future__ import annotations

import copy
from typing import Any


def merge(base: dict, over: dict) -> dict:
    """``over`` laid over ``base``, tables merged key by key (copies)."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def toml_kind(value: Any) -> str:
    """'a number', 'a table', ...: what a value is, in a TOML user's words."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__
