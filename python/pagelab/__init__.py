"""pagelab: a laboratory for virtual-memory paging.

The engine is Rust (``pagelab._core``); this package is the front people use::

    import pagelab
    w = pagelab.workload("lu", n=256)
    r = pagelab.replay(w, policy=["lru", "opt"], frames=[100, 200, 400])
    df = r.to_dataframe()
    curve = pagelab.mrc(w)            # exact LRU faults for every memory size
    t = pagelab.Trace.open("prog.plt")
    res = pagelab.run_system("token.toml")   # timed system: res.processes, res.series
"""

from ._core import ENGINE_VERSION, PagelabError
from .version import build_info, package_version

# The rest is imported on first use (PEP 562): `pagelab replay` on the command line
# loads the engine, the API and the argument parser, not the timed system, the sweeps
# or pandas.
_LAZY = {
    "MissRatioCurve": "api", "ReplayResults": "api", "Source": "api", "Trace": "api",
    "Workload": "api", "mrc": "api", "policies": "api", "replay": "api",
    "trace_formats": "api", "workload": "api", "workloads": "api",
    "fault_parameters": "fault_analysis",
    "SystemResult": "system", "load_config": "system",
    "run_system": "timed",
    "results": "sweeps", "sweep": "sweeps",
}


def __getattr__(name: str):
    if name == "__version__":
        # importlib.metadata costs 35 ms: a third of `pagelab replay`'s start
        value = globals()["__version__"] = package_version()
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pagelab' has no attribute '{name}'")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})


__all__ = [
    "ENGINE_VERSION",
    "MissRatioCurve",
    "PagelabError",
    "ReplayResults",
    "Source",
    "SystemResult",
    "Trace",
    "Workload",
    "build_info",
    "load_config",
    "mrc",
    "policies",
    "replay",
    "run_system",
    "trace_formats",
    "workload",
    "workloads",
]
