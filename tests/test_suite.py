"""The real-program suite (issue 21): seeded inputs, the suite:NAME trace name and its
errors, and one small member (gzip-small) built end to end under the real Valgrind:
capture, manifest, replay, exact LRU equal to the one-pass curve."""

import hashlib
import json
import os
import shutil

import numpy as np
import pytest

from conftest import assert_user_error, run_cli

import pagelab
from pagelab import suite, suite_cache
from pagelab._core import PagelabError
from pagelab.suite_inputs import RECIPES
from pagelab.system import normalize_config

MEMBER = "gzip-small"


def test_inputs_are_the_same_bytes_for_the_same_recipe_and_differ_by_seed():
    for name, generate in RECIPES.items():
        size = 3000 if name == "sql" else 40_000
        a, b, other = generate(size, 7), generate(size, 7), generate(size, 8)
        assert a == b, name
        assert a != other, name
        assert len(a) >= size // 2, name
    # a fixed input: its SHA-256 is part of the member's recipe on every machine
    assert hashlib.sha256(RECIPES["lines"](1000, 4)).hexdigest() == \
        hashlib.sha256(RECIPES["lines"](1000, 4)).hexdigest()
    mixed = RECIPES["mixed"](50_000, 1)
    assert len(mixed) == 50_000


def test_the_members_are_declared_once():
    assert list(suite.SUITE) == list(suite_cache.MEMBERS)
    assert suite.check_names(["hpcc-fft", "gzip"]) == ["hpcc", "gzip"]
    assert MEMBER not in suite.default_members()


def test_suite_names_fail_in_one_line(tmp_path):
    env = {"PAGELAB_SUITE_DIR": str(tmp_path / "empty")}
    r = run_cli("mrc", "--trace", "suite:nosuch", env=env)
    assert_user_error(r, "suite:nosuch", "no suite member 'nosuch'")
    r = run_cli("mrc", "--trace", "suite:gzip", env=env)
    assert_user_error(r, "suite member 'gzip' is not built", "pagelab suite build gzip")
    r = run_cli("suite", "build", "nosuch", env=env)
    assert_user_error(r, "no member 'nosuch'")
    with pytest.raises(PagelabError, match=r"process\[0\].params: suite:gzip is a captured program"):
        normalize_config({"system": {"frames": 10}, "process": [{"workload": "suite:gzip", "params": {"n": 1}}]},
                         "t.toml")


def test_a_missing_valgrind_is_one_line(tmp_path, monkeypatch):
    real_which = shutil.which
    monkeypatch.setattr(suite.shutil, "which", lambda name, *a, **k: None if name == "valgrind" else
                        real_which(name, *a, **k))
    if real_which("gzip") is None:
        pytest.skip("gzip not installed")
    with pytest.raises(PagelabError, match="valgrind not found"):
        suite.build_member(MEMBER, tmp_path)


def test_hpcc_sections_are_found_in_its_output(tmp_path):
    out = tmp_path / "hpccoutf.txt"
    watch = suite.SectionWatch(out)
    out.write_text("Begin of SingleFFT section.\n")
    watch(1000)
    with out.open("a") as f:
        f.write("End of SingleFFT section.\nBegin of HPL section.\n")
    watch(5000)
    assert watch.sections(9000) == [{"section": "SingleFFT", "first_record": 1000, "end_record": 5000},
                                    {"section": "HPL", "first_record": 5000, "end_record": 9000}]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """gzip-small captured under the real Valgrind into a suite folder of the module's."""
    for tool in ("valgrind", "gzip"):
        if shutil.which(tool) is None:
            print(f"test_suite: skipping the end-to-end member: {tool} is not installed (make real-suite installs it)")
            pytest.skip(f"{tool} not installed (make real-suite installs it)")
    directory = tmp_path_factory.mktemp("suite")
    old = os.environ.get(suite_cache.ENV)
    os.environ[suite_cache.ENV] = str(directory)
    try:
        lines = []
        done = suite.build([MEMBER], jobs=1, log=lines.append)
        yield directory, done[MEMBER], lines
    finally:
        if old is None:
            os.environ.pop(suite_cache.ENV, None)
        else:
            os.environ[suite_cache.ENV] = old


def test_a_member_is_captured_with_its_manifest(built):
    directory, doc, lines = built
    assert (directory / f"{MEMBER}.plt").is_file()
    assert json.loads((directory / f"{MEMBER}.json").read_text()) == doc
    assert doc["command"] == ["gzip", "-6", "-c", "input.bin"]
    assert doc["input"]["generator"] == "pagelab.suite_inputs.mixed(204800, 1)"
    assert doc["input"]["sha256"] == hashlib.sha256(RECIPES["mixed"](200 << 10, 1)).hexdigest()
    assert doc["package_version"] and doc["valgrind"].startswith("valgrind")
    cap = doc["capture"]
    assert cap["seconds"] > 0 and cap["native_seconds"] > 0 and cap["slowdown"] > 1 and cap["cpu_slowdown"] > 1
    assert cap["valgrind_cpu_seconds"] > cap["parser_cpu_seconds"] > 0
    assert doc["trace"]["data_only"] and doc["trace"]["references"] > 1_000_000
    assert suite.is_current(MEMBER)
    assert any("data references" in line for line in lines)
    # built: a second build does nothing
    assert suite.build([MEMBER], jobs=1) == {}


def test_a_member_replays_and_its_lru_equals_the_one_pass_curve(built):
    directory, doc, _ = built
    trace = pagelab.Trace(f"suite:{MEMBER}")
    assert trace.name == f"suite:{MEMBER}"
    info = trace.info()
    assert info["references"] == doc["trace"]["references"]
    assert info["instructions"] == 0
    curve = pagelab.mrc(trace)
    pages = info["distinct_pages"]
    sizes = sorted({1, 2, pages // 8, pages // 3, pages // 2, pages - 1, pages})
    result = pagelab.replay(trace, policy="lru", frames=sizes)
    got = [r["faults"] for r in result.rows]
    assert got == [curve.faults_at(s) for s in sizes]
    assert got[-1] == curve.compulsory_faults == pages
    assert np.all(np.diff(curve.faults.astype(np.int64)) <= 0)


def test_a_member_is_a_trace_for_the_cli_and_a_workload_for_a_process(built):
    directory, doc, _ = built
    env = {suite_cache.ENV: str(directory)}
    r = run_cli("replay", "--trace", f"suite:{MEMBER}", "--policy", "lru", "--frames", "20", "--json", env=env)
    assert r.code == 0, r.err
    assert json.loads(r.out)[0]["references"] == doc["trace"]["references"]
    r = run_cli("suite", "list", "--json", env=env)
    assert r.code == 0, r.err
    rows = {row["member"]: row for row in json.loads(r.out)}
    assert rows[MEMBER]["built"] and rows[MEMBER]["current"] and not rows["gzip"]["built"]
    cfg = normalize_config({"system": {"frames": 50},
                            "process": [{"name": "gzip", "workload": f"suite:{MEMBER}", "cpu_ns_per_ref": 5}]},
                           "t.toml")
    assert cfg["processes"] == [{"name": "gzip", "trace": str(directory / f"{MEMBER}.plt"), "cpu_ns_per_ref": 5}]


def test_predictive_real_runs_on_a_member_with_its_generator_beside_it(built, tmp_path):
    """The shipped predictive-real file, its programs replaced by gzip-small three times
    (one with a generator counterpart), through the runner with --quick."""
    from pagelab.experiments.protocol import EXPERIMENTS_DIR
    from pagelab.experiments.runner import reproduce, simulated

    assert "predictive-real" not in simulated()  # needs the suite: never part of `reproduce all`
    text = (EXPERIMENTS_DIR / "predictive-real.toml").read_text()
    head, claims = text[:text.index("[[program]]")], text[text.index("[[claim]]"):]
    programs = "".join(
        f'[[program]]\nname = "{n}"\npaper_name = "{n.upper()}"\nsuite = "SPEC"\ntrace = "suite:{MEMBER}"\n'
        f"memory_ratio = {ratio}\n{extra}\n"
        for n, ratio, extra in (("a", 0.3, 'counterpart = { workload = "spec-gzip", params = { harness = "once", '
                                            'files = 2, file_kib = 20 } }'), ("b", 0.2, ""), ("c", 0.5, "")))
    path = tmp_path / "predictive-real-small.toml"
    path.write_text(head + programs + claims)
    (run,) = reproduce([str(path)], out=str(tmp_path / "out"), quick=True, workers=0)
    assert run.error is None, run.error
    assert {r.claim.id for r in run.ledger} >= {"predictive-beats-lru", "beats-eelru-9-of-12", "dp-timed-mean-14"}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    (pair,) = summary["analysis"]["counterparts"]
    assert pair["program"] == "a" and pair["generator"] == "spec-gzip" and pair["misleads"]
    assert pair["curve"]["fault_ratio"][0] >= pair["curve"]["fault_ratio"][-1]
    assert (tmp_path / "out" / "fig-counterpart-lru-curves.png").stat().st_size > 1000


def test_a_member_stands_in_for_a_token_lru_program(built):
    """token-lru's gzip/vortex3 pair with the real gzip (the member) in place of spec-gzip:
    the experiment's points give the engine the member's trace."""
    from pagelab.experiments.protocol import EXPERIMENTS_DIR, load_spec

    directory, _doc, _ = built
    text = (EXPERIMENTS_DIR / "token-lru.toml").read_text()
    generator = 'workload = "spec-gzip"\nparams = { harness = "spec", files = 1, kinds = "image", file_kib = 1290 }'
    assert generator in text
    path = directory / "token-real.toml"
    path.write_text(text.replace(generator, f'workload = "suite:{MEMBER}"'))
    spec = load_spec(path, quick=True)
    (point,) = [p for p in spec.module.points(spec) if p.key.startswith("gzip/vortex3 | none")]
    gzip, other = point.config["processes"]
    assert gzip["trace"] == str(directory / f"{MEMBER}.plt") and "workload" not in gzip
    assert other["workload"] == "growing-table"
