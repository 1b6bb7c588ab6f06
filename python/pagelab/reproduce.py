"""`pagelab reproduce EXPERIMENT`: runs an experiment file shipped inside the package
(``pagelab/experiments/``), or one a user passes as a path, and compares the outcome with the paper's numbers.

``token-lru`` (experiments/token-lru.toml) is token-ordered-lru.txt section 6: five
program pairs, each run under global LRU as in Linux 2.2 (``token.policy = "none"``) and
under the token-ordered LRU (``"paper"``), printed in the layout of the paper's Table 2
with the paper's numbers beside ours, plus the section 5.4 space-time experiment
(figure 11). The file format is in docs/system-config.md.

Several kinds of experiment are supported: ``[experiment] kind`` picks the runner
(``"token-lru"`` when absent, the format above; ``"mclustering"``: page-out clustering,
mclustering-pageout.txt section 3, in reproduce_mclustering.py; ``"gang"``: adaptive
paging for gang scheduling, gang-adaptive-paging.txt section 4, in reproduce_gang.py;
``"predictive"``: replacement by predicted page lifetime, predictive-replacement.txt
sections 4-5, in reproduce_predictive.py; ``"numa"``: page migration daemons on a
local/remote multiprocessor, numa-page-migration.txt section 5, in reproduce_numa.py).
``pagelab reproduce all``
runs every file in experiments/. Every run ends with a report.html beside its results
(report.py; ``pagelab report DIR`` rebuilds it from them).
"""

from __future__ import annotations

import copy
import json
import math
import os
import time
from pathlib import Path
from typing import List, Optional

from . import _core, api
from ._core import PagelabError
from .files import atomic_path, write_text
from .version import build_info
from .system import SimulatedTimeBar, normalize_config, read_toml, safe_name
from .timed import run_engine

#: the experiment files shipped inside the package (pagelab/experiments/*.toml)
EXPERIMENTS_DIR = Path(__file__).resolve().parent / "experiments"

#: keys of a [[pair.process]] entry that belong to the experiment, not to the engine
EXPERIMENT_PROCESS_KEYS = ("scale", "quick_params", "units")
#: policy names an experiment may list: token policies, plus load control on plain LRU
RUN_POLICIES = {
    "none": "global LRU (Linux 2.2)",
    "paper": "token-ordered LRU",
    "linux2620": "Linux 2.6.20 swap token",
    "load_control": "load control on global LRU",
}
BASELINE, TOKEN = "none", "paper"
TABLE2_KEYS = ("lru_faults", "token_faults", "lru_slowdown", "token_slowdown")


def experiment_path(name: str) -> Path:
    """The shipped experiment NAME (pagelab/experiments/NAME.toml), or NAME itself when
    it is a path to a file."""
    if name.endswith(".toml") or os.sep in name:
        return Path(name)
    path = EXPERIMENTS_DIR / f"{name}.toml"
    if not path.is_file():
        known = sorted(p.stem for p in EXPERIMENTS_DIR.glob("*.toml"))
        raise PagelabError(f"experiment '{name}': unknown (known: {', '.join(known) or 'none'}; "
                           "or give the path to an experiment file)")
    return path


def _need(cond: bool, name: str, what: str) -> None:
    if not cond:
        raise PagelabError(f"{name}: {what}")


def load_experiment(path: Path) -> dict:
    """Reads and checks an experiment file; errors are one line naming the file and key."""
    name = path.name
    data = read_toml(path)
    for key in data:
        _need(key in ("experiment", "base", "pair", "section54"), name,
              f"unknown top-level key '{key}' (expected experiment, base, pair, section54)")
    exp = data.get("experiment")
    _need(isinstance(exp, dict), name, "missing table [experiment]")
    policies = exp.get("policies", [BASELINE, TOKEN])
    _need(isinstance(policies, list) and all(isinstance(p, str) for p in policies), name,
          "experiment.policies: expected a list of policy names")
    for p in policies:
        _need(p in RUN_POLICIES, name,
              f"experiment.policies: unknown policy '{p}' (expected {', '.join(RUN_POLICIES)})")
    _need(BASELINE in policies and TOKEN in policies, name,
          f"experiment.policies: must include '{BASELINE}' and '{TOKEN}' (the two columns of Table 2)")
    scale = exp.get("quick_scale", 0.5)
    _need(isinstance(scale, (int, float)) and not isinstance(scale, bool) and 0 < scale <= 1, name,
          f"experiment.quick_scale: expected a number in (0, 1], got {scale!r}")
    base = data.get("base", {})
    _need(isinstance(base, dict) and "process" not in base, name,
          "base: expected a table of system, disk, token, load_control (no processes)")
    pairs = data.get("pair")
    _need(isinstance(pairs, list) and pairs, name, "expected at least one [[pair]]")
    for i, pair in enumerate(pairs):
        where = f"pair[{i}]"
        _need(isinstance(pair.get("name"), str), name, f"{where}.name: expected a string")
        where = f"pair '{pair['name']}'"
        procs = pair.get("process")
        _need(isinstance(procs, list) and len(procs) == 2, name,
              f"{where}: expected two [[pair.process]] entries")
        for j, p in enumerate(procs):
            _need(isinstance(p.get("name"), str), name, f"{where}.process[{j}].name: expected a string")
        mem = pair.get("memory")
        _need(isinstance(mem, (int, float)) and not isinstance(mem, bool) and 0 < mem <= 2, name,
              f"{where}.memory: expected the memory as a fraction of the pair's footprint, e.g. 0.7")
        paper = pair.get("paper", {})
        for key in TABLE2_KEYS:
            v = paper.get(key)
            _need(isinstance(v, list) and len(v) == 2, name, f"{where}.paper.{key}: expected two numbers")
    s54 = data.get("section54")
    if s54 is not None:
        _need(isinstance(s54.get("process"), list) and s54["process"], name,
              "section54: expected [[section54.process]] entries")
        for key in ("memory_units", "unit_pages"):
            _need(isinstance(s54.get(key), int) and s54[key] > 0, name,
                  f"section54.{key}: expected a positive whole number")
    return data


# ---------------------------------------------------------------- numbers

def reduction_pct(before: float, after: float) -> Optional[float]:
    """How much smaller ``after`` is than ``before``, in percent of ``before`` (negative
    when it grew: the paper's LU-2 faults, -117%). None when ``before`` is 0."""
    if not before:
        return None
    return 100.0 * (before - after) / before


def fmt_pct(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.0f}%"


def fmt_pair(values, fmt) -> str:
    return "/".join(fmt(v) for v in values)


def table2(lru_faults, token_faults, lru_slowdown, token_slowdown) -> dict:
    """The six rows of Table 2 for one pair (two values each)."""
    return {
        "lru_faults": list(lru_faults),
        "token_faults": list(token_faults),
        "fault_reduction_pct": [reduction_pct(a, b) for a, b in zip(lru_faults, token_faults)],
        "lru_slowdown": list(lru_slowdown),
        "token_slowdown": list(token_slowdown),
        "slowdown_reduction_pct": [reduction_pct(a, b) for a, b in zip(lru_slowdown, token_slowdown)],
    }


TABLE2_ROWS = [
    ("LRU page faults", "lru_faults", lambda v: f"{v:,}"),
    ("Token LRU page faults", "token_faults", lambda v: f"{v:,}"),
    ("Page fault reduction", "fault_reduction_pct", fmt_pct),
    ("LRU slowdown", "lru_slowdown", lambda v: f"{v:.2f}"),
    ("Token LRU slowdown", "token_slowdown", lambda v: f"{v:.2f}"),
    ("Slowdown reduction", "slowdown_reduction_pct", fmt_pct),
]


def table2_layout(pairs: List[dict]) -> tuple:
    """(columns, rows) of the printed Table 2: a row per quantity, for each pair a column
    with our numbers and one with the paper's, cells 'first/second' program."""
    columns = [""]
    for p in pairs:
        columns += [f"{p['name']} ours", f"{p['name']} paper"]
    rows = [["programs"] + [x for p in pairs for x in ("/".join(p["programs"]), "/".join(p["paper_programs"]))]]
    for label, key, fmt in TABLE2_ROWS:
        row = [label]
        for p in pairs:
            row.append(fmt_pair(p["ours"][key], fmt))
            row.append(fmt_pair(p["paper"][key], fmt))
        rows.append(row)
    return columns, rows


def improved(t2: dict) -> tuple:
    """(total faults reduced, summed slowdown reduced) by the token for one pair."""
    return (sum(t2["token_faults"]) < sum(t2["lru_faults"]),
            sum(t2["token_slowdown"]) < sum(t2["lru_slowdown"]))


def table_csv_rows(pairs: List[dict]) -> List[dict]:
    """table.csv: one row per (pair, program)."""
    rows = []
    for p in pairs:
        for i in range(2):
            row = {"pair": p["name"], "paper_program": p["paper_programs"][i], "program": p["programs"][i],
                   "frames": p["frames"]}
            for key in ("lru_faults", "token_faults", "fault_reduction_pct", "lru_slowdown",
                        "token_slowdown", "slowdown_reduction_pct"):
                row[key] = p["ours"][key][i]
            for key in ("lru_faults", "token_faults", "fault_reduction_pct", "lru_slowdown",
                        "token_slowdown", "slowdown_reduction_pct"):
                row["paper_" + key] = p["paper"][key][i]
            for policy, run in p["runs"].items():
                if policy in (BASELINE, TOKEN):
                    continue
                row[f"{policy}_faults"] = run["processes"][i]["major_faults"]
                row[f"{policy}_slowdown"] = run["processes"][i]["slowdown"]
            rows.append(row)
    return rows


# ---------------------------------------------------------------- configurations

def _is_power_of_two(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


def scale_value(value, factor: float):
    """A size parameter scaled for --quick: whole numbers stay whole and at least 1;
    powers of two stay powers of two (bitrev's n)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, float):
        return value * factor
    if _is_power_of_two(value):
        return max(1, 1 << max(0, round(math.log2(value * factor))))
    return max(1, int(round(value * factor)))


def engine_process(entry: dict, quick: bool, factor: float) -> dict:
    """A [[pair.process]] entry as the engine's process: experiment-only keys dropped,
    with --quick the params listed in ``scale`` scaled (``quick_params`` wins)."""
    p = {k: copy.deepcopy(v) for k, v in entry.items() if k not in EXPERIMENT_PROCESS_KEYS}
    if quick:
        params = dict(p.get("params", {}))
        for key in entry.get("scale", []):
            if key in params:
                params[key] = scale_value(params[key], factor)
        params.update(entry.get("quick_params", {}))
        p["params"] = params
    return p


def footprint_pages(process: dict, page_size: int, base_dir: Path) -> int:
    """Distinct pages a process touches (its peak memory demand when nothing is freed),
    from one pass over its references (trace_info)."""
    if "workload" in process:
        source = api.Workload(process["workload"], seed=int(process.get("seed", 0)), page_size=page_size,
                              **process.get("params", {}))
    else:
        path = Path(process["trace"])
        source = api.Trace(path if path.is_absolute() else base_dir / path, format=process.get("format"),
                           page_size=page_size)
    return int(source.info()["distinct_pages"])


def run_config(base: dict, processes: List[dict], frames: int, policy: str) -> dict:
    """The user-level configuration (as in a TOML file) of one run."""
    cfg = copy.deepcopy(base)
    cfg.setdefault("system", {})["frames"] = int(frames)
    token = cfg.setdefault("token", {})
    if policy == "load_control":
        token["policy"] = "none"
        cfg.setdefault("load_control", {})["enabled"] = True
    else:
        token["policy"] = policy
    cfg["process"] = copy.deepcopy(processes)
    return cfg


def process_summary(p: dict) -> dict:
    keys = ("name", "major_faults", "minor_faults", "page_ins", "page_outs", "token_grabs", "slowdown")
    out = {k: p[k] for k in keys}
    out.update(runtime_s=p["runtime_ns"] / 1e9, dedicated_s=p["dedicated_ns"] / 1e9,
               token_held_s=p["token_held_ns"] / 1e9, suspended_s=p["suspended_ns"] / 1e9)
    return out


def run_summary(raw: dict) -> dict:
    end = max(raw["end_ns"], 1)
    return {"end_s": raw["end_ns"] / 1e9, "cpu_utilisation": raw["cpu_busy_ns"] / end,
            "disk_utilisation": raw["disk_busy_ns"] / end,
            "processes": [process_summary(p) for p in raw["processes"]]}


# ---------------------------------------------------------------- the command

#: experiment kinds: [experiment] kind -> ("module:function" running one experiment file
#: as run(path, out_dir, quick, progress) -> exit code, "module:function" checking it)
EXPERIMENT_KINDS = {
    "token-lru": ("pagelab.reproduce:run_token_lru", "pagelab.reproduce:load_experiment"),
    "mclustering": ("pagelab.reproduce_mclustering:run_mclustering",
                    "pagelab.reproduce_mclustering:load_mclustering"),
    "gang": ("pagelab.reproduce_gang:run_gang_experiment", "pagelab.reproduce_gang:load_gang"),
    "predictive": ("pagelab.reproduce_predictive:run_predictive", "pagelab.reproduce_predictive:load_predictive"),
    "numa": ("pagelab.reproduce_numa:run_numa_experiment", "pagelab.reproduce_numa:load_numa_experiment"),
}
#: the kind of a file without [experiment] kind (the original format, token-lru.toml)
DEFAULT_KIND = "token-lru"
#: `pagelab reproduce all` runs every experiments/*.toml
ALL = "all"


def experiment_kind(path: Path) -> str:
    """The runner an experiment file asks for: ``[experiment] kind``, default token-lru."""
    data = read_toml(path)
    exp = data.get("experiment")
    kind = exp.get("kind", DEFAULT_KIND) if isinstance(exp, dict) else DEFAULT_KIND
    _need(isinstance(kind, str) and kind in EXPERIMENT_KINDS, path.name,
          f"experiment.kind: unknown kind {kind!r} (expected {', '.join(EXPERIMENT_KINDS)})")
    return kind


def _runner(kind: str, which: int = 0):
    import importlib

    module, func = EXPERIMENT_KINDS[kind][which].split(":")
    return getattr(importlib.import_module(module), func)


def all_experiments() -> List[Path]:
    """Every experiment file shipped with the package, by name."""
    paths = sorted(EXPERIMENTS_DIR.glob("*.toml"))
    if not paths:
        raise PagelabError(f"experiment '{ALL}': no experiment files in {EXPERIMENTS_DIR}")
    return paths


def run_reproduce(name: str, out_dir: Optional[str], quick: bool = False, progress=None) -> int:
    """`pagelab reproduce NAME`: one experiment file, dispatched on its kind; ``all``: every
    file in experiments/, each into OUT/<name> (default results/<name>), plus OUT/index.html.
    Each output directory gets a copy of its experiment file and a report.html (report.py)."""
    if name == ALL and not (EXPERIMENTS_DIR / f"{ALL}.toml").is_file():
        paths = all_experiments()
        kinds = [experiment_kind(p) for p in paths]
        for path, kind in zip(paths, kinds):  # every file checked before any runs
            _runner(kind, 1)(path)
        code, outs = 0, []
        for i, (path, kind) in enumerate(zip(paths, kinds)):
            if i:
                print()
            print(f"=== {path.stem} ({i + 1} of {len(paths)}) ===")
            out = os.fspath(Path(out_dir) / path.stem) if out_dir else None
            c, written = _run_one(path, kind, path.stem, out, quick, progress)
            code = max(code, c)
            outs += written
        parents = {p.parent for p in outs}
        if len(parents) == 1:
            from .report import build_index

            print(f"\nindex of the reports: {build_index(parents.pop())}")
        return code
    path = experiment_path(name)
    return _run_one(path, experiment_kind(path), name, out_dir, quick, progress)[0]


#: output directories write_outputs has written, in order: run_reproduce finds there
#: where a runner put its results (each kind has its own default) to finish them
_written: List[Path] = []


def _run_one(path: Path, kind: str, name: str, out_dir: Optional[str], quick: bool, progress) -> tuple:
    """Runs one experiment file; then, in its output directory, a verbatim copy of the
    file (experiment.toml), how it was run (summary.json's "reproduce"), and report.html.
    (exit code, [output directory] or [] when the runner wrote nothing)."""
    import datetime
    import shlex

    from .report import build_report

    start = len(_written)
    code = _runner(kind)(path, out_dir, quick, progress)
    if len(_written) == start:
        return code, []
    out = _written[-1]
    with atomic_path(out / "experiment.toml") as tmp:  # verbatim, byte for byte
        tmp.write_bytes(path.read_bytes())
    summary = json.loads((out / "summary.json").read_text())
    summary["reproduce"] = {
        "command": shlex.join(["pagelab", "reproduce", name] + (["--quick"] if quick else [])
                              + ["--out", os.fspath(out)]),
        "experiment_file": os.fspath(path), "kind": kind, "quick": quick,
        "pagelab_version": build_info()["pagelab"], "engine_version": _core.ENGINE_VERSION,
        "git_commit": build_info()["commit"],
        "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
    }
    write_text(out / "summary.json", json.dumps(summary, indent=2))
    print(f"report: {build_report(out)}")
    return code, [out]


def write_outputs(out: Path, summary: dict, table_rows: List[dict], runs: dict, started: float) -> None:
    """The files every experiment writes, each whole or not at all: every run's full
    result under runs/ (to plot again or inspect), table.csv, and summary.json with the
    wall time since ``started``."""
    import pandas as pd

    for name, raw in runs.items():
        write_text(out / "runs" / f"{name}.json", json.dumps(raw))
    with atomic_path(out / "table.csv") as tmp:
        pd.DataFrame(table_rows).to_csv(tmp, index=False)
    summary["seconds"] = round(time.perf_counter() - started, 2)
    write_text(out / "summary.json", json.dumps(summary, indent=2))
    _written.append(out)


def run_token_lru(path: Path, out_dir: Optional[str], quick: bool = False, progress=None) -> int:
    """token-ordered-lru.txt section 6 (Table 2) and section 5.4 (figure 11)."""
    from .console import print_table
    from .figures.memory import plot_pair, plot_space_time_pair

    exp_file = path.name
    data = load_experiment(path)
    exp = data["experiment"]
    policies = list(exp.get("policies", [BASELINE, TOKEN]))
    factor = float(exp.get("quick_scale", 0.5)) if quick else 1.0
    base = data.get("base", {})
    base_dir = path.resolve().parent
    page_size = int(base.get("system", {}).get("page_size", 4096))
    out = Path(out_dir or f"results/{path.stem}")
    started = time.perf_counter()

    pairs, runs_raw, figures = [], {}, []
    for pair in data["pair"]:
        label = pair["name"]
        procs = [engine_process(p, quick, factor) for p in pair["process"]]
        try:
            sizes = [footprint_pages(p, page_size, base_dir) for p in procs]
        except PagelabError as err:
            raise PagelabError(f"{exp_file}: pair '{label}': {err}") from None
        frames = max(1, int(round(pair["memory"] * sum(sizes))))
        runs = {}
        for policy in policies:
            cfg = normalize_config(run_config(base, procs, frames, policy), f"{exp_file}: pair '{label}'",
                                   base_dir)
            with SimulatedTimeBar(f"{label} {policy}", enabled=progress) as bar:
                result = run_engine(cfg, f"{exp_file}: pair '{label}' ({policy})", bar)
            runs[policy] = result.raw
        names = [p["name"] for p in procs]
        lru = [next(p for p in runs[BASELINE]["processes"] if p["name"] == n) for n in names]
        tok = [next(p for p in runs[TOKEN]["processes"] if p["name"] == n) for n in names]
        ours = table2([p["major_faults"] for p in lru], [p["major_faults"] for p in tok],
                      [p["slowdown"] for p in lru], [p["slowdown"] for p in tok])
        paper = table2(*(pair["paper"][k] for k in TABLE2_KEYS))
        for key in ("fault_reduction_pct", "slowdown_reduction_pct"):  # as printed, if given
            paper[key] = list(pair["paper"].get(key, paper[key]))
        faults_down, slowdown_down = improved(ours)
        fig = f"pair-{safe_name(label)}.png"
        plot_pair([(RUN_POLICIES[p], runs[p]) for p in (BASELINE, TOKEN)], names, out / fig,
                  title=f"{label} (paper: {pair.get('paper_programs', label)}): {frames:,} frames = "
                        f"{pair['memory']:.0%} of {sum(sizes):,} pages")
        figures.append(fig)
        runs_raw[label] = runs
        pairs.append({
            "name": label, "paper_programs": _programs(pair.get("paper_programs", label)),
            "programs": names, "footprint_pages": sizes, "memory": pair["memory"], "frames": frames,
            "processes": procs, "ours": ours, "paper": paper,
            "faults_reduced": faults_down, "slowdown_reduced": slowdown_down,
            "runs": {p: run_summary(r) for p, r in runs.items()}, "figure": fig,
        })

    section54 = None
    if "section54" in data:
        section54 = _run_section54(data["section54"], base, base_dir, exp_file, quick, factor, out,
                                   progress, plot_space_time_pair)
        figures += section54["figures"]

    need = int(exp.get("acceptance_pairs", len(pairs)))
    faults_n = sum(p["faults_reduced"] for p in pairs)
    slowdown_n = sum(p["slowdown_reduced"] for p in pairs)
    both_n = sum(p["faults_reduced"] and p["slowdown_reduced"] for p in pairs)
    summary = {
        "experiment": exp.get("name", path.stem), "paper": exp.get("paper"), "claim": exp.get("claim"),
        "engine_version": _core.ENGINE_VERSION, "quick": quick, "scale": factor, "policies": policies,
        "pairs": pairs,
        "faults_reduced_pairs": faults_n, "slowdown_reduced_pairs": slowdown_n, "improved_pairs": both_n,
        "acceptance": {"required_pairs": need, "met": both_n >= need,
                       "rule": "the token reduces total faults and summed slowdown of a pair"},
        "section54": section54, "figures": figures,
    }
    write_outputs(out, summary, table_csv_rows(pairs),
                  {f"{safe_name(label)}-{policy}": raw for label, runs in runs_raw.items()
                   for policy, raw in runs.items()}, started)

    columns, rows = table2_layout(pairs)
    print_table(f"{summary['experiment']}: Table 2 of {exp.get('paper', '')}, ours beside the paper's "
                "(first/second program)", columns, rows)
    extra = [p for p in policies if p not in (BASELINE, TOKEN)]
    if extra:
        erows = []
        for p in pairs:
            for policy in extra:
                procs = p["runs"][policy]["processes"]
                erows.append([p["name"], RUN_POLICIES[policy],
                              "/".join(f"{q['major_faults']:,}" for q in procs),
                              "/".join(f"{q['slowdown']:.2f}" for q in procs)])
        print_table("other policies", ["pair", "policy", "page faults", "slowdown"], erows)
    n = len(pairs)
    print(f"\ntoken reduced total faults on {faults_n} of {n} pairs, summed slowdown on {slowdown_n} of {n}, "
          f"both on {both_n} of {n} (required: {need}): {'met' if both_n >= need else 'NOT met'}")
    if section54:
        print(f"section 5.4: {section54['description']}")
    print(f"results in {out}/: summary.json, table.csv, {len(figures)} figures, runs/*.json "
          f"({summary['seconds']} s)")
    return 0


def _programs(value) -> list:
    if isinstance(value, str):
        return value.split("/")
    return list(value)


def _run_section54(s54: dict, base: dict, base_dir: Path, exp_file: str, quick: bool, factor: float,
                   out: Path, progress, plot_space_time_pair) -> dict:
    """Section 5.4: two shrinking loops of ``units`` each on ``memory_units`` of memory,
    a unit being ``unit_pages`` pages (the paper's MB), with space-time recording."""
    unit_pages = max(1, int(round(s54["unit_pages"] * (factor if quick else 1.0))))
    frames = s54["memory_units"] * unit_pages
    procs = []
    for entry in s54["process"]:
        p = {k: copy.deepcopy(v) for k, v in entry.items() if k not in EXPERIMENT_PROCESS_KEYS}
        params = dict(p.get("params", {}))
        if "units" in entry:
            params["pages"] = int(entry["units"]) * unit_pages
        p["params"] = params
        procs.append(p)
    cfg_base = copy.deepcopy(base)
    sysc = cfg_base.setdefault("system", {})
    sysc["space_time"] = True
    for key in ("sample_ms", "space_time_buckets"):
        if key in s54:
            sysc[key] = s54[key]
    figures, runs = [], {}
    for policy in s54.get("policies", [TOKEN]):
        where = f"{exp_file}: section54"
        cfg = normalize_config(run_config(cfg_base, procs, frames, policy), where, base_dir)
        with SimulatedTimeBar(f"section 5.4 {policy}", enabled=progress) as bar:
            result = run_engine(cfg, f"{where} ({policy})", bar)
        st = result.space_time
        fig = f"space-time-section54-{policy}.png"
        plot_space_time_pair([st[p["name"]] for p in procs if p["name"] in st], out / fig,
                             title=f"section 5.4 under {RUN_POLICIES.get(policy, policy)}: "
                                   f"{' and '.join(str(e.get('units', '?')) for e in s54['process'])} "
                                   f"units on {s54['memory_units']} units ({unit_pages} pages each)")
        write_text(out / "runs" / f"section54-{policy}.json", json.dumps(result.raw))
        figures.append(fig)
        runs[policy] = run_summary(result.raw)
    desc = "; ".join(f"{RUN_POLICIES.get(pol, pol)}: " + ", ".join(
        f"{q['name']} {q['runtime_s']:.1f} s, {q['major_faults']:,} faults" for q in r["processes"])
        for pol, r in runs.items())
    return {"frames": frames, "unit_pages": unit_pages, "runs": runs, "figures": figures, "description": desc}
