"""`pagelab reproduce mclustering`: mclustering-pageout.txt (Ahn et al., "Paging out
Multiple Clusters to Improve Virtual Memory System Performance") section 3.

LU and SOR, each on memory that is 1/1.3, 1/1.5 and 1/1.7 of its footprint (the paper's
1.3, 1.5 and 1.7 GB of virtual memory on 1 GB), run alone under the BSD VM (active and
inactive queues with a page-out daemon, ``system.reclaim = "bsd"``) with BSD page-out
clustering (``swap.clustering = "bsd"``) and BSD read-around, and again with
mClustering (``swap.clustering = "mclustering"``). Printed and written in the layout of
the paper's figures 3 and 4: execution time, disk writes (page-out I/Os) and page-ins
under both, with the paper's percentages beside ours, and the distribution of disk
writes by cluster size at 1.5x. The file format is in docs/system-config.md.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from . import _core
from ._core import PagelabError
from .configs import merge
from .reproduce import fmt_pct, footprint_pages, reduction_pct, write_outputs
from .system import SimulatedTimeBar, normalize_config, read_toml, safe_name
from .timed import run_engine

KIND = "mclustering"
#: the two configurations, in column order: (key, default label)
BASELINE, MCLUSTERING = "bsd", "mclustering"
CONFIGS = ((BASELINE, "BSD VM"), (MCLUSTERING, "mClustering"))
TOP_KEYS = ("experiment", "base", "config", "workload")
BASE_TABLES = ("system", "disk", "swap", "token", "load_control")
CONFIG_KEYS = ("label", "system", "disk", "swap")
#: keys of a [[workload]] entry that belong to the experiment, not to the engine's process
EXPERIMENT_WORKLOAD_KEYS = ("paper", "quick", "paper_name", "frames", "sizes")
PROCESS_KEYS = ("name", "workload", "params", "seed", "cpu_ns_per_ref", "start_ms")
PAPER_PCT_KEYS = ("time_improvement_pct", "write_reduction_pct")
DEFAULT_RATIOS = [1.3, 1.5, 1.7]


# ---------------------------------------------------------------- the experiment file

def _need(cond: bool, name: str, what: str) -> None:
    if not cond:
        raise PagelabError(f"{name}: {what}")


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def load_mclustering(path: Path) -> dict:
    """Reads and checks an mclustering experiment file; errors are one line naming the
    file and the key. Keys below base/config tables are the engine's to check."""
    return check_mclustering(read_toml(path), path.name)


def check_mclustering(data: dict, name: str) -> dict:
    for key in data:
        _need(key in TOP_KEYS, name, f"unknown top-level key '{key}' (expected {', '.join(TOP_KEYS)})")
    exp = data.get("experiment")
    _need(isinstance(exp, dict), name, "missing table [experiment]")
    _need(exp.get("kind") == KIND, name, f"experiment.kind: expected \"{KIND}\", got {exp.get('kind')!r}")
    ratios = exp.get("ratios", DEFAULT_RATIOS)
    _need(isinstance(ratios, list) and len(ratios) >= 2 and all(_is_number(r) and r > 0 for r in ratios),
          name, "experiment.ratios: expected at least two positive numbers (virtual memory / physical "
                "memory, e.g. [1.3, 1.5, 1.7])")
    _need(all(a < b for a, b in zip(ratios, ratios[1:])), name,
          f"experiment.ratios: expected increasing ratios, got {ratios}")
    dist = exp.get("distribution_ratio", ratios[len(ratios) // 2])
    _need(_is_number(dist) and dist in ratios, name,
          f"experiment.distribution_ratio: expected one of the ratios {ratios}, got {dist!r}")
    tol = exp.get("pagein_tolerance_pct", 10)
    _need(_is_number(tol) and tol >= 0, name,
          f"experiment.pagein_tolerance_pct: expected a number >= 0, got {tol!r}")
    dmax = exp.get("distribution_pages", 16)
    _need(isinstance(dmax, int) and not isinstance(dmax, bool) and dmax > 0, name,
          f"experiment.distribution_pages: expected a positive whole number, got {dmax!r}")
    base = data.get("base", {})
    _need(isinstance(base, dict), name, "base: expected a table of " + ", ".join(BASE_TABLES))
    for key, value in base.items():
        _need(key in BASE_TABLES, name, f"base: unknown key '{key}' (expected {', '.join(BASE_TABLES)}; "
                                        "the processes are the [[workload]] entries)")
        _need(isinstance(value, dict), name, f"base.{key}: expected a table")
    _need("frames" not in base.get("system", {}), name,
          "base.system.frames: set per run from the footprint and the ratio; remove it")
    configs = data.get("config")
    _need(isinstance(configs, dict), name,
          f"missing table [config] (expected [config.{BASELINE}] and [config.{MCLUSTERING}])")
    for key in configs:
        _need(key in (BASELINE, MCLUSTERING), name,
              f"config: unknown configuration '{key}' (expected {BASELINE}, {MCLUSTERING})")
    for key, _ in CONFIGS:
        cfg = configs.get(key)
        _need(isinstance(cfg, dict), name, f"config.{key}: missing table [config.{key}]")
        for k, v in cfg.items():
            _need(k in CONFIG_KEYS, name, f"config.{key}: unknown key '{k}' (expected {', '.join(CONFIG_KEYS)})")
            if k == "label":
                _need(isinstance(v, str), name, f"config.{key}.label: expected a string")
            else:
                _need(isinstance(v, dict), name, f"config.{key}.{k}: expected a table")
    workloads = data.get("workload")
    _need(isinstance(workloads, list) and workloads, name, "expected at least one [[workload]]")
    seen = set()
    for i, w in enumerate(workloads):
        _need(isinstance(w, dict), name, f"workload[{i}]: expected a table")
        _need(isinstance(w.get("name"), str) and w["name"], name, f"workload[{i}].name: expected a string")
        where = f"workload '{w['name']}'"
        _need(w["name"] not in seen, name, f"{where}: the name is used twice")
        seen.add(w["name"])
        for k in w:
            _need(k in PROCESS_KEYS or k in EXPERIMENT_WORKLOAD_KEYS, name,
                  f"{where}: unknown key '{k}' (expected {', '.join(PROCESS_KEYS + EXPERIMENT_WORKLOAD_KEYS)})")
        _need(isinstance(w.get("workload"), str), name,
              f"{where}.workload: expected a built-in workload name, e.g. \"lu\"")
        _need(isinstance(w.get("params", {}), dict), name, f"{where}.params: expected a table")
        quick = w.get("quick", {})
        _need(isinstance(quick, dict), name, f"{where}.quick: expected a table of process keys for --quick")
        for k in quick:
            _need(k in ("params", "seed", "cpu_ns_per_ref", "frames", "sizes"), name,
                  f"{where}.quick: unknown key '{k}' (expected params, seed, cpu_ns_per_ref, frames, sizes)")
        for scope, table in ((where, w), (f"{where}.quick", quick)):
            if "frames" in table or "sizes" in table:
                _need(isinstance(table.get("frames"), int) and table["frames"] > 0, name,
                      f"{scope}.frames: expected a positive number of frames (the fixed physical memory)")
                sizes = table.get("sizes")
                _need(isinstance(sizes, list) and len(sizes) == len(ratios) and all(isinstance(x, dict) for x in sizes),
                      name, f"{scope}.sizes: expected {len(ratios)} tables of workload parameters, one per ratio")
        _need(isinstance(quick.get("params", {}), dict), name, f"{where}.quick.params: expected a table")
        paper = w.get("paper", {})
        _need(isinstance(paper, dict), name, f"{where}.paper: expected a table")
        for key in PAPER_PCT_KEYS:
            v = paper.get(key)
            _need(v is None or (isinstance(v, list) and len(v) == len(ratios) and all(_is_number(x) for x in v)),
                  name, f"{where}.paper.{key}: expected {len(ratios)} numbers, one per ratio")
    return data


# ---------------------------------------------------------------- configurations

def workload_process(entry: dict, quick: bool) -> dict:
    """A [[workload]] entry as the engine's process: experiment keys dropped, with
    --quick its ``quick`` table laid over it."""
    p = {k: copy.deepcopy(v) for k, v in entry.items() if k not in EXPERIMENT_WORKLOAD_KEYS}
    if quick:
        p = merge(p, {k: v for k, v in entry.get("quick", {}).items() if k not in EXPERIMENT_WORKLOAD_KEYS})
    return p


def sized_runs(entry: dict, proc: dict, ratios: Sequence[float], quick: bool) -> Optional[tuple]:
    """The paper's design (section 3.1: 1.3, 1.5 and 1.7 GB of virtual memory on 1 GB):
    fixed physical memory, the problem grown per ratio. Returns (frames, [process per
    ratio]) when the entry gives ``frames`` and ``sizes``, else None."""
    table = merge(entry, entry.get("quick", {})) if quick else entry
    if "frames" not in table:
        return None
    procs = [merge(proc, {"params": size}) for size in table["sizes"]]
    return int(table["frames"]), procs


def frames_for(footprint: int, ratio: float) -> int:
    """Physical memory for a virtual memory ``ratio`` times as large as it."""
    return max(1, int(round(footprint / ratio)))


def run_config(base: dict, config: dict, process: dict, frames: int) -> dict:
    """The user-level configuration (as in a TOML file) of one run."""
    cfg = merge(base, {k: v for k, v in config.items() if k != "label"})
    cfg.setdefault("system", {})["frames"] = int(frames)
    cfg["process"] = [copy.deepcopy(process)]
    return cfg


def engine_config(cfg: dict, where: str, base_dir: Path) -> dict:
    """normalize_config, with [swap] passed through to the engine as it is (the engine
    checks its keys) whether or not the Python front lists it yet."""
    cfg = dict(cfg)
    swap = cfg.pop("swap", None)
    out = normalize_config(cfg, where, base_dir)
    if swap is not None:
        out["swap"] = copy.deepcopy(swap)
    return out


# ---------------------------------------------------------------- numbers

def run_metrics(raw: dict) -> dict:
    """The numbers of one single-process run that figures 3 and 4 show, and a few more."""
    p = raw["processes"][0]
    writes = int(raw["disk_writes"])
    return {
        "time_s": p["runtime_ns"] / 1e9,
        "dedicated_s": p["dedicated_ns"] / 1e9,
        "disk_writes": writes,
        "pages_written": int(raw["pages_written"]),
        "pages_per_write": raw["pages_written"] / writes if writes else None,
        "page_ins": int(p["page_ins"]),
        "page_outs": int(p["page_outs"]),
        "major_faults": int(p["major_faults"]),
        "disk_reads": int(raw["disk_reads"]),
        "pages_read": int(raw["pages_read"]),
        "prefetched": int(raw.get("prefetched", 0)),
        "prefetch_hits": int(raw.get("prefetch_hits", 0)),
        "write_sizes": list(raw.get("write_sizes", [])),
        "read_sizes": list(raw.get("read_sizes", [])),
    }


def difference_pct(before: float, after: float) -> Optional[float]:
    """How much larger ``after`` is than ``before``, in percent of ``before``."""
    if not before:
        return None
    return 100.0 * (after - before) / before


def compare(bsd: dict, mcl: dict) -> dict:
    """mClustering against BSD VM at one ratio: execution-time improvement and
    disk-write reduction (positive = mClustering better), page-in difference
    (positive = mClustering did more page-ins)."""
    return {
        "time_improvement_pct": reduction_pct(bsd["time_s"], mcl["time_s"]),
        "write_reduction_pct": reduction_pct(bsd["disk_writes"], mcl["disk_writes"]),
        "page_in_diff_pct": difference_pct(bsd["page_ins"], mcl["page_ins"]),
    }


def write_size_bins(write_sizes: Sequence[int], max_pages: int = 16) -> tuple:
    """(labels, counts) of disk writes by pages per write: 1..max_pages, plus a last
    "max_pages+1+" bin when any write was larger. ``write_sizes[k]`` = writes of k pages
    (index 0 unused)."""
    counts = [int(write_sizes[k]) if k < len(write_sizes) else 0 for k in range(1, max_pages + 1)]
    labels = [str(k) for k in range(1, max_pages + 1)]
    over = sum(int(v) for v in write_sizes[max_pages + 1:])
    if over:
        labels.append(f"{max_pages + 1}+")
        counts.append(over)
    return labels, counts


def acceptance(workloads: List[dict], tolerance_pct: float = 10.0) -> dict:
    """The acceptance rule over every workload and ratio: mClustering issues fewer disk
    writes than BSD VM, its page-ins are within ``tolerance_pct`` of BSD's, and the
    write gap (disk writes saved) grows with the ratio (never shrinks from one ratio to
    the next and is larger at the highest ratio than at the lowest)."""
    checks = []
    for w in workloads:
        rows = w["rows"]
        fewer = [r[MCLUSTERING]["disk_writes"] < r[BASELINE]["disk_writes"] for r in rows]
        pageins = [r["ours"]["page_in_diff_pct"] is not None and abs(r["ours"]["page_in_diff_pct"]) <= tolerance_pct
                   for r in rows]
        # the gap: disk writes that mClustering saves (section 3.2: "the larger virtual
        # memory usage gives mClustering more opportunities to reduce disk I/Os")
        gap = [r[BASELINE]["disk_writes"] - r[MCLUSTERING]["disk_writes"] for r in rows]
        grows = all(a <= b for a, b in zip(gap, gap[1:])) and gap[-1] > gap[0]
        checks.append({"workload": w["name"], "fewer_writes": fewer, "page_ins_within": pageins,
                       "write_gap": gap, "gap_grows": grows,
                       "met": all(fewer) and all(pageins) and grows})
    return {
        "met": bool(checks) and all(c["met"] for c in checks),
        "rule": (f"mClustering issues fewer disk writes than BSD VM on every workload at every ratio, "
                 f"with page-ins within {tolerance_pct:g}% of BSD's, and the write gap (disk writes saved) "
                 "grows with the ratio (memory pressure) for each workload"),
        "pagein_tolerance_pct": tolerance_pct,
        "checks": checks,
    }


def acceptance_line(acc: dict) -> str:
    parts = []
    for c in acc["checks"]:
        n = len(c["fewer_writes"])
        parts.append(f"{c['workload']}: fewer writes at {sum(c['fewer_writes'])} of {n} ratios, page-ins "
                     f"within {acc['pagein_tolerance_pct']:g}% at {sum(c['page_ins_within'])} of {n}, "
                     f"write gap {'grows' if c['gap_grows'] else 'does NOT grow'} with the ratio")
    return "acceptance: " + "; ".join(parts) + f": {'met' if acc['met'] else 'NOT met'}"


def _paper_pct(w: dict, key: str, i: int):
    v = w.get("paper", {}).get(key)
    return v[i] if v else None


def _fmt_s(v: float) -> str:
    return f"{v:,.2f}"


def _fmt_n(v: int) -> str:
    return f"{v:,}"


FIGURE_COLUMNS = ["workload", "VM/PM", "frames",
                  "time BSD (s)", "time mCl (s)", "time improvement", "paper",
                  "disk writes BSD", "disk writes mCl", "write reduction", "paper",
                  "page-ins BSD", "page-ins mCl", "page-in difference", "paper"]


def figure_layout(workloads: List[dict]) -> tuple:
    """(columns, rows) of the printed table: a row per workload and ratio, figures 3
    and 4 (a) and (b) as numbers, ours beside the paper's percentages."""
    rows = []
    for w in workloads:
        for r in w["rows"]:
            b, m, o, p = r[BASELINE], r[MCLUSTERING], r["ours"], r["paper"]
            rows.append([w["name"], f"{r['ratio']:g}", _fmt_n(r["frames"]),
                         _fmt_s(b["time_s"]), _fmt_s(m["time_s"]), fmt_pct(o["time_improvement_pct"]),
                         fmt_pct(p["time_improvement_pct"]),
                         _fmt_n(b["disk_writes"]), _fmt_n(m["disk_writes"]), fmt_pct(o["write_reduction_pct"]),
                         fmt_pct(p["write_reduction_pct"]),
                         _fmt_n(b["page_ins"]), _fmt_n(m["page_ins"]), _fmt_signed_pct(o["page_in_diff_pct"]),
                         p.get("page_ins") or "n/a"])
    return list(FIGURE_COLUMNS), rows


def _fmt_signed_pct(v: Optional[float]) -> str:
    return "n/a" if v is None else f"{v:+.0f}%"


def table_csv_rows(workloads: List[dict]) -> List[dict]:
    """table.csv: one row per (workload, ratio)."""
    out = []
    for w in workloads:
        for r in w["rows"]:
            row = {"workload": w["name"], "ratio": r["ratio"], "footprint_pages": w["footprint_pages"],
                   "frames": r["frames"]}
            for cfg, _ in CONFIGS:
                for k, v in r[cfg].items():
                    if k not in ("write_sizes", "read_sizes"):
                        row[f"{cfg}_{k}"] = v
            row.update(r["ours"])
            for k in PAPER_PCT_KEYS:
                row["paper_" + k] = r["paper"][k]
            out.append(row)
    return out


def workload_rows(entry: dict, ratios: Sequence[float], frames: Sequence[int], runs: Dict[float, dict]) -> List[dict]:
    """The summary rows of one workload from its runs: ``runs[ratio][config]`` = raw result."""
    rows = []
    for i, ratio in enumerate(ratios):
        bsd = run_metrics(runs[ratio][BASELINE])
        mcl = run_metrics(runs[ratio][MCLUSTERING])
        rows.append({
            "ratio": ratio, "frames": frames[i], BASELINE: bsd, MCLUSTERING: mcl, "ours": compare(bsd, mcl),
            "paper": {"time_improvement_pct": _paper_pct(entry, "time_improvement_pct", i),
                      "write_reduction_pct": _paper_pct(entry, "write_reduction_pct", i),
                      "page_ins": entry.get("paper", {}).get("page_ins")},
        })
    return rows


# ---------------------------------------------------------------- the command

def run_mclustering(path: Path, out_dir: Optional[str], quick: bool = False, progress=None) -> int:
    from .console import print_table
    from .figures.memory import plot_clustering

    exp_file = path.name
    data = load_mclustering(path)
    exp = data["experiment"]
    ratios = [float(r) for r in exp.get("ratios", DEFAULT_RATIOS)]
    dist_ratio = float(exp.get("distribution_ratio", ratios[len(ratios) // 2]))
    tolerance = float(exp.get("pagein_tolerance_pct", 10))
    dist_pages = int(exp.get("distribution_pages", 16))
    base = data.get("base", {})
    base_dir = path.resolve().parent
    page_size = int(base.get("system", {}).get("page_size", 4096))
    configs = {key: data["config"][key] for key, _ in CONFIGS}
    labels = {key: configs[key].get("label", label) for key, label in CONFIGS}
    out = Path(out_dir or f"results/{path.stem}")
    started = time.perf_counter()

    workloads, figures, raws = [], [], {}
    for entry in data["workload"]:
        label = entry["name"]
        proc = workload_process(entry, quick)
        sized = sized_runs(entry, proc, ratios, quick)
        procs = sized[1] if sized else [proc] * len(ratios)
        try:
            footprints = [footprint_pages(p, page_size, base_dir) for p in procs]
        except PagelabError as err:
            raise PagelabError(f"{exp_file}: workload '{label}': {err}") from None
        footprint = footprints[-1]
        frames = [sized[0]] * len(ratios) if sized else [frames_for(footprint, r) for r in ratios]
        runs: Dict[float, dict] = {}
        for ratio, fr, proc in zip(ratios, frames, procs):
            runs[ratio] = {}
            for key, _ in CONFIGS:
                where = f"{exp_file}: workload '{label}' at {ratio:g}x"
                cfg = engine_config(run_config(base, configs[key], proc, fr), where, base_dir)
                with SimulatedTimeBar(f"{label} {ratio:g}x {key}", enabled=progress) as bar:
                    result = run_engine(cfg, f"{where} ({key})", bar)
                runs[ratio][key] = result.raw
                raws[f"{safe_name(label)}-{ratio:g}-{key}"] = result.raw
        rows = workload_rows(entry, ratios, frames, runs)
        fig = f"{path.stem}-{safe_name(label)}.png"
        dist_row = next(r for r in rows if r["ratio"] == dist_ratio)
        plot_clustering(rows, [labels[k] for k, _ in CONFIGS], out / fig,
                        title=(f"{label} (paper: {entry.get('paper_name', label)}): "
                               f"{'/'.join(_fmt_n(f) for f in footprints)} pages of virtual memory on "
                               f"{_fmt_n(frames[0])} frames" if sized else
                               f"{label} (paper: {entry.get('paper_name', label)}): {footprint:,} pages of "
                               f"virtual memory, {'/'.join(_fmt_n(f) for f in frames)} frames"),
                        dist_ratio=dist_ratio, dist_pages=dist_pages)
        figures.append(fig)
        workloads.append({
            "name": label, "paper_name": entry.get("paper_name", label), "process": proc,
            "footprint_pages": footprint, "footprints": footprints, "frames": frames, "rows": rows, "figure": fig,
            "distribution": {"ratio": dist_ratio,
                             **{k: dict(zip(("labels", "counts"), write_size_bins(dist_row[k]["write_sizes"],
                                                                                  dist_pages)))
                                for k, _ in CONFIGS}},
        })

    acc = acceptance(workloads, tolerance)
    line = acceptance_line(acc)
    acc["line"] = line
    summary = {
        "experiment": exp.get("name", path.stem), "kind": KIND, "paper": exp.get("paper"),
        "claim": exp.get("claim"), "engine_version": _core.ENGINE_VERSION, "quick": quick,
        "ratios": ratios, "configs": {k: {"label": labels[k], **{t: v for t, v in configs[k].items() if t != "label"}}
                                      for k, _ in CONFIGS},
        "base": base, "workloads": workloads, "acceptance": acc, "figures": figures,
    }
    write_outputs(out, summary, table_csv_rows(workloads), raws, started)

    columns, rows = figure_layout(workloads)
    print_table(f"{summary['experiment']}: figures 3 and 4 of {exp.get('paper', '')}, "
                f"{labels[BASELINE]} vs {labels[MCLUSTERING]}, ours beside the paper's", columns, rows)
    drows = []
    for w in workloads:
        d = w["distribution"]
        for k, _ in CONFIGS:
            drows.append([w["name"], labels[k]] + [_fmt_n(c) for c in d[k]["counts"][:dist_pages]]
                         + [_fmt_n(sum(d[k]["counts"][dist_pages:]))])
    print_table(f"disk writes by pages per write at {dist_ratio:g}x (figures 3c and 4c)",
                ["workload", "configuration"] + [str(k) for k in range(1, dist_pages + 1)] + [f"{dist_pages + 1}+"],
                drows)
    print(f"\n{line}")
    print(f"results in {out}/: summary.json, table.csv, {len(figures)} figures, runs/*.json "
          f"({summary['seconds']} s)")
    return 0
