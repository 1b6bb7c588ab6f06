"""token-lru on the experiment protocol (token-ordered-lru.txt Table 2, figures 6-16,
section 5.4): the file holds Table 2 as printed, the measures are per program in the
paper's order, a --quick run writes its ledger, tables, figures and report, and the
command's mistakes are one line."""

import csv
import json

import pytest

from conftest import assert_user_error, run_cli

from pagelab.experiments import claims as C
from pagelab.experiments.common import fmt_pct, reduction_pct, scale_value
from pagelab.experiments.protocol import EXPERIMENTS_DIR, load_spec
from pagelab.experiments.runner import reproduce

PAPER = {  # Table 2 of token-ordered-lru.txt
    "gzip/vortex3": ([328551, 294038], [179908, 59945], [45, 80], [5.23, 3.85], [2.63, 1.83], [50, 52]),
    "bit-r/gcc": ([108352, 139807], [86467, 25406], [20, 82], [2.69, 3.63], [2.08, 2.25], [23, 38]),
    "vortex3/gcc": ([248045, 275982], [51749, 12425], [79, 95], [3.37, 5.61], [1.54, 1.85], [54, 67]),
    "vortex1/vortex3": ([193399, 208342], [13842, 76171], [93, 63], [3.58, 3.33], [1.95, 2.08], [46, 38]),
    "LU-1/LU-2": ([138372, 77680], [17999, 168215], [87, -117], [3.57, 3.40], [2.57, 2.99], [28, 12]),
}
KEYS = ("lru_faults", "token_faults", "fault_reduction_pct", "lru_slowdown", "token_slowdown",
        "slowdown_reduction_pct")


def test_the_file_holds_table2_as_printed():
    spec = load_spec(EXPERIMENTS_DIR / "token-lru.toml")
    assert [p["name"] for p in spec.table("pair")] == list(PAPER)
    for p in spec.table("pair"):
        assert p["paper"] == dict(zip(KEYS, PAPER[p["name"]]))
        assert len(p["process"]) == 2
    assert spec.table("setup")["policies"][:2] == ["none", "paper"]
    assert [p["units"] for p in spec.table("section54")["process"]] == [53, 58]


@pytest.mark.parametrize("pair", list(PAPER))
def test_reductions_give_the_papers_percentages(pair):
    lf, tf, fr, ls, ts, sr = PAPER[pair]
    assert [fmt_pct(reduction_pct(a, b)) for a, b in zip(lf, tf)] == [f"{v}%" for v in fr]
    assert [fmt_pct(reduction_pct(a, b)) for a, b in zip(ls, ts)] == [f"{v}%" for v in sr]


def test_reduction_and_scaling_edges():
    assert reduction_pct(77680, 168215) == pytest.approx(-116.55, abs=0.01)
    assert reduction_pct(0, 5) is None and fmt_pct(None) == "n/a"
    assert scale_value(524288, 0.5) == 262144      # powers of two stay powers of two
    assert scale_value(300, 0.5) == 150 and scale_value(1, 0.1) == 1
    assert scale_value(1.07, 0.5) == pytest.approx(0.535)


def test_claims_paper_values_are_table2():
    spec = load_spec(EXPERIMENTS_DIR / "token-lru.toml")
    by_id = {c.id: c for c in spec.claims}
    assert by_id["fault-ranks"].paper_value == [v for p in PAPER.values() for v in p[2]]
    assert by_id["slowdown-magnitude"].paper_value == [v for p in PAPER.values() for v in p[5]]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("tl") / "out"
    (run,) = reproduce(["token-lru"], out=str(out), quick=True, workers=0)
    return run, out


def test_quick_run_writes_the_ledger_and_its_files(quick):
    run, out = quick
    assert run.error is None, run.error
    spec = load_spec(EXPERIMENTS_DIR / "token-lru.toml")
    with (out / "claims.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["id"] for r in rows] == [c.id for c in spec.claims]
    assert all(r["verdict"] in C.VERDICTS for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tally"] == C.tally(run.ledger) and sum(summary["tally"].values()) == len(rows)
    assert summary["reproduce"]["pagelab"]["commit"]
    for claim in spec.claims:
        assert C.lookup(run.analysis.measures, claim.measure) is not None, claim.measure
    for fig in summary["figures"]:
        assert (out / fig).stat().st_size > 1000
    assert (out / "table.csv").read_text().startswith("pair,paper_program,program")
    assert (out / "experiment.toml").read_bytes() == (EXPERIMENTS_DIR / "token-lru.toml").read_bytes()


def test_measures_follow_table2s_order(quick):
    run, _ = quick
    keys = list(run.analysis.measures["program_fault_reduction_pct"])
    assert keys[0] == "gzip/vortex3: gzip" and keys[-1] == "LU-1/LU-2: LU-2" and len(keys) == 10


def test_each_stand_in_has_its_lru_curve_alone_beside_the_pairs(quick):
    """Issue 15: each program's exact LRU fault curve alone, beside its pair results, from
    one Mattson pass; major faults only (the curve's compulsory faults left out)."""
    import pagelab
    from pagelab.experiments.token_lru import CURVE_PCTS, _pairs

    run, out = quick
    table = run.analysis.tables["table"]
    spec = load_spec(EXPERIMENTS_DIR / "token-lru.toml", quick=True)
    pairs = {p["pair"]["name"]: p for p in _pairs(spec)}
    for _, row in table.iterrows():
        pair = pairs[row["pair"]]
        proc = next(q for q in pair["processes"] if q["name"] == row["program"])
        curve = pagelab.mrc(pagelab.workload(proc["workload"], seed=int(proc.get("seed") or 0), **proc["params"]))
        assert curve.distinct_pages == row["footprint_pages"]
        assert row["alone_lru_faults_half_frames"] == curve.faults_at(pair["frames"] // 2) - curve.compulsory_faults
        alone = [row[f"alone_lru_faults_{f}pct"] for f in CURVE_PCTS]
        assert alone == sorted(alone, reverse=True) and alone[-1] == 0, alone
    view = next(v for v in run.analysis.views if v.title.startswith("each stand-in alone under LRU"))
    assert len(view.rows) == len(table)


def test_a_second_run_reuses_every_point(quick, capsys):
    _, out = quick
    lines = []
    reproduce(["token-lru"], out=str(out), quick=True, workers=0, log=lines.append)
    assert "24 points already done, 0 to run" in lines[0], lines


def test_command_errors():
    assert_user_error(run_cli("reproduce", "no-such-experiment"), "no-such-experiment", "token-lru")


def test_a_bad_file_through_the_command(tmp_path):
    path = tmp_path / "exp.toml"
    path.write_text((EXPERIMENTS_DIR / "token-lru.toml").read_text().replace(
        'policies = ["none", "paper", "linux2620", "load_control"]', 'policies = ["none", "paper", "magic"]', 1))
    r = run_cli("reproduce", path)
    assert_user_error(r, "exp.toml", "setup.policies[2]", "magic")
    assert not (tmp_path / "results").exists()
