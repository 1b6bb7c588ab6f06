"""The kernel backend (docs/kernel-backend.md) on this machine's kernel: real processes
in memory cgroups, on small memories (tens of MB, seconds). As root only (CI runs as
root); otherwise every test that needs root skips, saying why. A swap file is set up
for the module when none is active (and torn down after), so that a limit below the
footprint means swapping, not the OOM killer. The module runs on one worker (make test:
pytest-xdist --dist loadscope), since its swap fixture is machine-wide."""

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import Run, assert_user_error, paging_lock

from pagelab import workload
from pagelab.kernel.backend import run_kernel
from pagelab.kernel.cgroups import process_start_time
from pagelab.kernel.host import memory_hierarchy
from pagelab.kernel.runner import find_runner
from pagelab.system import load_config

ROOT = os.geteuid() == 0
HIERARCHY = memory_hierarchy()
WHY_NOT = ("not root: the kernel backend creates memory cgroups and enables swap" if not ROOT else
           "no memory cgroup controller on this machine" if HIERARCHY is None else None)
if WHY_NOT:
    print(f"tests/test_kernel_backend.py: kernel tests skip: {WHY_NOT}", file=sys.stderr)
needs_root = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")

PAGE = 4096
SCAN_PAGES = 4000  # 15.6 MiB footprint


def pagelab_groups():
    """Every pagelab run cgroup on the machine's memory hierarchy."""
    if HIERARCHY is None:
        return []
    return [p for p in glob.glob(f"{HIERARCHY.mount}/**/pagelab-*", recursive=True) if os.path.isdir(p)]


@pytest.fixture
def swap(kernel_swap):
    """Swap for the module (conftest.py's kernel_swap), and the machine's paging to the
    test (conftest.py's paging_lock)."""
    with paging_lock():
        yield kernel_swap


def run_pagelab(*args) -> tuple:
    """`pagelab ARGS` in a subprocess: (its pid, a conftest Run) so that a test can look
    for exactly that run's cgroups (other runs may be live at the same time)."""
    p = subprocess.Popen([sys.executable, "-m", "pagelab", *map(str, args)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                         env=dict(os.environ, COLUMNS="1000"))
    out, err = p.communicate(timeout=120)
    return p.pid, Run(p.returncode, out, err)


def groups_of(pid: int) -> list:
    return [g for g in pagelab_groups() if os.path.basename(g).startswith(f"pagelab-{pid}-")]


def scan_config(frames: int, passes: int = 3, **system) -> dict:
    return {"system": {"frames": frames, "sample_ms": 100, "cpu_ns_per_ref": 0, **system},
            "process": [{"name": "scan", "workload": "scan",
                         "params": {"pages": SCAN_PAGES, "passes": passes, "write": True}}]}


def kernel_run(config: dict, dedicated: bool = False):
    engine, name = load_config(config)
    return run_kernel(engine, name, dedicated=dedicated)


@needs_root
def test_runner_performs_exactly_the_streams_records():
    spec = {"name": "m", "workload": "matmul", "params": {"n": 48}, "seed": 3}
    info = workload("matmul", seed=3, n=48).info()
    out = subprocess.run([find_runner(), "--process", json.dumps(spec)], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["records"] == info["records"] > 1000
    assert report["references"] == info["references"]
    assert report["writes"] == info["writes"] and report["reads"] == info["reads"] + info["instructions"]
    assert report["pages"] == info["distinct_pages"]
    # every page touched is resident (no limit): the region holds at least the footprint
    assert report["memory"]["region_rss_bytes"] >= info["footprint_bytes"]


@needs_root
def test_limit_holds_and_major_faults_appear_below_the_footprint(swap):
    below = kernel_run(scan_config(frames=SCAN_PAGES // 2))
    p = below.raw["processes"][0]
    limit = below.raw["limit_bytes"]
    assert limit == SCAN_PAGES // 2 * PAGE
    # the limit holds: the cgroup's peak use never passes it; what does not fit is in swap
    assert 0 < below.raw["peak_bytes"] <= limit
    assert p["records"] == p["references"] == SCAN_PAGES * 3
    # passes 2 and 3 over 4000 pages in 2000 frames bring pages back from swap: at least
    # 2 x 2000 swap-ins (system-wide, so other activity can only add). A major fault
    # waits for a read of 2^vm.page-cluster pages (swap readahead), the other pages of
    # it come back as minor faults: so major faults are at least 1/64 of the swap-ins
    assert below.raw["pages_read"] >= 2 * (SCAN_PAGES // 2), below.raw
    assert p["major_faults"] >= 2 * (SCAN_PAGES // 2) // 64, p
    assert p["peak_swap_bytes"] > 0
    assert max(below.raw["system_series"]["cgroup_bytes"] or [0]) <= limit
    # the swap device is found (the file system's disk for a swap file) and was busy
    assert below.raw["swap_disks"] and below.raw["disk_busy_ns"] > 0, below.raw["swap_disks"]


@needs_root
def test_no_major_faults_above_the_footprint(swap):
    above = kernel_run(scan_config(frames=SCAN_PAGES * 4))
    p = above.raw["processes"][0]
    # the kernel counts a page of the runner's own text or of libc read from disk as a
    # major fault too (once in a full parallel test run): a couple at most, where
    # paging the region would give thousands (the test below the footprint)
    assert p["major_faults"] <= 2, p
    assert p["minor_faults"] >= SCAN_PAGES  # every page zero-filled once
    assert p["records"] == SCAN_PAGES * 3


@needs_root
def test_cli_run_on_kernel_writes_the_simulators_result_files(tmp_path, cli, swap):
    cfg = tmp_path / "two.toml"
    cfg.write_text('backend = "kernel"\n[system]\nframes = 3000\nsample_ms = 100\ncpu_ns_per_ref = 0\n'
                   '[[process]]\nname = "a"\nworkload = "scan"\nparams = { pages = 2000, passes = 2, write = true }\n'
                   '[[process]]\nname = "b"\ncommand = ["sleep", "0.2"]\n')
    r = cli("run", cfg, "--out", tmp_path / "out")
    assert r.code == 0, r.err
    assert "cgroup v" in r.out and "limit 11.7 MiB" in r.out
    raw = json.loads((tmp_path / "out" / "result.json").read_text())
    assert raw["backend"] == "kernel" and raw["kernel"] == os.uname().release
    a, b = raw["processes"]
    assert a["records"] == 4000 and b["records"] is None and b["kind"] == "command"
    assert a["dedicated_ns"] > 0 and a["slowdown"] > 0
    assert (tmp_path / "out" / "processes.csv").exists() and (tmp_path / "out" / "memory-a.png").exists()
    # the simulator stays the default when the file says nothing and --on says so
    r = cli("run", cfg, "--on", "simulator", "--out", tmp_path / "sim")
    assert r.code != 0 and "command" in r.err  # the simulator has no command processes


def _children(pid: int) -> dict:
    """pid -> command name of each child of ``pid``."""
    out = subprocess.run(["ps", "--ppid", str(pid), "-o", "pid=,comm="], capture_output=True, text=True).stdout
    return {int(line.split()[0]): line.split()[1] for line in out.splitlines() if line.strip()}


@needs_root
def test_interrupt_leaves_no_cgroup_or_child_behind(tmp_path, start_pagelab):
    cfg = tmp_path / "long.toml"
    cfg.write_text('[system]\nframes = 4096\nsample_ms = 100\n'
                   '[[process]]\nname = "long"\nworkload = "scan"\nparams = { pages = 1000, passes = 1000000 }\n'
                   '[[process]]\nname = "sl"\ncommand = ["sleep", "60"]\n')
    p = start_pagelab("run", cfg, "--on", "kernel", "--out", tmp_path / "out")
    deadline = time.monotonic() + 20
    # the runner is two processes: the stream's generator and the one performing it
    want = ["pagelab-runner", "pagelab-runner", "sleep"]
    while sorted(_children(p.pid).values()) != want and time.monotonic() < deadline:
        time.sleep(0.05)
    kids = list(_children(p.pid))
    assert len(kids) == 3
    mine = groups_of(p.pid)
    assert mine and all(f"-{process_start_time(p.pid)}-" in g for g in mine), pagelab_groups()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 130, err
    assert err.strip().splitlines() == ["pagelab: interrupted: every process of the run was ended and its "
                                        "cgroups removed"]
    assert not [g for g in mine if os.path.exists(g)]
    assert all(process_start_time(k) is None for k in kids)


@needs_root
def test_crashed_child_ends_the_run_with_one_line(tmp_path, cli):
    cfg = tmp_path / "crash.toml"
    cfg.write_text('[system]\nframes = 4096\n'
                   '[[process]]\nname = "long"\nworkload = "scan"\nparams = { pages = 1000, passes = 1000000 }\n'
                   '[[process]]\nname = "bad"\ncommand = ["sh", "-c", "sleep 0.3; echo boom >&2; exit 3"]\n')
    pid, r = run_pagelab("run", cfg, "--on", "kernel", "--out", tmp_path / "out")
    assert_user_error(r, "process 'bad' exited with status 3: boom", "every other process was ended")
    # the run's cgroups are gone, and a cgroup with a process left in it cannot be removed
    assert groups_of(pid) == []


@needs_root
def test_a_stale_cgroup_of_a_dead_owner_is_removed(tmp_path):
    # a dead owner: a process that has exited (its pid and start time no longer match)
    dead = subprocess.Popen(["true"])
    dead.wait()
    base = HIERARCHY.mount / HIERARCHY.own.lstrip("/")
    stale = base / f"pagelab-{dead.pid}-1-1"
    (stale / "p0").mkdir(parents=True)
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        (stale / "p0" / "cgroup.procs").write_text(str(sleeper.pid))
        r = kernel_run(scan_config(frames=SCAN_PAGES * 2, passes=1))
        assert str(stale) in r.raw["stale_cgroups_removed"]
        assert not stale.exists()
        assert sleeper.wait(timeout=5) == -signal.SIGKILL
    finally:
        sleeper.kill()
        sleeper.wait()
        if stale.exists():
            (stale / "p0").rmdir()
            stale.rmdir()


@needs_root
def test_bad_process_tables_are_one_line_errors(tmp_path, cli):
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[system]\nframes = 100\n[[process]]\nname = "x"\nworkload = "nope"\n')
    assert_user_error(cli("run", cfg, "--on", "kernel"), "bad.toml: process[0]", "unknown workload 'nope'")
    cfg.write_text('[system]\nframes = 100\n[[process]]\nname = "x"\ncommand = "ls"\n')
    assert_user_error(cli("run", cfg, "--on", "kernel"), "process[0].command: expected a non-empty array")
    cfg.write_text('backend = "kernal"\n[system]\nframes = 100\n[[process]]\nname = "x"\ncommand = ["ls"]\n')
    assert_user_error(cli("run", cfg), "bad.toml: backend: expected one of 'simulator', 'kernel'")


def test_not_root_is_a_one_line_error(tmp_path, cli):
    """As a user without root (root drops to nobody for this test, in a folder nobody can
    read: pytest's tmp_path is private to root)."""
    where = Path(tempfile.mkdtemp(prefix="pagelab-notroot-", dir="/tmp"))
    os.chmod(where, 0o755)
    cfg = where / "c.toml"
    cfg.write_text('[system]\nframes = 100\n[[process]]\nname = "x"\ncommand = ["true"]\n')
    os.chmod(cfg, 0o644)
    cmd = [sys.executable, "-m", "pagelab", "run", str(cfg), "--on", "kernel", "--out", str(where / "o")]
    if ROOT:
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=where, env=dict(os.environ, HOME=str(where)))
    finally:
        shutil.rmtree(where)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1, p.stderr
    assert lines[0].startswith("pagelab: error: the kernel backend needs root"), lines


def test_setup_errors_are_one_line(cli):
    assert_user_error(cli("kernel", "setup", "--swap", "12X"), "--swap: expected a size such as 256M")
    assert_user_error(cli("kernel", "setup", "--swap", "100k"), "at least 1M")


def test_status_json_says_what_the_machine_offers(cli):
    r = cli("kernel", "status", "--json")
    assert r.code == 0, r.err
    s = json.loads(r.out)
    assert s["root"] == ROOT and s["kernel"] == os.uname().release
    assert set(s) >= {"cgroup", "swap", "userfaultfd", "process_madvise"}
    assert s["userfaultfd"]["available"] in (True, False, None)
    if HIERARCHY is not None:
        assert s["cgroup"]["memory"]["version"] == HIERARCHY.version
    human = cli("kernel", "status")
    assert human.code == 0 and "memory cgroup:" in human.out and "swap:" in human.out


@needs_root
def test_an_oom_killed_process_is_reported_as_such_not_as_a_result(tmp_path, cli):
    # locked memory cannot be swapped out: 64 MiB locked in a 16 MiB limit is an OOM kill
    # with or without swap
    hog = "import ctypes, time; ctypes.CDLL(None).mlockall(3); b = bytearray(64 << 20); time.sleep(5)"
    cfg = tmp_path / "oom.toml"
    cfg.write_text('[system]\nframes = 4096\nsample_ms = 100\n'
                   f'[[process]]\nname = "hog"\ncommand = ["{sys.executable}", "-c", "{hog}"]\n'
                   '[[process]]\nname = "sl"\ncommand = ["sleep", "30"]\n')
    t = time.monotonic()
    pid, r = run_pagelab("run", cfg, "--on", "kernel", "--out", tmp_path / "out")
    assert_user_error(r, "process 'hog' was killed by the OOM killer (memory limit 16.0 MiB", "not a result")
    assert time.monotonic() - t < 15  # the sleeper was ended, not waited for
    assert groups_of(pid) == []
    assert not (tmp_path / "out" / "result.json").exists()


@needs_root
def test_the_cgroup_holds_the_performer_and_the_generator_stays_outside(tmp_path, swap, start_pagelab):
    """The stream's generator runs outside the run's cgroup, so that its buffers (MBs for
    a workload generator) are not charged against the limit: the process's child cgroup
    holds the one process that performs the records, whose own memory is small."""
    cfg = tmp_path / "t.toml"
    # memory for every page (a few MB of cgroup v1 can be OOM-killed while swap-in
    # readahead holds its pages: not what this test is about)
    cfg.write_text('[system]\nframes = 4096\nsample_ms = 50\ncpu_ns_per_ref = 2000\n'
                   '[[process]]\nname = "t"\nworkload = "growing-table"\n'
                   'params = { pages = 1500, stages = 4, lookups = 20000 }\n')
    p = start_pagelab("run", cfg, "--on", "kernel", "--out", tmp_path / "out")
    members, kids = [], {}
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not members:
        for g in groups_of(p.pid):
            child = Path(g) / "p0"
            if child.is_dir():
                members = [int(x) for x in (child / "cgroup.procs").read_text().split()]
        kids = _children(p.pid)
        time.sleep(0.02)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert len(members) == 1 and len(kids) == 2 and set(members) < set(kids), (members, kids)
    raw = json.loads((tmp_path / "out" / "result.json").read_text())
    proc = raw["processes"][0]
    assert proc["records"] == workload("growing-table", pages=1500, stages=4, lookups=20000).info()["records"]
    # the performer's own memory beyond the region: its code, stack and a 53 KB buffer
    assert proc["runner_own_rss_bytes"] < 6 << 20, proc


@needs_root
def test_a_generator_that_fails_midway_fails_the_run(tmp_path, cli):
    """A trace whose line 100,000 is garbage: the generator fails after the performer has
    done the records before it; the run must not pass for a whole one."""
    trace = tmp_path / "bad.csv"
    trace.write_text("".join(f"{i % 500}\n" for i in range(100_000)) + "not-a-page\n")
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[system]\nframes = 4096\n[[process]]\nname = "x"\ntrace = "{trace}"\n')
    pid, r = run_pagelab("run", cfg, "--on", "kernel", "--out", tmp_path / "out")
    assert_user_error(r, "process 'x': its stream generator exited with status 1")
    assert groups_of(pid) == []
    assert not (tmp_path / "out" / "result.json").exists()


@needs_root
def test_repeats_give_medians_and_spread(swap):
    cfg = scan_config(frames=SCAN_PAGES // 2, passes=2)
    cfg["kernel"] = {"repeats": 3}
    r = kernel_run(cfg, dedicated=True).raw
    p = r["processes"][0]
    reps = [x["processes"][0] for x in r["repetitions"]]
    assert len(reps) == 3 and r["oom_kills"] == 0
    majors = sorted(x["major_faults"] for x in reps)
    assert p["major_faults"] == majors[1] and p["spread"]["major_faults"] == [majors[0], majors[2]]
    assert p["spread"]["runtime_ns"][0] <= p["runtime_ns"] <= p["spread"]["runtime_ns"][1]
    assert all(x["slowdown"] > 0 for x in reps)
    # the kernel is not deterministic, but paging a scan twice over is: within 1.5x
    assert majors[0] > 0 and majors[2] <= 1.5 * majors[0], majors


@needs_root
def test_oom_retries_run_again_and_count(tmp_path, cli):
    hog = "import ctypes, time; ctypes.CDLL(None).mlockall(3); b = bytearray(64 << 20)"
    cfg = tmp_path / "oom.toml"
    cfg.write_text('[system]\nframes = 4096\n[kernel]\noom_retries = 2\n'
                   f'[[process]]\nname = "hog"\ncommand = ["{sys.executable}", "-c", "{hog}"]\n')
    pid, r = run_pagelab("run", cfg, "--on", "kernel", "--out", tmp_path / "out")
    assert_user_error(r, "process 'hog' was killed by the OOM killer")
    assert groups_of(pid) == []


@needs_root
def test_probe_measures_the_device_and_the_faults(cli, swap):
    r = cli("kernel", "probe", "--mb", "8", "--reads", "50", "--pages", "2000", "--json")
    assert r.code == 0, r.err
    d = json.loads(r.out)
    fitted, disk = d["fitted"], d["measured"]["disk"]
    assert len(disk["random_read_4k_us"]) == 50 and disk["seq_write_mb_s"] > 0
    assert fitted["disk"]["model"] == "ssd" and fitted["disk"]["latency_us"] > 0 and fitted["disk"]["bandwidth_mb_s"] > 0
    assert fitted["system"]["minor_fault_ns"] > 0
    # with swap active the fault probe paged its region out and back in: major faults
    faults = d["measured"]["faults"]
    assert faults["swapped_bytes"] > 0 and faults["swap_in_random"]["major_faults"] > 0
    assert fitted["system"]["major_fault_cpu_ns"] > 0
    human = cli("kernel", "probe", "--mb", "8", "--reads", "50", "--pages", "2000")
    assert human.code == 0 and "simulator keys fitted to them" in human.out and "[disk]" in human.out
    # the probe file is gone
    assert not list(Path("/var/tmp").glob(".pagelab-probe-*"))


def test_probe_errors_are_one_line(cli, tmp_path):
    assert_user_error(cli("kernel", "probe", "--pages", "5"), "--pages: expected 16 to")
    assert_user_error(cli("kernel", "probe", "--dir", tmp_path / "nope"), "no such directory")


def test_cgroup_v2_files_on_a_fake_tree(tmp_path):
    """cgroup v2 (the unified hierarchy most systems use; this project's machine has its
    memory controller on v1, so v2 is not exercised on a kernel here): the files a run
    writes and reads, on a directory tree shaped like cgroup2fs. What it checks is the
    file protocol of the kernel's cgroup-v2 documentation: memory.max for the limit,
    cgroup.subtree_control to enable the controller for the children, memory.current /
    memory.peak / memory.swap.current / memory.events / memory.pressure for readings."""
    from pagelab.kernel.cgroups import RunCgroups
    from pagelab.kernel.host import CgroupHierarchy

    mount = tmp_path / "cg2"
    own = mount / "user.slice"
    own.mkdir(parents=True)
    (mount / "cgroup.subtree_control").write_text("")
    # our own cgroup cannot take "+memory" (the no-internal-processes rule): a directory
    # where its subtree_control file would be makes the write fail, so the run goes
    # under the root
    (own / "cgroup.subtree_control").mkdir()
    h = CgroupHierarchy(2, mount, "/user.slice")
    cg = RunCgroups(3 << 20, ["a", "b"], hierarchy=h)
    assert cg.base == mount and cg.path.parent == mount
    with cg:
        assert (cg.path / "memory.max").read_text() == str(3 << 20)
        assert (cg.path / "cgroup.subtree_control").read_text() == "+memory"
        assert [p.name for p in sorted(cg.path.iterdir()) if p.is_dir()] == ["p0", "p1"]
        assert cg.procs_file("b") == str(cg.path / "p1" / "cgroup.procs")
        # what the kernel would show
        (cg.path / "memory.current").write_text("1048576\n")
        (cg.path / "memory.peak").write_text("2097152\n")
        (cg.path / "p0" / "memory.swap.current").write_text("4096\n")
        (cg.path / "p0" / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n")
        (cg.path / "memory.pressure").write_text("some avg10=1.00 avg60=0.50 avg300=0.10 total=1234\n")
        assert cg.usage_bytes() == 1 << 20 and cg.peak_bytes() == 2 << 20
        assert cg.swap_bytes(cg.path / "p0") == 4096
        assert cg.oom_kills(cg.path / "p0") == 1 and cg.oom_kills(cg.path / "p1") == 0
        assert cg.pressure().startswith("some avg10=1.00")
        # a real cgroup2fs removes its files with the directory; a fake tree cannot
        for f in list(cg.path.rglob("*")):
            if f.is_file():
                f.unlink()
    assert not cg.path.exists()
    # where our own cgroup can delegate the controller, the run goes under it
    own2 = mount / "delegating"
    own2.mkdir()
    (own2 / "cgroup.subtree_control").write_text("")
    cg2 = RunCgroups(None, ["x"], hierarchy=CgroupHierarchy(2, mount, "/delegating"))
    assert cg2.base == own2 and (own2 / "cgroup.subtree_control").read_text() == "+memory"
