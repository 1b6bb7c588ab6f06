"""`pagelab reproduce numa`: numa-page-migration.txt section 5, Tables 1-8.

Every table of the experiment file is a grid: rows are configurations (no migration,
Foresight, daemon counts and blocking durations, reference-history variants: the
``[configs]`` table), columns are page sizes, placements and workload parameters. Each
cell is one run of the NUMA machine (pagelab.numa); the cells run in parallel threads
(the engine releases the GIL). Printed and written: each table with the paper's numbers
in brackets where the paper gives them, and the acceptance checks of the issue. The file
format is in docs/system-config.md ("Experiment files", kind "numa").
"""

from __future__ import annotations

import copy
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional

from ._core import PagelabError
from .numa import NUMA_KEYS, run_numa
from .progress import ProgressBar
from .reproduce import write_outputs
from .configs import merge
from .reproduce_mclustering import _is_number, _need
from .system import read_toml

KIND = "numa"
TOP_KEYS = ("experiment", "base", "configs", "table")
TABLE_KEYS = ("name", "title", "workload", "params", "quick_params", "rows", "columns", "paper")
COLUMN_KEYS = ("label", "page_size", "params")
#: the row without migration (not "None": pandas reads that back as a missing value)
NONE = "No migration"


def load_numa_experiment(path: Path) -> dict:
    """Reads and checks a numa experiment file; one-line errors naming the file and key.
    Values of numa keys are the engine's to check (at the first run)."""
    return check_numa_experiment(read_toml(path), path.name)


def check_numa_experiment(data: dict, name: str) -> dict:
    for key in data:
        _need(key in TOP_KEYS, name, f"unknown top-level key '{key}' (expected {', '.join(TOP_KEYS)})")
    exp = data.get("experiment")
    _need(isinstance(exp, dict), name, "missing table [experiment]")
    _need(exp.get("kind") == KIND, name, f"experiment.kind: expected \"{KIND}\", got {exp.get('kind')!r}")
    base = data.get("base", {})
    _need(isinstance(base, dict), name, "base: expected a table of numa keys")
    for key in base:
        _need(key in NUMA_KEYS and key not in ("workload", "page_size"), name,
              f"base: unknown key '{key}' (expected numa keys but workload and page_size)")
    configs = data.get("configs")
    _need(isinstance(configs, dict) and configs, name, "missing table [configs] (the rows of the tables)")
    for label, cfg in configs.items():
        _need(isinstance(cfg, dict), name, f"configs.{label}: expected a table of numa keys")
        for key in cfg:
            _need(key in NUMA_KEYS and key not in ("workload", "page_size"), name,
                  f"configs.{label}: unknown key '{key}'")
    tables = data.get("table")
    _need(isinstance(tables, list) and tables, name, "expected at least one [[table]]")
    seen = set()
    for i, t in enumerate(tables):
        where = f"table[{i}]"
        _need(isinstance(t, dict), name, f"{where}: expected a table")
        for key in t:
            _need(key in TABLE_KEYS, name, f"{where}: unknown key '{key}' (expected {', '.join(TABLE_KEYS)})")
        _need(isinstance(t.get("name"), str) and t["name"] not in seen, name, f"{where}.name: expected a unique name")
        seen.add(t["name"])
        _need(isinstance(t.get("workload"), str), name, f"{where}.workload: expected a NUMA workload name")
        for key in ("params", "quick_params"):
            _need(isinstance(t.get(key, {}), dict), name, f"{where}.{key}: expected a table")
        rows = t.get("rows")
        _need(isinstance(rows, list) and rows and all(r in configs for r in rows), name,
              f"{where}.rows: expected names of [configs] entries, got {rows!r}")
        cols = t.get("columns")
        _need(isinstance(cols, list) and cols, name, f"{where}.columns: expected a list of tables")
        for j, c in enumerate(cols):
            _need(isinstance(c, dict) and set(c) <= set(COLUMN_KEYS) and isinstance(c.get("label"), str), name,
                  f"{where}.columns[{j}]: expected {{ label, page_size, params }}")
            ps = c.get("page_size")
            _need(isinstance(ps, int) and ps > 0, name, f"{where}.columns[{j}].page_size: expected bytes, got {ps!r}")
        paper = t.get("paper", {})
        _need(isinstance(paper, dict), name, f"{where}.paper: expected a table of row = [numbers]")
        for row, values in paper.items():
            _need(row in rows and isinstance(values, list) and len(values) == len(cols)
                  and all(_is_number(v) for v in values), name,
                  f"{where}.paper.{row}: expected one number per column for a row of the table")
    return data


def cell_config(data: dict, table: dict, row: str, column: dict, quick: bool) -> dict:
    params = dict(table.get("params", {}))
    if quick:
        params.update(table.get("quick_params", {}))
    params.update(column.get("params", {}))
    numa = merge(data.get("base", {}), data["configs"][row])
    numa["page_size"] = column["page_size"]
    numa["workload"] = {"name": table["workload"], "params": params}
    return {"numa": numa}


def run_numa_experiment(path: Path, out_dir: Optional[str], quick: bool = False, progress=None) -> int:
    started = time.perf_counter()
    data = load_numa_experiment(path)
    exp = data["experiment"]
    out = Path(out_dir or f"results/{exp.get('name', path.stem)}")
    cells = []
    for t in data["table"]:
        for row in t["rows"]:
            for c in t["columns"]:
                cells.append((t, row, c, cell_config(data, t, row, c, quick)))
    workers = max(1, min(len(cells), os.cpu_count() or 1))
    results: Dict[tuple, dict] = {}
    with ProgressBar(f"numa: {len(cells)} runs", total=len(cells), enabled=progress) as bar:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [(t["name"], row, c["label"], cfg,
                        pool.submit(run_numa, cfg, f"{path.name} [{t['name']}] {row} {c['label']}"))
                       for t, row, c, cfg in cells]
            for i, (tname, row, label, cfg, fut) in enumerate(futures):
                results[(tname, row, label)] = {"config": cfg, "result": fut.result()}
                bar(i + 1)
    rows = table_rows(data, results)
    acc = acceptance(rows)
    print_tables(data, rows)
    runs = {f"{t}-{r}-{c}".replace("/", "_"): {"config": v["config"], "result": v["result"].raw}
            for (t, r, c), v in results.items()}
    summary = {"experiment": exp.get("name", path.stem), "kind": KIND, "paper": exp.get("paper"),
               "claim": exp.get("claim"), "quick": quick, "acceptance": acc}
    write_outputs(out, summary, rows, runs, started)
    print(acceptance_line(acc))
    print(f"report: {out / 'table.csv'}, {out / 'summary.json'}")
    return 0


def table_rows(data: dict, results: dict) -> List[dict]:
    out = []
    for t in data["table"]:
        paper = t.get("paper", {})
        for row in t["rows"]:
            for j, c in enumerate(t["columns"]):
                r = results[(t["name"], row, c["label"])]["result"]
                s = r.summary()
                out.append({"table": t["name"], "row": row, "column": c["label"], "page_size": c["page_size"],
                            "mean_s": s["mean_s"], "max_s": s["max_s"], "migrations": s["migrations"],
                            "remote_share": s["remote_share"], "lock_wait_s": s["lock_wait_s"],
                            "daemon_passes": s["daemon_passes"], "daemon_lock_wait_s": s["daemon_lock_wait_s"],
                            "paper_s": paper[row][j] if row in paper else None})
    return out


def _cell(rows: List[dict], table: str, row: str, column: str) -> Optional[dict]:
    for r in rows:
        if r["table"] == table and r["row"] == row and r["column"] == column:
            return r
    return None


def acceptance(rows: List[dict]) -> dict:
    """The issue's findings, on the tables that hold them (skipped if a table is absent)."""
    def t(table, row, col):
        c = _cell(rows, table, row, col)
        return None if c is None else c["mean_s"]

    checks = {}
    daemons = ["1D(B0)", "1D(B50)", "1D(B10000)", "2D(B0)"]
    # 1. migration pays off for vector x matrix with repeat references and 2 KiB pages;
    #    None and Foresight bracket the daemons there
    none, fore = t("table1", NONE, "2K(10)"), t("table1", "Foresight", "2K(10)")
    best = min((v for v in (t("table1", d, "2K(10)") for d in daemons) if v is not None), default=None)
    if None not in (none, fore, best):
        checks["vecmat_2k_daemon_beats_none"] = best < none
        checks["foresight_and_none_bracket_daemons"] = fore <= best <= none
    # 2. Jacobi: no gain from migration, and horizontal pages degrade it badly
    nv, nh = t("table5", NONE, "1K(V)"), t("table5", NONE, "1K(H)")
    dv = t("table5", "1D(B0)", "1K(V)")
    if None not in (nv, nh, dv):
        checks["jacobi_daemon_no_gain"] = dv >= nv * 0.99
        checks["jacobi_horizontal_degrades"] = nh > 1.5 * nv
    # 3. aging with enough bits approximates Usage (Jacobi, every page size of table 6)
    pairs = [(r["mean_s"], t("table6", "Usage", r["column"])) for r in rows if r["table"] == "table6" and r["row"] == "Aging=8"]
    if pairs and all(u is not None for _, u in pairs):
        checks["aging_approximates_usage"] = all(abs(a - u) <= 0.1 * u for a, u in pairs)
    # 4. two daemons: more lock contention, more passes
    one, two = _cell(rows, "table1", "1D(B0)", "1K(10)"), _cell(rows, "table1", "2D(B0)", "1K(10)")
    if one and two:
        checks["two_daemons_more_contention"] = two["lock_wait_s"] > one["lock_wait_s"]
        checks["two_daemons_more_passes"] = two["daemon_passes"] / two["max_s"] > one["daemon_passes"] / one["max_s"]
    return {"checks": checks, "met": bool(checks) and all(checks.values())}


def acceptance_line(acc: dict) -> str:
    parts = [f"{k.replace('_', ' ')}: {'yes' if v else 'NO'}" for k, v in acc["checks"].items()]
    return f"acceptance {'met' if acc['met'] else 'NOT met'}: " + "; ".join(parts)


def print_tables(data: dict, rows: List[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=160)
    for t in data["table"]:
        table = Table(title=t.get("title", t["name"]) + " -- ours [paper]")
        table.add_column("")
        for c in t["columns"]:
            table.add_column(c["label"], justify="right")
        for row in t["rows"]:
            cells = []
            for c in t["columns"]:
                r = _cell(rows, t["name"], row, c["label"])
                paper = f" [{r['paper_s']:g}]" if r["paper_s"] is not None else ""
                cells.append(f"{r['mean_s']:.2f}{paper}")
            table.add_row(row, *cells)
        console.print(table)
