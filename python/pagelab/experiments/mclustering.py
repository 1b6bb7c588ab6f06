"""mclustering-pageout.txt (Ahn, Choi, Oh, Lim and Kim, "Paging out Multiple Clusters to
Improve Virtual Memory System Performance", IEICE Trans. Inf. & Syst. E97-D(7), 2014),
section 3: figures 3 (LU) and 4 (SOR), and the section 3.4 discussion.

Each workload runs alone under FreeBSD 8.2's VM (page queues and the page daemon as its
source has them, ``system.reclaim = "freebsd8"``) with BSD page-out clustering and read-around
(``[config.bsd]``), and again with mClustering (``[config.mclustering]``), at each
virtual/physical memory ratio of ``[setup] ratios`` (the paper's 1.3, 1.5 and 1.7 GB
on 1 GB). As in section 3.1 the physical memory is fixed (``frames``) and the problem
grows (``sizes``, one per ratio); a workload without them keeps its size and gets
frames = footprint / ratio. The measures are per workload (a table keyed by workload
name), one value per ratio where the paper's figures have one, so that a claim can
compare them with the paper's numbers position by position. Write-size measures are
taken at ``setup.distribution_ratio`` (figures 3c and 4c: 1.5).

``[section34]`` adds two of section 3.4's situations where mClustering should not help:
a program writing contiguous pages (``sequential``), and a fragmented swap area (the
workloads at the distribution ratio with ``swap.fragmentation``)."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pandas as pd

from .._core import PagelabError
from ..figures.bars import plot_grouped_bars
from ..figures.clustering import plot_clustering, write_size_bins
from ..system import normalize_config, safe_name
from .common import base_table, engine_process, fmt_pct, footprint_pages, laid_over, process_fields, \
    reduction_pct
from .protocol import Analysis, Point, Results, Spec, View
from .schema import AnyTable, ArrayOf, Field, Int, List_, Number, Str, Table

#: the two configurations, in column order: (key, default label)
BASELINE, MCLUSTERING = "bsd", "mclustering"
CONFIGS = ((BASELINE, "BSD VM"), (MCLUSTERING, "mClustering"))
PAPER_PCT_KEYS = ("time_improvement_pct", "write_reduction_pct")
#: the paper's cluster sizes: at most 16 pages (section 1, footnote); figure 4(c)'s
#: "less than eight pages" and its larger sizes below 16
MAX_CLUSTER = 16
SMALL_SIZES = range(1, 8)
MID_SIZES = range(8, MAX_CLUSTER)
#: figure 3(c): "clusters ranging between one and four pages"
FEW_PAGES = range(1, 5)

_PARAMS = AnyTable("a table of the workload's parameters")
CONFIG = Table({
    "label": Field(Str(), None, "the configuration's name in tables and figures"),
    "system": Field(AnyTable("a table of the engine's [system] keys"), None, "laid over base.system"),
    "disk": Field(AnyTable("a table of the engine's [disk] keys"), None, "laid over base.disk"),
    "swap": Field(AnyTable("a table of the engine's [swap] keys"), None, "laid over base.swap"),
})
PAPER = Table({
    "time_improvement_pct": Field(List_(Number()), None, "figure (a): execution time saved, % per ratio"),
    "write_reduction_pct": Field(List_(Number()), None, "figure (b): disk writes saved, % per ratio"),
    "page_ins": Field(Str(), None, "figure (b): page-ins, in the paper's words"),
})
WORKLOAD = Table(process_fields({
    "paper_name": Field(Str(), None, "the paper's benchmark"),
    "frames": Field(Int(min=1), None, "fixed physical memory (frames), section 3.1's design; with `sizes`"),
    "sizes": Field(List_(_PARAMS, min_len=1), None,
                   "per ratio, the parameters laid over `params` so that the footprint is ratio x frames"),
    "quick_sizes": Field(List_(_PARAMS, min_len=1), None,
                         "per ratio, the sizes with --quick (on frames x quick_scale); without them --quick "
                         "runs this workload at full size"),
    "paper": Field(PAPER, {}, "the paper's numbers for this workload (sections 3.2, 3.3)"),
}))
SETUP = Table({
    "ratios": Field(List_(Number(above=0), min_len=2), [1.3, 1.5, 1.7],
                    "virtual memory / physical memory, increasing (the paper: 1.3, 1.5 and 1.7 GB on 1 GB)"),
    "distribution_ratio": Field(Number(above=0), None,
                                "the ratio of the write-size distributions, figures 3(c) and 4(c) (default: "
                                "the middle ratio)"),
    "distribution_pages": Field(Int(min=1), MAX_CLUSTER,
                                "write sizes shown one by one in the figures; larger ones in a last bar"),
})
SECTION34 = Table({
    "fragmentation": Field(Number(min=0, max=0.9), 0.8,
                           "part of the swap area occupied at random before the run (the third situation: a "
                           "seriously fragmented swap disk); the workloads run at the distribution ratio"),
    "sequential": Field(Table(process_fields()), None,
                        "the first situation: a program that writes contiguous pages; its memory is its "
                        "footprint / the distribution ratio"),
})
TABLES = {
    "setup": Field(SETUP, {}, "the ratios and the write-size distribution"),
    "base": Field(base_table("system", "disk", "swap", "token", "load_control"), {},
                  "engine tables under every run; system.frames is set per run"),
    "config": Field(Table({BASELINE: Field(CONFIG, doc="the BSD VM's clustering (the baseline)"),
                           MCLUSTERING: Field(CONFIG, doc="mClustering")}),
                    doc="the two configurations, laid over [base] (tables merged key by key)"),
    "workload": Field(ArrayOf(WORKLOAD, min_len=1), doc="the benchmarks, one process per run"),
    "section34": Field(SECTION34, None, "section 3.4's situations where mClustering should not help"),
}
MEASURES = {
    "time_improvement_pct": "execution time mClustering saves against BSD VM, % per workload and ratio",
    "write_reduction_pct": "disk writes (page-out I/Os) mClustering saves, % per workload and ratio",
    "page_in_diff_pct": "mClustering's page-ins against BSD VM's, % difference per workload and ratio",
    "bsd_few_pages_write_share_pct": "BSD VM's disk writes of 1-4 pages, % of its writes, at the distribution "
                                     "ratio",
    "mcl_modal_write_pages": "the most frequent pages per disk write under mClustering, at the distribution "
                             "ratio",
    "one_page_write_reduction_pct": "one-page disk writes mClustering saves, %, at the distribution ratio",
    "small_write_reduction_pct": "disk writes of 1..7 pages mClustering saves, % per size, at the "
                                 "distribution ratio",
    "mid_write_change": "disk writes of 8..15 pages under mClustering minus under BSD VM, per size, at the "
                        "distribution ratio",
    "full_write_change": "disk writes of 16 pages under mClustering minus under BSD VM, at the distribution ratio",
    "distribution_distance": "largest total-variation distance between a configuration's write-size "
                             "distributions at two ratios (0: the same, 1: disjoint), per workload and "
                             "configuration",
    "s34_sequential_pages_per_write": "section 3.4, a sequential writer: pages per disk write under each "
                                      "configuration",
    "s34_sequential_time_improvement_pct": "section 3.4, a sequential writer: execution time mClustering "
                                           "saves, %",
    "s34_sequential_write_reduction_pct": "section 3.4, a sequential writer: disk writes mClustering saves, %",
    "s34_fragmented_write_reduction_pct": "section 3.4, a fragmented swap area: disk writes mClustering saves, "
                                          "% per workload",
    "s34_fragmented_benefit_kept_pct": "section 3.4: the write reduction on the fragmented swap area as a % "
                                       "of the one on a fresh swap area, per workload",
}


def check(spec: Spec) -> None:
    file = spec.path.name
    setup = spec.table("setup")
    ratios = setup["ratios"]
    if not all(a < b for a, b in zip(ratios, ratios[1:])):
        raise PagelabError(f"{file}: setup.ratios: expected increasing ratios, got {ratios}")
    dist = setup.get("distribution_ratio")
    if dist is not None and dist not in ratios:
        raise PagelabError(f"{file}: setup.distribution_ratio: expected one of the ratios {ratios}, got {dist}")
    if "frames" in spec.table("base").get("system", {}):
        raise PagelabError(f"{file}: base.system.frames: set per run from the workload and the ratio; remove it")
    seen = set()
    for i, w in enumerate(spec.table("workload")):
        where = f"{file}: workload[{i}]"
        if w["name"] in seen:
            raise PagelabError(f"{where}.name: '{w['name']}' is used twice")
        seen.add(w["name"])
        if ("frames" in w) != ("sizes" in w):
            raise PagelabError(f"{where}: give frames and sizes together (fixed memory, a size per ratio), "
                               "or neither (frames = footprint / ratio)")
        if "quick_sizes" in w and "sizes" not in w:
            raise PagelabError(f"{where}.quick_sizes: needs frames and sizes")
        for key in ("sizes", "quick_sizes"):
            if key in w and len(w[key]) != len(ratios):
                raise PagelabError(f"{where}.{key}: expected {len(ratios)} tables of parameters, one per ratio, "
                                   f"got {len(w[key])}")
        for key in PAPER_PCT_KEYS:
            v = w["paper"].get(key)
            if v is not None and len(v) != len(ratios):
                raise PagelabError(f"{where}.paper.{key}: expected {len(ratios)} numbers, one per ratio, "
                                   f"got {len(v)}")


# ---------------------------------------------------------------- the runs

def distribution_ratio(spec: Spec) -> float:
    setup = spec.table("setup")
    ratios = setup["ratios"]
    return setup["distribution_ratio"] if setup.get("distribution_ratio") is not None else ratios[len(ratios) // 2]


def labels(spec: Spec) -> Dict[str, str]:
    return {key: spec.table("config")[key].get("label") or label for key, label in CONFIGS}


def frames_for(footprint: int, ratio: float) -> int:
    """Physical memory for a virtual memory ``ratio`` times as large as it."""
    return max(1, int(round(footprint / ratio)))


def _page_size(spec: Spec) -> int:
    return int(spec.table("base").get("system", {}).get("page_size", 4096))


def _process(entry: dict, factor: float = 1.0) -> dict:
    """A workload entry as the engine's process: the experiment's keys dropped, the params
    its ``scale`` lists multiplied by ``factor``."""
    return engine_process({k: v for k, v in entry.items() if k not in ("frames", "sizes", "quick_sizes", "paper")},
                          factor)


def workload_runs(spec: Spec, entry: dict) -> List[dict]:
    """Per ratio: {ratio, frames, process, footprint} of one workload. With frames and
    sizes (section 3.1): the fixed memory (x quick_scale with --quick, on quick_sizes),
    the problem grown per ratio; else the program's own size on footprint / ratio."""
    ratios = spec.table("setup")["ratios"]
    base_dir = spec.path.resolve().parent
    page_size = _page_size(spec)
    if "frames" in entry:
        quick = spec.quick and "quick_sizes" in entry
        frames = max(1, int(round(entry["frames"] * spec.scale))) if quick else entry["frames"]
        sizes = entry["quick_sizes"] if quick else entry["sizes"]
        proc = _process(entry)
        procs = [laid_over(proc, {"params": size}) for size in sizes]
        footprints = [footprint_pages(p, page_size, base_dir) for p in procs]
        frames_list = [frames] * len(ratios)
    else:
        proc = _process(entry, spec.scale)
        procs = [proc] * len(ratios)
        footprints = [footprint_pages(proc, page_size, base_dir)] * len(ratios)
        frames_list = [frames_for(footprints[0], r) for r in ratios]
    return [{"ratio": r, "frames": f, "process": p, "footprint": fp}
            for r, f, p, fp in zip(ratios, frames_list, procs, footprints)]


def run_config(base: dict, config: dict, process: dict, frames: int, swap: Optional[dict] = None) -> dict:
    """The configuration (as in a TOML file) of one run: [base], the configuration laid
    over it, the frames, the one process (and ``swap`` keys laid over last)."""
    cfg = laid_over(base, {k: v for k, v in config.items() if k != "label"})
    if swap:
        cfg = laid_over(cfg, {"swap": swap})
    cfg.setdefault("system", {})["frames"] = int(frames)
    cfg["process"] = [copy.deepcopy(process)]
    return cfg


def point_key(workload: str, ratio: float, config: str) -> str:
    return f"{workload} | {ratio:g} | {config}"


def _sequential(spec: Spec) -> Optional[dict]:
    s34 = spec.table("section34")
    if s34 is None or s34.get("sequential") is None:
        return None
    proc = _process(s34["sequential"], spec.scale)
    footprint = footprint_pages(proc, _page_size(spec), spec.path.resolve().parent)
    ratio = distribution_ratio(spec)
    return {"ratio": ratio, "frames": frames_for(footprint, ratio), "process": proc, "footprint": footprint}


def points(spec: Spec) -> List[Point]:
    base, configs = spec.table("base"), spec.table("config")
    base_dir = spec.path.resolve().parent
    file = spec.path.name
    dist = distribution_ratio(spec)
    s34 = spec.table("section34")
    out = []

    def add(key: str, cfg: dict, where: str) -> None:
        out.append(Point(key, "system", normalize_config(cfg, f"{file}: {where}", base_dir)))

    for entry in spec.table("workload"):
        name = entry["name"]
        for run in workload_runs(spec, entry):
            for key, _ in CONFIGS:
                add(point_key(name, run["ratio"], key), run_config(base, configs[key], run["process"], run["frames"]),
                    f"workload '{name}' at {run['ratio']:g}x ({key})")
            if s34 is not None and run["ratio"] == dist:
                for key, _ in CONFIGS:
                    add(f"section34 fragmented | {name} | {key}",
                        run_config(base, configs[key], run["process"], run["frames"],
                                   swap={"fragmentation": s34["fragmentation"]}),
                        f"section34: workload '{name}' on a fragmented swap area ({key})")
    seq = _sequential(spec)
    if seq is not None:
        for key, _ in CONFIGS:
            add(f"section34 sequential | {key}", run_config(base, configs[key], seq["process"], seq["frames"]),
                f"section34.sequential ({key})")
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
        "write_sizes": [int(v) for v in raw.get("write_sizes", [])],
    }


def difference_pct(before: float, after: float) -> Optional[float]:
    """How much larger ``after`` is than ``before``, in percent of ``before`` (None when
    ``before`` is 0)."""
    if not before:
        return None
    return 100.0 * (after - before) / before


def compare(bsd: dict, mcl: dict) -> dict:
    """mClustering against BSD VM in one situation: execution-time improvement and
    disk-write reduction (positive = mClustering better), page-in difference (positive
    = mClustering did more page-ins)."""
    return {
        "time_improvement_pct": reduction_pct(bsd["time_s"], mcl["time_s"]),
        "write_reduction_pct": reduction_pct(bsd["disk_writes"], mcl["disk_writes"]),
        "page_in_diff_pct": difference_pct(bsd["page_ins"], mcl["page_ins"]),
    }


def writes_of(write_sizes: Sequence[int], pages: int) -> int:
    """Disk writes of ``pages`` pages (``write_sizes[k]`` = writes of k pages)."""
    return int(write_sizes[pages]) if 0 < pages < len(write_sizes) else 0


def share_pct(write_sizes: Sequence[int], sizes: Sequence[int]) -> Optional[float]:
    """Writes of the given sizes, in percent of all writes (None without writes)."""
    total = sum(int(v) for v in write_sizes[1:])
    if not total:
        return None
    return 100.0 * sum(writes_of(write_sizes, k) for k in sizes) / total


def modal_pages(write_sizes: Sequence[int]) -> Optional[int]:
    """The most frequent pages per write (the larger size on a tie); None without writes."""
    best = None
    for k in range(1, len(write_sizes)):
        if write_sizes[k] > 0 and (best is None or write_sizes[k] >= write_sizes[best]):
            best = k
    return best


def distribution(write_sizes: Sequence[int]) -> Dict[int, float]:
    """The write sizes as fractions of all writes, by pages per write."""
    total = sum(int(v) for v in write_sizes[1:])
    return {k: write_sizes[k] / total for k in range(1, len(write_sizes)) if write_sizes[k]} if total else {}


def tv_distance(a: Dict[int, float], b: Dict[int, float]) -> float:
    """Total-variation distance between two distributions: half the summed absolute
    differences (0 when equal, 1 when disjoint)."""
    return 0.5 * sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))


def largest_distance(write_sizes: Sequence[Sequence[int]]) -> Optional[float]:
    """The largest distance between the write-size distributions of any two runs (None
    when a run made no writes)."""
    dists = [distribution(s) for s in write_sizes]
    if any(not d for d in dists) or len(dists) < 2:
        return None
    return max(tv_distance(a, b) for a, b in itertools.combinations(dists, 2))


def size_measures(bsd_sizes: Sequence[int], mcl_sizes: Sequence[int]) -> dict:
    """The write-size measures of one workload at the distribution ratio (figures 3c, 4c)."""
    return {
        "bsd_few_pages_write_share_pct": share_pct(bsd_sizes, FEW_PAGES),
        "mcl_modal_write_pages": modal_pages(mcl_sizes),
        "one_page_write_reduction_pct": reduction_pct(writes_of(bsd_sizes, 1), writes_of(mcl_sizes, 1)),
        "small_write_reduction_pct": [reduction_pct(writes_of(bsd_sizes, k), writes_of(mcl_sizes, k))
                                      for k in SMALL_SIZES],
        # counts, not percentages: a size BSD VM never wrote still shows mClustering's change
        "mid_write_change": [writes_of(mcl_sizes, k) - writes_of(bsd_sizes, k) for k in MID_SIZES],
        "full_write_change": writes_of(mcl_sizes, MAX_CLUSTER) - writes_of(bsd_sizes, MAX_CLUSTER),
    }


def benefit_kept_pct(fresh: Optional[float], fragmented: Optional[float]) -> Optional[float]:
    """The write reduction left on a fragmented swap area, in percent of the one on a
    fresh swap area (None when there was none to keep)."""
    if fresh is None or fragmented is None or fresh <= 0:
        return None
    return 100.0 * fragmented / fresh


def _fmt_s(v: float) -> str:
    return f"{v:,.2f}"


def _fmt_n(v: Optional[int]) -> str:
    return "n/a" if v is None else f"{v:,}"


def _fmt_signed(v: Optional[float]) -> str:
    return fmt_pct(v, signed=True)


FIGURE_COLUMNS = ["workload", "VM/PM", "pages / frames",
                  "time BSD (s)", "time mCl (s)", "time improvement", "paper",
                  "disk writes BSD", "disk writes mCl", "write reduction", "paper",
                  "page-ins BSD", "page-ins mCl", "page-in difference", "paper"]


def _paper_pct(entry: dict, key: str, i: int) -> Optional[float]:
    v = entry["paper"].get(key)
    return v[i] if v else None


# ---------------------------------------------------------------- the analysis

def workload_rows(spec: Spec, entry: dict, results: Results) -> List[dict]:
    """Per ratio: the run numbers under both configurations, the comparison and the
    paper's numbers (the rows figures 3 and 4 are drawn from)."""
    rows = []
    for i, run in enumerate(workload_runs(spec, entry)):
        m = {key: run_metrics(results.full(point_key(entry["name"], run["ratio"], key))) for key, _ in CONFIGS}
        rows.append({"ratio": run["ratio"], "frames": run["frames"], "footprint": run["footprint"],
                     BASELINE: m[BASELINE], MCLUSTERING: m[MCLUSTERING],
                     "ours": compare(m[BASELINE], m[MCLUSTERING]),
                     "paper": {"time_improvement_pct": _paper_pct(entry, "time_improvement_pct", i),
                               "write_reduction_pct": _paper_pct(entry, "write_reduction_pct", i),
                               "page_ins": entry["paper"].get("page_ins")}})
    return rows


def analyse(spec: Spec, results: Results) -> Analysis:
    names = labels(spec)
    dist = distribution_ratio(spec)
    dist_pages = spec.table("setup")["distribution_pages"]
    m: Dict[str, Any] = {k: {} for k in MEASURES if not k.startswith("s34_sequential")}
    table, dist_rows, fig_rows, dist_view = [], [], [], []
    workloads = []
    for entry in spec.table("workload"):
        name = entry["name"]
        rows = workload_rows(spec, entry, results)
        workloads.append({"name": name, "paper_name": entry.get("paper_name") or name, "rows": rows})
        for k in ("time_improvement_pct", "write_reduction_pct", "page_in_diff_pct"):
            m[k][name] = [r["ours"][k] for r in rows]
        at = next(r for r in rows if r["ratio"] == dist)
        for k, v in size_measures(at[BASELINE]["write_sizes"], at[MCLUSTERING]["write_sizes"]).items():
            m[k][name] = v
        for key, _ in CONFIGS:
            m["distribution_distance"][f"{name} {names[key]}"] = largest_distance([r[key]["write_sizes"]
                                                                                  for r in rows])
        for r in rows:
            b, c, o, p = r[BASELINE], r[MCLUSTERING], r["ours"], r["paper"]
            row = {"workload": name, "ratio": r["ratio"], "footprint_pages": r["footprint"], "frames": r["frames"],
                   "achieved_ratio": r["footprint"] / r["frames"]}
            for key, _ in CONFIGS:
                for k, v in r[key].items():
                    if k != "write_sizes":
                        row[f"{key}_{k}"] = v
            row.update(o)
            for k in PAPER_PCT_KEYS:
                row["paper_" + k] = p[k]
            table.append(row)
            fig_rows.append([name, f"{r['ratio']:g}", f"{r['footprint']:,} / {r['frames']:,}",
                             _fmt_s(b["time_s"]), _fmt_s(c["time_s"]), fmt_pct(o["time_improvement_pct"]),
                             fmt_pct(p["time_improvement_pct"]),
                             _fmt_n(b["disk_writes"]), _fmt_n(c["disk_writes"]), fmt_pct(o["write_reduction_pct"]),
                             fmt_pct(p["write_reduction_pct"]),
                             _fmt_n(b["page_ins"]), _fmt_n(c["page_ins"]), _fmt_signed(o["page_in_diff_pct"]),
                             p["page_ins"] or "n/a"])
            for key, _ in CONFIGS:
                for pages, writes in enumerate(r[key]["write_sizes"]):
                    if pages and writes:
                        dist_rows.append({"workload": name, "ratio": r["ratio"], "config": key,
                                          "pages_per_write": pages, "disk_writes": writes})
        for key, _ in CONFIGS:
            _labels, counts = write_size_bins(at[key]["write_sizes"], dist_pages)
            dist_view.append([name, names[key]] + [_fmt_n(c) for c in counts[:dist_pages]]
                             + [_fmt_n(sum(counts[dist_pages:]))])
    views = [
        View(f"figures 3 and 4: {names[BASELINE]} against {names[MCLUSTERING]}, ours beside the paper's "
             "(pages = the workload's footprint; time in simulated seconds)", FIGURE_COLUMNS, fig_rows, readme=True),
        View(f"disk writes by pages per write at {dist:g}x (figures 3c and 4c)",
             ["workload", "configuration"] + [str(k) for k in range(1, dist_pages + 1)] + [f"{dist_pages + 1}+"],
             dist_view),
    ]
    tables = {"table": pd.DataFrame(table), "write_sizes": pd.DataFrame(dist_rows)}
    summary: Dict[str, Any] = {
        "ratios": spec.table("setup")["ratios"], "distribution_ratio": dist, "labels": names,
        "workloads": [{"name": w["name"], "paper_name": w["paper_name"],
                       "footprints": [r["footprint"] for r in w["rows"]], "frames": [r["frames"] for r in w["rows"]]}
                      for w in workloads],
    }
    lines = [achieved_line(w["name"], w["rows"]) for w in workloads]
    s34_rows = _section34(spec, results, m, workloads, names)
    if s34_rows:
        views.append(View("section 3.4: where mClustering should not help", S34_COLUMNS,
                          [[_cell(row[k]) for k in S34_KEYS] for row in s34_rows]))
        tables["section34"] = pd.DataFrame(s34_rows)
        summary["section34"] = s34_rows
    else:
        for k in [k for k in m if k.startswith("s34_")]:
            del m[k]
    return Analysis(measures=m, tables=tables, views=views, lines=lines, summary=summary)


#: section 3.4's printed columns: (heading, key of the section34 table)
S34_VIEW = [("situation", "situation"), ("program", "program"), ("fragmentation", "fragmentation"),
            ("disk writes BSD", "bsd_disk_writes"), ("disk writes mCl", "mclustering_disk_writes"),
            ("pages/write BSD", "bsd_pages_per_write"), ("pages/write mCl", "mclustering_pages_per_write"),
            ("write reduction %", "write_reduction_pct"), ("time BSD (s)", "bsd_time_s"),
            ("time mCl (s)", "mclustering_time_s"), ("time improvement %", "time_improvement_pct")]
S34_COLUMNS = [h for h, _ in S34_VIEW]
S34_KEYS = [k for _, k in S34_VIEW]


def achieved_line(name: str, rows: List[dict]) -> str:
    """The virtual / physical memory ratios a workload's runs had (footprints measured)."""
    achieved = ", ".join(f"{r['footprint'] / r['frames']:.2f}" for r in rows)
    nominal = ", ".join(f"{r['ratio']:g}" for r in rows)
    pages = "/".join(_fmt_n(r["footprint"]) for r in rows)
    frames = "/".join(_fmt_n(r["frames"]) for r in rows)
    return f"{name}: {pages} pages on {frames} frames: virtual / physical memory {achieved} (nominal {nominal})"


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.1f}"
    if isinstance(v, int):
        return f"{v:,}"
    return "n/a" if v is None else str(v)


def _section34(spec: Spec, results: Results, m: Dict[str, Any], workloads: List[dict],
               names: Dict[str, str]) -> List[dict]:
    """Section 3.4's situations: the measures (into ``m``) and a row per situation."""
    s34 = spec.table("section34")
    if s34 is None:
        return []
    rows = []

    def row(situation: str, program: str, bsd: dict, mcl: dict, **extra) -> dict:
        o = compare(bsd, mcl)
        r = {"situation": situation, "program": program}
        r.update(extra)
        r.update({"bsd_disk_writes": bsd["disk_writes"], "mclustering_disk_writes": mcl["disk_writes"],
                  "bsd_pages_per_write": bsd["pages_per_write"], "mclustering_pages_per_write": mcl["pages_per_write"],
                  "bsd_time_s": bsd["time_s"], "mclustering_time_s": mcl["time_s"],
                  "write_reduction_pct": o["write_reduction_pct"], "time_improvement_pct": o["time_improvement_pct"],
                  "page_in_diff_pct": o["page_in_diff_pct"]})
        rows.append(r)
        return o

    dist = distribution_ratio(spec)
    for w in workloads:
        at = next(r for r in w["rows"] if r["ratio"] == dist)
        row("fresh swap area", w["name"], at[BASELINE], at[MCLUSTERING], ratio=dist, fragmentation=0.0)
        frag = {key: run_metrics(results.full(f"section34 fragmented | {w['name']} | {key}")) for key, _ in CONFIGS}
        o = row("fragmented swap area", w["name"], frag[BASELINE], frag[MCLUSTERING], ratio=dist,
                fragmentation=s34["fragmentation"])
        m["s34_fragmented_write_reduction_pct"][w["name"]] = o["write_reduction_pct"]
        m["s34_fragmented_benefit_kept_pct"][w["name"]] = benefit_kept_pct(at["ours"]["write_reduction_pct"],
                                                                         o["write_reduction_pct"])
    seq = _sequential(spec)
    if seq is not None:
        runs = {key: run_metrics(results.full(f"section34 sequential | {key}")) for key, _ in CONFIGS}
        o = row("sequential writer", seq["process"]["name"], runs[BASELINE], runs[MCLUSTERING], ratio=seq["ratio"],
                fragmentation=0.0)
        m["s34_sequential_pages_per_write"] = {names[key]: runs[key]["pages_per_write"] for key, _ in CONFIGS}
        m["s34_sequential_time_improvement_pct"] = o["time_improvement_pct"]
        m["s34_sequential_write_reduction_pct"] = o["write_reduction_pct"]
    return rows


# ---------------------------------------------------------------- the figures

def figures(spec: Spec, analysis: Analysis, results: Results, out: Path) -> List[str]:
    """Per workload, figures 3 and 4: (a) execution time, (b) disk writes and page-ins per
    ratio, (c) disk writes by pages per write at the distribution ratio; section 3.4's
    pages per write in each situation."""
    names = labels(spec)
    dist = distribution_ratio(spec)
    written = []
    for entry in spec.table("workload"):
        rows = workload_rows(spec, entry, results)
        fixed = "frames" in entry
        title = (f"{entry['name']} (paper: {entry.get('paper_name') or entry['name']}): "
                 + (f"{'/'.join(_fmt_n(r['footprint']) for r in rows)} pages of virtual memory on "
                    f"{_fmt_n(rows[0]['frames'])} frames" if fixed else
                    f"{rows[0]['footprint']:,} pages of virtual memory, "
                    f"{'/'.join(_fmt_n(r['frames']) for r in rows)} frames"))
        fig = f"{spec.name}-{safe_name(entry['name'])}.png"
        plot_clustering(rows, [names[k] for k, _ in CONFIGS], out / fig, title=title, dist_ratio=dist,
                        dist_pages=spec.table("setup")["distribution_pages"])
        written.append(fig)
    if "section34" in analysis.tables:
        df = analysis.tables["section34"]
        short = {"fresh swap area": "\nfresh", "fragmented swap area": "\nfragmented"}
        bars = pd.DataFrame([{"situation": (r["program"] + short[r["situation"]] if r["situation"] in short
                                            else r["situation"].replace(" ", "\n", 1)),
                              "config": names[key],
                              "pages_per_write": r[f"{key}_pages_per_write"] or 0.0}
                             for r in df.to_dict("records") for key, _ in CONFIGS])
        fig = f"{spec.name}-section34.png"
        plot_grouped_bars(bars, out / fig, value="pages_per_write", ylabel="pages per disk write",
                          title=f"section 3.4: pages per disk write at {dist:g}x (fresh or fragmented swap area)",
                          group="situation", series="config", xlabel="")
        written.append(fig)
    return written
