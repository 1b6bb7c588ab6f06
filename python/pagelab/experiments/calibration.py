"""The calibration experiment (issue 17): the simulator beside this machine's kernel.

This machine is probed (``pagelab kernel probe``: the swap device, a first touch, a
swap-in) and the simulator's SSD, fault costs and readahead are fitted to it; then each
configuration (a workload alone or a pair, at each memory size) runs on the kernel
(``kernel`` points, repeated, one at a time after every simulated point) and in the
simulator under each reclaim model of ``[[model]]``. The measures put each model's
major faults and slowdowns beside the kernel's medians, run by run."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pandas as pd

from .. import api
from .._core import PagelabError
from ..figures.versus import plot_against_paper
from ..kernel.host import is_root, swap_devices
from ..kernel.probe import fit, probe
from .claims import spearman
from .common import base_table, engine_process, footprint_pages, laid_over, process_fields
from .protocol import Analysis, Point, Results, Spec, View
from .schema import AnyTable, ArrayOf, Field, Int, List_, Number, Str, Table

MODEL = Table({
    "name": Field(Str(), doc="the model's name in tables and claims"),
    "system": Field(AnyTable("a table of [system] keys"), {}, "laid over [base.system] (reclaim, ...)"),
    "swap": Field(AnyTable("a table of [swap] keys"), {}, "laid over [base.swap]"),
})
TABLES = {
    "setup": Field(Table({
        "memory": Field(List_(Number(above=0, max=2), min_len=1), doc="frames, fractions of the summed footprint"),
        "run_s": Field(Number(above=0), doc="each workload's CPU time alone, s (scaled with --quick)"),
        "repeats": Field(Int(min=1, max=100), 3, "kernel runs of each configuration"),
        "oom_retries": Field(Int(min=0, max=10), 3, "kernel runs the OOM killer may end (each run again, counted)"),
        "cpus": Field(List_(Int(min=0), min_len=1), [0], "the CPUs of the kernel runs (the simulator has one)"),
        "min_faults": Field(Number(min=0), 50, "fault ratios only where the kernel took this many major faults"),
        "pairs": Field(List_(List_(Str(), min_len=2, max_len=2)), [], "pairs of workload names"),
        "probe": Field(Table({
            "mb": Field(Int(min=1, max=65536), 256, "probe file, MiB"),
            "reads": Field(Int(min=1, max=1_000_000), 2000, "4 KiB random reads"),
            "pages": Field(Int(min=16, max=1 << 24), 20000, "pages of the fault probe"),
        }), {}),
    })),
    "fit": Field(Table({
        "latency_scale": Field(Number(above=0), 1.0, "the fitted SSD latency times this"),
        "major_fault_scale": Field(Number(above=0), 1.0, "the fitted major-fault cost times this"),
    }), {}),
    "base": Field(base_table("system", "disk", "swap"), {}, "laid under every run"),
    "workload": Field(ArrayOf(Table(process_fields()), min_len=1), doc="the workloads"),
    "model": Field(ArrayOf(MODEL, min_len=1), doc="the simulator's reclaim models"),
}
MEASURES = {
    "kernel_fault_spread": "per kernel run and process: largest / smallest major faults over the repetitions",
    "kernel_alone_faults": "per workload: its kernel major faults alone at each memory size, smallest first",
    "fault_ratio": "per model: simulated / kernel major faults, per run and process (kernel >= min_faults)",
    "slowdown_ratio": "per model: simulated / kernel slowdown, per run and process",
    "slowdown_rho": "per model: Spearman's rho of simulated and kernel slowdowns over every run and process",
    "fault_error": "per model: geometric mean of |log2(simulated / kernel major faults)|",
    "best_slowdown_ratio": "simulated / kernel slowdown per run and process, for the model of smallest fault_error",
}

_probes: Dict[Tuple, dict] = {}


def check(spec: Spec) -> None:
    names = [w["name"] for w in spec.table("workload")]
    if len(set(names)) != len(names):
        raise PagelabError(f"{spec.path.name}: workload: two workloads named the same")
    for i, pair in enumerate(spec.table("setup")["pairs"]):
        for n in pair:
            if n not in names:
                raise PagelabError(f"{spec.path.name}: setup.pairs[{i}]: no workload '{n}' (known: {', '.join(names)})")
    models = [m["name"] for m in spec.table("model")]
    if len(set(models)) != len(models):
        raise PagelabError(f"{spec.path.name}: model: two models named the same")


def machine_fit(spec: Spec) -> dict:
    """This machine probed and the simulator's keys fitted (once per run of pagelab)."""
    pr = spec.table("setup")["probe"]
    key = (pr["mb"], pr["reads"], pr["pages"])
    if key not in _probes:
        if not is_root():
            raise PagelabError(f"{spec.path.name}: the calibration runs on the kernel backend, which needs root")
        if not swap_devices():
            raise PagelabError(f"{spec.path.name}: no active swap: the kernel runs page to swap "
                               "(pagelab kernel setup --swap 1G first)")
        measured = probe(None, pr["mb"], pr["reads"], pr["pages"])
        _probes[key] = {"measured": measured, "fitted": fit(measured)}
    return _probes[key]


def simulator_keys(spec: Spec) -> dict:
    """The fitted keys, times the [fit] scales: tables of [system], [disk], [swap]."""
    fitted = copy.deepcopy(machine_fit(spec)["fitted"])
    f = spec.table("fit")
    fitted["disk"]["latency_us"] = round(fitted["disk"]["latency_us"] * f["latency_scale"], 3)
    if "major_fault_cpu_ns" in fitted["system"]:
        fitted["system"]["major_fault_cpu_ns"] = round(fitted["system"]["major_fault_cpu_ns"] * f["major_fault_scale"], 1)
    return {t: fitted[t] for t in ("system", "disk", "swap")}


def _workloads(spec: Spec) -> Dict[str, dict]:
    """Each workload as an engine process (scaled) with its footprint and its CPU cost
    per reference (run_s of CPU alone)."""
    page_size = int(spec.table("base").get("system", {}).get("page_size", 4096))
    run_s = spec.table("setup")["run_s"] * spec.scale
    out = {}
    for entry in spec.table("workload"):
        p = engine_process(entry, spec.scale)
        pages = footprint_pages(p, page_size, spec.path.parent)
        info = _references(p, page_size)
        p.setdefault("cpu_ns_per_ref", run_s * 1e9 / max(info, 1))
        out[entry["name"]] = {"process": p, "pages": pages}
    return out


def _references(process: dict, page_size: int) -> int:
    src = api.Workload(process["workload"], seed=int(process.get("seed") or 0), page_size=page_size,
                       **process.get("params", {}))
    return int(src.info()["references"])


def configurations(spec: Spec) -> List[dict]:
    """Every configuration: (name, processes, frames) for each workload alone and each
    pair, at each memory size."""
    w = _workloads(spec)
    groups = [[n] for n in w] + [list(p) for p in spec.table("setup")["pairs"]]
    out = []
    for names in groups:
        pages = sum(w[n]["pages"] for n in names)
        procs = []
        for n in names:
            p = copy.deepcopy(w[n]["process"])
            p["name"] = n
            procs.append(p)
        for frac in spec.table("setup")["memory"]:
            out.append({"name": "+".join(names), "memory": frac, "processes": procs,
                        "frames": max(16, int(round(frac * pages))), "alone": len(names) == 1})
    return out


def _key(c: dict) -> str:
    return f"{c['name']} @ {c['memory']:g}"


def points(spec: Spec) -> List[Point]:
    base = spec.table("base")
    sim = simulator_keys(spec)
    out = []
    for c in configurations(spec):
        cfg = copy.deepcopy(base)
        cfg.setdefault("system", {})["frames"] = c["frames"]
        cfg["processes"] = copy.deepcopy(c["processes"])
        kernel = copy.deepcopy(cfg)
        setup = spec.table("setup")
        # one CPU, as the simulator's machine (the stream generators run on the others)
        kernel["kernel"] = {"repeats": setup["repeats"], "oom_retries": setup["oom_retries"], "cpus": setup["cpus"]}
        out.append(Point(f"kernel | {_key(c)}", "kernel", kernel))
        for m in spec.table("model"):
            s = {k: v for k, v in cfg.items() if k != "kernel"}
            s = laid_over(s, {"system": sim["system"], "disk": sim["disk"], "swap": sim["swap"]})
            s = laid_over(s, {"system": m["system"], "swap": m["swap"]})
            out.append(Point(f"{m['name']} | {_key(c)}", "system", s))
    return out


def _rows(results: Results, key: str) -> Dict[str, dict]:
    return {r["process"]: r for r in results.rows(key)}


def _spread(raw: dict, name: str) -> Optional[float]:
    for p in raw["processes"]:
        if p["name"] == name:
            lo, hi = (p.get("spread") or {}).get("major_faults", [p["major_faults"]] * 2)
            return hi / lo if lo else (1.0 if hi == 0 else None)
    return None


def analyse(spec: Spec, results: Results) -> Analysis:
    setup = spec.table("setup")
    models = [m["name"] for m in spec.table("model")]
    rows = []
    spread = []
    alone: Dict[str, List[float]] = {}
    lost, oom_kills = [], 0
    for c in configurations(spec):
        error = results.failed(f"kernel | {_key(c)}")
        if error is not None:
            # the kernel gave no result (OOM-killed more often than allowed): reported, left out
            lost.append(f"{_key(c)}: {error}")
            continue
        k = _rows(results, f"kernel | {_key(c)}")
        raw = results.full(f"kernel | {_key(c)}")
        oom_kills += raw.get("oom_kills", 0)
        for p in c["processes"]:
            n = p["name"]
            kr = k[n]
            s = _spread(raw, n)
            if s is not None and kr["major_faults"] >= setup["min_faults"]:
                spread.append(s)
            if c["alone"]:
                alone.setdefault(n, []).append(kr["major_faults"])
            row = {"run": f"{_key(c)}: {n}", "configuration": c["name"], "memory": c["memory"], "process": n,
                   "frames": c["frames"], "kernel_major_faults": kr["major_faults"],
                   "kernel_slowdown": kr["slowdown"], "kernel_runtime_s": kr["runtime_s"]}
            for m in models:
                sr = _rows(results, f"{m} | {_key(c)}")[n]
                row[f"{m}_major_faults"] = sr["major_faults"]
                row[f"{m}_slowdown"] = sr["slowdown"]
            rows.append(row)
    df = pd.DataFrame(rows)
    counted = df[df.kernel_major_faults >= setup["min_faults"]]
    fault_ratio, slowdown_ratio, rho, error = {}, {}, {}, {}
    for m in models:
        ratios = [s / k for s, k in zip(counted[f"{m}_major_faults"], counted.kernel_major_faults)]
        fault_ratio[m] = ratios
        logs = [abs(math.log2(r)) if r > 0 else 10.0 for r in ratios]  # none at all: a factor 1024
        error[m] = 2 ** (sum(logs) / len(logs)) if logs else None
        pairs = [(s, k) for s, k in zip(df[f"{m}_slowdown"], df.kernel_slowdown) if s and k]
        slowdown_ratio[m] = [s / k for s, k in pairs]
        rho[m] = spearman([s for s, _ in pairs], [k for _, k in pairs]) if len(pairs) > 2 else None
    ranked = sorted((e, m) for m, e in error.items() if e is not None)
    best = ranked[0][1] if ranked else None
    measures = {
        "kernel_fault_spread": spread,
        "kernel_alone_faults": alone,
        "fault_ratio": fault_ratio,
        "slowdown_ratio": slowdown_ratio,
        "slowdown_rho": rho,
        "fault_error": error,
        "best_slowdown_ratio": slowdown_ratio.get(best, []) if best else [],
    }
    fitted = machine_fit(spec)
    views = [View("the simulator's keys fitted to this machine (pagelab kernel probe)", ["table", "key", "value"],
                  [[t, k, v] for t in ("system", "disk", "swap") for k, v in simulator_keys(spec)[t].items()],
                  readme=True),
             View("major faults: kernel (median of the repetitions) beside each model",
                  ["run", "kernel"] + models,
                  [[r["run"], f"{r['kernel_major_faults']:,}"] + [f"{r[f'{m}_major_faults']:,}" for m in models]
                   for r in rows]),
             View("slowdown: kernel beside each model", ["run", "kernel"] + models,
                  [[r["run"], _num(r["kernel_slowdown"])] + [_num(r[f"{m}_slowdown"]) for m in models]
                   for r in rows]),
             View("how close each model comes (major faults of runs with at least "
                  f"{setup['min_faults']:g} on the kernel)",
                  ["model", "runs", "within 2x", "geometric error", "median ratio", "slowdown rho"],
                  [[m, len(fault_ratio[m]), f"{sum(0.5 <= r <= 2 for r in fault_ratio[m])}",
                    _num(error[m]), _num(_median(fault_ratio[m])), _num(rho[m])] for m in models], readme=True)]
    lines = [f"closest model in major faults: {best} (geometric error {error[best]:.2f}x)"] if best else []
    lines.append(f"kernel runs ended by the OOM killer and run again: {oom_kills}")
    lines += [f"no kernel result, left out: {x}" for x in lost]
    return Analysis(measures=measures, tables={"table": df}, views=views, lines=lines,
                    summary={"probe": fitted, "best_model": best, "oom_kills": oom_kills, "lost": lost})


def _num(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.2f}"


def _median(xs: List[float]) -> Optional[float]:
    v = sorted(xs)
    if not v:
        return None
    n = len(v)
    return v[(n - 1) // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def figures(spec: Spec, analysis: Analysis, results: Results, out: Path) -> List[str]:
    """The simulator against the kernel, run by run: major faults (logarithmic) and
    slowdowns, one marker per model."""
    df = analysis.tables["table"]
    models = [m["name"] for m in spec.table("model")]
    written = []
    for what, column, unit in (("faults", "major_faults", "major faults"), ("slowdown", "slowdown", "slowdown")):
        sets = {m: [(k, s) for k, s in zip(df[f"kernel_{column}"], df[f"{m}_{column}"])
                    if k is not None and s is not None and (what != "faults" or (k > 0 and s > 0))]
                for m in models}
        name = f"calibration-{what}.png"
        plot_against_paper(sets, out / name, title=f"{unit}: simulator against kernel, each run and process",
                           xlabel=f"kernel: {unit} (median)", ylabel=f"simulator: {unit}", log=(what == "faults"),
                           diagonal="simulator = kernel")
        written.append(name)
    return written
