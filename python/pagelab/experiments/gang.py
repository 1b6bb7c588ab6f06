"""gang-adaptive-paging.txt (Ryu, Pachapurkar and Fong, "Adaptive Memory Paging for
Efficient Gang Scheduling of Parallel Applications"), section 4: figures 7 (serial), 8
(parallel), 9 (LU by mechanism) and 6 (paging activity).

Two instances of each NPB-like workload run as two gang-scheduled jobs on nodes whose
memory holds one instance's footprint but not two (``setup.memory_ratio`` times it),
under the original paging ("LRU": the node's clock reclaim with the Linux 2.2 16-page
read-ahead), under combinations of the four mechanisms (so, ao, ai, bg), and in batch
(one instance after the other, the baseline). Each instance alone computes for
``setup.job_s`` seconds: its CPU cost per reference comes from its measured references.
Parallel runs put one process per node and a barrier per iteration of the workload.

The switching overhead of a run is (gang - batch) / gang of the completion of both
instances; its reduction is against LRU's overhead on the same workload and cluster.
Measures are keyed by workload ("LU"), by run ("LU x2": on 2 nodes) or by cluster size
("serial", "2 nodes", "4 nodes"), in the file's order, so that claims can compare them
with the paper's numbers position by position.

With --quick the workloads take their ``quick`` sizes and job_s, the quantum and the
activity window are multiplied by quick_scale (the first version's quick run).

On the kernel (``pagelab reproduce gang --on kernel``, root, swap active): :data:`KERNEL`.
The runs are the serial ones, each two real processes on this machine gang-scheduled by
the kernel backend's gang controller (docs/kernel.md), with the simulated seconds made
real ones by the file's ``[kernel] time_scale``; the parallel runs need several
machines and their claims are not measured."""

from __future__ import annotations

import copy
import functools
import json
import os
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import pandas as pd

from .. import api
from .._core import PagelabError
from ..figures.bars import plot_grouped_bars, plot_paging_activity
from ..gang import GangResult, label
from ..system import normalize_config
from ..timed import run_engine
from .claims import spearman
from .common import base_table, fmt_pct, laid_over, reduction_pct
from .protocol import Analysis, Point, Results, Spec, View
from .schema import AnyTable, ArrayOf, Bool, Field, Int, List_, Number, Str, Table

#: what the experiment measures on this machine's kernel (reproduce gang --on kernel)
KERNEL = ("the serial runs: figure 7 (two instances of each workload on one machine under the kernel's own "
          "paging, so/ao/ai/bg and batch) and figure 9's serial row (LU by mechanism); the parallel runs "
          "(figures 8 and 9 on 2 and 4 nodes, figure 6 on 4) need several machines: their claims are not measured")
#: the measures over parallel runs (alone, or with the serial ones): not measured on the kernel
KERNEL_NOT_MEASURED = ("parallel_completion_reduction_pct", "parallel_lru_overhead_pct",
                       "parallel_overhead_reduction_pct", "parallel_reduction_by_nodes", "parallel_cg_reduction_gap_pct",
                       "stress_reduction_rho", "overhead_reduction_max_pct", "overhead_reduction_spread_pct",
                       "lu_serial_reduction_lead_pct")
#: all four mechanisms (figures 7 and 8)
ALL = ["so", "ao", "ai", "bg"]
#: figure 9's combinations
BREAKDOWN = [["ai"], ["so"], ["so", "ao"], ["so", "ao", "bg"], ALL]
#: figure 6's four graphs
ACTIVITY = [[], ["so"], ["so", "ao"], ALL]
#: a workload's keys that make its engine process (``quick`` may override them)
PROCESS_KEYS = ("workload", "params", "seed", "cpu_ns_per_ref")

_PROCESS = {
    "workload": Field(Str(), doc="a built-in workload (pagelab workload list), e.g. npb-lu"),
    "params": Field(AnyTable("a table of the workload's parameters"), {}, "its parameters (iterations: "
                                                                          "its barriers in parallel runs)"),
    "seed": Field(Number(min=0, whole=True), None, "the first instance's seed (the second: seed + 1000)"),
    "cpu_ns_per_ref": Field(Number(above=0), None, "CPU time per reference (ns); default: job_s over its references"),
}
WORKLOAD = Table({
    "name": Field(Str(), doc="the benchmark's name, as the paper's figures name it"),
    **_PROCESS,
    "quick": Field(Table({k: Field(f.type, None, f"with --quick: {f.doc}") for k, f in _PROCESS.items()}), {},
                   "laid over the entry with --quick (the small sizes)"),
    "memory_scale": Field(Number(above=0), 1.0,
                          "this workload's memory per node is setup.memory_ratio times this times its footprint "
                          "(above 1: a workload small against the nodes' memory, as the paper's IS)"),
    "paper": Field(Table({
        "lru_overhead_pct": Field(Number(), None, "figure 7(b): switching overhead under LRU, %"),
        "all_overhead_pct": Field(Number(), None, "figure 7(b): switching overhead under so/ao/ai/bg, %"),
        "overhead_reduction_pct": Field(Number(), None, "figure 7(c): its reduction by so/ao/ai/bg, %"),
    }), {}, "the paper's serial numbers, as printed (shown beside ours)"),
})
TABLES = {
    "setup": Field(Table({
        "memory_ratio": Field(Number(above=1.0, max=2.0), 1.5,
                              "memory per node as a multiple of one instance's footprint: one fits, two do not "
                              "(between 1 and 2)"),
        "job_s": Field(Number(above=0), 40.0, "seconds an instance computes alone (sets its CPU cost per reference); "
                                              "times quick_scale with --quick"),
        "activity_until_s": Field(Number(above=0), None, "figure 6: the paging activity over the first this many "
                                                         "seconds (none: the whole run); times quick_scale with --quick"),
        "early_fraction": Field(Number(above=0, max=1), 0.25,
                                "figures 1/6: page-ins in this first part of a quantum after a switch count as early"),
        "beside_reclaim": Field(Str(), None, "a second baseline kernel run beside base.system.reclaim (batch, the "
                                             "original paging and so/ao/ai/bg of every serial and parallel run), "
                                             "its measures prefixed with its name ('clock_serial_...')"),
    }), {}, "the experiment's own settings"),
    "base": Field(base_table("system", "disk", "swap", "gang"), {},
                  "engine tables under every run (one node's); system.frames and gang.nodes/mode/mechanisms are set "
                  "per run; gang.quantum_s is multiplied by quick_scale with --quick"),
    "workload": Field(ArrayOf(WORKLOAD, min_len=1), doc="figure 7's benchmarks, each run as two instances"),
    "parallel": Field(Table({
        "nodes": Field(List_(Int(min=2)), [], "the cluster sizes of figure 8"),
        "workloads": Field(List_(Str()), [], "the [[workload]] names run on each cluster size"),
        "also": Field(List_(Str()), [], "runs on one cluster size only, as 'WORKLOAD xNODES' (the paper's SP x4 "
                                        "and MG x2), after the others"),
        "quantum_scale": Field(AnyTable("a table of 'WORKLOAD xNODES' = factor"), {},
                               "runs whose quantum is base.gang.quantum_s times this (the paper's SP x4: 7 "
                               "minutes for 5)"),
        "paper": Field(AnyTable("a table of WORKLOAD_NODES = { overhead_reduction_pct = ... }"), {},
                       "figure 8's numbers, as printed (shown beside ours)"),
    }), {}, "figure 8: the workloads on several nodes, a barrier per iteration"),
    "kernel": Field(Table({
        "time_scale": Field(Number(above=0, max=1), 0.1,
                            "on the kernel: real seconds per simulated second (job_s, the quantum, sample_ms, the "
                            "activity window)"),
        "quick_time_scale": Field(Number(above=0, max=1), 0.25, "the same with --quick (on top of quick_scale)"),
        "runner_pages": Field(Number(min=0, whole=True), 256,
                              "pages a runner performer has charged to its cgroup beside the stream's (its own "
                              "heap and stack): added to an instance's footprint for its memory"),
        "repeats": Field(Number(min=1, max=100, whole=True), 3, "each kernel run repeated this many times (medians)"),
        "quick_repeats": Field(Number(min=1, max=100, whole=True), 1, "the same with --quick"),
        "cpus": Field(List_(Int(min=0)), [0], "the CPUs the jobs run on ([kernel] cpus of each run)"),
        "control_ms": Field(Number(min=10, max=10000, whole=True), 50, "how often the gang controller acts"),
        "dedicated": Field(Bool(), False, "each job also run alone without a limit (its dedicated time; the "
                                          "analysis compares with batch, not with it)"),
    }), {}, "reproduce --on kernel: how the serial runs go to this machine's kernel (docs/kernel.md)"),
    "breakdown": Field(Table({
        "workload": Field(Str(), doc="the [[workload]] run under each combination (the paper: LU)"),
        "paper": Field(AnyTable("a table: serial, nodes_N = reduction %"), {},
                       "figure 9(c)'s so/ao/ai/bg reductions, as printed"),
    }), None, "figure 9 (every combination, serial and on each cluster size) and figure 6 (paging activity on "
              "the largest cluster)"),
}
MEASURES = {
    "serial_completion_reduction_pct": "completion of both instances, so/ao/ai/bg against LRU, per serial workload, %",
    "serial_lru_overhead_pct": "switching overhead (gang - batch) / gang under LRU, per serial workload, %",
    "serial_all_overhead_pct": "switching overhead under so/ao/ai/bg, per serial workload, %",
    "serial_overhead_reduction_pct": "reduction of the switching overhead by so/ao/ai/bg, per serial workload, %",
    "serial_is_reduction_gap_pct": "smallest serial reduction of the other workloads minus IS's, points",
    "parallel_completion_reduction_pct": "completion, so/ao/ai/bg against LRU, per parallel run ('LU x2'), %",
    "parallel_lru_overhead_pct": "switching overhead under LRU, per parallel run, %",
    "parallel_overhead_reduction_pct": "reduction of the switching overhead by so/ao/ai/bg, per parallel run, %",
    "parallel_reduction_by_nodes": "per parallel workload: its reductions on each cluster size, in order, %",
    "parallel_cg_reduction_gap_pct": "per cluster size: the smallest other parallel reduction minus CG's, points",
    "stress_reduction_rho": "Spearman's rho of LRU's switching overhead and its reduction, every serial and "
                            "parallel run",
    "overhead_reduction_max_pct": "largest reduction of the switching overhead, every serial and parallel run, %",
    "overhead_reduction_spread_pct": "largest minus smallest reduction, every serial and parallel run, points",
    "lu_lru_overhead_pct": "breakdown workload: LRU's switching overhead, serial (a number) and parallel "
                           "(a list by cluster size), %",
    "lu_all_reduction_pct": "breakdown workload: so/ao/ai/bg's reduction per cluster size ('serial', '2 nodes'), %",
    "lu_serial_reduction_lead_pct": "breakdown workload: serial reduction minus the largest parallel one, points",
    "lu_ai_so_reduction_pct": "breakdown workload: the reductions of ai alone and so alone, each by cluster size, %",
    "lu_ao_gain_pct": "breakdown workload: completion gain of so/ao over so, serial and parallel, % of so's",
    "lu_bg_gain_pct": "breakdown workload: completion gain of so/ao/bg over so/ao, serial and parallel, %",
    "lu_ai_gain_pct": "breakdown workload: completion gain of so/ao/ai/bg over so/ao/bg, by cluster size, %",
    "lu_all_best_margin_pct": "breakdown workload: so/ao/ai/bg's reduction minus the best other combination's, "
                              "by cluster size, points",
    "activity_early_share_pct": "figure 6 runs: share of node 0's page-ins in the first early_fraction of a quantum, "
                                "per combination, %",
    "activity_paged_reduction_pct": "figure 6 runs: pages paged (read + written, every node) against LRU's, per "
                                    "combination, %",
    "activity_intensity_ratio": "figure 6 runs: node 0's mean page-in rate while paging, so/ao/ai/bg over LRU",
}
#: the serial and parallel measures again for the baseline run beside the main one
#: (setup.beside_reclaim; gang.toml runs "clock"), prefixed with its name
BESIDE_MEASURED = ("serial_completion_reduction_pct", "serial_lru_overhead_pct", "serial_all_overhead_pct",
                   "serial_overhead_reduction_pct", "serial_is_reduction_gap_pct", "parallel_completion_reduction_pct",
                   "parallel_lru_overhead_pct", "parallel_overhead_reduction_pct", "parallel_reduction_by_nodes",
                   "parallel_cg_reduction_gap_pct", "stress_reduction_rho", "overhead_reduction_max_pct",
                   "overhead_reduction_spread_pct")
MEASURES.update({f"clock_{k}": f"{MEASURES[k]}; under the clock baseline (setup.beside_reclaim = \"clock\")"
                 for k in BESIDE_MEASURED})


def on_kernel(spec: Spec) -> bool:
    return spec.on == "kernel"


def check(spec: Spec) -> None:
    file = spec.path.name
    online = os.cpu_count() or 1
    for i, c in enumerate(spec.table("kernel")["cpus"]):
        if on_kernel(spec) and c >= online:
            raise PagelabError(f"{file}: kernel.cpus[{i}]: this machine has CPUs 0 to {online - 1}, got {c}")
    setup = spec.table("setup")
    if not setup["memory_ratio"] < 2.0:
        raise PagelabError(f"{file}: setup.memory_ratio: expected a number between 1 and 2 (memory for one "
                           f"instance's footprint but not two), got {setup['memory_ratio']}")
    base = spec.table("base")
    if "frames" in base.get("system", {}):
        raise PagelabError(f"{file}: base.system.frames: set per workload from its footprint and "
                           "setup.memory_ratio; remove it")
    for key in ("nodes", "mechanisms", "mode"):
        if key in base.get("gang", {}):
            raise PagelabError(f"{file}: base.gang.{key}: set by the experiment for each run; remove it")
    names = [w["name"] for w in spec.table("workload")]
    for i, n in enumerate(names):
        if n in names[:i]:
            raise PagelabError(f"{file}: workload[{i}].name: '{n}' is used twice")
    for i, n in enumerate(spec.table("parallel")["workloads"]):
        if n not in names:
            raise PagelabError(f"{file}: parallel.workloads[{i}]: no [[workload]] '{n}' (expected one of "
                               f"{', '.join(names)})")
    par = spec.table("parallel")
    for i, run in enumerate(par["also"]):
        name, _, n = run.rpartition(" x")
        if name not in names or not n.isdigit() or int(n) < 2:
            raise PagelabError(f"{file}: parallel.also[{i}]: expected 'WORKLOAD xNODES' with a [[workload]] name "
                               f"and at least 2 nodes, got '{run}'")
    runs = {f"{w} x{n}" for n in par["nodes"] for w in par["workloads"]} | set(par["also"])
    for key, factor in par["quantum_scale"].items():
        if key not in runs:
            raise PagelabError(f"{file}: parallel.quantum_scale.{key}: not a parallel run (expected one of "
                               f"{', '.join(sorted(runs))})")
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor > 0:
            raise PagelabError(f"{file}: parallel.quantum_scale.{key}: expected a positive number, got {factor!r}")
    beside = setup.get("beside_reclaim")
    if beside is not None and beside == base.get("system", {}).get("reclaim", "linux22"):
        raise PagelabError(f"{file}: setup.beside_reclaim: '{beside}' is base.system.reclaim already")
    bd = spec.table("breakdown")
    if bd is not None and bd["workload"] not in names:
        raise PagelabError(f"{file}: breakdown.workload: no [[workload]] '{bd['workload']}' (expected one of "
                           f"{', '.join(names)})")


# ---------------------------------------------------------------- the runs

@functools.lru_cache(maxsize=256)
def _workload_info(key: str) -> tuple:
    spec = json.loads(key)
    info = api.Workload(spec["workload"], seed=spec["seed"], page_size=spec["page_size"], **spec["params"]).info()
    return int(info["distinct_pages"]), int(info["references"])


def workload_info(process: dict, page_size: int) -> tuple:
    """(distinct pages, references) of one instance, from one pass over its references;
    cached, since sensitivity variants and the analysis ask again. (common.footprint_pages
    gives only the first.)"""
    key = {"workload": process["workload"], "seed": int(process.get("seed") or 0), "page_size": page_size,
           "params": dict(process.get("params", {}))}
    try:
        return _workload_info(json.dumps(key, sort_keys=True))
    except PagelabError as err:
        raise PagelabError(f"workload '{process.get('name', process['workload'])}': {err}") from None


def job_process(entry: dict, quick: bool) -> dict:
    """A [[workload]] entry as the engine's process of one job; with --quick its
    ``quick`` table laid over it."""
    p = {k: copy.deepcopy(v) for k, v in entry.items() if k in PROCESS_KEYS and v is not None}
    if quick:
        p = laid_over(p, {k: v for k, v in entry.get("quick", {}).items() if v is not None})
    return p


def superstep_refs(process: dict, references: int) -> int:
    """A barrier per iteration of the workload (its ``iterations`` parameter), as the
    NPB codes exchange boundaries and reduce once per time step."""
    iterations = int(process.get("params", {}).get("iterations", 1))
    return max(1, references // max(1, iterations))


def _time(value: float, scale: float) -> float:
    """A time scaled for --quick, rounded to the nanosecond (8 s x 0.2 is 1.6 s)."""
    return round(float(value) * scale, 9)


def time_scale(spec: Spec) -> float:
    """Seconds of this run per simulated second of the file: quick_scale with --quick;
    on the kernel times [kernel] time_scale (real seconds)."""
    scale = spec.scale
    if on_kernel(spec):
        k = spec.table("kernel")
        scale *= float(k["quick_time_scale"] if spec.quick else k["time_scale"])
    return scale


def settings(spec: Spec) -> dict:
    """The settings of this run: job_s and the activity window scaled for --quick (and
    on the kernel to real seconds), the base tables with the quantum (and on the kernel
    the sampling interval, at least the backend's 50 ms) scaled."""
    setup = spec.table("setup")
    base = copy.deepcopy(spec.table("base"))
    scale = time_scale(spec)
    if scale != 1.0 and "quantum_s" in base.get("gang", {}):
        base["gang"]["quantum_s"] = _time(base["gang"]["quantum_s"], scale)
    if on_kernel(spec):
        system = base.setdefault("system", {})
        system["sample_ms"] = max(50.0, round(float(system.get("sample_ms", 1000.0)) * scale, 3))
    until = setup.get("activity_until_s")
    return {"job_s": _time(setup["job_s"], scale), "memory_ratio": float(setup["memory_ratio"]),
            "activity_until_s": None if until is None else _time(until, scale),
            "early_fraction": float(setup["early_fraction"]), "base": base,
            "page_size": int(base.get("system", {}).get("page_size", 4096))}


def parallel_runs(spec: Spec) -> List[tuple]:
    """(workload, nodes) of figure 8: every workload on every cluster size, then the
    runs on one size only (``also``); none on the kernel (one machine)."""
    if on_kernel(spec):
        return []
    par = spec.table("parallel")
    runs = [(name, nodes) for nodes in par["nodes"] for name in par["workloads"]]
    for run in par["also"]:
        name, _, n = run.rpartition(" x")
        runs.append((name, int(n)))
    return runs


@functools.lru_cache(maxsize=256)
def _node_footprint(key: str) -> int:
    cfg = json.loads(key)
    result = run_engine(normalize_config(cfg, "node footprint", Path(".")), "node footprint")
    # each node's part of the job's pages and its copies of others' (partition.rs)
    return max(int(n["gang"]["footprint_pages"]) for n in result.raw["nodes"])


def node_footprint(base: dict, process: dict, pages: int, nodes: int, superstep: int) -> int:
    """The largest footprint of one node of a job split over ``nodes`` nodes (its part
    of the pages and the pages of others it holds copies of, as the engine splits them
    with gang.partition = "split" or "split_neighbours"): from a run with memory for
    everything. With ``partition = "copies"`` the serial footprint."""
    g = base.get("gang", {})
    partition = g.get("partition", "split")
    if nodes == 1 or partition == "copies":
        return pages
    # which pages a node holds depends on the stream, the page size, the split and the
    # barriers, not on time, reclaim or the mechanisms (there is memory for everything):
    # the run keeps only those, so that the variants that change anything else share one
    # footprint run (each is a whole simulation, run before the points)
    system = base.get("system", {})
    kept = {"system": {k: system[k] for k in ("page_size", "seed") if k in system},
            "gang": {"partition": partition}}
    cfg = gang_config(kept, dict(process, cpu_ns_per_ref=1.0), 2 * pages + 1024, nodes, None, superstep)
    cfg["process"] = cfg["process"][:1]
    cfg["system"]["sample_ms"] = 1e6
    return _node_footprint(json.dumps(cfg, sort_keys=True))


def sizes(spec: Spec) -> Dict[str, dict]:
    """Per workload: footprint, references, frames per node (serial, and by cluster size
    from a node's footprint), references per barrier and the CPU cost per reference that
    makes an instance compute job_s alone."""
    s = settings(spec)
    out = {}
    sizes_by_nodes: Dict[str, set] = {}
    for name, nodes in parallel_runs(spec):
        sizes_by_nodes.setdefault(name, set()).add(nodes)
    for entry in spec.table("workload"):
        proc = job_process(entry, spec.quick)
        pages, refs = workload_info(dict(proc, name=entry["name"]), s["page_size"])
        cpu = float(proc.get("cpu_ns_per_ref") or s["job_s"] * 1e9 / max(1, refs))
        step = superstep_refs(proc, refs)
        ratio = s["memory_ratio"] * float(entry.get("memory_scale", 1.0))
        # on the kernel an instance's memory is also the runner's own pages in its cgroup
        own = int(spec.table("kernel")["runner_pages"]) if on_kernel(spec) else 0
        by_nodes = {}
        for nodes in sorted(sizes_by_nodes.get(entry["name"], set())):
            node_pages = node_footprint(s["base"], dict(proc, cpu_ns_per_ref=cpu), pages, nodes, step)
            by_nodes[nodes] = {"node_pages": node_pages, "frames": max(16, int(round(ratio * node_pages)))}
        out[entry["name"]] = {"pages": pages, "references": refs, "memory_ratio": ratio,
                              "frames": max(16, int(round(ratio * (pages + own)))),
                              "superstep_refs": step, "cpu_ns_per_ref": cpu,
                              "seconds_per_iteration": cpu * step / 1e9, "nodes": by_nodes}
    return out


def frames_of(size: dict, nodes: int) -> int:
    """Frames per node of a workload's run on ``nodes`` nodes."""
    return size["frames"] if nodes == 1 else size["nodes"][nodes]["frames"]


def gang_config(base: dict, process: dict, frames: int, nodes: int, mechanisms: Optional[list],
                superstep: int) -> dict:
    """The configuration (as in a TOML file) of one run: two instances of ``process`` as
    two jobs; ``mechanisms`` None is batch."""
    cfg = copy.deepcopy(base)
    cfg.setdefault("system", {})["frames"] = int(frames)
    g = cfg.setdefault("gang", {})
    g["nodes"] = nodes
    g["mode"] = "batch" if mechanisms is None else "gang"
    g["mechanisms"] = list(mechanisms or [])
    jobs = []
    for i in range(2):
        p = copy.deepcopy(process)
        p["name"] = f"{p['workload']}.{i + 1}"
        p["seed"] = int(p.get("seed", 0)) + 1000 * i  # the second instance works on other data
        if nodes > 1:
            p["superstep_refs"] = superstep
        jobs.append(p)
    cfg["process"] = jobs
    return cfg


def what(mechanisms: Optional[list]) -> str:
    """'batch', 'LRU' or the mechanisms as the paper writes them ('so/ao/ai/bg')."""
    return "batch" if mechanisms is None else label(mechanisms)


def point_key(workload: str, nodes: int, mechanisms: Optional[list], reclaim: Optional[str] = None) -> str:
    """A run's name; ``reclaim``: the baseline kernel beside the main one (None: the main)."""
    key = f"{workload} x{nodes} | {what(mechanisms)}"
    return key if reclaim is None else f"{key} | {reclaim}"


def _runs(spec: Spec) -> List[tuple]:
    """(workload, nodes, mechanisms) of every run, once each, in the figures' order."""
    bd = spec.table("breakdown")
    # on the kernel: no second reclaim to run beside the kernel's own
    beside = None if on_kernel(spec) else spec.table("setup").get("beside_reclaim")
    runs = []
    figure78 = [(w["name"], 1) for w in spec.table("workload")] + parallel_runs(spec)
    for name, nodes in figure78:
        runs += [(name, nodes, m, None) for m in (None, [], ALL)]
    if bd is not None:
        for nodes in cluster_sizes(spec):
            runs += [(bd["workload"], nodes, m, None) for m in [None, []] + BREAKDOWN]
        runs += [(bd["workload"], _activity_nodes(spec), m, None) for m in ACTIVITY]
    if beside is not None:
        for name, nodes in figure78:
            runs += [(name, nodes, m, beside) for m in (None, [], ALL)]
    return list({point_key(*r): r for r in runs}.values())


def cluster_sizes(spec: Spec) -> List[int]:
    """Figure 9's cluster sizes: serial, then each of figure 8's; serial only on the kernel."""
    return [1] if on_kernel(spec) else [1] + list(spec.table("parallel")["nodes"])


def _activity_nodes(spec: Spec) -> int:
    """Figure 6's cluster: the largest (on the kernel: the one machine, a figure only)."""
    return max(cluster_sizes(spec))


def configs(spec: Spec) -> Dict[str, dict]:
    """Every run's engine configuration, by point key."""
    s, size = settings(spec), sizes(spec)
    entries = {w["name"]: w for w in spec.table("workload")}
    base_dir = spec.path.resolve().parent
    out = {}
    scale = spec.table("parallel")["quantum_scale"]
    for name, nodes, mechs, reclaim in _runs(spec):
        m = size[name]
        proc = dict(job_process(entries[name], spec.quick), cpu_ns_per_ref=m["cpu_ns_per_ref"])
        key = point_key(name, nodes, mechs, reclaim)
        base = copy.deepcopy(s["base"])
        if reclaim is not None:
            base.setdefault("system", {})["reclaim"] = reclaim
        factor = scale.get(f"{name} x{nodes}")
        if factor is not None:
            base.setdefault("gang", {})["quantum_s"] = _time(base.get("gang", {}).get("quantum_s", 300.0), factor)
        cfg = gang_config(base, proc, frames_of(m, nodes), nodes, mechs, m["superstep_refs"])
        if on_kernel(spec):
            cfg["kernel"] = kernel_table(spec)
        out[key] = normalize_config(cfg, f"{spec.path.name}: workload '{name}' on {nodes} node(s), {what(mechs)}",
                                    base_dir)
    return out


def kernel_table(spec: Spec) -> dict:
    """The [kernel] table of a run on the kernel: repetitions, CPUs, the controller's period."""
    k = spec.table("kernel")
    return {"repeats": int(k["quick_repeats"] if spec.quick else k["repeats"]), "cpus": list(k["cpus"]),
            "control_ms": int(k["control_ms"]), "dedicated": bool(k["dedicated"])}


def points(spec: Spec) -> List[Point]:
    return [Point(key, "gang", cfg) for key, cfg in configs(spec).items()]


# ---------------------------------------------------------------- the analysis

def paged_pages(raw: dict) -> int:
    """Pages read and written by every node's swap disk: the paging of the run."""
    return sum(n["pages_read"] + n["pages_written"] for n in raw["nodes"])


def run_metrics(gang: dict, batch: dict) -> dict:
    """Completion of both instances, switching overhead against batch, pages paged."""
    t, b = gang["end_ns"] / 1e9, batch["end_ns"] / 1e9
    faults = sum(p["major_faults"] for n in gang["nodes"] for p in n["processes"])
    return {"completion_s": t, "overhead_s": t - b, "overhead_pct": 100.0 * (t - b) / t if t else 0.0,
            "pages_paged": paged_pages(gang), "major_faults": int(faults)}


def compare(results: Results, workload: str, nodes: int, combos: Sequence[list], reclaim: Optional[str] = None) -> dict:
    """One workload on ``nodes`` nodes: batch, LRU and each combination in ``combos``,
    each with its reductions against LRU (overhead, completion, pages paged);
    ``reclaim``: the runs of the baseline kernel beside the main one."""
    batch = results.full(point_key(workload, nodes, None, reclaim))
    lru = run_metrics(results.full(point_key(workload, nodes, [], reclaim)), batch)
    row = {"workload": workload, "nodes": nodes, "batch_s": batch["end_ns"] / 1e9, "LRU": lru, "configs": {}}
    for combo in combos:
        m = run_metrics(results.full(point_key(workload, nodes, combo, reclaim)), batch)
        m["overhead_reduction_pct"] = reduction_pct(lru["overhead_s"], m["overhead_s"]) \
            if lru["overhead_s"] > 0 else None
        m["completion_reduction_pct"] = reduction_pct(lru["completion_s"], m["completion_s"])
        m["paging_reduction_pct"] = reduction_pct(lru["pages_paged"], m["pages_paged"])
        row["configs"][label(combo)] = m
    return row


def early_share(raw: dict, quantum_s: float, fraction: float, node: int = 0) -> float:
    """The share of node ``node``'s page-ins in the first ``fraction`` of the quantum after
    each switch (figure 1's compaction: paging at the start of a quantum). A sample at
    time t counts the reads issued in (previous sample, t]; it is early when that interval
    reaches into [switch, switch + fraction x quantum)."""
    series = raw["nodes"][node]["system_series"]
    switches = [s["t_ns"] / 1e9 for s in raw["switches"] if s["from"] is not None]
    early = total = 0
    prev = 0.0
    for t, x in zip(series["t_s"], series["pages_in"]):
        total += x
        if any(prev < s + fraction * quantum_s and t >= s for s in switches):
            early += x
        prev = t
    return early / total if total else 0.0


def paging_intensity(raw: dict, node: int = 0) -> float:
    """Node ``node``'s mean page-in rate (pages/s) over the samples that have page-ins:
    how fast it pages while it pages."""
    series = raw["nodes"][node]["system_series"]
    rates, prev = [], 0.0
    for t, x in zip(series["t_s"], series["pages_in"]):
        if x > 0 and t > prev:
            rates.append(x / (t - prev))
        prev = t
    return sum(rates) / len(rates) if rates else 0.0


def gap_below_others(values: Dict[str, Optional[float]], name: str) -> Optional[float]:
    """How far ``values[name]`` lies below the smallest of the other entries (negative
    when it is not the smallest); None when a value is missing. (A helper other ports
    comparing one program against the rest could share.)"""
    others = [v for k, v in values.items() if k != name]
    if name not in values or values[name] is None or not others or any(v is None for v in others):
        return None
    return min(others) - values[name]


def gain_pct(before_s: float, after_s: float) -> Optional[float]:
    """Completion-time gain of ``after`` over ``before``, % of ``before`` (negative: slower)."""
    return reduction_pct(before_s, after_s)


def cluster_name(nodes: int) -> str:
    return "serial" if nodes == 1 else f"{nodes} nodes"


def _serial_parallel_measures(serial: List[dict], parallel: List[dict], par_nodes: List[int]) -> dict:
    m: Dict[str, object] = {}
    red = {r["workload"]: r["configs"]["so/ao/ai/bg"]["overhead_reduction_pct"] for r in serial}
    m["serial_completion_reduction_pct"] = {r["workload"]: r["configs"]["so/ao/ai/bg"]["completion_reduction_pct"]
                                            for r in serial}
    m["serial_lru_overhead_pct"] = {r["workload"]: r["LRU"]["overhead_pct"] for r in serial}
    m["serial_all_overhead_pct"] = {r["workload"]: r["configs"]["so/ao/ai/bg"]["overhead_pct"] for r in serial}
    m["serial_overhead_reduction_pct"] = red
    if "IS" in red:
        m["serial_is_reduction_gap_pct"] = gap_below_others(red, "IS")
    run = lambda r: f"{r['workload']} x{r['nodes']}"  # noqa: E731
    m["parallel_completion_reduction_pct"] = {run(r): r["configs"]["so/ao/ai/bg"]["completion_reduction_pct"]
                                              for r in parallel}
    m["parallel_lru_overhead_pct"] = {run(r): r["LRU"]["overhead_pct"] for r in parallel}
    pred = {run(r): r["configs"]["so/ao/ai/bg"]["overhead_reduction_pct"] for r in parallel}
    m["parallel_overhead_reduction_pct"] = pred
    by_nodes: Dict[str, list] = {}
    for r in parallel:
        by_nodes.setdefault(r["workload"], []).append(pred[run(r)])
    # the workloads run on more than one cluster size (not SP x4 and MG x2 alone)
    m["parallel_reduction_by_nodes"] = {k: v for k, v in by_nodes.items() if len(v) > 1}
    if "CG" in by_nodes:
        m["parallel_cg_reduction_gap_pct"] = {
            cluster_name(n): gap_below_others({r["workload"]: pred[run(r)] for r in parallel if r["nodes"] == n}, "CG")
            for n in par_nodes}
    rows = serial + parallel
    pairs = [(r["LRU"]["overhead_pct"], r["configs"]["so/ao/ai/bg"]["overhead_reduction_pct"]) for r in rows]
    pairs = [(a, b) for a, b in pairs if b is not None]
    if len(pairs) >= 3:
        m["stress_reduction_rho"] = spearman([a for a, _ in pairs], [b for _, b in pairs])
    if pairs:
        m["overhead_reduction_max_pct"] = max(b for _, b in pairs)
        m["overhead_reduction_spread_pct"] = max(b for _, b in pairs) - min(b for _, b in pairs)
    return m


def breakdown_measures(breakdown: List[dict]) -> dict:
    """Figure 9's measures from the breakdown rows (serial first, then each cluster)."""
    m: Dict[str, object] = {}
    if not breakdown:
        return m
    serial = [r for r in breakdown if r["nodes"] == 1]
    parallel = [r for r in breakdown if r["nodes"] > 1]
    cfg = lambda r, c: r["configs"][c]  # noqa: E731

    def split(values: Dict[int, Optional[float]]) -> dict:
        out: Dict[str, object] = {}
        if serial:
            out["serial"] = values[1]
        if parallel:
            out["parallel"] = [values[r["nodes"]] for r in parallel]
        return out

    m["lu_lru_overhead_pct"] = split({r["nodes"]: r["LRU"]["overhead_pct"] for r in breakdown})
    allr = {cluster_name(r["nodes"]): cfg(r, "so/ao/ai/bg")["overhead_reduction_pct"] for r in breakdown}
    m["lu_all_reduction_pct"] = allr
    if serial and parallel and all(v is not None for v in allr.values()):
        m["lu_serial_reduction_lead_pct"] = allr["serial"] - max(allr[cluster_name(r["nodes"])] for r in parallel)
    m["lu_ai_so_reduction_pct"] = {c: [cfg(r, c)["overhead_reduction_pct"] for r in breakdown] for c in ("ai", "so")}
    m["lu_ao_gain_pct"] = split({r["nodes"]: gain_pct(cfg(r, "so")["completion_s"], cfg(r, "so/ao")["completion_s"])
                                 for r in breakdown})
    m["lu_bg_gain_pct"] = split({r["nodes"]: gain_pct(cfg(r, "so/ao")["completion_s"],
                                                      cfg(r, "so/ao/bg")["completion_s"]) for r in breakdown})
    m["lu_ai_gain_pct"] = {cluster_name(r["nodes"]): gain_pct(cfg(r, "so/ao/bg")["completion_s"],
                                                              cfg(r, "so/ao/ai/bg")["completion_s"])
                           for r in breakdown}
    margins = {}
    for r in breakdown:
        others = [cfg(r, label(c))["overhead_reduction_pct"] for c in BREAKDOWN if c != ALL]
        best = cfg(r, "so/ao/ai/bg")["overhead_reduction_pct"]
        margins[cluster_name(r["nodes"])] = None if best is None or None in others else best - max(others)
    m["lu_all_best_margin_pct"] = margins
    return m


def activity_measures(raws: Dict[str, dict], quantum_s: float, fraction: float) -> dict:
    """Figure 6's measures from the runs by label ('LRU', 'so', ...): early page-in
    shares, pages paged against LRU's, page-in intensity of so/ao/ai/bg over LRU's."""
    m: Dict[str, object] = {
        "activity_early_share_pct": {k: 100.0 * early_share(raw, quantum_s, fraction) for k, raw in raws.items()}}
    if "LRU" in raws:
        lru = paged_pages(raws["LRU"])
        m["activity_paged_reduction_pct"] = {k: reduction_pct(lru, paged_pages(raw)) for k, raw in raws.items()
                                             if k != "LRU"}
        base = paging_intensity(raws["LRU"])
        if "so/ao/ai/bg" in raws and base > 0:
            m["activity_intensity_ratio"] = paging_intensity(raws["so/ao/ai/bg"]) / base
    return m


def _paper(spec: Spec, row: dict, key: str):
    if row["nodes"] == 1:
        entry = next(w for w in spec.table("workload") if w["name"] == row["workload"])
        return entry.get("paper", {}).get(key)
    value = spec.table("parallel")["paper"].get(f"{row['workload']}_{row['nodes']}", {})
    return value.get(key) if isinstance(value, dict) else None


def _rows(spec: Spec, results: Results) -> tuple:
    bd = spec.table("breakdown")
    serial = [compare(results, w["name"], 1, [ALL]) for w in spec.table("workload")]
    parallel = [compare(results, name, nodes, [ALL]) for name, nodes in parallel_runs(spec)]
    breakdown = [] if bd is None else [compare(results, bd["workload"], nodes, BREAKDOWN)
                                       for nodes in cluster_sizes(spec)]
    return serial, parallel, breakdown


def kernel_of(results: Results, serial: List[dict]) -> str:
    """The kernel version a kernel run recorded."""
    if not serial:
        return "?"
    raw = results.full(point_key(serial[0]["workload"], 1, None))
    return str(raw.get("kernel", "?"))


def table_rows(serial: List[dict], parallel: List[dict], breakdown: List[dict]) -> List[dict]:
    """table.csv: one row per (part, workload, nodes, configuration)."""
    out = []
    for part, rows in (("serial", serial), ("parallel", parallel), ("breakdown", breakdown)):
        for r in rows:
            out.append({"part": part, "workload": r["workload"], "nodes": r["nodes"], "config": "batch",
                        "completion_s": r["batch_s"]})
            for name, m in [("LRU", r["LRU"])] + list(r["configs"].items()):
                out.append({"part": part, "workload": r["workload"], "nodes": r["nodes"], "config": name, **m})
    return out


def analyse(spec: Spec, results: Results) -> Analysis:
    s = settings(spec)
    serial, parallel, breakdown = _rows(spec, results)
    m = _serial_parallel_measures(serial, parallel, list(spec.table("parallel")["nodes"]))
    m.update(breakdown_measures(breakdown))
    lines = []
    if on_kernel(spec):
        # one machine: what needs the parallel runs is not measured (no measure, no verdict)
        for key in KERNEL_NOT_MEASURED:
            m.pop(key, None)
        lines.append(f"on this machine's kernel ({kernel_of(results, serial)}): {KERNEL}; the original paging "
                     "('LRU') is the kernel's own reclaim")
    beside = None if on_kernel(spec) else spec.table("setup").get("beside_reclaim")
    beside_rows: List[dict] = []
    if beside is not None:
        bserial = [compare(results, w["name"], 1, [ALL], beside) for w in spec.table("workload")]
        bparallel = [compare(results, name, nodes, [ALL], beside) for name, nodes in parallel_runs(spec)]
        beside_rows = bserial + bparallel
        m.update({f"{beside}_{k}": v for k, v in
                  _serial_parallel_measures(bserial, bparallel, list(spec.table("parallel")["nodes"])).items()})
    bd = spec.table("breakdown")
    if bd is not None and not on_kernel(spec):
        nodes = _activity_nodes(spec)
        raws = {label(c): results.full(point_key(bd["workload"], nodes, c)) for c in ACTIVITY}
        quantum = float(s["base"].get("gang", {}).get("quantum_s", 300.0))
        m.update(activity_measures(raws, quantum, s["early_fraction"]))
        lines.append(f"page-ins in the first {s['early_fraction']:.0%} of a quantum (figure 6, {bd['workload']} on "
                     f"{nodes} node(s), node 0): " + ", ".join(
                         f"{k} {v:.0f}%" for k, v in m["activity_early_share_pct"].items()))
        if "activity_intensity_ratio" in m:
            lines.append(f"page-in rate while paging, so/ao/ai/bg over LRU: {m['activity_intensity_ratio']:.2f}x")

    def p(row, key):
        v = _paper(spec, row, key)
        return "n/a" if v is None else f"{v:g}%"

    v78 = []
    for r in serial + parallel:
        a = r["configs"]["so/ao/ai/bg"]
        v78.append([r["workload"], str(r["nodes"]), f"{r['batch_s']:,.1f}", f"{r['LRU']['completion_s']:,.1f}",
                    f"{a['completion_s']:,.1f}", f"{r['LRU']['overhead_pct']:.0f}%", p(r, "lru_overhead_pct"),
                    f"{a['overhead_pct']:.0f}%", p(r, "all_overhead_pct"), fmt_pct(a["overhead_reduction_pct"]),
                    p(r, "overhead_reduction_pct"), f"{r['LRU']['pages_paged']:,}", f"{a['pages_paged']:,}"])
    views = [View("figures 7 and 8: ours beside the paper's (overhead = (gang - batch) / gang; reduction against LRU)",
                  ["workload", "nodes", "batch (s)", "LRU (s)", "so/ao/ai/bg (s)", "overhead LRU", "paper",
                   "overhead so/ao/ai/bg", "paper", "overhead reduction", "paper", "pages paged LRU", "so/ao/ai/bg"],
                  v78, readme=True)]
    if beside_rows:
        main = spec.table("base").get("system", {}).get("reclaim", "linux22")
        views.append(View(f"figures 7 and 8 under the {beside} baseline beside {main} (the same runs with "
                          f"system.reclaim = \"{beside}\")",
                          ["workload", "nodes", "batch (s)", "LRU (s)", "so/ao/ai/bg (s)", "overhead LRU",
                           f"overhead LRU ({main})", "overhead so/ao/ai/bg", "overhead reduction",
                           f"overhead reduction ({main})"],
                          [[b["workload"], str(b["nodes"]), f"{b['batch_s']:,.1f}", f"{b['LRU']['completion_s']:,.1f}",
                            f"{b['configs']['so/ao/ai/bg']['completion_s']:,.1f}", f"{b['LRU']['overhead_pct']:.0f}%",
                            f"{r['LRU']['overhead_pct']:.0f}%", f"{b['configs']['so/ao/ai/bg']['overhead_pct']:.0f}%",
                            fmt_pct(b["configs"]["so/ao/ai/bg"]["overhead_reduction_pct"]),
                            fmt_pct(r["configs"]["so/ao/ai/bg"]["overhead_reduction_pct"])]
                           for b, r in zip(beside_rows, serial + parallel)], readme=True))
    if breakdown:
        paper9 = bd.get("paper", {})
        views.append(View(f"figure 9: {bd['workload']} by mechanism (switching overhead, its reduction against LRU)",
                          ["nodes", "LRU"] + [label(c) for c in BREAKDOWN] + ["paper so/ao/ai/bg"],
                          [[str(r["nodes"]), f"{r['LRU']['overhead_pct']:.0f}%"]
                           + [f"{r['configs'][label(c)]['overhead_pct']:.0f}% "
                              f"({fmt_pct(r['configs'][label(c)]['overhead_reduction_pct'])})" for c in BREAKDOWN]
                           + [fmt_pct(paper9.get("serial" if r["nodes"] == 1 else f"nodes_{r['nodes']}"))]
                           for r in breakdown], readme=True))
    size = sizes(spec)
    sizes_df = pd.DataFrame([dict(workload=k, **{a: b for a, b in v.items() if a != "nodes"},
                                  **{f"frames_x{n}": d["frames"] for n, d in v["nodes"].items()},
                                  **{f"node_pages_x{n}": d["node_pages"] for n, d in v["nodes"].items()})
                             for k, v in size.items()])
    summary = {"settings": {k: v for k, v in s.items() if k != "base"}, "quantum_s": s["base"].get("gang", {}).get(
        "quantum_s"), "sizes": size, "serial": serial, "parallel": parallel, "breakdown": breakdown,
        "beside": beside_rows}
    return Analysis(measures=m, tables={"table": pd.DataFrame(table_rows(serial, parallel, breakdown)),
                                        "sizes": sizes_df},
                    views=views, lines=lines, summary=summary)


# ---------------------------------------------------------------- the figures

def bar_frame(rows: List[dict], configs: List[str], group: str = "workload") -> pd.DataFrame:
    """Long form for the grouped bars: one row per (group, configuration) with the
    completion time, the overhead and its reduction as fractions."""
    recs = []
    for r in rows:
        if group == "workload":
            g = r["workload"] if r["nodes"] == 1 else f"{r['workload']} x{r['nodes']}"
        else:
            g = f"{r['nodes']} node(s)"
        recs.append({"group": g, "config": "batch", "completion_s": r["batch_s"]})
        for name in configs:
            m = r["LRU"] if name == "LRU" else r["configs"][name]
            recs.append({"group": g, "config": name, "completion_s": m["completion_s"],
                         "overhead": m["overhead_pct"] / 100.0,
                         "reduction": (m.get("overhead_reduction_pct") or 0.0) / 100.0})
    return pd.DataFrame(recs)


def bar_figures(out: Path, tag: str, rows: List[dict], configs: List[str], group: str = "workload") -> List[str]:
    """Completion time, switching overhead and its reduction as grouped bars (figures
    7-9 (a), (b), (c))."""
    df = bar_frame(rows, configs, group)
    names = []
    for suffix, value, ylabel, title, sub in (
            ("completion", "completion_s", "completion of both instances (s)", "job completion time", df),
            ("overhead", "overhead", "switching overhead (%)", "(gang - batch) / gang", df[df["config"] != "batch"]),
            ("reduction", "reduction", "overhead reduction vs LRU (%)", "reduction of the switching overhead",
             df[~df["config"].isin(["batch", "LRU"])])):
        name = f"gang-{tag}-{suffix}.png"
        plot_grouped_bars(sub, out / name, value, ylabel, f"{tag}: {title}", group="group",
                          percent=value != "completion_s",
                          xlabel="workload (xN: on N nodes)" if group == "workload" else "cluster size")
        names.append(name)
    return names


def figures(spec: Spec, analysis: Analysis, results: Results, out: Path) -> List[str]:
    """Figures 7 (serial) and 8 (parallel) as grouped bars of LRU against so/ao/ai/bg,
    figure 9 (the breakdown workload by combination and cluster size), and figure 6 (its
    paging activity on the largest cluster under LRU, so, so/ao and so/ao/ai/bg)."""
    a = analysis.summary
    written = []
    for tag in ("serial", "parallel"):
        if a[tag]:
            written += bar_figures(out, tag, a[tag], ["LRU", "so/ao/ai/bg"])
    bd = spec.table("breakdown")
    if a["breakdown"]:
        written += bar_figures(out, "breakdown", a["breakdown"], ["LRU"] + [label(c) for c in BREAKDOWN],
                               group="nodes")
        nodes = _activity_nodes(spec)
        cfgs = configs(spec)
        runs = []
        for c in ACTIVITY:
            key = point_key(bd["workload"], nodes, c)
            runs.append((label(c), GangResult(results.full(key), cfgs[key], name=key)))
        name = "gang-activity.png"
        title = (f"{bd['workload']} serial on this machine's kernel: its swap-ins and the machine's swap-outs "
                 "(figure 6's view; the paper's is on 4 nodes)" if on_kernel(spec) else
                 f"{bd['workload']} on {nodes} node(s): paging activity of node 0 (figure 6)")
        plot_paging_activity(runs, out / name, until_s=a["settings"]["activity_until_s"], title=title)
        written.append(name)
    return written
