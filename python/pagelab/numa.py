"""NUMA runs (numa-page-migration.txt): a local/remote multiprocessor with one process
per node and page migration daemons. A configuration is a ``[numa]`` table (see
docs/numa.md); ``pagelab run`` recognises it and runs it here."""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

from . import _core
from ._core import PagelabError
from .api import html_table
from .system import check_numbers
from .version import build_info

#: keys of [numa] (the engine checks values; this list only gives a clear first error)
NUMA_KEYS = ("page_size", "preset", "local_ns", "remote_factor", "history", "migration", "daemons",
             "block_us", "examine_ns", "examine_order", "copy_ns_per_byte", "pte_update_ns", "private_ns",
             "repeat_private_ns", "memory_contention", "memory_ns", "seed", "workload")


class NumaResult:
    """One NUMA run: each processor's completion time, references, migrations."""

    def __init__(self, raw: dict, config: Optional[dict] = None, name: str = "config"):
        self.raw = raw
        self.config = config
        self.name = name

    @property
    def mean_s(self) -> float:
        """The mean of the processors' completion times (the paper's measure), seconds."""
        return self.raw["mean_ns"] / 1e9

    @property
    def max_s(self) -> float:
        return self.raw["max_ns"] / 1e9

    @property
    def migrations(self) -> int:
        return self.raw["migrations"]

    def summary(self) -> dict:
        r = self.raw
        refs = r["local_refs"] + r["remote_refs"]
        return {"workload": r["workload"], "pages": r["pages"], "mean_s": self.mean_s, "max_s": self.max_s,
                "references": refs, "remote_share": r["remote_refs"] / refs if refs else 0.0,
                "migrations": r["migrations"], "lock_wait_s": r["lock_wait_ns"] / 1e9,
                "daemon_passes": sum(d["passes"] for d in r["daemons"]),
                "daemon_lock_wait_s": sum(d["lock_wait_ns"] for d in r["daemons"]) / 1e9}

    def to_json(self) -> str:
        return json.dumps({"config": self.config, "result": self.raw, "pagelab": build_info()}, indent=2)

    def _repr_html_(self) -> str:
        import pandas as pd

        return html_table(repr(self), pd.DataFrame([self.summary()]))

    def __repr__(self) -> str:
        return f"NumaResult({self.raw['workload']!r}, mean {self.mean_s:.3f} s, {self.migrations} migrations)"


def check_numa_config(config: Any, name: str) -> dict:
    """The engine's JSON structure of a ``{"numa": {...}}`` configuration; the top level
    and the key names are checked here, values by the engine."""
    if not isinstance(config, dict) or set(config) != {"numa"}:
        keys = ", ".join(config) if isinstance(config, dict) else type(config).__name__
        raise PagelabError(f"{name}: a NUMA configuration has one table [numa] and nothing else (got {keys})")
    numa = config["numa"]
    if not isinstance(numa, dict):
        raise PagelabError(f"{name}: numa: expected a table")
    for key in numa:
        if key not in NUMA_KEYS:
            raise PagelabError(f"{name}: numa: unknown key '{key}' (expected {', '.join(NUMA_KEYS)})")
    workload = numa.get("workload")
    if not isinstance(workload, dict) or not isinstance(workload.get("name"), str):
        raise PagelabError(f"{name}: numa.workload: expected a table with a name, e.g. "
                           "[numa.workload] name = \"vecmat\"")
    return numa


def run_numa(config: dict, name: str = "config", progress: Optional[Callable[[int], Any]] = None) -> NumaResult:
    """Runs ``{"numa": {...}}`` (the TOML structure as a dict)."""
    numa = check_numa_config(config, name)
    check_numbers(numa, name, "numa")
    try:
        raw = _core.run_numa(json.dumps(numa, allow_nan=False), progress)
    except PagelabError as err:
        raise PagelabError(f"{name}: {err}") from None
    return NumaResult(raw, config=config, name=name)


def numa_workloads() -> list:
    """The NUMA workloads: name, summary, parameters."""
    return _core.numa_workloads()
