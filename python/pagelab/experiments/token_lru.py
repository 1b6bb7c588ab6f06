"""token-ordered-lru.txt (Jiang and Zhang, Performance Evaluation 2005): Table 2 (five
program pairs under global LRU and the token-ordered LRU, faults and slowdowns), the
interactions of figures 6-16, and the section 5.4 space-time experiment (figure 11).

Every pair runs under each policy of ``[setup] policies`` (global LRU as in Linux 2.2
is "none", the token-ordered LRU "paper"; the Linux 2.6.20 swap token and load control
are there to compare), on memory that is ``memory`` times the pair's summed footprint.
The measures are per program, keyed "PAIR: PROGRAM" in Table 2's order, so that a claim
can compare them with the paper's numbers position by position. Beside each program's
pair results stands its stand-in's exact LRU fault curve alone (major faults at half the
pair's frames and at 25-100% of its footprint; ``common.lru_faults_alone``), so that what
a pair does to a program can be told from what the program does by itself (issue 15)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Dict, List

import pandas as pd

from .._core import PagelabError
from ..figures.memory import plot_pair, plot_space_time_pair
from ..system import normalize_config, safe_name
from .common import (base_table, engine_process, fmt_pct, footprint_pages, lru_faults_alone, process_by_name,
                     process_fields, reduction_pct)
from .protocol import Analysis, Point, Results, Spec, View
from .schema import ArrayOf, Field, Int, List_, Number, Str, Table

#: policy name -> (what it is, how a run sets it)
RUN_POLICIES = {
    "none": "global LRU (Linux 2.2)",
    "paper": "token-ordered LRU",
    "linux2620": "Linux 2.6.20 swap token",
    "load_control": "load control on global LRU",
}
BASELINE, TOKEN = "none", "paper"
#: sizes, in % of a program's footprint, at which its LRU fault curve alone is reported
CURVE_PCTS = (25, 50, 75, 100)
TABLE2_KEYS = ("lru_faults", "token_faults", "fault_reduction_pct", "lru_slowdown", "token_slowdown",
               "slowdown_reduction_pct")

_TWO = List_(Number(), min_len=2, max_len=2)
PAIR = Table({
    "name": Field(Str(), doc="the pair, as Table 2 names it"),
    "paper_programs": Field(Str(), doc="the paper's two programs, 'first/second'"),
    "group": Field(Str(nonempty=False), "", "which interaction type (section 4.2)"),
    "memory": Field(Number(above=0, max=2), doc="frames as a fraction of the pair's summed footprint"),
    "paper": Field(Table({k: Field(_TWO) for k in TABLE2_KEYS}), doc="Table 2's numbers, as printed"),
    "process": Field(ArrayOf(Table(process_fields()), min_len=2), doc="the two programs"),
})
SECTION54 = Table({
    "memory_units": Field(Int(min=1), doc="memory in units (the paper's MB)"),
    "unit_pages": Field(Int(min=1), doc="pages a unit (scaled by quick_scale with --quick)"),
    "policies": Field(List_(Str(choices=tuple(RUN_POLICIES)), min_len=1), [TOKEN]),
    "sample_ms": Field(Number(above=0), None, "the space-time interval"),
    "space_time_buckets": Field(Int(min=1, max=4096), None),
    "process": Field(ArrayOf(Table(process_fields({"units": Field(Int(min=1), doc="its data, in units")})),
                             min_len=1)),
})
TABLES = {
    "setup": Field(Table({
        "policies": Field(List_(Str(choices=tuple(RUN_POLICIES)), min_len=2), [BASELINE, TOKEN, "linux2620",
                                                                                 "load_control"],
                          "policies each pair runs under; must include none and paper"),
    }), {}),
    "base": Field(base_table("system", "disk", "token", "load_control", "swap"), {},
                  "engine tables under every run; system.frames and token.policy are set per run"),
    "pair": Field(ArrayOf(PAIR, min_len=1), doc="Table 2's pairs"),
    "section54": Field(SECTION54, None, "section 5.4's two shrinking loops (figure 11)"),
}
MEASURES = {
    "program_fault_reduction_pct": "fault reduction by the token, per program ('PAIR: PROGRAM'), %",
    "program_slowdown_reduction_pct": "slowdown reduction by the token, per program, %",
    "program_lru_slowdown": "slowdown under global LRU, per program",
    "program_token_slowdown": "slowdown under the token, per program",
    "pair_fault_reduction_pct": "reduction of a pair's total faults, %",
    "pair_slowdown_reduction_pct": "reduction of a pair's summed slowdown, %",
    "token_grabs": "times the token was taken during a pair's token run",
    "s54_small_runtime_reduction_pct": "section 5.4: the small loop's run time, token against global LRU, %",
    "s54_large_runtime_reduction_pct": "section 5.4: the large loop's run time, token against global LRU, %",
}


def check(spec: Spec) -> None:
    policies = spec.table("setup")["policies"]
    if BASELINE not in policies or TOKEN not in policies:
        raise PagelabError(f"{spec.path.name}: setup.policies: must include '{BASELINE}' and '{TOKEN}' "
                           "(the two columns of Table 2)")


# ---------------------------------------------------------------- the runs

def run_config(base: dict, processes: List[dict], frames: int, policy: str) -> dict:
    """The configuration (as in a TOML file) of one run."""
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


def _pairs(spec: Spec) -> List[dict]:
    """Per pair: its engine processes, their footprints and the frames it runs on."""
    base = spec.table("base")
    page_size = int(base.get("system", {}).get("page_size", 4096))
    out = []
    for pair in spec.table("pair"):
        procs = [engine_process(p, spec.scale) for p in pair["process"]]
        sizes = [footprint_pages(p, page_size, spec.path.parent) for p in procs]
        out.append({"pair": pair, "processes": procs, "sizes": sizes,
                    "frames": max(1, int(round(pair["memory"] * sum(sizes))))})
    return out


def _section54(spec: Spec) -> dict:
    s54 = spec.table("section54")
    unit_pages = max(1, int(round(s54["unit_pages"] * spec.scale)))
    procs = []
    for entry in s54["process"]:
        p = engine_process(entry)
        p["params"] = dict(p.get("params", {}), pages=entry["units"] * unit_pages)
        procs.append(p)
    base = copy.deepcopy(spec.table("base"))
    system = base.setdefault("system", {})
    system["space_time"] = True
    for key in ("sample_ms", "space_time_buckets"):
        if s54.get(key) is not None:
            system[key] = s54[key]
    return {"base": base, "processes": procs, "frames": s54["memory_units"] * unit_pages, "unit_pages": unit_pages}


def points(spec: Spec) -> List[Point]:
    base_dir = spec.path.resolve().parent
    out = []
    for p in _pairs(spec):
        name = p["pair"]["name"]
        for policy in spec.table("setup")["policies"]:
            cfg = run_config(spec.table("base"), p["processes"], p["frames"], policy)
            out.append(Point(f"{name} | {policy}", "system",
                             normalize_config(cfg, f"{spec.path.name}: pair '{name}'", base_dir)))
    if spec.table("section54") is not None:
        s = _section54(spec)
        for policy in spec.table("section54")["policies"]:
            cfg = run_config(s["base"], s["processes"], s["frames"], policy)
            out.append(Point(f"section54 | {policy}", "system",
                             normalize_config(cfg, f"{spec.path.name}: section54", base_dir)))
    return out


# ---------------------------------------------------------------- the analysis

def analyse(spec: Spec, results: Results) -> Analysis:
    policies = spec.table("setup")["policies"]
    m: Dict[str, dict] = {k: {} for k in MEASURES if not k.startswith("s54")}
    rows, views_t2, views_other, views_curves = [], [], [], []
    page_size = int(spec.table("base").get("system", {}).get("page_size", 4096))
    for p in _pairs(spec):
        pair = p["pair"]
        name = pair["name"]
        runs = {pol: results.full(f"{name} | {pol}") for pol in policies}
        programs = [q["name"] for q in p["processes"]]
        paper_programs = pair["paper_programs"].split("/")
        lru = [process_by_name(runs[BASELINE], n) for n in programs]
        tok = [process_by_name(runs[TOKEN], n) for n in programs]
        for i, n in enumerate(programs):
            label = f"{name}: {paper_programs[i] if i < len(paper_programs) else n}"
            fr = reduction_pct(lru[i]["major_faults"], tok[i]["major_faults"])
            sr = reduction_pct(lru[i]["slowdown"], tok[i]["slowdown"])
            m["program_fault_reduction_pct"][label] = fr
            m["program_slowdown_reduction_pct"][label] = sr
            m["program_lru_slowdown"][label] = lru[i]["slowdown"]
            m["program_token_slowdown"][label] = tok[i]["slowdown"]
            row = {"pair": name, "paper_program": label.split(": ", 1)[1], "program": n, "frames": p["frames"],
                   "footprint_pages": p["sizes"][i], "lru_faults": lru[i]["major_faults"],
                   "token_faults": tok[i]["major_faults"], "fault_reduction_pct": fr,
                   "lru_slowdown": lru[i]["slowdown"], "token_slowdown": tok[i]["slowdown"],
                   "slowdown_reduction_pct": sr}
            for key in TABLE2_KEYS:
                row[f"paper_{key}"] = pair["paper"][key][i]
            for pol in policies:
                if pol not in (BASELINE, TOKEN):
                    q = process_by_name(runs[pol], n)
                    row[f"{pol}_faults"] = q["major_faults"]
                    row[f"{pol}_slowdown"] = q["slowdown"]
            # the stand-in alone under LRU: at half the pair's frames (an equal split), and
            # at fractions of its own footprint (issue 15)
            sizes = [p["frames"] // 2] + [p["sizes"][i] * f // 100 for f in CURVE_PCTS]
            alone = lru_faults_alone(p["processes"][i], page_size, spec.path.resolve().parent, sizes)
            row["alone_lru_faults_half_frames"] = alone[0]
            for f, v in zip(CURVE_PCTS, alone[1:]):
                row[f"alone_lru_faults_{f}pct"] = v
            views_curves.append([name, row["paper_program"], f"{n} ({p['processes'][i].get('workload', 'trace')})",
                                 f"{p['sizes'][i]:,}", f"{lru[i]['major_faults']:,}", f"{alone[0]:,}"]
                                + [f"{v:,}" for v in alone[1:]])
            rows.append(row)
            views_t2.append([name, row["paper_program"], f"{row['lru_faults']:,}", f"{pair['paper']['lru_faults'][i]:,.0f}",
                             f"{row['token_faults']:,}", f"{pair['paper']['token_faults'][i]:,.0f}",
                             fmt_pct(fr), fmt_pct(pair["paper"]["fault_reduction_pct"][i]),
                             f"{row['lru_slowdown']:.2f}", f"{pair['paper']['lru_slowdown'][i]:.2f}",
                             f"{row['token_slowdown']:.2f}", f"{pair['paper']['token_slowdown'][i]:.2f}",
                             fmt_pct(sr), fmt_pct(pair["paper"]["slowdown_reduction_pct"][i])])
            for pol in policies:
                if pol not in (BASELINE, TOKEN):
                    views_other.append([name, row["paper_program"], RUN_POLICIES[pol],
                                        f"{row[f'{pol}_faults']:,}", f"{row[f'{pol}_slowdown']:.2f}"])
        m["pair_fault_reduction_pct"][name] = reduction_pct(sum(q["major_faults"] for q in lru),
                                                           sum(q["major_faults"] for q in tok))
        m["pair_slowdown_reduction_pct"][name] = reduction_pct(sum(q["slowdown"] for q in lru),
                                                              sum(q["slowdown"] for q in tok))
        m["token_grabs"][name] = sum(q["token_grabs"] for q in tok)
    views = [View("Table 2: ours beside the paper's (faults are major faults; slowdown = run time / run time alone)",
                  ["pair", "program", "LRU faults", "paper", "token faults", "paper", "fault reduction", "paper",
                   "LRU slowdown", "paper", "token slowdown", "paper", "slowdown reduction", "paper"],
                  views_t2, readme=True)]
    if views_other:
        views.append(View("the other policies", ["pair", "program", "policy", "faults", "slowdown"], views_other))
    views.append(View("each stand-in alone under LRU (major faults from its exact LRU fault curve), beside its "
                      "LRU faults in the pair",
                      ["pair", "program", "stand-in", "footprint", "LRU faults in the pair", "alone, half the frames"]
                      + [f"alone, {f}% of footprint" for f in CURVE_PCTS], views_curves))
    lines, summary = [], {"pairs": [{"name": p["pair"]["name"], "frames": p["frames"], "footprints": p["sizes"]}
                                    for p in _pairs(spec)]}
    if spec.table("section54") is not None:
        s = _section54(spec)
        runs = {pol: results.full(f"section54 | {pol}") for pol in spec.table("section54")["policies"]}
        for pol, raw in runs.items():
            lines.append(f"section 5.4 under {RUN_POLICIES[pol]}: " + ", ".join(
                f"{q['name']} {q['runtime_ns'] / 1e9:,.1f} s with {q['major_faults']:,} faults"
                for q in raw["processes"]))
        if BASELINE in runs and TOKEN in runs:
            names = [q["name"] for q in s["processes"]]
            red = [reduction_pct(process_by_name(runs[BASELINE], n)["runtime_ns"],
                                 process_by_name(runs[TOKEN], n)["runtime_ns"]) for n in names]
            m["s54_small_runtime_reduction_pct"] = red[0]
            m["s54_large_runtime_reduction_pct"] = red[-1]
        summary["section54"] = {"frames": s["frames"], "unit_pages": s["unit_pages"]}
    return Analysis(measures=m, tables={"table": pd.DataFrame(rows)}, views=views, lines=lines, summary=summary)


# ---------------------------------------------------------------- the figures

def figures(spec: Spec, analysis: Analysis, results: Results, out: Path) -> List[str]:
    """Per pair, the memory-time graphs of both programs under global LRU and the token
    (figures 6-10 against 12-16); section 5.4's space-time graphs (figure 11)."""
    written = []
    for p in _pairs(spec):
        name = p["pair"]["name"]
        names = [q["name"] for q in p["processes"]]
        fig = f"pair-{safe_name(name)}.png"
        plot_pair([(RUN_POLICIES[pol], results.full(f"{name} | {pol}")) for pol in (BASELINE, TOKEN)], names,
                  out / fig, title=f"{name} (paper: {p['pair']['paper_programs']}): {p['frames']:,} frames = "
                                   f"{p['pair']['memory']:.0%} of {sum(p['sizes']):,} pages")
        written.append(fig)
    if spec.table("section54") is not None:
        s54 = spec.table("section54")
        s = _section54(spec)
        for pol in s54["policies"]:
            st = {e["process"]: e for e in results.full(f"section54 | {pol}").get("space_time") or []}
            fig = f"space-time-section54-{pol}.png"
            plot_space_time_pair([st[q["name"]] for q in s["processes"] if q["name"] in st], out / fig,
                                 title=f"section 5.4 under {RUN_POLICIES[pol]}: "
                                       f"{' and '.join(str(e['units']) for e in s54['process'])} units on "
                                       f"{s54['memory_units']} units ({s['unit_pages']} pages each)")
            written.append(fig)
    return written
