"""The token-ordered LRU (token-ordered-lru.txt sections 5.2 and 5.3) as a controller of
a kernel run (docs/kernel.md, "Token-ordered protection").

The paper's token lived inside Linux 2.2's reclaim: a process asked for it before
``do_swap_page()``, and ``swap_out`` skipped the holder's pages while the holder had
unresolved faults. Today's kernel cannot be told to skip a process's pages, but a
user-space controller can decide, every ``[kernel] control_ms``, whose memory the run's
reclaim falls on:

- **who takes the token**: the same rules as the simulator's token.rs (``on_major_fault``,
  ``tick``, ``on_self_take``, ``on_exit``): under memory shortage a process that took
  major faults since the last tick takes the token when it is free and the process is
  not marked token-unsuitable (a priority process takes it from a holder without
  priority); the holder returns it after the holding limit ("timeout") or when it takes
  pages from itself faster than the abuse limit ("abuse"), and is then marked unsuitable
  for ``unsuitable_s``; it is released when the holder ends ("release"). The limits are
  the simulator's, resolved from the configuration and the runs alone
  (token_defaults.rs).
- **shortage** (section 5.2's "page faults due to memory shortage"): the run's cgroup met
  its limit since the last tick (v1 ``memory.failcnt``, v2 ``memory.events`` max grew),
  or it is within :data:`CHARGE_SLACK_PAGES` pages per CPU (+ ``token.shortage_margin``
  frames) of it; on v2 also stalls in its ``memory.pressure`` (PSI).
- **protection while the holder faults** (``swapping_status``): the holder counts as
  faulting until it has gone :data:`QUIET_NS` without a major fault; while it does, its
  memory is protected, with room for what its faults of the last tick brought in (its
  major faults x the pages a swap-in reads, ``2^vm.page-cluster``); after, the
  protection is lifted (its true LRU pages can go again).

  - cgroup v1 (no reclaim protection files): the limited parent reclaims from all its
    children when it meets its limit, so the holder is spared by keeping the parent below
    its limit: the *others'* own limits (``memory.limit_in_bytes`` of their child
    cgroups) are set so that together they hold at most what the holder and its room
    leave of the run's limit, the cut shared in proportion to what each holds above its
    floor (:data:`FLOOR_BYTES`), and the others' charges reclaim the others. A limit
    below a group's use is reached by reclaim in this process, racing the group's own
    faults: the group is stopped for the write (:meth:`TokenController._set_cap`). Lifted
    limits are written back as they were.
  - cgroup v2: the holder's ``memory.low`` is set to its use plus the same room: reclaim
    from the parent takes the others' memory first and the holder's only when nothing
    unprotected is left: the paper's exception handler.

- **self-takes** (abuse, section 5.3: "selects pages from itself during the page faults
  (no other programs can provide LRU pages to it)"): the kernel does not say whose page
  reclaim took. v1: in a protected tick in which the parent met its limit while every
  other process was at its floor, the holder's major faults are counted as pages taken
  from itself; v2: the holder's major faults in a protected tick in which its
  ``memory.events`` low grew (its protected memory was reclaimed). One major fault is one
  read from swap, as one of the simulator's single-page faults is one disk request: the
  abuse limit (a share of the faults the configured disk serves in the window) compares
  alike. Configure ``[disk]`` as this machine's (``pagelab kernel probe``) for the limit
  to mean what it means in the simulator.

``linux2620`` (the Linux 2.6.20 token) is refused: its protection pretends the holder's
pages referenced inside ``page_referenced_one`` only while the holder is inside a page
fault, a per-page, per-fault decision no user-space controller acting every few tens of
milliseconds on whole cgroups can make."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Dict, List, Optional

from ..._core import PagelabError
from ..cgroups import signal_members
from .base import Controller, ProcView, RunView

#: Pages per CPU that a memory cgroup can be short of its limit while charges already
#: fail: the kernel pre-charges in batches of MEMCG_CHARGE_BATCH (64 pages,
#: mm/memcontrol.c) into per-CPU stocks, so a cgroup "at its limit" shows up to that much
#: less use than the limit.
CHARGE_SLACK_PAGES = 64
#: What each other process keeps at least when its limit is lowered for the holder. The
#: paper's others could lose every page; here a floor is needed: a v1 memory cgroup of a
#: few MB is sometimes OOM-killed while swap-in readahead holds its pages
#: (kernel-backend.md, seen at 3-6 MB), and pagelab-runner's own charged memory (about
#: 1 MB) is in the same cgroup. With 8 MiB, three runs with the other process held at the
#: floor throughout (two 47 MB scans in 58 MB) saw no OOM kill.
FLOOR_BYTES = 8 << 20
#: The holder counts as faulting (the paper's swapping_status) until it has gone this long
#: without a major fault. The controller sees faults as counts per tick, not as faults in
#: progress; with one quiet tick (50 ms) as the end of its faults, the protection went off
#: between the holder's faults, the others grew back over its pages and it faulted again:
#: two thrashing scans of 47 MB in 70 MB (docs/kernel.md) took 19.9k and 18.0k major
#: faults under the token with one tick, 9.8k and 9.6k with 0.5 s (1 s: 12.0k, 9.8k).
QUIET_NS = 500_000_000
#: The value token.rs uses for "no holding limit" (u64::MAX ns).
_NEVER = (1 << 64) - 1


def _page_cluster() -> int:
    try:
        return int(open("/proc/sys/vm/page-cluster").read().strip())
    except (OSError, ValueError):
        return 3


class _State:
    """Per process: its fault counter at the last tick and the token's marks."""

    def __init__(self, pv: ProcView, priority: bool):
        self.pv = pv
        self.priority = priority
        self.faults = 0
        self.delta = 0
        #: v2: memory.events low of its cgroup (its protected memory reclaimed), and its growth
        self.low = 0
        self.low_delta = 0
        #: when it last took a major fault (ns into the run)
        self.last_fault_ns = 0
        self.unsuitable_until = 0
        self.grabs = 0
        self.held_ns = 0


class TokenController(Controller):
    """token.policy = "paper" on a kernel run (the module's docstring says how)."""

    name = "token"

    def __init__(self, token: dict, limits: dict, priorities: Dict[str, bool], page_size: int,
                 cpus: Optional[int] = None):
        self.cfg = token
        self.hold_ns = None if limits["hold_ns"] >= _NEVER else int(limits["hold_ns"])
        self.unsuitable_ns = int(limits["unsuitable_ns"])
        self.self_take_limit = int(limits["self_take_limit"])
        self.window_ns = int(limits["window_ns"])
        self.priorities = priorities
        self.page_size = page_size
        self.ncpu = cpus or os.cpu_count() or 1
        self.pages_per_fault = 2 ** _page_cluster()
        self.procs: Dict[str, _State] = {}
        self.holder: Optional[str] = None
        self.grabbed_at = 0
        self.self_takes = 0
        self.window_start = 0
        self.protected = False
        #: v1: the others' limits as the run had them (to write back), and as set now
        self.saved_limits: Dict[str, str] = {}
        self.caps: Dict[str, int] = {}
        self.low_set: Optional[str] = None
        self.events: List[dict] = []
        self.counters = {"protections": 0, "protected_ticks": 0, "limit_writes": 0, "limit_writes_refused": 0,
                         "self_takes": 0, "short_ticks": 0, "bytes_cut": 0, "stopped_writes": 0,
                         "write_ms_total": 0.0, "write_ms_max": 0.0}
        self._hits = 0
        self._psi: Optional[int] = None
        self._last_ns = 0
        self.version = 1

    # ------------------------------------------------------------ the framework

    def started(self, view: RunView, proc: ProcView) -> None:
        self.version = view.cgroups.version
        st = _State(proc, self.priorities.get(proc.name, False))
        st.faults = self._faults(view, proc)
        self.procs[proc.name] = st

    def tick(self, view: RunView, now_s: float) -> None:
        now = int(now_s * 1e9)
        self._last_ns = now
        cg = view.cgroups
        for st in self.procs.values():
            if not st.pv.ended:
                f = self._faults(view, st.pv)
                st.delta, st.faults = max(0, f - st.faults), f
                if cg.version == 2:
                    low = cg.events(Path(st.pv.cgroup)).get("low", 0)
                    st.low_delta, st.low = max(0, low - st.low), low
            else:
                st.delta = st.low_delta = 0
        hits = cg.limit_hits()
        hit = hits > self._hits
        self._hits = hits
        short = self._short(view, hit)
        self.counters["short_ticks"] += short
        if self.holder is not None:
            h = self.procs[self.holder]
            # section 5.3's periodic check: the holding-time limit
            if self.hold_ns is not None and now - self.grabbed_at >= self.hold_ns:
                self._mark_unsuitable(h, now)
                self._release(view, now, "timeout")
            elif self.protected and h.delta > 0 and self._took_from_itself(view, h, hit):
                self.counters["self_takes"] += h.delta
                if now - self.window_start > self.window_ns:
                    self.window_start, self.self_takes = now, 0
                self.self_takes += h.delta
                if self.self_takes > self.self_take_limit:
                    self._mark_unsuitable(h, now)
                    self._release(view, now, "abuse")
        # the faults of this tick ask for the token (section 5.2: before do_swap_page)
        faulting = [st for st in self.procs.values() if st.delta > 0 and not st.pv.ended]
        faulting.sort(key=lambda st: (-st.delta, st.pv.index))
        for st in faulting:
            if not short or st.pv.name == self.holder or now < st.unsuitable_until:
                continue
            if self.holder is None:
                self._grab(st, now)
                break
            if st.priority and not self.procs[self.holder].priority:
                self._release(view, now, "handover")
                self._grab(st, now)
                break
        # the holder is protected while it faults (swapping_status): until it has gone
        # QUIET_NS without a major fault
        if self.holder is not None and self.procs[self.holder].delta > 0:
            self.procs[self.holder].last_fault_ns = now
        if self.holder is not None and now - self.procs[self.holder].last_fault_ns < QUIET_NS:
            if not self.protected:
                self.counters["protections"] += 1
            self.protected = True
            self.counters["protected_ticks"] += 1
            self._protect(view, self.procs[self.holder])
        elif self.protected:
            self._unprotect(view)

    def exited(self, view: RunView, proc: ProcView) -> None:
        if proc.name == self.holder:
            self._release(view, int(view.now_s * 1e9), "release")
        # an ended process's cgroup is empty: its limit goes back as it was
        if proc.name in self.saved_limits:
            self._restore_limit(view, proc.name)

    def finish(self, view: RunView) -> None:
        try:
            self._unprotect(view)
        except (OSError, PagelabError):
            pass
        for name in list(self.saved_limits):
            try:
                self._restore_limit(view, name)
            except (OSError, PagelabError):
                pass
        if self.holder is not None:
            # still held at the end (an interrupted run): its holding time counts
            h = self.procs[self.holder]
            h.held_ns += max(0, self._last_ns - self.grabbed_at)
            self.holder = None

    def result(self) -> Dict[str, object]:
        return {"token_events": list(self.events),
                "processes": {n: {"token_grabs": st.grabs, "token_held_ns": st.held_ns}
                              for n, st in self.procs.items()},
                "mechanism": "memory.low of the holder (v2)" if self.version == 2 else
                             "the others' memory.limit_in_bytes (v1)",
                "limits": {"hold_ns": self.hold_ns, "unsuitable_ns": self.unsuitable_ns,
                           "self_take_limit": self.self_take_limit, "window_ns": self.window_ns},
                "pages_per_fault": self.pages_per_fault, "floor_bytes": FLOOR_BYTES, **self.counters}

    # ------------------------------------------------------------ the token's rules (token.rs)

    def _grab(self, st: _State, now: int) -> None:
        self.holder = st.pv.name
        self.grabbed_at = now
        self.self_takes = 0
        self.window_start = now
        st.grabs += 1
        st.last_fault_ns = now
        self.events.append({"t_ns": now, "event": "grab", "process": st.pv.name})

    def _release(self, view: RunView, now: int, event: str) -> None:
        h = self.procs[self.holder]
        h.held_ns += max(0, now - self.grabbed_at)
        self.events.append({"t_ns": now, "event": event, "process": self.holder})
        self.holder = None
        self._unprotect(view)

    def _mark_unsuitable(self, st: _State, now: int) -> None:
        st.unsuitable_until = now + self.unsuitable_ns

    # ------------------------------------------------------------ what the kernel shows

    def _faults(self, view: RunView, proc: ProcView) -> int:
        """Major faults of the process's cgroup (its forked children too); the view's
        (its own /proc/PID/stat) when the cgroup has no counter."""
        try:
            n = view.cgroups.major_faults(Path(proc.cgroup))
        except (OSError, ValueError):
            n = 0
        return max(n, proc.major_faults)

    def _short(self, view: RunView, hit: bool) -> bool:
        cg = view.cgroups
        if view.limit_bytes is None:
            return False
        if hit:
            return True
        slack = (CHARGE_SLACK_PAGES * self.ncpu + int(self.cfg.get("shortage_margin", 0))) * self.page_size
        if view.limit_bytes - cg.usage_bytes() <= slack:
            return True
        psi = cg.pressure_some_us()
        stalled = psi is not None and self._psi is not None and psi > self._psi
        self._psi = psi
        return stalled

    def _took_from_itself(self, view: RunView, h: _State, hit: bool) -> bool:
        if view.cgroups.version == 2:
            return h.low_delta > 0
        # v1: the parent met its limit although the room was made, and no other process
        # had anything left above its floor to give
        return hit and self._others_give(view) < self.pages_per_fault * self.page_size

    # ------------------------------------------------------------ protection

    def _others(self, view: RunView) -> List[_State]:
        return [st for st in self.procs.values() if not st.pv.ended and st.pv.name != self.holder]

    def _others_give(self, view: RunView) -> int:
        total = 0
        for st in self._others(view):
            held = view.cgroups.usage_bytes(Path(st.pv.cgroup))
            cap = self.caps.get(st.pv.name)
            total += max(0, min(held, cap if cap is not None else held) - FLOOR_BYTES)
        return total

    def _protect(self, view: RunView, h: _State) -> None:
        """The holder's memory spared until the next tick, with room for what its faults
        of the last tick brought in."""
        cg = view.cgroups
        room_needed = h.delta * self.pages_per_fault * self.page_size
        if cg.version == 2:
            low = cg.usage_bytes(Path(h.pv.cgroup)) + room_needed
            cg.set_protection(Path(h.pv.cgroup), low_bytes=low)
            self.low_set = h.pv.name
            return
        if view.limit_bytes is None:
            return
        # v1: the others may hold what the holder and its room leave of the limit
        slack = CHARGE_SLACK_PAGES * self.ncpu * self.page_size
        allowance = view.limit_bytes - cg.usage_bytes(Path(h.pv.cgroup)) - room_needed - slack
        others = [(st, cg.usage_bytes(Path(st.pv.cgroup))) for st in self._others(view)]
        if not others:
            return
        total = sum(u for _, u in others)
        if allowance >= total:
            # they fit: each may grow by its share of what is left (never above the limit)
            spare = allowance - total
            targets = {st.pv.name: u + (spare * u // total if total else spare // len(others)) for st, u in others}
        else:
            # they must give up the difference, each in proportion to what it holds above
            # its floor
            above = {st.pv.name: max(0, u - FLOOR_BYTES) for st, u in others}
            give = sum(above.values())
            cut = total - allowance
            targets = {st.pv.name: max(FLOOR_BYTES, u - (cut * above[st.pv.name] // give if give else 0))
                       for st, u in others}
        for st, u in others:
            name = st.pv.name
            target = min(targets[name], view.limit_bytes)
            target -= target % self.page_size
            old = self.caps.get(name)
            # lowered at once; raised only by a whole MiB or more (no write per tick)
            if old is not None and (target == old or old < target < old + (1 << 20)):
                continue
            if name not in self.saved_limits:
                self.saved_limits[name] = cg.limit_text(Path(st.pv.cgroup))
            self.counters["limit_writes"] += 1
            t0 = time.monotonic()
            done = self._set_cap(view, st, target, u)
            ms = (time.monotonic() - t0) * 1000.0
            self.counters["write_ms_total"] = round(self.counters["write_ms_total"] + ms, 1)
            self.counters["write_ms_max"] = round(max(self.counters["write_ms_max"], ms), 1)
            if done:
                self.caps[name] = target
                self.counters["bytes_cut"] += max(0, u - target)
            else:
                self.counters["limit_writes_refused"] += 1

    def _set_cap(self, view: RunView, st: _State, target: int, usage: int) -> bool:
        """Writes a limit for another process. Below its use, the kernel reclaims the
        group down to it in this write, racing the group's own faults (which keep
        recharging it): such a write took seconds, stalling the controller. So the
        group's processes are stopped (SIGSTOP) for the write and continued after,
        unless they were stopped already (load control)."""
        group = Path(st.pv.cgroup)
        if target >= usage or st.pv.stopped:
            return view.cgroups.set_limit(group, target)
        signal_members(group, signal.SIGSTOP, st.pv.pid)
        try:
            return view.cgroups.set_limit(group, target)
        finally:
            signal_members(group, signal.SIGCONT, st.pv.pid)
            self.counters["stopped_writes"] += 1

    def _unprotect(self, view: RunView) -> None:
        self.protected = False
        cg = view.cgroups
        if self.low_set is not None:
            st = self.procs[self.low_set]
            self.low_set = None
            cg.set_protection(Path(st.pv.cgroup), low_bytes=0)
        for name in list(self.caps):
            self._restore_limit(view, name)

    def _restore_limit(self, view: RunView, name: str) -> None:
        cg = view.cgroups
        path = Path(self.procs[name].pv.cgroup)
        saved = self.saved_limits.get(name)
        # raising a limit never needs reclaim: it cannot be refused
        cg.set_limit(path, saved if saved else None)
        self.caps.pop(name, None)
        self.saved_limits.pop(name, None)


def token_controller(controls: dict, engine_config: dict, name: str, cpus: Optional[int]) -> Optional[Controller]:
    """The token's controller for a configuration, None when ``token.policy = "none"``."""
    token = controls["token"]
    policy = token.get("policy", "none")
    if policy == "none":
        return None
    if policy != "paper":
        raise PagelabError(f"{name}: token.policy: '{policy}' is not available on the kernel backend (only "
                           "'paper': Linux 2.6.20's token protects inside page_referenced_one, page by page, "
                           "which a controller acting on cgroups cannot do); use the simulator for it")
    limits = controls.get("token_limits")
    if limits is None:
        raise PagelabError(f"{name}: token: its limits need the runs alone (internal: no token_limits)")
    priorities = {str(p.get("name", f"process-{i}")): bool(p.get("priority", False))
                  for i, p in enumerate(engine_config.get("processes", []))}
    page_size = int(engine_config.get("system", {}).get("page_size", 4096))
    return TokenController(token, limits, priorities, page_size, cpus)
