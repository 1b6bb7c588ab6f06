"""`pagelab reproduce gang`: gang-adaptive-paging.txt (Ryu, Pachapurkar and Fong,
"Adaptive Memory Paging for Efficient Gang Scheduling of Parallel Applications"),
section 4.

Two instances of each NPB-like workload (``npb-lu``, ``npb-sp``, ``npb-cg``, ``npb-is``,
``npb-mg``) are gang-scheduled on nodes whose memory holds one instance's working set but
not two (``memory_ratio`` times one instance's footprint). Each workload runs under the
original paging ("LRU": the node's clock reclaim with the Linux 2.2 16-page read-ahead),
under so/ao/ai/bg (all four mechanisms), and in batch (one instance after the other):

- serial (one node): completion time, switching overhead ((gang - batch) / gang) and the
  reduction of the switching overhead by so/ao/ai/bg (figure 7);
- parallel (2 and 4 nodes, a barrier per iteration): the same (figure 8);
- the breakdown by mechanism for LU: ai, so, so/ao, so/ao/bg, so/ao/ai/bg (figure 9);
- paging activity over the first switches of LU on the largest cluster for LRU, so,
  so/ao and so/ao/ai/bg (figure 6).

The file format is in docs/system-config.md ("Experiment files", kind "gang").
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Dict, List, Optional

from . import _core, api
from ._core import PagelabError
from .files import output_dir
from .gang import GangResult, label
from .figures.bars import plot_grouped_bars, plot_paging_activity
from .reproduce import fmt_pct, reduction_pct, write_outputs
from .reproduce_mclustering import _is_number, _need, merge
from .system import SimulatedTimeBar, normalize_config, read_toml, safe_name
from .timed import run_engine

KIND = "gang"
TOP_KEYS = ("experiment", "base", "workload", "parallel", "breakdown")
BASE_TABLES = ("system", "disk", "swap", "gang")
PROCESS_KEYS = ("workload", "params", "seed", "cpu_ns_per_ref")
WORKLOAD_KEYS = ("name", "paper_name", "quick", "paper") + PROCESS_KEYS
ALL = ["so", "ao", "ai", "bg"]
#: figure 9's combinations
BREAKDOWN = [["ai"], ["so"], ["so", "ao"], ["so", "ao", "bg"], ALL]
#: figure 6's four graphs
ACTIVITY = [[], ["so"], ["so", "ao"], ALL]


# ---------------------------------------------------------------- the experiment file

def load_gang(path: Path) -> dict:
    """Reads and checks a gang experiment file; errors are one line naming the file and
    the key. Keys of the base tables are the engine's to check."""
    return check_gang(read_toml(path), path.name)


def check_gang(data: dict, name: str) -> dict:
    for key in data:
        _need(key in TOP_KEYS, name, f"unknown top-level key '{key}' (expected {', '.join(TOP_KEYS)})")
    exp = data.get("experiment")
    _need(isinstance(exp, dict), name, "missing table [experiment]")
    _need(exp.get("kind") == KIND, name, f"experiment.kind: expected \"{KIND}\", got {exp.get('kind')!r}")
    ratio = exp.get("memory_ratio", 1.5)
    _need(_is_number(ratio) and 1.0 < ratio < 2.0, name,
          f"experiment.memory_ratio: expected a number between 1 and 2 (memory for one instance's footprint "
          f"but not two), got {ratio!r}")
    large = exp.get("large_overhead_pct", 20)
    _need(_is_number(large) and large >= 0, name,
          f"experiment.large_overhead_pct: expected a number >= 0, got {large!r}")
    job_s = exp.get("job_s", 40.0)
    _need(_is_number(job_s) and job_s > 0, name, f"experiment.job_s: expected a positive number of seconds, got {job_s!r}")
    quick = exp.get("quick", {})
    _need(isinstance(quick, dict), name, "experiment.quick: expected a table (job_s, quantum_s, activity_until_s)")
    for k, v in quick.items():
        _need(k in ("job_s", "quantum_s", "activity_until_s"), name,
              f"experiment.quick: unknown key '{k}' (expected job_s, quantum_s, activity_until_s)")
        _need(_is_number(v) and v > 0, name, f"experiment.quick.{k}: expected a positive number, got {v!r}")
    until = exp.get("activity_until_s")
    _need(until is None or (_is_number(until) and until > 0), name,
          f"experiment.activity_until_s: expected a positive number of seconds, got {until!r}")
    base = data.get("base", {})
    _need(isinstance(base, dict), name, "base: expected a table of " + ", ".join(BASE_TABLES))
    for key, value in base.items():
        _need(key in BASE_TABLES, name, f"base: unknown key '{key}' (expected {', '.join(BASE_TABLES)}; "
                                        "the jobs are the [[workload]] entries)")
        _need(isinstance(value, dict), name, f"base.{key}: expected a table")
    _need("frames" not in base.get("system", {}), name,
          "base.system.frames: set per workload from its footprint and experiment.memory_ratio; remove it")
    for key in ("nodes", "mechanisms", "mode"):
        _need(key not in base.get("gang", {}), name, f"base.gang.{key}: set by the experiment for each run; remove it")
    workloads = data.get("workload")
    _need(isinstance(workloads, list) and workloads, name, "expected at least one [[workload]]")
    names = []
    for i, w in enumerate(workloads):
        _need(isinstance(w, dict), name, f"workload[{i}]: expected a table")
        _need(isinstance(w.get("name"), str) and w["name"], name, f"workload[{i}].name: expected a string")
        where = f"workload '{w['name']}'"
        _need(w["name"] not in names, name, f"{where}: the name is used twice")
        names.append(w["name"])
        for k in w:
            _need(k in WORKLOAD_KEYS, name, f"{where}: unknown key '{k}' (expected {', '.join(WORKLOAD_KEYS)})")
        _need(isinstance(w.get("workload"), str), name, f"{where}.workload: expected a built-in workload name")
        for k in ("params", "quick", "paper"):
            _need(isinstance(w.get(k, {}), dict), name, f"{where}.{k}: expected a table")
        for k in w.get("quick", {}):
            _need(k in PROCESS_KEYS, name, f"{where}.quick: unknown key '{k}' (expected {', '.join(PROCESS_KEYS)})")
    par = data.get("parallel", {})
    _need(isinstance(par, dict), name, "parallel: expected a table")
    nodes = par.get("nodes", [])
    _need(isinstance(nodes, list) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 2 for n in nodes),
          name, f"parallel.nodes: expected a list of node counts >= 2, got {nodes!r}")
    pw = par.get("workloads", [])
    _need(isinstance(pw, list) and all(w in names for w in pw), name,
          f"parallel.workloads: expected names of [[workload]] entries ({', '.join(names)}), got {pw!r}")
    _need(isinstance(par.get("paper", {}), dict), name, "parallel.paper: expected a table")
    bd = data.get("breakdown", {})
    _need(isinstance(bd, dict), name, "breakdown: expected a table")
    _need(bd.get("workload") is None or bd.get("workload") in names, name,
          f"breakdown.workload: expected the name of a [[workload]] entry ({', '.join(names)})")
    _need(isinstance(bd.get("paper", {}), dict), name, "breakdown.paper: expected a table")
    return data


# ---------------------------------------------------------------- runs

def job_process(entry: dict, quick: bool) -> dict:
    """A [[workload]] entry as the engine's process of one job, with --quick its
    ``quick`` table laid over it."""
    p = {k: copy.deepcopy(v) for k, v in entry.items() if k in PROCESS_KEYS}
    if quick:
        p = merge(p, entry.get("quick", {}))
    return p


def measure(process: dict, page_size: int) -> dict:
    """Footprint (distinct pages) and references of one instance, from one pass."""
    info = api.Workload(process["workload"], seed=int(process.get("seed", 0)), page_size=page_size,
                        **process.get("params", {})).info()
    return {"pages": int(info["distinct_pages"]), "references": int(info["references"])}


def experiment_settings(exp: dict, quick: bool) -> dict:
    """The experiment's own settings, with --quick its ``quick`` table laid over them."""
    out = {"job_s": float(exp.get("job_s", 40.0)), "activity_until_s": exp.get("activity_until_s")}
    if quick:
        out.update(exp.get("quick", {}))
    return out


def superstep_refs(process: dict, references: int) -> int:
    """A barrier per iteration of the workload (its ``iterations`` parameter), as the
    NPB codes exchange boundaries and reduce once per time step."""
    iterations = int(process.get("params", {}).get("iterations", 1))
    return max(1, references // max(1, iterations))


def gang_config(base: dict, process: dict, frames: int, nodes: int, mechanisms: Optional[list],
                superstep: int) -> dict:
    """The user-level configuration of one run: two instances of ``process`` as two
    jobs; ``mechanisms`` None is batch."""
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
        # the second instance works on other data
        p["seed"] = int(p.get("seed", 0)) + 1000 * i
        if nodes > 1:
            p["superstep_refs"] = superstep
        jobs.append(p)
    cfg["process"] = jobs
    return cfg


def metrics(gang: GangResult, batch: GangResult) -> dict:
    """Completion of both instances, switching overhead against batch, pages paged."""
    t, b = gang.end_s, batch.end_s
    return {"completion_s": t, "overhead_s": t - b, "overhead_pct": 100.0 * (t - b) / t if t else 0.0,
            "pages_paged": gang.paged_pages, "major_faults": int(gang.jobs["major_faults"].sum())}


class Runner:
    """Runs and caches the gang runs of one experiment (each configuration once)."""

    def __init__(self, base: dict, exp_file: str, base_dir: Path, ratio: float, job_s: float, quick: bool,
                 progress):
        self.base, self.exp_file, self.base_dir, self.job_s = base, exp_file, base_dir, job_s
        self.ratio, self.quick, self.progress = ratio, quick, progress
        self.page_size = int(base.get("system", {}).get("page_size", 4096))
        self.cache: Dict[tuple, GangResult] = {}
        self.sizes: Dict[str, dict] = {}
        self.raws: Dict[str, dict] = {}

    def size(self, entry: dict) -> dict:
        if entry["name"] not in self.sizes:
            proc = job_process(entry, self.quick)
            try:
                m = measure(proc, self.page_size)
            except PagelabError as err:
                raise PagelabError(f"{self.exp_file}: workload '{entry['name']}': {err}") from None
            m["frames"] = max(16, int(round(self.ratio * m["pages"])))
            m["superstep_refs"] = superstep_refs(proc, m["references"])
            # an instance alone computes for job_s, unless the entry sets its own cost
            m["cpu_ns_per_ref"] = float(proc.get("cpu_ns_per_ref", self.job_s * 1e9 / max(1, m["references"])))
            m["seconds_per_iteration"] = (m["cpu_ns_per_ref"] * m["superstep_refs"] / 1e9)
            self.sizes[entry["name"]] = m
        return self.sizes[entry["name"]]

    def run(self, entry: dict, nodes: int, mechanisms: Optional[list]) -> GangResult:
        key = (entry["name"], nodes, None if mechanisms is None else tuple(mechanisms))
        if key in self.cache:
            return self.cache[key]
        size = self.size(entry)
        what = "batch" if mechanisms is None else label(mechanisms)
        where = f"{self.exp_file}: workload '{entry['name']}' on {nodes} node(s), {what}"
        proc = dict(job_process(entry, self.quick), cpu_ns_per_ref=size["cpu_ns_per_ref"])
        cfg = normalize_config(gang_config(self.base, proc, size["frames"], nodes, mechanisms, size["superstep_refs"]),
                               where, self.base_dir)
        with SimulatedTimeBar(f"{entry['name']} x{nodes} {what}", enabled=self.progress) as bar:
            result = run_engine(cfg, where, bar)
        self.cache[key] = result
        self.raws[f"{safe_name(entry['name'])}-{nodes}n-{safe_name(what)}"] = result.raw
        return result


# ---------------------------------------------------------------- the command

def compare(runner: Runner, entry: dict, nodes: int, combos: List[list]) -> dict:
    """One workload on ``nodes`` nodes: batch, LRU and each combination in ``combos``."""
    batch = runner.run(entry, nodes, None)
    lru = metrics(runner.run(entry, nodes, []), batch)
    row = {"workload": entry["name"], "nodes": nodes, "batch_s": batch.end_s, "LRU": lru, "configs": {}}
    for combo in combos:
        m = metrics(runner.run(entry, nodes, combo), batch)
        m["overhead_reduction_pct"] = reduction_pct(lru["overhead_s"], m["overhead_s"]) if lru["overhead_s"] > 0 else None
        m["paging_reduction_pct"] = reduction_pct(lru["pages_paged"], m["pages_paged"]) if lru["pages_paged"] else None
        row["configs"][label(combo)] = m
    return row


def early_share(result: GangResult, fraction: float = 0.25, node: int = 0) -> float:
    """The share of node ``node``'s page-ins that happen in the first ``fraction`` of the
    quantum after a switch (figure 1's compaction: paging at the start of a quantum)."""
    n = result.raw["nodes"][node]
    t, pin = n["system_series"]["t_s"], n["system_series"]["pages_in"]
    quantum = result.config["gang"].get("quantum_s", 300.0)
    switches = result.switch_times_s
    early = total = 0
    prev = 0.0
    for ti, x in zip(t, pin):
        total += x
        # the sample at ti counts the reads issued in (prev, ti]
        if any(prev < s + fraction * quantum and ti >= s for s in switches):
            early += x
        prev = ti
    return early / total if total else 0.0


def acceptance(rows: List[dict], large_pct: float) -> dict:
    """so/ao/ai/bg reduces the switching overhead against LRU on every workload and
    cluster where paging happens, by at least half where LRU's overhead is large (at
    least ``large_pct`` percent of the completion time: the large working sets)."""
    checks = []
    for r in rows:
        lru, all4 = r["LRU"], r["configs"]["so/ao/ai/bg"]
        if lru["pages_paged"] == 0:
            continue
        red = all4["overhead_reduction_pct"]
        large = lru["overhead_pct"] >= large_pct
        ok = red is not None and red > 0 and (not large or red >= 50)
        checks.append({"workload": r["workload"], "nodes": r["nodes"], "lru_overhead_pct": lru["overhead_pct"],
                       "reduction_pct": red, "large": large, "met": ok})
    return {"met": bool(checks) and all(c["met"] for c in checks), "checks": checks,
            "rule": (f"so/ao/ai/bg reduces the switching overhead against LRU wherever paging happens, by at least "
                     f"half where LRU's overhead is {large_pct:g}% of the completion time or more")}


def run_gang_experiment(path: Path, out_dir: Optional[str], quick: bool = False, progress=None) -> int:
    from .console import print_table

    started = time.perf_counter()
    data = load_gang(path)
    exp, base = data["experiment"], copy.deepcopy(data.get("base", {}))
    settings = experiment_settings(exp, quick)
    if quick and "quantum_s" in settings:
        base.setdefault("gang", {})["quantum_s"] = settings["quantum_s"]
    out = Path(out_dir or f"results/{exp.get('name', path.stem)}")
    output_dir(out)
    runner = Runner(base, path.name, path.resolve().parent, float(exp.get("memory_ratio", 1.5)), settings["job_s"],
                    quick, progress)
    entries = {w["name"]: w for w in data["workload"]}
    figures: List[str] = []

    # figure 7: serial
    serial = [compare(runner, w, 1, [ALL]) for w in data["workload"]]
    # figure 8: parallel
    par = data.get("parallel", {})
    parallel = [compare(runner, entries[n], nodes, [ALL]) for nodes in par.get("nodes", [])
                for n in par.get("workloads", [])]
    # figure 9: breakdown
    bd = data.get("breakdown", {})
    breakdown = []
    if bd.get("workload"):
        for nodes in [1] + list(par.get("nodes", [])):
            breakdown.append(compare(runner, entries[bd["workload"]], nodes, BREAKDOWN))

    for tag, rows in (("serial", serial), ("parallel", parallel)):
        if rows:
            figures += bar_figures(out, path.stem, tag, rows, ["LRU", "so/ao/ai/bg"])
    if breakdown:
        figures += bar_figures(out, path.stem, "breakdown", breakdown, ["LRU"] + [label(c) for c in BREAKDOWN],
                               group="nodes")
        # figure 6: the paging activity of the breakdown workload on the largest cluster
        nodes = breakdown[-1]["nodes"]
        entry = entries[bd["workload"]]
        fig = f"{path.stem}-activity.png"
        compaction = {label(c): early_share(runner.run(entry, nodes, c)) for c in ACTIVITY}
        plot_paging_activity([(label(c), runner.run(entry, nodes, c)) for c in ACTIVITY], out / fig,
                             until_s=settings["activity_until_s"],
                             title=f"{bd['workload']} on {nodes} node(s): paging activity of node 0 (figure 6)")
        figures.append(fig)

    acc = acceptance(serial + parallel, float(exp.get("large_overhead_pct", 20)))
    if breakdown:
        # figure 1/6: so/ao/ai/bg concentrates the paging at the start of a quantum
        compacted = compaction["so/ao/ai/bg"] > compaction["LRU"]
        acc["compaction"] = {"page_ins_in_first_quarter": compaction, "met": compacted}
        acc["met"] = acc["met"] and compacted
    summary = {
        "experiment": exp.get("name", path.stem), "kind": KIND, "paper": exp.get("paper"), "claim": exp.get("claim"),
        "engine_version": _core.ENGINE_VERSION, "quick": quick, "base": base,
        "memory_ratio": runner.ratio, "job_s": runner.job_s, "sizes": runner.sizes,
        "serial": serial, "parallel": parallel, "breakdown": breakdown,
        "paper_numbers": {"serial": {w["name"]: w.get("paper", {}) for w in data["workload"]},
                          "parallel": par.get("paper", {}), "breakdown": bd.get("paper", {})},
        "acceptance": acc, "figures": figures,
    }
    write_outputs(out, summary, table_rows(serial, parallel, breakdown), runner.raws, started)

    columns, rows = printed_rows(serial + parallel, data)
    print_table(f"{summary['experiment']}: figures 7 and 8 of {exp.get('paper', '')}, ours beside the paper's",
                columns, rows)
    if breakdown:
        print_table(f"figure 9: {bd['workload']} by mechanism (switching overhead, its reduction against LRU)",
                    ["nodes"] + ["LRU"] + [label(c) for c in BREAKDOWN],
                    [[str(r["nodes"]), f"{r['LRU']['overhead_pct']:.0f}%"]
                     + [f"{r['configs'][label(c)]['overhead_pct']:.0f}% "
                        f"({fmt_pct(r['configs'][label(c)]['overhead_reduction_pct'])})" for c in BREAKDOWN]
                     for r in breakdown])
    print()
    if "compaction" in acc:
        print("page-ins in the first quarter of a quantum (figure 6, " + f"{bd['workload']} x{nodes}): "
              + ", ".join(f"{k} {100 * v:.0f}%" for k, v in acc["compaction"]["page_ins_in_first_quarter"].items()))
    print(acceptance_line(acc))
    print(f"results in {out}/: summary.json, table.csv, {len(figures)} figures, runs/*.json ({summary['seconds']} s)")
    return 0


def _paper(data: dict, row: dict, key: str):
    if row["nodes"] == 1:
        return next((w.get("paper", {}) for w in data["workload"] if w["name"] == row["workload"]), {}).get(key)
    return data.get("parallel", {}).get("paper", {}).get(f"{row['workload']}_{row['nodes']}", {}).get(key)


def printed_rows(rows: List[dict], data: dict) -> tuple:
    columns = ["workload", "nodes", "batch (s)", "LRU (s)", "so/ao/ai/bg (s)", "overhead LRU", "paper",
               "overhead so/ao/ai/bg", "paper", "overhead reduction", "paper", "pages paged LRU",
               "so/ao/ai/bg"]
    out = []
    for r in rows:
        a = r["configs"]["so/ao/ai/bg"]

        def p(key):
            v = _paper(data, r, key)
            return "n/a" if v is None else f"{v:g}%"

        out.append([r["workload"], str(r["nodes"]), f"{r['batch_s']:,.1f}", f"{r['LRU']['completion_s']:,.1f}",
                    f"{a['completion_s']:,.1f}", f"{r['LRU']['overhead_pct']:.0f}%", p("lru_overhead_pct"),
                    f"{a['overhead_pct']:.0f}%", p("all_overhead_pct"), fmt_pct(a["overhead_reduction_pct"]),
                    p("overhead_reduction_pct"), f"{r['LRU']['pages_paged']:,}", f"{a['pages_paged']:,}"])
    return columns, out


def table_rows(serial, parallel, breakdown) -> List[dict]:
    """table.csv: one row per (part, workload, nodes, configuration)."""
    out = []
    for part, rows in (("serial", serial), ("parallel", parallel), ("breakdown", breakdown)):
        for r in rows:
            out.append({"part": part, "workload": r["workload"], "nodes": r["nodes"], "config": "batch",
                        "completion_s": r["batch_s"]})
            for name, m in [("LRU", r["LRU"])] + list(r["configs"].items()):
                out.append({"part": part, "workload": r["workload"], "nodes": r["nodes"], "config": name, **m})
    return out


def bar_figures(out: Path, stem: str, tag: str, rows: List[dict], configs: List[str], group: str = "workload") -> list:
    """Completion time, switching overhead and its reduction as grouped bars (figures
    7-9 (a), (b), (c))."""
    import pandas as pd

    recs = []
    for r in rows:
        g = r["workload"] if group == "workload" and r["nodes"] == 1 else (
            f"{r['workload']} x{r['nodes']}" if group == "workload" else f"{r['nodes']} node(s)")
        recs.append({"group": g, "config": "batch", "completion_s": r["batch_s"]})
        for name in configs:
            m = r["LRU"] if name == "LRU" else r["configs"][name]
            recs.append({"group": g, "config": name, "completion_s": m["completion_s"],
                         "overhead": m["overhead_pct"] / 100.0,
                         "reduction": (m.get("overhead_reduction_pct") or 0.0) / 100.0})
    df = pd.DataFrame(recs)
    names = []
    for suffix, value, ylabel, title, sub in (
            ("completion", "completion_s", "completion of both instances (s)", "job completion time", df),
            ("overhead", "overhead", "switching overhead (%)", "(gang - batch) / gang", df[df["config"] != "batch"]),
            ("reduction", "reduction", "overhead reduction vs LRU (%)", "reduction of the switching overhead",
             df[~df["config"].isin(["batch", "LRU"])])):
        name = f"{stem}-{tag}-{suffix}.png"
        plot_grouped_bars(sub, out / name, value, ylabel, f"{tag}: {title}", group="group",
                          percent=value != "completion_s",
                          xlabel="workload (xN: on N nodes)" if group == "workload" else "cluster size")
        names.append(name)
    return names


def acceptance_line(acc: dict) -> str:
    parts = [f"{c['workload']} x{c['nodes']}: {fmt_pct(c['reduction_pct'])} of {c['lru_overhead_pct']:.0f}%"
             for c in acc["checks"]]
    if "compaction" in acc:
        c = acc["compaction"]["page_ins_in_first_quarter"]
        parts.append(f"page-ins in a quantum's first quarter {100 * c['LRU']:.0f}% (LRU) -> "
                     f"{100 * c['so/ao/ai/bg']:.0f}% (so/ao/ai/bg)")
    return (f"acceptance ({acc['rule']}, and so/ao/ai/bg moves page-ins to the start of the quantum): "
            + "; ".join(parts) + f": {'met' if acc['met'] else 'NOT met'}")
