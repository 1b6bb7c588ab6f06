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


def __getattr__(name: str):
    # loaded on first use, so that importing a submodule (the command line's parser
    # imports the probe's defaults) costs no command what it does not use
    if name == "run_kernel":
        from .backend import run_kernel

        return run_kernel
    if name == "host_status":
        from .status import host_status

        return host_status
    if name in ("setup_swap", "teardown_swap"):
        from . import swapfile

        return getattr(swapfile, name)
    raise AttributeError(f"module 'pagelab.kernel' has no attribute '{name}'")


__all__ = ["run_kernel", "host_status", "setup_swap", "teardown_swap"]
