"""The kernel backend's controllers (docs/kernel.md): the token-ordered protection and
load control acting on real processes in memory cgroups. First their rules on a fake
run (no root), then on this machine's kernel (root; otherwise those tests skip, saying
why): where the paper says they matter (two processes thrashing in a limit below their
summed footprint) and where they must change nothing (memory for both); that whatever
ends a run, limits are written back and stopped processes continued; one-line errors;
and `reproduce token-lru --on kernel --quick` end to end on a trimmed file."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import assert_user_error, paging_test

from pagelab._core import PagelabError
from pagelab.experiments.protocol import EXPERIMENTS_DIR
from pagelab.kernel import backend
from pagelab.kernel.backend import run_kernel
from pagelab.kernel.cgroups import RunCgroups
from pagelab.kernel.controllers import LoadController, ProcView, RunView, TokenController, controllers_for
from pagelab.kernel.controllers.token import FLOOR_BYTES
from pagelab.kernel.host import CgroupHierarchy, memory_hierarchy
from pagelab.system import load_config, read_toml

ROOT = os.geteuid() == 0
HIERARCHY = memory_hierarchy()
WHY_NOT = ("not root: the kernel controllers need memory cgroups" if not ROOT else
           "no memory cgroup controller on this machine" if HIERARCHY is None else None)
if WHY_NOT:
    print(f"tests/test_kernel_controllers.py: kernel tests skip: {WHY_NOT}", file=sys.stderr)
#: the swap conftest.py's kernel_swap sets up when none is active (root)
SWAP_SIZE = "1G"
#: root, memory cgroups and swap (set up for the module if none is active)
needs_root = paging_test(WHY_NOT)

MB = 1 << 20
LIMITS = {"hold_ns": (1 << 64) - 1, "unsuitable_ns": 5_000_000_000, "self_take_limit": 100,
          "window_ns": 1_000_000_000}


# ---------------------------------------------------------------- a fake run (no root)

class FakeCgroups:
    """What the controllers read and write of a run's cgroups, in memory (v1 by default)."""

    def __init__(self, limit, version=1):
        self.version = version
        self.limit = limit
        self.usage = {}
        self.parent_usage = 0
        self.hits = 0
        self.faults = {}
        self.limits = {}
        self.writes = []
        self.low = {}
        self.low_events = {}

    def usage_bytes(self, group=None):
        return self.parent_usage if group is None else self.usage.get(str(group), 0)

    def limit_hits(self, group=None):
        return self.hits

    def pressure_some_us(self, group=None):
        return None

    def major_faults(self, group):
        return self.faults.get(str(group), 0)

    def events(self, group):
        return {"low": self.low_events.get(str(group), 0)}

    def limit_text(self, group):
        return self.limits.get(str(group), "9223372036854771712")

    def set_limit(self, group, limit):
        self.writes.append((str(group), limit))
        self.limits[str(group)] = "9223372036854771712" if limit is None else str(limit)
        return True

    def set_protection(self, group, low_bytes=None, min_bytes=None):
        self.low[str(group)] = low_bytes


def fake_run(n=2, limit=100 * MB, version=1):
    cg = FakeCgroups(limit, version)
    view = RunView(cg, limit, 4096)
    for i in range(n):
        pv = ProcView(i, f"p{i}", 1_000_000 + i, f"/fake/p{i}")
        view.procs.append(pv)
    return cg, view


def token(view, limits=None, priorities=None):
    t = TokenController({"policy": "paper", "shortage_margin": 0}, dict(LIMITS, **(limits or {})),
                        priorities or {}, 4096, cpus=1)
    for pv in view.procs:
        t.started(view, pv)
    return t


def fault(cg, view, name, n):
    cg.faults[f"/fake/{name}"] = cg.faults.get(f"/fake/{name}", 0) + n


def step(t, cg, view, now, hit=True, **faults):
    """One tick at ``now`` s after the processes' faults; ``hit``: the run met its limit."""
    cg.hits += hit
    for name, n in faults.items():
        fault(cg, view, name, n)
    t.tick(view, now)


def test_token_is_taken_only_under_shortage_and_released_at_exit():
    cg, view = fake_run()
    t = token(view)
    cg.parent_usage = 50 * MB  # half the limit: no shortage
    step(t, cg, view, 0.05, hit=False, p0=10)
    assert t.holder is None and t.events == []
    # the run met its limit: the one that faulted most in the tick takes the token
    step(t, cg, view, 0.10, p1=30, p0=5)
    assert t.holder == "p1"
    step(t, cg, view, 0.15, p0=50)  # held: the other cannot take it
    assert t.holder == "p1"
    view.procs[1].ended = True
    view.now_s = 0.2
    t.exited(view, view.procs[1])
    assert [(e["event"], e["process"]) for e in t.events] == [("grab", "p1"), ("release", "p1")]
    r = t.result()
    assert r["processes"]["p1"]["token_grabs"] == 1 and r["processes"]["p1"]["token_held_ns"] == 100_000_000


def test_token_holder_makes_the_others_give_up_memory_and_gets_it_back_at_release():
    cg, view = fake_run(limit=100 * MB)
    t = token(view)
    cg.usage = {"/fake/p0": 60 * MB, "/fake/p1": 40 * MB}
    cg.parent_usage = 100 * MB
    step(t, cg, view, 0.05, p0=100)  # 100 faults x 8 pages x 4 KiB = 3.1 MiB to make room for
    assert t.holder == "p0" and t.protected
    (group, cap), = cg.writes
    room = 100 * 8 * 4096
    assert group == "/fake/p1" and cap <= 40 * MB - room + 64 * 4096 and cap >= FLOOR_BYTES
    # never below the floor, however much the holder faults
    step(t, cg, view, 0.10, p0=100_000)
    assert cg.writes[-1][1] == FLOOR_BYTES
    # a holder that stops faulting loses its protection after QUIET_NS: the limit goes back
    step(t, cg, view, 0.3, hit=False)
    assert t.protected
    step(t, cg, view, 0.7, hit=False)
    assert not t.protected and cg.writes[-1] == ("/fake/p1", "9223372036854771712")
    assert t.events == [{"t_ns": 50_000_000, "event": "grab", "process": "p0"}]


def test_token_timeout_abuse_unsuitable_and_priority_follow_token_rs():
    cg, view = fake_run(3)
    t = token(view, {"hold_ns": 1_000_000_000, "unsuitable_ns": 2_000_000_000, "self_take_limit": 100})
    cg.usage = {"/fake/p0": 60 * MB, "/fake/p1": FLOOR_BYTES, "/fake/p2": FLOOR_BYTES}
    cg.parent_usage = 100 * MB
    step(t, cg, view, 0.0, p0=10)
    assert t.holder == "p0"
    # the holding limit: timeout, and p0 is token-unsuitable for 2 s
    step(t, cg, view, 1.0, p0=1)
    assert t.events[-1]["event"] == "timeout" and t.holder is None
    step(t, cg, view, 1.05, p0=10)
    assert t.holder is None  # unsuitable
    step(t, cg, view, 1.10, p1=10)
    assert t.holder == "p1"
    # abuse: the others are at their floor and the run meets its limit: the holder's
    # faults are pages taken from itself; more than self_take_limit in the window
    cg.usage["/fake/p0"] = FLOOR_BYTES
    for k in range(3):
        step(t, cg, view, 1.15 + 0.05 * k, p1=60)
    assert [e["event"] for e in t.events][-1] == "abuse" and t.holder is None
    assert t.result()["self_takes"] >= 120
    # section 5.3's priority: a process others wait on takes the token from one that has none
    cg2, view2 = fake_run(2)
    t2 = token(view2, priorities={"p1": True})
    step(t2, cg2, view2, 0.0, p0=10)
    step(t2, cg2, view2, 0.05, p1=1)
    assert [(e["event"], e["process"]) for e in t2.events] == [("grab", "p0"), ("handover", "p0"), ("grab", "p1")]


def test_token_on_cgroup_v2_protects_the_holder_with_memory_low():
    cg, view = fake_run(version=2)
    t = token(view)
    cg.usage = {"/fake/p0": 60 * MB, "/fake/p1": 40 * MB}
    cg.parent_usage = 100 * MB
    step(t, cg, view, 0.05, p0=10)
    assert cg.low["/fake/p0"] == 60 * MB + 10 * 8 * 4096 and cg.writes == []
    # its protected memory reclaimed (memory.events low) while it faults: self-takes
    cg.low_events["/fake/p0"] = 1
    step(t, cg, view, 0.1, hit=False, p0=7)
    assert t.result()["self_takes"] == 7
    t.finish(view)
    assert cg.low["/fake/p0"] == 0


def test_controllers_are_built_from_the_configuration_and_bad_keys_are_one_line():
    def engine(extra):
        e, name = load_config(dict({"system": {"frames": 1000},
                                    "process": [{"name": "a", "workload": "scan"},
                                                {"name": "b", "command": ["true"]}]}, **extra))
        return e, name
    e, name = engine({})
    assert controllers_for(e, name) == []
    e, name = engine({"token": {"policy": "paper", "hold_limit_s": 3}, "load_control": {"enabled": True}})
    tok, lc = controllers_for(e, name, [10**9, 2 * 10**9])
    assert isinstance(tok, TokenController) and isinstance(lc, LoadController)
    assert tok.hold_ns == 3 * 10**9 and tok.unsuitable_ns == 3 * 10**9
    # the holding limit scales with the shortest run alone, as in the simulator
    e, name = engine({"token": {"policy": "paper", "hold_share": 0.5}})
    (tok,) = controllers_for(e, name, [4 * 10**9, 2 * 10**9])
    assert tok.hold_ns == 10**9
    (tok,) = controllers_for(e, name, None)
    assert tok.hold_ns is None
    for extra, fragment in [
        ({"token": {"policy": "linux2620"}}, "token.policy: 'linux2620' is not available on the kernel backend"),
        ({"token": {"policy": "paper", "bogus": 1}}, "bogus"),
        ({"token": {"policy": "paper", "self_take_limit": 0}}, "token.self_take_limit"),
        ({"load_control": {"enabled": True, "window_s": -1}}, "load_control.window_s"),
    ]:
        e, name = engine(extra)
        with pytest.raises(PagelabError) as err:
            controllers_for(e, name)
        assert fragment in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_load_control_suspends_the_largest_and_resumes_when_calm(tmp_path):
    """Real processes (sleep) stopped and continued by signal; the run's cgroups faked."""
    procs = [subprocess.Popen(["sleep", "30"]) for _ in range(3)]
    try:
        cg, view = fake_run(3)
        for pv, p in zip(view.procs, procs):
            pv.pid = p.pid
            pv.cgroup = str(tmp_path / pv.name)
            Path(pv.cgroup).mkdir()
            (Path(pv.cgroup) / "cgroup.procs").write_text(f"{p.pid}\n")
        cg.usage = {view.procs[0].cgroup: 10 * MB, view.procs[1].cgroup: 30 * MB, view.procs[2].cgroup: 20 * MB}
        lc = LoadController({"enabled": True, "high_faults_per_s": 100.0, "low_faults_per_s": 10.0,
                             "window_s": 1.0})
        for pv in view.procs:
            lc.started(view, pv)
        cg.faults[view.procs[0].cgroup] = 50
        lc.tick(view, 1.0)  # 50 a second: between the thresholds
        assert lc.events == []
        cg.faults[view.procs[0].cgroup] = 500
        lc.tick(view, 2.0)
        assert lc.events[-1] == {"t_ns": 2_000_000_000, "event": "suspend", "process": "p1"}
        assert _state(procs[1].pid) == "T" and _state(procs[0].pid, "S") != "T"
        cg.faults[view.procs[0].cgroup] = 1000
        lc.tick(view, 3.0)
        assert lc.events[-1]["process"] == "p2" and _state(procs[2].pid) == "T"
        # one left running: never suspend the last one
        cg.faults[view.procs[0].cgroup] = 2000
        lc.tick(view, 4.0)
        assert len(lc.events) == 2
        lc.tick(view, 5.0)  # calm: the longest suspended goes on
        assert lc.events[-1] == {"t_ns": 5_000_000_000, "event": "resume", "process": "p1"}
        assert _state(procs[1].pid, "S") != "T"
        # whatever ends the run, finish() continues every stopped process
        lc.finish(view)
        assert all(_state(p.pid, "S") != "T" for p in procs)
        r = lc.result()
        assert r["processes"]["p1"]["suspended_ns"] == 3_000_000_000 and r["suspends"] == 2
    finally:
        for p in procs:
            p.kill()
            p.wait()


def _state(pid: int, want: str = "T") -> str:
    """The process's state letter, once it is ``want`` (a signal is delivered when the
    process next runs) or after half a second."""
    deadline = time.monotonic() + 0.5
    while True:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if (state == "T") == (want == "T") or time.monotonic() > deadline:
            return state
        time.sleep(0.005)


def test_cgroup_v2_controller_files_on_a_fake_tree(tmp_path):
    """cgroup v2 (not on this machine's kernel: its memory controller is on v1): what the
    controllers write and read, on a directory tree shaped like cgroup2fs: memory.max of a
    child, memory.low/memory.min, memory.events 'max' and 'low', memory.pressure's total,
    memory.stat pgmajfault."""
    mount = tmp_path / "cg2"
    mount.mkdir()
    (mount / "cgroup.subtree_control").write_text("")
    cg = RunCgroups(64 * MB, ["a", "b"], hierarchy=CgroupHierarchy(2, mount, "/"))
    with cg:
        a = cg.child("a")
        (a / "memory.max").write_text("max\n")
        assert cg.limit_text(a) == "max"
        assert cg.set_limit(a, 8 * MB) and (a / "memory.max").read_text() == str(8 * MB)
        assert cg.set_limit(a, None) and (a / "memory.max").read_text() == "max"
        cg.set_protection(a, low_bytes=5 * MB, min_bytes=MB)
        assert (a / "memory.low").read_text() == str(5 * MB) and (a / "memory.min").read_text() == str(MB)
        (cg.path / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 0\noom_kill 0\n")
        (a / "memory.events").write_text("low 3\nhigh 0\nmax 0\noom 0\noom_kill 0\n")
        assert cg.limit_hits() == 12 and cg.events(a)["low"] == 3
        (cg.path / "memory.pressure").write_text("some avg10=0.50 avg60=0.10 avg300=0.00 total=4321\n"
                                                 "full avg10=0.00 avg60=0.00 avg300=0.00 total=17\n")
        assert cg.pressure_some_us() == 4321
        (a / "memory.stat").write_text("anon 4096\npgfault 100\npgmajfault 42\n")
        assert cg.major_faults(a) == 42
        for f in list(cg.path.rglob("*")):
            if f.is_file():
                f.unlink()
    # v1 files: memory.limit_in_bytes, -1 for none, memory.failcnt; no memory.low
    v1 = tmp_path / "v1"
    v1.mkdir()
    cg1 = RunCgroups(64 * MB, ["a"], hierarchy=CgroupHierarchy(1, v1, "/"))
    with cg1:
        a = cg1.child("a")
        assert cg1.set_limit(a, 8 * MB) and (a / "memory.limit_in_bytes").read_text() == str(8 * MB)
        assert cg1.set_limit(a, None) and (a / "memory.limit_in_bytes").read_text() == "-1"
        (cg1.path / "memory.failcnt").write_text("7\n")
        assert cg1.limit_hits() == 7 and cg1.pressure_some_us() is None
        with pytest.raises(PagelabError, match="cgroup v1 has no memory.low"):
            cg1.set_protection(a, low_bytes=MB)
        for f in list(cg1.path.rglob("*")):
            if f.is_file():
                f.unlink()


# ---------------------------------------------------------------- on the kernel (root)

P = 8000  # pages a scan: 31 MiB


def pair(policy: str, frac: float, passes: int = 12, cpu: float = 8000.0, third=None, extra=None) -> tuple:
    """Two scans of P pages over and over (each one's loop larger than its share of the
    memory when frac < 1: both thrash under the kernel's reclaim)."""
    cfg = {"system": {"frames": int(2 * P * frac), "sample_ms": 200, "cpu_ns_per_ref": cpu},
           "kernel": {"cpus": [0]},
           "disk": {"model": "ssd", "latency_us": 82.4, "bandwidth_mb_s": 1159.0},
           "token": {"policy": "paper" if policy == "paper" else "none"},
           "load_control": {"enabled": policy == "load_control", "high_faults_per_s": 2000.0,
                            "low_faults_per_s": 500.0, "window_s": 0.5},
           "process": [{"name": "a", "workload": "scan", "params": {"pages": P, "passes": passes, "write": True}},
                       {"name": "b", "workload": "scan", "params": {"pages": P, "passes": passes, "write": True},
                        "seed": 1}]}
    if third:
        cfg["process"].append(third)
    for k, v in (extra or {}).items():
        cfg[k] = dict(cfg.get(k, {}), **v)
    return load_config(cfg)


def run(policy, frac, **kw):
    engine, name = pair(policy, frac, **kw)
    return run_kernel(engine, name, dedicated=False).raw


@pytest.fixture(scope="module")
def thrashing_baseline():
    return run("none", 0.75)


def faults(raw):
    return {p["name"]: p["major_faults"] for p in raw["processes"]}


def runtimes(raw):
    return {p["name"]: p["runtime_ns"] / 1e9 for p in raw["processes"]}


@needs_root
def test_token_holder_faults_less_and_finishes_sooner_when_two_thrash(thrashing_baseline):
    base = thrashing_baseline
    tok = run("paper", 0.75)
    grabs = [e for e in tok["token_events"] if e["event"] == "grab"]
    assert grabs, tok["token_events"]
    holder = grabs[0]["process"]
    c = tok["controllers"]["token"]
    assert c["limit_writes"] > 0 and c["protected_ticks"] > 0
    # without a holding limit (no runs alone) it keeps the token until it ends; then the
    # other may take it
    assert [(e["event"], e["process"]) for e in tok["token_events"][:2]] == [("grab", holder), ("release", holder)]
    assert not {"timeout", "abuse"} & {e["event"] for e in tok["token_events"]}, tok["token_events"]
    print(f"none: {faults(base)} {runtimes(base)}; paper: {faults(tok)} {runtimes(tok)}; holder {holder}")
    assert faults(tok)[holder] < 0.7 * faults(base)[holder]
    assert runtimes(tok)[holder] < runtimes(base)[holder]
    assert sum(faults(tok).values()) < sum(faults(base).values())
    row = next(p for p in tok["processes"] if p["name"] == holder)
    assert row["token_grabs"] == 1 and row["token_held_ns"] > 0


@needs_root
def test_load_control_suspends_the_largest_and_the_faults_drop(thrashing_baseline):
    base = thrashing_baseline
    lc = run("load_control", 0.75)
    events = lc["token_events"]
    assert events and events[0]["event"] == "suspend", events
    # every suspension is continued by the end
    assert sum(e["event"] == "suspend" for e in events) == sum(e["event"] == "resume" for e in events)
    assert sum(p["suspended_ns"] for p in lc["processes"]) > 0
    print(f"none: {faults(base)}; load control: {faults(lc)}, events {[e['event'] for e in events]}")
    assert sum(faults(lc).values()) < 0.7 * sum(faults(base).values())


@needs_root
@pytest.mark.parametrize("policy", ["paper", "load_control"])
def test_with_memory_for_both_the_controllers_change_nothing(policy):
    raw = run(policy, 1.4, passes=6)
    assert raw["token_events"] == []
    assert all(p["major_faults"] <= 2 for p in raw["processes"]), faults(raw)
    c = raw["controllers"]["token" if policy == "paper" else "load_control"]
    assert c.get("limit_writes", 0) == 0 and c.get("suspends", 0) == 0


class _Interrupting:
    """Wraps a controller: raises KeyboardInterrupt (Ctrl-C) from a tick once it acted,
    and records, after its finish(), the children's limits and the processes' states."""

    def __init__(self, inner, acted):
        self.inner, self.acted, self.seen = inner, acted, {}
        self.name = inner.name

    def __getattr__(self, attr):
        return getattr(self.inner, attr)

    def tick(self, view, now_s):
        self.inner.tick(view, now_s)
        if self.acted(self.inner):
            self.seen["acted_at"] = now_s
            raise KeyboardInterrupt

    def finish(self, view):
        self.inner.finish(view)
        self.seen["limits"] = {pv.name: view.cgroups.limit_text(Path(pv.cgroup)) for pv in view.procs}
        self.seen["states"] = {pv.name: _state(pv.pid, "R") for pv in view.procs if Path(f"/proc/{pv.pid}").exists()}


@needs_root
@pytest.mark.parametrize("policy", ["paper", "load_control"])
def test_finish_restores_limits_and_continues_processes_when_interrupted(policy, monkeypatch):
    wrapped = []

    def acted(c):
        return bool(c.caps) if policy == "paper" else bool(c.suspended)

    def fake_controllers_for(*a, **kw):
        out = [_Interrupting(c, acted) for c in controllers_for(*a, **kw)]
        wrapped.extend(out)
        return out

    monkeypatch.setattr(backend, "controllers_for", fake_controllers_for)
    engine, name = pair(policy, 0.75, passes=1000)
    with pytest.raises(KeyboardInterrupt):
        run_kernel(engine, name, dedicated=False)
    (w,) = [w for w in wrapped if "acted_at" in w.seen]
    unlimited = str((1 << 63) - 4096)
    assert set(w.seen["limits"].values()) == {unlimited}, w.seen
    assert "T" not in w.seen["states"].values(), w.seen


@needs_root
def test_finish_restores_limits_when_a_process_crashes(monkeypatch):
    seen = []

    class Recording(TokenController):
        def finish(self, view):
            self.caps_before = dict(self.caps)
            super().finish(view)
            seen.append((self.caps_before, {pv.name: view.cgroups.limit_text(Path(pv.cgroup)) for pv in view.procs},
                         self.counters["limit_writes"]))

    monkeypatch.setattr(backend, "controllers_for",
                        lambda *a, **kw: [Recording(c.cfg, {"hold_ns": (1 << 64) - 1, "unsuitable_ns": 1,
                                                            "self_take_limit": 10**9, "window_ns": 10**9},
                                                    {}, 4096, 1) for c in controllers_for(*a, **kw)])
    engine, name = pair("paper", 0.75, passes=1000,
                        third={"name": "crash", "command": ["sh", "-c", "sleep 3; exit 3"]})
    with pytest.raises(PagelabError, match="process 'crash' exited with status 3"):
        run_kernel(engine, name, dedicated=False)
    (caps, limits, writes), = seen
    assert writes > 0, "the token never lowered a limit before the crash"
    assert set(limits.values()) == {str((1 << 63) - 4096)}, limits


@needs_root
def test_kernel_errors_are_one_line(tmp_path, cli):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[system]\nframes = 1000\n[token]\npolicy = "linux2620"\n'
                   '[[process]]\nname = "a"\nworkload = "scan"\n')
    assert_user_error(cli("run", cfg, "--on", "kernel"),
                      "token.policy: 'linux2620' is not available on the kernel backend")
    cfg.write_text('[system]\nframes = 1000\n[load_control]\nenabled = true\nhigh_faults_per_s = "x"\n'
                   '[[process]]\nname = "a"\nworkload = "scan"\n')
    assert_user_error(cli("run", cfg, "--on", "kernel"), "high_faults_per_s")


# ---------------------------------------------------------------- reproduce --on kernel

def test_reproduce_on_the_kernel_without_root_is_one_line(tmp_path):
    """As a user without root (root drops to nobody here, in a folder nobody may use)."""
    where = Path(tempfile.mkdtemp(prefix="pagelab-notroot-", dir="/tmp"))
    os.chmod(where, 0o777)
    cmd = [sys.executable, "-m", "pagelab", "reproduce", "token-lru", "--on", "kernel", "--quick",
           "--out", str(where / "o")]
    if ROOT:
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=where, env=dict(os.environ, HOME=str(where)))
        assert not (where / "o").exists()
    finally:
        shutil.rmtree(where)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1, p.stderr
    assert lines[0] == ("pagelab: error: token-lru.toml: reproduce --on kernel runs real processes in memory "
                        "cgroups, which needs root"), lines



TRIMMED = """
[experiment]
name = "token-lru"
module = "token_lru"
paper = "token-ordered-lru.txt"
title = "token-lru trimmed for a test"
quick_scale = 0.5
[setup]
policies = ["none", "paper"]
[base.system]
page_size = 4096
sample_ms = 100.0
seed = 0
{pair}
[section54]
memory_units = 60
unit_pages = 40
policies = ["none", "paper"]
[[section54.process]]
name = "small"
units = 53
workload = "shrinking-loop"
params = { loops = 30 }
cpu_ns_per_ref = 200000.0
[[section54.process]]
name = "large"
units = 58
workload = "shrinking-loop"
params = { loops = 30 }
cpu_ns_per_ref = 200000.0
[kernel]
size_scale = 4.0
max_alone_s = 1.5
quick_repeats = 1
cpus = [0]
disk = { model = "ssd", latency_us = 82.4, bandwidth_mb_s = 1159.0 }
load_control = { high_faults_per_s = 3500.0, low_faults_per_s = 900.0, window_s = 1.0 }
[[kernel.pair]]
name = "bit-r/gcc (real gcc)"
paper_programs = "bit-r/gcc"
like = "vortex1/vortex3"
memory = 0.5
[[kernel.pair.process]]
name = "bit-r"
workload = "bit-r"
params = { n = 1048576 }
cpu_ns_per_ref = 7485.0
scale = ["n"]
[[kernel.pair.process]]
name = "gcc"
command = ["gcc", "-O2", "-c", "{input}", "-o", "/dev/null"]
input = { kind = "c-source", functions = 1, statements = 150, seed = 0 }
footprint_mb = 40.0
"""


def trimmed_token_lru(path: Path) -> Path:
    """token-lru.toml cut to one Table 2 pair, one real-program pair and section 5.4, at
    sizes that run in about a minute (the protocol end to end, not the numbers), with
    the shipped file's claims as they are."""
    text = (EXPERIMENTS_DIR / "token-lru.toml").read_text()
    pair = text[text.index('[[pair]]\nname = "vortex1/vortex3"'):text.index('[[pair]]\nname = "LU-1/LU-2"')]
    claims = text[text.index("[[claim]]"):text.index("# ---------------------------------------------------------------- sensitivity")]
    path.write_text(TRIMMED.replace("{pair}", pair) + "\n" + claims)
    return path


@needs_root
def test_reproduce_token_lru_on_the_kernel_end_to_end(tmp_path, cli):
    exp = trimmed_token_lru(tmp_path / "token-lru.toml")
    out = tmp_path / "out"
    t0 = time.monotonic()
    r = cli("reproduce", exp, "--on", "kernel", "--quick", "--out", out, timeout=600)
    assert r.code == 0, r.err
    print(f"reproduce --on kernel --quick, trimmed: {time.monotonic() - t0:.0f} s")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["on"] == "kernel" and summary["points"] == 8  # 2 pairs x 3 policies, 2 for section 5.4
    assert summary["analysis"]["section54"]["space_time"] == "not measured"
    verdicts = {c["id"]: c["verdict"] for c in summary["claims"]}
    shipped = [c["id"] for c in read_toml(EXPERIMENTS_DIR / "token-lru.toml")["claim"]]
    assert list(verdicts) == shipped
    # one pair of Table 2: the per-program claims have two of ten programs; the section
    # 5.4 claims are measured from the runs' times
    assert verdicts["s54-small-finishes"] != "not measured"
    titles = [v["title"] for v in summary["views"]]
    assert any("real programs on the kernel" in t for t in titles), titles
    assert "not measured on the kernel" in " ".join(summary["lines"])
    assert (out / "claims.csv").exists() and (out / "pair-vortex1_vortex3.png").exists()
    assert not list(out.glob("space-time-*"))
