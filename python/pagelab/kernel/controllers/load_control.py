"""Load control (token-ordered-lru.txt section 2.3; the simulator's load_control.rs) as
a controller of a kernel run (docs/kernel.md, "Load control").

Every ``window_s`` the run's major-fault rate is measured (the major faults of every
process's cgroup, memory.stat pgmajfault, over the time since the last measurement).
Above ``high_faults_per_s`` the process holding the most of the run's memory (its
cgroup's use) is suspended, unless it is the last one running; below
``low_faults_per_s`` the longest-suspended one is resumed; when every process left is
suspended the longest-suspended is resumed (as in the simulator, whose CPU would
otherwise idle). One action per measurement, as in load_control.rs.

Suspending is SIGSTOP to every member of the process's cgroup (a command's forked
children too), resuming SIGCONT to them. Not the v1 freezer: it is a hierarchy of its
own here (the processes would have to be moved into freezer cgroups as well as memory
ones), and a frozen task and a stopped one hold their memory alike. A stopped process's
pages age and go to the others, as a suspended one's do in the simulator. ``finish()``
resumes every process it stopped, whatever ended the run."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Dict, List, Optional

from ..._core import PagelabError
from ..cgroups import signal_members
from .base import Controller, ProcView, RunView


class _Proc:
    def __init__(self, pv: ProcView):
        self.pv = pv
        self.faults = 0
        self.suspended_since: Optional[int] = None
        self.suspended_ns = 0


class LoadController(Controller):
    """load_control.enabled = true on a kernel run."""

    name = "load_control"

    def __init__(self, cfg: dict):
        self.window_ns = max(1, int(round(float(cfg["window_s"]) * 1e9)))
        self.high = float(cfg["high_faults_per_s"])
        self.low = float(cfg["low_faults_per_s"])
        self.procs: Dict[str, _Proc] = {}
        #: suspended processes, oldest first
        self.suspended: List[str] = []
        self.events: List[dict] = []
        self.next_ns: Optional[int] = None
        self.last_ns = 0
        self.last_total = 0
        self.rates: List[float] = []
        self.counters = {"suspends": 0, "resumes": 0, "windows": 0, "max_rate": 0.0}

    def started(self, view: RunView, proc: ProcView) -> None:
        p = _Proc(proc)
        self.procs[proc.name] = p
        if self.next_ns is None:
            self.last_ns = int(view.now_s * 1e9)
            self.next_ns = self.last_ns + self.window_ns

    def tick(self, view: RunView, now_s: float) -> None:
        now = int(now_s * 1e9)
        for p in self.procs.values():
            if not p.pv.ended:
                p.faults = max(p.faults, self._faults(view, p.pv))
        if not self.suspended and all(p.pv.ended for p in self.procs.values()):
            return
        live = [p for p in self.procs.values() if not p.pv.ended]
        if live and all(p.pv.name in self.suspended for p in live):
            # nothing else runs: the longest-suspended goes on (the simulator's idle CPU)
            self._resume(self.suspended[0], now)
        if self.next_ns is None or now < self.next_ns:
            return
        total = sum(p.faults for p in self.procs.values())
        rate = (total - self.last_total) / max((now - self.last_ns) / 1e9, 1e-9)
        self.last_total, self.last_ns = total, now
        self.next_ns = now + self.window_ns
        self.counters["windows"] += 1
        self.counters["max_rate"] = max(self.counters["max_rate"], round(rate, 1))
        self.rates.append(round(rate, 1))
        candidates = [p for p in live if p.pv.name not in self.suspended]
        if rate > self.high and len(candidates) > 1:
            usage = {p.pv.name: view.cgroups.usage_bytes(Path(p.pv.cgroup)) for p in candidates}
            # the largest resident set; ties: the later process (load_control.rs)
            victim = max(candidates, key=lambda p: (usage[p.pv.name], -p.pv.index))
            self._suspend(victim, now)
        elif rate < self.low and self.suspended:
            self._resume(self.suspended[0], now)

    def exited(self, view: RunView, proc: ProcView) -> None:
        p = self.procs.get(proc.name)
        if p is not None and proc.name in self.suspended:
            # ended while stopped (killed): forget it
            self.suspended.remove(proc.name)
            p.pv.stopped = False
            self._account(p, int(view.now_s * 1e9))
        live = [q for q in self.procs.values() if not q.pv.ended]
        if live and all(q.pv.name in self.suspended for q in live):
            self._resume(self.suspended[0], int(view.now_s * 1e9))

    def finish(self, view: RunView) -> None:
        for name in list(self.suspended):
            try:
                self._resume(name, self.last_ns, event=False)
            except (OSError, PagelabError):
                pass

    def result(self) -> Dict[str, object]:
        return {"token_events": list(self.events),
                "processes": {n: {"suspended_ns": p.suspended_ns} for n, p in self.procs.items()},
                "rates_per_window": self.rates, "window_ns": self.window_ns,
                "high_faults_per_s": self.high, "low_faults_per_s": self.low, **self.counters}

    # ------------------------------------------------------------

    def _faults(self, view: RunView, proc: ProcView) -> int:
        try:
            n = view.cgroups.major_faults(Path(proc.cgroup))
        except (OSError, ValueError):
            n = 0
        return max(n, proc.major_faults)

    @staticmethod
    def _signal(p: _Proc, sig: int) -> None:
        signal_members(Path(p.pv.cgroup), sig, p.pv.pid)

    def _suspend(self, p: _Proc, now: int) -> None:
        self._signal(p, signal.SIGSTOP)
        p.pv.stopped = True
        p.suspended_since = now
        self.suspended.append(p.pv.name)
        self.counters["suspends"] += 1
        self.events.append({"t_ns": now, "event": "suspend", "process": p.pv.name})

    def _resume(self, name: str, now: int, event: bool = True) -> None:
        p = self.procs[name]
        self._signal(p, signal.SIGCONT)
        p.pv.stopped = False
        self.suspended.remove(name)
        self._account(p, now)
        self.counters["resumes"] += 1
        if event:
            self.events.append({"t_ns": now, "event": "resume", "process": name})

    @staticmethod
    def _account(p: _Proc, now: int) -> None:
        if p.suspended_since is not None:
            p.suspended_ns += max(0, now - p.suspended_since)
            p.suspended_since = None


def load_controller(controls: dict) -> Optional[Controller]:
    cfg = controls["load_control"]
    return LoadController(cfg) if cfg.get("enabled") else None
