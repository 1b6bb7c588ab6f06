"""`pagelab reproduce predictive`: predictive-replacement.txt sections 4 and 5.

Each program of the experiment file (the paper's twelve: NPB-like IS, CG, FT, MG, SP, BT,
LU and SPEC-like gzip, wupwise, swim, mcf, apsi) is replayed once on memory that is
``memory_ratio`` of its footprint (Table 1) under LRU, OPT, EELRU, Last-static-k for each
k, Last-dynamic for each threshold and DP-Approx for each weight a, all in one pass of
the stream. Written and printed:

- figure 13: faults of the static variants and of the best Last-dynamic threshold,
  normalised to LRU; figure 14: how often the Dead-List chose the victim;
- figure 15: the best predictive policy against EELRU, with section 5.4's numbers;
- figure 16: DP-Approx's Dead-List beside the timed system's CLOCK reclaim against the
  CLOCK reclaim alone (page faults of the whole run);
- figures 17-18: DP-Approx's faults for each a, and its prediction accuracy;
- figures 2-12 (the fault parameters under LRU) for the programs listed in
  ``characterize``, with ``pagelab analyze faults``'s code.

The acceptance of the issue is checked and printed: OPT lower-bounds every policy on
every program; Last-dynamic at its best threshold stays within ``dynamic_tolerance_pct``
of LRU; EELRU beats LRU on the programs marked ``loop_dominated``. The file format is in
docs/system-config.md ("Experiment files", kind "predictive").
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Dict, List, Optional

import json

from . import api
from ._core import PagelabError
from .files import output_dir
from .figures.bars import plot_grouped_bars
from .progress import ProgressBar
from .reproduce import fmt_pct, reduction_pct, write_outputs
from .configs import merge
from .reproduce_mclustering import _is_number, _need
from .system import normalize_config, read_toml
from .timed import run_engine

KIND = "predictive"
TOP_KEYS = ("experiment", "system", "workload")
EXPERIMENT_KEYS = ("name", "kind", "paper", "claim", "static_k", "thresholds", "dp_a", "timed_a",
                   "dynamic_tolerance_pct", "characterize", "quick")
WORKLOAD_KEYS = ("name", "paper_name", "suite", "workload", "params", "seed", "memory_ratio",
                 "loop_dominated", "paper", "quick")
PAPER_KEYS = ("threshold", "over_eelru_pct", "static_beats_lru")


# ---------------------------------------------------------------- the experiment file

def _numbers(value, what: str, name: str, whole: bool = False, low=None, high=None) -> list:
    ok = isinstance(value, list) and value and all(_is_number(v) for v in value)
    ok = ok and (not whole or all(isinstance(v, int) for v in value))
    ok = ok and all((low is None or v >= low) and (high is None or v <= high) for v in value)
    _need(ok, name, f"experiment.{what}: expected a non-empty list of "
                    f"{'whole ' if whole else ''}numbers"
                    + (f" from {low}" if low is not None else "") + (f" to {high}" if high is not None else "")
                    + f", got {value!r}")
    return value


def load_predictive(path: Path) -> dict:
    """Reads and checks a predictive experiment file; errors are one line naming the file
    and the key. The [system] table is the engine's to check."""
    return check_predictive(read_toml(path), path.name)


def check_predictive(data: dict, name: str) -> dict:
    for key in data:
        _need(key in TOP_KEYS, name, f"unknown top-level key '{key}' (expected {', '.join(TOP_KEYS)})")
    exp = data.get("experiment")
    _need(isinstance(exp, dict), name, "missing table [experiment]")
    _need(exp.get("kind") == KIND, name, f"experiment.kind: expected \"{KIND}\", got {exp.get('kind')!r}")
    for key in exp:
        _need(key in EXPERIMENT_KEYS, name, f"experiment: unknown key '{key}' (expected {', '.join(EXPERIMENT_KEYS)})")
    _numbers(exp.get("static_k", [-10, -5, 0, 5, 10]), "static_k", name, whole=True)
    _numbers(exp.get("thresholds", [60]), "thresholds", name, whole=True, low=0)
    _numbers(exp.get("dp_a", [0.5]), "dp_a", name, low=0.001, high=1)
    _numbers([exp.get("timed_a", 0.5)], "timed_a", name, low=0.001, high=1)
    _numbers([exp.get("dynamic_tolerance_pct", 2)], "dynamic_tolerance_pct", name, low=0)
    quick = exp.get("quick", {})
    _need(isinstance(quick, dict) and set(quick) <= {"timed"}, name,
          "experiment.quick: expected a table with at most 'timed' (true or false)")
    _need(isinstance(data.get("system", {}), dict), name, "system: expected a table (the timed system of figure 16)")
    workloads = data.get("workload")
    _need(isinstance(workloads, list) and workloads, name, "expected at least one [[workload]]")
    names = set()
    for i, w in enumerate(workloads):
        where = f"workload[{i}]"
        _need(isinstance(w, dict), name, f"{where}: expected a table")
        for key in w:
            _need(key in WORKLOAD_KEYS, name, f"{where}: unknown key '{key}' (expected {', '.join(WORKLOAD_KEYS)})")
        _need(isinstance(w.get("name"), str) and w["name"], name, f"{where}.name: expected a name")
        _need(w["name"] not in names, name, f"{where}.name: '{w['name']}' appears twice")
        names.add(w["name"])
        _need(isinstance(w.get("workload"), str), name, f"{where}.workload: expected a built-in workload name")
        _need(isinstance(w.get("params", {}), dict), name, f"{where}.params: expected a table")
        r = w.get("memory_ratio")
        _need(_is_number(r) and 0 < r < 1, name, f"{where}.memory_ratio: expected a number between 0 and 1 "
                                                 f"(memory / footprint), got {r!r}")
        paper = w.get("paper", {})
        _need(isinstance(paper, dict) and set(paper) <= set(PAPER_KEYS), name,
              f"{where}.paper: expected a table of {', '.join(PAPER_KEYS)}")
        q = w.get("quick", {})
        _need(isinstance(q, dict) and set(q) <= {"params"} and isinstance(q.get("params", {}), dict), name,
              f"{where}.quick: expected a table with 'params'")
    chars = exp.get("characterize", [])
    _need(isinstance(chars, list) and all(c in names for c in chars), name,
          f"experiment.characterize: expected names of [[workload]] tables, got {chars!r}")
    return data


# ---------------------------------------------------------------- running

def policies_of(exp: dict) -> Dict[str, List[str]]:
    """The policy labels of one replay, by role."""
    return {
        "base": ["lru", "opt", "eelru"],
        "static": [f"last-static:{k}" for k in exp.get("static_k", [-10, -5, 0, 5, 10])],
        "dynamic": [f"last-dynamic:{t}" for t in exp.get("thresholds", [60])],
        "dp": [f"dp-approx:{float(a)}" for a in exp.get("dp_a", [0.5])],
    }


def source_of(entry: dict, quick: bool) -> api.Workload:
    params = dict(entry.get("params", {}))
    if quick:
        params.update(entry.get("quick", {}).get("params", {}))
    return api.workload(entry["workload"], seed=int(entry.get("seed", 0)), **params), params


def replay_workload(entry: dict, exp: dict, quick: bool, progress) -> dict:
    """One program: its footprint, then every policy in one replay. Returns a row of
    faults (and counters) by policy label."""
    src, params = source_of(entry, quick)
    with ProgressBar(f"{entry['name']}: footprint", enabled=progress) as bar:
        info = src.info(progress=bar)
    frames = max(1, round(entry["memory_ratio"] * info["distinct_pages"]))
    roles = policies_of(exp)
    labels = [p for group in roles.values() for p in group]
    with ProgressBar(f"{entry['name']}: {len(labels)} policies", total=2 * info["records"], enabled=progress) as bar:
        results = api.replay(src, policy=labels, frames=[frames], progress=bar)
    rows = {r["policy"]: r for r in results}
    return {"entry": entry, "params": params, "records": info["records"], "pages": info["distinct_pages"],
            "frames": frames, "results": rows, "roles": roles}


def timed_runs(entry: dict, params: dict, frames: int, system: dict, a: float, progress) -> dict:
    """Figure 16: the program alone in the timed system, CLOCK reclaim without and with
    DP-Approx's Dead-List; page faults (major + minor) of each run."""
    out = {}
    for key, dead in (("clock", None), ("dp", f"dp-approx:{a}")):
        sys_ = merge(system, {"frames": frames})
        if dead:
            sys_["dead_list"] = dead
        config = {"system": sys_, "process": [{"name": entry["name"], "workload": entry["workload"],
                                              "params": params, "seed": int(entry.get("seed", 0))}]}
        engine = normalize_config(config, f"predictive.toml [[workload]] {entry['name']}")
        result = run_engine(engine, entry["name"])
        p = result.raw["processes"][0]
        out[key] = {"faults": p["major_faults"] + p["minor_faults"], "major_faults": p["major_faults"],
                    "runtime_s": p["runtime_ns"] / 1e9, "counters": result.raw.get("reclaim_counters", {}),
                    "raw": result.raw}
    return out


def summarise(run: dict, exp: dict, timed: Optional[dict]) -> dict:
    """The table row of one program."""
    entry, res, roles = run["entry"], run["results"], run["roles"]
    lru = res["lru"]["faults"]
    norm = {label: res[label]["faults"] / lru if lru else 1.0 for label in res}
    best_dyn = min(roles["dynamic"], key=lambda p: (res[p]["faults"], p))
    best_pred = min(roles["static"] + roles["dynamic"], key=lambda p: (res[p]["faults"], p))
    eelru = res["eelru"]["faults"]
    paper = entry.get("paper", {})
    row = {
        "program": entry["name"], "paper_name": entry.get("paper_name", entry["name"]),
        "suite": entry.get("suite", ""), "pages": run["pages"], "frames": run["frames"], "records": run["records"],
        "lru_faults": lru, "opt": norm["opt"], "eelru": norm["eelru"],
    }
    for p in roles["static"]:
        row[p] = norm[p]
    row["best_dynamic"] = norm[best_dyn]
    row["best_threshold"] = int(best_dyn.split(":")[1])
    row["paper_threshold"] = paper.get("threshold")
    for p in roles["dp"]:
        row[p] = norm[p]
        c = res[p]["counters"]
        kinds = ("under", "over", "exact", "cut_short")
        done = sum(c.get(f"{k}_predictions", 0) for k in kinds)
        for k in kinds:
            row[f"{p} {k}"] = c.get(f"{k}_predictions", 0) / done if done else None
    row["best_predictive"] = best_pred
    row["best_over_eelru_pct"] = reduction_pct(eelru, res[best_pred]["faults"])
    row["paper_over_eelru_pct"] = paper.get("over_eelru_pct")
    row["static_beats_lru"] = min(norm[p] for p in roles["static"]) < 1.0
    row["paper_static_beats_lru"] = paper.get("static_beats_lru")
    for p in roles["static"] + [best_dyn]:
        c = res[p]["counters"]
        total = c.get("dead_list_evictions", 0) + c.get("lru_evictions", 0)
        row[f"dead_list_share {p}"] = c.get("dead_list_evictions", 0) / total if total else 0.0
    if timed:
        row["timed_clock_faults"] = timed["clock"]["faults"]
        row["timed_dp_faults"] = timed["dp"]["faults"]
        row["timed_dp_reduction_pct"] = reduction_pct(timed["clock"]["faults"], timed["dp"]["faults"])
        row["timed_clock_s"] = timed["clock"]["runtime_s"]
        row["timed_dp_s"] = timed["dp"]["runtime_s"]
    row["loop_dominated"] = bool(entry.get("loop_dominated", False))
    row["opt_bounds_all"] = all(res["opt"]["faults"] <= r["faults"] for r in res.values())
    return row


def acceptance(rows: List[dict], tolerance_pct: float) -> dict:
    opt_ok = [r["program"] for r in rows if not r["opt_bounds_all"]]
    dyn_bad = [r["program"] for r in rows if r["best_dynamic"] > 1 + tolerance_pct / 100]
    loops = [r for r in rows if r["loop_dominated"]]
    eelru_bad = [r["program"] for r in loops if r["eelru"] >= 1.0]
    return {"opt_lower_bound": not opt_ok, "opt_violations": opt_ok,
            "dynamic_within_tolerance": not dyn_bad, "dynamic_violations": dyn_bad,
            "eelru_beats_lru_on_loops": bool(loops) and not eelru_bad, "eelru_violations": eelru_bad,
            "met": not opt_ok and not dyn_bad and bool(loops) and not eelru_bad}


def figures(rows: List[dict], exp: dict, out: Path, timed: bool) -> List[str]:
    import pandas as pd

    made = []
    roles = policies_of(exp)

    def bars(records, name, **kw):
        plot_grouped_bars(pd.DataFrame(records), out / name, group="program", series="policy", **kw)
        made.append(name)

    fig13 = [{"program": r["program"], "policy": p.replace("last-static:", "static "), "value": r[p]}
             for r in rows for p in roles["static"]]
    fig13 += [{"program": r["program"], "policy": "last-dynamic (best)", "value": r["best_dynamic"]} for r in rows]
    bars(fig13, "fig13-normalised-faults.png", value="value", ylabel="page faults / LRU's (log scale)",
         title="Figure 13: Last-static-k and the best Last-dynamic against LRU", log=True, reference=1.0)
    fig14 = [{"program": r["program"], "policy": p.split(" ", 1)[1].replace("last-static:", "static "),
              "value": r[p]} for r in rows for p in r if p.startswith("dead_list_share ") and "dynamic" not in p]
    fig14 += [{"program": r["program"], "policy": "last-dynamic (best)",
               "value": r[f"dead_list_share last-dynamic:{r['best_threshold']}"]} for r in rows]
    bars(fig14, "fig14-dead-list-share.png", value="value", ylabel="victims chosen by the Dead-List (%)",
         title="Figure 14: how often prediction chose the victim", percent=True)
    fig15 = [{"program": r["program"], "policy": "best predictive", "value": r[r["best_predictive"]]
              if r["best_predictive"] in r else r["best_dynamic"]} for r in rows]
    fig15 += [{"program": r["program"], "policy": "EELRU", "value": r["eelru"]} for r in rows]
    fig15 += [{"program": r["program"], "policy": "OPT", "value": r["opt"]} for r in rows]
    bars(fig15, "fig15-predictive-vs-eelru.png", value="value", ylabel="page faults / LRU's",
         title="Figure 15: best prediction-based policy, EELRU and OPT", reference=1.0)
    if timed:
        fig16 = [{"program": r["program"], "policy": "DP-Approx beside CLOCK",
                  "value": (r["timed_dp_reduction_pct"] or 0.0)} for r in rows]
        bars(fig16, "fig16-dp-approx-timed.png", value="value", ylabel="fewer page faults than CLOCK (%)",
             title="Figure 16: DP-Approx in the timed system against its CLOCK reclaim", reference=0.0)
    fig17 = [{"program": r["program"], "policy": f"a = {p.split(':')[1]}", "value": r[p]}
             for r in rows for p in roles["dp"]]
    bars(fig17, "fig17-dp-approx-a.png", value="value", ylabel="page faults / LRU's",
         title="Figures 17-18 (a): DP-Approx's sensitivity to a", reference=1.0)
    acc = []
    a = f"{float(exp.get('timed_a', 0.5))}"
    for r in rows:
        p = f"dp-approx:{a}" if f"dp-approx:{a} over" in r else roles["dp"][0]
        for kind, name in (("cut_short", "evicted at its predicted death"), ("under", "used past it"),
                           ("over", "died earlier")):
            acc.append({"program": r["program"], "policy": name, "value": r[f"{p} {kind}"] or 0.0})
    bars(acc, "fig18-dp-approx-accuracy.png", value="value", ylabel="share of predictions (%)",
         title=f"Figures 17-18 (b): how DP-Approx's predictions ended (a = {a})", percent=True)
    return made


def characterize(runs: List[dict], names: List[str], out: Path, progress) -> List[dict]:
    """Figures 2-12 for the programs named: the fault parameters under LRU at the same
    memory, with the code of `pagelab analyze faults` (into out/characterization/)."""
    from . import fault_analysis

    results = []
    for run in runs:
        entry = run["entry"]
        if entry["name"] not in names:
            continue
        src = api.workload(entry["workload"], seed=int(entry.get("seed", 0)), **run["params"])
        with ProgressBar(f"{entry['name']}: fault parameters", total=run["records"], enabled=progress) as bar:
            results.append((src, fault_analysis.fault_parameters(src, policy="lru", frames=run["frames"], progress=bar)))
    if not results:
        return []
    _, rows = fault_analysis.write_outputs(results, out / "characterization")
    return [{k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()} for row in rows]


def run_predictive(path: Path, out_dir: Optional[str], quick: bool = False, progress=None) -> int:
    started = time.perf_counter()
    data = load_predictive(path)
    exp = data["experiment"]
    timed = not quick or bool(exp.get("quick", {}).get("timed", True))
    out = Path(out_dir or f"results/{exp.get('name', path.stem)}")
    runs, rows, raw_runs = [], [], {}
    for entry in data["workload"]:
        run = replay_workload(entry, exp, quick, progress)
        t = timed_runs(entry, run["params"], run["frames"], data.get("system", {}), float(exp.get("timed_a", 0.5)),
                       progress) if timed else None
        runs.append(run)
        rows.append(summarise(run, exp, t))
        raw_runs[entry["name"]] = {"frames": run["frames"], "pages": run["pages"], "records": run["records"],
                                   "replay": list(run["results"].values()),
                                   "timed": {k: v["raw"] for k, v in (t or {}).items()}}
        r = rows[-1]
        print(f"{r['program']:>13}: LRU {r['lru_faults']:,} faults on {r['frames']:,} of {r['pages']:,} pages; "
              f"best Last-dynamic {r['best_dynamic']:.2f} (threshold {r['best_threshold']}), EELRU {r['eelru']:.2f}, "
              f"OPT {r['opt']:.2f}" + (f"; DP-Approx beside CLOCK {fmt_pct(r['timed_dp_reduction_pct'])}" if t else ""))
    acc = acceptance(rows, float(exp.get("dynamic_tolerance_pct", 2)))
    output_dir(out)
    made = figures(rows, exp, out, timed)
    chars = characterize(runs, exp.get("characterize", []), out, progress)
    print_table(rows, exp)
    summary = {"experiment": exp.get("name", path.stem), "kind": KIND, "paper": exp.get("paper"),
               "claim": exp.get("claim"), "quick": quick, "acceptance": acc, "figures": made,
               "characterization": chars, "averages": averages(rows)}
    write_outputs(out, summary, rows, {k: v for k, v in raw_runs.items()}, started)
    print(acceptance_line(acc))
    print(f"report: {out / 'table.csv'}, {out / 'summary.json'}; figures in {out}")
    return 0


def averages(rows: List[dict]) -> dict:
    def mean(values):
        values = [v for v in values if v is not None]
        return sum(values) / len(values) if values else None

    return {
        "best_predictive_reduction_vs_lru_pct": mean([100 * (1 - min(r["best_dynamic"], min(
            r[k] for k in r if k.startswith("last-static:")))) for r in rows]),
        "best_dynamic_reduction_vs_lru_pct": mean([100 * (1 - r["best_dynamic"]) for r in rows]),
        "best_over_eelru_pct": mean([r["best_over_eelru_pct"] for r in rows]),
        "programs_beating_eelru": sum(1 for r in rows if (r["best_over_eelru_pct"] or 0) > 0),
        "timed_dp_reduction_pct": mean([r.get("timed_dp_reduction_pct") for r in rows]),
    }


def print_table(rows: List[dict], exp: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    roles = policies_of(exp)
    table = Table(title="Page faults normalised to LRU (figures 13, 15; paper's numbers in brackets)")
    cols = ["program"] + [p.replace("last-static:", "st ") for p in roles["static"]] + [
        "best dyn (thr)", "EELRU", "OPT", "over EELRU", "DP-Approx timed"]
    for c in cols:
        table.add_column(c, justify="right")
    for r in rows:
        paper_thr = f" [{r['paper_threshold']}]" if r["paper_threshold"] is not None else ""
        paper_eelru = f" [{r['paper_over_eelru_pct']:.0f}%]" if r["paper_over_eelru_pct"] is not None else " [-]"
        table.add_row(r["program"], *[f"{r[p]:.2f}" for p in roles["static"]],
                      f"{r['best_dynamic']:.2f} ({r['best_threshold']}{paper_thr})", f"{r['eelru']:.2f}",
                      f"{r['opt']:.2f}", fmt_pct(r["best_over_eelru_pct"]) + paper_eelru,
                      fmt_pct(r.get("timed_dp_reduction_pct")) if "timed_dp_reduction_pct" in r else "-")
    Console(width=160).print(table)


def acceptance_line(acc: dict) -> str:
    mark = "met" if acc["met"] else "NOT met"
    parts = [f"OPT lower-bounds every policy: {'yes' if acc['opt_lower_bound'] else 'no ' + str(acc['opt_violations'])}",
             f"best Last-dynamic within tolerance of LRU: {'yes' if acc['dynamic_within_tolerance'] else 'no ' + str(acc['dynamic_violations'])}",
             f"EELRU beats LRU on loop-dominated programs: {'yes' if acc['eelru_beats_lru_on_loops'] else 'no ' + str(acc['eelru_violations'])}"]
    return f"acceptance {mark}: " + "; ".join(parts)
