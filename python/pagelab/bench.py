"""`pagelab bench`: whole-program replay throughput, measured the way a user runs it
(reading a pagelab trace from disk, through the Python front), on the Zipf trace of
the foundation issue: 10M references over 750,000 pages, alpha 1.0. Beside the
in-process times it times whole commands, `pagelab replay --trace T --policy P
--frames F --json` as a new process, on the trace in the oracleGeneral, CSV and
pagelab formats (interpreter start, imports, reading and densifying included), and with
``--libcachesim PYTHON`` libCacheSim's simulator the same way (its Python package, run by
an interpreter that has it: the same C simulation loop as its `cachesim` program), on the
oracleGeneral file and on a CSV of one request a line that both read."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import api
from .arguments import UsageError, parse_int
from .console import print_table

#: the formats whole commands are timed on: (format, file suffix)
COMMAND_FORMATS = (("oracle", ".oracleGeneral"), ("csv", ".csv"), ("pagelab", ".plt"))


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _run_command(command, what: str = "") -> str:
    """The output of `command`; a one-line error naming `what` (default: the command
    after the interpreter) and the last line of its error output if it fails."""
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no error output"])[-1]
        raise UsageError(f"bench: {what or ' '.join(command[2:])} failed: {last}")
    return done.stdout


#: libCacheSim's class for each pagelab policy (by name, before any ':') it also has
LIBCACHESIM_CLASSES = {"lru": "LRU", "fifo": "FIFO", "clock": "Clock", "arc": "ARC", "lirs": "LIRS",
                       "2q": "TwoQ", "opt": "Belady", "lfu": "LFU", "random": "Random", "clock-pro": "ClockPro"}

#: run by the other interpreter: argv trace, class, frames, kind (oracle: oracleGeneral;
#: csv: a `pid,page` header, then one request a line, the object id in field 2); prints
#: the miss ratio
LIBCACHESIM_SCRIPT = """
import sys
import libcachesim as lcs
trace, name, frames, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
if kind == "csv":
    params = lcs.ReaderInitParam(ignore_obj_size=True, has_header=True, has_header_set=True, delimiter=",")
    params.obj_id_field = 2
    params.obj_id_is_num = True
    params.obj_id_is_num_set = True
    trace_type = lcs.TraceType.CSV_TRACE
else:
    params = lcs.ReaderInitParam(ignore_obj_size=True)
    trace_type = lcs.TraceType.ORACLE_GENERAL_TRACE
reader = lcs.TraceReader(trace=trace, trace_type=trace_type, reader_init_params=params)
ratio = getattr(lcs, name)(cache_size=frames).process_trace(reader)[0]
print(ratio)
"""


def write_request_csv(trace, path: Path) -> None:
    """`trace` as a CSV of one request a line (`pid,page`, a record's repeats written
    out): what libCacheSim's CSV reader takes, one request a line."""
    import numpy as np

    with open(path, "w") as f:
        f.write("pid,page\n")
        for b in trace.batches():
            pids, pages = np.repeat(b["pid"], b["repeat"]), np.repeat(b["page"], b["repeat"])
            f.write("".join(f"{p},{g}\n" for p, g in zip(pids.tolist(), pages.tolist())))


def _check_libcachesim(python: str) -> None:
    """A one-line error unless `python` runs and imports libcachesim."""
    try:
        done = subprocess.run([python, "-c", "import libcachesim"], capture_output=True, text=True)
    except OSError as err:
        raise UsageError(f"--libcachesim: cannot run '{python}': {err.strerror}") from None
    if done.returncode != 0:
        raise UsageError(f"--libcachesim: '{python}' cannot import libcachesim "
                         f"(expected an interpreter with `pip install libcachesim`)")


#: the JSON table of libCacheSim's times on each kind of file
LIBCACHESIM_TABLES = {"oracle": "libcachesim", "csv": "libcachesim_csv"}


def _time_libcachesim(python: str, trace: Path, kind: str, policy: str, frames: int, references: int, repeat: int,
                      pagelab_time: float, pagelab_faults: int):
    """(table row, JSON entry) of libCacheSim on `trace` (`kind`: oracle or csv) beside
    pagelab's command, or None when libCacheSim has no such policy."""
    name = LIBCACHESIM_CLASSES.get(policy.split(":")[0])
    if name is None:
        return None
    command = [python, "-c", LIBCACHESIM_SCRIPT, str(trace), name, str(frames), kind]
    out = []
    t = _best(lambda: out.append(_run_command(command, f"libCacheSim {name} on {trace.name}")), repeat)
    faults = round(float(out[-1]) * references)
    same = "same faults" if faults == pagelab_faults else f"faults differ: {faults:,} against {pagelab_faults:,}"
    label = "oracleGeneral" if kind == "oracle" else "CSV, a request a line"
    row = [f"libCacheSim {name}, {label}", f"{t:.3f}", f"{references / t / 1e6:.1f}",
           f"pagelab {policy} {t / pagelab_time:.2f}x faster; {same}"]
    return row, {"class": name, "seconds": t, "faults": faults, "pagelab_faults": pagelab_faults,
                 "pagelab_speedup": t / pagelab_time}


def run_sweep_bench(refs: int, pages: int, policy: str, as_json: bool) -> int:
    """64 replay points of one policy (OPT by default) at memory sizes of 1% to 64% of the
    pages: run one after another in this process, each alone (the baseline); then as
    sweeps: here, in passes of several sizes each; on the local Dask cluster, one point a
    task (what the cores alone give); on the local cluster in passes (the default).
    Points per second and the speed-up over the baseline; every row includes its store's
    writes, the cluster rows also the cluster's start."""
    import shutil

    from .sweeps import sweep

    ways = [("one after another, each alone", 0, 1), ("sweep here, in passes", 0, None),
            ("sweep, local cluster, one point a task", None, 1), ("sweep, local cluster, in passes", None, None)]
    with tempfile.TemporaryDirectory(prefix="pagelab-bench-sweep-") as tmp:
        path = Path(tmp) / "zipf.plt"
        api.workload("zipf", seed=1, refs=refs, pages=pages).save(path)
        spec = {"sweep": {"kind": "replay", "name": "bench"},
                "base": {"source": {"trace": str(path)}, "policy": policy, "frames": 1, "seed": 0},
                "axis": [{"key": "frames", "values": [max(1, pages // 100) * (i + 1) for i in range(64)]}]}
        times = {}
        for i, (label, workers, per_task) in enumerate(ways):
            out = Path(tmp) / f"store-{i}"
            t0 = time.perf_counter()
            sweep(spec, out=out, workers=workers, points_per_task=per_task, progress=False)
            times[label] = time.perf_counter() - t0
            shutil.rmtree(out, ignore_errors=True)
    base = times[ways[0][0]]
    speedups = {k: base / v for k, v in times.items()}
    result = {"refs": refs, "pages": pages, "policy": policy, "points": 64, "seconds": times, "speedup": speedups}
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        print_table(f"pagelab bench --sweep: 64 {policy} replay points, Zipf trace of {refs:,} references over {pages:,} pages",
                    ["how", "seconds", "points/s", "speed-up"],
                    [[k, f"{v:.1f}", f"{64 / v:.2f}", f"{speedups[k]:.2f}x"] for k, v in times.items()])
        print(f"speed-up of the default sweep: {speedups[ways[-1][0]]:.2f}x (issue 8's target: 1.7x)")
    return 0


def run_bench(args) -> int:
    refs = parse_int(args.refs, "--refs")
    pages = parse_int(args.pages, "--pages")
    if args.libcachesim and args.sweep:
        raise UsageError("--libcachesim: it is timed beside the replay commands, not with --sweep")
    if args.sweep:
        policy = (args.policy or "opt").strip()
        if "," in policy or not policy:
            raise UsageError(f"--policy: --sweep times one policy, got '{args.policy}'")
        try:  # before the trace is generated
            api.replay(api.Workload("scan", pages=4, passes=1), policy=policy, frames=[1])
        except api.PagelabError as err:
            raise UsageError(f"--policy: {err}") from None
        return run_sweep_bench(refs, pages, policy, args.json)
    try:
        alpha = float(args.alpha)
    except ValueError:
        raise UsageError(f"--alpha: expected a number, got '{args.alpha}'") from None
    frames = parse_int(args.frames, "--frames") if args.frames else max(1, pages // 10)
    repeat = parse_int(args.repeat, "--repeat")
    policies = api.split_policies(args.policy or "lru,clock,fifo,random,opt")
    if args.libcachesim:
        if args.no_commands:
            raise UsageError("--libcachesim: it is timed beside the whole commands, which --no-commands turns off")
        _check_libcachesim(args.libcachesim)
    rows, out = [], {"refs": refs, "pages": pages, "alpha": alpha, "frames": frames, "results": {}}
    with tempfile.TemporaryDirectory(prefix="pagelab-bench-") as tmp:
        path = Path(tmp) / "zipf.plt"
        w = api.workload("zipf", seed=1, refs=refs, pages=pages, alpha=alpha)
        w.save(path)
        trace = api.Trace.open(path)
        info = trace.info()
        n = info["references"]
        t_read = _best(lambda: trace.info(), repeat)
        rows.append(["read trace (info)", f"{t_read:.3f}", f"{n / t_read / 1e6:.1f}", ""])
        out["results"]["read"] = n / t_read
        lru_time = None
        for policy in policies:
            t = _best(lambda: api.replay(trace, policy=policy, frames=[frames]), repeat)
            if policy == "lru":
                lru_time = t
            rows.append([f"replay {policy}", f"{t:.3f}", f"{n / t / 1e6:.1f}", ""])
            out["results"][policy] = n / t
        t_mrc = _best(lambda: api.mrc(trace), repeat)
        ratio = f"{t_mrc / lru_time:.2f}x LRU" if lru_time else ""
        rows.append(["mrc (all sizes)", f"{t_mrc:.3f}", f"{n / t_mrc / 1e6:.1f}", ratio])
        out["results"]["mrc"] = n / t_mrc
        if lru_time:
            out["mrc_over_lru"] = t_mrc / lru_time
        if "opt" in policies:
            t_opt = _best(lambda: api.replay(trace, policy="opt", frames=[frames]), repeat)
            t_mrc_opt = _best(lambda: api.mrc(trace, policy="opt"), repeat)
            rows.append(["mrc --policy opt (all sizes)", f"{t_mrc_opt:.3f}", f"{n / t_mrc_opt / 1e6:.1f}",
                         f"{t_mrc_opt / t_opt:.2f}x OPT"])
            out["results"]["mrc_opt"] = n / t_mrc_opt
            out["mrc_opt_over_opt"] = t_mrc_opt / t_opt
        if not args.no_commands:
            out["commands"] = {}
            # (key in the output, --format, file, what libCacheSim reads it as or None)
            runs = []
            for fmt, suffix in COMMAND_FORMATS:
                file = path if fmt == "pagelab" else Path(tmp) / f"zipf{suffix}"
                if fmt != "pagelab":
                    trace.save(file, format=fmt)
                runs.append((fmt, fmt, file, "oracle" if args.libcachesim and fmt == "oracle" else None))
            if args.libcachesim:
                # libCacheSim's CSV reader beside pagelab's on one file: a request a line
                file = Path(tmp) / "zipf-requests.csv"
                write_request_csv(trace, file)
                runs.append(("request-csv", "csv", file, "csv"))
            for key, fmt, file, beside_kind in runs:
                table = LIBCACHESIM_TABLES.get(beside_kind)
                if table:
                    out[table] = {}
                for policy in policies:
                    if beside_kind == "csv" and policy.split(":")[0] == "opt":
                        # libCacheSim's Belady takes the next access times from the
                        # oracleGeneral records, and a CSV has none (it counted 61,579
                        # faults where MIN has 36,188 on a 200,000-request trace)
                        continue
                    # beside libCacheSim, read repeats as it does (one request a line)
                    hits = ["--repeats", "hits"] if beside_kind else []
                    command = [sys.executable, "-m", "pagelab", "replay", "--trace", str(file), "--format", fmt,
                               "--policy", policy, "--frames", str(frames), "--json", "--no-progress", *hits]
                    printed = []
                    t = _best(lambda: printed.append(_run_command(command)), repeat)
                    rows.append([f"command: replay {policy}, {key}{' --repeats hits' if hits else ''}", f"{t:.3f}",
                                 f"{n / t / 1e6:.1f}", "whole process"])
                    out["commands"][f"{key}/{policy}"] = t
                    if beside_kind:
                        faults = json.loads(printed[-1])[0]["faults"]
                        beside = _time_libcachesim(args.libcachesim, file, beside_kind, policy, frames, n, repeat, t,
                                                   faults)
                        if beside:
                            rows.append(beside[0])
                            out[table][policy] = beside[1]
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print_table(f"pagelab bench: Zipf alpha={alpha}, {n:,} references, {info['distinct_pages']:,} pages, "
                    f"{frames:,} frames (best of {repeat})",
                    ["what", "seconds", "M refs/s", "note"], rows)
    return 0
