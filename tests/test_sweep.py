"""Sweeps (docs/sweeps.md): a grid of configurations on a Dask cluster, each finished
point stored at once, resumable, failures recorded; `pagelab sweep` and `pagelab results`."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import _sigint_default, assert_user_error, run_cli

import pagelab
from pagelab import _core

import pagelab.sweeps.spec as sweep_spec  # noqa: E402
import pagelab.sweeps.store as sweep_store  # noqa: E402

VENV_BIN = Path(sys.executable).parent
DONE_LINE = re.compile(r"(\d+) points already done, (\d+) to run")


# ---------------------------------------------------------------- helpers

def zipf_spec(path: Path, name: str, pages: int, refs: int, frames: list, seeds: list, policy: str = "lru") -> Path:
    path.write_text(f"""
[sweep]
kind = "replay"
name = "{name}"

[base]
source = {{ workload = "zipf", params = {{ pages = {pages}, refs = {refs} }} }}
policy = "{policy}"

[[axis]]
key = "frames"
values = {json.dumps(frames)}

[[axis]]
key = "seed"
values = {json.dumps(seeds)}
""")
    return path


def expected_faults(pages: int, refs: int, frames: list, seeds: list, policy: str = "lru") -> dict:
    """(frames, seed) -> faults, computed directly with the replay API, one after another."""
    out = {}
    for seed in seeds:
        w = pagelab.workload("zipf", seed=seed, pages=pages, refs=refs)
        for row in pagelab.replay(w, policy=policy, frames=frames, seed=seed):
            out[(row["frames"], seed)] = row["faults"]
    return out


def stored_points(store: Path) -> list:
    return sorted(p.name[: -len(".parquet")] for p in (store / "points").glob("*.parquet"))


def expected_hashes(spec: Path) -> list:
    return sorted(p.hash for p in sweep_spec.load_spec(spec).points())


def check_store(store: Path, spec: Path, faults: dict) -> None:
    """Every point of the spec stored exactly once, readable, with the expected numbers."""
    assert stored_points(store) == expected_hashes(spec)
    df = pagelab.results(store)
    assert len(df) == len(faults) and df["point"].is_unique
    assert df["error"].isna().all()
    got = {(int(r.frames), int(r.seed)): int(r.faults) for r in df.itertuples()}
    assert got == faults


def wait_for(predicate, timeout: float, what: str, proc=None) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"process ended (exit {proc.returncode}) before {what}: {proc.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def start_cli(*args, env=None) -> subprocess.Popen:
    # SIGINT as at a terminal, even when the tests run in the background (conftest.py)
    return subprocess.Popen([sys.executable, "-m", "pagelab", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            env=dict(os.environ, **(env or {})), preexec_fn=_sigint_default)


def kill_group(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


# ---------------------------------------------------------------- acceptance 1: a real Dask cluster

class DaskCluster:
    """A scheduler and worker processes started with the `dask` command on loopback
    (random ports), each in its own session so that a test can kill one."""

    def __init__(self, tmp_path: Path, env=None):
        self.tmp_path, self.env, self.procs = tmp_path, dict(os.environ, **(env or {})), []
        self.sched_file = tmp_path / "scheduler.json"
        self.quiet = ["--dashboard-address", "127.0.0.1:0", "--no-dashboard"]

    def spawn(self, args: list) -> subprocess.Popen:
        p = subprocess.Popen([os.fspath(VENV_BIN / "dask")] + args, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, start_new_session=True,
                             cwd=self.tmp_path, env=self.env)
        self.procs.append(p)
        return p

    def start(self, workers: int, worker_args=()) -> list:
        import distributed

        self.spawn(["scheduler", "--host", "127.0.0.1", "--port", "0", "--scheduler-file",
                    os.fspath(self.sched_file)] + self.quiet)
        wait_for(lambda: self.sched_file.exists() and self.sched_file.stat().st_size > 0, 30, "the scheduler file",
                 self.procs[0])
        started = [self.spawn(["worker", "--scheduler-file", os.fspath(self.sched_file), "--nworkers", "1",
                               "--nthreads", "1", "--host", "127.0.0.1", "--death-timeout", "30",
                               "--local-directory", os.fspath(self.tmp_path / f"w{i}"), *worker_args] + self.quiet)
                   for i in range(workers)]
        self.address = json.loads(self.sched_file.read_text())["address"]
        assert self.address.startswith("tcp://127.0.0.1:")
        with distributed.Client(self.address, timeout="20s") as client:
            client.wait_for_workers(workers, timeout=30)
        return started

    def stop(self) -> None:
        for p in reversed(self.procs):
            kill_group(p)


def test_sweep_on_a_dask_cluster_survives_a_killed_worker(tmp_path):
    """A scheduler and two workers (`dask` CLI, loopback, random ports); one worker is
    killed mid-sweep; every point ends in the store exactly once, with the numbers of a
    direct run."""
    pytest.importorskip("distributed")
    pages, refs, frames, seeds = 2000, 400_000, list(range(50, 1050, 50)), list(range(1, 11))
    spec = zipf_spec(tmp_path / "cluster.toml", "cluster", pages, refs, frames, seeds)
    store = tmp_path / "store"
    cluster = DaskCluster(tmp_path)
    try:
        workers = cluster.start(2)
        sweep = start_cli("sweep", spec, "--scheduler", cluster.address, "--out", store)
        try:
            wait_for(lambda: len(stored_points(store)) >= 20, 60, "20 stored points", sweep)
            kill_group(workers[0])
            assert len(stored_points(store)) < 200, "the sweep ended before a worker could be killed"
            out, err = sweep.communicate(timeout=90)
        finally:
            kill_group(sweep)
        assert sweep.returncode == 0, (out, err)
        assert DONE_LINE.search(out).groups() == ("0", "200"), out
        assert "Traceback" not in err, err
        check_store(store, spec, expected_faults(pages, refs, frames, seeds))
    finally:
        cluster.stop()


def test_a_point_that_kills_its_workers_is_recorded_as_failed(tmp_path):
    """A point too big for its worker's memory limit: the nanny kills the worker, Dask
    gives the point to the restarted worker, which dies again; after the scheduler's
    allowed failures (1 here) the point is recorded as failed with a one-line error,
    and the other points are stored."""
    pytest.importorskip("distributed")
    spec = tmp_path / "big.toml"
    spec.write_text("""
[sweep]
kind = "replay"
name = "big"
[base]
source = { workload = "zipf", params = { pages = 1000 } }
policy = "opt"
frames = 100
[[axis]]
key = "source.params.refs"
name = "refs"
values = [10000, 80000000, 20000]
""")
    store = tmp_path / "store"
    # OPT holds 9 bytes a reference: 80 M references need 720 MB, over the 400 MB limit
    # (one task at a time on the worker: a task queued there when it dies counts as a suspect too)
    cluster = DaskCluster(tmp_path, env={"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1",
                                         "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION": "1.0"})
    try:
        cluster.start(1, ["--memory-limit", "400MB"])
        r = run_cli("sweep", spec, "--scheduler", cluster.address, "--out", store)
    finally:
        cluster.stop()
    assert r.code == 0, r
    assert "ran 3 points" in r.out and "1 failed" in r.out, r.out
    assert "Traceback" not in r.err, r.err
    failed = list((store / "failed").glob("*.json"))
    assert len(failed) == 1 and len(stored_points(store)) == 2
    record = json.loads(failed[0].read_text())
    assert record["axes"]["refs"] == 80000000
    assert "\n" not in record["error"] and "killed its worker" in record["error"], record["error"]


# ---------------------------------------------------------------- acceptance 2: interrupted, resumed

def test_interrupted_sweep_resumes_and_reruns_corrupt_files(tmp_path):
    # points heavy enough (about a second each) that the interrupt comes while they run
    pages, refs, frames, seeds = 20000, 10_000_000, [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000], [1, 2, 3, 4, 5]
    spec = zipf_spec(tmp_path / "resume.toml", "resume", pages, refs, frames, seeds)
    store = tmp_path / "store"
    total = len(frames) * len(seeds)

    # a local sweep (a local Dask cluster), interrupted by SIGINT once some points are stored
    sweep = start_cli("sweep", spec, "--out", store, "--workers", "2")
    try:
        wait_for(lambda: len(stored_points(store)) >= 4, 60, "4 stored points", sweep)
        sweep.send_signal(signal.SIGINT)
        out, err = sweep.communicate(timeout=30)
    finally:
        kill_group(sweep)
    assert sweep.returncode == 130, (out, err)
    assert err.strip().splitlines()[-1] == "pagelab: interrupted", err
    done = stored_points(store)
    assert 4 <= len(done) < total, "the sweep ended before it could be interrupted"
    store_obj = sweep_store.Store(store)
    assert all(store_obj.read_point(h, delete_bad=False) is not None for h in done)  # only whole files

    # the same sweep again: only the missing points run
    r = run_cli("sweep", spec, "--out", store, timeout=120)
    assert r.code == 0, r
    already, to_run = map(int, DONE_LINE.search(r.out).groups())
    assert already == len(done) and already + to_run == total, r.out
    assert f"ran {to_run} points" in r.out
    faults = expected_faults(pages, refs, frames, seeds)
    check_store(store, spec, faults)

    # a truncated result file and a point whose file is gone with a stray temporary file
    # beside it: both detected, both run again; the stray file is never read as data
    hashes = stored_points(store)
    truncated, missing = store / "points" / f"{hashes[0]}.parquet", store / "points" / f"{hashes[1]}.parquet"
    data = truncated.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    stray = store / "points" / f".{hashes[1]}.parquet.x1y2z3.tmp"
    stray.write_bytes(missing.read_bytes()[:100])
    missing.unlink()
    old_stray = store / "points" / f".{hashes[2]}.parquet.old123.tmp"
    old_stray.write_bytes(b"PAR1")
    os.utime(old_stray, (time.time() - 3600, time.time() - 3600))
    r = run_cli("sweep", spec, "--out", store, "--workers", "0", timeout=120)
    assert r.code == 0, r
    assert DONE_LINE.search(r.out).groups() == (str(total - 2), "2"), r.out
    assert "unreadable" in r.err
    assert not old_stray.exists()  # a temporary file of a writer long dead is removed
    check_store(store, spec, faults)

    # and once more: nothing to run, nothing changes
    r = run_cli("sweep", spec, "--out", store, "--workers", "0")
    assert r.code == 0 and DONE_LINE.search(r.out).groups() == (str(total), "0"), r
    check_store(store, spec, faults)


# ---------------------------------------------------------------- acceptance 3: bad specs

BASE = """
[sweep]
kind = "replay"
[base]
source = { workload = "zipf", params = { pages = 100, refs = 1000 } }
frames = 10
"""

BAD_SPECS = {
    "unknown-sweep-key": ("[sweep]\nkind = \"replay\"\ncolour = \"red\"\n[base]\nframes = 10\n", "colour"),
    "unknown-top-level": (BASE + "[extra]\nx = 1\n", "extra"),
    "unknown-axis-key": (BASE + "[[axis]]\nkey = \"frames\"\nvaluez = [1, 2]\n", "valuez"),
    "empty-axis": (BASE + "[[axis]]\nkey = \"frames\"\nvalues = []\n", "frames"),
    "empty-range": (BASE + "[[axis]]\nkey = \"frames\"\nrange = { start = 10, stop = 5, step = 1 }\n", "frames"),
    "zip-lengths": (BASE + "[[axis]]\nzip = [ { key = \"policy\", values = [\"lru\", \"opt\"] }, "
                           "{ key = \"seed\", values = [1, 2, 3] } ]\n", "zip"),
    "bad-base-key": (BASE + "frame = 20\n", "frame"),
    "bad-source-key": (BASE.replace("params =", "parms ="), "parms"),
    "bad-workload-parameter": (BASE.replace("refs = 1000", "refz = 1000"), "refz"),
    "bad-axis-key": (BASE + "[[axis]]\nkey = \"frame\"\nvalues = [1, 2]\n", "frame"),
    "bad-axis-parameter": (BASE + "[[axis]]\nkey = \"source.params.alpah\"\nvalues = [0.5, 1.0]\n", "alpah"),
    "bad-axis-value": (BASE + "[[axis]]\nkey = \"frames\"\nvalues = [10, 0]\n", "frames"),
    "frames-too-large": (BASE + "[[axis]]\nkey = \"frames\"\nvalues = [10, 4294967295]\n", "4294967294"),
    "bad-policy": (BASE + "[[axis]]\nkey = \"policy\"\nvalues = [\"lru\", \"nosuch\"]\n", "nosuch"),
    "duplicate-key": (BASE + "[[axis]]\nkey = \"seed\"\nvalues = [1]\n[[axis]]\nkey = \"seed\"\nvalues = [2]\n", "seed"),
    "bad-kind": ("[sweep]\nkind = \"replays\"\n", "kind"),
    "bad-system-key": ("[sweep]\nkind = \"system\"\n[base.system]\nframes = 100\nframez = 3\n"
                       "[[base.process]]\nname = \"a\"\nworkload = \"scan\"\nparams = { pages = 50, passes = 2 }\n",
                       "framez"),
    "bad-system-axis": ("[sweep]\nkind = \"system\"\n[base.system]\nframes = 100\n"
                        "[[base.process]]\nname = \"a\"\nworkload = \"scan\"\nparams = { pages = 50, passes = 2 }\n"
                        "[[axis]]\nkey = \"token.polcy\"\nvalues = [\"none\"]\n", "polcy"),
    "toml-syntax": ("[sweep\nkind = 1\n", "line 1"),
}


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_bad_spec_is_one_line_naming_file_and_key(tmp_path, case):
    text, key = BAD_SPECS[case]
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    out = tmp_path / "out"
    r = run_cli("sweep", spec, "--out", out, "--workers", "0")
    assert_user_error(r, "spec.toml", key)
    assert not out.exists()


def test_bad_command_line(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(BASE)
    assert_user_error(run_cli("sweep", spec, "--workers", "two"), "--workers")
    assert_user_error(run_cli("sweep", spec, "--workers", "1", "--scheduler", "tcp://127.0.0.1:1"), "--workers")
    assert_user_error(run_cli("sweep", tmp_path / "absent.toml"), "absent.toml")
    assert_user_error(run_cli("results", tmp_path / "absent"), "absent")
    assert_user_error(run_cli("results", tmp_path), "not a sweep store")


# ---------------------------------------------------------------- the spec

def test_axes_product_zip_range_geometric(tmp_path):
    spec = sweep_spec.load_spec({
        "sweep": {"kind": "replay", "name": "grid"},
        "base": {"source": {"workload": "zipf", "params": {"pages": 100, "refs": 1000}}, "frames": 10},
        "axis": [
            {"key": "frames", "range": {"start": 10, "stop": 30, "step": 10}},
            {"zip": [{"key": "policy", "values": ["lru", "opt"]},
                     {"key": "seed", "name": "s", "geometric": {"start": 1, "stop": 2, "factor": 2}}]},
            {"key": "source.params.alpha", "values": [0.8, 1.2]},
        ],
    })
    assert [a.values for a in spec.axes] == [[10, 20, 30], ["lru", "opt"], [1, 2], [0.8, 1.2]]
    points = list(spec.points())
    assert spec.total == len(points) == 12
    # product order: the first axis varies slowest; zipped keys vary together
    assert [(p.axes["frames"], p.axes["policy"], p.axes["s"], p.axes["source.params.alpha"]) for p in points[:4]] == [
        (10, "lru", 1, 0.8), (10, "lru", 1, 1.2), (10, "opt", 2, 0.8), (10, "opt", 2, 1.2)]
    assert points[3].config == {"source": {"workload": "zipf", "params": {"alpha": "1.2", "pages": "100", "refs": "1000"},
                                           "page_size": 4096},
                                "policy": "opt", "frames": 10, "seed": 2}
    assert len({p.hash for p in points}) == 12
    assert sweep_spec._geometric_values({"start": 64, "stop": 4096, "count": 7}, "g", "k") == [
        64, 128, 256, 512, 1024, 2048, 4096]
    assert sweep_spec._range_values({"start": 0.1, "stop": 0.5, "step": 0.1}, "r", "k") == [0.1, 0.2, 0.3, 0.4, 0.5]


def test_point_hash_is_sha256_of_canonical_json_with_engine_version():
    import hashlib

    config = {"source": {"workload": "scan", "params": {}, "page_size": 4096}, "policy": "lru", "frames": 4, "seed": 0}
    same = dict(reversed(list(config.items())))
    assert sweep_spec.point_hash("replay", config) == sweep_spec.point_hash("replay", same)
    payload = {"config": config, "engine_version": _core.ENGINE_VERSION, "kind": "replay",
               "store_format": sweep_spec.STORE_FORMAT}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    assert sweep_spec.point_hash("replay", config) == hashlib.sha256(text.encode()).hexdigest()
    assert sweep_spec.point_hash("system", config) != sweep_spec.point_hash("replay", config)


# ---------------------------------------------------------------- failures, results, the API

def test_failed_point_is_recorded_and_the_sweep_goes_on(tmp_path):
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    lines = [str(i % 300) for i in range(20_000)]
    good.write_text("\n".join(lines) + "\n")
    lines[15_000] = "garbage"  # the file opens; replay stops at this line
    bad.write_text("\n".join(lines) + "\n")
    spec = tmp_path / "traces.toml"
    spec.write_text("""
[sweep]
kind = "replay"
name = "traces"
[base]
source = { trace = "good.csv" }
[[axis]]
key = "source.trace"
name = "trace"
values = ["good.csv", "bad.csv"]
[[axis]]
key = "frames"
values = [50, 100]
""")
    store = tmp_path / "store"
    # a pass a trace: the bad trace's pass fails, and its points are run alone for their errors
    r = run_cli("sweep", spec, "--out", store, "--workers", "0", "--points-per-task", "2")
    assert r.code == 0, r
    assert "ran 4 points" in r.out and "2 failed" in r.out
    assert "pagelab: warning: 2 points failed" in r.err
    failed = sorted((store / "failed").glob("*.json"))
    assert len(failed) == 2 and len(stored_points(store)) == 2
    record = json.loads(failed[0].read_text())
    assert record["axes"]["trace"] == "bad.csv" and "\n" not in record["error"] and "line 15001" in record["error"]

    df = pagelab.results(store)
    assert len(df) == 4
    assert df["error"].notna().tolist() == [False, False, True, True]  # grid order: the good trace first
    assert df["pass_points"].tolist()[:2] == [2, 2]
    direct = pagelab.replay(pagelab.Trace(good), frames=[50, 100])
    assert df["faults"].iloc[:2].tolist() == [direct.faults("lru", 50), direct.faults("lru", 100)]

    # failures are results: a re-run skips them unless asked
    r = run_cli("sweep", spec, "--out", store, "--workers", "0")
    assert DONE_LINE.search(r.out).groups() == ("4", "0") and "2 of the done failed" in r.out, r.out
    r = run_cli("sweep", spec, "--out", store, "--workers", "0", "--retry-failed")
    assert DONE_LINE.search(r.out).groups() == ("2", "2"), r.out

    # pagelab results: a table, and the merged frame as CSV and Parquet
    csv, parquet = tmp_path / "all.csv", tmp_path / "all.parquet"
    r = run_cli("results", store, "--csv", csv, "--parquet", parquet)
    assert r.code == 0, r
    assert "traces: 4 points, 2 failed, 4 rows" in r.out
    import pandas as pd

    assert len(pd.read_csv(csv)) == 4 and len(pd.read_parquet(parquet)) == 4


def test_python_api_returns_a_dataframe_of_the_spec(tmp_path):
    spec = {"sweep": {"kind": "replay", "name": "api"},
            "base": {"source": {"workload": "scan", "params": {"pages": 40, "passes": 3}}, "policy": ["lru", "opt"]},
            "axis": [{"key": "frames", "values": [10, 39, 40]}]}
    df = pagelab.sweep(spec, out=tmp_path / "store", workers=0)
    assert len(df) == 6 and df.attrs["ran"] == 3 and df.attrs["points"] == 3
    assert df.columns[0] == "frames" and list(df.columns[-4:]) == ["seconds", "error", "engine_version", "point"]
    lru = df[df["policy"] == "lru"].set_index("frames")["faults"]
    assert lru[39] == 120 and lru[40] == 40  # a loop of n+1 pages on n frames misses every time
    again = pagelab.sweep(spec, out=tmp_path / "store", workers=0)
    assert again.attrs["ran"] == 0 and again.drop(columns="seconds").equals(df.drop(columns="seconds"))
    # the store lists its points in the grid order of its spec, not in the order of their keys
    spec["axis"][0]["values"] = [40, 10, 39]
    pagelab.sweep(spec, out=tmp_path / "store", workers=0)
    assert pagelab.results(tmp_path / "store")["frames"].tolist() == [40, 40, 10, 10, 39, 39]


def test_timed_system_sweep(tmp_path):
    spec = tmp_path / "system.toml"
    spec.write_text("""
[sweep]
kind = "system"
name = "token"
config = "%s"
[base.system]
space_time = false
[[axis]]
key = "token.policy"
name = "token"
values = ["none", "paper"]
[[axis]]
key = "system.frames"
values = [900, 1100]
""" % (Path(__file__).resolve().parent.parent / "examples" / "two-programs.toml").as_posix())
    df = pagelab.sweep(spec, out=tmp_path / "store", workers=0)
    assert len(df) == 8 and set(df["process"]) == {"table-1", "table-3"}
    assert {"token", "system.frames", "slowdown", "major_faults", "runtime_s", "end_s"} <= set(df.columns)
    assert (df["slowdown"] >= 1).all() and df["error"].isna().all()
    direct = pagelab.run_system(Path(__file__).resolve().parent.parent / "examples" / "two-programs.toml")
    # frames 1054 is the example's own; a point at its value must match the direct run
    df2 = pagelab.sweep({"sweep": {"kind": "system", "config": os.fspath(
        Path(__file__).resolve().parent.parent / "examples" / "two-programs.toml")}}, out=tmp_path / "one", workers=0)
    assert df2.set_index("process")["major_faults"].to_dict() == \
        direct.processes.set_index("name")["major_faults"].to_dict()


def test_bench_sweep_runs_both_ways(tmp_path):
    """`pagelab bench --sweep` (issue 8's throughput benchmark) on a tiny trace."""
    r = run_cli("bench", "--sweep", "--refs", "20000", "--pages", "2000", "--json", cwd=tmp_path)
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["points"] == 64 and len(out["seconds"]) == 4
    assert all(s > 0 for s in out["seconds"].values()) and out["speedup"]["one after another, each alone"] == 1.0
    assert out["policy"] == "opt"
    assert_user_error(run_cli("bench", "--sweep", "--policy", "lru,opt", cwd=tmp_path), "--policy", "one policy")
    assert_user_error(run_cli("bench", "--sweep", "--policy", "nosuch", cwd=tmp_path), "--policy", "nosuch")


# ---------------------------------------------------------------- replay passes

PASS_SOURCE = {"workload": "zipf", "params": {"pages": "300", "refs": "30000"}, "page_size": 4096}


def alone(config: dict) -> list:
    """A point's rows from the public API, replayed by itself."""
    from pagelab.sweeps.points import REPLAY_COLUMNS

    src = pagelab.Workload("zipf", seed=config["seed"], pages=300, refs=30000)
    r = pagelab.replay(src, policy=config["policy"], frames=config["frames"], seed=config["seed"])
    return [dict({c: row.get(c) for c in REPLAY_COLUMNS}, **row.get("counters", {})) for row in r.rows]


def test_a_pass_gives_each_point_its_rows_alone():
    """Points that differ only in memory sizes share one engine pass; each gets exactly
    the rows it gets replayed alone: its sizes in its order, repeats and all, a
    variable-size policy once, randomised and OPT alike."""
    from pagelab.sweeps.points import run_replay_pass

    base = {"source": PASS_SOURCE, "seed": 3, "policy": ["lru", "opt", "ws:500", "random", "dp-approx"]}
    configs = [dict(base, frames=f) for f in (10, [40, 10], [25, 40, 25], 7, 299)]
    together = run_replay_pass(configs)
    assert [len(rows) for rows in together] == [5, 9, 13, 5, 5]
    for config, rows in zip(configs, together):
        assert rows == alone(config)
    # the rows differ between points (the pass did not hand one point's rows to another)
    assert together[0][0]["faults"] != together[3][0]["faults"]


def _jobs(n: int, policy_of=lambda i: "lru", mode: str = "replay") -> list:
    from pagelab.sweeps.executor import Job

    return [Job(f"{i:064x}", mode, {"source": PASS_SOURCE, "seed": 0, "policy": policy_of(i), "frames": 10 + i},
                "/store", {"frames": 10 + i}) for i in range(n)]


def _index(job) -> int:
    return int(job.hash, 16)


def test_tasks_group_points_by_pass_and_mix_sizes():
    from pagelab.sweeps.executor import _tasks

    jobs = _jobs(64)
    tasks = _tasks(jobs, 2, None)
    assert len(tasks) == 8 and all(len(t) == 8 for t in tasks)
    assert [_index(j) for j in tasks[0]] == list(range(0, 64, 8))  # every 8th size: tasks cost alike
    assert sorted(_index(j) for t in tasks for j in t) == list(range(64))
    # two policies: no task mixes them; --points-per-task bounds a pass
    mixed = _jobs(20, lambda i: "lru" if i % 2 else "opt")
    tasks = _tasks(mixed, 1, 4)
    assert all(len({j.config["policy"] for j in t}) == 1 and len(t) <= 4 for t in tasks)
    assert sorted(_index(j) for t in tasks for j in t) == list(range(20))
    # timed-system points: in order, one point a task for small runs
    assert [[_index(j) for j in t] for t in _tasks(_jobs(5, mode="system"), 2, None)] == [[0], [1], [2], [3], [4]]
    # replay jobs of two stores never share a pass
    from dataclasses import replace

    two = _jobs(8) + [replace(j, root="/other", hash=f"{100 + i:064x}") for i, j in enumerate(_jobs(8))]
    assert all(len({j.root for j in t}) == 1 for t in _tasks(two, 1, None))


def test_a_large_store_is_merged_and_reads_the_same(tmp_path, monkeypatch):
    """A sweep that ends with MERGE_AT point files or more merges them into one file:
    resuming and `pagelab results` read the same rows from it; points added later stay
    loose beside it; a damaged merged file is never data: its points run again."""
    monkeypatch.setattr(sweep_store, "MERGE_AT", 5)
    spec = {"sweep": {"kind": "replay", "name": "merged"},
            "base": {"source": {"workload": "zipf", "params": {"pages": 60, "refs": 3000}}, "policy": ["lru", "opt"]},
            "axis": [{"key": "frames", "values": list(range(5, 45, 5))}, {"key": "seed", "values": [1, 2]}]}
    store = tmp_path / "store"
    df = pagelab.sweep(spec, out=store, workers=0)
    assert df.attrs["ran"] == 16 and len(df) == 32
    assert not list((store / "points").glob("*.parquet")) and len(list((store / "merged").glob("*.parquet"))) == 1

    def numbers(frame):
        return frame.drop(columns=["seconds"]).sort_values(["point", "policy"]).reset_index(drop=True)

    again = pagelab.sweep(spec, out=store, workers=0)
    assert again.attrs["ran"] == 0 and numbers(again).equals(numbers(df))
    listed = pagelab.results(store)
    assert numbers(listed[df.columns]).equals(numbers(df)) and listed.attrs["points"] == 16

    spec["axis"][1]["values"] = [1, 2, 3, 4]
    bigger = pagelab.sweep(spec, out=store, workers=0)
    assert bigger.attrs["ran"] == 16 and len(list((store / "merged").glob("*.parquet"))) == 2

    merged = sorted((store / "merged").glob("*.parquet"))
    merged[0].write_bytes(merged[0].read_bytes()[:200])
    r = run_cli("results", store)
    assert r.code == 0 and "pagelab: warning: 1 unreadable files" in r.err and "merged: 16 points" in r.out, r
    spec["axis"][0]["values"] = [5, 10]  # 8 points, 4 of them in each merged file
    rerun = pagelab.sweep(spec, out=store, workers=0)
    assert rerun.attrs["ran"] == 4 and len(rerun) == 16 and not merged[0].exists()
    assert rerun.set_index(["frames", "seed", "policy"])["faults"].to_dict() == \
        bigger[bigger["frames"].isin([5, 10])].set_index(["frames", "seed", "policy"])["faults"].to_dict()


def test_a_point_keeps_the_columns_of_every_row(tmp_path):
    """A replay point's rows differ (a predictive policy's counters follow LRU's row);
    the stored point keeps every row's columns."""
    df = pagelab.sweep({"sweep": {"kind": "replay"},
                        "base": {"source": {"workload": "scan"}, "policy": ["lru", "last-dynamic:60"], "frames": 20}},
                       out=tmp_path / "s", workers=0)
    row = df[df["policy"] == "last-dynamic:60"].iloc[0]
    assert "dead_list_evictions" in df.columns and row["predictions"] >= 0
