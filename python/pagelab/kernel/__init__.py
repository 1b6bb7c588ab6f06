"""The kernel backend: the same system configurations run as real processes on this
machine's kernel, in memory cgroups, with real swap (docs/kernel-backend.md).

- :mod:`.host`: what the machine offers (``pagelab kernel status``)
- :mod:`.swapfile`: ``pagelab kernel setup`` / ``teardown`` of a swap file
- :mod:`.cgroups`: the run's parent cgroup and one child per process, v1 or v2
- :mod:`.procfs`: samples from /proc and the cgroup files
- :mod:`.runner`: where the native runner (pagelab-runner) is
- :mod:`.backend`: a run, as a :class:`pagelab.system.SystemResult`
- :mod:`.controllers`: the papers' mechanisms acting on a run (the token, load control;
  docs/kernel.md)
"""

from .backend import run_kernel
from .status import host_status
from .swapfile import setup_swap, teardown_swap

__all__ = ["run_kernel", "host_status", "setup_swap", "teardown_swap"]
