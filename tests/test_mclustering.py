"""`pagelab reproduce mclustering` (mclustering-pageout.txt section 3): the table maths,
the acceptance rule, the figures and the whole command from synthetic results, the
experiment file's one-line errors, and (once the engine has [swap] and reclaim = "bsd")
the real runs."""

import json
from pathlib import Path

import pytest

from conftest import assert_user_error, run_cli

import pagelab
from pagelab import _core, system
from pagelab import reproduce_mclustering as mc
from pagelab.figures.memory import plot_clustering
from pagelab.reproduce import EXPERIMENTS_DIR, experiment_kind, experiment_path

PAPER = {  # sections 3.2 and 3.3, at 1.3, 1.5 and 1.7
    "LU": {"time_improvement_pct": [13, 16, 18], "write_reduction_pct": [36, 38, 41]},
    "SOR": {"time_improvement_pct": [12, 17, 23], "write_reduction_pct": [5, 8, 13]},
}


def _engine_has_swap() -> bool:
    """True once the engine accepts [swap] and system.reclaim = "bsd" (probed with a
    tiny run that bypasses the Python front's top-level check)."""
    if not hasattr(_core, "run_system"):
        return False
    cfg = {"system": {"frames": 16, "reclaim": "bsd"},
           "swap": {"clustering": "mclustering", "read_around": "bsd"},
           "processes": [{"name": "p", "workload": "scan", "params": {"pages": 32, "passes": 2}}]}
    try:
        system.run_engine(cfg, "probe")
    except pagelab.PagelabError as err:
        text = str(err)
        if "swap" in text or "bsd" in text:
            return False
        raise
    return True


needs_swap_engine = pytest.mark.skipif(not _engine_has_swap(),
                                       reason="engine has no [swap] / reclaim = \"bsd\" yet")


# ---------------------------------------------------------------- synthetic results

def fake_raw(time_s, writes, page_ins, write_sizes=None, name="LU"):
    sizes = write_sizes or [0] + [writes] + [0] * 15
    pages = sum(k * v for k, v in enumerate(sizes))
    return {
        "engine_version": "test", "end_ns": int(time_s * 1e9), "cpu_busy_ns": int(time_s * 2e8),
        "disk_busy_ns": int(time_s * 7e8), "disk_reads": page_ins // 2, "disk_writes": writes,
        "pages_read": page_ins + 10, "pages_written": pages, "write_sizes": sizes,
        "read_sizes": [0, page_ins // 2], "prefetched": 10, "prefetch_hits": 7,
        "processes": [{"name": name, "start_ns": 0, "end_ns": int(time_s * 1e9), "runtime_ns": int(time_s * 1e9),
                       "dedicated_ns": int(1e9), "slowdown": time_s, "references": 1000, "records": 1000,
                       "major_faults": page_ins, "minor_faults": 5, "page_ins": page_ins, "page_outs": pages,
                       "token_grabs": 0, "token_held_ns": 0, "suspended_ns": 0}],
    }


def synthetic_rows(reductions=(30, 35, 40), pagein_delta=(0.02, -0.03, 0.05)):
    entry = {"name": "LU", "paper": dict(PAPER["LU"], page_ins="comparable")}
    ratios, frames, runs = [1.3, 1.5, 1.7], [240, 209, 184], {}
    for ratio, red, dp in zip(ratios, reductions, pagein_delta):
        bsd_sizes = [0, 600, 200, 100, 50] + [10] * 12
        mcl_sizes = [0, 50, 20, 10, 5] + [5] * 11 + [400, 3]  # a 17-page write: the "17+" bar
        writes = 1000
        runs[ratio] = {"bsd": fake_raw(10.0, writes, 2000, bsd_sizes),
                       "mclustering": fake_raw(8.5, int(round(writes * (1 - red / 100))),
                                               int(round(2000 * (1 + dp))), mcl_sizes)}
    return entry, ratios, frames, runs


def test_compare_percentages():
    c = mc.compare({"time_s": 100.0, "disk_writes": 1000, "page_ins": 500},
                   {"time_s": 84.0, "disk_writes": 620, "page_ins": 510})
    assert c["time_improvement_pct"] == pytest.approx(16.0)
    assert c["write_reduction_pct"] == pytest.approx(38.0)
    assert c["page_in_diff_pct"] == pytest.approx(2.0)
    c = mc.compare({"time_s": 0, "disk_writes": 0, "page_ins": 0}, {"time_s": 1, "disk_writes": 1, "page_ins": 1})
    assert c == {"time_improvement_pct": None, "write_reduction_pct": None, "page_in_diff_pct": None}


def test_frames_for_ratio():
    assert [mc.frames_for(1300, r) for r in (1.3, 1.5, 1.7)] == [1000, 867, 765]
    assert mc.frames_for(1, 1.7) == 1


def test_write_size_bins():
    labels, counts = mc.write_size_bins([0, 5, 0, 2] + [0] * 12 + [9], 16)
    assert labels == [str(k) for k in range(1, 17)] and counts[0] == 5 and counts[2] == 2 and counts[15] == 9
    labels, counts = mc.write_size_bins([0, 1] + [0] * 15 + [4, 0, 6], 16)
    assert labels[-1] == "17+" and counts[-1] == 10 and len(counts) == 17
    assert mc.write_size_bins([], 4) == (["1", "2", "3", "4"], [0, 0, 0, 0])


def test_workload_rows_and_table_layout():
    entry, ratios, frames, runs = synthetic_rows()
    rows = mc.workload_rows(entry, ratios, frames, runs)
    assert [r["ratio"] for r in rows] == ratios
    assert [round(r["ours"]["write_reduction_pct"]) for r in rows] == [30, 35, 40]
    assert rows[0]["ours"]["time_improvement_pct"] == pytest.approx(15.0)
    assert rows[1]["paper"] == {"time_improvement_pct": 16, "write_reduction_pct": 38, "page_ins": "comparable"}
    assert rows[0]["mclustering"]["prefetch_hits"] == 7
    w = {"name": "LU", "footprint_pages": 313, "rows": rows}
    columns, table = mc.figure_layout([w])
    assert columns == mc.FIGURE_COLUMNS and len(table) == 3
    assert table[0] == ["LU", "1.3", "240", "10.00", "8.50", "15%", "13%", "1,000", "700", "30%", "36%",
                        "2,000", "2,040", "+2%", "comparable"]
    assert table[1][13] == "-3%"
    csv = mc.table_csv_rows([w])
    assert len(csv) == 3 and csv[2]["paper_write_reduction_pct"] == 41 and csv[2]["bsd_disk_writes"] == 1000
    assert "bsd_write_sizes" not in csv[0]


def _workload(reductions, deltas, name="LU"):
    entry, ratios, frames, runs = synthetic_rows(reductions, deltas)
    return {"name": name, "rows": mc.workload_rows(entry, ratios, frames, runs)}


def test_acceptance_met():
    acc = mc.acceptance([_workload((30, 35, 40), (0, 0.05, -0.09)), _workload((5, 8, 13), (0, 0, 0), "SOR")])
    assert acc["met"], acc
    line = mc.acceptance_line(acc)
    assert line.startswith("acceptance: LU: fewer writes at 3 of 3 ratios") and line.endswith(": met")


@pytest.mark.parametrize("reductions, deltas, failed", [
    ((30, 35, -2), (0, 0, 0), "fewer_writes"),      # more writes at 1.7
    ((30, 35, 40), (0, 0.12, 0), "page_ins_within"),  # page-ins 12% above BSD's
    ((30, 28, 40), (0, 0, 0), "gap_grows"),   # the gap shrinks from 1.3 to 1.5
    ((30, 30, 30), (0, 0, 0), "gap_grows"),   # and never grows
])
def test_acceptance_not_met(reductions, deltas, failed):
    acc = mc.acceptance([_workload(reductions, deltas), _workload((5, 8, 13), (0, 0, 0), "SOR")])
    assert not acc["met"]
    lu = acc["checks"][0]
    assert not lu["met"] and acc["checks"][1]["met"]
    value = lu[failed]
    assert value is False or not all(value)
    assert mc.acceptance_line(acc).endswith("NOT met")


def test_plot_clustering_from_synthetic_rows(tmp_path):
    entry, ratios, frames, runs = synthetic_rows()
    rows = mc.workload_rows(entry, ratios, frames, runs)
    plot_clustering(rows, ["BSD VM", "mClustering"], tmp_path / "lu.png", title="LU", dist_ratio=1.5)
    assert (tmp_path / "lu.png").stat().st_size > 5000
    # no write_sizes (an older result): an empty distribution, not an error
    for r in rows:
        for k in ("bsd", "mclustering"):
            r[k]["write_sizes"] = []
    plot_clustering(rows, ["BSD VM", "mClustering"], tmp_path / "empty.png", title="LU")
    assert (tmp_path / "empty.png").stat().st_size > 5000


def test_run_config_layers_base_config_and_process():
    base = {"system": {"page_size": 4096, "reclaim": "bsd"}, "swap": {"max_cluster": 16, "read_around": "bsd"}}
    cfg = mc.run_config(base, {"label": "mClustering", "swap": {"clustering": "mclustering"}},
                        {"name": "LU", "workload": "lu", "params": {"n": 200}}, 209)
    assert cfg["system"] == {"page_size": 4096, "reclaim": "bsd", "frames": 209}
    assert cfg["swap"] == {"max_cluster": 16, "read_around": "bsd", "clustering": "mclustering"}
    assert "label" not in cfg and "clustering" not in base["swap"]
    eng = mc.engine_config(cfg, "x", Path("."))
    assert eng["swap"]["clustering"] == "mclustering" and eng["processes"][0]["params"] == {"n": 200}


def test_workload_process_quick():
    entry = {"name": "SOR", "workload": "sor", "params": {"n": 1000, "iterations": 8}, "cpu_ns_per_ref": 20.0,
             "quick": {"params": {"n": 300}}, "paper": {}, "paper_name": "SOR"}
    assert mc.workload_process(entry, False) == {"name": "SOR", "workload": "sor",
                                                 "params": {"n": 1000, "iterations": 8}, "cpu_ns_per_ref": 20.0}
    assert mc.workload_process(entry, True)["params"] == {"n": 300, "iterations": 8}


# ---------------------------------------------------------------- the experiment file

def test_experiment_file_has_the_papers_numbers():
    path = experiment_path("mclustering")
    assert path.parent == EXPERIMENTS_DIR and experiment_kind(path) == "mclustering"
    assert experiment_kind(experiment_path("token-lru")) == "token-lru"
    data = mc.load_mclustering(path)
    assert data["experiment"]["ratios"] == [1.3, 1.5, 1.7]
    assert [w["name"] for w in data["workload"]] == ["LU", "SOR"]
    assert [w["workload"] for w in data["workload"]] == ["lu", "sor"]
    for w in data["workload"]:
        assert {k: w["paper"][k] for k in PAPER[w["name"]]} == PAPER[w["name"]]
        # section 3.1's design: fixed memory, one problem size per ratio, growing
        assert w["frames"] > 0 and len(w["sizes"]) == 3 and "cpu_ns_per_ref" in w
        assert [s["n"] for s in w["sizes"]] == sorted(s["n"] for s in w["sizes"])
        assert w["quick"]["frames"] < w["frames"] and len(w["quick"]["sizes"]) == 3
    assert data["base"]["system"]["reclaim"] == "bsd"
    assert data["base"]["swap"]["read_around"] == "bsd"
    assert data["config"]["bsd"]["swap"]["clustering"] == "bsd"
    assert data["config"]["mclustering"]["swap"]["clustering"] == "mclustering"


GOOD = """\
[experiment]
name = "m"
kind = "mclustering"
ratios = [1.3, 1.5, 1.7]

[base.system]
reclaim = "bsd"

[config.bsd]
swap = { clustering = "bsd" }
[config.mclustering]
swap = { clustering = "mclustering" }

[[workload]]
name = "LU"
workload = "lu"
params = { n = 100 }
"""


def test_good_minimal_file(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(GOOD)
    assert mc.load_mclustering(path)["workload"][0]["name"] == "LU"


@pytest.mark.parametrize("old, new, fragments", [
    ('kind = "mclustering"', 'kind = "mclusters"', ["experiment.kind", "mclusters"]),
    ("ratios = [1.3, 1.5, 1.7]", "ratios = [1.5, 1.3]", ["experiment.ratios", "increasing"]),
    ("ratios = [1.3, 1.5, 1.7]", "ratios = 1.5", ["experiment.ratios"]),
    ("ratios = [1.3, 1.5, 1.7]", "ratios = [1.3, 1.7]\ndistribution_ratio = 1.5",
     ["experiment.distribution_ratio"]),
    ("[base.system]", "[base.schedular]", ["base", "schedular"]),
    ('reclaim = "bsd"', 'reclaim = "bsd"\nframes = 100', ["base.system.frames"]),
    ("[config.mclustering]", "[config.mclusterin]", ["config", "mclusterin"]),
    ("swap = { clustering = \"bsd\" }", "swapp = { clustering = \"bsd\" }", ["config.bsd", "swapp"]),
    ('workload = "lu"', 'workload = "lu"\nparam = { n = 3 }', ["workload 'LU'", "param"]),
    ('workload = "lu"', 'workload = "lu"\npaper = { write_reduction_pct = [36, 38] }',
     ["workload 'LU'.paper.write_reduction_pct", "3 numbers"]),
    ('workload = "lu"', 'workload = "lu"\nquick = { n = 3 }', ["workload 'LU'.quick", "'n'"]),
    ('name = "LU"\nworkload = "lu"', 'name = "LU"\ntrace = "x.plt"', ["workload 'LU'"]),
])
def test_bad_experiment_file_is_one_line(tmp_path, old, new, fragments):
    assert old in GOOD
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(pagelab.PagelabError) as err:
        mc.load_mclustering(path)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("bad.toml: "), msg
    for f in fragments:
        assert f in msg, (f, msg)


def test_bad_file_through_the_cli(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(GOOD + '\n[[workload]]\nname = "LU"\nworkload = "sor"\n')
    r = run_cli("reproduce", path, "--out", tmp_path / "out")
    assert_user_error(r, "bad.toml", "workload 'LU'", "twice")
    assert not (tmp_path / "out").exists()


def test_unknown_kind_through_the_cli(tmp_path):
    path = tmp_path / "k.toml"
    path.write_text(GOOD.replace('kind = "mclustering"', 'kind = "nope"'))
    r = run_cli("reproduce", path)
    assert_user_error(r, "k.toml", "experiment.kind", "nope")


# ---------------------------------------------------------------- the command, engine faked

def _fake_engine(cfg, name, progress=None):
    """A stand-in for the engine: mClustering writes fewer, larger chunks, more so on
    less memory; page-ins equal."""
    frames = cfg["system"]["frames"]
    n = cfg["processes"][0]["params"]["n"]
    footprint = n * n * 8 / 4096                             # one n x n array of doubles
    pressure = max(footprint / frames - 1.0, 0.05)           # about 0.3, 0.5, 0.7
    writes = int(5000 * pressure)
    page_ins = int(8000 * pressure)
    if cfg["swap"]["clustering"] == "mclustering":
        red = 0.2 + 0.3 * pressure
        sizes = [0] * 17
        sizes[16] = int(writes * (1 - red))
        return system.SystemResult(fake_raw(10 * pressure * (1 - red / 3), sizes[16], page_ins, sizes,
                                            cfg["processes"][0]["name"]))
    sizes = [0, writes // 2, writes // 4, writes - writes // 2 - writes // 4] + [0] * 13
    return system.SystemResult(fake_raw(10 * pressure, writes, page_ins, sizes, cfg["processes"][0]["name"]))


def test_reproduce_with_a_fake_engine(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(mc, "run_engine", _fake_engine)
    out = tmp_path / "mc"
    assert mc.run_mclustering(experiment_path("mclustering"), str(out), quick=True, progress=False) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert [w["name"] for w in summary["workloads"]] == ["LU", "SOR"]
    for w, frames in zip(summary["workloads"], (80, 400)):
        assert w["frames"] == [frames] * 3
        assert w["footprints"] == sorted(w["footprints"]) and w["footprints"][0] > frames
    for w in summary["workloads"]:
        assert [r["ratio"] for r in w["rows"]] == [1.3, 1.5, 1.7]
        assert (out / w["figure"]).stat().st_size > 5000
        assert w["distribution"]["ratio"] == 1.5 and w["distribution"]["mclustering"]["counts"][15] > 0
    assert summary["acceptance"]["met"], summary["acceptance"]
    assert summary["acceptance"]["line"] in printed and "time improvement" in printed
    assert (out / "table.csv").read_text().startswith("workload,ratio,")
    assert len(list((out / "runs").glob("*.json"))) == 12


# ---------------------------------------------------------------- with the engine

@needs_swap_engine
def test_reproduce_mclustering_quick(tmp_path):
    out = tmp_path / "mc"
    r = run_cli("reproduce", "mclustering", "--quick", "--out", out, timeout=1800)
    assert r.code == 0, r.err
    summary = json.loads((out / "summary.json").read_text())
    assert [w["name"] for w in summary["workloads"]] == ["LU", "SOR"]
    for w in summary["workloads"]:
        assert [r_["ratio"] for r_ in w["rows"]] == [1.3, 1.5, 1.7]
        assert w["frames"] == sorted(w["frames"], reverse=True)
        for row in w["rows"]:
            for cfg in ("bsd", "mclustering"):
                m = row[cfg]
                assert m["disk_writes"] > 0 and m["time_s"] > 0
                sizes = m["write_sizes"]
                assert sum(sizes) == m["disk_writes"]
                assert sum(k * v for k, v in enumerate(sizes)) == m["pages_written"]
                assert m["prefetch_hits"] <= m["prefetched"]
            # mClustering's chunks never exceed its buffer (buffer_pages = 16)
            assert sum(row["mclustering"]["write_sizes"][17:]) == 0, (w["name"], row["ratio"])
        assert (out / w["figure"]).stat().st_size > 5000
    assert "acceptance:" in r.out and "time improvement" in r.out
    assert "line" in summary["acceptance"] and isinstance(summary["acceptance"]["met"], bool)

