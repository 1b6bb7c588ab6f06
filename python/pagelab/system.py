"""The timed paging system: configuration (TOML or dict), a run, and its result.

A configuration file has the tables ``[system]``, ``[disk]``, ``[token]``,
``[load_control]``, ``[swap]``, ``[gang]`` and one ``[[process]]`` per process (with
``[gang]``, per parallel job) (docs/system-config.md has
every key). Python loads the TOML, checks the top level, resolves trace paths against
the file's directory and hands the whole structure to the engine as JSON, where the
list of processes is called ``processes``. The engine validates every key; its error
paths (``processes[1].params``) come back as ``process[1].params`` (the index counts
the ``[[process]]`` entries in file order, from 0), prefixed with the file name.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from pathlib import Path
from typing import Any, Dict, Optional, Union

from ._core import PagelabError
from .api import html_table
from .suite_cache import is_suite_name, resolve
from .configs import toml_kind
from .figures.memory import draw_memory, plot_memory, plot_space_time
from .files import atomic_path, output_dir, write_text
from .progress import ProgressBar
from .version import build_info

#: the tables a configuration may have at its top level, in documentation order
TOP_LEVEL = ("backend", "system", "disk", "token", "load_control", "swap", "gang", "kernel", "process")
#: the [kernel] table: how the kernel backend runs a configuration (the simulator ignores it):
#: key -> (smallest, largest)
KERNEL_OPTIONS = {
    "repeats": (1, 100),
    "oom_retries": (0, 10),
    "control_ms": (10, 10_000),
}
#: where a configuration runs: the simulator (default) or this machine's kernel (docs/kernel-backend.md)
BACKENDS = ("simulator", "kernel")
#: token policies (token-ordered-lru.txt section 5; linux2620 = the swap token of Linux 2.6.20)
TOKEN_POLICIES = ("none", "paper", "linux2620")

ConfigLike = Union[str, os.PathLike, dict]


# ---------------------------------------------------------------- loading

def _toml_module():
    try:
        import tomllib  # Python 3.11+

        return tomllib
    except ImportError:
        try:
            import tomli  # the same parser, for Python 3.9 and 3.10

            return tomli
        except ImportError:
            raise PagelabError("reading TOML needs Python 3.11+ (tomllib) or the 'tomli' package: "
                               "pip install tomli") from None


_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def _toml_error_line(name: str, err: Exception) -> str:
    """'FILE: line N: what' from tomllib's 'what (at line N, column M)'."""
    text = str(err).strip().splitlines()[0] if str(err).strip() else "invalid TOML"
    m = _TOML_POSITION.search(text)
    if m:
        what = text[: m.start()]
        return f"{name}: line {m.group(1)}: {what[:1].lower() + what[1:]} (column {m.group(2)})"
    text = text.replace(" (at end of document)", "")
    return f"{name}: end of file: {text[:1].lower() + text[1:]}"


def read_toml(path: Union[str, os.PathLike]) -> dict:
    """A TOML file as a dict; a missing file or a syntax error is a one-line PagelabError
    naming the file (and the line)."""
    tomllib = _toml_module()
    name = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise PagelabError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise PagelabError(f"{name}: is a directory, expected a TOML file") from None
    except OSError as err:
        raise PagelabError(f"{name}: {err.strerror or err}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise PagelabError(f"{name}: line {line}: not UTF-8 text") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise PagelabError(_toml_error_line(name, err)) from None


def _check_table(name: str, key: str, value: Any) -> None:
    if not isinstance(value, dict):
        raise PagelabError(f"{name}: {key}: expected a table ([{key}]), got {toml_kind(value)}")


def normalize_config(config: dict, name: str, base_dir: Optional[Path] = None) -> dict:
    """Checks the top level of a configuration and returns the engine's JSON structure:
    ``process`` renamed ``processes``, trace paths made absolute against ``base_dir``.
    Everything below the top level is the engine's to validate."""
    if not isinstance(config, dict):
        raise PagelabError(f"{name}: expected a table of system, disk, token, load_control, process; "
                           f"got {toml_kind(config)}")
    for key in config:
        if key not in TOP_LEVEL:
            hint = " (write [[process]] entries)" if key == "processes" else ""
            raise PagelabError(f"{name}: unknown top-level key '{key}'{hint} "
                               f"(expected {', '.join(TOP_LEVEL)})")
    if "system" not in config:
        raise PagelabError(f"{name}: missing table [system] (at least system.frames)")
    for key in ("system", "disk", "token", "load_control", "swap", "gang", "kernel"):
        if key in config:
            _check_table(name, key, config[key])
    if "kernel" in config:
        kernel_options(config["kernel"], name)
    processes = config.get("process")
    if processes is None:
        raise PagelabError(f"{name}: no [[process]] entries: expected at least one process")
    if isinstance(processes, dict):
        raise PagelabError(f"{name}: process: expected [[process]] entries (an array of tables), "
                           "got a single [process] table")
    if not isinstance(processes, list) or not processes:
        raise PagelabError(f"{name}: process: expected at least one [[process]] entry")
    config_backend(config, name)
    out = {k: copy.deepcopy(v) for k, v in config.items() if k not in ("process", "backend")}
    out["processes"] = []
    for i, p in enumerate(processes):
        if not isinstance(p, dict):
            raise PagelabError(f"{name}: process[{i}]: expected a table, got {toml_kind(p)}")
        p = copy.deepcopy(p)
        if is_suite_name(p.get("workload")):
            # a member of the real-program suite stands where a generator would: its trace
            p = workload_as_trace(p, f"{name}: process[{i}]")
        trace = p.get("trace")
        if is_suite_name(trace):
            try:
                trace = resolve(trace)
            except PagelabError as err:
                raise PagelabError(f"{name}: process[{i}].trace: {err}") from None
        if isinstance(trace, (str, os.PathLike)):
            path = Path(os.path.expanduser(os.fspath(trace)))
            if not path.is_absolute() and base_dir is not None:
                path = base_dir / path
            if not path.exists():
                raise PagelabError(f"{name}: process[{i}].trace: no such file: {os.fspath(path)}")
            p["trace"] = os.fspath(path)
        out["processes"].append(p)
    return out


def workload_as_trace(process: dict, where: str) -> dict:
    """A process whose workload is ``suite:NAME`` as one whose trace is (a captured
    program has no parameters, and its trace no seed)."""
    if process.get("params"):
        raise PagelabError(f"{where}.params: {process['workload']} is a captured program: it takes no parameters")
    if "trace" in process:
        raise PagelabError(f"{where}: expected one of workload and trace, got both")
    out = {k: v for k, v in process.items() if k not in ("workload", "params", "seed")}
    out["trace"] = process["workload"]
    return out


def kernel_options(table: dict, name: str) -> dict:
    """The [kernel] table checked, with its defaults (docs/kernel-backend.md):
    ``repeats``, how many times the run is repeated (the kernel is not deterministic:
    the result has the medians and each number's spread); ``oom_retries``, how many
    runs the OOM killer may end before the run fails (each one is run again and counted
    in the result's ``oom_kills``; a small memory cgroup can be OOM-killed while its
    pages are under swap I/O); ``cpus``, the CPUs the run's processes may use (the
    simulator's machine has one CPU: ``[0]`` makes the kernel's the same; the stream
    generators then run on the others); ``control_ms``, how often the controllers
    ([token], [load_control], [gang]: docs/kernel.md) act; ``dedicated``, false to skip
    each process's run alone (its dedicated time and slowdown are then not measured: an
    experiment that compares with a baseline run of its own saves that time)."""
    out = {"repeats": 1, "oom_retries": 0, "cpus": None, "control_ms": 50, "dedicated": True}
    for key, value in table.items():
        if key not in KERNEL_OPTIONS and key not in ("cpus", "dedicated"):
            raise PagelabError(f"{name}: kernel.{key}: unknown key (expected {', '.join(KERNEL_OPTIONS)}, cpus, "
                               "dedicated)")
        if key == "dedicated":
            if not isinstance(value, bool):
                raise PagelabError(f"{name}: kernel.dedicated: expected true or false, got {value!r}")
            out[key] = value
            continue
        if key == "cpus":
            online = os.cpu_count() or 1
            if (not isinstance(value, list) or not value or len(set(map(repr, value))) != len(value)
                    or not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c < online for c in value)):
                raise PagelabError(f"{name}: kernel.cpus: expected a list of distinct CPU numbers from 0 to "
                                   f"{online - 1}, got {value!r}")
            out[key] = list(value)
            continue
        lo, hi = KERNEL_OPTIONS[key]
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            raise PagelabError(f"{name}: kernel.{key}: expected a whole number from {lo} to {hi}, got {value!r}")
        out[key] = value
    return out


def config_backend(config: dict, name: str, override: Optional[str] = None) -> str:
    """The backend a configuration runs on: ``override`` (``--on``), else its top-level
    ``backend`` key, else the simulator."""
    if override is not None:
        if override not in BACKENDS:
            raise PagelabError(f"--on: expected one of {', '.join(BACKENDS)}, got '{override}'")
        return override
    value = config.get("backend", "simulator") if isinstance(config, dict) else "simulator"
    if value not in BACKENDS:
        raise PagelabError(f"{name}: backend: expected one of {', '.join(repr(b) for b in BACKENDS)}, got {value!r}")
    return value


def load_config(config: ConfigLike) -> tuple:
    """(engine structure, name for messages) from a TOML path or a dict."""
    if isinstance(config, dict):
        return normalize_config(config, "config"), "config"
    if isinstance(config, (str, os.PathLike)):
        name = os.fspath(config)
        data = read_toml(config)
        return normalize_config(data, name, Path(config).resolve().parent), name
    raise TypeError(f"expected a TOML path or a dict, got {type(config).__name__}")


_ENGINE_PATH = re.compile(r"\bprocesses\[")


def engine_error(name: str, err: Exception) -> PagelabError:
    """The engine's one-line error with the config name in front and its list key
    spelled as in the file (``processes[1]`` -> ``process[1]``)."""
    text = _ENGINE_PATH.sub("process[", str(err))
    if text.startswith("processes:") or text.startswith("processes "):
        text = "process" + text[len("processes"):]
    return PagelabError(f"{name}: {text}")


# ---------------------------------------------------------------- progress

class SimulatedTimeBar(ProgressBar):
    """Progress in simulated seconds (the engine reports simulated milliseconds done).
    Each run the engine makes (the shared run, then one dedicated run per process)
    restarts the count; the bar shows the current one."""

    def _columns(self) -> list:
        from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

        return [SpinnerColumn(), TextColumn("[bold]{task.description}"),
                TextColumn("run {task.fields[run]}: {task.fields[sim]:,.1f} simulated s"), TimeElapsedColumn()]

    def _task_fields(self) -> dict:
        return {"total": None, "run": 1, "sim": 0.0}

    def _show(self, done_ms: int) -> None:
        self._progress.update(self._task, sim=done_ms / 1000.0, run=self.passes + 1)


# ---------------------------------------------------------------- running

def check_numbers(value: Any, name: str, path: str = "") -> None:
    """Every number of a configuration is one the engine can read: finite floats (TOML
    allows nan and inf) and integers of at most 64 bits. A one-line error names the key;
    the engine checks the ranges that matter."""
    if isinstance(value, dict):
        for k, v in value.items():
            check_numbers(v, name, f"{path}.{k}" if path else str(k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            check_numbers(v, name, f"{path}[{i}]")
    elif isinstance(value, float) and not math.isfinite(value):
        raise engine_error(name, PagelabError(f"{path}: expected a finite number, got {value}"))
    elif isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < (1 << 64):
        raise engine_error(name, PagelabError(f"{path}: expected a whole number of at most 64 bits, got {value}"))


def engine_json(engine_config: dict, name: str) -> str:
    """The configuration as the engine reads it (JSON), after :func:`check_numbers`."""
    check_numbers(engine_config, name)
    try:
        # [kernel] is the kernel backend's: the simulator has nothing to do with it
        return json.dumps({k: v for k, v in engine_config.items() if k != "kernel"}, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise PagelabError(f"{name}: cannot be converted to JSON: {err}") from None


class SystemResult:
    """The result of one timed run: per-process numbers, time series, token events."""

    PROCESS_COLUMNS = ["name", "start_ns", "end_ns", "runtime_ns", "dedicated_ns", "slowdown",
                       "references", "records", "major_faults", "minor_faults", "pages_freed", "page_ins",
                       "page_outs", "token_grabs", "token_held_ns", "suspended_ns"]
    SERIES_COLUMNS = ["process", "t_s", "mad", "rss", "nap", "npf"]
    SYSTEM_SERIES_COLUMNS = ["t_s", "free", "cpu_util", "disk_util"]

    def __init__(self, raw: dict, config: Optional[dict] = None, name: str = "config"):
        self.raw = raw
        self.config = config
        self.name = name

    # plain numbers
    @property
    def end_s(self) -> float:
        return self.raw["end_ns"] / 1e9

    @property
    def cpu_utilisation(self) -> float:
        return self.raw["cpu_busy_ns"] / max(self.raw["end_ns"], 1)

    @property
    def disk_utilisation(self) -> Optional[float]:
        """None for a kernel run without swap (no swap disk to measure)."""
        if self.raw.get("disk_busy_ns") is None:
            return None
        return self.raw["disk_busy_ns"] / max(self.raw["end_ns"], 1)

    @property
    def backend(self) -> str:
        return self.raw.get("backend", "simulator")

    def process(self, name: str) -> dict:
        for p in self.raw["processes"]:
            if p["name"] == name:
                return p
        raise PagelabError(f"process: no process '{name}' in this result "
                           f"(it has: {', '.join(self.process_names)})")

    @property
    def process_names(self) -> list:
        return [p["name"] for p in self.raw["processes"]]

    # tables
    @property
    def processes(self):
        """One row per process, with runtime_s and dedicated_s added."""
        import pandas as pd

        df = pd.DataFrame(self.raw["processes"], columns=self.PROCESS_COLUMNS)
        df["runtime_s"] = df["runtime_ns"] / 1e9
        df["dedicated_s"] = df["dedicated_ns"] / 1e9
        return df

    @property
    def series(self):
        """Long form: one row per (process, sample): MAD, RSS, NAP in pages, NPF the
        major faults in the interval."""
        import pandas as pd

        parts = []
        for s in self.raw.get("series", []):
            df = pd.DataFrame({k: s[k] for k in self.SERIES_COLUMNS[1:]})
            df.insert(0, "process", s["process"])
            parts.append(df)
        if not parts:
            return pd.DataFrame(columns=self.SERIES_COLUMNS)
        return pd.concat(parts, ignore_index=True)

    @property
    def system_series(self):
        import pandas as pd

        s = self.raw.get("system_series") or {}
        return pd.DataFrame({k: s.get(k, []) for k in self.SYSTEM_SERIES_COLUMNS})

    @property
    def token_events(self):
        import pandas as pd

        df = pd.DataFrame(self.raw.get("token_events", []), columns=["t_ns", "event", "process"])
        df["t_s"] = df["t_ns"] / 1e9
        return df

    @property
    def space_time(self) -> Dict[str, dict]:
        """Per-page state per sample, by process name (only with system.space_time)."""
        return {s["process"]: s for s in self.raw.get("space_time") or []}

    def to_json(self) -> str:
        """The engine's result with the pagelab build that produced it (``"pagelab"``)."""
        return json.dumps(dict(self.raw, pagelab=build_info()), indent=2)

    def plot(self, process: Optional[str] = None, title: Optional[str] = None):
        """The memory-time graph (MAD, RSS, NAP, NPF) of ``process`` (default: the first):
        a matplotlib Figure."""
        name = process if process is not None else self.process_names[0]
        self.process(name)  # a one-line error for an unknown name
        return draw_memory(self.raw, name, title)

    def _repr_html_(self) -> str:
        cols = ["name", "runtime_s", "dedicated_s", "slowdown", "major_faults", "minor_faults",
                "page_ins", "page_outs", "token_grabs"]
        return html_table(repr(self), self.processes[cols]) + f"<p>{system_line(self)}</p>"

    def __repr__(self) -> str:
        unit = "s on the kernel" if self.backend == "kernel" else "simulated s"
        return (f"SystemResult({self.name!r}, {len(self.raw['processes'])} processes, "
                f"{self.end_s:.1f} {unit})")


# ---------------------------------------------------------------- report

def process_rows(result: SystemResult) -> list:
    """Rows of the per-process table printed by `pagelab run`."""
    def num(v, fmt: str) -> str:
        return "-" if v is None else format(v, fmt)

    rows = []
    for p in result.raw["processes"]:
        rows.append([p["name"], f"{p['runtime_ns'] / 1e9:,.2f}",
                     "-" if p["dedicated_ns"] is None else f"{p['dedicated_ns'] / 1e9:,.2f}",
                     num(p["slowdown"], ".2f"), f"{p['major_faults']:,}", f"{p['minor_faults']:,}",
                     num(p["page_ins"], ","), num(p["page_outs"], ","), f"{p['token_grabs']:,}"])
    return rows


PROCESS_TABLE_COLUMNS = ["process", "runtime (s)", "dedicated (s)", "slowdown", "major faults",
                         "minor faults", "page-ins", "page-outs", "token grabs"]


def system_line(result: SystemResult) -> str:
    r = result.raw
    if r.get("backend") == "kernel":
        return (f"system: kernel {r['kernel']}, cgroup v{r['cgroup_version']}, {result.end_s:,.2f} s (wall), "
                f"limit {r['limit_bytes'] / 2**20:,.1f} MiB ({r['frames']:,} frames), peak use "
                f"{r['peak_bytes'] / 2**20:,.1f} MiB, CPU utilisation {100 * result.cpu_utilisation:.1f}% of "
                f"{r['cpus']} CPUs, swap-ins {r['pages_read']:,} pages, swap-outs {r['pages_written']:,} pages "
                f"(system-wide)" + ("" if result.disk_utilisation is None else
                                    f", swap disk ({', '.join(r['swap_disks'])}) busy {100 * result.disk_utilisation:.1f}%"))
    return (f"system: {result.end_s:,.2f} simulated s, CPU utilisation {100 * result.cpu_utilisation:.1f}%, "
            f"disk busy {100 * result.disk_utilisation:.1f}% ({r['disk_reads']:,} reads of "
            f"{r['pages_read']:,} pages, {r['disk_writes']:,} writes of {r['pages_written']:,} pages)")


def safe_name(name: str) -> str:
    """A process name as a file-name part."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "process"


def write_run_outputs(result: SystemResult, out: Path) -> list:
    """result.json, processes.csv, series.csv, memory-<process>.png and, when recorded,
    space-time-<process>.png into ``out``. Returns the file names written."""
    out = Path(out)
    output_dir(out)
    written = []
    write_text(out / "result.json", result.to_json())
    written.append("result.json")
    with atomic_path(out / "processes.csv") as tmp:
        result.processes.to_csv(tmp, index=False)
    written.append("processes.csv")
    with atomic_path(out / "series.csv") as tmp:
        result.series.to_csv(tmp, index=False)
    written.append("series.csv")
    for name in result.process_names:
        fig = f"memory-{safe_name(name)}.png"
        plot_memory(result.raw, name, out / fig)
        written.append(fig)
    for name, st in result.space_time.items():
        fig = f"space-time-{safe_name(name)}.png"
        plot_space_time(st, out / fig, title=f"{name}: pages over time")
        written.append(fig)
    return written
