"""`pagelab trace capture`: run a real program under Valgrind lackey and stream its
memory references straight into pagelab's binary format (any other output format is
converted from it at the end).

Valgrind writes the trace to a pipe (``--log-fd``); the engine parses the stream as it
arrives, folds consecutive same-page references and writes the trace. The text is never
stored, so a long run needs no disk space for it. Lackey reports instruction fetches too
(most of a program's references: 72-81% of the captures in issue 22); ``data_only``
drops them while parsing, leaving the loads, stores and modifies."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from typing import Optional, Sequence

from . import _core
from ._core import PagelabError
from .api import Trace, output_format
from .files import parent_dirs


def capture(program: Sequence[str], out, page_size: int = 4096, compress: Optional[bool] = None,
            progress=None, valgrind: str = "valgrind", data_only: bool = False, cwd=None,
            stdout=None, env=None) -> dict:
    """Runs ``program`` under ``valgrind --tool=lackey --trace-mem=yes`` and writes the
    trace to ``out`` (with ``data_only``, without instruction fetches). ``cwd``: the
    program's working folder; ``stdout``: where its output goes (a file object or
    ``subprocess.DEVNULL``; default: this process's); ``env``: its environment (default:
    this process's; a program's start-up reads its environment, so the references differ
    with it). Returns capture statistics (lines, references, records,
    distinct_pages; seconds; the CPU seconds of valgrind and of our parsing, apart) plus
    the program's exit status."""
    if not program:
        raise PagelabError("trace capture: expected a program to run after '--'")
    vg = shutil.which(valgrind)
    if vg is None:
        raise PagelabError(f"trace capture: '{valgrind}' not found on PATH (run 'make setup' "
                           "or install valgrind)")
    exe = program[0]
    if shutil.which(exe) is None and not os.path.isfile(os.path.join(cwd or ".", exe)):
        raise PagelabError(f"trace capture: program '{exe}' not found")
    out = os.fspath(out)
    fmt, compressed = output_format(out, None)
    if compress is None:
        compress = compressed
    if fmt != "pagelab":
        # the engine streams into its own format; any other is a conversion of that
        with parent_dirs(out), tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(out)),
                                                           prefix=".capture.") as tmp:
            plt = os.path.join(tmp, "capture.plt")
            stats = _capture_pagelab(vg, program, plt, page_size, False, progress, data_only, cwd, stdout, env)
            Trace(plt, format="pagelab").save(out, format=fmt, compress=compress)
        return stats
    return _capture_pagelab(vg, program, out, page_size, compress, progress, data_only, cwd, stdout, env)


def _capture_pagelab(vg: str, program: Sequence[str], out: str, page_size: int, compress: bool,
                     progress, data_only: bool = False, cwd=None, stdout=None, env=None) -> dict:
    """Valgrind's lackey output, through a pipe, into the engine's pagelab-format writer."""
    exe = program[0]
    read_fd, write_fd = os.pipe()
    _widen_pipe(write_fd)
    try:
        proc = subprocess.Popen(
            [vg, "--tool=lackey", "--trace-mem=yes", f"--log-fd={write_fd}", *program],
            pass_fds=(write_fd,), stdin=subprocess.DEVNULL, cwd=cwd, stdout=stdout, env=env)
    except OSError as err:
        os.close(read_fd)
        os.close(write_fd)
        raise PagelabError(f"trace capture: cannot start valgrind: {err}") from None
    os.close(write_fd)
    t0, ours0 = time.perf_counter(), _thread_cpu()
    try:
        # The engine takes ownership of read_fd and closes it; it parses on this thread
        # (the GIL released), so this thread's CPU time is all of our part of a capture.
        with parent_dirs(out):
            stats = _core.capture_lackey_fd(read_fd, f"lackey output of {exe}", out, int(page_size),
                                            bool(compress), progress, bool(data_only))
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    stats["parser_cpu_seconds"] = round(_thread_cpu() - ours0, 3)
    status, valgrind_cpu = _wait(proc)
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    stats["valgrind_cpu_seconds"] = valgrind_cpu
    stats["exit_status"] = status
    return stats


def _thread_cpu() -> float:
    """This thread's CPU time (user + system), seconds."""
    return time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID)


def _wait(proc: subprocess.Popen):
    """Waits for valgrind: (its exit status, its CPU time in seconds, user + system)."""
    try:
        _pid, raw, usage = os.wait4(proc.pid, 0)
    except ChildProcessError:  # already reaped
        return proc.wait(), None
    proc.returncode = os.waitstatus_to_exitcode(raw)
    return proc.returncode, round(usage.ru_utime + usage.ru_stime, 3)


#: F_SETPIPE_SZ (Linux): a pipe of 1 MiB, not 64 KiB, so that valgrind, which writes
#: lackey's lines in small pieces, blocks less often on a parser that is briefly busy
F_SETPIPE_SZ = 1031


def _widen_pipe(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, F_SETPIPE_SZ, 1 << 20)
    except (ImportError, OSError):  # not Linux, or above /proc/sys/fs/pipe-max-size
        pass
