"""Running a timed system: one node (a :class:`SystemResult`) or, with a ``[gang]``
table, gang-scheduled jobs over several nodes (a :class:`GangResult`). Apart from
system.py (configurations, one node's result) and gang.py (the gang's result, which
holds each node's SystemResult), so that neither has to import the other's caller."""

from __future__ import annotations

import os
from typing import Any, Callable, Optional, Union

from . import _core
from ._core import PagelabError
from .gang import GangResult
from .kernel.backend import run_kernel
from .system import ConfigLike, SystemResult, config_backend, engine_error, engine_json, load_config, read_toml


def engine_available() -> bool:
    return hasattr(_core, "run_system")


def run_system(config: ConfigLike, progress: Optional[Callable[[int], Any]] = None,
               backend: Optional[str] = None) -> Union[SystemResult, GangResult]:
    """Runs a timed multiprogrammed system. ``config`` is a TOML path or a dict of the
    same structure; ``progress`` is called with (simulated) milliseconds done.
    ``backend``: "simulator" or "kernel" (docs/kernel-backend.md); by default the
    configuration's ``backend`` key, else the simulator."""
    raw = config if isinstance(config, dict) else read_toml(config) if isinstance(config, (str, os.PathLike)) else None
    engine_config, name = load_config(config)
    if config_backend(raw, name, backend) == "kernel":
        return run_kernel(engine_config, name, progress)
    return run_engine(engine_config, name, progress)


def run_engine(engine_config: dict, name: str, progress=None):
    """Runs an already normalised configuration (the engine's structure): a
    :class:`SystemResult`, or with a ``[gang]`` table a :class:`pagelab.gang.GangResult`."""
    if not engine_available():
        raise PagelabError("this build of the engine has no timed system (pagelab._core.run_system): "
                           "rebuild with 'make build'")
    text = engine_json(engine_config, name)
    gang = "gang" in engine_config
    try:
        raw = (_core.run_gang if gang else _core.run_system)(text, progress)
    except PagelabError as err:
        raise engine_error(name, err) from None
    if gang:
        return GangResult(raw, config=engine_config, name=name)
    return SystemResult(raw, config=engine_config, name=name)
