"""The mclustering experiment on the protocol (mclustering-pageout.txt figures 3, 4 and
section 3.4): a --quick run through the runner and its outputs, the point
configurations (the same engine runs as the experiment's first version), and the
analysis' arithmetic on synthetic numbers.

The quick run is the file's own --quick: frames x quick_scale (LU 80, SOR 400 frames)
on each workload's quick_sizes, section 3.4's sequential writer at a third of its
pages; 18 engine runs, about 5 s on two cores."""

import csv
import json
from pathlib import Path

import pytest

import pagelab
from pagelab.experiments import claims as claims_mod
from pagelab.experiments import mclustering as mc
from pagelab.experiments.protocol import load_spec, spec_variants
from pagelab.experiments.runner import experiment_path, reproduce
from pagelab.figures.clustering import plot_clustering, write_size_bins

FILE = experiment_path("mclustering")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("mclustering") / "quick"
    run = reproduce(["mclustering"], out=str(out), quick=True, workers=0)[0]
    return run, out


def test_quick_run_writes_the_ledger_and_figures(quick_run):
    run, out = quick_run
    assert run.error is None
    summary = json.loads((out / "summary.json").read_text())
    assert summary["experiment"] == "mclustering" and summary["quick"] is True
    assert summary["points"] == 18
    spec = load_spec(FILE)
    with open(out / "claims.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["id"] for r in rows] == [c.id for c in spec.claims]
    assert all(r["verdict"] in claims_mod.VERDICTS for r in rows)
    # every measure a claim names is produced (a number or a table of numbers)
    for c in spec.claims:
        value = claims_mod.lookup(summary["measures"], c.measure)
        assert value is not None and claims_mod.usable(value), c.measure
    assert not any(r["verdict"] == "not measured" for r in rows)
    for name in ("mclustering-LU.png", "mclustering-SOR.png", "mclustering-section34.png"):
        assert name in summary["figures"]
        assert (out / name).stat().st_size > 10000, name
        assert (out / name).with_suffix(".svg").is_file()
    for table in ("table.csv", "write_sizes.csv", "section34.csv"):
        assert (out / table).stat().st_size > 100


def test_quick_run_numbers_hold_together(quick_run):
    run, out = quick_run
    m = run.analysis.measures
    assert list(m["time_improvement_pct"]) == ["LU", "SOR"]
    assert all(len(v) == 3 for v in m["write_reduction_pct"].values())
    table = run.analysis.tables["table"]
    assert list(table["ratio"]) == [1.3, 1.5, 1.7] * 2
    assert set(table["frames"]) == {80, 400}      # frames x quick_scale, fixed per workload
    # the footprints are the nominal ratio times the frames (within 2%)
    assert ((table["achieved_ratio"] - table["ratio"]).abs() / table["ratio"] < 0.02).all()
    for cfg in ("bsd", "mclustering"):
        assert (table[f"{cfg}_disk_writes"] > 0).all()
        assert (table[f"{cfg}_pages_written"] >= table[f"{cfg}_disk_writes"]).all()
    sizes = run.analysis.tables["write_sizes"]
    # mClustering never writes more than its 16-page buffer at once
    assert sizes[sizes.config == "mclustering"]["pages_per_write"].max() <= 16
    # per run, the size distribution adds up to the disk writes
    lu = sizes[(sizes.workload == "LU") & (sizes.ratio == 1.5) & (sizes.config == "bsd")]
    assert lu["disk_writes"].sum() == int(table[(table.workload == "LU") & (table.ratio == 1.5)]["bsd_disk_writes"].iloc[0])
    assert set(run.analysis.tables["section34"]["situation"]) == {"fresh swap area", "fragmented swap area",
                                                                  "sequential writer"}
    assert len(run.analysis.lines) == 2 and run.analysis.views[0].readme


def test_points_are_the_first_versions_engine_runs():
    """The full-size runs of figures 3 and 4, as the experiment ran them before the protocol,
    on FreeBSD 8.2's VM and the paper's drive since issue 15."""
    spec = load_spec(FILE)
    points = {p.key: p for p in mc.points(spec)}
    assert len(points) == 18
    lu = points["LU | 1.5 | mclustering"].config
    assert lu["system"] == {"page_size": 4096, "reclaim": "freebsd8", "sample_ms": 1000.0, "seed": 0, "frames": 240,
                            "freebsd": {"memory_pages": 262144}}
    assert lu["disk"] == {"preset": "barracuda-2011"}
    assert lu["swap"] == {"max_cluster": 16, "cluster_back": 8, "buffer_pages": 16, "read_around": "bsd",
                          "read_window": 16, "fragmentation": 0.0, "clustering": "mclustering"}
    assert lu["processes"] == [{"name": "LU", "workload": "lu", "params": {"n": 429}, "cpu_ns_per_ref": 20.0}]
    sor = points["SOR | 1.7 | bsd"].config
    assert sor["system"]["frames"] == 1200 and sor["swap"]["clustering"] == "bsd"
    assert sor["processes"][0]["params"] == {"n": 1021, "iterations": 8}
    frag = points["section34 fragmented | SOR | mclustering"].config
    assert frag["swap"]["fragmentation"] == 0.8 and frag["processes"][0]["params"]["n"] == 960
    seq = points["section34 sequential | bsd"].config
    assert seq["system"]["frames"] == 2000      # 3,000 pages / 1.5
    quick = {p.key: p for p in mc.points(load_spec(FILE, quick=True))}
    assert quick["LU | 1.3 | bsd"].config["system"]["frames"] == 80
    assert quick["SOR | 1.3 | bsd"].config["processes"][0]["params"] == {"n": 516, "iterations": 3}
    assert quick["section34 sequential | bsd"].config["processes"][0]["params"]["pages"] == 1000


def test_sensitivity_variants_change_what_they_say():
    spec = load_spec(FILE)
    variants = spec_variants(spec)
    assert 6 <= len(variants) <= 12
    by_label = {v.variant: v for v in variants}
    small = {p.key: p.config for p in mc.points(by_label["workload.*.frames x 0.85"])}
    assert small["LU | 1.3 | bsd"]["system"]["frames"] == 204 and small["SOR | 1.3 | bsd"]["system"]["frames"] == 1020
    frag = {p.key: p.config for p in mc.points(by_label["section34.fragmentation = 0.9"])}
    assert frag["section34 fragmented | LU | bsd"]["swap"]["fragmentation"] == 0.9
    assert frag["LU | 1.5 | bsd"]["swap"]["fragmentation"] == 0.0


def test_every_claims_rule_can_fail():
    for c in load_spec(FILE).claims:
        for rule in (c.rule, c.partly):
            if rule is not None:
                ok, _ = rule.holds(rule.counterexample(c.paper_value), c.paper_value)
                assert not ok, c.id


# ---------------------------------------------------------------- the arithmetic

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
    labels, counts = write_size_bins([0, 5, 0, 2] + [0] * 12 + [9], 16)
    assert labels == [str(k) for k in range(1, 17)] and counts[0] == 5 and counts[2] == 2 and counts[15] == 9
    labels, counts = write_size_bins([0, 1] + [0] * 15 + [4, 0, 6], 16)
    assert labels[-1] == "17+" and counts[-1] == 10 and len(counts) == 17
    assert write_size_bins([], 4) == (["1", "2", "3", "4"], [0, 0, 0, 0])


def test_plot_clustering_from_plain_numbers(tmp_path):
    def run(time_s, writes, sizes):
        return {"time_s": time_s, "disk_writes": writes, "page_ins": 2000, "write_sizes": sizes}
    rows = [{"ratio": r, "bsd": run(10.0, 1000, [0, 600, 200, 100, 50] + [10] * 12),
             "mclustering": run(8.5, 700 - i, [0, 50, 20] + [5] * 13 + [400, 3])}
            for i, r in enumerate((1.3, 1.5, 1.7))]
    plot_clustering(rows, ["BSD VM", "mClustering"], tmp_path / "lu.png", title="LU", dist_ratio=1.5)
    assert (tmp_path / "lu.png").stat().st_size > 5000 and (tmp_path / "lu.svg").is_file()
    for r in rows:  # no write sizes (an older result): an empty distribution, not an error
        for k in ("bsd", "mclustering"):
            r[k]["write_sizes"] = []
    plot_clustering(rows, ["BSD VM", "mClustering"], tmp_path / "empty.png", title="LU")
    assert (tmp_path / "empty.png").stat().st_size > 5000


def _sizes(**by_pages):
    out = [0] * 17
    for k, v in by_pages.items():
        out[int(k[1:])] = v
    return out


def test_size_measures():
    bsd = _sizes(p1=600, p2=200, p3=100, p4=100, p8=10, p10=20, p16=50)    # 1,080 writes
    mcl = _sizes(p1=60, p2=200, p3=50, p4=0, p8=5, p10=30, p16=40, p15=40)
    s = mc.size_measures(bsd, mcl)
    assert s["bsd_few_pages_write_share_pct"] == pytest.approx(100 * 1000 / 1080)
    assert s["mcl_modal_write_pages"] == 2
    assert s["one_page_write_reduction_pct"] == pytest.approx(90.0)
    small = s["small_write_reduction_pct"]
    assert len(small) == 7 and small[:4] == [pytest.approx(90.0), 0.0, 50.0, 100.0]
    assert small[4] is None         # no 5-page writes under BSD: no percentage (not measured)
    assert s["mid_write_change"] == [-5, 0, 10, 0, 0, 0, 0, 40]   # sizes 8..15, counts (15: none under BSD VM)
    assert s["full_write_change"] == -10


def test_modal_pages_prefers_the_larger_size_on_a_tie():
    assert mc.modal_pages(_sizes(p3=7, p16=7)) == 16
    assert mc.modal_pages(_sizes(p3=8, p16=7)) == 3
    assert mc.modal_pages([0] * 17) is None


def test_distribution_distance():
    a = _sizes(p1=50, p16=50)
    assert mc.largest_distance([a, a]) == 0.0
    assert mc.largest_distance([_sizes(p1=10), _sizes(p16=3)]) == pytest.approx(1.0)
    # 1-page share 0.5 -> 0.3 -> 0.5: the largest pair differs by 0.2
    assert mc.largest_distance([a, _sizes(p1=30, p16=70), _sizes(p1=5, p16=5)]) == pytest.approx(0.2)
    assert mc.largest_distance([a, [0] * 17]) is None


def test_benefit_kept():
    assert mc.benefit_kept_pct(70.0, 7.0) == pytest.approx(10.0)
    assert mc.benefit_kept_pct(70.0, -3.5) == pytest.approx(-5.0)
    assert mc.benefit_kept_pct(0.0, 5.0) is None and mc.benefit_kept_pct(None, 5.0) is None


# ---------------------------------------------------------------- the file

def _write(tmp_path: Path, text: str, old: str, new: str) -> Path:
    assert old in text, old
    path = tmp_path / "mclustering.toml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old, new, fragments", [
    ("ratios = [1.3, 1.5, 1.7]", "ratios = [1.5, 1.3, 1.7]", ["setup.ratios", "increasing"]),
    ("distribution_ratio = 1.5", "distribution_ratio = 1.4", ["setup.distribution_ratio", "one of the ratios"]),
    ("quick_sizes = [{ n = 230 }, { n = 247 }, { n = 264 }]", "quick_sizes = [{ n = 230 }]",
     ["workload[0].quick_sizes", "3 tables"]),
    ("frames = 240\n", "", ["workload[0]", "frames and sizes together"]),
    ("write_reduction_pct = [36, 38, 41]", "write_reduction_pct = [36, 38]",
     ["workload[0].paper.write_reduction_pct", "3 numbers"]),
    ('[config.mclustering]\nlabel = "mClustering"', '[config.mclusterin]\nlabel = "mClustering"',
     ["config", "mclusterin"]),
    ("fragmentation = 0.8 ", "fragmentation = 0.95 ", ["section34.fragmentation"]),
])
def test_bad_file_is_one_line(tmp_path, old, new, fragments):
    path = _write(tmp_path, FILE.read_text(), old, new)
    with pytest.raises(pagelab.PagelabError) as err:
        load_spec(path)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("mclustering.toml: "), msg
    for f in fragments:
        assert f in msg, (f, msg)
