"""The `pagelab` command line. Every user mistake ends in one line on stderr,
``pagelab: error: ...``, and a non-zero exit; never a traceback."""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
from pathlib import Path
from typing import Any, List, Optional

# Only what every command needs is imported here; each command imports the rest itself,
# so that `pagelab replay --json` loads the engine and the API, not the timed system,
# the sweeps, the experiments or pandas (`pagelab bench` times whole commands).
from . import api
from ._core import PagelabError
from .arguments import (BINARY_SUFFIXES, UsageError, parse_fraction, parse_int, parse_int_list, parse_params,
                        parse_seed, parse_workers)
from .console import print_table
from .files import atomic_path, check_not_dangling, write_text
from .kernel_cli import add_kernel_parser
from .progress import ProgressBar
from .version import version_line

#: the backends of `run --on` and `reproduce --on` (system.BACKENDS, without importing it)
BACKENDS = ("simulator", "kernel")


def shipped_experiments() -> List[str]:
    """The shipped experiments by name (experiments.runner.shipped, without importing it)."""
    return sorted(p.stem for p in (Path(__file__).resolve().parent / "experiments").glob("*.toml"))

EXIT_USAGE = 2
EXIT_ERROR = 1
EXIT_INTERRUPTED = 130


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors."""

    def error(self, message: str):  # noqa: D401 - argparse API
        # "pagelab: error: replay: ..." -- the command's name once, not "pagelab" twice
        where = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        raise UsageError(f"{where}: {message}" if where else message)


class VersionAction(argparse.Action):
    """`pagelab --version`: one line, as is (argparse's own action re-wraps it)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_line())
        parser.exit()


# ---------------------------------------------------------------- argument helpers

def add_source_args(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--trace", metavar="FILE", help="a trace file (format detected, or --format), or suite:MEMBER")
    g.add_argument("--workload", metavar="NAME", help="a built-in workload (see 'pagelab workload list')")
    p.add_argument("--format", metavar="FORMAT", help="trace format: " + ", ".join(api.trace_formats()))
    p.add_argument("--param", action="append", metavar="K=V", help="workload parameter (repeatable, or k=v,k=v)")
    p.add_argument("--page-size", metavar="BYTES", help=f"page size in bytes, a power of two ({BINARY_SUFFIXES})")
    p.add_argument("--seed", default="0", help="seed for workloads and randomised policies (default 0)")


def source_from_args(args) -> api.Source:
    page_size = parse_int(args.page_size, "--page-size") if args.page_size else None
    if args.trace:
        if args.param:
            raise UsageError("--param: only applies to --workload")
        return api.Trace.open(args.trace, format=args.format, page_size=page_size)
    if args.format:
        raise UsageError("--format: only applies to --trace")
    return api.workload(args.workload, seed=parse_seed(args.seed), page_size=page_size or 4096,
                        **parse_params(args.param))


def progress_bar(args, description: str, total: Optional[int] = None) -> ProgressBar:
    return ProgressBar(description, total=total, enabled=args.progress)


# ---------------------------------------------------------------- commands

def cmd_trace_info(args) -> int:
    source = api.Trace.open(args.file, format=args.format,
                            page_size=parse_int(args.page_size, "--page-size") if args.page_size else None)
    with progress_bar(args, "reading", source.meta().get("records")) as bar:
        info = source.info(progress=bar)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    refs = max(info["references"], 1)
    rows = [
        ["file", info["name"]],
        ["page size", f"{info['page_size']} B"],
        ["records (page touches)", f"{info['records']:,}"],
        ["references", f"{info['references']:,}"],
        ["distinct pages", f"{info['distinct_pages']:,}"],
        ["footprint", f"{info['footprint_bytes']:,} B ({info['footprint_bytes'] / 2**20:.1f} MiB)"],
        ["reads", f"{info['reads']:,} ({100 * info['reads'] / refs:.1f}%)"],
        ["writes", f"{info['writes']:,} ({100 * info['writes'] / refs:.1f}%)"],
        ["instructions", f"{info['instructions']:,} ({100 * info['instructions'] / refs:.1f}%)"],
        ["processes", str(len(info["processes"]))],
    ]
    if info.get("frees"):
        rows.insert(-1, ["frees (pages given back)", f"{info['frees']:,}"])
    for p in info["processes"]:
        label = f"  pid {p['pid']}" + (f" ({p['name']})" if p["name"] else "")
        rows.append([label, f"{p['references']:,} refs, {p['distinct_pages']:,} pages"])
    print_table("trace info", ["", "value"], rows)
    return 0


def cmd_trace_convert(args) -> int:
    page_size = parse_int(args.page_size, "--page-size") if args.page_size else None
    source = api.Trace.open(args.input, format=args.from_format, page_size=page_size)
    fmt, compressed = api.output_format(args.output, args.to_format)
    with progress_bar(args, "converting", source.meta().get("records")) as bar:
        n = source.save(args.output, format=fmt, compress=compressed or args.compress, progress=bar)
    print(f"wrote {n:,} records to {args.output} ({fmt}{', zstd' if compressed or args.compress else ''})")
    return 0


def cmd_trace_capture(args) -> int:
    from .capture import capture

    program = list(args.program)
    if program and program[0] == "--":
        program = program[1:]
    page_size = parse_int(args.page_size, "--page-size") if args.page_size else 4096
    with progress_bar(args, "capturing") as bar:
        stats = capture(program, args.output, page_size=page_size,
                        compress=True if args.compress else None, progress=bar, data_only=args.data_only)
    what = "data references" if args.data_only else "references"
    print(f"wrote {args.output}: {stats['references']:,} {what} in {stats['records']:,} records, "
          f"{stats['distinct_pages']:,} distinct pages of {page_size} B (from {stats['lines']:,} lackey lines)")
    if stats.get("valgrind_cpu_seconds"):
        print(f"{stats['seconds']:.1f} s: valgrind used {stats['valgrind_cpu_seconds']:.1f} CPU s, pagelab's parsing "
              f"{stats['parser_cpu_seconds']:.1f} CPU s ({100 * stats['parser_cpu_seconds'] / stats['valgrind_cpu_seconds']:.0f}% "
              "of valgrind's, on another core)")
    if stats["exit_status"] != 0:
        print(f"pagelab: warning: {program[0]} exited with status {stats['exit_status']}; "
              "the trace holds the references up to its exit", file=sys.stderr)
    return 0


def cmd_suite_build(args) -> int:
    from . import suite
    jobs = parse_int(args.jobs, "--jobs") if args.jobs else None
    names = suite.check_names(args.members) if args.members else suite.default_members()
    print(f"suite: {', '.join(names)} in {suite.suite_dir()} ({jobs or 'one per core'} at a time)", flush=True)
    # a build stopped by SIGTERM stops as on Ctrl-C: its captures kill their valgrind
    signal.signal(signal.SIGTERM, _interrupt)
    built = suite.build(args.members, jobs=jobs, force=args.force, log=lambda line: print(line, flush=True))
    skipped = [n for n in names if n not in built]
    if skipped:
        print(f"already built: {', '.join(skipped)} (--force builds them again)")
    return 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def cmd_suite_list(args) -> int:
    from . import suite
    rows = suite.status()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    cells = []
    for r in rows:
        if r["built"]:
            cells.append([r["member"], f"{r['references']:,}", f"{r['distinct_pages']:,}",
                          f"{r['footprint_mib']:.1f}", f"{r['capture_seconds']:.0f}",
                          f"{r['slowdown']:.0f}x" if r["slowdown"] else "-",
                          f"{r['cpu_slowdown']:.0f}x" if r.get("cpu_slowdown") else "-",
                          r["summary"] + ("" if r["current"] else " (stale: built from another recipe; "
                                                                   "suite build rebuilds it)")])
        else:
            cells.append([r["member"], "not built", "", "", "", "", "", r["summary"]])
    print_table(f"real-program suite in {suite.suite_dir()} (trace name suite:MEMBER)",
                ["member", "data references", "pages", "MiB", "capture s", "wall slowdown", "CPU slowdown", "program"],
                cells)
    return 0


def cmd_workload_list(args) -> int:
    ws = api.workloads()
    if args.json:
        print(json.dumps(ws, indent=2))
        return 0
    rows = []
    for w in ws:
        params = " ".join(f"{p['name']}={p['default']}" for p in w["params"])
        rows.append([w["name"], w["summary"], params])
    print_table("built-in workloads", ["name", "what it is", "parameters (defaults)"], rows)
    return 0


def cmd_workload_emit(args) -> int:
    page_size = parse_int(args.page_size, "--page-size") if args.page_size else 4096
    w = api.workload(args.name, seed=parse_seed(args.seed), page_size=page_size, **parse_params(args.param))
    fmt, compressed = api.output_format(args.output, args.format)
    with progress_bar(args, "generating", w.meta().get("records")) as bar:
        n = w.save(args.output, format=fmt, compress=compressed, progress=bar)
    print(f"wrote {n:,} records of {w.name} to {args.output} ({fmt}{', zstd' if compressed else ''})")
    return 0


def cmd_replay(args) -> int:
    source = source_from_args(args)
    policies = api.split_policies(args.policy)
    if not policies:
        raise UsageError(f"--policy: expected a comma-separated list of: {', '.join(api.policies())}")
    frames = parse_int_list(args.frames, "--frames")
    with progress_bar(args, "replaying", api.replay_progress_total(source, policies)) as bar:
        results = api.replay(source, policy=policies, frames=frames, seed=parse_seed(args.seed), progress=bar,
                             repeats=args.repeats)
    if args.csv:  # pandas only for the CSV
        with atomic_path(args.csv) as tmp:
            results.to_dataframe().to_csv(tmp, index=False)
    if args.json:
        print(results.to_json())
        return 0
    rows = [[r["policy"], f"{r['frames']:,}" if r["frames"] else "variable", f"{r['references']:,}",
             f"{r['faults']:,}", f"{r['compulsory_faults']:,}", f"{r['faults'] - r['compulsory_faults']:,}",
             f"{r['fault_ratio']:.4f}", f"{r['dirty_evictions']:,}", f"{r['mean_resident']:,.1f}"] for r in results]
    print_table(f"replay of {source.name}",
                ["policy", "frames", "references", "faults", "compulsory", "other", "fault ratio",
                 "write-backs", "mean resident"], rows)
    return 0


def cmd_mrc(args) -> int:
    from .figures.curves import plot_mrc
    from .figures.style import check_figure_path, figure_files

    out = args.output
    plot = args.plot or os.path.splitext(out)[0] + ".png"
    check_figure_path(plot)
    source = source_from_args(args)
    with progress_bar(args, "stack distances", source.meta().get("records")) as bar:
        curve = api.mrc(source, progress=bar, policy=args.policy)
    with atomic_path(out) as tmp:  # the CSV lands only once the figure is drawn
        curve.write_csv(tmp)
        plot_mrc([curve], plot, title=f"{curve.policy.upper()} fault curve: {source.name}")
    print(f"{source.name}: {curve.references:,} references, {curve.distinct_pages:,} distinct pages, "
          f"{curve.compulsory_faults:,} compulsory faults")
    names = [f"{out} ({len(curve.faults):,} sizes)"] + [str(p) for p in figure_files(plot)]
    print(f"wrote {', '.join(names[:-1])} and {names[-1]}")
    return 0


def parse_source(text: str, seed: int, page_size: Optional[int]) -> api.Source:
    """A source given as one word: a trace file, or ``workload:NAME[:k=v,...]``."""
    if text.startswith("workload:"):
        name, _, params = text[len("workload:"):].partition(":")
        if not name.strip():
            raise UsageError(f"source '{text}': expected workload:NAME[:k=v,...]")
        return api.workload(name.strip(), seed=seed, page_size=page_size or 4096, **parse_params([params]))
    return api.Trace.open(text, page_size=page_size)


def cmd_analyze_faults(args) -> int:
    from . import fault_analysis

    seed = parse_seed(args.seed)
    page_size = parse_int(args.page_size, "--page-size") if args.page_size else None
    frames = parse_int(args.frames, "--frames") if args.frames else None
    fraction = parse_fraction(args.memory_fraction, "--memory-fraction") if args.memory_fraction else None
    pages = parse_int(args.pages, "--pages")
    policy = args.policy.strip()
    known = api.policies()
    if policy.split(":", 1)[0].strip().lower() not in known:
        raise UsageError(f"--policy: unknown policy '{policy}' (expected one of: {', '.join(known)})")
    fault_analysis.check_output_dir(args.out)
    sources = [parse_source(s, seed, page_size) for s in args.sources]
    results = []
    for source in sources:
        size = frames
        if size is None:
            with progress_bar(args, f"{source.name}: pages", source.meta().get("records")) as bar:
                size = fault_analysis.frames_for_fraction(source, fraction, progress=bar)
        with progress_bar(args, f"{source.name}: residencies", source.meta().get("records")) as bar:
            df = fault_analysis.fault_parameters(source, policy=policy, frames=size, seed=seed, progress=bar)
        results.append((source, df))
    written, summaries = fault_analysis.write_outputs(results, args.out, pages=pages)
    rows = []
    for s in summaries:
        rows.append([s["source"], f"{s['frames']:,}", f"{s['faults']:,}", f"{s['residencies']:,}",
                     _share(s["dead_ratio_below_half_refs"]), _share(s["dead_ratio_below_half_faults"]),
                     _number(s["median_abs_dL_refs"]), _number(s["median_abs_dL_faults"]),
                     _share(s["share_abs_dL_le_10_faults"]), _number(s["median_cov_L_faults"], 2)])
    print_table(f"fault parameters under {results[0][1].attrs['policy']}",
                ["source", "frames", "faults", "residencies", "D/(L+D)<0.5 refs", "D/(L+D)<0.5 faults",
                 "median |dL| refs", "median |dL| faults", "|dL|<=10 faults", "median CoV L faults"], rows)
    print(f"results in {args.out}/: {', '.join(written)}")
    return 0


def _share(x: float) -> str:
    return "-" if x != x else f"{100 * x:.0f}%"


def _number(x: float, digits: int = 0) -> str:
    return "-" if x != x else f"{x:,.{digits}f}"


def cmd_bench(args) -> int:
    from .bench import run_bench

    return run_bench(args)


def cmd_sweep(args) -> int:
    """`pagelab sweep SPEC [--out DIR] [--scheduler ADDRESS] [--workers N]`."""
    from .sweeps import sweep as run_sweep

    workers = parse_workers(args)
    per_task = None
    if args.points_per_task is not None:
        try:
            per_task = int(args.points_per_task)
        except ValueError:
            per_task = 0
        if per_task < 1:
            raise UsageError(f"--points-per-task: expected a positive whole number, got '{args.points_per_task}'")

    def say(line: str) -> None:
        print(line, flush=True)

    df = run_sweep(args.spec, out=args.out, scheduler=args.scheduler, workers=workers,
               retry_failed=args.retry_failed, points_per_task=per_task, progress=args.progress, log=say)
    a = df.attrs
    if a["ran"]:
        rate = a["ran"] / a["seconds"] if a["seconds"] > 0 else float("inf")
        say(f"{a['name']}: ran {a['ran']} points in {a['seconds']:.1f} s ({rate:.2f} points/s), "
            f"{a['failed_now']} failed")
    say(f"results in {a['store']}/ ({a['points']} points, {a['failed']} failed): pagelab results {a['store']}")
    if a["failed_now"]:
        first = df[df["error"].notna()].iloc[0]
        print(f"pagelab: warning: {a['failed_now']} points failed; the first: {first['point'][:12]}: {first['error']}",
              file=sys.stderr)
    return 0


def cmd_results(args) -> int:
    """`pagelab results DIR [--csv FILE] [--parquet FILE]`."""
    from .sweeps import results as sweep_results
    from .sweeps.points import one_line

    limit = parse_int(args.limit, "--limit") if args.limit is not None else 40
    df = sweep_results(args.dir)
    if args.csv:
        with atomic_path(args.csv) as tmp:
            df.to_csv(tmp, index=False)
    if args.parquet:
        try:
            with atomic_path(args.parquet) as tmp:
                df.to_parquet(tmp, index=False)
        except (ValueError, TypeError) as err:
            raise UsageError(f"--parquet: {args.parquet}: cannot write this table as Parquet ({one_line(err)})") from None
    a = df.attrs
    if a.get("unreadable"):
        print(f"pagelab: warning: {a['unreadable']} unreadable files in {args.dir} skipped "
              "(running the sweep again runs their points)", file=sys.stderr)
    title = f"{a.get('name') or args.dir}: {a['points']} points, {a['failed']} failed, {len(df)} rows"
    # columns with one value in every row go below the table, not in every row of it
    same = [c for c in df.columns if len(df) > 1 and c not in ("point", "error", "seconds")
            and df[c].astype(str).nunique(dropna=False) == 1]
    shown = df.drop(columns=same)
    if "error" in shown.columns and shown["error"].isna().all():
        shown = shown.drop(columns=["error"])
    if "point" in shown.columns:
        shown = shown.assign(point=shown["point"].str[:12])
    cells = [[_cell(v) for v in row] for row in shown.head(limit).itertuples(index=False)]
    print_table(title, list(shown.columns), cells)
    if same:
        print("in every row: " + ", ".join(f"{c} = {_cell(df[c].iloc[0])}" for c in same))
    if len(df) > limit:
        print(f"... {len(df) - limit} more rows (--limit N shows more; --csv FILE or --parquet FILE writes them all)")
    written = [f for f in (args.csv, args.parquet) if f]
    if written:
        print(f"wrote {len(df)} rows to {' and '.join(written)}")
    return 0


def _cell(v: Any) -> str:
    import numbers

    if v is None or (isinstance(v, numbers.Real) and not isinstance(v, numbers.Integral) and math.isnan(v)):
        return "-"
    if isinstance(v, (bool, str)):
        return str(v)
    if isinstance(v, numbers.Integral):
        return f"{int(v):,}" if abs(v) >= 10000 else str(int(v))
    if isinstance(v, numbers.Real):
        return f"{float(v):.4g}" if abs(v) < 1e6 else f"{float(v):,.0f}"
    return str(v)


def cmd_run(args) -> int:
    from pathlib import Path

    from . import gang, system, timed
    from .kernel.backend import KernelRunBar, run_kernel

    out = Path(args.out or f"results/run-{Path(args.config).stem}")
    data = system.read_toml(args.config)
    check_not_dangling(out)
    if out.exists() and not out.is_dir():
        raise PagelabError(f"{out}: is a file, expected an output folder")
    if isinstance(data, dict) and "numa" in data:
        return _run_numa(args, data, out)
    engine_config, name = system.load_config(args.config)
    if system.config_backend(data, name, args.on) == "kernel":
        try:
            with KernelRunBar("running on the kernel", enabled=args.progress) as bar:
                result = run_kernel(engine_config, name, bar)
        except KeyboardInterrupt:
            # run_kernel has ended every process and removed the cgroups before this
            print("pagelab: interrupted: every process of the run was ended and its cgroups removed",
                  file=sys.stderr)
            return EXIT_INTERRUPTED
    else:
        with system.SimulatedTimeBar("simulating", enabled=args.progress) as bar:
            result = timed.run_engine(engine_config, name, bar)
    if "gang" in engine_config:
        written = gang.write_gang_outputs(result, out)
        if args.json:
            print(result.to_json())
            return 0
        print_table(f"{name}: {len(result.raw['jobs'])} jobs", gang.JOB_TABLE_COLUMNS, gang.job_rows(result))
        print(gang.summary_line(result))
        print(f"results in {out}/: {', '.join(written)}")
        return 0
    written = system.write_run_outputs(result, out)
    if args.json:
        print(result.to_json())
        return 0
    print_table(f"{name}: {len(result.process_names)} processes", system.PROCESS_TABLE_COLUMNS,
                system.process_rows(result))
    print(system.system_line(result))
    print(f"results in {out}/: {', '.join(written)}")
    return 0


def _run_numa(args, data: dict, out) -> int:
    """`pagelab run` of a [numa] configuration: a summary table and result.json."""
    from . import numa

    name = str(args.config)
    with progress_bar(args, "references", None) as bar:
        result = numa.run_numa(data, name, progress=bar)
    write_text(out / "result.json", result.to_json())
    if args.json:
        print(result.to_json())
        return 0
    s = result.summary()
    print_table(f"{name}: {s['workload']} on {len(result.raw['end_ns'])} processors, {s['pages']:,} pages",
                ["mean completion (s)", "slowest (s)", "references", "remote", "migrations", "lock waits (s)",
                 "daemon passes"],
                [[f"{s['mean_s']:.3f}", f"{s['max_s']:.3f}", f"{s['references']:,}", f"{100 * s['remote_share']:.1f}%",
                  f"{s['migrations']:,}", f"{s['lock_wait_s']:.3f}", f"{s['daemon_passes']:,}"]])
    print(f"results in {out}/: result.json")
    return 0


def cmd_reproduce(args) -> int:
    """`pagelab reproduce NAME | PATH | all`: the experiments as one run, then per
    experiment its tables, its claim ledger and its report."""
    from .console import show_experiment_run
    from .experiments.runner import ALL, reproduce
    from .outputs.report import build_index

    workers = parse_workers(args)
    runs = reproduce([args.experiment], out=args.out, quick=args.quick, sensitivity=args.sensitivity,
                     workers=workers, scheduler=args.scheduler, retry_failed=args.retry_failed,
                     progress=args.progress, log=lambda line: print(line, flush=True), on=args.on or "simulator")
    code = 0
    for run in runs:
        if not show_experiment_run(run):
            code = EXIT_ERROR
    if args.experiment == ALL and any(r.error is None for r in runs):
        print(f"index: {build_index(Path(args.out) if args.out else Path('results'))}")
    return code


def cmd_report(args) -> int:
    from .outputs.readme import write_readme_section
    from .outputs.report import build

    if args.readme:
        print(f"wrote the reproduced results of {args.dir} into {write_readme_section(args.dir, args.readme)}")
        return 0
    for path in build(args.dir):
        print(f"report: {path}")
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo

    return run_demo(args.out, progress=args.progress)


# ---------------------------------------------------------------- parser

def _add_trace(sub) -> None:
    trace = sub.add_parser("trace", help="inspect, convert and capture traces")
    tsub = trace.add_subparsers(dest="trace_command", metavar="SUBCOMMAND", parser_class=Parser)
    info = tsub.add_parser("info", help="references, pages, footprint, processes, kind mix")
    info.add_argument("file")
    info.add_argument("--format", help="input format (default: detected)")
    info.add_argument("--page-size", help="page size in bytes")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.set_defaults(func=cmd_trace_info)
    conv = tsub.add_parser("convert", help="convert between trace formats")
    conv.add_argument("input")
    conv.add_argument("output")
    conv.add_argument("--from", dest="from_format", help="input format (default: detected)")
    conv.add_argument("--to", dest="to_format", help="output format (default: from the file name)")
    conv.add_argument("--page-size", help="page size of the output, in bytes")
    conv.add_argument("--compress", action="store_true", help="zstd-compress the output")
    conv.set_defaults(func=cmd_trace_convert)
    cap = tsub.add_parser("capture", help="run a program under Valgrind lackey, write a pagelab trace")
    cap.add_argument("-o", "--output", required=True, help="output trace (.plt or .plt.zst)")
    cap.add_argument("--page-size", help="page size in bytes (default 4096)")
    cap.add_argument("--compress", action="store_true", help="zstd-compress the output")
    cap.add_argument("--data-only", action="store_true",
                     help="leave out instruction fetches (lackey's I lines): loads, stores and modifies only")
    cap.add_argument("program", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS...")
    cap.set_defaults(func=cmd_trace_capture)
    # without its subcommand, the group's help, not the top level's
    trace.set_defaults(help_parser=trace)


def _add_suite(sub) -> None:
    st = sub.add_parser("suite", help="the real-program suite: Debian programs captured once under Valgrind",
                        description="Real programs (hpcc, gzip, bzip2, xz, gcc, sqlite3, sort) run on inputs "
                                    "generated from a seed and captured once each, data references only, into "
                                    "$PAGELAB_SUITE_DIR (default ~/.cache/pagelab/suite) with a JSON manifest; "
                                    "then 'suite:MEMBER' is a trace anywhere a trace is taken.")
    ssub = st.add_subparsers(dest="suite_command", metavar="SUBCOMMAND", parser_class=Parser)
    sb = ssub.add_parser("build", help="capture members not built yet (several at once, one valgrind per core)")
    sb.add_argument("members", nargs="*", metavar="MEMBER",
                    help="members to build (default: all but gzip-small); hpcc-* parts build with hpcc")
    sb.add_argument("--jobs", metavar="N", help="captures at a time (default: one per core)")
    sb.add_argument("--force", action="store_true", help="capture built members again")
    sb.set_defaults(func=cmd_suite_build)
    sl = ssub.add_parser("list", help="the members, built or not, with their size and capture time")
    sl.add_argument("--json", action="store_true", help="machine-readable output")
    sl.set_defaults(func=cmd_suite_list)
    # without its subcommand, the group's help, not the top level's
    st.set_defaults(help_parser=st)


def _add_workload(sub) -> None:
    wl = sub.add_parser("workload", help="list and emit built-in workloads")
    wsub = wl.add_subparsers(dest="workload_command", metavar="SUBCOMMAND", parser_class=Parser)
    wlist = wsub.add_parser("list", help="the built-in workloads and their parameters")
    wlist.add_argument("--json", action="store_true")
    wlist.set_defaults(func=cmd_workload_list)
    emit = wsub.add_parser("emit", help="write a workload's references as a trace")
    emit.add_argument("name")
    emit.add_argument("-o", "--output", required=True)
    emit.add_argument("--param", action="append", metavar="K=V")
    emit.add_argument("--format", help="output format (default: from the file name)")
    emit.add_argument("--page-size", help="page size in bytes (default 4096)")
    emit.add_argument("--seed", default="0")
    emit.set_defaults(func=cmd_workload_emit)
    # without its subcommand, the group's help, not the top level's
    wl.set_defaults(help_parser=wl)


def _add_replay(sub) -> None:
    rp = sub.add_parser("replay", help="fault counts per policy and memory size")
    add_source_args(rp)
    rp.add_argument("--policy", default="lru",
                    help="comma-separated, parameters after a colon (last-static:-5, last-dynamic:60, "
                         "dp-approx:0.5, ws:10000, pff:1000): " + ", ".join(api.policies()))
    rp.add_argument("--frames", required=True,
                    help=f"comma-separated memory sizes in frames, e.g. 1000,2k,4k ({BINARY_SUFFIXES})")
    rp.add_argument("--repeats", choices=("fold", "hits"), default="fold",
                    help="what a policy sees of a run of references to one page: one reference (fold, the "
                         "default, as a kernel's reference bit) or a hit for each after the first (hits, as "
                         "libCacheSim and the authors' programs; the presets named after them always do)")
    rp.add_argument("--json", action="store_true", help="machine-readable output")
    rp.add_argument("--csv", help="also write the table to this CSV file")
    rp.set_defaults(func=cmd_replay)


def _add_mrc(sub) -> None:
    mr = sub.add_parser("mrc", help="exact LRU or OPT fault curve for every memory size, in one pass (Mattson)")
    add_source_args(mr)
    mr.add_argument("--policy", default="lru", choices=["lru", "opt"],
                    help="the stack algorithm: lru (default) or opt (Belady's MIN)")
    mr.add_argument("-o", "--output", default="mrc.csv", help="CSV output (default mrc.csv)")
    mr.add_argument("--plot", help="figure (default: the CSV name with .png)")
    mr.set_defaults(func=cmd_mrc)


def _add_analyze(sub) -> None:
    an = sub.add_parser("analyze", help="analyses of a reference stream under a policy")
    asub = an.add_subparsers(dest="analyze_command", metavar="SUBCOMMAND", parser_class=Parser)
    af = asub.add_parser("faults", help="fault parameters L, D, W, R, F per residency (predictive-replacement.txt)",
                         description="Replays each source under one policy at one memory size and records, "
                                     "for every residency, the fault parameters L, D, W, R, F in memory "
                                     "references and in faults to other pages; writes a Parquet table per "
                                     "source, summary.csv and the figures of the paper's section 4.")
    af.add_argument("sources", nargs="+", metavar="SOURCE",
                    help="a trace file, suite:MEMBER, or workload:NAME[:k=v,...]")
    af.add_argument("--policy", default="lru", help="one fixed-size policy (default lru): " + ", ".join(api.policies()))
    size = af.add_mutually_exclusive_group(required=True)
    size.add_argument("--frames", help=f"memory size in frames, for every source ({BINARY_SUFFIXES})")
    size.add_argument("--memory-fraction", metavar="F",
                      help="memory size as a fraction in (0, 1] of each source's distinct pages")
    af.add_argument("--seed", default="0", help="seed for workloads and randomised policies (default 0)")
    af.add_argument("--page-size", metavar="BYTES", help="page size in bytes (power of two)")
    af.add_argument("--out", required=True, metavar="DIR", help="output directory")
    af.add_argument("--pages", default="2", metavar="K", help="pages per source in the L-over-time figure (default 2)")
    af.set_defaults(func=cmd_analyze_faults)
    # without its subcommand, the group's help, not the top level's
    an.set_defaults(help_parser=an)


def _add_bench(sub) -> None:
    bench = sub.add_parser("bench", help="whole-program replay throughput on a Zipf trace")
    bench.add_argument("--refs", default="10000000", help="references (default 10M)")
    bench.add_argument("--pages", default="750000", help="distinct pages (default 750k)")
    bench.add_argument("--alpha", default="1.0", help="Zipf exponent (default 1.0)")
    bench.add_argument("--frames", default=None, help="frames (default 10%% of pages)")
    bench.add_argument("--no-commands", action="store_true",
                       help="time only in-process, not whole `pagelab replay` commands on the trace "
                            "in the oracleGeneral, CSV and pagelab formats")
    bench.add_argument("--policy", default=None,
                       help="policies to time (default lru,clock,fifo,random,opt; with --sweep one, default opt)")
    bench.add_argument("--repeat", default="3", help="runs per measurement; the best is reported")
    bench.add_argument("--libcachesim", metavar="PYTHON",
                       help="also time libCacheSim on the oracleGeneral trace and on a CSV of one request a "
                            "line, whole process, with this Python interpreter (one that has `pip install "
                            "libcachesim`), beside pagelab's command, and compare their fault counts")
    bench.add_argument("--json", action="store_true")
    bench.add_argument("--sweep", action="store_true",
                       help="instead: a 64-point replay sweep (64 memory sizes) in passes and on the local Dask "
                            "cluster against the same points one after another (issue 8's throughput benchmark; "
                            "--refs/--pages size the trace)")
    bench.set_defaults(func=cmd_bench)


def _add_sweep(sub) -> None:
    sw = sub.add_parser("sweep", help="run a grid of replay or timed-system configurations (docs/sweeps.md)",
                        description="Runs every point of SPEC not yet in the results store, on a local Dask "
                                    "cluster (one worker process per core) or on an existing Dask cluster; "
                                    "each finished point is stored at once, so a killed sweep resumes.")
    sw.add_argument("spec", help="sweep spec (TOML: [sweep], [base], [[axis]]; docs/sweeps.md)")
    sw.add_argument("--out", metavar="DIR", help="results store (default results/sweep-<name>)")
    sw.add_argument("--scheduler", metavar="ADDRESS",
                    help="an existing Dask scheduler, e.g. tcp://host:8786 (default: a local cluster)")
    sw.add_argument("--workers", metavar="N",
                    help="local worker processes (default: one per core; 0: run here without Dask)")
    sw.add_argument("--retry-failed", action="store_true", help="run the points that failed before again")
    sw.add_argument("--points-per-task", metavar="N", help="points per task, and per replay pass (default: automatic; 1: every point alone)")
    sw.set_defaults(func=cmd_sweep)


def _add_results(sub) -> None:
    rs = sub.add_parser("results", help="list and merge the points of a sweep's results store")
    rs.add_argument("dir", metavar="DIR", help="results store of 'pagelab sweep'")
    rs.add_argument("--csv", metavar="FILE", help="write the merged table as CSV")
    rs.add_argument("--parquet", metavar="FILE", help="write the merged table as Parquet")
    rs.add_argument("--limit", metavar="N", help="rows to print (default 40)")
    rs.set_defaults(func=cmd_results)


def _add_run(sub) -> None:
    run = sub.add_parser("run", help="run a timed multiprogrammed system from a TOML configuration")
    run.add_argument("config", help="configuration file (docs/system-config.md)")
    run.add_argument("--out", help="output directory (default results/run-<config name>)")
    run.add_argument("--json", action="store_true", help="print the result as JSON instead of the table")
    run.add_argument("--on", choices=BACKENDS, help="backend: the simulator (default) or this machine's "
                                                          "kernel (root; docs/kernel-backend.md); overrides the "
                                                          "file's backend key")
    run.set_defaults(func=cmd_run)


def _add_reproduce(sub) -> None:
    rep = sub.add_parser("reproduce", help="reproduce a paper's experiment: its claim ledger, tables, figures, report",
                         description="Runs an experiment (a shipped one by name, a file of your own by path, or "
                                     "'all' of them as one run) through the sweep executor: in parallel, each "
                                     "engine run stored as it finishes, so an interrupted run resumes. Then writes "
                                     "its tables, figures, claim ledger (claims.csv) and report.html.")
    rep.add_argument("experiment", help=f"experiment name ({', '.join(shipped_experiments())}), all, or a path to an "
                                        "experiment file")
    rep.add_argument("--out", help="output directory (default results/<experiment>; with all: results/, one "
                                   "subdirectory each)")
    rep.add_argument("--quick", action="store_true", help="scaled-down problem sizes (quick_scale), for tests")
    rep.add_argument("--sensitivity", action="store_true",
                     help="also run every variant of the file's sensitivity ranges and report, per claim, in how "
                          "many the claim holds (with a figure)")
    rep.add_argument("--workers", metavar="N", help="local worker processes (default: one per core; 0: here)")
    rep.add_argument("--scheduler", metavar="ADDRESS", help="run the points on this Dask cluster instead")
    rep.add_argument("--retry-failed", action="store_true", help="run engine runs that failed before again")
    rep.add_argument("--on", choices=BACKENDS, help="where its system runs go: the simulator (default) or "
                                                          "this machine's kernel (root; the experiments with a "
                                                          "kernel version: docs/kernel.md); default output "
                                                          "results/<experiment>-kernel")
    rep.set_defaults(func=cmd_reproduce)


def _add_report(sub) -> None:
    rpt = sub.add_parser("report", help="rebuild the HTML report of `pagelab reproduce` results, running nothing")
    rpt.add_argument("dir", metavar="DIR", help="an output directory of `pagelab reproduce NAME` (DIR/report.html) "
                                                "or of `reproduce all` (a report per experiment and DIR/index.html)")
    rpt.add_argument("--readme", metavar="FILE", help="instead: write the results into FILE's generated "
                                                      "'Reproduced results' section (README.md)")
    rpt.set_defaults(func=cmd_report)


def _add_demo(sub) -> None:
    demo = sub.add_parser("demo", help="replay built-in workloads under every policy; table, figures, JSON")
    demo.add_argument("--out", default="results/demo", help="output directory (default results/demo)")
    demo.set_defaults(func=cmd_demo)


#: the commands, in the order of the help, each with the function that adds its parser
COMMANDS = {
    "trace": _add_trace,
    "suite": _add_suite,
    "workload": _add_workload,
    "replay": _add_replay,
    "mrc": _add_mrc,
    "analyze": _add_analyze,
    "bench": _add_bench,
    "sweep": _add_sweep,
    "results": _add_results,
    "run": _add_run,
    "kernel": add_kernel_parser,
    "reproduce": _add_reproduce,
    "report": _add_report,
    "demo": _add_demo,
}


def build_parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """The command line's parser; with `command`, one that knows only that command
    (building every command's arguments cost each command 15 ms of its start)."""
    p = Parser(prog="pagelab", description="A laboratory for virtual-memory paging.")
    p.add_argument("--version", action=VersionAction, help="print the version and the git commit, and exit")
    add_progress_args(p, None)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, add in COMMANDS.items():
        if command is None or name == command:
            add(sub)
    # --progress/--no-progress also after the command (pagelab replay ... --no-progress)
    for parser in _all_parsers(sub):
        add_progress_args(parser, argparse.SUPPRESS)
    return p


def command_of(argv: List[str]) -> Optional[str]:
    """The command `argv` names, or None when it names none or asks for the top level's
    help first (then the parser must know every command). The top level's options take
    no value, so the command is the first argument that is not an option."""
    for a in argv:
        if a in ("-h", "--help"):
            return None
        if not a.startswith("-"):
            return a if a in COMMANDS else None
    return None


def add_progress_args(p: argparse.ArgumentParser, default) -> None:
    """The progress switches; on a command (default SUPPRESS) they override the top
    level's only when given."""
    p.add_argument("--progress", dest="progress", action="store_true", default=default,
                   help="always show progress bars on stderr (default: only on a terminal or in Jupyter)")
    p.add_argument("--no-progress", dest="progress", action="store_false", default=default,
                   help="never show progress bars")


def _all_parsers(subparsers) -> List[argparse.ArgumentParser]:
    """Every command and subcommand parser under ``subparsers``."""
    out = []
    for parser in dict.fromkeys(subparsers.choices.values()):
        out.append(parser)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                out += _all_parsers(action)
    return out


def main(argv: Optional[List[str]] = None) -> int:
    # The command does no linear algebra, but numpy's OpenBLAS threads spin after any
    # numpy call and steal a core from the engine's reader thread (seen with perf on a
    # 2-core machine). Must be set before numpy is first imported; a user's own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(command_of(argv))
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            getattr(args, "help_parser", parser).print_help()
            return EXIT_USAGE
        return args.func(args)
    except UsageError as err:
        print(f"pagelab: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except PagelabError as err:
        print(f"pagelab: error: {err}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("pagelab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # e.g. `pagelab workload list | head`: not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except OSError as err:
        name = f"{err.filename}: " if err.filename else ""
        print(f"pagelab: error: {name}{err.strerror or err}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
