"""Gang scheduling with adaptive paging on the kernel (gang-adaptive-paging.txt; the
simulator's crates/core/src/system/gang.rs and the mechanisms' files beside it;
docs/kernel.md "Gang scheduling with adaptive paging").

One machine: each job is one process (a runner performer or a command) in its own child
of the run's limited memory cgroup. The scheduler is this controller, as the paper's was
a user-level process (section 3.5, figure 5): the running job's processes get SIGSTOP at
the end of its quantum and the next unfinished job's get SIGCONT (``mode = "gang"``), or
each job runs to completion in turn (``"batch"``); a job that ends switches at once.
The mechanisms act where the paper's kernel acted inside swap_out and the fault path,
but from user space, at the switches and on the controller's ticks:

- ``so``, selective page-out (figure 2: while free pages are below freepages.high, take
  the outgoing process's oldest page): at the switch and on every tick of the quantum,
  when the room left under the run's limit is below a reserve, the outgoing job's
  resident anonymous pages are paged out until it is not (``page_out``); the kernel's
  own reclaim, which takes from every job's cgroup in turn, then has nothing to do.
- ``ao``, aggressive page-out (figure 3): at the switch, the outgoing job is paged out
  at once by what the incoming one needs: the pages it referenced in its previous
  quantum (clear_refs at its switch-in, smaps Referenced at its switch-out) less those
  still resident, plus the reserve, less the room; nothing on its first quantum.
- ``ai``, adaptive page-in (figure 4): at switch-out the job's resident pages are
  recorded as address runs (pagemap present bits); at its switch-in, before it
  continues, the recorded runs now swapped are read by process_madvise(MADV_WILLNEED),
  in address order, as many runs per call as the kernel takes (and, with ``so``, with
  room made first).
- ``bg``, background writing (section 3.4): the kernel cannot write an anonymous page
  and keep it mapped. In the last ``bg_fraction`` of the quantum, when the switch will
  have to page out, the running job's pages that have no swap copy (kpageflags: not in
  the swap cache) and were not written since the window opened (soft-dirty bits cleared
  then) are passed to MADV_PAGEOUT: written and unmapped, but kept in memory in the swap
  cache until reclaimed (a touch maps them back without I/O), so that the switch frees
  them without a write.

A page-out (``page_out``) is MADV_PAGEOUT over the job's first resident runs (address
order: the kernel does not show its LRU order per page), which starts the writes, then
the job's cgroup is reclaimed by that many pages (cgroups.reclaim), which frees the
written pages (MADV_PAGEOUT leaves dirty ones charged, in the swap cache, until reclaim
finds them) and, first, pages background writing already wrote."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from ..._core import PagelabError
from ..cgroups import members
from ..madvise import MADV_PAGEOUT, MADV_WILLNEED, pidfd_open, process_madvise
from ..pagemap import (KPF_ACTIVE, KPF_REFERENCED, KPF_SWAPCACHE, KPF_WRITEBACK, PAGE, PRESENT, SWAPPED, PageMap,
                       addr_runs, anon_referenced_pages, has_flag, intersect, page_flags, run_pages, take_pages)
from ..procfs import clear_refs, process_sample
from .base import Controller, ProcView, RunView

#: figure 2's target: Linux 2.2's freepages.high, 3 x (memory >> 7), as a share of the limit
RESERVE_SHARE = 3.0 / 128.0
#: ... or twice the most the running job took in one tick (a user-space page-out acts once a
#: tick, the paper's in the allocation path), no more than it can still need (_reserve)
RESERVE_TICKS = 2.0
#: adaptive page-in: pages read per process_madvise call at most when ``so`` makes room first
AI_CHUNK_PAGES = 4096
#: the first part of a quantum whose major faults a switch's details record (figure 1's compaction)
EARLY_SHARE = 0.25
#: how long a stop waits for the process to be stopped (s)
STOP_WAIT_S = 2.0


@dataclass
class _Job:
    proc: ProcView
    pidfd: Optional[int]
    pages: PageMap
    cgroup: Path
    done: bool = False
    stopped: bool = False
    #: pages referenced in its previous quantum (ao); None before it has run one
    working_set: Optional[int] = None
    #: ai's record: its resident runs at its last switch-out
    record: List[tuple] = field(default_factory=list)
    #: runs background writing wrote in its last window (still in the swap cache unless reclaimed)
    bg_runs: List[tuple] = field(default_factory=list)
    #: a page-out of it freed nothing since its last switch-out: no more tries until the next
    exhausted: bool = False
    #: its major faults and its cgroup's refaults at its last switch-in
    faults_at_in: int = 0
    refaults_at_in: int = 0
    #: its largest growth in one tick (pages), any quantum so far: selective page-out's reserve
    max_growth: int = 0


class GangController(Controller):
    """The gang scheduler and the adaptive paging mechanisms of one kernel run."""

    name = "gang"

    def __init__(self, gang: dict, names: List[str]):
        self.mode = gang["mode"]
        self.quantum_s = float(gang["quantum_s"]) if self.mode == "gang" else float("inf")
        self.mechanisms = set(gang["mechanisms"])
        self.bg_fraction = float(gang["bg_fraction"])
        self.names = list(names)
        self.jobs: Dict[int, _Job] = {}
        self.active: Optional[int] = None
        self.outgoing: Optional[int] = None
        self.quantum_start = 0.0
        self.last_usage: Optional[int] = None
        self.last_swap = 0
        #: the time of the last tick, and the interval between ticks (the backend's control_ms)
        self.last_tick_s: Optional[float] = None
        self.tick_s = 0.05
        self.bg_open = False
        self.early_done = True
        self.switch_log: List[dict] = []
        #: what each switch did: its time, the jobs, the pages each mechanism moved, how long it took
        self.switch_details: List[dict] = []
        self.stats = {"switches": 0, "so_pages": 0, "ao_pages": 0, "ao_written": 0, "ai_pages": 0, "ai_reads": 0,
                      "bg_pages": 0, "so_written": 0, "page_out_calls": 0, "running_evicted": 0}

    def has(self, m: str) -> bool:
        return m in self.mechanisms

    # ------------------------------------------------------------ the backend's calls

    def started(self, view: RunView, proc: ProcView) -> None:
        view.keeps_referenced = True
        job = _Job(proc, pidfd_open(proc.pid), PageMap(proc.pid), Path(proc.cgroup))
        self.jobs[proc.index] = job
        if self.active is None:
            self.active = proc.index
            self.quantum_start = view.now_s
            self.switch_log.append({"t_ns": int(view.now_s * 1e9), "from": None, "to": proc.name})
            clear_refs(proc.pid, "1")
            self._mark_in(view, job)
        else:
            self._stop(job, view)

    def tick(self, view: RunView, now_s: float) -> None:
        if self.last_tick_s is not None:
            self.tick_s = now_s - self.last_tick_s
        self.last_tick_s = now_s
        if self.active is None:
            return
        if now_s - self.quantum_start >= self.quantum_s:
            self._switch(view, now_s)
            return
        self._track_growth(view)
        self._early(now_s)
        if self.has("so"):
            self._selective(view, "so_pages")
        if self.has("bg"):
            self._background(view, now_s)

    def exited(self, view: RunView, proc: ProcView) -> None:
        job = self.jobs.get(proc.index)
        if job is None:
            return
        job.done = True
        job.stopped = False
        if self.outgoing == proc.index:
            self.outgoing = None
        if self.active == proc.index:
            self._switch(view, view.now_s)

    def finish(self, view: RunView) -> None:
        """No job stays stopped, whatever ended the run (the backend then kills every
        process left and removes the cgroups)."""
        for job in self.jobs.values():
            if not job.done:
                self._signal(job, signal.SIGCONT)
                job.stopped = False
                job.proc.stopped = False
            if job.pidfd is not None:
                try:
                    os.close(job.pidfd)
                except OSError:
                    pass
                job.pidfd = None

    def result(self) -> Dict[str, object]:
        return {"gang": dict(self.stats), "switches": list(self.switch_log), "switch_details": self.switch_details,
                "mode": self.mode, "mechanisms": sorted(self.mechanisms)}

    # ------------------------------------------------------------ the scheduler

    def _next(self, after: Optional[int]) -> Optional[int]:
        n = len(self.names)
        start = 0 if after is None else after + 1
        for k in range(n):
            i = (start + k) % n
            if i in self.jobs and not self.jobs[i].done:
                return i
        return None

    def _switch(self, view: RunView, now_s: float) -> None:
        """The running job's quantum ended (or it ended): the next unfinished job in the
        table takes the machine, with the mechanisms that are on."""
        cur = self.active
        out = cur if cur is not None and not self.jobs[cur].done else None
        nxt = self._next(cur)
        if nxt is None:
            self.active = None
            return
        if nxt == out:
            # the only job left keeps the machine: no more switches
            self.quantum_start = now_s
            self.quantum_s = float("inf")
            return
        t0 = time.monotonic()
        written0 = self.stats["ao_written"] + self.stats["so_written"]
        # "from": the job that ran until now, also when it has just ended (the simulator's log)
        detail = {"t_s": round(now_s, 3), "from": None if cur is None else self.jobs[cur].proc.name,
                  "to": self.jobs[nxt].proc.name}
        if out is not None:
            job = self.jobs[out]
            job.working_set = anon_referenced_pages(job.proc.pid)
            self._stop(job, view)
            job.exhausted = False
            # what its quantum cost it: major faults and pages read back (its cgroup's refaults)
            s = process_sample(job.proc.pid)
            if s is not None:
                detail["quantum_major_faults"] = s["major_faults"] - job.faults_at_in
            detail["quantum_pages_read"] = view.cgroups.refaults_anon(job.cgroup) - job.refaults_at_in
            if self.has("ai"):
                resident = job.pages.runs(PRESENT)
                job.record = _merge(resident, job.bg_runs)
                detail["recorded"] = run_pages(job.record)
            detail["working_set"] = job.working_set
            detail["bg_pages"] = run_pages(job.bg_runs)
        self.outgoing = out
        self.active = nxt
        self.quantum_start = now_s
        self.last_usage = None
        self.bg_open = False
        self.early_done = False
        self.stats["switches"] += 1
        self.switch_log.append({"t_ns": int(now_s * 1e9), "from": detail["from"], "to": detail["to"]})
        incoming = self.jobs[nxt]
        if out is not None and self.has("ao"):
            detail["ao_pages"] = self._aggressive(view, out, nxt)
        if out is not None and self.has("so"):
            detail["so_pages"] = self._selective(view, "so_pages")
        if self.has("ai"):
            detail["ai_pages"] = self._page_in(view, incoming)
        incoming.bg_runs = []
        clear_refs(incoming.proc.pid, "1")
        self._mark_in(view, incoming)
        self._cont(incoming)
        detail["written"] = self.stats["ao_written"] + self.stats["so_written"] - written0
        detail["took_s"] = round(time.monotonic() - t0, 4)
        self.switch_details.append(detail)

    def _early(self, now_s: float) -> None:
        """The running job's major faults in the first EARLY_SHARE of its quantum (the
        paper's figure 1: paging at the start of a quantum), into the switch's details."""
        if self.early_done or not self.switch_details or self.quantum_s == float("inf"):
            return
        if now_s - self.quantum_start >= EARLY_SHARE * self.quantum_s:
            self.early_done = True
            job = self.jobs[self.active]
            s = process_sample(job.proc.pid)
            if s is not None:
                self.switch_details[-1]["early_major_faults"] = s["major_faults"] - job.faults_at_in

    def _mark_in(self, view: RunView, job: _Job) -> None:
        s = process_sample(job.proc.pid)
        job.faults_at_in = 0 if s is None else s["major_faults"]
        job.refaults_at_in = view.cgroups.refaults_anon(job.cgroup)

    # ------------------------------------------------------------ signals

    def _signal(self, job: _Job, sig: int) -> None:
        pids = set(members(job.cgroup)) | {job.proc.pid}
        for pid in pids:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def _stop(self, job: _Job, view: RunView) -> None:
        """SIGSTOP to every process of the job, and wait until the kernel has stopped
        them (a page-out must not race with the job's own touches)."""
        self._signal(job, signal.SIGSTOP)
        job.stopped = job.proc.stopped = True
        deadline = time.monotonic() + STOP_WAIT_S
        while time.monotonic() < deadline:
            s = process_sample(job.proc.pid)
            if s is None or s["state"] in ("T", "t", "Z", "X"):
                return
            time.sleep(0.001)

    def _cont(self, job: _Job) -> None:
        self._signal(job, signal.SIGCONT)
        job.stopped = job.proc.stopped = False

    # ------------------------------------------------------------ memory

    def _room(self, view: RunView) -> int:
        """Pages left under the run's limit."""
        if view.limit_bytes is None:
            return 1 << 40
        return max(0, view.limit_bytes - view.cgroups.usage_bytes()) // PAGE

    def _high(self, view: RunView) -> int:
        """Figure 2's freepages.high for the run's limit (pages)."""
        return 0 if view.limit_bytes is None else int(RESERVE_SHARE * view.limit_bytes / PAGE)

    def _reserve(self, view: RunView) -> int:
        """Selective page-out's target room (pages): the high mark, or what the running
        job can take before the next tick (twice its largest growth in one tick this
        quantum or an earlier one), but no more than it can still need: its pages on swap, or its working
        set not in memory, plus the high mark."""
        high = self._high(view)
        if view.limit_bytes is None or self.active is None:
            return high
        job = self.jobs[self.active]
        use = view.cgroups.usage_bytes(job.cgroup) // PAGE
        need = view.cgroups.swap_bytes(job.cgroup) // PAGE
        if job.working_set is not None:
            need = max(need, job.working_set - use)
        return int(max(high, min(RESERVE_TICKS * job.max_growth, need + high)))

    def _track_growth(self, view: RunView) -> None:
        """The running job's largest growth in one tick (pages), and its pages
        the kernel's reclaim put on swap while it ran (``running_evicted``: the rises of
        its cgroup's swap-only pages from tick to tick, a lower bound since its swap-ins
        in the same tick hide some)."""
        job = self.jobs[self.active]
        use = view.cgroups.usage_bytes(job.cgroup) // PAGE
        swap = view.cgroups.swap_bytes(job.cgroup) // PAGE
        if self.last_usage is not None:
            job.max_growth = max(job.max_growth, use - self.last_usage)
            self.stats["running_evicted"] += max(0, swap - self.last_swap)
        self.last_usage, self.last_swap = use, swap

    def page_out(self, view: RunView, job: _Job, pages: int) -> tuple:
        """Takes about ``pages`` pages of the (stopped) job out of memory: those background
        writing already wrote first, then MADV_PAGEOUT over its first resident pages
        (address order) and the kernel's reclaim of its cgroup by as much. Returns
        (pages its cgroup's use fell by, pages written: those chosen that had no swap
        copy, by their frames' kpageflags; /proc/vmstat counts the machine's)."""
        if pages <= 0 or job.done or job.exhausted:
            return 0, 0
        before = view.cgroups.usage_bytes(job.cgroup)
        written = 0
        self.stats["page_out_calls"] += 1
        cached = run_pages(job.bg_runs)
        if cached:
            view.cgroups.reclaim(job.cgroup, min(cached, pages) * PAGE)
            job.bg_runs = []
        left = pages - max(0, before - view.cgroups.usage_bytes(job.cgroup)) // PAGE
        if left > 0 and job.pidfd is not None:
            addrs, pfns, _ = job.pages.resident()
            flags = page_flags(pfns)
            if flags is not None and len(addrs):
                # the oldest first, as the kernel's lists hold them: inactive and not
                # referenced, inactive and referenced, then active (address order within)
                rank = 2 * has_flag(flags, KPF_ACTIVE).astype(int) + has_flag(flags, KPF_REFERENCED).astype(int)
                pick = np.sort(np.argsort(rank, kind="stable")[:left])
                addrs, flags = addrs[pick], flags[pick]
                written = int((~has_flag(flags, KPF_SWAPCACHE)).sum())
            else:
                addrs = addrs[:left]
            if len(addrs):
                process_madvise(job.pidfd, addr_runs(addrs), MADV_PAGEOUT, PAGE)
                # clean pages left at once; the written ones wait for reclaim, which
                # waits for their writes (it finds them marked for reclaim; the memory
                # statistics that would say when they are written lag by up to 2 s)
                rest = pages - max(0, before - view.cgroups.usage_bytes(job.cgroup)) // PAGE
                view.cgroups.reclaim(job.cgroup, rest * PAGE)
        freed = max(0, before - view.cgroups.usage_bytes(job.cgroup)) // PAGE
        if freed == 0:
            job.exhausted = True  # nothing of it can go: the kernel's reclaim takes over
        return freed, written

    def _selective(self, view: RunView, counter: str) -> int:
        """Figure 2: room below the reserve is made from the outgoing job."""
        if self.outgoing is None:
            return 0
        job = self.jobs[self.outgoing]
        room, reserve = self._room(view), self._reserve(view)
        if room >= reserve or job.done:
            return 0
        out, written = self.page_out(view, job, reserve - room)
        self.stats[counter] += out
        self.stats["so_written"] += written
        return out

    def _aggressive(self, view: RunView, out: int, nxt: int) -> int:
        """Figure 3: room for the incoming job's working set not resident, plus the
        reserve, made from the outgoing job at once."""
        incoming = self.jobs[nxt]
        ws = incoming.working_set
        if ws is None:
            return 0
        # its pages in memory: mapped, and read back but not yet mapped again (the swap
        # cache), all charged to its cgroup
        resident = view.cgroups.usage_bytes(incoming.cgroup) // PAGE
        need = max(0, ws - resident) + self._high(view) - self._room(view)
        if need <= 0:
            return 0
        pages, written = self.page_out(view, self.jobs[out], need)
        self.stats["ao_pages"] += pages
        self.stats["ao_written"] += written
        return pages

    def _page_in(self, view: RunView, job: _Job) -> int:
        """Figure 4: the recorded runs now swapped out, read back in address order."""
        if not job.record or job.pidfd is None:
            return 0
        todo = intersect(job.record, job.pages.runs(SWAPPED))
        job.record = []
        total = run_pages(todo)
        if not total:
            return 0
        if not self.has("so"):
            _, calls = process_madvise(job.pidfd, todo, MADV_WILLNEED, PAGE)
            self.stats["ai_reads"] += calls
        else:
            # room first, from the outgoing job, for each chunk
            at = 0
            while at < len(todo):
                chunk, n = [], 0
                while at < len(todo) and n < AI_CHUNK_PAGES and len(chunk) < 1024:
                    chunk.append(todo[at])
                    n += todo[at][1]
                    at += 1
                need = n + self._high(view) - self._room(view)
                if need > 0 and self.outgoing is not None:
                    pages, written = self.page_out(view, self.jobs[self.outgoing], need)
                    self.stats["so_pages"] += pages
                    self.stats["so_written"] += written
                _, calls = process_madvise(job.pidfd, chunk, MADV_WILLNEED, PAGE)
                self.stats["ai_reads"] += calls
        self.stats["ai_pages"] += total
        return total

    def _background(self, view: RunView, now_s: float) -> None:
        """Section 3.4 as the kernel allows (module docstring)."""
        if self.quantum_s == float("inf"):
            return
        start = self.quantum_start + self.quantum_s * (1.0 - self.bg_fraction)
        job = self.jobs[self.active]
        if not self.bg_open:
            # a tick before the window: the soft-dirty bits are cleared, so that at the
            # window's first tick the pages written since are known
            if now_s + self.tick_s >= start:
                self.bg_open = True
                clear_refs(job.proc.pid, "4")
            return
        if now_s < start:
            return
        nxt = self._next(self.active)
        if nxt is None or nxt == self.active or job.pidfd is None:
            return
        ws = self.jobs[nxt].working_set
        if ws is None:
            return  # the next job has not run yet: no estimate of what the switch pages out
        resident = view.cgroups.usage_bytes(self.jobs[nxt].cgroup) // PAGE
        need = ws - resident - self._room(view) - run_pages(job.bg_runs)
        if need <= 0:
            return
        addrs, pfns, soft_dirty = job.pages.resident()
        if len(addrs) == 0:
            return
        flags = page_flags(pfns)
        if flags is None:
            return
        # no swap copy (a write is needed to free it), not under writeback, and not
        # written since the window opened (pagemap's soft-dirty bit clear)
        ok = ~has_flag(flags, KPF_SWAPCACHE) & ~has_flag(flags, KPF_WRITEBACK) & ~soft_dirty
        runs = take_pages(addr_runs(addrs[ok]), need)
        if not runs:
            return
        done, _ = process_madvise(job.pidfd, runs, MADV_PAGEOUT, PAGE)
        pages = done // PAGE
        self.stats["bg_pages"] += pages
        job.bg_runs = _merge(job.bg_runs, take_pages(runs, pages))


def _merge(a: List[tuple], b: List[tuple]) -> List[tuple]:
    """The union of two lists of runs, as sorted runs."""
    if not a:
        return list(b)
    if not b:
        return list(a)
    spans = sorted((s, s + n * PAGE) for s, n in list(a) + list(b))
    out = []
    cs, ce = spans[0]
    for s, e in spans[1:]:
        if s <= ce:
            ce = max(ce, e)
        else:
            out.append((cs, (ce - cs) // PAGE))
            cs, ce = s, e
    out.append((cs, (ce - cs) // PAGE))
    return out


def gang_controller(controls: dict, engine_config: dict, name: str) -> GangController:
    """The [gang] table (checked by the engine) as a controller for the kernel, which
    runs it on one machine: one-line errors for what a single machine cannot do."""
    g = controls["gang"]
    if g["nodes"] != 1:
        raise PagelabError(f"{name}: gang.nodes: the kernel backend runs on one machine (a job is one process): "
                           f"expected 1, got {g['nodes']}")
    for i, p in enumerate(engine_config["processes"]):
        if float(p.get("start_ms", 0.0)) != 0.0:
            raise PagelabError(f"{name}: process[{i}].start_ms: jobs of a gang run start together: expected 0")
    names = [str(p.get("name", f"process-{i}")) for i, p in enumerate(engine_config["processes"])]
    return GangController(g, names)
