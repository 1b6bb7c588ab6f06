"""The claim ledger (experiments/claims.py) and the experiment files' schemas: every
shipped claim's rule can fail, the rule kinds mean what they say, a rule that cannot
fail is refused, and a file's mistakes are one line naming the file and the key."""

import math
from pathlib import Path

import pytest

import pagelab
from pagelab.experiments import claims as C
from pagelab.experiments.protocol import EXPERIMENTS_DIR, load_spec, spec_variants, variants_of
from pagelab.experiments.runner import shipped

SHIPPED = shipped()


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_claim_can_fail(name):
    """For each claim, a measure built to violate its rule is judged 'not reproduced'
    (and its 'partly' rule, on its own counterexample, fails too)."""
    spec = load_spec(EXPERIMENTS_DIR / f"{name}.toml")
    assert spec.claims, name
    for claim in spec.claims:
        bad = claim.rule.counterexample(claim.paper_value)
        ok, detail = claim.rule.holds(bad, claim.paper_value)
        assert not ok, (name, claim.id, bad, detail)
        if claim.entries:
            # a table measure: the counterexample's values under the claim's entries, in
            # order (a scalar counterexample for every entry)
            values = bad if isinstance(bad, (list, tuple)) else [bad] * len(claim.entries)
            bad = dict(zip(claim.entries, values))
        verdict = C.verdict(claim, _put({}, claim.measure, bad))
        assert verdict.verdict in ("not reproduced", "partly"), (name, claim.id, verdict.verdict)
        if claim.partly is not None:
            bad2 = claim.partly.counterexample(claim.paper_value)
            assert not claim.partly.holds(bad2, claim.paper_value)[0], (name, claim.id, "partly")


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_file_has_claims_sources_and_sensitivity(name):
    spec = load_spec(EXPERIMENTS_DIR / f"{name}.toml")
    for claim in spec.claims:
        assert claim.source.strip() and claim.paper.strip() and claim.statement.strip(), claim.id
    assert spec.data["sensitivity"], f"{name}: no sensitivity ranges"
    assert all(s["why"].strip() for s in spec.data["sensitivity"])
    assert spec_variants(spec)


def _put(measures: dict, name: str, value):
    """``measures`` with ``value`` at the dotted ``name``."""
    parts = name.split(".")
    d = measures
    for p in parts[:-1]:
        d = d.setdefault(p, {})
    d[parts[-1]] = value
    return measures


def rule(**table):
    return C.parse_rule(table, "t")


def test_above_below_between_with_shares():
    assert rule(kind="above", threshold=0).holds([1, 2, 3], None)[0]
    assert not rule(kind="above", threshold=0).holds([1, 2, -3], None)[0]
    assert rule(kind="above", threshold=0, share=0.6).holds([1, 2, -3], None)[0]
    assert not rule(kind="above", threshold=0).holds([0], None)[0]  # strictly
    assert rule(kind="below", threshold=4).holds({"a": 1, "b": [2, 3]}, None)[0]
    assert rule(kind="between", min=1, max=2).holds([1, 1.5, 2], None)[0]
    assert not rule(kind="between", max=2).holds([3], None)[0]


def test_near_compares_position_by_position():
    r = rule(kind="near", tolerance=5)
    assert r.holds([10, 20], [12, 17])[0]
    assert not r.holds([10, 20], [20, 10])[0]
    assert not r.holds([10], [10, 20])[0]  # a missing value is a failure, not a pass
    assert rule(kind="near", relative=0.1).holds([105], [100])[0]
    assert not rule(kind="near", relative=0.1).holds([115], [100])[0]


def test_trends_per_series():
    r = rule(kind="increasing")
    assert r.holds({"LU": [1, 2, 3], "SOR": [5, 5.5, 9]}, None)[0]
    assert not r.holds({"LU": [1, 2, 3], "SOR": [5, 4, 3]}, None)[0]
    assert rule(kind="increasing", share=0.5).holds({"LU": [1, 2, 3], "SOR": [5, 4, 3]}, None)[0]
    assert not rule(kind="increasing", min_step=2).holds([1, 2, 3], None)[0]
    assert rule(kind="decreasing").holds([3, 2, 1], None)[0]


def test_spearman_and_order():
    assert abs(C.spearman([1, 2, 3, 4], [10, 20, 30, 40]) - 1) < 1e-12
    assert abs(C.spearman([1, 2, 3, 4], [4, 3, 2, 1]) + 1) < 1e-12
    assert rule(kind="spearman", min=0.9).holds([1, 2, 3, 5], [1, 3, 2, 4])[0] is False  # rho = 0.8
    assert rule(kind="spearman", min=0.5).holds([1, 2, 3, 5], [1, 3, 2, 4])[0]
    assert not rule(kind="spearman", min=0.5).holds([1, 2], [1, 2])[0]  # too few to rank
    r = rule(kind="order", order=["foresight", "daemon", "none"])
    assert r.holds({"none": 3, "daemon": 2, "foresight": 1}, None)[0]
    assert not r.holds({"none": 3, "daemon": 4, "foresight": 1}, None)[0]


@pytest.mark.parametrize("table, fragment", [
    ({"kind": "between"}, "min or max"),
    ({"kind": "between", "min": 3, "max": 1}, "min <= max"),
    ({"kind": "above", "threshold": math.inf}, "finite"),
    ({"kind": "above"}, "threshold"),
    ({"kind": "above", "threshold": 0, "share": 0}, "share"),
    ({"kind": "spearman", "min": -1}, "never fail"),
    ({"kind": "near"}, "tolerance or relative"),
    ({"kind": "order", "order": ["one"]}, "at least two"),
    ({"kind": "sideways"}, "unknown rule"),
    ({"kind": "above", "threshold": 0, "tolerance": 1}, "unknown key"),
])
def test_rules_that_cannot_fail_or_make_no_sense_are_refused(table, fragment):
    with pytest.raises(pagelab.PagelabError, match=fragment):
        C.parse_rule(table, "f.toml: claim[0].rule")


def test_verdicts():
    claim = C.Claim("c", "T1", "s", "p", "m", rule(kind="above", threshold=0), rule(kind="above", threshold=0, share=0.5))
    assert C.verdict(claim, {"m": [1, 2]}).verdict == "reproduced"
    assert C.verdict(claim, {"m": [1, -2]}).verdict == "partly"
    assert C.verdict(claim, {"m": [-1, -2]}).verdict == "not reproduced"
    assert C.verdict(claim, {}).verdict == "not measured"
    assert C.verdict(claim, {"m": [float("nan")]}).verdict == "not measured"
    assert C.verdict(claim, {"m": {"a": None}}).verdict == "not measured"


def _spec_text(extra: str = "", claim: str = None) -> str:
    src = (EXPERIMENTS_DIR / "token-lru.toml").read_text()
    return src + extra


@pytest.mark.parametrize("edit, fragment", [
    (lambda s: s.replace('quick_scale = 0.5', 'quick_scale = 2'), "x.toml: experiment.quick_scale: expected a number > 0 and <= 1, got 2"),
    (lambda s: s.replace('memory = 0.55', 'memory = "lots"', 1), "x.toml: pair[0].memory: expected a number"),
    (lambda s: s.replace('[setup]', '[setup]\nbogus = 1'), "x.toml: setup.bogus: unknown key"),
    (lambda s: s.replace('measure = "token_grabs"', 'measure = "nosuch"'), "x.toml: claim[8].measure: unknown measure 'nosuch'"),
    (lambda s: s.replace('rule = { kind = "below", threshold = 0 }', 'rule = { kind = "between" }'), "x.toml: claim[7].rule: a band needs"),
    (lambda s: s.replace('id = "token-held"', 'id = "lu2-more-faults"'), "used twice"),
    (lambda s: s.replace('key = "base.system.quantum_ms"', 'key = "pair.*.nosuch.deep"'), "x.toml: pair[0].nosuch: unknown key"),
    (lambda s: s.replace('key = "pair.*.memory"', 'key = "pair.*.nosuch"'), "sensitivity[0].key: no value to scale"),
    (lambda s: s.replace('key = "pair.*.memory"', 'key = "setup.policies"'), "not a number"),
    (lambda s: s.replace('policies = ["none", "paper", "linux2620", "load_control"]', 'policies = ["paper", "linux2620"]', 1), "must include 'none'"),
    (lambda s: s.replace('module', 'modul') + '\n', None),
])
def test_experiment_file_errors_are_one_line(tmp_path, edit, fragment):
    path = tmp_path / "x.toml"
    path.write_text(edit(_spec_text()))
    if fragment is None:
        load_spec(path)
        return
    with pytest.raises(pagelab.PagelabError) as err:
        load_spec(path)
    assert fragment in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_an_unknown_module_names_the_shipped_ones(tmp_path):
    path = tmp_path / "y.toml"
    path.write_text(_spec_text().replace('name = "token-lru"', 'name = "token-lru"\nmodule = "nosuch"'))
    with pytest.raises(pagelab.PagelabError, match="no analysis module 'nosuch'.*token_lru"):
        load_spec(path)


def test_sensitivity_variants_set_and_scale():
    spec = load_spec(EXPERIMENTS_DIR / "token-lru.toml")
    i = next(i for i, s in enumerate(spec.data["sensitivity"]) if s["key"] == "pair.*.memory")
    (lo_label, lo), (hi_label, hi) = variants_of(spec, i)
    assert "0.85" in lo_label and "1.15" in hi_label
    base = [p["memory"] for p in spec.data["pair"]]
    assert [p["memory"] for p in lo["pair"]] == pytest.approx([m * 0.85 for m in base])
    assert spec.data["pair"][0]["memory"] == base[0]  # the file's own data is untouched
    j = next(i for i, s in enumerate(spec.data["sensitivity"]) if s["key"] == "base.token.hold_share")
    assert [v["base"]["token"]["hold_share"] for _, v in variants_of(spec, j)] == [0.25, 4.0]
    k = next(i for i, s in enumerate(spec.data["sensitivity"]) if s["key"] == "base.disk.preset")
    assert [v["base"]["disk"]["preset"] for _, v in variants_of(spec, k)] == ["legacy", "barracuda-2011"]


def test_a_tables_default_gets_its_keys_defaults():
    from pagelab.experiments.schema import Field, Int, Table, check_file

    schema = Table({"setup": Field(Table({"n": Field(Int(min=1), 3)}), {})})
    assert check_file({}, schema, "f.toml") == {"setup": {"n": 3}}


def test_every_step_and_entries():
    strict = rule(kind="increasing", every_step=True)
    assert rule(kind="increasing").holds([1, 1, 1, 5], None)[0]  # the slope alone: one big step carries it
    assert not strict.holds([1, 1, 1, 5], None)[0]
    assert strict.holds([1, 2, 3, 5], None)[0]
    claim = C.Claim("c", "T1", "s", "p", "m", rule(kind="above", threshold=0), entries=["a", "c"])
    assert C.verdict(claim, {"m": {"a": 1, "b": -1, "c": 2}}).verdict == "reproduced"
    assert C.verdict(claim, {"m": {"a": 1, "b": 1}}).verdict == "not measured"
