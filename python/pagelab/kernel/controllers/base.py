"""What the kernel backend's controllers share (docs/kernel.md): the papers' mechanisms
that today's Linux leaves to user space, driven through cgroups, signals and
process_madvise while the run's processes run, one file each beside this one. Here: the
:class:`Controller` interface, the :class:`RunView` they act on, and the configuration's
[token], [load_control] and [gang] tables resolved by the engine (the simulator's keys,
where they mean the same).

The backend calls, in its supervision loop (backend.py ``_supervise``):
``started(view, proc)`` when a process starts, ``tick(view, now_s)`` every
``control_ms`` (default 50 ms), ``exited(view, proc)`` when one ends (``view.now_s``
its end), ``finish(view)`` when the run is over, however it ended, and then
``result()``, whose keys go into the run's result (``token_events`` as the simulator
has them, per-process counters into the processes' rows, the controller's own counters
under ``controllers``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ... import _core
from ..._core import PagelabError
from ...system import engine_error, engine_json

#: how often controllers act, unless the configuration's [kernel] control_ms says
CONTROL_MS = 50.0


@dataclass
class ProcView:
    """One process of the run as a controller sees it."""
    index: int
    name: str
    pid: int
    #: its cgroup (a child of the run's)
    cgroup: str
    #: cumulative major faults, resident and swapped bytes at the last tick
    major_faults: int = 0
    rss_bytes: int = 0
    swap_bytes: int = 0
    #: stopped by a controller (SIGSTOP), not ended
    stopped: bool = False
    ended: bool = False


@dataclass
class RunView:
    """What controllers act on: the run's processes, its cgroups (``cgroups``: a
    :class:`pagelab.kernel.cgroups.RunCgroups`), its limit and the time."""
    cgroups: object
    limit_bytes: Optional[int]
    page_size: int
    procs: List[ProcView] = field(default_factory=list)
    now_s: float = 0.0
    #: a controller reads the processes' referenced bits over spans of its own (the gang
    #: controller: a job's quantum), so the sampler reads them without clearing them
    keeps_referenced: bool = False

    def live(self) -> List[ProcView]:
        return [p for p in self.procs if not p.ended]


class Controller:
    """A mechanism acting on a kernel run. Subclasses override what they need."""

    #: the key of its counters in the result's ``controllers``
    name = "controller"

    def started(self, view: RunView, proc: ProcView) -> None:
        pass

    def tick(self, view: RunView, now_s: float) -> None:
        pass

    def exited(self, view: RunView, proc: ProcView) -> None:
        pass

    def finish(self, view: RunView) -> None:
        """The run is over (normally or not): undo what must not outlive it."""

    def result(self) -> Dict[str, object]:
        """Keys for the run's result: ``token_events`` (a list of {t_ns, event,
        process}), ``processes`` (by process name, counters for its row of the result:
        token_grabs, token_held_ns, suspended_ns) and this controller's own counters
        (under ``controllers``)."""
        return {}


def resolved_controls(engine_config: dict, name: str, dedicated_ns: Optional[List[int]] = None) -> dict:
    """[token], [load_control] and [gang] checked by the engine as the simulator checks
    them, every default filled in; with ``dedicated_ns`` the token's section 5.3 limits
    resolved as the simulator resolves them. ``command`` processes, which the simulator
    cannot run, are checked as a one-page stand-in (they have no stream to check)."""
    cfg = {k: v for k, v in engine_config.items() if k != "kernel"}
    cfg["processes"] = [p if "command" not in p else {"name": p.get("name", f"process-{i}"), "workload": "scan",
                                                     "params": {"pages": 1, "passes": 1}}
                        for i, p in enumerate(engine_config["processes"])]
    try:
        return json.loads(_core.kernel_controls(engine_json(cfg, name), dedicated_ns))
    except PagelabError as err:
        raise engine_error(name, err) from None
