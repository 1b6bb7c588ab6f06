"""The real-program suite (issue 21): programs that install as Debian packages, each
run once on an input generated from a seed (``suite_inputs.py``) and captured under
Valgrind lackey, data references only, into a pagelab trace in the suite's cache folder
(``suite_cache.py``), with a JSON manifest beside it: the command, the input recipe and
its SHA-256, the package versions, the native run time and the capture time.

Why data references only: predictive-replacement.txt's Valgrind skin "return[ed] control
to the skin after every memory-referencing instruction with the value of the memory
address that was referenced" (section 3.2): its traces are the data addresses of loads
and stores; instruction fetches (most of lackey's lines) are left out as they are parsed.

Every size below is chosen so that the member's footprint is a few MB to tens of MB and
its capture takes minutes, not hours, under Valgrind on a 2-core machine; each has its
reason beside it (``why``). ``pagelab suite build`` captures several members at once,
one valgrind per core; the engine parses each valgrind's pipe as it arrives."""

from __future__ import annotations

import concurrent.futures
import datetime
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from . import _core
from ._core import PagelabError
from .api import Trace
from .capture import capture
from .files import write_text
from .suite_cache import MEMBERS, built_trace, is_suite_name, manifest, manifest_path, member_of, suite_dir, trace_path
from .suite_inputs import RECIPES
from .version import build_info

PAGE_SIZE = 4096

#: hpcc's input: HPL.dat's layout (hpcc's README, "Runtime Configuration") with one
#: problem size N, one block size NB and a 1 x 1 process grid (one process); the other
#: tests (PTRANS, DGEMM, STREAM, RandomAccess, FFT) are sized by hpcc from HPL's memory.
HPCC_INPUT = """HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}          Ns
1            # of NBs
{nb}         NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
1            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
"""
#: hpcc's N: the HPL matrix is N^2 doubles (0.7 MB at 300), and hpcc sizes every other
#: test from it (RandomAccess's table, STREAM's three vectors, FFT's vector). hpcc's own
#: start (Open MPI's initialisation) waits about half a second natively whatever N, but
#: costs little CPU: at 300 the run takes 0.14 CPU seconds and its capture 9 minutes on
#: a loaded 2-core machine (178 million data references); at 800 it was hours. NB = 40
#: divides N.
HPCC_N, HPCC_NB = 300, 40
HPCC_OUTPUT = "hpccoutf.txt"
#: every member runs with this environment and no other (natively and under valgrind):
#: a program's start-up reads its environment, so another one (another user's, a longer
#: $PAGELAB_SUITE_DIR) would give a few hundred references more or less
PROGRAM_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "TZ": "UTC", "HOME": "/nonexistent"}
SECTION = re.compile(r"^(Begin|End) of (\w+) section\.")


@dataclass(frozen=True)
class Member:
    """One suite member: a program, its Debian package, its input and its command."""
    name: str
    summary: str
    package: str
    #: the executable (on PATH), or a callable finding it (gcc's cc1)
    program: str
    #: the command after the program; {input} is the input file's name
    args: Tuple[str, ...] = ()
    recipe: Optional[str] = None
    size: int = 0
    seed: int = 0
    input_name: str = "input"
    why: str = ""
    #: the paper's program (predictive-replacement.txt) and the built-in generator it
    #: stands beside, if any
    counterpart: Optional[str] = None
    #: a part of another member's capture: (member, hpcc section)
    part_of: Optional[Tuple[str, str]] = None
    parts: Tuple[str, ...] = field(default=())


def _cc1() -> Optional[str]:
    """gcc's compiler proper (cc1): the program a compile spends its time and memory in
    (the driver gcc only starts it, then the assembler)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    try:
        out = subprocess.run([gcc, "-print-prog-name=cc1"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out if out and os.path.isfile(out) else None


SUITE: Dict[str, Member] = {m.name: m for m in [
    Member("hpcc", "HPC Challenge: RandomAccess, PTRANS, DGEMM, STREAM, FFT, HPL (LU) in one process",
           "hpcc", "hpcc", (), None, 0, 0, HPCC_OUTPUT,
           f"N = {HPCC_N}, NB = {HPCC_NB}, a 1 x 1 grid (see HPCC_N)", counterpart=None,
           parts=("hpcc-hpl", "hpcc-fft", "hpcc-stream", "hpcc-randomaccess")),
    Member("hpcc-hpl", "hpcc's HPL section: LU factorisation with partial pivoting of an N x N matrix",
           "hpcc", "hpcc", part_of=("hpcc", "HPL"), why="the HPL section of the hpcc capture",
           counterpart="lu"),
    Member("hpcc-fft", "hpcc's SingleFFT section: a 1-D complex FFT of 2^k points",
           "hpcc", "hpcc", part_of=("hpcc", "SingleFFT"), why="the SingleFFT section of the hpcc capture",
           counterpart="npb-ft"),
    Member("hpcc-stream", "hpcc's SingleSTREAM section: copy, scale, add, triad over three vectors",
           "hpcc", "hpcc", part_of=("hpcc", "SingleSTREAM"), why="the SingleSTREAM section of the hpcc capture"),
    Member("hpcc-randomaccess", "hpcc's SingleRandomAccess section: random read-modify-writes of a table",
           "hpcc", "hpcc", part_of=("hpcc", "SingleRandomAccess"),
           why="the SingleRandomAccess section of the hpcc capture"),
    Member("gzip", "gzip -6 of SPEC-like mixed data (log, image, binary, random, tar)", "gzip", "gzip",
           ("-6", "-c", "{input}"), "mixed", 512 << 10, 1, "input.bin",
           "512 KiB: gzip's memory is its 64 KiB window and hash chains whatever the input (it streams; under "
           "1 MB touched), so the size only sets the run's length: 2 MiB took 13 minutes to capture (141 million "
           "data references); level 6 is gzip's default and spec-gzip's", counterpart="spec-gzip"),
    Member("gzip-small", "gzip -6 of 200 KiB of the same mixed data: the tests' member", "gzip", "gzip",
           ("-6", "-c", "{input}"), "mixed", 200 << 10, 1, "input.bin",
           "200 KiB: the end-to-end test's member, captured in seconds"),
    Member("bzip2", "bzip2 -9 of the mixed data", "bzip2", "bzip2", ("-9", "-c", "{input}"), "mixed", 400 << 10, 1,
           "input.bin", "400 KiB: one block at -9 (bzip2's default), sorted in about 4 MB"),
    Member("xz", "xz -3 (LZMA2, 4 MiB dictionary) of the mixed data, one thread", "xz-utils", "xz",
           ("-3", "-T1", "-c", "{input}"), "mixed", 256 << 10, 1, "input.bin",
           "256 KiB at -3: about 12 MB resident (the hc4 match finder's tables and the dictionary); 2 MiB ran "
           "1.7 times as long natively, the default -6 2.7 times as long again"),
    Member("gcc", "gcc's compiler proper (cc1 -O2) on a generated C file", "gcc", "cc1",
           ("-quiet", "-O2", "{input}", "-o", "out.s"), "c-source", 3000, 2, "input.c",
           "3 KB of C (four functions): cc1 -O2 reaches about 33 MB resident, most of it its own start-up; "
           "30 KB took ten times as long natively (45 MB), which is hours under Valgrind", counterpart=None),
    Member("sqlite", "sqlite3: an in-memory database filled, indexed and queried (joins, GROUP BY, ORDER BY)",
           "sqlite3", "sqlite3", (":memory:", ".read {input}"), "sql", 5000, 3, "input.sql",
           "5,000 orders of 500 customers: a database of a few MB (4.6 MB resident), queried six ways"),
    Member("sort", "GNU sort of text lines in memory, one thread", "coreutils", "sort",
           ("-S", "64M", "--parallel=1", "-o", "out.txt", "{input}"), "lines", 1 << 20, 4, "input.txt",
           "1 MiB of lines: sort holds them and their line table in its 64 MiB buffer (about 5 MB resident)"),
]}

assert set(SUITE) == set(MEMBERS), "suite_cache.MEMBERS and suite.SUITE differ"


# ---------------------------------------------------------------- facts about the machine

def program_path(member: Member) -> Optional[str]:
    if member.program == "cc1":
        return _cc1()
    return shutil.which(member.program)


def package_version(package: str) -> Optional[str]:
    """The Debian package's version (dpkg-query), None where there is no dpkg."""
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def valgrind_version() -> Optional[str]:
    try:
        return subprocess.run(["valgrind", "--version"], capture_output=True, text=True,
                              timeout=30).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def base_of(name: str) -> str:
    m = SUITE[name]
    return m.part_of[0] if m.part_of else name


def check_names(names: Sequence[str]) -> List[str]:
    """Members to build, in suite order; parts name their whole (hpcc-hpl -> hpcc)."""
    out = []
    for n in names:
        if n not in SUITE:
            raise PagelabError(f"suite build: no member '{n}' (the members: {', '.join(MEMBERS)})")
        out.append(base_of(n))
    return [n for n in SUITE if n in out]


def default_members() -> List[str]:
    """`pagelab suite build` with no names: every member but the tests' small one."""
    return [n for n, m in SUITE.items() if m.part_of is None and n != "gzip-small"]


# ---------------------------------------------------------------- the inputs

def make_input(member: Member, work: Path) -> dict:
    """Writes the member's input into ``work``; returns its recipe for the manifest."""
    if member.name == "hpcc":
        text = HPCC_INPUT.format(n=HPCC_N, nb=HPCC_NB)
        (work / "hpccinf.txt").write_text(text)
        return {"file": "hpccinf.txt", "recipe": "hpccinf.txt (HPL.dat layout)", "N": HPCC_N, "NB": HPCC_NB,
                "grid": "1 x 1", "bytes": len(text), "sha256": hashlib.sha256(text.encode()).hexdigest()}
    data = RECIPES[member.recipe](member.size, member.seed)
    (work / member.input_name).write_bytes(data)
    return {"file": member.input_name, "recipe": member.recipe, "size": member.size, "seed": member.seed,
            "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "generator": f"pagelab.suite_inputs.{RECIPES[member.recipe].__name__}({member.size}, {member.seed})"}


def capture_recipe(member: Member) -> dict:
    """What a member's capture depends on (its command and its input's recipe), as its
    manifest records it: a member whose manifest holds another is built again."""
    if member.part_of:
        return capture_recipe(SUITE[member.part_of[0]])
    if member.name == "hpcc":
        return {"program": member.program, "input": HPCC_INPUT.format(n=HPCC_N, nb=HPCC_NB), "env": PROGRAM_ENV}
    return {"program": member.program, "args": list(member.args), "recipe": member.recipe, "size": member.size,
            "seed": member.seed, "input_name": member.input_name, "env": PROGRAM_ENV}


def is_current(name: str) -> bool:
    """Built, and from the member's present command and input recipe."""
    doc = manifest(name)
    return doc is not None and doc.get("recipe") == capture_recipe(SUITE[name])


def command(member: Member, program: str) -> List[str]:
    return [program, *[a.replace("{input}", member.input_name) for a in member.args]]


# ---------------------------------------------------------------- hpcc's sections

class SectionWatch:
    """A capture's progress hook that also reads hpcc's output file as it grows and notes,
    for each 'Begin/End of X section.' line, the records captured when it appeared: the
    sections' boundaries in the trace, to within the records in flight (valgrind's pipe
    and the parser's buffer: one or two batches of 65,536 records)."""

    def __init__(self, path: Path, inner: Optional[Callable[[int], None]] = None):
        self.path, self.inner = path, inner
        self.offset = 0
        self.begin: Dict[str, int] = {}
        self.end: Dict[str, int] = {}
        self.records = 0

    def __call__(self, records: int) -> None:
        self.records = records
        self.poll()
        if self.inner is not None:
            self.inner(records)

    def poll(self) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except OSError:
            return
        cut = chunk.rfind(b"\n") + 1
        self.offset += cut
        for line in chunk[:cut].decode("utf-8", "replace").splitlines():
            m = SECTION.match(line.strip())
            if m:
                (self.begin if m.group(1) == "Begin" else self.end).setdefault(m.group(2), self.records)

    def sections(self, total: int) -> List[dict]:
        self.poll()
        out = []
        for name, first in sorted(self.begin.items(), key=lambda kv: kv[1]):
            out.append({"section": name, "first_record": first, "end_record": self.end.get(name, total)})
        return out


# ---------------------------------------------------------------- building

class CaptureProgress:
    """A capture's progress hook: a line in the build's log every ``every`` seconds (a
    capture takes minutes), and the end of the capture when ``stop`` is set (the build
    was interrupted, or another member failed): raising here makes the engine stop and
    the capture kill its valgrind."""

    def __init__(self, name: str, log: Callable[[str], None], stop: threading.Event,
                 inner: Optional[Callable[[int], None]] = None, every: float = 60.0):
        self.name, self.log, self.stop, self.inner, self.every = name, log, stop, inner, every
        self.started = self.last = time.perf_counter()

    def __call__(self, records: int) -> None:
        if self.stop.is_set():
            raise PagelabError(f"suite build {self.name}: stopped")
        if self.inner is not None:
            self.inner(records)
        now = time.perf_counter()
        if now - self.last >= self.every:
            self.last = now
            self.log(f"{self.name}: {records:,} records so far ({(now - self.started) / 60:.0f} min)")


def _native_run(argv: List[str], work: Path) -> Tuple[float, float]:
    """The program run natively on the same input: (wall seconds, CPU seconds), for the
    slowdown factor (the CPU one holds on a loaded machine, the wall one does not)."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(argv, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=PROGRAM_ENV)
        err_text = proc.stderr.read()
        _pid, raw, usage = os.wait4(proc.pid, 0)
    except OSError as err:
        raise PagelabError(f"{argv[0]}: cannot run it natively: {err}") from None
    seconds = time.perf_counter() - t0
    status = os.waitstatus_to_exitcode(raw)
    proc.returncode = status
    proc.stderr.close()
    if status != 0:
        tail = err_text.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise PagelabError(f"{Path(argv[0]).name} exited with status {status} natively: {tail[0]}")
    return seconds, usage.ru_utime + usage.ru_stime


def _remove(name: str, directory: Path) -> None:
    """A member about to be rebuilt is not built until its new manifest is written."""
    for p in (manifest_path(name, directory), trace_path(name, directory)):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def build_member(name: str, directory: Optional[Path] = None, log: Callable[[str], None] = lambda s: None,
                 stop: Optional[threading.Event] = None) -> dict:
    """Captures one member (and writes its parts); returns its manifest. Setting
    ``stop`` ends the capture (an error)."""
    member = SUITE[name]
    directory = suite_dir(directory)
    program = program_path(member)
    if program is None:
        raise PagelabError(f"suite build {name}: '{member.program}' not found (install the Debian package "
                           f"'{member.package}': make real-suite does)")
    if shutil.which("valgrind") is None:
        raise PagelabError(f"suite build {name}: valgrind not found (make real-suite installs it)")
    directory.mkdir(parents=True, exist_ok=True)
    for n in (name, *member.parts):
        _remove(n, directory)
    work = Path(tempfile.mkdtemp(prefix=f".build-{name}.", dir=directory))
    try:
        input_recipe = make_input(member, work)
        argv = command(member, program)
        native, native_cpu = _native_run(argv, work)
        for leftover in (HPCC_OUTPUT, "out.s", "out.txt"):
            (work / leftover).unlink(missing_ok=True)
        watch = SectionWatch(work / HPCC_OUTPUT) if member.parts else None
        started = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        log(f"{name}: capturing {' '.join([Path(argv[0]).name, *argv[1:]])} (native run {native:.2f} s)")
        t0 = time.perf_counter()
        progress = CaptureProgress(name, log, stop or threading.Event(), watch)
        stats = capture(argv, trace_path(name, directory), page_size=PAGE_SIZE, compress=True, progress=progress,
                        data_only=True, cwd=work, stdout=subprocess.DEVNULL, env=PROGRAM_ENV)
        seconds = time.perf_counter() - t0
        if stats["exit_status"] != 0:
            trace_path(name, directory).unlink(missing_ok=True)
            raise PagelabError(f"suite build {name}: {member.program} exited with status {stats['exit_status']} "
                               "under valgrind; nothing was kept")
        info = Trace(trace_path(name, directory)).info()
        doc = _manifest(member, argv, input_recipe, native, seconds, started, stats, info)
        doc["capture"]["native_cpu_seconds"] = round(native_cpu, 4)
        vg_cpu = stats.get("valgrind_cpu_seconds")
        doc["capture"]["cpu_slowdown"] = round(vg_cpu / native_cpu, 1) if vg_cpu and native_cpu > 0 else None
        if watch is not None:
            doc["sections"] = watch.sections(stats["records"])
            for part in member.parts:
                _write_part(SUITE[part], doc, directory, log)
        write_text(manifest_path(name, directory), json.dumps(doc, indent=1) + "\n")
        log(f"{name}: {info['references']:,} data references, {info['distinct_pages']:,} pages "
            f"({info['footprint_bytes'] / 2**20:.1f} MiB) in {seconds:.0f} s: {seconds / native:.0f}x its native run")
        return doc
    except BaseException:
        for n in (name, *member.parts):
            _remove(n, directory)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _manifest(member: Member, argv: List[str], made_input: dict, native: float, seconds: float,
              started: datetime.datetime, stats: dict, info: dict) -> dict:
    return {
        "member": member.name, "summary": member.summary, "why": member.why, "recipe": capture_recipe(member),
        "command": [Path(argv[0]).name, *argv[1:]], "program": argv[0],
        "package": member.package, "package_version": package_version(member.package),
        "valgrind": valgrind_version(), "input": made_input,
        "trace": {"file": f"{member.name}.plt", "page_size": PAGE_SIZE, "data_only": True,
                  "references": info["references"], "records": info["records"],
                  "distinct_pages": info["distinct_pages"], "footprint_bytes": info["footprint_bytes"],
                  "reads": info["reads"], "writes": info["writes"]},
        "capture": {"started": started.isoformat(), "seconds": round(seconds, 2), "native_seconds": round(native, 3),
                    "slowdown": round(seconds / native, 1) if native > 0 else None,
                    "valgrind_cpu_seconds": stats.get("valgrind_cpu_seconds"),
                    "parser_cpu_seconds": stats.get("parser_cpu_seconds"),
                    "lackey_lines": stats["lines"], "lines_per_second": round(stats["lines"] / seconds) if seconds else None,
                    "command": "valgrind --tool=lackey --trace-mem=yes (pagelab trace capture --data-only)"},
        "pagelab": build_info(),
        "counterpart": member.counterpart,
    }


def _write_part(part: Member, whole: dict, directory: Path, log: Callable[[str], None]) -> None:
    """A part of the whole capture (an hpcc section) as a member of its own."""
    whole_name, section = part.part_of
    found = [s for s in whole["sections"] if s["section"] == section]
    if not found or found[0]["end_record"] <= found[0]["first_record"]:
        raise PagelabError(f"suite build {whole_name}: no '{section}' section seen in {HPCC_OUTPUT}")
    first, end = found[0]["first_record"], found[0]["end_record"]
    out = trace_path(part.name, directory)
    src = Trace(trace_path(whole_name, directory))
    # the engine writes it whole or not at all (a temporary file, renamed at the end)
    _core.convert(src.spec(), os.fspath(out), "pagelab", True, None, (first, end))
    info = Trace(out).info()
    doc = dict(whole, member=part.name, summary=part.summary, why=part.why, counterpart=part.counterpart,
               part_of={"member": whole_name, "section": section, "first_record": first, "end_record": end})
    doc["trace"] = dict(whole["trace"], file=f"{part.name}.plt", references=info["references"],
                        records=info["records"], distinct_pages=info["distinct_pages"],
                        footprint_bytes=info["footprint_bytes"], reads=info["reads"], writes=info["writes"])
    doc.pop("sections", None)
    write_text(manifest_path(part.name, directory), json.dumps(doc, indent=1) + "\n")
    log(f"{part.name}: records {first:,}..{end:,} of {whole_name}: {info['distinct_pages']:,} pages")


def build(names: Sequence[str] = (), jobs: Optional[int] = None, force: bool = False,
          log: Callable[[str], None] = lambda s: None) -> Dict[str, dict]:
    """Builds the named members (default: every one but gzip-small) that are not built
    yet (``force``: again), ``jobs`` at a time (default: one per core). Returns each
    built member's manifest; the first failure is raised after the others finish."""
    todo = check_names(names) if names else default_members()
    if not force:
        todo = [n for n in todo if not all(is_current(m) for m in (n, *SUITE[n].parts))]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
    lock = threading.Lock()

    def say(line: str) -> None:
        with lock:
            log(line)

    done: Dict[str, dict] = {}
    errors: List[BaseException] = []
    stop = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(build_member, n, None, say, stop): n for n in todo}
        try:
            for f in concurrent.futures.as_completed(futures):
                try:
                    done[futures[f]] = f.result()
                except Exception as err:  # noqa: BLE001 - reported after the others finish
                    say(f"{futures[f]}: failed: {err}")
                    errors.append(err)
        except KeyboardInterrupt:
            # the captures under way stop at their next batch and kill their valgrind
            stop.set()
            for f in futures:
                f.cancel()
            raise
    if errors:
        raise errors[0]
    return done


def status() -> List[dict]:
    """Every member: built or not, and the numbers of its manifest."""
    out = []
    for name, m in SUITE.items():
        doc = manifest(name)
        row = {"member": name, "summary": m.summary, "built": doc is not None, "package": m.package,
               "current": is_current(name)}
        if doc is not None:
            row.update(references=doc["trace"]["references"], distinct_pages=doc["trace"]["distinct_pages"],
                       footprint_mib=doc["trace"]["footprint_bytes"] / 2**20,
                       capture_seconds=doc["capture"]["seconds"], slowdown=doc["capture"]["slowdown"],
                       cpu_slowdown=doc["capture"].get("cpu_slowdown"),
                       started=doc["capture"]["started"])
        out.append(row)
    return out


def leading_part(text: str, share: float) -> str:
    """``suite:NAME``'s first ``share`` of records as a trace of its own (cut once, then
    kept beside the member as ``.parts/NAME.first-END.plt``): what ``--quick`` replays of
    a member. Any other trace name is returned as it is."""
    if not is_suite_name(text) or share >= 1.0:
        return text
    name = member_of(text)
    whole = built_trace(name)
    records = manifest(name)["trace"]["records"]
    end = max(1, int(records * share))
    out = whole.parent / ".parts" / f"{name}.first-{end}.plt"
    if not out.is_file() or out.stat().st_mtime < whole.stat().st_mtime:
        out.parent.mkdir(parents=True, exist_ok=True)
        _core.convert({"trace": os.fspath(whole), "format": "pagelab", "page_size": None}, os.fspath(out), "pagelab",
                      True, None, (0, end))
    return os.fspath(out)
