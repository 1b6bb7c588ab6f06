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
from .api import (
    MissRatioCurve,
    ReplayResults,
    Source,
    Trace,
    Workload,
    mrc,
    policies,
    replay,
    trace_formats,
    workload,
    workloads,
)
from .fault_analysis import fault_parameters
from .system import SystemResult, load_config
from .timed import run_system
from .sweeps import results, sweep

from .version import build_info, package_version

__version__ = package_version()

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
