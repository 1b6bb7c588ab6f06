"""predictive-replacement.txt on the experiment protocol (experiments/predictive.py and
predictive.toml): a --quick run of the shipped file end to end (all twelve programs at
their small `quick` sizes, about 12 s on two cores: the old quick test ran three
programs), its numbers against the old hand-written module's quick run, and the
analysis' functions on small inputs."""

import copy
import json
import math

import pandas as pd
import pytest

import pagelab
from pagelab.experiments import claims as C
from pagelab.experiments import predictive as P
from pagelab.experiments.protocol import check_spec, load_spec
from pagelab.experiments.runner import experiment_path, reproduce
from pagelab.system import read_toml

#: the old module's --quick run (reproduce_predictive.py, before the port): per program
#: frames, LRU's faults, EELRU's and OPT's faults over LRU's, and the timed system's
#: faults under CLOCK without and with DP-Approx. The port keeps the same physics.
# The replay columns (frames, LRU, EELRU and OPT) are the old module's; the timed
# columns (clock and DP-Approx faults in the timed system) are those of results
# revision 2, whose disk streams and queues requests as the kernel does (issue 15).
# GZIP's row is that of issue 22, where GZIP became SPEC's harness (spec-gzip with
# harness = spec: its buffers reused, OPT 0.57 of LRU where the old stand-in had 0.83).
OLD_QUICK = {
    "IS": (225, 1139, 0.8323, 0.5285, 1211, 1175), "CG": (35, 724, 0.9282, 0.7472, 743, 766),
    "FT": (82, 575, 0.9826, 0.5496, 630, 625), "MG": (146, 1372, 0.6203, 0.3761, 1555, 1286),
    "SP": (223, 546, 0.6832, 0.5018, 744, 769), "BT": (206, 2854, 0.5025, 0.3595, 3072, 3110),
    "LU": (202, 759, 1.1265, 0.6456, 919, 951), "GZIP": (44, 631, 0.9208, 0.5705, 728, 733),
    "WUPWISE": (239, 2282, 0.8352, 0.4023, 2168, 2148), "SWIM": (157, 1165, 0.9511, 0.497, 1374, 1247),
    "MCF": (98, 8363, 1.0112, 0.5278, 9487, 10108), "APSI": (172, 947, 0.887, 0.5597, 1056, 975),
}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("predictive") / "out"
    run = reproduce(["predictive"], out=str(out), quick=True, workers=0)[0]
    return run, out


def test_quick_run_writes_the_ledger_and_every_output(quick_run):
    run, out = quick_run
    assert run.error is None
    spec = run.spec
    summary = json.loads((out / "summary.json").read_text())
    assert summary["experiment"] == "predictive" and summary["quick"] is True
    ledger = pd.read_csv(out / "claims.csv")
    assert list(ledger["id"]) == [c.id for c in spec.claims]
    assert len(ledger) == len(spec.claims) >= 40
    assert set(ledger["verdict"]) <= set(C.VERDICTS)
    for claim in spec.claims:  # every measure a claim names is produced
        assert C.lookup(run.analysis.measures, claim.measure) is not None, claim.measure
        assert claim.measure.split(".")[0] in P.MEASURES
    assert set(run.analysis.measures) == set(P.MEASURES)
    assert summary["figures"] and len(summary["figures"]) >= 19
    for name in summary["figures"]:
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert (out / name).stat().st_size > 5000, name
        assert (out / name).with_suffix(".svg").is_file(), name
    for name in ("table.csv", "replay.csv", "characterization.csv", "claims.json", "experiment.toml"):
        assert (out / name).is_file(), name
    assert summary["analysis"]["acceptance"]["met"], summary["analysis"]["acceptance"]


def test_quick_run_keeps_the_old_numbers(quick_run):
    """Same programs, sizes, memory, policies and timed system as the old module."""
    run, out = quick_run
    table = pd.read_csv(out / "table.csv").set_index("paper_name")
    assert list(table.index) == list(OLD_QUICK)
    for name, (frames, lru, eelru, opt, clock, dp) in OLD_QUICK.items():
        row = table.loc[name]
        assert (row["frames"], row["lru_faults"]) == (frames, lru), name
        assert row["eelru"] == pytest.approx(eelru, abs=1e-4) and row["opt"] == pytest.approx(opt, abs=1e-4), name
        assert (row["timed_clock_faults"], row["timed_dp_faults"]) == (clock, dp), name
    assert table["opt_bounds_all"].all()
    replay = pd.read_csv(out / "replay.csv")
    assert len(replay) == 12 * (3 + 5 + 9 + 3 + 2)
    # the predictive policies' counters reach the analysis (the figure 14 and 18 measures)
    assert all(v is not None for v in run.analysis.measures["dp_under_pct"].values())
    # Last-dynamic's rules side by side at the default threshold (issue 22)
    for column in ("last-dynamic:60,censored", "last-dynamic:60,ended-fails", "default_static", "loo_static",
                   "adaptive_over_static_default", "adaptive_over_static_loo", "dp-approx:0.5 under",
                   "dp-approx:0.5 censored", "dead_list_share last-dynamic:60,ended-fails"):
        assert column in table.columns, column
    assert (table["dead_list_share best dynamic"] <= 1).all()


def test_quick_run_measures_without_hindsight(quick_run):
    """The best-of-many measures come with a fixed default and a leave-one-out choice,
    never better than the choice after the fact."""
    m = quick_run[0].analysis.measures
    for n, best in m["dynamic_best_norm"].items():
        assert best <= m["dynamic_default_norm"][n] + 1e-12 and best <= m["dynamic_loo_norm"][n] + 1e-12
        assert m["predictive_best_norm"][n] <= min(best, m["static_best_norm"][n]) + 1e-12
        assert m["predictive_best_norm"][n] <= m["predictive_loo_norm"][n] + 1e-12
    assert m["predictive_reduction_mean_pct"] >= m["predictive_reduction_mean_loo_pct"]
    assert m["over_eelru_mean_pct"] >= m["over_eelru_mean_loo_pct"]
    assert m["over_eelru_max_pct"] >= max(m["over_eelru_max_default_pct"], m["over_eelru_max_loo_pct"])
    assert m["over_eelru_mean_but_dramatic_pct"] >= m["over_eelru_mean_but_dramatic_loo_pct"]


def test_headline_claims_have_three_readings_with_the_same_rule(quick_run):
    """Issue 22: each claim about a best-of-many headline number also reads the number at
    a fixed default and leave-one-out, under the same rule; the ledger has all three."""
    run, out = quick_run
    claims = {c.id: c for c in run.spec.claims}
    ledger = pd.read_csv(out / "claims.csv").set_index("id")
    heads = [i for i in claims if f"{i}-fixed" in claims]
    assert len(heads) >= 10 and "predictive-mean-48" in heads and "adaptive-beats-lru" in heads
    for i in heads:
        for reading in (f"{i}-fixed", f"{i}-loo"):
            assert claims[reading].rule_text() == claims[i].rule_text(), reading
            assert claims[reading].measure != claims[i].measure, reading
            assert reading in ledger.index


# ---------------------------------------------------------------- the analysis' pieces

def test_best_config_breaks_ties_by_order():
    norms = {0: 0.9, 5: 0.8, 60: 0.8, 10000: 0.8}
    assert P.best_config(norms, [0, 5, 60, 10000]) == 5
    assert P.best_config(norms, [10000, 60, 5, 0]) == 10000


def test_leave_one_out_never_looks_at_the_program():
    """Program A alone likes configuration x; the others like y: A gets y (chosen on the
    others), whatever its own numbers."""
    norms = {"A": {"x": 0.5, "y": 1.0}, "B": {"x": 2.0, "y": 0.5}, "C": {"x": 2.0, "y": 0.5},
             "D": {"x": 2.0, "y": 0.5}}
    assert P.leave_one_out(norms, ["x", "y"]) == {"A": "y", "B": "y", "C": "y", "D": "y"}
    norms["A"] = {"x": 0.001, "y": 1000.0}  # A's own numbers do not move A's choice
    assert P.leave_one_out(norms, ["x", "y"])["A"] == "y"
    # geometric mean: one huge value on one program does not outweigh the rest in B's choice
    norms = {"A": {"x": 0.5, "y": 1.0}, "B": {"x": 0.5, "y": 1.0}, "C": {"x": 100.0, "y": 1.0},
             "D": {"x": 0.5, "y": 1.0}}
    assert P.leave_one_out(norms, ["x", "y"])["B"] == "y"  # others A, C, D: (0.5*100*0.5)^(1/3) = 2.9 > 1
    assert P.leave_one_out(norms, ["x", "y"])["C"] == "x"  # others: 0.5 < 1


def test_repeats_of_a_short_period_count():
    assert P.repeat_pct([1, 2, 3, 1, 2, 3, 1, 2, 3]) == (8, 8)  # within 10: every one after the first
    hits, judged = P.repeat_pct([100, 300, 500, 100, 300, 500], tolerance=10, relative=0.0)
    assert (hits, judged) == (3, 5)  # a period of 3 within the last four
    assert P.repeat_pct([0, 1000, 2000, 3000, 4000, 5000], lags=4) == (0, 5)
    assert P.repeat_pct([1000, 1090], tolerance=10, relative=0.1) == (1, 1)  # 10% of 1090
    assert P.repeat_pct([7]) == (0, 0)


def test_small_statistics():
    assert P.sign_asymmetry_pct([-3, -1, 0, 0, 2, 5]) == pytest.approx(0.0)
    assert P.sign_asymmetry_pct([1, 2, 3, -1]) == pytest.approx(50.0)
    assert P.sign_asymmetry_pct([]) is None
    assert P.top_value_pct([0, 0, 0, 5, 7]) == pytest.approx(60.0)
    low, mid, high = P.cov_shares([0.0, 0.1, 0.5, 1.0, 1.01, 3.0])
    assert (low, mid, high) == pytest.approx((100 * 2 / 6, 100 * 2 / 6, 100 * 2 / 6))
    assert P.cov_shares([]) == (None, None, None)
    assert P.share_pct([1, 9, 10, 11], lambda d: d < 10) == pytest.approx(50.0)
    row = {"under_predictions": 1, "over_predictions": 2, "correct_predictions": 1, "censored_predictions": 4}
    assert P.prediction_shares(row) == {"under": 1 / 4, "over": 2 / 4, "correct": 1 / 4, "censored": 4 / 8}
    assert P.prediction_shares({})["under"] is None and P.prediction_shares({})["censored"] is None
    assert P.dead_list_share({"dead_list_evictions": 3, "lru_evictions": 1}) == 0.75
    assert P.dead_list_share({}) == 0.0
    assert P.table_of([("a", 1), ("b", None), ("c", float("nan")), ("d", 2.5)]) == {"a": 1.0, "d": 2.5}
    assert P._gap({"a": 10.0, "b": 2.0, "c": 4.0}, ["a"]) == pytest.approx(7.0)
    assert P._gap({"a": 10.0}, ["a"]) is None


def test_pages_faulted_once(tmp_path):
    """On the hand trace of tests/test_fault_analysis.py (A, B, C on two frames), every
    page faults twice or more: none has a single residency; a scan of new pages has only
    such pages."""
    path = tmp_path / "hand.csv"
    path.write_text("".join(f"{p}\n" for p in [10, 20, 10, 10, 30, 10, 20, 30, 10]))
    df = pagelab.fault_parameters(str(path), policy="lru", frames=2)
    assert P.touched_once_pct(df) == 0.0
    scan = pagelab.fault_parameters(pagelab.workload("scan", pages=50, passes=1), policy="lru", frames=10)
    assert P.touched_once_pct(scan) == 100.0
    c = P.characterize(df)
    assert c["dead_below_half_refs"] == pytest.approx(25.0)  # D/(L+D) = 1/3, 1, 1, 1
    assert c["dl10_refs"] == pytest.approx(100.0)  # B's two lifetimes: 0 and 0


def test_program_sizes_scale_the_footprint():
    entry = {"params": {"n": 36, "iterations": 5, "m": 64}, "quick": {"params": {"n": 16}},
             "size": {"n": 3, "m": 1}}
    assert P.program_params(entry, False, 1.0) == {"n": 36, "iterations": 5, "m": 64}
    assert P.program_params(entry, True, 1.0) == {"n": 16, "iterations": 5, "m": 64}
    scaled = P.program_params(entry, False, 2.0)
    assert scaled["n"] == round(36 * 2 ** (1 / 3)) and scaled["iterations"] == 5
    assert scaled["m"] == 128  # a power of two stays one
    assert P.program_params(entry, False, 0.5)["m"] == 32


def _data():
    return read_toml(experiment_path("predictive"))


@pytest.mark.parametrize("change, says", [
    (lambda d: d["setup"].update(default_threshold=61), "setup.default_threshold"),
    (lambda d: d["setup"].update(default_k=3), "setup.default_k"),
    (lambda d: d["setup"].update(timed_a=0.3), "setup.timed_a"),
    (lambda d: d["setup"].update(characterize=["nosuch"]), "setup.characterize[0]"),
    (lambda d: d["program"][1].update(paper_name="IS"), "program[1].paper_name"),
    (lambda d: d["program"][0]["size"].update(nosuch=1), "program[0].size.nosuch"),
    (lambda d: d["program"][0]["size"].update(n_keys=0), "program[0].size.n_keys"),
    (lambda d: d["program"][0]["paper"].update(cov_pattern="flat"), "program[0].paper.cov_pattern"),
    (lambda d: d["program"][0].update(memory_ratio=0), "program[0].memory_ratio"),
    (lambda d: d["program"][0].update(bogus=1), "program[0].bogus"),
])
def test_file_mistakes_are_one_line_errors(change, says):
    spec = load_spec(experiment_path("predictive"))
    data = copy.deepcopy(_data())
    change(data)
    with pytest.raises(pagelab.PagelabError, match=says.replace("[", r"\[").replace("]", r"\]")):
        check_spec(data, spec.path, spec.module)


def test_the_file_holds_the_papers_programs():
    spec = load_spec(experiment_path("predictive"))
    programs = spec.table("program")
    assert [p["paper_name"] for p in programs] == list(OLD_QUICK)
    assert {p["workload"] for p in programs} <= {w["name"] for w in pagelab.workloads()}
    # spec-gzip's harness (spec: SPEC's, whose three buffers are Table 1's 192 MB, issue 22)
    # and the parameters that apply only with harness=spec are not sizes (issue 15)
    defaults = {w["name"]: {p["name"]: p["default"] for p in w["params"]
                            if p["name"] != "harness" and not p["help"].startswith("with harness=spec")}
                for w in pagelab.workloads()}
    for p in programs:  # the full sizes are the generators' defaults, written out
        sizes = {k: str(v) for k, v in p["params"].items() if k != "harness" and k in defaults[p["workload"]]}
        assert sizes == defaults[p["workload"]], p["name"]
    gzip = next(p for p in programs if p["paper_name"] == "GZIP")
    assert gzip["params"]["harness"] == "spec" and gzip["params"]["kinds"] == "log,image,binary,random,tarball"
    thresholds = [p["paper"]["threshold"] for p in programs]
    table2 = next(c for c in spec.claims if c.id == "table2-thresholds")
    assert table2.paper_value == thresholds
    assert not math.isnan(sum(thresholds))
