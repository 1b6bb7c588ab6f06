"""Advice about another process's memory: ``pidfd_open`` (syscall 434) and
``process_madvise`` (440, Linux 5.10+; ``MADV_COLD`` and ``MADV_PAGEOUT`` since 5.10,
``MADV_WILLNEED`` since 5.16), through libc's ``syscall``. As root (CAP_SYS_NICE and
ptrace access to the target).

- ``MADV_PAGEOUT``: reclaim the range now: a dirty anonymous page is added to the swap
  cache, unmapped and its write started; it leaves memory (and its memory cgroup's
  charge) only when reclaim next finds it, written, at the tail of the inactive list. A
  clean page (its swap copy valid) is freed at once. Pages mapped by several processes
  are skipped.
- ``MADV_WILLNEED`` on anonymous memory: start reading every swapped page of the range
  into the swap cache (charged to the process's cgroup) and return; a later touch
  finds it there (a minor fault, or a wait for the read in flight).
- ``MADV_COLD``: move the range's pages to the inactive list (no I/O)."""

from __future__ import annotations

import ctypes
import errno
import os
from typing import List, Optional, Tuple

SYS_PIDFD_OPEN = 434
SYS_PROCESS_MADVISE = 440
MADV_WILLNEED = 3
MADV_COLD = 20
MADV_PAGEOUT = 21
#: iovecs per call (the kernel's UIO_MAXIOV)
IOV_MAX = 1024

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _IoVec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


def pidfd_open(pid: int) -> Optional[int]:
    """A pidfd for ``pid``; None when the process is gone."""
    fd = _libc.syscall(SYS_PIDFD_OPEN, ctypes.c_int(pid), ctypes.c_uint(0))
    if fd < 0:
        e = ctypes.get_errno()
        if e == errno.ESRCH:
            return None
        raise OSError(e, f"pidfd_open({pid}): {os.strerror(e)}")
    return int(fd)


def process_madvise(pidfd: int, runs: List[Tuple[int, int]], advice: int, page: int = 4096,
                    per_call: int = IOV_MAX) -> Tuple[int, int]:
    """``advice`` over ``runs`` ((address, pages), in order) of the process of
    ``pidfd``, at most ``per_call`` runs per call. Returns (bytes advised, calls made).
    A process that has gone, or a range no longer mapped, ends the advice quietly
    (what was advised before counts); another error raises OSError."""
    done = calls = 0
    for i in range(0, len(runs), per_call):
        chunk = runs[i:i + per_call]
        iov = (_IoVec * len(chunk))(*[_IoVec(a, n * page) for a, n in chunk])
        calls += 1
        r = _libc.syscall(SYS_PROCESS_MADVISE, ctypes.c_int(pidfd), iov, ctypes.c_size_t(len(chunk)),
                          ctypes.c_int(advice), ctypes.c_uint(0))
        if r < 0:
            e = ctypes.get_errno()
            if e in (errno.ESRCH, errno.ENOMEM, errno.EINVAL, errno.EFAULT):
                break
            raise OSError(e, f"process_madvise(advice {advice}): {os.strerror(e)}")
        done += int(r)
        if r < sum(n for _, n in chunk) * page:
            break
    return done, calls


def available() -> bool:
    """Whether this kernel has process_madvise (ENOSYS: it has not)."""
    r = _libc.syscall(SYS_PROCESS_MADVISE, ctypes.c_int(-1), None, ctypes.c_size_t(0), ctypes.c_int(0),
                      ctypes.c_uint(0))
    return not (r < 0 and ctypes.get_errno() == errno.ENOSYS)
