"""End-to-end tests run the real `pagelab` command in a subprocess, as a user would."""

import os
import signal
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_cli(*args, cwd=None, timeout=300, env=None) -> Run:
    """Runs `pagelab ARGS` with its output on a pipe, 1000 columns wide unless ``env``
    sets COLUMNS (the autouse fixture below), so that tests find table headers
    unwrapped; tests/test_console.py checks fitting to narrow widths."""
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.run([sys.executable, "-m", "pagelab", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL, env=full_env)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def assert_user_error(r: Run, *fragments: str) -> None:
    """One line on stderr starting 'pagelab: error:', containing every fragment;
    a non-zero exit; no traceback."""
    assert r.code != 0, r
    assert "Traceback" not in r.err, r.err
    lines = [l for l in r.err.splitlines() if l.strip()]
    assert len(lines) == 1, r.err
    assert lines[0].startswith("pagelab: error:"), lines[0]
    for f in fragments:
        assert f in lines[0], (f, lines[0])


@pytest.fixture
def cli():
    return run_cli


def _sigint_default():
    # a test started in the background (nohup, `cmd &` in a script) inherits SIGINT
    # ignored, and Python then never raises KeyboardInterrupt: the interrupt tests
    # need the user's Ctrl-C
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def start_pagelab():
    """Starts `pagelab ARGS` in the background (stdout and stderr on pipes) with SIGINT
    as at a terminal; whatever is still running when the test ends, failed or not, is
    stopped (SIGTERM, which pagelab handles like Ctrl-C; then SIGKILL), so a failed
    interrupt test leaves no run behind."""
    started = []

    def start(*args) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, "-m", "pagelab", *map(str, args)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                             preexec_fn=_sigint_default)
        started.append(p)
        return p

    yield start
    for p in started:
        if p.poll() is None:
            p.terminate()
            try:
                p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()


@pytest.fixture(autouse=True)
def wide_tables(monkeypatch):
    """Tables are printed 1000 columns wide in every test, in-process and by run_cli."""
    monkeypatch.setenv("COLUMNS", "1000")


@contextmanager
def paging_lock():
    """The machine's paging to this process: paging tests, and the setup and removal of
    the tests' swap files, take it in turn across the pytest workers. Two paging tests at
    once on 2 cores (the gang tests beside the controllers' in CI) share the swap devices:
    the gang case with adaptive page-in was killed by the OOM killer there, at 19.8 MiB,
    while each module alone passed; and a swap file removed by one module while another
    pages onto it must bring those pages back into a cgroup that has no room for them."""
    import fcntl

    with open(Path(tempfile.gettempdir()) / "pagelab-tests-paging.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


#: the tests' own swap files, in /var/tmp (another module's may be active beside ours)
TEST_SWAP_PREFIX = "pagelab-test-"


@pytest.fixture(scope="module")
def kernel_swap(tmp_path_factory, request):
    """Swap for a module of kernel-backend tests (root): the machine's own if it has
    some, else a file of the module's SWAP_SIZE (default 256 MiB) set up here and torn
    down after the module (its record in a state folder of its own, so that a setup of
    the machine's own is never touched). Another module's test swap does not count: it
    goes when that module ends (as in CI, which runs as root on a machine without swap,
    two modules on two workers). This is how CI's paging tests run."""
    from pagelab.kernel.host import swap_devices
    from pagelab.kernel.swapfile import setup_swap, teardown_swap

    machines = [d for d in swap_devices() if not Path(d["name"]).name.startswith(TEST_SWAP_PREFIX)]
    if os.geteuid() != 0 or machines:
        yield None
        return
    state = tmp_path_factory.mktemp("state")
    old = os.environ.get("PAGELAB_STATE_DIR")
    os.environ["PAGELAB_STATE_DIR"] = str(state)
    path = Path("/var/tmp") / f"{TEST_SWAP_PREFIX}{os.getpid()}.swap"
    try:
        with paging_lock():
            setup_swap(getattr(request.module, "SWAP_SIZE", "256M"), str(path), log=lambda _: None)
        yield path
    finally:
        with paging_lock():
            teardown_swap(log=lambda _: None)
        if old is None:
            os.environ.pop("PAGELAB_STATE_DIR", None)
        else:
            os.environ["PAGELAB_STATE_DIR"] = old
        assert not path.exists()


def paging_test(why_not):
    """A decorator for a test that needs the kernel to page: it skips with `why_not`
    (root or cgroups missing) when that is set, else it runs with `paging_swap`."""
    def mark(test):
        return pytest.mark.usefixtures("paging_swap")(pytest.mark.skipif(why_not is not None, reason=why_not or "")(test))
    return mark


@pytest.fixture
def paging_swap(kernel_swap):
    """Active swap for a test that needs the kernel to page (`kernel_swap`), or a skip
    saying why there is none; the test holds the machine's paging (`paging_lock`)."""
    from pagelab.kernel.host import swap_devices

    if not swap_devices():
        pytest.skip("no active swap, and not root to set one up (pagelab kernel setup --swap 1G)")
    with paging_lock():
        yield
