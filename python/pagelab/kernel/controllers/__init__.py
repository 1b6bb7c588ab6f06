"""The kernel backend's controllers (docs/kernel.md), one file each; base.py holds what
they share. :func:`controllers_for` builds the ones a configuration asks for."""

from __future__ import annotations

from typing import List, Optional

from .base import CONTROL_MS, Controller, ProcView, RunView, resolved_controls
from .gang import GangController, gang_controller
from .load_control import LoadController, load_controller
from .token import TokenController, token_controller

__all__ = ["CONTROL_MS", "Controller", "GangController", "LoadController", "ProcView", "RunView",
           "TokenController", "controllers_for", "resolved_controls"]


def controllers_for(engine_config: dict, name: str, dedicated_ns=None, cpus: Optional[int] = None) -> List[Controller]:
    """The controllers the configuration asks for, in the order they act each tick: the
    gang scheduler (``[gang]``), the token (``[token] policy = "paper"``), then load
    control (``[load_control] enabled``). ``dedicated_ns``: the processes' runs alone
    (the token's holding limit is scaled to them; None: not known, no holding limit
    unless one is given). ``cpus``: how many CPUs the run's processes have (the
    shortage's charge slack is per CPU). A setting the kernel cannot follow is a one-line
    error naming its key."""
    controls = resolved_controls(engine_config, name, list(dedicated_ns) if dedicated_ns is not None else [])
    out: List[Controller] = []
    if "gang" in engine_config:
        out.append(gang_controller(controls, engine_config, name))
    for c in (token_controller(controls, engine_config, name, cpus), load_controller(controls)):
        if c is not None:
            out.append(c)
    return out
