"""`pagelab kernel status` as plain data: the host (host.py) and what `pagelab kernel
setup` recorded (swapfile.py)."""

from __future__ import annotations

import os
import platform

from .host import (cgroup_mounts, is_root, memory_hierarchy, memory_pressure, process_madvise, swap_devices,
                   userfaultfd)
from .swapfile import recorded_setup


def host_status() -> dict:
    """Everything `pagelab kernel status` reports, as plain data."""
    hierarchy = memory_hierarchy()
    memory = None
    if hierarchy is not None:
        memory = hierarchy.to_dict()
        base = hierarchy.mount / hierarchy.own.lstrip("/")
        if hierarchy.version == 1:
            memory["swap_accounting"] = (hierarchy.mount / "memory.memsw.limit_in_bytes").exists()
        else:
            memory["swap_accounting"] = (base / "memory.swap.max").exists() or hierarchy.own == "/"
    return {
        "root": is_root(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "page_size": os.sysconf("SC_PAGE_SIZE"),
        "memory_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
        "cgroup": {"memory": memory, **cgroup_mounts()},
        "swap": swap_devices(),
        "pagelab_setup": recorded_setup(),
        "userfaultfd": userfaultfd(),
        "process_madvise": process_madvise(),
        "memory_pressure": memory_pressure(),
    }
