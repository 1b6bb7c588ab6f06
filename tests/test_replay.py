"""Replay and miss-ratio curves through the Python API and the CLI, checked against
theory: OPT is a lower bound, LRU equals the Mattson curve at every size, a loop of
n+1 pages defeats LRU and FIFO."""

import importlib.util
import json
import sys

import pytest

from conftest import assert_user_error, run_cli

import pagelab

POLICIES = ["lru", "fifo", "clock", "random", "opt", "arc", "mru", "lirs", "2q", "lfu", "car", "clock-pro", "eelru",
            "seq", "last-static:0", "last-dynamic:60", "dp-approx:0.5"]

#: every built-in workload at a small size (the names and parameters the engine lists)
SMALL = {
    "lu": {"n": 96},
    "sor": {"n": 96, "iterations": 2},
    "matmul": {"n": 48},
    "mergesort": {"n": 20000},
    "bitrev": {"n": 16384},
    "bit-r": {"n": 65536, "block": 8},
    "jacobi": {"n": 96, "m": 96, "iterations": 2},
    "spmv": {"rows": 3000},
    "shrinking-loop": {},
    "scan": {"pages": 300, "passes": 3},
    "uniform": {"pages": 400, "refs": 20000},
    "zipf": {"pages": 2000, "refs": 30000},
    "phases": {},
    "growing-table": {"pages": 300, "stages": 3, "lookups": 3000},
    "spikes": {"refs": 30000, "base_pages": 100, "spike_pages": 200},
}


def test_every_listed_workload_is_covered():
    names = {w["name"] for w in pagelab.workloads()}
    assert set(SMALL) <= names, set(SMALL) - names


@pytest.mark.parametrize("name", sorted(SMALL))
def test_opt_lower_bound_and_lru_equals_mattson(name):
    w = pagelab.workload(name, seed=3, **SMALL[name])
    curve = pagelab.mrc(w)
    pages = curve.distinct_pages
    assert pages > 0
    frames = sorted({max(1, pages * k // 8) for k in range(1, 8)} | {1, pages, pages + 5})
    r = pagelab.replay(w, policy=POLICIES, frames=frames, seed=7)
    for f in frames:
        opt = r.faults("opt", f)
        for p in POLICIES:
            assert opt <= r.faults(p, f), (name, p, f)
        assert r.faults("lru", f) == curve.faults_at(f), (name, f)
    # with all pages resident, every policy faults exactly once per page
    for p in POLICIES:
        assert r.faults(p, pages) == pages == curve.compulsory_faults


def test_loop_of_n_plus_one_pages():
    n, passes = 100, 20
    w = pagelab.workload("scan", pages=n + 1, passes=passes)
    r = pagelab.replay(w, policy=["lru", "fifo", "opt", "mru"], frames=[n])
    total = (n + 1) * passes
    assert r.faults("lru", n) == total
    assert r.faults("fifo", n) == total
    # MRU throws out the page just used, the one the loop needs last: a fault a pass
    assert r.faults("mru", n) == (n + 1) + (passes - 1)
    opt = r.faults("opt", n)
    # n+1 compulsory, then about one fault every n references
    assert n + 1 <= opt <= n + 1 + total // n + passes


def test_results_dataframe_and_determinism():
    w = pagelab.workload("zipf", seed=11, pages=3000, refs=50000)
    a = pagelab.replay(w, policy=["random", "clock"], frames=[100, 500], seed=5).to_dataframe()
    b = pagelab.replay(w, policy=["random", "clock"], frames=[100, 500], seed=5).to_dataframe()
    assert list(a.columns) == pagelab.ReplayResults.COLUMNS
    assert len(a) == 4
    assert a.equals(b)
    assert (a["fault_ratio"] == a["faults"] / a["references"]).all()


def test_cli_replay_json_matches_api(tmp_path):
    r = run_cli("replay", "--workload", "lu", "--param", "n=64", "--policy", "lru,opt",
                "--frames", "8,16,32", "--json", "--csv", tmp_path / "r.csv")
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    api = pagelab.replay(pagelab.workload("lu", n=64), policy=["lru", "opt"], frames=[8, 16, 32])
    assert [(x["policy"], x["frames"], x["faults"], x["dirty_evictions"]) for x in rows] == \
           [(x["policy"], x["frames"], x["faults"], x["dirty_evictions"]) for x in api]
    assert (tmp_path / "r.csv").read_text().startswith("source,policy,frames")


def test_cli_replay_table():
    r = run_cli("replay", "--workload", "scan", "--param", "pages=50,passes=2", "--frames", "10,60",
                "--policy", ",".join(POLICIES))
    assert r.code == 0, r.err
    for p in POLICIES:
        assert p in r.out


def test_cli_mrc_writes_csv_and_plot(tmp_path):
    out = tmp_path / "curve.csv"
    r = run_cli("mrc", "--workload", "scan", "--param", "pages=64,passes=3", "-o", out)
    assert r.code == 0, r.err
    lines = out.read_text().splitlines()
    assert lines[0] == "frames,faults,fault_ratio"
    assert len(lines) == 1 + 64
    # a loop of 64 pages: every reference faults below 64 frames, only compulsory at 64
    assert lines[1].split(",")[:2] == ["1", str(64 * 3)]
    assert lines[63].split(",")[:2] == ["63", str(64 * 3)]
    assert lines[64].split(",")[:2] == ["64", "64"]
    assert (tmp_path / "curve.png").stat().st_size > 1000
    # the message names every file written: the PNG's SVG too
    assert (tmp_path / "curve.svg").exists()
    assert r.out.splitlines()[-1] == f"wrote {out} (64 sizes), {tmp_path / 'curve.png'} and {tmp_path / 'curve.svg'}"


def test_curve_csv_is_the_dataframe_as_pandas_writes_it(tmp_path):
    """`write_csv` (Arrow's writer, for speed) gives the bytes pandas gives for
    `to_dataframe()`: same header, integers, and shortest round-trip floats (3,000
    different fault ratios)."""
    curve = pagelab.mrc(pagelab.workload("zipf", refs=30_000, pages=3_000, alpha=0.8))
    arrow, pandas = tmp_path / "a.csv", tmp_path / "p.csv"
    curve.write_csv(arrow)
    curve.to_dataframe().to_csv(pandas, index=False)
    assert arrow.read_text() == pandas.read_text()
    assert len(arrow.read_text().splitlines()) == 1 + curve.distinct_pages


def test_progress_bar_when_forced():
    args = ["--progress", "replay", "--workload", "zipf", "--param", "pages=20000,refs=300000",
            "--policy", "lru,opt", "--frames", "2000"]
    r = run_cli(*args, env={"PAGELAB_PROGRESS_DELAY": "0"})
    assert r.code == 0, r.err
    assert "replaying" in r.err and "records" in r.err
    # a run shorter than the delay prints no bar
    quiet = run_cli(*args, env={"PAGELAB_PROGRESS_DELAY": "60"})
    assert quiet.code == 0 and quiet.err == ""


def test_page_size_changes_pages():
    small = pagelab.workload("matmul", n=64, page_size=4096)
    big = pagelab.workload("matmul", n=64, page_size=16384)
    assert pagelab.mrc(big).distinct_pages < pagelab.mrc(small).distinct_pages


#: every built-in workload at a tiny size, so that every memory size can be replayed
TINY = {
    "lu": {"n": 100},
    "sor": {"n": 160, "iterations": 2},
    "matmul": {"n": 64},
    "mergesort": {"n": 6000},
    "bitrev": {"n": 32768},
    "bit-r": {"n": 65536, "block": 8},
    "jacobi": {"n": 128, "m": 128, "iterations": 2},
    "spmv": {"rows": 2000, "nnz_per_row": 4},
    "shrinking-loop": {"pages": 150, "loops": 30},
    "scan": {"pages": 120, "passes": 3},
    "uniform": {"pages": 200, "refs": 20000},
    "zipf": {"pages": 300, "refs": 20000},
    "phases": {"pages": 60, "refs_per_phase": 5000},
    "growing-table": {"pages": 200, "stages": 4, "lookups": 2000},
    "spikes": {"refs": 20000, "base_pages": 40, "spike_pages": 100},
    "npb-lu": {"n": 8, "iterations": 1},
    "npb-sp": {"n": 8, "iterations": 1},
    "npb-cg": {"n": 800, "nonzeros_per_row": 5, "iterations": 1, "cg_iterations": 2},
    "npb-is": {"n_keys": 20000, "max_key": 4096, "iterations": 2},
    "npb-mg": {"n": 16, "iterations": 1},
    "npb-ft": {"n1": 16, "n2": 16, "n3": 8, "iterations": 1},
    "npb-bt": {"n": 6, "iterations": 2},
    "spec-gzip": {"files": 1, "file_kib": 64, "window_kib": 8},
    "spec-mcf": {"nodes": 1024, "arcs": 8192, "iterations": 2, "pivots": 20},
    "spec-swim": {"n": 32, "iterations": 2},
    "spec-wupwise": {"l": 3, "iterations": 2},
    "spec-apsi": {"nx": 16, "ny": 16, "nz": 8, "iterations": 1},
}


@pytest.mark.parametrize("name", sorted(TINY))
def test_every_size(name):
    """LRU replay equals the one-pass curve, and OPT is a lower bound, at every memory
    size from 1 frame to all pages."""
    assert set(TINY) == {w["name"] for w in pagelab.workloads()}
    w = pagelab.workload(name, seed=5, **TINY[name])
    curve = pagelab.mrc(w)
    frames = list(range(1, curve.distinct_pages + 1))
    assert 20 <= len(frames) <= 400, len(frames)
    r = pagelab.replay(w, policy=POLICIES, frames=frames, seed=2).to_dataframe()
    lru = r[r.policy == "lru"].sort_values("frames")["faults"].to_numpy()
    assert (lru == curve.faults).all()
    by = {p: r[r.policy == p].sort_values("frames")["faults"].to_numpy() for p in POLICIES}
    for p in POLICIES:
        assert (by["opt"] <= by[p]).all(), p


def test_parameters_variable_size_policies_and_counters():
    """Policies with a parameter come back under their label; Working Set and PFF run
    once, with frames 0 and the memory they used; predictive policies report counts."""
    w = pagelab.workload("zipf", pages=500, refs=20000, seed=1)
    r = pagelab.replay(w, policy=["ws:200", "pff:50", "last-static:-5", "lru"], frames=[50, 100])
    assert [(x["policy"], x["frames"]) for x in r] == [
        ("ws:200", 0), ("pff:50", 0), ("last-static:-5", 50), ("last-static:-5", 100), ("lru", 50), ("lru", 100)]
    assert 0 < r[0]["mean_resident"] < 200
    assert r.faults("ws:200") == r[0]["faults"]
    df = r.to_dataframe()
    assert {"mean_resident", "predictions", "dead_list_evictions", "under_predictions"} <= set(df.columns)
    static = df[df.policy == "last-static:-5"]
    assert (static["dead_list_evictions"] + static["lru_evictions"] > 0).all()


def test_cli_policy_parameters_and_their_errors():
    r = run_cli("replay", "--workload", "scan", "--param", "pages=50,passes=3", "--frames", "40",
                "--policy", "ws:60,last-dynamic:10,dp-approx:0.25")
    assert r.code == 0, r.err
    assert "ws:60" in r.out and "variable" in r.out and "dp-approx:0.25" in r.out
    for bad, says in [("dp-approx:7", "0 < a <= 1"), ("ws:x", "window"), ("lru:2", "takes no parameter")]:
        r = run_cli("replay", "--workload", "scan", "--frames", "40", "--policy", bad)
        assert r.code != 0 and says in r.err and "Traceback" not in r.err, (bad, r.err)
        assert len(r.err.strip().splitlines()) == 1, r.err


@pytest.mark.parametrize("source", [("scan", "pages=64,passes=3"), ("lu", "n=24"), ("zipf", "pages=3000,refs=50000"), ("sor", "n=20")])
def test_cli_mrc_opt_equals_replay_opt_at_every_size(tmp_path, source):
    """`mrc --policy opt` (one pass of OPT stack distances) gives the faults that
    `replay --policy opt` gives at every memory size."""
    name, params = source
    args = ["--workload", name] + (["--param", params] if params else [])
    out = tmp_path / "opt.csv"
    r = run_cli("mrc", *args, "--policy", "opt", "-o", str(out))
    assert r.code == 0, r.err
    lines = out.read_text().splitlines()[1:]
    curve = {int(f): int(n) for f, n, _ in (line.split(",") for line in lines)}
    sizes = sorted(curve)
    r = run_cli("replay", *args, "--policy", "opt", "--frames", ",".join(map(str, sizes)), "--json")
    assert r.code == 0, r.err
    replayed = {row["frames"]: row["faults"] for row in json.loads(r.out)}
    assert replayed == curve
    # and size by size (two sizes: below the one-pass threshold) at the ends of the range
    w = pagelab.workload(name, **dict(kv.split("=") for kv in params.split(",") if kv))
    for pair in ([sizes[0], sizes[-1]], [max(1, len(sizes) // 2), len(sizes) + 1]):
        rows = pagelab.replay(w, policy="opt", frames=pair).rows
        assert [row["faults"] for row in rows] == [curve.get(s, curve[sizes[-1]]) for s in pair]


def test_cli_mrc_refuses_a_policy_that_is_not_a_stack_algorithm(tmp_path):
    r = run_cli("mrc", "--workload", "scan", "--policy", "fifo", "-o", str(tmp_path / "x.csv"))
    assert r.code == 2 and "invalid choice" in r.err and "Traceback" not in r.err


def test_cli_replay_repeats_fold_or_show_as_hits(tmp_path):
    """`--repeats hits` shows a record's repeats to the policy: LFU counts them (its
    faults change on a stream with runs of one page), LRU cannot tell; the preset named
    after libCacheSim sees them either way; a bad value is a one-line error."""
    trace = tmp_path / "runs.csv"
    rows = ["page"]
    for i in range(3000):
        p = (i * 7919) % 37 if i % 5 else (i * 31) % 11
        rows += [str(p)] * (1 + (i * 13) % 3)
    trace.write_text("\n".join(rows) + "\n")

    def faults(policy, *extra):
        r = run_cli("replay", "--trace", str(trace), "--policy", policy, "--frames", "9", "--json", *extra)
        assert r.code == 0, r.err
        return json.loads(r.out)[0]["faults"]

    assert faults("lfu") != faults("lfu", "--repeats", "hits")
    assert faults("lru") == faults("lru", "--repeats", "hits")
    assert faults("clock:libcachesim") == faults("clock:libcachesim", "--repeats", "hits")
    # the preset under its other name
    assert faults("clock:bit=clear") == faults("clock:libcachesim")
    assert faults("clock:libcachesim") != faults("clock")
    r = run_cli("replay", "--trace", str(trace), "--policy", "lru", "--frames", "9", "--repeats", "each")
    assert r.code != 0 and "--repeats" in r.err and "Traceback" not in r.err


def test_api_replay_refuses_a_bad_repeats_value():
    with pytest.raises(pagelab.PagelabError, match="repeats: expected 'fold' or 'hits', got 'each'"):
        pagelab.replay(pagelab.workload("scan", pages=8, passes=2), policy="lru", frames=4, repeats="each")


def test_cli_bench_libcachesim_needs_an_interpreter_with_it(tmp_path):
    r = run_cli("bench", "--libcachesim", str(tmp_path / "no-python"))
    assert r.code != 0 and "--libcachesim: cannot run" in r.err
    for other in ("--sweep", "--no-commands"):
        r = run_cli("bench", "--libcachesim", sys.executable, other)
        assert r.code != 0 and "--libcachesim:" in r.err and other in r.err and "Traceback" not in r.err
    if importlib.util.find_spec("libcachesim") is None:
        r = run_cli("bench", "--libcachesim", sys.executable, "--refs", "1000")
        assert r.code != 0 and "cannot import libcachesim" in r.err


#: a stand-in for libCacheSim's Python package, as much of it as `pagelab bench
#: --libcachesim` uses: its readers (oracleGeneral; CSV with a header and the object id
#: in a given field) and LRU and FIFO counting a miss per request
FAKE_LIBCACHESIM = '''
import collections, struct

class TraceType:
    ORACLE_GENERAL_TRACE = "oracle"
    CSV_TRACE = "csv"

class ReaderInitParam:
    def __init__(self, ignore_obj_size=False, has_header=False, has_header_set=False, delimiter=","):
        self.has_header, self.delimiter, self.obj_id_field = has_header, delimiter, 1

class TraceReader:
    def __init__(self, trace, trace_type, reader_init_params):
        self.trace, self.kind, self.params = trace, trace_type, reader_init_params

    def ids(self):
        if self.kind == TraceType.ORACLE_GENERAL_TRACE:
            data = open(self.trace, "rb").read()
            return [struct.unpack_from("<Q", data, at + 4)[0] for at in range(0, len(data), 24)]
        lines = open(self.trace).read().splitlines()[1 if self.params.has_header else 0:]
        return [int(l.split(self.params.delimiter)[self.params.obj_id_field - 1]) for l in lines]

class _Cache:
    def __init__(self, cache_size):
        self.size = cache_size

    def process_trace(self, reader):
        ids, held, misses = reader.ids(), collections.OrderedDict(), 0
        for i in ids:
            if i in held:
                if self.lru:
                    held.move_to_end(i)
                continue
            misses += 1
            if len(held) == self.size:
                held.popitem(last=False)
            held[i] = True
        return [misses / len(ids), 0.0]

class LRU(_Cache):
    lru = True

class FIFO(_Cache):
    lru = False
'''


def test_cli_bench_beside_libcachesim_on_the_oracle_and_the_request_csv(tmp_path):
    """`bench --libcachesim` times pagelab and libCacheSim on the same oracleGeneral file
    and on one CSV of a request a line, and compares their faults: with a stand-in for
    libCacheSim that counts LRU and FIFO misses per request, they are the same."""
    fake = tmp_path / "fake" / "libcachesim"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(FAKE_LIBCACHESIM)
    r = run_cli("bench", "--refs", "3000", "--pages", "400", "--frames", "50", "--policy", "lru,fifo",
                "--libcachesim", sys.executable, "--repeat", "1", "--json",
                env={"PYTHONPATH": str(tmp_path / "fake")})
    assert r.code == 0, r.err
    out = json.loads(r.out)
    for table in ("libcachesim", "libcachesim_csv"):
        assert set(out[table]) == {"lru", "fifo"}, out[table]
        for policy, entry in out[table].items():
            assert entry["faults"] == entry["pagelab_faults"] > 0, (table, policy, entry)
    assert {"request-csv/lru", "request-csv/fifo"} <= set(out["commands"])
    # a policy the stand-in lacks: one line naming libCacheSim's class and what it said
    r = run_cli("bench", "--refs", "300", "--pages", "40", "--policy", "opt", "--libcachesim", sys.executable,
                "--repeat", "1", env={"PYTHONPATH": str(tmp_path / "fake")})
    assert_user_error(r, "libCacheSim Belady on zipf.oracleGeneral failed", "has no attribute 'Belady'")
