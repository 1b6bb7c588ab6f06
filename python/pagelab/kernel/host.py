"""What this machine's kernel offers the kernel backend: root, the memory cgroup
hierarchy (v1 or v2) and its controllers, swap, the kernel version, userfaultfd and
process_madvise (probed with the system call itself, not guessed from the version)."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from pathlib import Path
from typing import Dict, List, Optional

PROC_MOUNTS = "/proc/mounts"
PROC_SWAPS = "/proc/swaps"
PROC_SELF_CGROUP = "/proc/self/cgroup"

# system call numbers (asm-generic for aarch64/riscv64; process_madvise is 440 everywhere)
_SYSCALLS = {
    "x86_64": {"userfaultfd": 323, "process_madvise": 440},
    "aarch64": {"userfaultfd": 282, "process_madvise": 440},
    "riscv64": {"userfaultfd": 282, "process_madvise": 440},
}


def is_root() -> bool:
    return os.geteuid() == 0


def _mounts() -> List[tuple]:
    """(device, mount point, type, options) of /proc/mounts."""
    out = []
    try:
        text = Path(PROC_MOUNTS).read_text()
    except OSError:
        return out
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 4:
            out.append((f[0], f[1].replace("\\040", " "), f[2], f[3].split(",")))
    return out


def self_cgroups() -> Dict[str, str]:
    """This process's cgroup path per hierarchy from /proc/self/cgroup: v1 hierarchies
    under each of their controllers' names, the v2 one under ''."""
    out = {}
    try:
        text = Path(PROC_SELF_CGROUP).read_text()
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            out[""] = path
        for c in controllers.split(","):
            if c:
                out[c] = path
    return out


class CgroupHierarchy:
    """Where the memory controller is: ``version`` 1 (a v1 hierarchy with ``memory``) or
    2 (the unified hierarchy with ``memory`` in its cgroup.controllers); ``mount`` is
    the hierarchy's mount point and ``own`` this process's cgroup in it."""

    def __init__(self, version: int, mount: Path, own: str):
        self.version = version
        self.mount = mount
        self.own = own

    def to_dict(self) -> dict:
        return {"version": self.version, "mount": str(self.mount), "own": self.own}


def memory_hierarchy() -> Optional[CgroupHierarchy]:
    """The hierarchy holding the memory controller, or None. A controller is bound to
    one hierarchy at a time: when a v1 hierarchy has it, the unified one cannot."""
    own = self_cgroups()
    for _, point, kind, options in _mounts():
        if kind == "cgroup" and "memory" in options:
            return CgroupHierarchy(1, Path(point), own.get("memory", "/"))
    for _, point, kind, _ in _mounts():
        if kind == "cgroup2":
            try:
                controllers = (Path(point) / "cgroup.controllers").read_text().split()
            except OSError:
                continue
            if "memory" in controllers:
                return CgroupHierarchy(2, Path(point), own.get("", "/"))
    return None


def cgroup_mounts() -> dict:
    """v1 hierarchies (mount point -> controllers) and v2 mounts (mount point ->
    controllers available at its root)."""
    v1, v2 = {}, {}
    for _, point, kind, options in _mounts():
        if kind == "cgroup":
            known = {"cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "blkio", "pids", "net_cls",
                     "net_prio", "perf_event", "hugetlb", "rdma", "misc"}
            v1[point] = [o for o in options if o in known or o.startswith("name=")]
        elif kind == "cgroup2":
            try:
                v2[point] = (Path(point) / "cgroup.controllers").read_text().split()
            except OSError:
                v2[point] = []
    return {"v1": v1, "v2": v2}


def swap_devices() -> List[dict]:
    """/proc/swaps: name, type, size and used bytes, priority."""
    out = []
    try:
        lines = Path(PROC_SWAPS).read_text().splitlines()[1:]
    except OSError:
        return out
    for line in lines:
        f = line.split()
        if len(f) >= 5:
            out.append({"name": f[0].replace("\\040", " "), "type": f[1], "size_bytes": int(f[2]) * 1024,
                        "used_bytes": int(f[3]) * 1024, "priority": int(f[4])})
    return out


def _probe_syscall(name: str, *args) -> dict:
    """Whether the kernel implements system call ``name``: it is called with harmless
    arguments and only ENOSYS counts as absent."""
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        return {"available": None, "detail": f"unknown system call numbers on {platform.machine()}"}
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    r = libc.syscall(ctypes.c_long(numbers[name]), *[ctypes.c_long(a) for a in args])
    if r >= 0:
        os.close(r)
        return {"available": True, "detail": "works"}
    err = ctypes.get_errno()
    if err == errno.ENOSYS:
        return {"available": False, "detail": "not in this kernel (ENOSYS)"}
    if err in (errno.EPERM, errno.EACCES):
        return {"available": True, "detail": f"present but refused here ({errno.errorcode.get(err, err)})"}
    return {"available": True, "detail": f"present ({errno.errorcode.get(err, err)} on a probe)"}


def userfaultfd() -> dict:
    # flags O_CLOEXEC | O_NONBLOCK; a descriptor comes back when allowed
    return _probe_syscall("userfaultfd", os.O_CLOEXEC | os.O_NONBLOCK)


def process_madvise() -> dict:
    # pidfd -1: EBADF from a kernel that has the call
    return _probe_syscall("process_madvise", -1, 0, 0, 0, 0)


def memory_pressure() -> bool:
    """Pressure stall information (PSI) for memory: /proc/pressure/memory."""
    try:
        Path("/proc/pressure/memory").read_text()
        return True
    except OSError:
        return False
