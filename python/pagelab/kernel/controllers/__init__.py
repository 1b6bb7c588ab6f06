"""The kernel backend's controllers (docs/kernel.md), one file each; base.py holds what
they share. :func:`controllers_for` builds the ones a configuration asks for."""

from __future__ import annotations

from typing import List

from .base import CONTROL_MS, Controller, ProcView, RunView, resolved_controls
from .gang import GangController, gang_controller

__all__ = ["CONTROL_MS", "Controller", "GangController", "ProcView", "RunView", "controllers_for",
           "resolved_controls"]


def controllers_for(engine_config: dict, name: str, dedicated_ns=None) -> List[Controller]:
    """The controllers the configuration asks for, in the order they act each tick."""
    out: List[Controller] = []
    if "gang" in engine_config:
        out.append(gang_controller(resolved_controls(engine_config, name), engine_config, name))
    return out
