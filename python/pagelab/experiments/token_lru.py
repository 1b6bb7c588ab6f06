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
a pair does to a program can be told from what the program does by itself (issue 15).

On the kernel (``reproduce token-lru --on kernel``, :data:`KERNEL`): the same pairs as
real processes in a memory cgroup of the same fraction of their footprint, under the
kernel's own reclaim ("none"), the token controller and load control
(docs/kernel.md), each stand-in performed by pagelab-runner at the sizes and CPU costs
of the file's ``[kernel]`` table, and the ``[[kernel.pair]]`` pairs with real programs
(gcc, sort) on inputs generated into a temporary directory."""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import os
import random
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

import pandas as pd

from .._core import PagelabError
from ..figures.memory import plot_pair, plot_space_time_pair
from ..system import normalize_config, safe_name
from .. import api
from ..files import write_text
from ..kernel.host import is_root, swap_devices
from .common import (base_table, engine_process, fmt_pct, footprint_pages, lru_faults_alone, process_by_name,
                     process_fields, reduction_pct)
from .protocol import Analysis, Point, Results, Spec, View
from .schema import AnyTable, ArrayOf, Field, Int, List_, Number, Str, Table

#: policy name -> (what it is, how a run sets it)
RUN_POLICIES = {
    "none": "global LRU (Linux 2.2)",
    "paper": "token-ordered LRU",
    "linux2620": "Linux 2.6.20 swap token",
    "load_control": "load control on global LRU",
}
#: the same on the kernel (docs/kernel.md)
KERNEL_RUN_POLICIES = {
    "none": "the kernel's own reclaim",
    "paper": "token controller",
    "load_control": "load control (SIGSTOP)",
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
#: the policies the kernel runs (linux2620's protection is per page inside the kernel's
#: reclaim: the kernel backend refuses it)
KERNEL_POLICIES = ("none", "paper", "load_control")
#: what reproduce --on kernel measures (protocol.py: an experiment with a kernel version)
KERNEL = ("Table 2's pairs (and section 5.4's loops) as real processes sharing a memory cgroup of the same "
          "fraction of their footprint, with this machine's swap: the kernel's own reclaim, the token controller "
          "(the holder's faults make the others' cgroups give up memory) and load control (SIGSTOP), plus pairs "
          "with real programs (gcc, sort); faults are the processes' major faults, slowdowns are against each "
          "one run alone")
_INPUT_KINDS = ("c-source", "text")
KERNEL_PROCESS = Table(dict(process_fields(), **{
    "workload": Field(Str(), None, "a built-in workload performed by pagelab-runner (or command)"),
    "command": Field(List_(Str(), min_len=1), None, "a real program: its command line; '{input}' is the generated "
                                                     "input's path"),
    "input": Field(AnyTable("an input table: { kind = \"c-source\" | \"text\", ... }"), None,
                   "the command's input, generated deterministically (c-source: functions, statements, seed; "
                   "text: mb, seed)"),
    "footprint_mb": Field(Number(above=0), None, "a command's memory alone (its peak, measured): frames are a "
                                                 "fraction of the pair's summed footprint"),
}))
KERNEL_PAIR = Table({
    "name": Field(Str(), doc="the pair"),
    "paper_programs": Field(Str(), doc="the paper's two programs it stands for, 'first/second'"),
    "like": Field(Str(), doc="the Table 2 pair whose paper numbers it stands beside"),
    "memory": Field(Number(above=0, max=2), doc="frames as a fraction of the pair's summed footprint"),
    "process": Field(ArrayOf(KERNEL_PROCESS, min_len=2), doc="the two programs"),
})
KERNEL_TABLE = Table({
    "policies": Field(List_(Str(choices=KERNEL_POLICIES), min_len=2), list(KERNEL_POLICIES),
                      "the policies each pair runs under on the kernel; must include none and paper"),
    "size_scale": Field(Number(above=0), 8.0, "each stand-in's footprint on the kernel, times the simulator's"),
    "cpu_scale": Field(Number(min=0), 0.01, "CPU per reference on the kernel, times the simulator's"),
    "max_alone_s": Field(Number(above=0), 8.0, "a stand-in whose run alone would take longer (estimated) gets less "
                                               "CPU per reference, down to none"),
    "record_ns": Field(Number(min=0), 80.0, "pagelab-runner's own time per record (for that estimate)"),
    "runner_own_mb": Field(Number(min=0), 1.0, "memory added to a pair's limit per pagelab-runner process "
                                               "(the runner's own data, which the simulator has not)"),
    "repeats": Field(Int(min=1, max=100), 3, "repetitions of each run (medians)"),
    "quick_repeats": Field(Int(min=1, max=100), 1, "repetitions with --quick"),
    "cpus": Field(List_(Int(min=0), min_len=1), None, "the CPUs the processes run on ([kernel] cpus)"),
    "disk": Field(AnyTable("a [disk] table"), None, "this machine's swap device as the simulator's [disk] "
                                                   "(pagelab kernel probe): the token's abuse limit comes from it"),
    "load_control": Field(AnyTable("a [load_control] table"), None, "load control's thresholds on this machine"),
    "pair": Field(ArrayOf(KERNEL_PAIR), [], "kernel-only pairs with real programs"),
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
    "kernel": Field(KERNEL_TABLE, None, "reproduce --on kernel: sizes, CPU costs, repetitions and the real-program "
                                        "pairs"),
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
    k = spec.table("kernel")
    if spec.on == "kernel" and k is None:
        raise PagelabError(f"{spec.path.name}: kernel: missing; reproduce --on kernel needs the [kernel] table "
                           "(sizes and CPU costs on this machine)")
    if k is None:
        return
    if BASELINE not in k["policies"] or TOKEN not in k["policies"]:
        raise PagelabError(f"{spec.path.name}: kernel.policies: must include '{BASELINE}' and '{TOKEN}'")
    for i, pair in enumerate(k["pair"]):
        if pair["like"] not in [p["name"] for p in spec.table("pair")]:
            raise PagelabError(f"{spec.path.name}: kernel.pair[{i}].like: expected one of the pairs' names, got "
                               f"{pair['like']!r}")
        for j, proc in enumerate(pair["process"]):
            where = f"{spec.path.name}: kernel.pair[{i}].process[{j}]"
            if (proc.get("workload") is None) == (proc.get("command") is None):
                raise PagelabError(f"{where}: expected exactly one of workload and command")
            if proc.get("command") is not None and proc.get("footprint_mb") is None:
                raise PagelabError(f"{where}.footprint_mb: missing; a command's frames share needs its "
                                   "measured memory")
            if proc.get("input") is not None:
                _check_input(proc["input"], f"{where}.input")


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
    if spec.on == "kernel":
        return _kernel_points(spec)
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


# ---------------------------------------------------------------- on the kernel

def _labels(spec: Spec) -> Dict[str, str]:
    """What each policy is, in tables and figures: on the kernel the baseline is the
    kernel's own reclaim, the others are controllers."""
    return KERNEL_RUN_POLICIES if spec.on == "kernel" else RUN_POLICIES


def _policies(spec: Spec) -> List[str]:
    return spec.table("kernel")["policies"] if spec.on == "kernel" else spec.table("setup")["policies"]


def _s54_policies(spec: Spec) -> List[str]:
    pols = spec.table("section54")["policies"]
    return [p for p in pols if p in spec.table("kernel")["policies"]] if spec.on == "kernel" else pols


def _check_input(table: dict, where: str) -> None:
    kind = table.get("kind")
    if kind not in _INPUT_KINDS:
        raise PagelabError(f"{where}.kind: expected one of {', '.join(repr(k) for k in _INPUT_KINDS)}, got {kind!r}")
    keys = {"c-source": ("functions", "statements", "seed"), "text": ("mb", "seed")}[kind]
    for key, value in table.items():
        if key == "kind":
            continue
        if key not in keys:
            raise PagelabError(f"{where}.{key}: unknown key for kind {kind!r} (expected {', '.join(keys)})")
        low = 0 if key == "seed" else 1
        if not isinstance(value, int) or isinstance(value, bool) or value < low or value > 10_000:
            raise PagelabError(f"{where}.{key}: expected a whole number from {low} to 10000, got {value!r}")
    for key in keys:
        if key != "seed" and key not in table:
            raise PagelabError(f"{where}.{key}: missing; expected a whole number")


def _c_source(functions: int, statements: int, seed: int) -> str:
    """A C file of ``functions`` functions of ``statements`` statements each, with a
    branch apiece: gcc -O2's memory grows with a function's size and drops between
    functions (its garbage collector), the paper's type 3 (non-regular demand)."""
    r = random.Random(seed)
    out = ["volatile int sink;"]
    for k in range(functions):
        out.append(f"int f{k}(int *a, int n) {{\n  int s = 0;")
        for i in range(statements):
            x, y, z = r.randrange(64), r.randrange(64), r.randrange(1, 9)
            out.append(f"  s += a[{x}] * {z} + (a[{y}] >> {z % 5}); if (s & {1 << (i % 12)}) a[{(x + y) % 64}] ^= s;")
        out.append("  return s;\n}")
    return "\n".join(out) + "\n"


def _text(mb: int, seed: int) -> str:
    """``mb`` MiB of lines of 8 words drawn from 5,000 random words (sort's input)."""
    r = random.Random(seed)
    words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(3, 9))) for _ in range(5000)]
    lines, n = [], 0
    while n < mb << 20:
        line = " ".join(r.choice(words) for _ in range(8))
        lines.append(line)
        n += len(line) + 1
    return "\n".join(lines) + "\n"


def input_file(table: dict) -> Path:
    """The generated input ``table`` describes, in a temporary directory: its name is a
    hash of the table, so a point's configuration (and its stored result) is the same
    every run; it is generated once, the same bytes every time."""
    key = json.dumps(table, sort_keys=True)
    name = f"{table['kind']}-{hashlib.sha256(key.encode()).hexdigest()[:16]}" + \
        (".c" if table["kind"] == "c-source" else ".txt")
    path = Path(tempfile.gettempdir()) / "pagelab-inputs" / name
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        seed = int(table.get("seed", 0))
        text = _c_source(table["functions"], table["statements"], seed) if table["kind"] == "c-source" else \
            _text(table["mb"], seed)
        write_text(path, text)
    return path


@functools.lru_cache(maxsize=64)
def _info(key: str) -> dict:
    spec = json.loads(key)
    return api.Workload(spec["workload"], seed=spec["seed"], page_size=spec["page_size"], **spec["params"]).info()


def _workload_info(proc: dict, page_size: int) -> dict:
    return _info(json.dumps({"workload": proc["workload"], "seed": int(proc.get("seed") or 0),
                             "page_size": page_size, "params": proc.get("params", {})}, sort_keys=True))


def _growth(entry: dict, scale: float, page_size: int) -> float:
    """How a stand-in's footprint grows with its ``scale`` parameters: pages ~ factor^e,
    e from its footprints at ``scale`` and twice it (1 for a table's pages or bit-r's n,
    2 for LU's matrix order)."""
    if not entry.get("scale"):
        return 1.0
    a = _workload_info(engine_process(entry, scale), page_size)["distinct_pages"]
    b = _workload_info(engine_process(entry, 2 * scale), page_size)["distinct_pages"]
    return min(3.0, max(0.5, math.log(b / a, 2))) if a > 0 and b > a else 1.0


def _kernel_process(entry: dict, spec: Spec, page_size: int, base_dir: Path) -> dict:
    """One program on the kernel: its configuration entry, footprint (pages) and how it
    was scaled. A stand-in: its ``scale`` parameters grown so that its footprint is
    ``size_scale`` times the simulator's, its CPU per reference ``cpu_scale`` times the
    simulator's, or less where its run alone would take longer than ``max_alone_s``
    (estimated: references x CPU + records x ``record_ns``; spec-gzip and LU, tens of
    thousands of references a page, whose records alone take longer, run with none). A
    command: as given, ``{input}`` its generated input, its footprint the measured
    ``footprint_mb``."""
    k = spec.table("kernel")
    if entry.get("command") is not None:
        cmd = list(entry["command"])
        if entry.get("input") is not None:
            path = os.fspath(input_file(entry["input"]))
            cmd = [a.replace("{input}", path) for a in cmd]
        proc = {"name": entry["name"], "command": cmd}
        if entry.get("start_ms") is not None:
            proc["start_ms"] = entry["start_ms"]
        return {"process": proc, "footprint": int(round(entry["footprint_mb"] * 2**20 / page_size)),
                "runner": False, "kind": "command"}
    plain = {key: v for key, v in entry.items() if key not in ("command", "input", "footprint_mb")}
    e_pages = _growth(plain, spec.scale, page_size)
    factor = spec.scale * k["size_scale"] ** (1.0 / e_pages)
    proc = engine_process(plain, factor)
    info = _workload_info(proc, page_size)
    budget_ns = k["max_alone_s"] * 1e9
    base_cpu = float(spec.table("base").get("system", {}).get("cpu_ns_per_ref", 20.0))
    cpu = float(entry.get("cpu_ns_per_ref") if entry.get("cpu_ns_per_ref") is not None else base_cpu) * k["cpu_scale"]
    refs, records = int(info["references"]), int(info["records"])
    capped = refs * cpu + records * k["record_ns"] > budget_ns
    if capped:
        cpu = max(0.0, (budget_ns - records * k["record_ns"]) / max(refs, 1))
    proc["cpu_ns_per_ref"] = round(cpu, 3)
    return {"process": proc, "footprint": int(info["distinct_pages"]), "runner": True, "kind": "runner",
            "size_factor": round(factor, 4), "size_exponent": round(e_pages, 3), "references": refs,
            "records": records, "estimated_alone_s": round((refs * cpu + records * k["record_ns"]) / 1e9, 2),
            "cpu_lowered": bool(capped)}


def _kernel_base(spec: Spec) -> dict:
    k = spec.table("kernel")
    base = copy.deepcopy(spec.table("base"))
    if k.get("disk") is not None:
        base["disk"] = copy.deepcopy(k["disk"])
    if k.get("load_control") is not None:
        base["load_control"] = dict(base.get("load_control", {}), **k["load_control"])
    # a memory cgroup of a few MB can be OOM-killed while swap-in readahead holds its
    # pages (kernel-backend.md): such a run is run again, twice at most, and counted
    base["kernel"] = {"repeats": k["quick_repeats"] if spec.quick else k["repeats"], "oom_retries": 2}
    if k.get("cpus"):
        base["kernel"]["cpus"] = list(k["cpus"])
    return base


def _kernel_frames(spec: Spec, memory: float, procs: List[dict], page_size: int) -> int:
    own = int(round(spec.table("kernel")["runner_own_mb"] * 2**20 / page_size))
    return max(1, int(round(memory * sum(p["footprint"] for p in procs))) + own * sum(p["runner"] for p in procs))


def _kernel_pairs(spec: Spec) -> List[dict]:
    """Table 2's pairs, then the kernel-only ones, as they run on the kernel."""
    base_dir = spec.path.resolve().parent
    page_size = int(spec.table("base").get("system", {}).get("page_size", 4096))
    out = []
    for pair in spec.table("pair"):
        procs = [_kernel_process(p, spec, page_size, base_dir) for p in pair["process"]]
        out.append({"pair": pair, "kind": "table2", "procs": procs, "processes": [p["process"] for p in procs],
                    "sizes": [p["footprint"] for p in procs], "frames": _kernel_frames(spec, pair["memory"], procs,
                                                                                       page_size)})
    for pair in spec.table("kernel")["pair"]:
        procs = [_kernel_process(p, spec, page_size, base_dir) for p in pair["process"]]
        out.append({"pair": pair, "kind": "real", "procs": procs, "processes": [p["process"] for p in procs],
                    "sizes": [p["footprint"] for p in procs], "frames": _kernel_frames(spec, pair["memory"], procs,
                                                                                       page_size)})
    return out


def _kernel_section54(spec: Spec) -> dict:
    k = spec.table("kernel")
    s54 = spec.table("section54")
    page_size = int(spec.table("base").get("system", {}).get("page_size", 4096))
    unit_pages = max(1, int(round(s54["unit_pages"] * spec.scale * k["size_scale"])))
    procs = []
    for entry in s54["process"]:
        p = engine_process(entry)
        p["params"] = dict(p.get("params", {}), pages=entry["units"] * unit_pages)
        p["cpu_ns_per_ref"] = round(float(entry.get("cpu_ns_per_ref") or 20.0) * k["cpu_scale"], 3)
        procs.append({"process": p, "footprint": entry["units"] * unit_pages, "runner": True})
    base = _kernel_base(spec)
    if s54.get("sample_ms") is not None:
        base.setdefault("system", {})["sample_ms"] = s54["sample_ms"]
    own = int(round(k["runner_own_mb"] * 2**20 / page_size))
    return {"base": base, "processes": [p["process"] for p in procs], "unit_pages": unit_pages,
            "frames": s54["memory_units"] * unit_pages + own * len(procs)}


def _kernel_points(spec: Spec) -> List[Point]:
    if not is_root():
        raise PagelabError(f"{spec.path.name}: reproduce --on kernel runs real processes in memory cgroups, which "
                           "needs root")
    if not swap_devices():
        raise PagelabError(f"{spec.path.name}: reproduce --on kernel needs active swap (pagelab kernel setup --swap "
                           "1G): its pairs page")
    base_dir = spec.path.resolve().parent
    base = _kernel_base(spec)
    out = []
    for p in _kernel_pairs(spec):
        name = p["pair"]["name"]
        for policy in spec.table("kernel")["policies"]:
            cfg = run_config(base, p["processes"], p["frames"], policy)
            out.append(Point(f"{name} | {policy}", "system",
                             normalize_config(cfg, f"{spec.path.name}: pair '{name}'", base_dir)))
    if spec.table("section54") is not None:
        s = _kernel_section54(spec)
        for policy in _s54_policies(spec):
            cfg = run_config(s["base"], s["processes"], s["frames"], policy)
            out.append(Point(f"section54 | {policy}", "system",
                             normalize_config(cfg, f"{spec.path.name}: section54", base_dir)))
    return out


# ---------------------------------------------------------------- the analysis

def analyse(spec: Spec, results: Results) -> Analysis:
    kernel = spec.on == "kernel"
    policies = _policies(spec)
    labels = _labels(spec)
    m: Dict[str, dict] = {k: {} for k in MEASURES if not k.startswith("s54")}
    rows, views_t2, views_other, views_curves, views_real = [], [], [], [], []
    lines: List[str] = []
    page_size = int(spec.table("base").get("system", {}).get("page_size", 4096))
    plans = _kernel_pairs(spec) if kernel else _pairs(spec)
    for p in plans:
        pair = p["pair"]
        name = pair["name"]
        real = p.get("kind") == "real"
        failed = _failed(results, [f"{name} | {pol}" for pol in policies])
        if failed and kernel:
            # a kernel run can fail where the simulator's cannot (the OOM killer, a
            # crashed program): the pair is not measured, the others are
            lines.append(f"pair {name}: not measured ({failed})")
            continue
        runs = {pol: results.full(f"{name} | {pol}") for pol in policies}
        programs = [q["name"] for q in p["processes"]]
        paper_programs = pair["paper_programs"].split("/")
        lru = [process_by_name(runs[BASELINE], n) for n in programs]
        tok = [process_by_name(runs[TOKEN], n) for n in programs]
        for i, n in enumerate(programs):
            label = f"{name}: {paper_programs[i] if i < len(paper_programs) else n}"
            fr = reduction_pct(lru[i]["major_faults"], tok[i]["major_faults"])
            sr = reduction_pct(lru[i]["slowdown"], tok[i]["slowdown"])
            row = {"pair": name, "paper_program": label.split(": ", 1)[1], "program": n, "frames": p["frames"],
                   "footprint_pages": p["sizes"][i], "lru_faults": lru[i]["major_faults"],
                   "token_faults": tok[i]["major_faults"], "fault_reduction_pct": fr,
                   "lru_slowdown": lru[i]["slowdown"], "token_slowdown": tok[i]["slowdown"],
                   "slowdown_reduction_pct": sr, "token_grabs": tok[i]["token_grabs"]}
            if kernel:
                row["kind"] = p["procs"][i]["kind"]
                row["kernel_cpu_ns_per_ref"] = p["processes"][i].get("cpu_ns_per_ref")
                row["kernel_params"] = json.dumps(p["processes"][i].get("params") or p["processes"][i].get("command"))
            paper_pair = pair if not real else next(q for q in spec.table("pair") if q["name"] == pair["like"])
            for key in TABLE2_KEYS:
                row[f"paper_{key}"] = paper_pair["paper"][key][i]
            for pol in policies:
                if pol not in (BASELINE, TOKEN):
                    q = process_by_name(runs[pol], n)
                    row[f"{pol}_faults"] = q["major_faults"]
                    row[f"{pol}_slowdown"] = q["slowdown"]
            rows.append(row)
            if real:
                views_real.append([name, row["paper_program"], n, f"{p['sizes'][i]:,}",
                                   f"{row['lru_faults']:,}", f"{row['token_faults']:,}", fmt_pct(fr),
                                   f"{row['lru_slowdown']:.2f}", f"{row['token_slowdown']:.2f}", fmt_pct(sr)]
                                  + [f"{row[f'{pol}_faults']:,} / {row[f'{pol}_slowdown']:.2f}"
                                     for pol in policies if pol not in (BASELINE, TOKEN)])
                continue
            m["program_fault_reduction_pct"][label] = fr
            m["program_slowdown_reduction_pct"][label] = sr
            m["program_lru_slowdown"][label] = lru[i]["slowdown"]
            m["program_token_slowdown"][label] = tok[i]["slowdown"]
            if not kernel:
                # the stand-in alone under LRU: at half the pair's frames (an equal split),
                # and at fractions of its own footprint (issue 15)
                sizes = [p["frames"] // 2] + [p["sizes"][i] * f // 100 for f in CURVE_PCTS]
                alone = lru_faults_alone(p["processes"][i], page_size, spec.path.resolve().parent, sizes)
                row["alone_lru_faults_half_frames"] = alone[0]
                for f, v in zip(CURVE_PCTS, alone[1:]):
                    row[f"alone_lru_faults_{f}pct"] = v
                views_curves.append([name, row["paper_program"],
                                     f"{n} ({p['processes'][i].get('workload', 'trace')})",
                                     f"{p['sizes'][i]:,}", f"{lru[i]['major_faults']:,}", f"{alone[0]:,}"]
                                    + [f"{v:,}" for v in alone[1:]])
            views_t2.append([name, row["paper_program"], f"{row['lru_faults']:,}", f"{pair['paper']['lru_faults'][i]:,.0f}",
                             f"{row['token_faults']:,}", f"{pair['paper']['token_faults'][i]:,.0f}",
                             fmt_pct(fr), fmt_pct(pair["paper"]["fault_reduction_pct"][i]),
                             f"{row['lru_slowdown']:.2f}", f"{pair['paper']['lru_slowdown'][i]:.2f}",
                             f"{row['token_slowdown']:.2f}", f"{pair['paper']['token_slowdown'][i]:.2f}",
                             fmt_pct(sr), fmt_pct(pair["paper"]["slowdown_reduction_pct"][i])])
            for pol in policies:
                if pol not in (BASELINE, TOKEN):
                    views_other.append([name, row["paper_program"], labels[pol],
                                        f"{row[f'{pol}_faults']:,}", f"{row[f'{pol}_slowdown']:.2f}"])
        if real:
            continue
        m["pair_fault_reduction_pct"][name] = reduction_pct(sum(q["major_faults"] for q in lru),
                                                           sum(q["major_faults"] for q in tok))
        m["pair_slowdown_reduction_pct"][name] = reduction_pct(sum(q["slowdown"] for q in lru),
                                                              sum(q["slowdown"] for q in tok))
        m["token_grabs"][name] = sum(q["token_grabs"] for q in tok)
    where = "on this machine's kernel" if kernel else "ours"
    views = [View(f"Table 2: {where} beside the paper's (faults are major faults; slowdown = run time / run time "
                  "alone" + ("; 'LRU' is the kernel's own reclaim here" if kernel else "") + ")",
                  ["pair", "program", "LRU faults", "paper", "token faults", "paper", "fault reduction", "paper",
                   "LRU slowdown", "paper", "token slowdown", "paper", "slowdown reduction", "paper"],
                  views_t2, readme=True)]
    if views_other:
        views.append(View("the other policies", ["pair", "program", "policy", "faults", "slowdown"], views_other))
    if views_real:
        views.append(View("real programs on the kernel (kernel-only pairs; faults / slowdown)",
                          ["pair", "stands for", "program", "footprint", "kernel faults", "token faults",
                           "fault reduction", "kernel slowdown", "token slowdown", "slowdown reduction"]
                          + [f"{labels[pol]} faults / slowdown" for pol in policies
                             if pol not in (BASELINE, TOKEN)], views_real))
    if views_curves:
        views.append(View("each stand-in alone under LRU (major faults from its exact LRU fault curve), beside its "
                          "LRU faults in the pair",
                          ["pair", "program", "stand-in", "footprint", "LRU faults in the pair",
                           "alone, half the frames"] + [f"alone, {f}% of footprint" for f in CURVE_PCTS],
                          views_curves))
    summary = {"pairs": [{"name": p["pair"]["name"], "frames": p["frames"], "footprints": p["sizes"]}
                         for p in plans]}
    if kernel:
        summary["kernel"] = {"page_size": page_size, "policies": policies, "programs": [
            {"pair": p["pair"]["name"], **{k: v for k, v in q.items() if k != "process"}, "config": q["process"]}
            for p in plans for q in p["procs"]]}
        lines.append("on the kernel the baseline ('none') is this kernel's own reclaim of a memory cgroup, not "
                     "Linux 2.2's global LRU; the token and load control are user-space controllers "
                     "(docs/kernel.md)")
    if spec.table("section54") is not None:
        s = _kernel_section54(spec) if kernel else _section54(spec)
        failed = _failed(results, [f"section54 | {pol}" for pol in _s54_policies(spec)]) if kernel else None
        if failed:
            lines.append(f"section 5.4: not measured ({failed})")
        runs = {} if failed else {pol: results.full(f"section54 | {pol}") for pol in _s54_policies(spec)}
        for pol, raw in runs.items():
            lines.append(f"section 5.4 under {labels[pol]}: " + ", ".join(
                f"{q['name']} {q['runtime_ns'] / 1e9:,.1f} s with {q['major_faults']:,} faults"
                for q in raw["processes"]))
        if BASELINE in runs and TOKEN in runs:
            names = [q["name"] for q in s["processes"]]
            red = [reduction_pct(process_by_name(runs[BASELINE], n)["runtime_ns"],
                                 process_by_name(runs[TOKEN], n)["runtime_ns"]) for n in names]
            m["s54_small_runtime_reduction_pct"] = red[0]
            m["s54_large_runtime_reduction_pct"] = red[-1]
        summary["section54"] = {"frames": s["frames"], "unit_pages": s["unit_pages"]}
        if kernel:
            summary["section54"]["space_time"] = "not measured"
            lines.append("section 5.4's space-time graphs (figure 11): not measured on the kernel (which pages are "
                         "resident, swapped and recently visited, page by page each second, is the simulator's)")
    return Analysis(measures=m, tables={"table": pd.DataFrame(rows)}, views=views, lines=lines, summary=summary)


def _failed(results: Results, keys: List[str]) -> Optional[str]:
    for key in keys:
        error = results.failed(key)
        if error is not None:
            return f"point '{key}' failed: {error}"
    return None


# ---------------------------------------------------------------- the figures

def figures(spec: Spec, analysis: Analysis, results: Results, out: Path) -> List[str]:
    """Per pair, the memory-time graphs of both programs under global LRU and the token
    (figures 6-10 against 12-16); section 5.4's space-time graphs (figure 11), which the
    kernel does not give."""
    written = []
    kernel = spec.on == "kernel"
    for p in _kernel_pairs(spec) if kernel else _pairs(spec):
        name = p["pair"]["name"]
        if kernel and _failed(results, [f"{name} | {pol}" for pol in (BASELINE, TOKEN)]):
            continue
        names = [q["name"] for q in p["processes"]]
        fig = f"pair-{safe_name(name)}.png"
        plot_pair([(_labels(spec)[pol], results.full(f"{name} | {pol}")) for pol in (BASELINE, TOKEN)], names,
                  out / fig, title=f"{name} (paper: {p['pair']['paper_programs']}): {p['frames']:,} frames = "
                                   f"{p['pair']['memory']:.0%} of {sum(p['sizes']):,} pages")
        written.append(fig)
    if spec.table("section54") is not None and not kernel:
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
