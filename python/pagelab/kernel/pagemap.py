"""Another process's anonymous memory as page runs: its anonymous mappings
(/proc/PID/maps), which of their pages are resident or swapped (/proc/PID/pagemap:
bit 63 present, bit 62 swapped, bit 55 soft-dirty, bits 0-54 the frame number, as
root), and the kernel's flags of a resident page's frame (/proc/kpageflags: on the
active LRU list, in the swap cache, under writeback). Used by the gang controller
(controllers/gang.py) to choose what to page out and to record what to page back in.

A run of pages is ``(start address, pages)``. A pagelab-runner performer reserves 1 TiB
of address space for its stream (crates/runner/src/region.rs) and uses a prefix of it,
so a mapping is read in chunks from its start until ``EMPTY_CHUNKS`` chunks in a row
hold neither a resident nor a swapped page beyond the furthest page seen before (a hole
the stream's frees left is read through, since the furthest page is remembered)."""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

import numpy as np

PAGE = os.sysconf("SC_PAGE_SIZE")
#: pages read from pagemap at a time (64 KiB of entries)
CHUNK_PAGES = 8192
#: empty chunks in a row (64 MiB of address space) that end the read of a mapping
EMPTY_CHUNKS = 2
#: kpageflags blocks (4 KiB, 512 frames each) read at once when the frames wanted lie close (the
#: kernel computes the flags of every frame it is asked for: for 4,400 frames 1-4 blocks took
#: 20 ms, 16 blocks 46 ms, 64 blocks 92 ms)
KPAGEFLAGS_SPAN = 4
#: pagemap bits
PRESENT = np.uint64(1 << 63)
SWAPPED = np.uint64(1 << 62)
SOFT_DIRTY = np.uint64(1 << 55)
PFN_MASK = np.uint64((1 << 55) - 1)
#: kpageflags bits (Documentation/admin-guide/mm/pagemap.rst)
KPF_REFERENCED = 2
KPF_WRITEBACK = 8
KPF_ACTIVE = 6
KPF_ANON = 12
KPF_SWAPCACHE = 13
_NOT_ANON = ("[vvar]", "[vdso]", "[vsyscall]", "[vvar_vclock]", "[uprobes]")

Run = Tuple[int, int]


def _anon_range(line: str) -> Optional[Tuple[int, int]]:
    """(start, end) when a maps/smaps header line is a private writable anonymous
    mapping (the heap, the stack, an anonymous mmap: a runner's region), else None."""
    parts = line.split(None, 5)
    if len(parts) < 5 or "-" not in parts[0]:
        return None
    perms, inode = parts[1], parts[4]
    path = parts[5].strip() if len(parts) > 5 else ""
    if len(perms) < 4 or inode != "0" or perms[:2] != "rw" or perms[3] != "p" or path in _NOT_ANON:
        return None
    if path and not (path in ("[heap]", "[stack]") or path.startswith("[anon")):
        return None
    a, b = parts[0].split("-")
    try:
        return int(a, 16), int(b, 16)
    except ValueError:
        return None


def anon_mappings(pid: int) -> List[Tuple[int, int]]:
    """(start, end) of the process's private writable anonymous mappings; [] when it is gone."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    return [r for r in map(_anon_range, lines) if r is not None]


def anon_referenced_pages(pid: int) -> Optional[int]:
    """Pages of the process's anonymous mappings referenced since its bits were last
    cleared (/proc/PID/smaps ``Referenced`` of those mappings: smaps_rollup's would count
    its program's and libraries' file pages too, which its memory cgroup is not charged
    for); None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/smaps") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    total, inside = 0, False
    for line in lines:
        if line[:1].isdigit() or line[:1] in "abcdef":
            if _anon_range(line) is not None:
                inside = True
                continue
            if "-" in line.split(None, 1)[0]:
                inside = False
                continue
        if inside and line.startswith("Referenced:"):
            total += int(line.split()[1]) * 1024
    return total // PAGE


class PageMap:
    """Reads one process's pagemap over its anonymous mappings, remembering how far each
    mapping is used (so a 1 TiB reservation is read only as far as its pages go)."""

    def __init__(self, pid: int):
        self.pid = pid
        #: mapping start -> the end of the furthest page seen used
        self._extent: Dict[int, int] = {}

    def entries(self) -> List[Tuple[int, np.ndarray]]:
        """(start address, pagemap entries) of each anonymous mapping, as far as it is
        used; [] when the process is gone."""
        out = []
        try:
            fd = os.open(f"/proc/{self.pid}/pagemap", os.O_RDONLY)
        except OSError:
            return out
        try:
            for start, end in anon_mappings(self.pid):
                known = self._extent.get(start, start)
                parts, at, empty = [], start, 0
                while at < end and (at < known or empty < EMPTY_CHUNKS):
                    n = min(CHUNK_PAGES, (end - at) // PAGE)
                    try:
                        data = os.pread(fd, n * 8, (at // PAGE) * 8)
                    except OSError:
                        break
                    e = np.frombuffer(data, dtype=np.uint64)
                    if len(e) == 0:
                        break
                    used = np.nonzero(e & (PRESENT | SWAPPED))[0]
                    if len(used):
                        empty = 0
                        known = max(known, at + (int(used[-1]) + 1) * PAGE)
                    elif at >= known:
                        empty += 1
                    parts.append(e)
                    at += len(e) * PAGE
                self._extent[start] = known
                if parts and known > start:
                    e = np.concatenate(parts)[: (known - start) // PAGE]
                    out.append((start, e))
        finally:
            os.close(fd)
        return out

    def runs(self, mask: np.uint64, without: np.uint64 = np.uint64(0)) -> List[Run]:
        """Runs of pages whose entry has every bit of ``mask`` and none of ``without``,
        in address order."""
        out: List[Run] = []
        for start, e in self.entries():
            out += bit_runs(start, ((e & mask) == mask) & ((e & without) == 0))
        return out

    def resident(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(address, frame number, soft-dirty) of every resident page, in address order."""
        addrs, pfns, soft = [], [], []
        for start, e in self.entries():
            idx = np.nonzero(e & PRESENT)[0]
            addrs.append(start + idx.astype(np.uint64) * np.uint64(PAGE))
            pfns.append(e[idx] & PFN_MASK)
            soft.append((e[idx] & SOFT_DIRTY) != 0)
        if not addrs:
            return np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, bool)
        return np.concatenate(addrs), np.concatenate(pfns), np.concatenate(soft)


def bit_runs(start: int, flags: np.ndarray) -> List[Run]:
    """Runs of True in ``flags`` (one per page from ``start``) as (address, pages)."""
    if not flags.any():
        return []
    f = np.concatenate(([False], flags.astype(bool), [False]))
    d = np.diff(f.astype(np.int8))
    begins = np.nonzero(d == 1)[0]
    ends = np.nonzero(d == -1)[0]
    return [(start + int(b) * PAGE, int(e - b)) for b, e in zip(begins, ends)]


def addr_runs(addrs: np.ndarray) -> List[Run]:
    """Sorted page addresses as runs of consecutive pages."""
    if len(addrs) == 0:
        return []
    a = addrs.astype(np.int64)
    breaks = np.nonzero(np.diff(a) != PAGE)[0]
    begins = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks + 1, [len(a)]))
    return [(int(a[b]), int(e - b)) for b, e in zip(begins, ends)]


def page_flags(pfns: np.ndarray) -> Optional[np.ndarray]:
    """The kpageflags word of each frame (0 for one that cannot be read); None when
    /proc/kpageflags cannot be read (not root)."""
    try:
        fd = os.open("/proc/kpageflags", os.O_RDONLY)
    except OSError:
        return None
    try:
        # one read per 4 KiB block of kpageflags (512 frames) holding any of them
        blocks, where = np.unique(pfns // np.uint64(512), return_inverse=True)
        words = np.zeros((len(blocks), 512), np.uint64)
        # blocks close together in one read (at most KPAGEFLAGS_SPAN blocks, gaps included)
        i = 0
        while i < len(blocks):
            j = i
            while j + 1 < len(blocks) and blocks[j + 1] - blocks[i] < KPAGEFLAGS_SPAN:
                j += 1
            first, n = int(blocks[i]), int(blocks[j] - blocks[i]) + 1
            try:
                data = os.pread(fd, 4096 * n, first * 4096)
            except OSError:
                data = b""
            got = np.frombuffer(data[: len(data) // 8 * 8], dtype=np.uint64)
            got = np.concatenate((got, np.zeros(n * 512 - len(got), np.uint64))).reshape(n, 512)
            words[i:j + 1] = got[(blocks[i:j + 1] - blocks[i]).astype(np.int64)]
            i = j + 1
    finally:
        os.close(fd)
    return words[where.reshape(-1), (pfns % np.uint64(512)).astype(np.int64)]


def has_flag(flags: np.ndarray, bit: int) -> np.ndarray:
    return (flags >> np.uint64(bit)) & np.uint64(1) == np.uint64(1)


def take_pages(runs: List[Run], pages: int) -> List[Run]:
    """The first ``pages`` pages of ``runs`` (address order), as runs."""
    out: List[Run] = []
    left = pages
    for start, n in runs:
        if left <= 0:
            break
        k = min(n, left)
        out.append((start, k))
        left -= k
    return out


def run_pages(runs: List[Run]) -> int:
    return sum(n for _, n in runs)


def intersect(a: List[Run], b: List[Run]) -> List[Run]:
    """The pages in both lists of runs (each sorted, non-overlapping), in address order."""
    out: List[Run] = []
    i = j = 0
    while i < len(a) and j < len(b):
        s = max(a[i][0], b[j][0])
        e = min(a[i][0] + a[i][1] * PAGE, b[j][0] + b[j][1] * PAGE)
        if s < e:
            out.append((s, (e - s) // PAGE))
        if a[i][0] + a[i][1] * PAGE < b[j][0] + b[j][1] * PAGE:
            i += 1
        else:
            j += 1
    return out
