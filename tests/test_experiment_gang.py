"""The gang experiment on the protocol (experiments/gang.py, gang.toml;
gang-adaptive-paging.txt section 4): a --quick run end to end through the runner, and
the analysis' non-obvious pieces on small synthetic inputs.

The quick run is the first version's quick run (each workload's `quick` sizes, 16 s
jobs, 1.6 s quanta: quick_scale = 0.2) with issue 16's runs (SP x4, MG x2, the clock
baseline beside Linux 2.2.19's), all 90 points, in this process (workers=0): about a
minute on a 2-core machine."""

import copy
import json
import math

import pandas as pd
import pytest

from pagelab._core import PagelabError
from pagelab.experiments import gang as G
from pagelab.experiments.claims import VERDICTS
from pagelab.experiments.protocol import EXPERIMENTS_DIR, check_spec, load_spec, spec_variants
from pagelab.experiments.runner import reproduce

FILE = EXPERIMENTS_DIR / "gang.toml"
#: claims whose measure this file does not produce by design (none since issue 16 runs SP x4)
NOT_RUN = set()


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gang") / "gang"
    run = reproduce(["gang"], out=str(out), quick=True, workers=0)[0]
    return run, out


def test_quick_run_writes_the_ledger_and_figures(quick_run):
    run, out = quick_run
    assert run.error is None
    spec = load_spec(FILE, quick=True)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["experiment"] == "gang" and summary["quick"] and summary["points"] == 90
    claims = pd.read_csv(out / "claims.csv")
    assert list(claims["id"]) == [c.id for c in spec.claims]
    assert set(claims["verdict"]) <= set(VERDICTS)
    # every measure a claim names is produced; only the claims about runs the file does
    # not make are not measured
    for c in spec.claims:
        assert c.measure.split(".")[0] in summary["measures"], c.id
    not_measured = set(claims.loc[claims["verdict"] == "not measured", "id"])
    assert not_measured == NOT_RUN
    assert set(summary["measures"]) == set(G.MEASURES)
    # the figures of the first version: bars of figures 7-9, figure 6's activity
    assert len(summary["figures"]) == 10 and "gang-activity.png" in summary["figures"]
    for fig in summary["figures"]:
        assert (out / fig).stat().st_size > 10_000, fig
        assert (out / fig).with_suffix(".svg").is_file(), fig
    table = pd.read_csv(out / "table.csv")
    assert list(table.columns[:4]) == ["part", "workload", "nodes", "config"]
    assert set(table["part"]) == {"serial", "parallel", "breakdown"}
    assert list(pd.read_csv(out / "sizes.csv")["workload"]) == ["LU", "SP", "CG", "IS", "MG"]


def test_quick_run_physics(quick_run):
    """What must hold whatever the claims' verdicts: batch is the fastest, every
    instance pages under LRU, and LU's serial numbers are the first version's."""
    run, _ = quick_run
    s = run.analysis.summary
    for row in s["serial"] + s["parallel"]:
        lru, all4 = row["LRU"], row["configs"]["so/ao/ai/bg"]
        assert lru["pages_paged"] > 0
        assert row["batch_s"] <= min(lru["completion_s"], all4["completion_s"])
    # the clock baseline beside Linux 2.2.19's: LU's serial LRU run is main's before issue 16
    # (12,429 since issue 15's disk and swap-cache merges; pagelab 0.1 had 12,515, a pin
    # already stale on main when issue 16 began: main's engine gives 12,429 on this run)
    lu = s["beside"][0]
    assert lu["workload"] == "LU" and lu["nodes"] == 1 and lu["LRU"]["pages_paged"] == 12_429
    assert s["serial"][0]["LRU"]["pages_paged"] != 12_515  # Linux 2.2.19's swap_out pages otherwise
    assert [r["nodes"] for r in s["breakdown"]] == [1, 2, 4]
    m = run.analysis.measures
    assert list(m["parallel_overhead_reduction_pct"]) == ["LU x2", "CG x2", "IS x2", "LU x4", "CG x4", "IS x4",
                                                          "MG x2", "SP x4"]
    # SP and MG run on one cluster size only: not in the by-cluster-size series
    assert list(m["parallel_reduction_by_nodes"]) == ["LU", "CG", "IS"]
    assert list(m["clock_parallel_overhead_reduction_pct"]) == list(m["parallel_overhead_reduction_pct"])
    # split data: a node holds its share of an instance plus its copies of the pages next
    # to its share; LU's shrinks with nodes (CG's and IS's, whose vector and buckets are
    # next to everything, hardly do: see gang.toml)
    for name, size in s["sizes"].items():
        for n, d in size["nodes"].items():
            assert size["pages"] / n <= d["node_pages"] <= size["pages"], (name, n, d)
    lu = s["sizes"]["LU"]["nodes"]
    assert lu[4]["node_pages"] < lu[2]["node_pages"] < s["sizes"]["LU"]["pages"]
    assert list(m["lu_all_reduction_pct"]) == ["serial", "2 nodes", "4 nodes"]


# ---------------------------------------------------------------- the file and the points

def test_points_are_the_first_versions_runs():
    spec = load_spec(FILE, quick=True)
    points = G.points(spec)
    keys = [p.key for p in points]
    assert len(keys) == len(set(keys)) == 90 and {p.mode for p in points} == {"gang"}
    cfg = {p.key: p.config for p in points}
    lu = cfg["LU x1 | LRU"]
    size = G.sizes(spec)["LU"]
    assert lu["system"]["frames"] == max(16, round(1.3 * size["pages"]))
    assert lu["gang"]["quantum_s"] == 1.6 and lu["gang"]["mode"] == "gang" and lu["gang"]["mechanisms"] == []
    assert [p["seed"] for p in lu["processes"]] == [0, 1000]
    assert lu["processes"][0]["params"] == {"n": 16, "iterations": 16}  # the quick sizes
    assert "superstep_refs" not in lu["processes"][0]
    assert cfg["LU x4 | so/ao/ai/bg"]["processes"][0]["superstep_refs"] == size["superstep_refs"]
    assert cfg["LU x2 | batch"]["gang"]["mode"] == "batch"
    # issue 16: Linux 2.2.19's reclaim with the clock beside it, split data sized from a
    # node's footprint, SP x4 with a 7/5 quantum, MG x2, IS small against its memory
    assert lu["system"]["reclaim"] == "linux22" and cfg["LU x1 | LRU | clock"]["system"]["reclaim"] == "clock"
    assert cfg["LU x2 | LRU"]["gang"]["partition"] == "split" and lu["gang"]["ai_reads"] == "fault"
    assert cfg["LU x2 | LRU"]["system"]["frames"] == max(16, round(1.3 * size["nodes"][2]["node_pages"]))
    assert cfg["SP x4 | LRU"]["gang"]["quantum_s"] == pytest.approx(1.6 * 1.4) and "MG x2 | LRU" in cfg
    assert "SP x2 | LRU" not in cfg and "MG x4 | LRU" not in cfg
    is_ = G.sizes(spec)["IS"]
    assert cfg["IS x1 | LRU"]["system"]["frames"] == max(16, round(1.3 * 1.3 * is_["pages"]))
    # an instance computes job_s (16 s with --quick) alone
    assert size["cpu_ns_per_ref"] * size["references"] == pytest.approx(16e9)
    # full size: the file's times as they are (no pass over the full-size workloads here)
    full = G.settings(load_spec(FILE))
    assert full["base"]["gang"]["quantum_s"] == 8.0 and full["job_s"] == 80.0 and full["activity_until_s"] == 100


def test_sensitivity_variants_check():
    spec = load_spec(FILE)
    variants = spec_variants(spec)
    assert len(variants) == 18
    ratios = sorted(v.table("setup")["memory_ratio"] for v in variants if v.variant.startswith("setup.memory_ratio"))
    assert ratios == pytest.approx([1.105, 1.495])


@pytest.mark.parametrize("edit, what", [
    (lambda d: d["setup"].update(memory_ratio=2.0), "setup.memory_ratio"),
    (lambda d: d["base"]["system"].update(frames=100), "base.system.frames"),
    (lambda d: d["base"]["gang"].update(mechanisms=["so"]), "base.gang.mechanisms"),
    (lambda d: d["parallel"].update(workloads=["LU", "XX"]), "parallel.workloads[1]"),
    (lambda d: d["breakdown"].update(workload="XX"), "breakdown.workload"),
    (lambda d: d["workload"][1].update(name="LU"), "workload[1].name"),
    (lambda d: d["workload"][0].update(color="red"), "workload[0].color: unknown key"),
    (lambda d: d["workload"][0]["quick"].update(speed=2), "workload[0].quick.speed: unknown key"),
])
def test_file_errors_are_one_line(edit, what):
    spec = load_spec(FILE)
    data = copy.deepcopy(spec.data)
    edit(data)
    with pytest.raises(PagelabError) as err:
        check_spec(data, FILE, G)
    text = str(err.value)
    assert text.startswith("gang.toml: ") and what in text and "\n" not in text


# ---------------------------------------------------------------- the analysis, synthetic

def _raw(t_s, pages_in, switches_s, end_s=10.0, paged=(0, 0)):
    return {"end_ns": int(end_s * 1e9),
            "switches": [{"t_ns": 0, "from": None, "to": 0}] + [{"t_ns": int(s * 1e9), "from": 0, "to": 1}
                                                                 for s in switches_s],
            "nodes": [{"system_series": {"t_s": t_s, "pages_in": pages_in}, "pages_read": paged[0],
                       "pages_written": paged[1], "processes": []}]}


def test_early_share_counts_samples_reaching_into_the_start_of_a_quantum():
    # quantum 4 s, switches at 4 and 8; early = [4, 5) and [8, 9) with fraction 0.25
    t = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    pin = [0, 0, 0, 0, 10, 5, 5, 0, 20, 10]
    # the sample at 5 counts (4, 5]: early; at 9 counts (8, 9]: early; the rest is late
    assert G.early_share(_raw(t, pin, [4, 8]), 4.0, 0.25) == pytest.approx(30 / 50)
    # the initial switch (from None) is not a job switch: nothing before 4 s is early
    assert G.early_share(_raw([1, 2], [7, 0], [4]), 4.0, 0.25) == 0.0
    assert G.early_share(_raw(t, [0] * 10, [4]), 4.0, 0.25) == 0.0


def test_paging_intensity_is_the_rate_while_paging():
    # 10 pages in a 0.5 s sample and 30 in a 1 s sample: 20 and 30 pages/s; idle ones ignored
    raw = _raw([0.5, 1.0, 2.0, 3.0], [10, 0, 30, 0], [])
    assert G.paging_intensity(raw) == pytest.approx(25.0)
    assert G.paging_intensity(_raw([1.0], [0], [])) == 0.0


def test_gap_below_others():
    assert G.gap_below_others({"LU": 84, "CG": 68, "IS": 19}, "IS") == 49
    assert G.gap_below_others({"LU": 84, "CG": 8, "IS": 19}, "IS") == -11  # not the smallest
    assert G.gap_below_others({"LU": None, "IS": 19}, "IS") is None
    assert G.gap_below_others({"LU": 84}, "IS") is None


def _row(workload, nodes, batch, lru, combos, lru_paged=100):
    """A compare() row from completion times (s): batch, LRU, {combo: completion}."""
    r = {"workload": workload, "nodes": nodes, "batch_s": batch,
         "LRU": {"completion_s": lru, "overhead_s": lru - batch, "overhead_pct": 100 * (lru - batch) / lru,
                 "pages_paged": lru_paged}, "configs": {}}
    for name, t in combos.items():
        r["configs"][name] = {"completion_s": t, "overhead_s": t - batch, "overhead_pct": 100 * (t - batch) / t,
                              "overhead_reduction_pct": 100 * ((lru - batch) - (t - batch)) / (lru - batch),
                              "completion_reduction_pct": 100 * (lru - t) / lru}
    return r


def test_breakdown_measures_signs_and_keys():
    combos = {"ai": 130, "so": 125, "so/ao": 128, "so/ao/bg": 120, "so/ao/ai/bg": 110}
    rows = [_row("LU", 1, 100, 150, combos), _row("LU", 2, 100, 160, dict(combos, **{"so/ao": 122})),
            _row("LU", 4, 100, 200, dict(combos, **{"so/ao": 124}))]
    m = G.breakdown_measures(rows)
    # so -> so/ao: slower serial (a loss), faster on 2 and 4 nodes
    assert m["lu_ao_gain_pct"]["serial"] == pytest.approx(100 * (125 - 128) / 125)
    assert [x > 0 for x in m["lu_ao_gain_pct"]["parallel"]] == [True, True]
    assert m["lu_bg_gain_pct"]["serial"] == pytest.approx(100 * (128 - 120) / 128)
    assert m["lu_ai_gain_pct"]["4 nodes"] == pytest.approx(100 * 10 / 120)
    # reductions: serial (150 - 110) -> 80% of 50 s overhead cut; 2 nodes 10/60; 4 nodes 10/100
    assert m["lu_all_reduction_pct"] == pytest.approx({"serial": 80.0, "2 nodes": 100 * 50 / 60, "4 nodes": 90.0})
    assert m["lu_serial_reduction_lead_pct"] == pytest.approx(80.0 - 90.0)
    assert m["lu_lru_overhead_pct"]["serial"] == pytest.approx(100 * 50 / 150)
    assert len(m["lu_lru_overhead_pct"]["parallel"]) == 2
    # all four against the best other combination (so/ao/bg at 120)
    assert m["lu_all_best_margin_pct"]["serial"] == pytest.approx(80.0 - 60.0)
    assert list(m["lu_ai_so_reduction_pct"]) == ["ai", "so"] and len(m["lu_ai_so_reduction_pct"]["ai"]) == 3
    assert G.breakdown_measures([]) == {}


def test_serial_parallel_measures_spread_gap_and_rho():
    serial = [_row(w, 1, 100, lru, {"so/ao/ai/bg": t}) for w, lru, t in
              (("LU", 140, 105), ("CG", 200, 120), ("IS", 120, 116))]
    parallel = [_row(w, n, 100, lru, {"so/ao/ai/bg": t}) for n in (2, 4) for w, lru, t in
                (("LU", 180, 130), ("CG", 150, 140))]
    m = G._serial_parallel_measures(serial, parallel, [2, 4])
    red = m["serial_overhead_reduction_pct"]
    assert red == pytest.approx({"LU": 87.5, "CG": 80.0, "IS": 20.0})
    assert m["serial_is_reduction_gap_pct"] == pytest.approx(60.0)
    assert {k: pytest.approx(v) for k, v in m["parallel_reduction_by_nodes"].items()} == {"LU": [62.5, 62.5],
                                                                                           "CG": [20.0, 20.0]}
    assert m["parallel_cg_reduction_gap_pct"] == pytest.approx({"2 nodes": 42.5, "4 nodes": 42.5})
    assert m["overhead_reduction_max_pct"] == pytest.approx(87.5)
    assert m["overhead_reduction_spread_pct"] == pytest.approx(67.5)
    assert -1.0 <= m["stress_reduction_rho"] <= 1.0
    # without LRU overhead there is no reduction to speak of: not a number, left out
    flat = [_row("LU", 1, 100, 100.0 + 1e-9, {"so/ao/ai/bg": 100.0})]
    flat[0]["configs"]["so/ao/ai/bg"]["overhead_reduction_pct"] = None
    m2 = G._serial_parallel_measures(flat, [], [])
    assert "overhead_reduction_max_pct" not in m2 and "stress_reduction_rho" not in m2


def test_activity_measures():
    t = [1, 2, 3, 4, 5, 6]
    raws = {"LRU": _raw(t, [0, 0, 5, 5, 5, 5], [2], paged=(20, 20)),
            "so/ao/ai/bg": _raw(t, [0, 0, 20, 0, 0, 0], [2], paged=(20, 10))}
    m = G.activity_measures(raws, 4.0, 0.25)
    assert m["activity_early_share_pct"] == pytest.approx({"LRU": 25.0, "so/ao/ai/bg": 100.0})
    assert m["activity_paged_reduction_pct"] == pytest.approx({"so/ao/ai/bg": 25.0})
    assert m["activity_intensity_ratio"] == pytest.approx(4.0)
    assert not math.isnan(m["activity_intensity_ratio"])


class _StandIn:
    """Results for the kernel version's points, from the simulator (the same schema):
    what its analysis does with them, not what the kernel measures."""

    def __init__(self, spec):
        from pagelab.timed import run_engine

        self.raw = {}
        for p in G.points(spec):
            raw = dict(run_engine(p.config, p.key).raw, backend="kernel", kernel="stand-in")
            self.raw[p.key] = raw

    def full(self, key):
        return self.raw[key]


def test_the_kernel_version_runs_the_serial_part_and_leaves_the_parallel_claims_not_measured(tmp_path):
    from pagelab.experiments.claims import evaluate

    spec = load_spec(FILE, quick=True, on="kernel")
    points = G.points(spec)
    # figure 7 (batch, LRU, so/ao/ai/bg per workload) and figure 9's serial row: 19 runs
    assert len(points) == 19 and all(" x1 | " in p.key for p in points)
    k = spec.table("kernel")
    for p in points:
        assert p.mode == "gang" and p.config["gang"]["nodes"] == 1
        assert p.config["kernel"] == {"repeats": k["quick_repeats"], "cpus": k["cpus"], "control_ms": k["control_ms"],
                                      "dedicated": False}
        # simulated seconds made real: the quick quantum 1.6 s x quick_time_scale
        assert p.config["gang"]["quantum_s"] == pytest.approx(8.0 * 0.2 * k["quick_time_scale"])
        assert p.config["system"]["sample_ms"] >= 50.0
    # memory for an instance: memory_ratio x (its pages + the runner's own)
    size = G.sizes(spec)["LU"]
    assert size["frames"] == round(1.3 * (size["pages"] + k["runner_pages"]))
    results = _StandIn(spec)
    a = G.analyse(spec, results)
    assert any("not measured" in line for line in a.lines)
    verdicts = {r.claim.id: r.verdict for r in evaluate(spec.claims, a.measures)}
    parallel = {"parallel-completion", "parallel-less-on-more-nodes", "cg-smallest-parallel", "cg-4-little",
                "sp-4-machines", "more-stress-more-gain", "up-to-90", "reduction-spread", "lu-parallel-lru-overhead",
                "lu-serial-best", "ao-helps-parallel", "mg-2-machines", "fig6-compaction", "fig6-so-compacts",
                "fig6-so-less-paging", "fig6-intensity"}
    for cid in parallel & set(verdicts):
        assert verdicts[cid] == "not measured", cid
    assert all(v == "not measured" for c, v in verdicts.items() if c.startswith("clock-"))
    for cid in ("serial-completion", "lu-serial-lru-overhead", "ao-hurts-serial", "bg-alleviates-serial"):
        assert verdicts[cid] != "not measured", cid
    written = G.figures(spec, a, results, tmp_path)
    assert "gang-serial-completion.png" in written and "gang-activity.png" in written
