"""The memory cgroups of a kernel run: a parent with the run's limit (frames x page
size) and one child per process, on cgroup v1 (memory.limit_in_bytes) or v2
(memory.max). The parent's name holds the owner's pid and its start time
(``pagelab-PID-STARTTIME-N``), so a later run can tell a stale tree (its owner is gone)
from a live one and remove it. Removal kills every process left in the tree first."""

from __future__ import annotations

import errno
import os
import re
import signal
import time
from pathlib import Path
from typing import Dict, List, Optional

from .._core import PagelabError
from .host import CgroupHierarchy, memory_hierarchy

_NAME = re.compile(r"^pagelab-(\d+)-(\d+)-\d+$")
_counter = 0


def process_start_time(pid: int) -> Optional[int]:
    """Field 22 of /proc/PID/stat (start time in clock ticks since boot), None when the
    process does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[19])


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as err:
        raise PagelabError(f"{path}: cannot write '{value}': {err.strerror or err}") from None


def members(group: Path) -> List[int]:
    return [int(p) for p in _read(group / "cgroup.procs").split()]


def signal_members(group: Path, sig: int, pid: Optional[int] = None) -> None:
    """``sig`` to every process of ``group`` (and to ``pid``), twice: a process forked
    between the reading of cgroup.procs and the signals gets it the second time."""
    for _ in range(2):
        pids = set(members(group))
        if pid is not None:
            pids.add(pid)
        for p in pids:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass


def _kill_and_remove(group: Path, timeout_s: float = 5.0) -> None:
    """Kills every process of ``group`` and its children, then removes them (deepest
    first). Raises PagelabError when a group cannot be removed in time."""
    if not group.is_dir():
        return
    for child in sorted((p for p in group.iterdir() if p.is_dir()), reverse=True):
        _kill_and_remove(child, timeout_s)
    deadline = time.monotonic() + timeout_s
    while True:
        pids = members(group)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as err:
            if err.errno != errno.EBUSY or time.monotonic() > deadline:
                raise PagelabError(f"{group}: cannot remove the cgroup: {err.strerror or err} "
                                   f"(processes left: {members(group) or 'none'})") from None
        time.sleep(0.02)


def stale_groups(base: Path) -> List[Path]:
    """pagelab parents under ``base`` whose owner (pid and start time) is gone."""
    out = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return out
    for p in entries:
        m = _NAME.match(p.name)
        if m and p.is_dir() and process_start_time(int(m.group(1))) != int(m.group(2)):
            out.append(p)
    return out


class RunCgroups:
    """A parent cgroup (the run's memory limit, or none) and one child per process.
    Use as a context manager: leaving it (normally, by an exception, by Ctrl-C) kills
    every process in the tree and removes the cgroups."""

    def __init__(self, limit_bytes: Optional[int], children: List[str],
                 hierarchy: Optional[CgroupHierarchy] = None):
        global _counter
        h = hierarchy or memory_hierarchy()
        if h is None:
            raise PagelabError("no memory cgroup controller on this machine (neither a cgroup v1 'memory' "
                               "hierarchy nor 'memory' in the cgroup v2 controllers): see `pagelab kernel status`")
        self.hierarchy = h
        self.version = h.version
        self.limit_bytes = limit_bytes
        self.base = self._base(h)
        stale = stale_groups(self.base)
        for p in stale:
            _kill_and_remove(p)
        self.removed_stale = [str(p) for p in stale]
        _counter += 1
        me = os.getpid()
        self.path = self.base / f"pagelab-{me}-{process_start_time(me)}-{_counter}"
        self.children: Dict[str, Path] = {}
        self._names = children
        self._made = False

    @staticmethod
    def _base(h: CgroupHierarchy) -> Path:
        """v1: inside this process's own memory cgroup (so the run stays under any limit
        that applies to us). v2: the same, when that cgroup can delegate the memory
        controller to children (the no-internal-processes rule forbids it for a cgroup
        with processes of its own, except the root); else the root."""
        own = h.mount / h.own.lstrip("/")
        if h.version == 1 or h.own == "/":
            return own
        if "memory" in _read(own / "cgroup.subtree_control").split():
            return own
        try:
            (own / "cgroup.subtree_control").write_text("+memory")
            return own
        except OSError:
            return h.mount

    def __enter__(self) -> "RunCgroups":
        try:
            self.path.mkdir()
        except OSError as err:
            raise PagelabError(f"{self.path}: cannot create the run's cgroup: {err.strerror or err}") from None
        self._made = True
        try:
            if self.version == 2:
                _write(self.path / "cgroup.subtree_control", "+memory")
            if self.limit_bytes is not None:
                _write(self.path / ("memory.limit_in_bytes" if self.version == 1 else "memory.max"),
                       str(self.limit_bytes))
            for i, name in enumerate(self._names):
                child = self.path / f"p{i}"
                child.mkdir()
                self.children[name] = child
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def remove(self) -> None:
        if self._made:
            _kill_and_remove(self.path)
            self._made = False

    def procs_file(self, name: str) -> str:
        return str(self.children[name] / "cgroup.procs")

    # ------------------------------------------------------------ readings

    def usage_bytes(self, group: Optional[Path] = None) -> int:
        g = group or self.path
        f = "memory.usage_in_bytes" if self.version == 1 else "memory.current"
        return int(_read(g / f) or 0)

    def peak_bytes(self) -> Optional[int]:
        """Peak memory use of the whole run (v1 max_usage_in_bytes; v2 memory.peak,
        kernels 5.19+), None where the kernel has no such file."""
        f = "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"
        text = _read(self.path / f).strip()
        return int(text) if text.isdigit() else None

    def swap_bytes(self, group: Optional[Path] = None) -> int:
        """Swap in use by a group: v1 memory.stat 'swap' (with swap accounting), v2
        memory.swap.current."""
        g = group or self.path
        if self.version == 2:
            text = _read(g / "memory.swap.current").strip()
            return int(text) if text.isdigit() else 0
        return self.stat(g).get("total_swap", self.stat(g).get("swap", 0))

    def stat(self, group: Optional[Path] = None) -> Dict[str, int]:
        out = {}
        for line in _read((group or self.path) / "memory.stat").splitlines():
            k, _, v = line.partition(" ")
            if v.strip().isdigit():
                out[k] = int(v)
        return out

    def refaults_anon(self, group: Optional[Path] = None) -> int:
        """Anonymous pages the group (and its children) read back from swap after the
        kernel evicted them (memory.stat workingset_refault_anon, v1 ``total_``): its
        swap-ins, faulted or read ahead or asked for by MADV_WILLNEED, counted per
        group where /proc/vmstat counts the machine's."""
        st = self.stat(group)
        return st.get("total_workingset_refault_anon", st.get("workingset_refault_anon", 0)) if self.version == 1 \
            else st.get("workingset_refault_anon", 0)

    def oom_kills(self, group: Path) -> int:
        """OOM kills inside a group: v1 memory.oom_control 'oom_kill', v2 memory.events
        'oom_kill'. A kill charged to the parent's limit is counted in the child that
        held the victim on v2 (memory.events is hierarchical) and on v1 in the group
        whose limit was hit, so both are read."""
        total = 0
        for g in (group, self.path):
            f = "memory.oom_control" if self.version == 1 else "memory.events"
            for line in _read(g / f).splitlines():
                k, _, v = line.partition(" ")
                if k == "oom_kill" and v.strip().isdigit():
                    total = max(total, int(v))
        return total

    def reclaim(self, group: Path, nbytes: int) -> int:
        """Has the kernel reclaim about ``nbytes`` of ``group``'s memory now, its own
        choice of pages (its LRU order: the oldest first, pages already written first);
        returns the bytes its use fell by. v2: ``memory.reclaim``. v1, which has no such
        file: its limit is lowered to its use less ``nbytes`` (the write reclaims until
        the use fits, or fails with EBUSY) and put back at once, also when that fails.
        Only for a group whose processes are stopped: a running one could hit the
        lowered limit."""
        before = self.usage_bytes(group)
        if nbytes <= 0 or before <= 0:
            return 0
        if self.version == 2:
            try:
                (group / "memory.reclaim").write_text(str(int(nbytes)))
            except OSError:
                pass  # EAGAIN: less could be reclaimed
            return max(0, before - self.usage_bytes(group))
        limit_file = group / "memory.limit_in_bytes"
        old = _read(limit_file).strip()
        try:
            limit_file.write_text(str(max(before - int(nbytes), 1 << 20)))
        except OSError:
            pass  # EBUSY: could not reclaim down to it
        finally:
            try:
                limit_file.write_text("-1" if not old or int(old) >= 1 << 62 else old)
            except OSError:
                pass
        return max(0, before - self.usage_bytes(group))

    def pressure(self) -> Optional[str]:
        """v2 memory.pressure (PSI of the run), None on v1."""
        if self.version != 2:
            return None
        return _read(self.path / "memory.pressure").strip() or None

    # ------------------------------------------------------------ what controllers use

    def child(self, name: str) -> Path:
        return self.children[name]

    def limit_hits(self, group: Optional[Path] = None) -> int:
        """How often a charge met the group's limit so far: v1 memory.failcnt, v2
        memory.events 'max' (the times usage would have passed memory.max)."""
        g = group or self.path
        if self.version == 1:
            text = _read(g / "memory.failcnt").strip()
            return int(text) if text.isdigit() else 0
        return self.events(g).get("max", 0)

    def events(self, group: Path) -> Dict[str, int]:
        """v2 memory.events (low, high, max, oom, oom_kill, ...); empty on v1."""
        out = {}
        for line in _read(group / "memory.events").splitlines():
            k, _, v = line.partition(" ")
            if v.strip().isdigit():
                out[k] = int(v)
        return out

    def pressure_some_us(self, group: Optional[Path] = None) -> Optional[int]:
        """v2 memory.pressure: the 'some' total (microseconds in which some task of the
        group stalled on memory); None on v1 or without PSI."""
        if self.version != 2:
            return None
        for line in _read((group or self.path) / "memory.pressure").splitlines():
            if line.startswith("some "):
                for field in line.split()[1:]:
                    k, _, v = field.partition("=")
                    if k == "total" and v.isdigit():
                        return int(v)
        return None

    def major_faults(self, group: Path) -> int:
        """Major faults of every task charged to ``group`` (memory.stat pgmajfault, v1
        and v2): a command's forked children count too, which /proc/PID/stat of the
        process it started does not show until they are reaped."""
        return self.stat(group).get("pgmajfault", 0)

    def limit_text(self, group: Path) -> str:
        """The group's own limit as its file holds it (v1 memory.limit_in_bytes, v2
        memory.max), to be written back as it was."""
        return _read(group / ("memory.limit_in_bytes" if self.version == 1 else "memory.max")).strip()

    def set_limit(self, group: Path, limit: Optional[object]) -> bool:
        """Sets ``group``'s own limit (v1 memory.limit_in_bytes, v2 memory.max): bytes, a
        text read by :meth:`limit_text`, or None for no limit. A limit below the group's
        use makes the kernel reclaim the group down to it, in this call; when it cannot
        (v1: EBUSY after its retries) the limit is left as it was and False returned.
        Any other failure is an error."""
        f = group / ("memory.limit_in_bytes" if self.version == 1 else "memory.max")
        value = ("-1" if self.version == 1 else "max") if limit is None else str(limit)
        try:
            f.write_text(value)
        except OSError as err:
            if err.errno in (errno.EBUSY, errno.EINTR, errno.EAGAIN):
                return False
            raise PagelabError(f"{f}: cannot write '{value}': {err.strerror or err}") from None
        return True

    def set_protection(self, group: Path, low_bytes: Optional[int] = None, min_bytes: Optional[int] = None) -> None:
        """v2: ``group``'s reclaim protection, memory.low (best effort: its memory is
        reclaimed only when no unprotected memory is left in the reclaiming ancestor) and
        memory.min (never reclaimed); None leaves a file as it is, 0 removes the
        protection. cgroup v1 has no such files: a one-line error."""
        if self.version != 2:
            raise PagelabError(f"{group}: cgroup v1 has no memory.low/memory.min (reclaim protection is v2's)")
        if low_bytes is not None:
            _write(group / "memory.low", str(int(low_bytes)))
        if min_bytes is not None:
            _write(group / "memory.min", str(int(min_bytes)))


def remove_stale(hierarchy: Optional[CgroupHierarchy] = None) -> List[str]:
    """Removes every stale pagelab cgroup under this process's base; returns their paths."""
    h = hierarchy or memory_hierarchy()
    if h is None:
        return []
    base = RunCgroups._base(h)
    gone = []
    for p in stale_groups(base):
        _kill_and_remove(p)
        gone.append(str(p))
    return gone
