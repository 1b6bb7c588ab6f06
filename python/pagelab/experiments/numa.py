"""numa-page-migration.txt (page migration daemons on a BBN Butterfly Plus), section 5:
Tables 1-8 and the conclusions of section 6.

Every ``[[table]]`` of the file is a grid: its rows are configurations (``[configs]``
entries laid over ``[base]``: no migration, Foresight, daemon counts and blocking
durations, reference-history variants), its columns page sizes, placements and
workload parameters; each cell is one run of the NUMA machine (``pagelab.numa``,
docs/numa.md). The measures compare rows within a column (a daemon configuration over
None, a history variant over Usage) or columns within a row, never our seconds with
the paper's. Rows are recognised by what their configuration is (migration, daemons,
block_us, history), columns by their page size and workload parameters; the measures
of the paper's Table k come from the table named ``tablek``.

This module is distinct from ``pagelab/numa.py`` (the runs and their results)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pandas as pd

from .._core import PagelabError
from ..figures.bars import plot_grouped_bars
from ..figures.versus import plot_against_paper
from ..numa import NUMA_KEYS, numa_workloads
from ..system import safe_name
from .claims import flatten, lookup, usable
from .common import laid_over
from .protocol import Analysis, Point, Results, Spec, View
from .schema import AnyTable, Anything, ArrayOf, Field, Int, List_, Str, Table

#: numa keys a configuration may set (the workload and page size are the table's)
CONFIG_KEYS = tuple(k for k in NUMA_KEYS if k not in ("workload", "page_size"))
#: the tables run with 16 processors in the paper (the abstract's conclusions)
SIXTEEN_PROCESSORS = ("table1", "table4", "table5", "table7")
#: what a table's columns are, by workload (the figures' x axis)
COLUMN_KINDS = {"vecmat": "page size in bytes (references per non-zero entry)",
                "spmv-csr": "Harwell-Boeing matrix (page size in bytes; 64 unless given)",
                "jacobi-numa": "page size in bytes (V: vertical, H: horizontal placement)",
                "wave": "page size in bytes"}

COLUMN = Table({
    "label": Field(Str(), doc="the column's name, as the paper's table heads it (no '.': claims look columns up by it)"),
    "page_size": Field(Int(min=16), doc="bytes per page (a power of two, checked by the engine)"),
    "params": Field(AnyTable("a table of workload parameters"), {}, "workload parameters of this column, laid over "
                                                                     "the table's"),
})
TABLE = Table({
    "name": Field(Str(), doc="table1 ... table8: the paper's table it reproduces (the measures are computed from "
                             "these names)"),
    "title": Field(Str(), doc="what the table is, as the paper's caption says"),
    "workload": Field(Str(), doc="a NUMA workload (docs/numa.md): vecmat, spmv-csr, jacobi-numa, wave"),
    "params": Field(AnyTable("a table of workload parameters"), {}, "the workload's parameters for every cell"),
    "quick_params": Field(AnyTable("a table of workload parameters"), {},
                          "with --quick, laid over params (the small sizes: processors, n, iterations, steps)"),
    "rows": Field(List_(Str(), min_len=1), doc="the configurations (names of [configs] entries), in the paper's order"),
    "columns": Field(ArrayOf(COLUMN, min_len=1), doc="page sizes, placements and parameters, in the paper's order"),
    "paper": Field(Anything("a table of row = [one number per column]", lambda v: isinstance(v, dict)), {},
                   "the paper's legible cells (seconds), by row, as printed"),
})
TABLES = {
    "base": Field(AnyTable("a table of numa keys (docs/numa.md) but workload and page_size"), {},
                  "numa keys under every run: the machine, the daemon's costs, the default history"),
    "configs": Field(Anything("a table of configurations, each a table of numa keys",
                              lambda v: isinstance(v, dict) and bool(v) and all(isinstance(c, dict) for c in v.values())),
                     doc="the rows of the tables: numa keys laid over [base] (migration, daemons, block_us, history)"),
    "table": Field(ArrayOf(TABLE, min_len=1), doc="the paper's tables, one grid of runs each"),
}
MEASURES = {
    "t1_none_vs_first_column": "Table 1: None's time in each column over its first column's",
    "t1_foresight_vs_none": "Table 1: Foresight over None, per column",
    "t1_blocking": "Table 1: one daemon at increasing blocking durations over None, per column",
    "t1_two_vs_one": "Table 1: two daemons (B0) over one (B0), per column",
    "t1_best_daemon_vs_none": "Table 1: the best daemon configuration over None, per column",
    "t1_daemon_wins": "Table 1: columns where some daemon configuration beats None",
    "t1_page_size": "Table 1: each migrating row over None at increasing page sizes (same repeat count)",
    "t1_foresight_by_repeat": "Table 1: Foresight over None at increasing repeat counts (same page size)",
    "t2_vs_usage": "Table 2: each history variant over Usage",
    "t2_spread": "Table 2: slowest over fastest history variant (not Usage), minus 1",
    "t3_gain_vs_table1": "Table 3: 1D(B0)/None with 4 processors over the same ratio in Table 1, per column",
    "t3_two_vs_one": "Table 3: two daemons (B0) over one daemon blocking 50 us, per column",
    "t3_repeat_scaling": "Table 3: each printed row's time in later columns over its first column's",
    "t4_daemon_vs_none": "Table 4: the daemon over None, per matrix",
    "t4_none_s": "Table 4: None's completion time per matrix (s)",
    "t5_horizontal_vs_vertical": "Table 5: None, horizontal over vertical pages, per page size",
    "t5_daemon_vs_none": "Table 5: each daemon configuration over None, per column",
    "t5_vertical_daemon_vs_none": "Table 5: each daemon configuration over None, vertical columns",
    "t5_two_vs_one_vertical": "Table 5: two daemons (B0) over one (B0), vertical columns",
    "t5_none_vertical_spread": "Table 5: None's slowest over fastest vertical column, minus 1",
    "t5_blocking": "Table 5: one daemon, longest blocking over B0, per column",
    "t5_migrations_per_page_iteration": "Table 5: migrations per page per iteration, per daemon row and column",
    "t5_horizontal_daemon_vs_none": "Table 5: each daemon configuration over None, horizontal columns",
    "t6_vs_usage": "Table 6: each history variant over Usage, per page size",
    "t6_by_bits": "Table 6: per column, the variants over Usage by increasing history bits",
    "t7_daemon_vs_none": "Table 7: each daemon configuration over None, per column",
    "t7_page_size": "Table 7: each daemon row over None at increasing page sizes",
    "t7_blocking": "Table 7: one daemon at increasing blocking durations over None, per column",
    "t7_two_vs_one": "Table 7: two daemons (B0) over one (B0), per column",
    "t7_migrations_per_page": "Table 7: migrations per page, per daemon row and column",
    "t7_two_daemon_largest_page_migrations": "Table 7: two daemons' migrations at the largest page over the most "
                                             "of any other daemon cell",
    "t8_vs_usage": "Table 8: per column, each history variant over Usage",
    "t8_spread": "Table 8: per column, slowest over fastest history variant (not Usage), minus 1",
    "daemon_vs_none_16": "every daemon cell of the 16-processor tables (1, 4, 5, 7) over None",
    "pingpongs_per_page_16": "every daemon cell of the 16-processor tables (1, 4, 5, 7): ping-pongs (migrations "
                             "back to the node the page left at its previous migration) per page over the run",
    "lock_wait_by_activity": "per table column: processors' lock waits (share of their time), daemon rows from "
                             "the longest blocking to two daemons",
    "examination_rate_by_activity": "per table column: passes per daemon per simulated second, same rows",
}


# ---------------------------------------------------------------- the file

def check(spec: Spec) -> None:
    file = spec.path.name
    for key in spec.table("base"):
        if key not in CONFIG_KEYS:
            raise PagelabError(f"{file}: base.{key}: unknown key (expected numa keys: {', '.join(CONFIG_KEYS)})")
    configs = spec.table("configs")
    for label, cfg in configs.items():
        if "." in label:
            raise PagelabError(f"{file}: configs.{label}: a name without '.' (claims look rows up by name)")
        for key in cfg:
            if key not in CONFIG_KEYS:
                raise PagelabError(f"{file}: configs.{label}.{key}: unknown key "
                                   f"(expected numa keys: {', '.join(CONFIG_KEYS)})")
    seen = set()
    for i, t in enumerate(spec.table("table")):
        where = f"{file}: table[{i}]"
        if t["name"] in seen:
            raise PagelabError(f"{where}.name: '{t['name']}' is used twice")
        seen.add(t["name"])
        for row in t["rows"]:
            if row not in configs:
                raise PagelabError(f"{where}.rows: '{row}' is not a [configs] entry "
                                   f"(known: {', '.join(configs)})")
        if len(set(t["rows"])) != len(t["rows"]):
            raise PagelabError(f"{where}.rows: a row is named twice")
        labels = [c["label"] for c in t["columns"]]
        if len(set(labels)) != len(labels):
            raise PagelabError(f"{where}.columns: a label is used twice")
        for j, label in enumerate(labels):
            if "." in label:
                raise PagelabError(f"{where}.columns[{j}].label: a label without '.' (claims look columns up by it)")
        for row, values in t["paper"].items():
            if row not in t["rows"] or not isinstance(values, list) or len(values) != len(labels) or \
                    not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                raise PagelabError(f"{where}.paper.{row}: expected a row of the table with one number per column")


def cell_params(table: dict, column: dict, quick: bool) -> dict:
    """A cell's workload parameters: the table's, its quick ones with --quick, the column's."""
    params = dict(table["params"])
    if quick:
        params.update(table["quick_params"])
    params.update(column["params"])
    return params


def cell_config(spec: Spec, table: dict, row: str, column: dict) -> dict:
    """One run's configuration, as the first version built it: [base], the row's
    [configs] entry over it, the column's page size, the workload."""
    numa = laid_over(spec.table("base"), spec.table("configs")[row])
    numa["page_size"] = column["page_size"]
    numa["workload"] = {"name": table["workload"], "params": cell_params(table, column, spec.quick)}
    return {"numa": numa}


def point_key(table: str, row: str, column: str) -> str:
    return f"{table} | {row} | {column}"


def points(spec: Spec) -> List[Point]:
    return [Point(point_key(t["name"], row, c["label"]), "numa", cell_config(spec, t, row, c))
            for t in spec.table("table") for row in t["rows"] for c in t["columns"]]


# ---------------------------------------------------------------- the grids

@dataclass
class Grid:
    """One table's runs: rows by configuration, columns by label."""
    name: str
    title: str
    workload: str
    rows: List[str]
    columns: List[str]
    #: row -> its numa keys ([base] with its [configs] entry laid over)
    config: Dict[str, dict]
    #: column label -> {"page_size": bytes, "params": the workload's parameters}
    column_info: Dict[str, dict]
    #: (row, column) -> the cell's numbers (cell_record)
    cells: Dict[Tuple[str, str], dict]
    paper: Dict[str, list] = field(default_factory=dict)
    #: the history daemon rows keep when they set none ([base] history)
    base_history: str = "usage"

    def time(self, row: str, col: str) -> float:
        return self.cells[(row, col)]["mean_s"]

    def ratio(self, row: str, base: str, col: str) -> float:
        return self.time(row, col) / self.time(base, col)

    # -- rows by what they are
    def kind(self, row: str) -> str:
        return str(self.config[row].get("migration", "none"))

    def daemons(self, row: str) -> int:
        return int(self.config[row].get("daemons", 1))

    def block_us(self, row: str) -> float:
        return float(self.config[row].get("block_us", 0))

    def history(self, row: str) -> str:
        return str(self.config[row].get("history", "usage")).strip().lower()

    def none_row(self) -> Optional[str]:
        return next((r for r in self.rows if self.kind(r) == "none"), None)

    def foresight_row(self) -> Optional[str]:
        return next((r for r in self.rows if self.kind(r) == "foresight"), None)

    def daemon_rows(self) -> List[str]:
        """Daemon configurations with the base history (the configuration tables' rows)."""
        return [r for r in self.rows if self.kind(r) == "daemons" and self.history(r) == self.base_history]

    def one_daemon_rows(self) -> List[str]:
        """One daemon, base history, by increasing blocking duration."""
        return sorted((r for r in self.daemon_rows() if self.daemons(r) == 1), key=self.block_us)

    def daemon_row(self, daemons: int, block_us: float) -> Optional[str]:
        return next((r for r in self.daemon_rows() if self.daemons(r) == daemons and self.block_us(r) == block_us),
                    None)

    def by_activity(self) -> List[str]:
        """Daemon rows from the least active (one daemon, longest blocking) to the most."""
        return sorted(self.daemon_rows(), key=lambda r: (self.daemons(r), -self.block_us(r)))

    def usage_row(self) -> Optional[str]:
        """The history tables' reference: one daemon, blocking 0, a Usage field."""
        return next((r for r in self.rows if self.kind(r) == "daemons" and self.history(r) == "usage"
                     and self.daemons(r) == 1 and self.block_us(r) == 0), None)

    def history_variants(self) -> List[str]:
        """Daemon rows with another history than Usage, by increasing history bits."""
        return sorted((r for r in self.rows if self.kind(r) == "daemons" and self.history(r) != "usage"),
                      key=lambda r: history_bits(self.history(r)))

    # -- columns by what they are
    def param(self, col: str, key: str, default: Any = None) -> Any:
        return self.column_info[col]["params"].get(key, default)

    def page_size(self, col: str) -> int:
        return int(self.column_info[col]["page_size"])


def history_bits(history: str) -> float:
    """How much reference history a variant keeps: the Referenced bit is one bit, aging
    K bits, the Usage field a count (infinitely many)."""
    h = history.strip().lower()
    if h == "referenced":
        return 1.0
    if h.startswith("aging:"):
        return float(h.split(":", 1)[1])
    return math.inf


def cell_record(raw: dict) -> dict:
    """The numbers of one run the analysis uses (from the engine's result dict)."""
    procs = len(raw["end_ns"])
    busy = sum(raw["end_ns"])
    run_s = raw["max_ns"] / 1e9
    daemons = raw.get("daemons") or []
    passes = [d["passes"] for d in daemons]
    return {
        "mean_s": raw["mean_ns"] / 1e9,
        "max_s": run_s,
        "procs": procs,
        "pages": raw["pages"],
        "migrations": raw["migrations"],
        "migrations_per_page": raw["migrations"] / raw["pages"] if raw["pages"] else 0.0,
        "remote_share": raw["remote_refs"] / max(1, raw["local_refs"] + raw["remote_refs"]),
        "lock_wait_s": raw["lock_wait_ns"] / 1e9,
        "lock_wait_share": raw["lock_wait_ns"] / busy if busy else 0.0,
        "daemon_passes": sum(passes),
        "examination_rate_per_s": (sum(passes) / len(passes) / run_s) if passes and run_s > 0 else 0.0,
        "daemon_lock_wait_s": sum(d["lock_wait_ns"] for d in daemons) / 1e9,
        # issue 16: pages sent back where they came from, and the memory modules' queues
        "pingpongs": raw.get("pingpongs", 0),
        "pingpongs_per_page": raw.get("pingpongs", 0) / raw["pages"] if raw["pages"] else 0.0,
        "pingpong_pages": raw.get("pingpong_pages", 0),
        "max_page_pingpongs": raw.get("max_page_pingpongs", 0),
        "memory_wait_share": raw.get("memory_wait_ns", 0) / busy if busy else 0.0,
    }


def grids(spec: Spec, results: Results) -> Dict[str, Grid]:
    base = spec.table("base")
    out = {}
    for t in spec.table("table"):
        config = {row: laid_over(base, spec.table("configs")[row]) for row in t["rows"]}
        info = {c["label"]: {"page_size": c["page_size"], "params": cell_params(t, c, spec.quick)}
                for c in t["columns"]}
        cells = {(row, c["label"]): cell_record(results.full(point_key(t["name"], row, c["label"])))
                 for row in t["rows"] for c in t["columns"]}
        out[t["name"]] = Grid(t["name"], t["title"], t["workload"], list(t["rows"]),
                              [c["label"] for c in t["columns"]], config, info, cells, dict(t["paper"]),
                              str(base.get("history", "usage")).strip().lower())
    return out


# ---------------------------------------------------------------- measures on a grid

def spread(values: Sequence[float]) -> Optional[float]:
    """Slowest over fastest, minus 1 (0 when all are equal); None without values."""
    values = list(values)
    if not values or min(values) <= 0:
        return None
    return max(values) / min(values) - 1.0


def varying(g: Grid, what: str) -> List[str]:
    """The longest run of columns that differ only in ``what`` ("page_size" or a
    workload parameter), ordered by it: Table 1's 512(10), 1K(10), 2K(10) for the page
    size; 1K(1), 1K(10), 1K(20) for "repeat"."""
    def value(col):
        return g.page_size(col) if what == "page_size" else g.param(col, what, 1)

    def rest(col):
        params = {k: v for k, v in g.column_info[col]["params"].items() if k != what}
        return (None if what == "page_size" else g.page_size(col), tuple(sorted((k, str(v)) for k, v in params.items())))

    groups: Dict[tuple, List[str]] = {}
    for col in g.columns:
        groups.setdefault(rest(col), []).append(col)
    best = max(groups.values(), key=lambda cols: len({value(c) for c in cols}), default=[])
    if len({value(c) for c in best}) < 2:
        return []
    return sorted(best, key=value)


def against_first_column(g: Grid, row: str) -> Dict[str, float]:
    first = g.columns[0]
    return {col: g.time(row, col) / g.time(row, first) for col in g.columns[1:]}


def row_ratios(g: Grid, rows: Sequence[str], base: str, columns: Optional[Sequence[str]] = None) -> Dict[str, list]:
    cols = list(g.columns if columns is None else columns)
    return {r: [g.ratio(r, base, c) for c in cols] for r in rows}


def blocking_series(g: Grid, base: str) -> Dict[str, list]:
    """Per column: one daemon at increasing blocking durations, over ``base``."""
    rows = g.one_daemon_rows()
    return {c: [g.ratio(r, base, c) for r in rows] for c in g.columns} if len(rows) >= 2 else {}


def two_over_one(g: Grid, columns: Optional[Sequence[str]] = None, one_block_us: float = 0.0) -> Dict[str, float]:
    two, one = g.daemon_row(2, 0.0), g.daemon_row(1, one_block_us)
    if two is None or one is None:
        return {}
    return {c: g.ratio(two, one, c) for c in (g.columns if columns is None else columns)}


def table1_measures(g: Grid) -> Dict[str, Any]:
    m: Dict[str, Any] = {}
    none, fore, daemons = g.none_row(), g.foresight_row(), g.daemon_rows()
    if none is None:
        return m
    m["t1_none_vs_first_column"] = against_first_column(g, none)
    if fore is not None:
        m["t1_foresight_vs_none"] = {c: g.ratio(fore, none, c) for c in g.columns}
        by_repeat = varying(g, "repeat")
        if by_repeat:
            m["t1_foresight_by_repeat"] = [g.ratio(fore, none, c) for c in by_repeat]
    m["t1_blocking"] = blocking_series(g, none)
    m["t1_two_vs_one"] = two_over_one(g)
    if daemons:
        best = {c: min(g.ratio(r, none, c) for r in daemons) for c in g.columns}
        m["t1_best_daemon_vs_none"] = best
        m["t1_daemon_wins"] = sum(1 for v in best.values() if v < 1.0)
    by_page = varying(g, "page_size")
    migrating = ([fore] if fore is not None else []) + daemons
    if by_page and migrating:
        m["t1_page_size"] = row_ratios(g, migrating, none, by_page)
    return m


def history_measures(g: Grid) -> Tuple[Dict[str, Dict[str, float]], Dict[str, list], Dict[str, float]]:
    """Each history variant over Usage per column; per column the variants by bits;
    per column the variants' spread."""
    usage, variants = g.usage_row(), g.history_variants()
    if usage is None or not variants:
        return {}, {}, {}
    by_row = {r: {c: g.ratio(r, usage, c) for c in g.columns} for r in variants}
    by_col = {c: [g.ratio(r, usage, c) for r in variants] for c in g.columns}
    spreads = {c: spread([g.time(r, c) for r in variants]) for c in g.columns}
    return by_row, by_col, spreads


def _single(d: Dict[str, Any]) -> Any:
    """A table of one entry per column as the number itself when there is one column."""
    return next(iter(d.values())) if len(d) == 1 else d


def table2_measures(g: Grid) -> Dict[str, Any]:
    by_row, _by_col, spreads = history_measures(g)
    if not by_row:
        return {}
    return {"t2_vs_usage": {r: _single(v) for r, v in by_row.items()}, "t2_spread": _single(spreads)}


def table3_measures(g: Grid, t1: Optional[Grid]) -> Dict[str, Any]:
    m: Dict[str, Any] = {}
    none, one = g.none_row(), g.daemon_row(1, 0.0)
    if t1 is not None and none is not None and one is not None:
        none1, one1 = t1.none_row(), t1.daemon_row(1, 0.0)
        if none1 is not None and one1 is not None:
            m["t3_gain_vs_table1"] = {c: g.ratio(one, none, c) / t1.ratio(one1, none1, c)
                                      for c in g.columns if c in t1.columns}
    m["t3_two_vs_one"] = two_over_one(g, one_block_us=50.0)
    printed = [r for r in g.paper if r in g.rows]
    if printed:
        m["t3_repeat_scaling"] = {r: list(against_first_column(g, r).values()) for r in printed}
    return m


def table4_measures(g: Grid) -> Dict[str, Any]:
    none, daemons = g.none_row(), g.daemon_rows()
    if none is None:
        return {}
    m: Dict[str, Any] = {"t4_none_s": {c: g.time(none, c) for c in g.columns}}
    if daemons:
        m["t4_daemon_vs_none"] = {c: g.ratio(daemons[0], none, c) for c in g.columns}
    return m


def page_label(page_size: int) -> str:
    return f"{page_size // 1024}K" if page_size >= 1024 and page_size % 1024 == 0 else str(page_size)


def table5_measures(g: Grid, iterations: float) -> Dict[str, Any]:
    none, daemons = g.none_row(), g.daemon_rows()
    if none is None:
        return {}
    vertical = [c for c in g.columns if g.param(c, "layout") == "vertical"]
    horizontal = [c for c in g.columns if g.param(c, "layout") == "horizontal"]
    m: Dict[str, Any] = {}
    hv = {}
    for h in horizontal:
        v = next((c for c in vertical if g.page_size(c) == g.page_size(h)), None)
        if v is not None:
            hv[page_label(g.page_size(h))] = g.time(none, h) / g.time(none, v)
    m["t5_horizontal_vs_vertical"] = hv
    if daemons:
        m["t5_daemon_vs_none"] = row_ratios(g, daemons, none)
        if vertical:
            m["t5_vertical_daemon_vs_none"] = row_ratios(g, daemons, none, vertical)
        if horizontal:
            m["t5_horizontal_daemon_vs_none"] = row_ratios(g, daemons, none, horizontal)
        m["t5_migrations_per_page_iteration"] = {
            r: [g.cells[(r, c)]["migrations_per_page"] / iterations for c in g.columns] for r in daemons}
    if vertical:
        m["t5_two_vs_one_vertical"] = two_over_one(g, vertical)
        m["t5_none_vertical_spread"] = spread([g.time(none, c) for c in vertical])
    ones = g.one_daemon_rows()
    if len(ones) >= 2:
        m["t5_blocking"] = {c: g.ratio(ones[-1], ones[0], c) for c in g.columns}
    return m


def table7_measures(g: Grid) -> Dict[str, Any]:
    none, daemons = g.none_row(), g.daemon_rows()
    if none is None or not daemons:
        return {}
    by_page = sorted(g.columns, key=g.page_size)
    m: Dict[str, Any] = {
        "t7_daemon_vs_none": row_ratios(g, daemons, none),
        "t7_page_size": row_ratios(g, daemons, none, by_page),
        "t7_blocking": blocking_series(g, none),
        "t7_two_vs_one": two_over_one(g),
        "t7_migrations_per_page": {r: [g.cells[(r, c)]["migrations_per_page"] for c in g.columns] for r in daemons},
    }
    two = g.daemon_row(2, 0.0)
    if two is not None:
        largest = by_page[-1]
        others = [g.cells[(r, c)]["migrations"] for r in daemons for c in g.columns if (r, c) != (two, largest)]
        m["t7_two_daemon_largest_page_migrations"] = g.cells[(two, largest)]["migrations"] / max([1] + others)
    return m


def by_activity(gs: Sequence[Grid], value: str) -> Dict[str, list]:
    """Per column of every table with at least two daemon rows: ``value`` of its daemon
    rows from the least active to the most."""
    out = {}
    for g in gs:
        rows = g.by_activity()
        if len(rows) >= 2:
            for c in g.columns:
                out[f"{g.name} {c}"] = [g.cells[(r, c)][value] for r in rows]
    return out


def _workload_default(workload: str, param: str) -> Optional[float]:
    for w in numa_workloads():
        if w["name"] == workload:
            for p in w["params"]:
                if p["name"] == param:
                    return float(p["default"])
    return None


def measures_of(gs: Dict[str, Grid]) -> Dict[str, Any]:
    m: Dict[str, Any] = {}
    t1 = gs.get("table1")
    if t1 is not None:
        m.update(table1_measures(t1))
    if "table2" in gs:
        m.update(table2_measures(gs["table2"]))
    if "table3" in gs:
        m.update(table3_measures(gs["table3"], t1))
    if "table4" in gs:
        m.update(table4_measures(gs["table4"]))
    if "table5" in gs:
        g = gs["table5"]
        iterations = g.param(g.columns[0], "iterations") or _workload_default(g.workload, "iterations") or 1
        m.update(table5_measures(g, float(iterations)))
    if "table6" in gs:
        by_row, by_col, _ = history_measures(gs["table6"])
        if by_row:
            m["t6_vs_usage"] = by_row
            m["t6_by_bits"] = by_col
    if "table7" in gs:
        m.update(table7_measures(gs["table7"]))
    if "table8" in gs:
        _, by_col, spreads = history_measures(gs["table8"])
        if by_col:
            m["t8_vs_usage"] = by_col
            m["t8_spread"] = spreads
    sixteen, pingpongs = {}, {}
    for name in SIXTEEN_PROCESSORS:
        g = gs.get(name)
        if g is not None and g.none_row() is not None and g.daemon_rows():
            sixteen[name] = [g.ratio(r, g.none_row(), c) for r in g.daemon_rows() for c in g.columns]
        if g is not None and g.daemon_rows():
            pingpongs[name] = [g.cells[(r, c)]["pingpongs_per_page"] for r in g.daemon_rows() for c in g.columns]
    if sixteen:
        m["daemon_vs_none_16"] = sixteen
    if pingpongs:
        m["pingpongs_per_page_16"] = pingpongs
    m["lock_wait_by_activity"] = by_activity(list(gs.values()), "lock_wait_share")
    m["examination_rate_by_activity"] = by_activity(list(gs.values()), "examination_rate_per_s")
    # an empty table is no measure ("not measured", never a vacuous pass)
    return {k: v for k, v in m.items() if v is not None and v != {} and v != []}


# ---------------------------------------------------------------- the analysis

def baseline(g: Grid) -> Optional[str]:
    """The row a table compares with: None, else Usage (the history tables)."""
    return g.none_row() or g.usage_row()


def cell_rows(gs: Dict[str, Grid]) -> List[dict]:
    rows = []
    for g in gs.values():
        base = baseline(g)
        for r in g.rows:
            for j, c in enumerate(g.columns):
                cell = g.cells[(r, c)]
                paper = g.paper.get(r)
                paper_base = g.paper.get(base) if base is not None else None
                rows.append({
                    "table": g.name, "row": r, "column": c, "page_size": g.page_size(c), "migration": g.kind(r),
                    "daemons": g.daemons(r) if g.kind(r) == "daemons" else 0, "block_us": g.block_us(r),
                    "history": g.history(r),
                    **{k: cell[k] for k in ("mean_s", "max_s", "migrations", "pages", "migrations_per_page",
                                            "remote_share", "lock_wait_s", "lock_wait_share", "daemon_passes",
                                            "examination_rate_per_s", "daemon_lock_wait_s", "pingpongs",
                                            "pingpongs_per_page", "max_page_pingpongs", "memory_wait_share")},
                    "vs_baseline": g.ratio(r, base, c) if base is not None else None,
                    "baseline": base,
                    "paper_s": paper[j] if paper is not None else None,
                    "paper_vs_baseline": paper[j] / paper_base[j] if paper is not None and paper_base is not None
                    else None,
                })
    return rows


def table_view(g: Grid) -> View:
    rows = []
    for r in g.rows:
        cells = []
        for j, c in enumerate(g.columns):
            paper = g.paper.get(r)
            cells.append(f"{g.time(r, c):.2f}" + (f" [{paper[j]:g}]" if paper is not None else ""))
        rows.append([r] + cells)
    return View(f"{g.title}: completion time, s (mean of the processors) -- ours [paper]", [""] + g.columns, rows,
                readme=g.name == "table5")


def ratio_view(gs: Dict[str, Grid]) -> View:
    rows = []
    for g in gs.values():
        base = baseline(g)
        if base is None:
            continue
        for r in g.rows:
            if r == base:
                continue
            for j, c in enumerate(g.columns):
                p, pb = g.paper.get(r), g.paper.get(base)
                rows.append([g.name, r, c, f"{g.ratio(r, base, c):.3f}",
                             f"{p[j] / pb[j]:.3f}" if p is not None and pb is not None else "",
                             f"{g.cells[(r, c)]['migrations']:,}", f"{g.cells[(r, c)]['lock_wait_share']:.1%}"])
    return View("each configuration over its table's baseline (None, or Usage in the history tables)",
                ["table", "row", "column", "ours", "paper", "migrations", "lock wait"], rows)


def findings(m: Dict[str, Any]) -> List[str]:
    lines = []
    best = m.get("t1_best_daemon_vs_none")
    if best:
        wins = [c for c, v in best.items() if v < 1.0]
        lines.append(f"Table 1: some daemon configuration beats None in {len(wins)} of {len(best)} columns"
                     + (f" ({', '.join(wins)})" if wins else "") + "; best daemon over None: "
                     + ", ".join(f"{c} {v:.3f}" for c, v in best.items()))
    hv = m.get("t5_horizontal_vs_vertical")
    if hv:
        lines.append("Table 5: horizontal over vertical pages without migration: "
                     + ", ".join(f"{k} {v:.2f}" for k, v in hv.items()) + " (paper 2.39, 2.36)")
    sixteen = m.get("daemon_vs_none_16")
    if sixteen:
        values = flatten(sixteen)
        lines.append(f"16-processor tables: daemon over None from {min(values):.3f} to {max(values):.3f} "
                     f"({len(values)} cells)")
    return lines


def analyse(spec: Spec, results: Results) -> Analysis:
    gs = grids(spec, results)
    m = measures_of(gs)
    views = [table_view(g) for g in gs.values()] + [ratio_view(gs)]
    summary = {"tables": [{"name": g.name, "title": g.title, "rows": g.rows, "columns": g.columns,
                           "baseline": baseline(g), "configuration_table": g.none_row() is not None}
                          for g in gs.values()],
               "cells": sum(len(g.cells) for g in gs.values())}
    return Analysis(measures=m, tables={"table": pd.DataFrame(cell_rows(gs))}, views=views, lines=findings(m),
                    summary=summary)


# ---------------------------------------------------------------- the figures

def paper_pairs(claims: Sequence[Any], measures: Dict[str, Any]) -> Dict[str, List[Tuple[float, float]]]:
    """(paper, ours) pairs of every claim that compares position by position with the
    paper's numbers (a near rule), by claim id."""
    out = {}
    for c in claims:
        if c.paper_value is None or "near" not in (c.rule.kind, getattr(c.partly, "kind", None)):
            continue
        ours = lookup(measures, c.measure)
        if ours is None or not usable(ours):
            continue
        theirs, mine = flatten(c.paper_value), flatten(ours)
        if len(theirs) == len(mine):
            out[c.id] = list(zip(theirs, mine))
    return out


def figures(spec: Spec, analysis: Analysis, results: Results, out: Path) -> List[str]:
    """Per table, completion time per configuration and column; migrations per page and
    the processors' lock waits of every daemon cell; our ratios against the paper's."""
    df = analysis.tables["table"]
    written = []
    for t in spec.table("table"):
        part = df[df["table"] == t["name"]].rename(columns={"row": "configuration"})
        fig = f"{safe_name(t['name'])}.png"
        plot_grouped_bars(part, out / fig, value="mean_s", ylabel="completion time (s, mean of the processors)",
                          title=t["title"], group="column", series="configuration",
                          xlabel=COLUMN_KINDS.get(t["workload"], "column"))
        written.append(fig)
    tables = {g["name"]: g for g in analysis.summary["tables"]}
    configuration = df["table"].map(lambda t: tables[t]["configuration_table"])
    daemons = df[df["migration"] == "daemons"].copy()
    daemons["cell"] = daemons["table"].str.replace("table", "T", regex=False) + " " + daemons["column"]
    for which, part in (("", daemons[configuration[daemons.index]]),
                        ("-history", daemons[~configuration[daemons.index]])):
        if part.empty:
            continue
        kind = "daemon configuration" if not which else "reference history"
        for fig, value, ylabel, title, percent, log in (
                (f"migrations-per-page{which}.png", "migrations_per_page", "migrations per page (log scale)",
                 f"Migrations per page of every daemon run ({kind} tables)", False, True),
                (f"pingpongs-per-page{which}.png", "pingpongs_per_page",
                 "ping-pongs per page (migrations back to the node just left)",
                 f"Ping-pongs per page of every daemon run ({kind} tables)", False, False),
                (f"lock-waits{which}.png", "lock_wait_share", "processors' lock wait (% of their time)",
                 f"Processors' lock waits of every daemon run ({kind} tables)", True, False)):
            plot_grouped_bars(part, out / fig, value=value, ylabel=ylabel, title=title, group="cell",
                              series="row", percent=percent, log=log, xlabel="table and column")
            written.append(fig)
    pairs = paper_pairs(spec.claims, analysis.measures)
    if pairs:
        fig = "ours-vs-paper.png"
        plot_against_paper(pairs, out / fig, title="Ratios the paper prints against ours (claims with a near rule)",
                           xlabel="the paper's ratio", ylabel="our ratio", log=True)
        written.append(fig)
    return written
