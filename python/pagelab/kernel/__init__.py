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

from .status import host_status
from .swapfile import setup_swap, teardown_swap


def __getattr__(name: str):
    # the backend (the timed system's result types) loads on first use, so that the
    # kernel commands' parser costs the command line nothing
    if name == "run_kernel":
        from .backend import run_kernel

        return run_kernel
    raise AttributeError(f"module 'pagelab.kernel' has no attribute '{name}'")

__all__ = ["run_kernel", "host_status", "setup_swap", "teardown_swap"]
