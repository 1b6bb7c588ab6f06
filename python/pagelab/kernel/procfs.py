"""Samples from /proc: a process's faults, CPU time, state and memory
(/proc/PID/stat, /proc/PID/status), the pages it referenced since the last sample
(the Referenced bits of /proc/PID/smaps_rollup, cleared through /proc/PID/clear_refs),
and the system's swap traffic and free memory (/proc/vmstat, /proc/meminfo)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Optional

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _read(path: str) -> Optional[str]:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def process_sample(pid: int) -> Optional[dict]:
    """minor/major faults, CPU ns, state letter, rss/swap/peak rss (VmHWM) bytes; None
    once the process is gone (or a zombie without its memory)."""
    stat = _read(f"/proc/{pid}/stat")
    status = _read(f"/proc/{pid}/status")
    if stat is None or status is None:
        return None
    f = stat.rsplit(")", 1)[1].split()
    # f[0] is field 3 (state); minflt 10, majflt 12, utime 14, stime 15
    out = {"state": f[0], "minor_faults": int(f[7]), "major_faults": int(f[9]),
           "cpu_ns": (int(f[11]) + int(f[12])) * 1_000_000_000 // CLOCK_TICKS, "rss_bytes": 0, "swap_bytes": 0,
           "peak_rss_bytes": 0}
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            out["rss_bytes"] = int(line.split()[1]) * 1024
        elif line.startswith("VmHWM:"):
            out["peak_rss_bytes"] = int(line.split()[1]) * 1024
        elif line.startswith("VmSwap:"):
            out["swap_bytes"] = int(line.split()[1]) * 1024
    return out


def referenced_bytes(pid: int, clear: bool = True) -> Optional[int]:
    """Bytes of the process's pages referenced since the bits were last cleared (then,
    with ``clear``, clears them); None when unavailable (not root, process gone)."""
    text = _read(f"/proc/{pid}/smaps_rollup")
    if text is None:
        return None
    value = None
    for line in text.splitlines():
        if line.startswith("Referenced:"):
            value = int(line.split()[1]) * 1024
    if clear and not clear_refs(pid, "1"):
        return None
    return value


def clear_refs(pid: int, what: str) -> bool:
    """Writes ``what`` to /proc/PID/clear_refs ("1": the referenced bits of every page,
    "4": the soft-dirty bits); False when it cannot (not root, process gone)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write(what)
    except OSError:
        return False
    return True


def vmstat() -> Dict[str, int]:
    out = {}
    for line in (_read("/proc/vmstat") or "").splitlines():
        k, _, v = line.partition(" ")
        if v.strip().isdigit():
            out[k] = int(v)
    return out


def free_bytes() -> int:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemFree:"):
            return int(line.split()[1]) * 1024
    return 0


def swap_disks(swap_names) -> list:
    """The block devices (diskstats names) that hold the given swap areas: a partition
    or disk itself, or for a swap file the device of its file system."""
    out = []
    for name in swap_names:
        try:
            st = os.stat(name)
        except OSError:
            continue
        dev = st.st_rdev if (st.st_mode & 0o170000) == 0o060000 else st.st_dev
        uevent = _read(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/uevent") or ""
        for line in uevent.splitlines():
            if line.startswith("DEVNAME="):
                out.append(line.split("=", 1)[1])
    return sorted(set(out))


def disk_busy_ms(disks) -> int:
    """Milliseconds the devices ``disks`` have spent doing I/O (/proc/diskstats field 13,
    io_ticks), summed."""
    total = 0
    for line in (_read("/proc/diskstats") or "").splitlines():
        f = line.split()
        if len(f) >= 13 and f[2] in disks:
            total += int(f[12])
    return total
