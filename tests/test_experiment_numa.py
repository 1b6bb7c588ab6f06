"""The NUMA experiment on the protocol (experiments/numa.py, numa.toml;
numa-page-migration.txt section 5, Tables 1-8): a --quick run end to end through the
runner, the runs it makes (the first version's), and the analysis' non-obvious pieces
on small synthetic grids.

The quick run (each table's quick_params) is run twice: as shipped, and on the first
version's machine (issue 16's private work and memory modules off), 120
distinct runs in this process (workers=0): about 5 s on a 2-core machine."""

import json
import math

import pandas as pd
import pytest

from pagelab._core import PagelabError
from pagelab.experiments import numa as N
from pagelab.experiments.claims import VERDICTS
from pagelab.experiments.protocol import EXPERIMENTS_DIR, check_spec, load_spec, spec_variants
from pagelab.experiments.runner import reproduce
from pagelab.system import read_toml

FILE = EXPERIMENTS_DIR / "numa.toml"


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("numa") / "numa"
    run = reproduce(["numa"], out=str(out), quick=True, workers=0)[0]
    return run, out


def test_quick_run_writes_the_ledger_and_figures(quick_run):
    run, out = quick_run
    assert run.error is None
    spec = load_spec(FILE, quick=True)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["experiment"] == "numa" and summary["quick"] and summary["points"] == 126
    claims = pd.read_csv(out / "claims.csv")
    assert list(claims["id"]) == [c.id for c in spec.claims]
    assert set(claims["verdict"]) <= set(VERDICTS)
    # every measure a claim names is produced, and every claim is judged on a number
    for c in spec.claims:
        assert c.measure.split(".")[0] in summary["measures"], c.id
    assert "not measured" not in set(claims["verdict"]), claims[claims["verdict"] == "not measured"]["id"].tolist()
    assert set(summary["measures"]) == set(N.MEASURES)
    # a bar figure per table, migrations and lock waits (configuration and history
    # tables), ours against the paper's
    figures = summary["figures"]
    assert figures[:8] == [f"table{i}.png" for i in range(1, 9)]
    assert {"migrations-per-page.png", "lock-waits.png", "migrations-per-page-history.png",
            "lock-waits-history.png", "ours-vs-paper.png", "pingpongs-per-page.png"} <= set(figures)
    for fig in figures:
        assert (out / fig).stat().st_size > 10_000, fig
        assert (out / fig).with_suffix(".svg").is_file(), fig
    table = pd.read_csv(out / "table.csv", keep_default_na=False)
    assert len(table) == 126 and set(table["table"]) == {f"table{i}" for i in range(1, 9)}
    assert (table["mean_s"] > 0).all()


@pytest.fixture(scope="module")
def first_version_run(tmp_path_factory):
    """The quick run on the first version's machine: no private work, no memory
    contention (issue 16's mechanisms switched off in [base]), Table 6 on horizontal
    pages. The wave keeps its new block layout (the pinned numbers are not the wave's)."""
    d = tmp_path_factory.mktemp("numa-first")
    text = FILE.read_text()
    assert "memory_contention = true\n" in text
    text = text.replace("memory_contention = true\n",
                        "memory_contention = false\nprivate_ns = 0.0\nrepeat_private_ns = 0.0\n", 1)
    # Table 6 was on horizontal pages in the first version
    text = text.replace('iterations = 10, layout = "vertical" }\nquick_params = { n = 128, procs = 16, iterations = 2 }\n# the paper',
                        'iterations = 10, layout = "horizontal" }\nquick_params = { n = 128, procs = 16, iterations = 2 }\n# the paper', 1)
    (d / "numa.toml").write_text(text)
    run = reproduce([str(d / "numa.toml")], out=str(d / "out"), quick=True, workers=0)[0]
    return run


def test_quick_run_is_the_first_versions_with_issue_16_off(first_version_run):
    """The numbers of pagelab's first NUMA experiment (reproduce_numa.py, --quick): with
    private_ns = repeat_private_ns = 0 and memory_contention = false nothing changed."""
    run = first_version_run
    assert run.error is None
    df = run.analysis.tables["table"].set_index(["table", "row", "column"])
    assert df.loc[("table1", "No migration", "2K(10)"), "mean_s"] == pytest.approx(0.901120, abs=1e-6)
    assert df.loc[("table1", "Foresight", "2K(10)"), "mean_s"] == pytest.approx(0.678668, abs=1e-6)
    assert df.loc[("table1", "2D(B0)", "2K(10)"), "migrations"] == 4
    assert df.loc[("table5", "No migration", "1K(H)"), "mean_s"] == pytest.approx(2.252800, abs=1e-6)
    m = run.analysis.measures
    assert m["t5_horizontal_vs_vertical"]["1K"] == pytest.approx(2.252800 / 0.495616, rel=1e-5)
    assert list(m["t1_foresight_vs_none"]) == ["1K(1)", "1K(10)", "1K(20)", "512(10)", "2K(10)"]
    assert list(m["t6_vs_usage"]) == ["Referenced", "Aging=2", "Aging=3", "Aging=8"]
    # the paper's order of the Table 5 cells its claim compares position by position
    assert list(m["t5_daemon_vs_none"]) == ["1D(B0)", "1D(B50)", "1D(B10000)", "2D(B0)"]


def test_calibrated_quick_run_shrinks_the_horizontal_penalty(quick_run, first_version_run):
    """Issue 16: with each workload's calibrated private work (and the memory modules)
    the horizontal pages' penalty falls (paper 2.4; first version 4.5 at the quick size),
    and every run takes longer than the first version's."""
    run, _ = quick_run
    new = run.analysis.measures["t5_horizontal_vs_vertical"]["1K"]
    old = first_version_run.analysis.measures["t5_horizontal_vs_vertical"]["1K"]
    assert 1.0 < new < old
    a = run.analysis.tables["table"].set_index(["table", "row", "column"])["mean_s"]
    b = first_version_run.analysis.tables["table"].set_index(["table", "row", "column"])["mean_s"]
    # Table 6's placement changed (horizontal -> vertical): not the same runs
    common = [k for k in a.index.intersection(b.index) if k[0] != "table6"]
    shorter = [k for k in common if not a[k] > b[k]]
    assert len(common) > 100 and not shorter, shorter


# ---------------------------------------------------------------- the file and the points

def test_points_are_the_first_versions_runs():
    spec = load_spec(FILE)
    pts = {p.key: p for p in N.points(spec)}
    assert len(pts) == 126 and all(p.mode == "numa" for p in pts.values())
    assert pts["table1 | 2D(B0) | 2K(10)"].config == {"numa": {
        "preset": "software", "history": "usage", "remote_factor": 5.0, "examine_ns": 35000.0,
        "examine_order": "entries", "copy_ns_per_byte": 2625.0, "pte_update_ns": 35000.0, "memory_contention": True, "memory_ns": 1000.0,
        "migration": "daemons", "daemons": 2, "block_us": 0,
        "page_size": 2048, "workload": {"name": "vecmat", "params": {"n": 512, "procs": 16, "repeat": 10}}}}
    cfg = pts["table6 | Aging=8 | 1K"].config["numa"]
    assert cfg["history"] == "aging:8" and cfg["workload"]["params"]["layout"] == "vertical"
    quick = {p.key: p for p in N.points(load_spec(FILE, quick=True))}
    assert quick["table7 | 1D(B50) | 512"].config["numa"]["workload"]["params"] == {"n": 40, "procs": 16, "steps": 20}
    assert quick["table1 | Foresight | 1K(20)"].config["numa"]["workload"]["params"] == \
        {"n": 128, "procs": 8, "repeat": 20}


@pytest.mark.parametrize("change, says", [
    (lambda d: d["table"][0].update(rows=["nosuch"]), "table[0].rows: 'nosuch' is not a [configs] entry"),
    (lambda d: d["table"][0]["paper"].update({"No migration": [1.0]}), "table[0].paper.No migration"),
    (lambda d: d["table"][0]["columns"][0].update(label="1.5K"), "table[0].columns[0].label"),
    (lambda d: d["table"][0]["columns"][0].update(page_size="1K"), "table[0].columns[0].page_size"),
    (lambda d: d["configs"].update(x={"bogus": 1}), "configs.x.bogus: unknown key"),
    (lambda d: d["base"].update(workload={}), "base.workload: unknown key"),
    (lambda d: d["table"][1].update(name="table1"), "table[1].name: 'table1' is used twice"),
    (lambda d: d["table"][0].update(bogus=1), "table[0].bogus: unknown key"),
])
def test_file_mistakes_are_one_line(change, says):
    data = read_toml(FILE)
    change(data)
    with pytest.raises(PagelabError) as err:
        check_spec(data, FILE, N)
    assert says in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_sensitivity_variants_change_only_their_key():
    spec = load_spec(FILE)
    variants = spec_variants(spec)
    assert len(variants) == 13
    base = {p.key: p.config for p in N.points(spec)}
    for v in variants:
        changed = {k for k, cfg in ((p.key, p.config) for p in N.points(v)) if cfg != base[k]}
        assert changed == set(base), v.variant  # a [base] key: every run changes
    seed = [v for v in variants if v.variant == "base.seed = 1"][0]
    assert all(p.config["numa"]["seed"] == 1 for p in N.points(seed))
    copies = [v for v in variants if v.variant == "base.examine_order = copies"][0]
    assert all(p.config["numa"]["examine_order"] == "copies" for p in N.points(copies))


# ---------------------------------------------------------------- the analysis, synthetic

ROWS = {
    "None": {"migration": "none"},
    "Foresight": {"migration": "foresight"},
    "1D(B0)": {"migration": "daemons", "daemons": 1, "block_us": 0},
    "1D(B10000)": {"migration": "daemons", "daemons": 1, "block_us": 10000},
    "1D(B50)": {"migration": "daemons", "daemons": 1, "block_us": 50},
    "2D(B0)": {"migration": "daemons", "daemons": 2, "block_us": 0},
    "Usage": {"migration": "daemons", "history": "usage"},
    "Aging=3": {"migration": "daemons", "history": "aging:3"},
    "Referenced": {"migration": "daemons", "history": "referenced"},
}


def grid(name, rows, columns, time, **cell):
    """A Grid of ``rows`` (ROWS names) by ``columns`` (label -> (page size, params));
    ``time(row, column)`` gives each cell's mean_s, ``cell`` other fields' functions."""
    config = {r: dict(ROWS[r]) for r in rows}
    info = {c: {"page_size": ps, "params": dict(params)} for c, (ps, params) in columns.items()}
    cells = {}
    for r in rows:
        for c in columns:
            rec = {"mean_s": time(r, c), "migrations": 0, "migrations_per_page": 0.0, "lock_wait_share": 0.0,
                   "examination_rate_per_s": 0.0, "pingpongs_per_page": 0.0}
            rec.update({k: f(r, c) for k, f in cell.items()})
            cells[(r, c)] = rec
    return N.Grid(name, name, "w", list(rows), list(columns), config, info, cells)


def test_rows_are_recognised_by_their_configuration():
    g = grid("t", ["None", "1D(B10000)", "Foresight", "2D(B0)", "1D(B0)", "1D(B50)", "Referenced", "Usage",
                   "Aging=3"], {"a": (1024, {})}, lambda r, c: 1.0)
    assert g.none_row() == "None" and g.foresight_row() == "Foresight"
    # Usage has the base history: it is a one-daemon, B0 configuration too
    assert g.one_daemon_rows() == ["1D(B0)", "Usage", "1D(B50)", "1D(B10000)"]
    assert g.by_activity() == ["1D(B10000)", "1D(B50)", "1D(B0)", "Usage", "2D(B0)"]
    assert g.daemon_row(2, 0) == "2D(B0)" and g.daemon_row(1, 50) == "1D(B50)" and g.daemon_row(3, 0) is None
    assert g.usage_row() == "1D(B0)"  # the first daemon row with the Usage history
    assert g.history_variants() == ["Referenced", "Aging=3"]
    assert [N.history_bits(h) for h in ("referenced", "aging:2", "AGING:8", "usage")] == [1, 2, 8, math.inf]


def test_varying_finds_the_columns_that_differ_in_one_thing():
    columns = {"1K(1)": (1024, {"repeat": 1}), "1K(10)": (1024, {"repeat": 10}), "1K(20)": (1024, {"repeat": 20}),
               "512(10)": (512, {"repeat": 10}), "2K(10)": (2048, {"repeat": 10})}
    g = grid("t", ["None"], columns, lambda r, c: 1.0)
    assert N.varying(g, "page_size") == ["512(10)", "1K(10)", "2K(10)"]
    assert N.varying(g, "repeat") == ["1K(1)", "1K(10)", "1K(20)"]
    assert N.varying(grid("t", ["None"], {"a": (1024, {"repeat": 1})}, lambda r, c: 1.0), "repeat") == []


def test_table1_measures_on_a_synthetic_grid():
    columns = {"1K(1)": (1024, {"repeat": 1}), "1K(10)": (1024, {"repeat": 10}), "2K(10)": (2048, {"repeat": 10})}
    times = {"None": [1.0, 2.0, 2.0], "Foresight": [0.99, 1.5, 1.2], "1D(B0)": [1.2, 1.9, 1.8],
             "1D(B50)": [1.1, 2.0, 1.9], "1D(B10000)": [1.05, 2.1, 2.1], "2D(B0)": [1.3, 2.2, 1.7]}
    g = grid("table1", list(times), columns, lambda r, c: times[r][list(columns).index(c)])
    m = N.table1_measures(g)
    assert m["t1_none_vs_first_column"] == {"1K(10)": 2.0, "2K(10)": 2.0}
    assert m["t1_blocking"]["1K(1)"] == pytest.approx([1.2, 1.1, 1.05])  # B0, B50, B10000 over None
    assert m["t1_two_vs_one"]["2K(10)"] == pytest.approx(1.7 / 1.8)
    assert m["t1_best_daemon_vs_none"] == pytest.approx({"1K(1)": 1.05, "1K(10)": 0.95, "2K(10)": 0.85})
    assert m["t1_daemon_wins"] == 2
    assert m["t1_foresight_by_repeat"] == pytest.approx([0.99, 0.75])
    # migrating rows over None at 1K(10), 2K(10): Foresight first, then the daemons
    assert list(m["t1_page_size"]) == ["Foresight", "1D(B0)", "1D(B50)", "1D(B10000)", "2D(B0)"]
    assert m["t1_page_size"]["Foresight"] == pytest.approx([0.75, 0.6])


def test_table5_pairs_placements_and_normalises_migrations():
    columns = {"512": (512, {"layout": "vertical"}), "1K(V)": (1024, {"layout": "vertical"}),
               "1K(H)": (1024, {"layout": "horizontal"}), "2K(H)": (2048, {"layout": "horizontal"})}
    times = {"None": [1.0, 1.1, 2.5, 2.4], "1D(B0)": [1.1, 1.2, 2.4, 2.4], "1D(B10000)": [1.05, 1.1, 2.3, 2.4],
             "2D(B0)": [1.2, 1.1, 2.6, 2.5]}
    g = grid("table5", list(times), columns, lambda r, c: times[r][list(columns).index(c)],
             migrations_per_page=lambda r, c: 0.0 if r == "None" else 5.0)
    m = N.table5_measures(g, iterations=10)
    assert m["t5_horizontal_vs_vertical"] == {"1K": pytest.approx(2.5 / 1.1)}  # 2K(H) has no vertical twin
    assert m["t5_vertical_daemon_vs_none"]["2D(B0)"] == pytest.approx([1.2, 1.0])
    assert m["t5_two_vs_one_vertical"] == pytest.approx({"512": 1.2 / 1.1, "1K(V)": 1.1 / 1.2})
    assert m["t5_none_vertical_spread"] == pytest.approx(0.1)
    assert m["t5_blocking"]["1K(H)"] == pytest.approx(2.3 / 2.4)
    assert m["t5_migrations_per_page_iteration"]["1D(B0)"] == [0.5] * 4
    # the horizontal columns alone: does migration add to the horizontal pages' penalty?
    assert m["t5_horizontal_daemon_vs_none"]["1D(B0)"] == pytest.approx([2.4 / 2.5, 1.0])
    assert m["t5_horizontal_daemon_vs_none"]["2D(B0)"] == pytest.approx([2.6 / 2.5, 2.5 / 2.4])


def test_history_and_wave_measures():
    columns = {"512": (512, {}), "2K": (2048, {})}
    times = {"Usage": [1.0, 2.0], "Referenced": [1.2, 2.1], "Aging=3": [1.1, 2.2]}
    g = grid("table8", list(times), columns, lambda r, c: times[r][list(columns).index(c)])
    by_row, by_col, spreads = N.history_measures(g)
    assert by_row["Referenced"] == pytest.approx({"512": 1.2, "2K": 1.05})
    assert by_col["512"] == pytest.approx([1.2, 1.1])  # by increasing bits
    assert spreads == pytest.approx({"512": 1.2 / 1.1 - 1, "2K": 2.2 / 2.1 - 1})
    assert N.spread([]) is None and N.spread([2.0, 2.0]) == 0.0
    # the wave's two-daemon anomaly: its migrations over the most of any other daemon
    # cell, at least one (no division by zero when the others migrate nothing)
    wave = {"None": [1.0, 1.0], "1D(B0)": [1.1, 1.05], "2D(B0)": [1.2, 1.3]}
    g = grid("table7", list(wave), columns, lambda r, c: wave[r][list(columns).index(c)],
             migrations=lambda r, c: 30 if (r, c) == ("2D(B0)", "2K") else 0)
    m = N.table7_measures(g)
    assert m["t7_two_daemon_largest_page_migrations"] == 30
    assert m["t7_page_size"]["1D(B0)"] == pytest.approx([1.1, 1.05])


def test_activity_series_and_empty_measures_are_dropped():
    columns = {"a": (1024, {}), "b": (2048, {})}
    g = grid("table7", ["None", "2D(B0)", "1D(B0)", "1D(B10000)"], columns, lambda r, c: 1.0,
             lock_wait_share=lambda r, c: {"1D(B10000)": 0.01, "1D(B0)": 0.02, "2D(B0)": 0.04}.get(r, 0.0))
    assert N.by_activity([g], "lock_wait_share") == {"table7 a": [0.01, 0.02, 0.04], "table7 b": [0.01, 0.02, 0.04]}
    # a table without two daemon rows gives no series; a grid set without the paper's
    # tables gives no empty measure (a rule on {} would be judged on nothing)
    lone = grid("table4", ["None", "1D(B0)"], columns, lambda r, c: 1.0)
    m = N.measures_of({"table4": lone})
    assert "lock_wait_by_activity" not in m and "t1_blocking" not in m
    assert set(m) == {"t4_none_s", "t4_daemon_vs_none", "daemon_vs_none_16", "pingpongs_per_page_16"}


def test_pingpongs_per_page_cover_every_daemon_cell_of_the_sixteen_processor_tables():
    columns = {"a": (1024, {}), "b": (2048, {})}
    pp = {("1D(B0)", "a"): 0.5, ("1D(B0)", "b"): 9.0, ("2D(B0)", "a"): 0.0, ("2D(B0)", "b"): 2.0}
    t5 = grid("table5", ["None", "1D(B0)", "2D(B0)"], columns, lambda r, c: 1.0,
              pingpongs_per_page=lambda r, c: pp.get((r, c), 0.0))
    # a history table (not one of the 16-processor configuration tables) is left out
    t6 = grid("table6", ["Usage", "Referenced"], columns, lambda r, c: 1.0, pingpongs_per_page=lambda r, c: 50.0)
    m = N.measures_of({"table5": t5, "table6": t6})
    assert m["pingpongs_per_page_16"] == {"table5": [0.5, 9.0, 0.0, 2.0]}


def test_paper_pairs_take_the_claims_with_a_near_rule():
    spec = load_spec(FILE)
    measures = {"t5_horizontal_vs_vertical": {"1K": 2.0, "2K": 2.1}, "t4_none_s": {"M003": 1.0}}
    pairs = N.paper_pairs(spec.claims, measures)
    assert pairs == {"t5-horizontal": [(2.39, 2.0), (2.36, 2.1)]}  # t4-none-ranks: spearman only
