"""Sweeps: a grid of replay or timed-system configurations (docs/sweeps.md).

A spec (TOML, or the same structure as a dict) names a base configuration and axes to
vary; every point of the grid is a full configuration, keyed by the SHA-256 of its
canonical JSON (with the engine version). Points run on a Dask cluster: by default a
local one with a worker process per core, or an existing one (``scheduler=``). Each
finished point is written at once, by the worker that ran it, to the results store::

    DIR/sweep.json                 the spec, its axes and values (the latest sweep run here)
    DIR/points/<hash>.parquet      the result rows of one point (written whole, then renamed)
    DIR/failed/<hash>.json         a point that failed: its configuration and a one-line error
    DIR/merged/<hash>.parquet      many points' rows, merged at the end of a large sweep

Running the same sweep again skips the stored points, so a killed sweep resumes; a file
that cannot be read, or that holds another point, is deleted and its point runs again.
Dask is imported only here, and only when points have to run.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _core
from ._core import PagelabError
from .files import check_not_dangling
from .progress import ProgressBar
from .reproduce_mclustering import merge
from .system import _kind

#: bump when the stored rows change meaning: every point's hash changes with it
STORE_FORMAT = 1
KINDS = ("replay", "system")
SPEC_KEYS = ("sweep", "base", "axis")
SWEEP_KEYS = ("kind", "name", "config")
REPLAY_KEYS = ("source", "policy", "frames", "seed")
WORKLOAD_SOURCE_KEYS = ("workload", "params", "page_size")
TRACE_SOURCE_KEYS = ("trace", "format", "page_size")
AXIS_KEYS = ("key", "name", "values", "range", "geometric", "zip")
ZIP_MEMBER_KEYS = ("key", "name", "values", "range", "geometric")
RANGE_KEYS = ("start", "stop", "step")
GEOMETRIC_KEYS = ("start", "stop", "factor", "count")
#: values per axis checked by the engine before a timed-system sweep starts (each check
#: starts a run and stops it at its first sample); every replay value is checked
SYSTEM_VALUES_CHECKED = 8
#: a temporary file older than this (seconds) belongs to a writer that died
STRAY_AGE_S = 60.0
#: a sweep that ends with at least this many point files merges them into one file
#: (reading a store costs about 0.6 ms a file: 2 minutes for 200,000 points, 2 s merged)
MERGE_AT = 1000
#: most points one task runs (a Dask task, or a pass run here)
MAX_POINTS_PER_TASK = 32
#: the engine's largest memory size (frames are 32-bit, one value kept for "none")
MAX_FRAMES = (1 << 32) - 2

_HASH_NAME = re.compile(r"^[0-9a-f]{64}$")

SpecLike = Union[str, os.PathLike, dict]


# ---------------------------------------------------------------- the spec

@dataclass
class Axis:
    """One varied key: a column of the results."""
    key: str
    name: str
    path: tuple
    values: list


@dataclass
class AxisGroup:
    """A factor of the product: one axis, or a zip of axes that vary together."""
    where: str
    axes: List[Axis]

    def __len__(self) -> int:
        return len(self.axes[0].values)


@dataclass
class Point:
    index: int
    hash: str
    config: dict
    #: column name -> value as stored (tables and arrays as canonical JSON)
    axes: dict


@dataclass
class SweepSpec:
    name: str
    kind: str          # "replay" or "system"
    mode: str          # "replay", "system", "gang" or "numa"
    file: str          # the spec's name in messages
    base: dict         # the base configuration (TOML layout), trace paths made absolute
    groups: List[AxisGroup]
    base_dir: Path
    raw: dict = field(default_factory=dict)

    @property
    def axes(self) -> List[Axis]:
        return [a for g in self.groups for a in g.axes]

    @property
    def total(self) -> int:
        n = 1
        for g in self.groups:
            n *= len(g)
        return n

    def point_config(self, assignment: Sequence[Tuple[Axis, Any]], where: str) -> dict:
        """The normalised configuration of the base with these axis values set."""
        raw = copy.deepcopy(self.base)
        for axis, value in assignment:
            _set_key(raw, axis.path, copy.deepcopy(value), f"{where}: key '{axis.key}'")
        return normalize_point(self.mode, raw, where, self.base_dir)

    def points(self) -> Iterator[Point]:
        """Every point of the grid, in product order (the first axis varies slowest)."""
        for index, combo in enumerate(itertools.product(*[range(len(g)) for g in self.groups])):
            assignment = [(a, a.values[i]) for g, i in zip(self.groups, combo) for a in g.axes]
            where = f"{self.file}: point {index}"
            config = self.point_config(assignment, where)
            yield Point(index, point_hash(self.kind, config), config,
                        {a.name: column_value(v) for a, v in assignment})

    def to_json(self) -> dict:
        return {"name": self.name, "kind": self.kind, "mode": self.mode, "spec_file": self.file,
                "engine_version": _core.ENGINE_VERSION, "store_format": STORE_FORMAT,
                "points": self.total, "base": self.base,
                "axes": [{"group": i, "key": a.key, "name": a.name, "values": a.values}
                         for i, g in enumerate(self.groups) for a in g.axes]}


def _unknown(where: str, key: str, expected: Sequence[str]) -> PagelabError:
    return PagelabError(f"{where}: unknown key '{key}' (expected {', '.join(expected)})")


def load_spec(spec: SpecLike) -> SweepSpec:
    """Parses and checks a spec (a TOML path or a dict): structure, axes, the base
    configuration and every axis value (by the engine). Errors are one line naming the
    file and the key."""
    from .system import read_toml

    if isinstance(spec, dict):
        data, file, base_dir, stem = spec, "spec", Path.cwd(), "sweep"
    elif isinstance(spec, (str, os.PathLike)):
        file = os.fspath(spec)
        data = read_toml(spec)
        base_dir, stem = Path(spec).resolve().parent, Path(spec).stem
    else:
        raise TypeError(f"expected a TOML path or a dict, got {type(spec).__name__}")
    if not isinstance(data, dict):
        raise PagelabError(f"{file}: expected a table with [sweep], [base] and [[axis]], got {_kind(data)}")
    for key in data:
        if key not in SPEC_KEYS:
            raise PagelabError(f"{file}: unknown top-level key '{key}' (expected sweep, base, axis)")
    table = data.get("sweep")
    if not isinstance(table, dict):
        raise PagelabError(f"{file}: missing table [sweep] (with kind = \"replay\" or \"system\")")
    for key in table:
        if key not in SWEEP_KEYS:
            raise _unknown(f"{file}: sweep.{key}", key, SWEEP_KEYS)
    kind = table.get("kind")
    if kind not in KINDS:
        raise PagelabError(f"{file}: sweep.kind: expected \"replay\" or \"system\", got "
                           f"{json.dumps(kind) if kind is not None else 'nothing'}")
    name = table.get("name", stem)
    if not isinstance(name, str) or not name.strip():
        raise PagelabError(f"{file}: sweep.name: expected a non-empty string")
    base = data.get("base", {})
    if not isinstance(base, dict):
        raise PagelabError(f"{file}: base: expected a table ([base]), got {_kind(base)}")
    base = copy.deepcopy(base)
    if "config" in table:
        if kind != "system":
            raise PagelabError(f"{file}: sweep.config: only a timed-system sweep reads its base from a file")
        base = merge(_read_system_file(table["config"], file, base_dir), base)
    mode = kind
    if kind == "system":
        mode = "numa" if "numa" in base else "gang" if "gang" in base else "system"
    result = SweepSpec(name=name.strip(), kind=kind, mode=mode, file=file, base=base,
                       groups=_parse_axes(data.get("axis", []), file, kind), base_dir=base_dir, raw=data)
    _check_spec(result)
    return result


def _read_system_file(path: Any, file: str, base_dir: Path) -> dict:
    from .system import read_toml

    if not isinstance(path, str):
        raise PagelabError(f"{file}: sweep.config: expected the path of a configuration file (a string)")
    p = Path(os.path.expanduser(path))
    if not p.is_absolute():
        p = base_dir / p
    data = read_toml(p)
    # traces of the file are relative to the file, not to the spec
    for proc in data.get("process", []) if isinstance(data.get("process"), list) else []:
        if isinstance(proc, dict) and isinstance(proc.get("trace"), str):
            t = Path(os.path.expanduser(proc["trace"]))
            proc["trace"] = os.fspath(t if t.is_absolute() else p.resolve().parent / t)
    return data


def _parse_axes(axes: Any, file: str, kind: str) -> List[AxisGroup]:
    if isinstance(axes, dict):
        raise PagelabError(f"{file}: axis: expected [[axis]] entries (an array of tables), got a single [axis] table")
    if not isinstance(axes, list):
        raise PagelabError(f"{file}: axis: expected [[axis]] entries, got {_kind(axes)}")
    groups, seen_keys, seen_names = [], {}, {}
    for i, entry in enumerate(axes):
        where = f"{file}: axis[{i}]"
        if not isinstance(entry, dict):
            raise PagelabError(f"{where}: expected a table, got {_kind(entry)}")
        for key in entry:
            if key not in AXIS_KEYS:
                raise _unknown(f"{where}.{key}", key, AXIS_KEYS)
        if "zip" in entry:
            extra = [k for k in entry if k != "zip"]
            if extra:
                raise PagelabError(f"{where}.{extra[0]}: a zip axis has only 'zip' (put '{extra[0]}' "
                                   "in each of its members)")
            members = entry["zip"]
            if not isinstance(members, list) or not members:
                raise PagelabError(f"{where}.zip: expected a non-empty array of tables "
                                   "({ key = ..., values = [...] })")
            group = []
            for j, m in enumerate(members):
                if not isinstance(m, dict):
                    raise PagelabError(f"{where}.zip[{j}]: expected a table, got {_kind(m)}")
                group.append(_parse_axis(m, f"{where}.zip[{j}]", ZIP_MEMBER_KEYS, kind))
            lengths = [len(a.values) for a in group]
            if len(set(lengths)) > 1:
                sizes = ", ".join(f"{a.key}: {len(a.values)}" for a in group)
                raise PagelabError(f"{where}.zip: the zipped lists have different lengths ({sizes})")
        else:
            group = [_parse_axis(entry, where, ZIP_MEMBER_KEYS, kind)]
        for a in group:
            if a.key in seen_keys:
                raise PagelabError(f"{where}: key '{a.key}' is already varied by {seen_keys[a.key]}")
            if a.name in seen_names:
                raise PagelabError(f"{where}: column name '{a.name}' is already used by {seen_names[a.name]} "
                                   "(give one of them another name = ...)")
            seen_keys[a.key] = seen_names[a.name] = f"axis[{i}]"
        for a in group:
            for other in seen_keys:
                if other != a.key and (other.startswith(a.key + ".") or a.key.startswith(other + ".")):
                    raise PagelabError(f"{where}: key '{a.key}' overlaps key '{other}' of {seen_keys[other]}")
        groups.append(AxisGroup(where, group))
    return groups


def _parse_axis(entry: dict, where: str, allowed: Sequence[str], kind: str) -> Axis:
    for key in entry:
        if key not in allowed:
            raise _unknown(f"{where}.{key}", key, allowed)
    key = entry.get("key")
    if not isinstance(key, str) or not key.strip():
        raise PagelabError(f"{where}.key: expected a dotted key into the base configuration, "
                           "e.g. \"frames\" or \"source.params.pages\"")
    key = key.strip()
    parts = key.split(".")
    if any(not p for p in parts):
        raise PagelabError(f"{where}.key: '{key}' is not a dotted key (an empty part)")
    path = tuple(int(p) if p.isdigit() else p for p in parts)
    if isinstance(path[0], int):
        raise PagelabError(f"{where}.key: '{key}' must start with a name")
    if kind == "replay" and path[0] not in REPLAY_KEYS:
        raise PagelabError(f"{where}.key: unknown key '{path[0]}'" + (f" in '{key}'" if len(path) > 1 else "")
                           + f" (a replay point has {', '.join(REPLAY_KEYS)})")
    name = entry.get("name", key)
    if not isinstance(name, str) or not name.strip():
        raise PagelabError(f"{where}.name: expected a non-empty string (the column name)")
    sources = [k for k in ("values", "range", "geometric") if k in entry]
    if len(sources) != 1:
        raise PagelabError(f"{where}: expected exactly one of values = [...], range = {{...}} or "
                           f"geometric = {{...}} for key '{key}'" + (f" (got {', '.join(sources)})" if sources else ""))
    what = sources[0]
    if what == "values":
        values = entry["values"]
        if not isinstance(values, list):
            raise PagelabError(f"{where}.values: expected an array of values for key '{key}', got {_kind(values)}")
        values = list(values)
    elif what == "range":
        values = _range_values(entry["range"], f"{where}.range", key)
    else:
        values = _geometric_values(entry["geometric"], f"{where}.geometric", key)
    if not values:
        raise PagelabError(f"{where}.{what}: empty axis: key '{key}' has no values")
    return Axis(key=key, name=name.strip(), path=path, values=values)


def _number(table: dict, k: str, where: str, key: str, required: bool = True):
    v = table.get(k)
    if v is None and not required:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
        raise PagelabError(f"{where}.{k}: expected a number for key '{key}'"
                           + (f", got {_kind(v)}" if v is not None else ", got nothing"))
    return v


def _tidy(x: float, ints: bool):
    return int(round(x)) if ints else float(f"{x:.12g}")


def _range_values(table: Any, where: str, key: str) -> list:
    """start, start + step, ... up to stop, stop included when a step lands on it."""
    if not isinstance(table, dict):
        raise PagelabError(f"{where}: expected a table {{ start = ..., stop = ..., step = ... }} for key '{key}'")
    for k in table:
        if k not in RANGE_KEYS:
            raise _unknown(f"{where}.{k}", k, RANGE_KEYS)
    start, stop = _number(table, "start", where, key), _number(table, "stop", where, key)
    step = _number(table, "step", where, key, required=False)
    if step is None:
        step = 1
    if step == 0:
        raise PagelabError(f"{where}.step: expected a step other than 0 for key '{key}'")
    ints = all(isinstance(x, int) for x in (start, stop, step))
    n = math.floor((stop - start) / step + 1e-9) + 1
    if n > 10_000_000:
        raise PagelabError(f"{where}: {n:,} values for key '{key}': too many")
    return [_tidy(start + i * step, ints) for i in range(max(n, 0))]


def _geometric_values(table: Any, where: str, key: str) -> list:
    """start, start*factor, ... up to stop (included when it lands); or count values from
    start to stop evenly spaced on a log scale (rounded, duplicates dropped, when start and
    stop are whole numbers)."""
    if not isinstance(table, dict):
        raise PagelabError(f"{where}: expected a table {{ start = ..., stop = ..., factor = ... }} "
                           f"or {{ start = ..., stop = ..., count = ... }} for key '{key}'")
    for k in table:
        if k not in GEOMETRIC_KEYS:
            raise _unknown(f"{where}.{k}", k, GEOMETRIC_KEYS)
    start, stop = _number(table, "start", where, key), _number(table, "stop", where, key)
    if start <= 0 or stop <= 0:
        raise PagelabError(f"{where}: expected a positive start and stop for key '{key}'")
    if ("factor" in table) == ("count" in table):
        raise PagelabError(f"{where}: expected exactly one of factor and count for key '{key}'")
    if "factor" in table:
        factor = _number(table, "factor", where, key)
        if factor <= 0 or factor == 1:
            raise PagelabError(f"{where}.factor: expected a positive factor other than 1 for key '{key}'")
        ints = all(isinstance(x, int) for x in (start, factor))
        n = math.floor(math.log(stop / start) / math.log(factor) + 1e-9) + 1
        if n > 10_000_000:
            raise PagelabError(f"{where}: {n:,} values for key '{key}': too many")
        return [_tidy(start * factor ** i, ints) for i in range(max(n, 0))]
    count = table["count"]
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise PagelabError(f"{where}.count: expected a positive whole number for key '{key}'")
    if count > 10_000_000:
        raise PagelabError(f"{where}.count: {count:,} values for key '{key}': too many")
    ints = isinstance(start, int) and isinstance(stop, int)
    if count == 1:
        return [start]
    ratio = (stop / start) ** (1 / (count - 1))
    values = [_tidy(start * ratio ** i, ints) for i in range(count)]
    values[-1] = stop
    return list(dict.fromkeys(values))


def _set_key(config: dict, path: tuple, value: Any, where: str) -> None:
    """Sets ``path`` (names and list indices) in ``config``, making missing tables."""
    node: Any = config
    for depth, part in enumerate(path):
        last = depth == len(path) - 1
        prefix = ".".join(str(p) for p in path[:depth]) or "the base"
        if isinstance(node, list):
            if not isinstance(part, int):
                raise PagelabError(f"{where}: '{prefix}' is an array: expected an index, got '{part}'")
            if part >= len(node):
                raise PagelabError(f"{where}: '{prefix}' has {len(node)} entries, no index {part}")
            if last:
                node[part] = value
            else:
                node = node[part]
        elif isinstance(node, dict):
            part = str(part)
            if last:
                node[part] = value
            else:
                if part not in node:
                    node[part] = {}
                node = node[part]
        else:
            raise PagelabError(f"{where}: '{prefix}' is {_kind(node)}, not a table")


# ---------------------------------------------------------------- points

def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def point_hash(kind: str, config: dict) -> str:
    """The point's key: SHA-256 of the canonical JSON of its kind, full configuration,
    the engine version and the store format."""
    payload = {"kind": kind, "config": config, "engine_version": _core.ENGINE_VERSION,
               "store_format": STORE_FORMAT}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def column_value(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return canonical_json(value)
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return str(value)


def normalize_point(mode: str, raw: dict, where: str, base_dir: Path) -> dict:
    """A point's full configuration: checked in structure, defaults filled in, trace
    paths absolute. For the timed system, the engine's JSON structure."""
    if mode == "replay":
        return _replay_config(raw, where, base_dir)
    if mode == "numa":
        from .numa import check_numa_config

        return {"numa": copy.deepcopy(check_numa_config(raw, where))}
    from .system import normalize_config

    return normalize_config(raw, where, base_dir)


def _whole(value: Any, where: str, lo: int = 1, hi: int = 1 << 64) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value < hi:
        span = f"from {lo}" if hi == 1 << 64 else f"from {lo} to {hi - 1}"
        raise PagelabError(f"{where}: expected a whole number {span}, got {json.dumps(value, default=str)}")
    return value


def _replay_config(raw: dict, where: str, base_dir: Path) -> dict:
    for key in raw:
        if key not in REPLAY_KEYS:
            raise _unknown(f"{where}.{key}", key, REPLAY_KEYS)
    source = raw.get("source")
    if not isinstance(source, dict):
        raise PagelabError(f"{where}.source: expected a table, e.g. source = {{ workload = \"zipf\", "
                           "params = { pages = 1000 } } or source = { trace = \"prog.plt\" }")
    if "workload" in source:
        for key in source:
            if key not in WORKLOAD_SOURCE_KEYS:
                raise _unknown(f"{where}.source.{key}", key, WORKLOAD_SOURCE_KEYS)
        if not isinstance(source["workload"], str):
            raise PagelabError(f"{where}.source.workload: expected a workload name (a string)")
        params = source.get("params", {})
        if not isinstance(params, dict):
            raise PagelabError(f"{where}.source.params: expected a table of workload parameters")
        for k, v in params.items():
            if not isinstance(v, (bool, int, float, str)):
                raise PagelabError(f"{where}.source.params.{k}: expected a number, string or boolean, got {_kind(v)}")
        src = {"workload": source["workload"],
               "params": {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in sorted(params.items())},
               "page_size": _whole(source.get("page_size", 4096), f"{where}.source.page_size")}
    elif "trace" in source:
        for key in source:
            if key not in TRACE_SOURCE_KEYS:
                raise _unknown(f"{where}.source.{key}", key, TRACE_SOURCE_KEYS)
        if not isinstance(source["trace"], str):
            raise PagelabError(f"{where}.source.trace: expected a path (a string)")
        path = Path(os.path.expanduser(source["trace"]))
        if not path.is_absolute():
            path = base_dir / path
        fmt = source.get("format")
        if fmt is not None and not isinstance(fmt, str):
            raise PagelabError(f"{where}.source.format: expected a format name (a string)")
        ps = source.get("page_size")
        src = {"trace": os.fspath(path), "format": fmt,
               "page_size": None if ps is None else _whole(ps, f"{where}.source.page_size")}
    else:
        raise PagelabError(f"{where}.source: expected workload = NAME or trace = PATH")
    policy = raw.get("policy", "lru")
    if isinstance(policy, list):
        if not policy or not all(isinstance(p, str) and p.strip() for p in policy):
            raise PagelabError(f"{where}.policy: expected a policy name or a non-empty array of them")
        policy = [p.strip() for p in policy]
    elif isinstance(policy, str) and policy.strip():
        policy = policy.strip()
    else:
        raise PagelabError(f"{where}.policy: expected a policy name or an array of them, got {_kind(policy)}")
    if "frames" not in raw:
        raise PagelabError(f"{where}: missing key 'frames' (memory size in frames, or an array of sizes)")
    frames = raw["frames"]
    if isinstance(frames, list):
        if not frames:
            raise PagelabError(f"{where}.frames: expected at least one memory size")
        frames = [_whole(f, f"{where}.frames", hi=MAX_FRAMES + 1) for f in frames]
    else:
        frames = _whole(frames, f"{where}.frames", hi=MAX_FRAMES + 1)
    seed = _whole(raw.get("seed", 0), f"{where}.seed", lo=0)
    return {"source": src, "policy": policy, "frames": frames, "seed": seed}


def _replay_source(config: dict):
    from .api import Trace, Workload

    s = config["source"]
    if "workload" in s:
        return Workload(s["workload"], seed=config["seed"], page_size=s["page_size"], **s["params"])
    return Trace(s["trace"], format=s["format"], page_size=s["page_size"])


def _check_replay_engine(config: dict, where: str) -> None:
    """The engine's own checks: the source opens (workload name and parameters, trace
    header), every policy parses."""
    source = _replay_source(config)
    try:
        source.meta()
    except PagelabError as err:
        raise PagelabError(f"{where}: source: {err}") from None
    tiny = {"workload": "scan", "params": {"pages": "4", "passes": "1"}, "page_size": 4096, "seed": 0}
    policies = config["policy"] if isinstance(config["policy"], list) else [config["policy"]]
    for p in policies:
        try:
            _core.replay(tiny, [p], [1], 0, None)
        except PagelabError as err:
            raise PagelabError(f"{where}: {err}") from None


class _StopCheck(Exception):
    """Raised by the progress hook of a check run: the engine accepted the configuration."""


def _check_system_engine(mode: str, config: dict, where: str) -> None:
    """Starts the run and stops it at its first progress report: the engine has parsed
    and checked the whole configuration by then."""
    from .system import engine_error

    stopped = []

    def stop(_done):
        stopped.append(True)
        raise _StopCheck()

    run = {"numa": _core.run_numa, "gang": _core.run_gang, "system": _core.run_system}[mode]
    text = json.dumps(config["numa"] if mode == "numa" else config)
    try:
        run(text, stop)
    except KeyboardInterrupt:
        if not stopped:
            raise
    except PagelabError as err:
        raise engine_error(where, err) from None


def _check_spec(spec: SweepSpec) -> None:
    """The base, then each axis value in turn set into the base (for a timed system, up
    to SYSTEM_VALUES_CHECKED values per axis, spread over it), checked in structure and
    by the engine."""
    def check(assignment: list, where: str) -> str:
        config = spec.point_config(assignment, where)
        if spec.mode == "replay":
            _check_replay_engine(config, where)
        else:
            _check_system_engine(spec.mode, config, where)
        return canonical_json(config)

    def label(g: AxisGroup, i: int) -> str:
        return f"{g.where} ({', '.join(f'{a.key} = {canonical_json(a.values[i])}' for a in g.axes)}): base"

    # axes may supply what the base lacks: the base is checked with every axis's first value
    firsts = [(a, a.values[0]) for a in spec.axes]
    try:
        seen = {check(firsts, f"{spec.file}: base")}
    except PagelabError as err:
        g = _blamed_group(spec, str(err))
        if g is None:
            raise
        check(firsts, label(g, 0))  # the same error, naming the axis
        raise
    for g in spec.groups:
        indices = range(len(g))
        if spec.mode != "replay" and len(g) > SYSTEM_VALUES_CHECKED:
            step = (len(g) - 1) / (SYSTEM_VALUES_CHECKED - 1)
            indices = sorted({round(i * step) for i in range(SYSTEM_VALUES_CHECKED)})
        for i in indices:
            assignment = [(a, a.values[0]) for a in spec.axes if not any(a is b for b in g.axes)]
            assignment += [(a, a.values[i]) for a in g.axes]
            where = label(g, i)
            if canonical_json(spec.point_config(assignment, where)) not in seen:
                seen.add(check(assignment, where))


def _blamed_group(spec: SweepSpec, message: str) -> Optional[AxisGroup]:
    """The axis group whose key an error of the base-with-first-values check is about:
    the message starts with the key's path, or names its last part before 'expected'."""
    text = message.split(": base", 1)[-1].lstrip(":. ")
    head = text.split("expected", 1)[0]
    for g in spec.groups:
        for a in g.axes:
            last = str(a.path[-1])
            if (text.startswith(a.key + ":") or f"'{last}'" in head or f"`{last}`" in head
                    or text.startswith(f"{a.key}.")):
                return g
    return None


# ---------------------------------------------------------------- running one point

REPLAY_COLUMNS = ["source", "policy", "frames", "references", "records", "faults", "compulsory_faults",
                  "fault_ratio", "dirty_evictions", "distinct_pages", "mean_resident"]


def run_point(mode: str, config: dict, name: str = "config") -> List[dict]:
    """Runs one point; its result rows (one per policy and size for a replay, one per
    process or job for a timed system, one for a NUMA run)."""
    if mode == "replay":
        return run_replay_pass([config])[0]
    if mode == "numa":
        from .numa import run_numa

        return [run_numa(config, name).summary()]
    from .system import run_engine

    result = run_engine(config, name)
    raw = result.raw
    if mode == "gang":
        jobs = result.jobs.to_dict("records")
        mech = result.mechanisms.drop(columns=["node"]).sum().to_dict()
        extra = {"makespan_s": result.end_s, "paged_pages": result.paged_pages,
                 **{k: int(v) for k, v in mech.items()}}
        return [dict(j, **extra) for j in jobs]
    system = {"end_s": raw["end_ns"] / 1e9, "cpu_utilisation": result.cpu_utilisation,
              "disk_utilisation": result.disk_utilisation, "disk_reads": raw["disk_reads"],
              "disk_writes": raw["disk_writes"], "pages_read": raw["pages_read"],
              "pages_written": raw["pages_written"]}
    rows = []
    for p in raw["processes"]:
        rows.append({"process": p["name"], "runtime_s": p["runtime_ns"] / 1e9, "dedicated_s": p["dedicated_ns"] / 1e9,
                     "slowdown": p["slowdown"], "major_faults": p["major_faults"], "minor_faults": p["minor_faults"],
                     "page_ins": p["page_ins"], "page_outs": p["page_outs"], "references": p["references"],
                     "records": p["records"], "token_grabs": p["token_grabs"],
                     "token_held_s": p["token_held_ns"] / 1e9, "suspended_s": p["suspended_ns"] / 1e9, **system})
    return rows


def pass_key(config: dict) -> str:
    """Replay points with the same key differ only in memory sizes: one engine pass can
    replay them all, reading (and for OPT recording) their source once."""
    return canonical_json({"source": config["source"], "seed": config["seed"], "policy": config["policy"]})


def run_replay_pass(configs: List[dict]) -> List[List[dict]]:
    """The result rows of each replay point, from one engine pass over their common
    source (``pass_key`` equal) at the union of their memory sizes. Each point's rows
    are what replaying it alone gives: its policies in order, each at its own sizes in
    order, a variable-size policy (frames 0) once."""
    from .api import replay

    first = configs[0]
    assert all(pass_key(c) == pass_key(first) for c in configs), "points of one pass share source, seed, policy"
    per_point = [c["frames"] if isinstance(c["frames"], list) else [c["frames"]] for c in configs]
    union = list(dict.fromkeys(f for frames in per_point for f in frames))
    r = replay(_replay_source(first), policy=first["policy"], frames=union, seed=first["seed"])
    rows = [dict({c: row.get(c) for c in REPLAY_COLUMNS}, **row.get("counters", {})) for row in r.rows]
    # the engine's order: each policy at every size of `union`, a variable-size one once
    by_policy, at = [], 0
    for _ in (first["policy"] if isinstance(first["policy"], list) else [first["policy"]]):
        n = 1 if rows[at]["frames"] == 0 else len(union)
        by_policy.append(rows[at:at + n])
        at += n
    assert at == len(rows), "one engine row per policy and size"
    out = []
    for frames in per_point:
        point_rows = []
        for policy_rows in by_policy:
            if len(policy_rows) == 1 and policy_rows[0]["frames"] == 0:
                point_rows.append(dict(policy_rows[0]))
            else:
                point_rows.extend(dict(policy_rows[union.index(f)]) for f in frames)
        out.append(point_rows)
    return out


def one_line(err: BaseException) -> str:
    text = str(err).strip()
    line = text.splitlines()[0].strip() if text else ""
    if isinstance(err, PagelabError):
        return line or "error"
    return f"{type(err).__name__}: {line}" if line else type(err).__name__


# ---------------------------------------------------------------- the store

class Store:
    """The results store of a sweep: one file per finished point, keyed by its hash."""

    def __init__(self, root: Union[str, os.PathLike]):
        self.root = Path(root)
        self.points_dir = self.root / "points"
        self.failed_dir = self.root / "failed"
        self.merged_dir = self.root / "merged"
        self.spec_file = self.root / "sweep.json"

    def point_path(self, h: str) -> Path:
        return self.points_dir / f"{h}.parquet"

    def failed_path(self, h: str) -> Path:
        return self.failed_dir / f"{h}.json"

    def is_store(self) -> bool:
        return self.spec_file.exists() or self.points_dir.is_dir()

    def stored_hashes(self) -> Tuple[set, set]:
        """(points with a result file, points with a failure record), by name only."""
        def names(d: Path, suffix: str) -> set:
            try:
                entries = os.listdir(d)
            except FileNotFoundError:
                return set()
            return {n[: -len(suffix)] for n in entries if n.endswith(suffix) and _HASH_NAME.match(n[: -len(suffix)])}

        return names(self.points_dir, ".parquet"), names(self.failed_dir, ".json")

    def read_point(self, h: str, delete_bad: bool = True) -> Optional[dict]:
        """{"rows": [...], "axes": [...]} of a stored point, or None when there is no
        file or it cannot be read or holds another point (then it is deleted)."""
        import pyarrow.parquet as pq

        path = self.point_path(h)
        try:
            with pq.ParquetFile(path) as f:  # 3x faster than read_table for small files
                table = f.read(use_threads=False)
            meta = table.schema.metadata or {}
            if meta.get(b"pagelab.point", b"").decode() != h or table.num_rows < 1 or "point" not in table.column_names:
                raise ValueError("another point")
            rows = table.to_pylist()
            if any(r.get("point") != h for r in rows):
                raise ValueError("another point")
            axes = json.loads(meta.get(b"pagelab.axes", b"[]").decode())
            return {"rows": rows, "axes": axes}
        except FileNotFoundError:
            return None
        except Exception:  # a truncated or foreign file: never data
            if delete_bad:
                _unlink(path)
            return None

    def write_point(self, h: str, rows: List[dict], axis_names: List[str]) -> None:
        """Writes the point's rows whole (a temporary file renamed over the target)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from .files import atomic_path

        table = pa.Table.from_pylist(rows)
        meta = dict(table.schema.metadata or {})
        meta.update({b"pagelab.point": h.encode(), b"pagelab.axes": json.dumps(axis_names).encode(),
                     b"pagelab.engine_version": _core.ENGINE_VERSION.encode()})
        table = table.replace_schema_metadata(meta)
        with atomic_path(self.point_path(h)) as tmp:
            pq.write_table(table, tmp)

    def read_merged(self, delete_bad: bool = True) -> Tuple[Dict[str, list], List[str], int]:
        """(rows by point, axis names, unreadable files) of the merged files. A file that
        cannot be read is deleted (unless ``delete_bad`` is false): its points run again."""
        import pyarrow.parquet as pq

        rows: Dict[str, list] = {}
        axis_names: List[str] = []
        bad = 0
        try:
            names = sorted(n for n in os.listdir(self.merged_dir) if n.endswith(".parquet") and not n.startswith("."))
        except FileNotFoundError:
            return rows, axis_names, 0
        for name in names:
            path = self.merged_dir / name
            try:
                with pq.ParquetFile(path) as f:
                    table = f.read()
                meta = table.schema.metadata or {}
                if meta.get(b"pagelab.merged") != b"1" or "point" not in table.column_names:
                    raise ValueError("not a merged file")
                these: Dict[str, list] = {}
                for r in table.to_pylist():
                    if not isinstance(r["point"], str) or not _HASH_NAME.match(r["point"]):
                        raise ValueError("a row without its point")
                    these.setdefault(r["point"], []).append(r)
                for a in json.loads(meta.get(b"pagelab.axes", b"[]").decode()):
                    if a not in axis_names:
                        axis_names.append(a)
            except FileNotFoundError:
                continue
            except Exception:  # a damaged file: never data
                bad += 1
                if delete_bad:
                    _unlink(path)
                continue
            for h, point_rows in these.items():
                rows.setdefault(h, point_rows)
        return rows, axis_names, bad

    def merge(self, rows: Dict[str, list], axis_names: List[str]) -> int:
        """Merges the point files of these points, when there are MERGE_AT or more, into
        one file under merged/ (written whole, then renamed), then deletes them. Returns
        how many were merged (0 if their columns cannot share one table)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from .files import atomic_path

        loose = sorted(self.stored_hashes()[0] & set(rows))
        if len(loose) < MERGE_AT:
            return 0
        records = [r for h in loose for r in rows[h]]
        columns = list(dict.fromkeys(k for r in records for k in r))
        try:
            table = pa.Table.from_pydict({c: [r.get(c) for r in records] for c in columns})
        except (pa.ArrowException, TypeError, ValueError):  # an axis with values of several types
            return 0
        table = table.replace_schema_metadata({b"pagelab.merged": b"1", b"pagelab.axes": json.dumps(axis_names).encode(),
                                               b"pagelab.engine_version": _core.ENGINE_VERSION.encode()})
        name = hashlib.sha256("".join(loose).encode()).hexdigest()
        try:
            with atomic_path(self.merged_dir / f"{name}.parquet") as tmp:
                pq.write_table(table, tmp)
        except OSError as err:  # a full disk, say: the point files stay, as good as before
            print(f"pagelab: warning: {self.merged_dir}: could not merge {len(loose)} point files "
                  f"({one_line(err)}); they stay as they are", file=sys.stderr)
            return 0
        for h in loose:
            _unlink(self.point_path(h))
        return len(loose)

    def read_failure(self, h: str, delete_bad: bool = True) -> Optional[dict]:
        path = self.failed_path(h)
        try:
            record = json.loads(path.read_text())
            if not isinstance(record, dict) or record.get("point") != h or not isinstance(record.get("error"), str):
                raise ValueError("another point")
            return record
        except FileNotFoundError:
            return None
        except Exception:
            if delete_bad:
                _unlink(path)
            return None

    def write_failure(self, h: str, record: dict) -> None:
        from .files import write_text

        write_text(self.failed_path(h), json.dumps(record, indent=1, default=str))

    def clean_stray(self, max_age: float = STRAY_AGE_S) -> int:
        """Removes temporary files left by writers that died (older than ``max_age``)."""
        removed, now = 0, time.time()
        for d in (self.points_dir, self.failed_dir, self.merged_dir):
            try:
                entries = list(os.scandir(d))
            except FileNotFoundError:
                continue
            for e in entries:
                if e.name.startswith(".") and e.name.endswith(".tmp"):
                    try:
                        if now - e.stat().st_mtime > max_age:
                            os.unlink(e.path)
                            removed += 1
                    except OSError:
                        pass
        return removed


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _run_and_store(store: Store, mode: str, kind: str, h: str, config: dict, axes: dict, name: str) -> dict:
    """Runs one point where it is (a worker) and writes its file there. A point already
    stored (a task run again after its worker was lost) is read, not run again."""
    stored = _stored_result(store, h)
    if stored is not None:
        return stored
    t0 = time.perf_counter()
    try:
        result = run_point(mode, config, name)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as err:  # engine errors, and a panic (a BaseException in PyO3)
        seconds = time.perf_counter() - t0
        record = {"point": h, "kind": kind, "error": one_line(err), "axes": axes, "config": config,
                  "engine_version": _core.ENGINE_VERSION, "seconds": seconds}
        store.write_failure(h, record)
        return {"point": h, "status": "failed", "error": record["error"], "seconds": seconds}
    return _store_rows(store, h, config, axes, result, time.perf_counter() - t0, 1)


def _stored_result(store: Store, h: str) -> Optional[dict]:
    """The result of a point already in the store (its task ran before), or None."""
    stored = store.read_point(h)
    if stored is None:
        return None
    return {"point": h, "status": "ok", "rows": stored["rows"], "seconds": 0.0, "reused": True}


def _store_rows(store: Store, h: str, config: dict, axes: dict, result: List[dict], seconds: float,
                pass_points: int) -> dict:
    config_json = canonical_json(config)
    rows = []
    for r in result:
        row = dict(axes)
        row.update(r)
        row.update({"seconds": seconds, "pass_points": pass_points, "engine_version": _core.ENGINE_VERSION,
                    "point": h, "config": config_json})
        rows.append(row)
    store.write_point(h, rows, list(axes))
    _unlink(store.failed_path(h))
    return {"point": h, "status": "ok", "rows": rows, "seconds": seconds}


def _run_pass_and_store(store: Store, kind: str, items: list) -> list:
    """Replays points of one ``pass_key`` in one engine pass and writes each. Their
    ``seconds`` is an even share of the pass. If the pass fails, each point runs alone,
    so that each failure is recorded with its own error."""
    results: Dict[str, dict] = {}
    todo = []
    for item in items:
        stored = _stored_result(store, item[0])
        if stored is not None:
            results[item[0]] = stored
        else:
            todo.append(item)
    if len(todo) > 1:
        t0 = time.perf_counter()
        try:
            per_point = run_replay_pass([config for _, config, _, _ in todo])
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException:  # one point's error fails the pass: each alone below
            per_point = None
        if per_point is not None:
            share = (time.perf_counter() - t0) / len(todo)
            for (h, config, axes, _name), rows in zip(todo, per_point):
                results[h] = _store_rows(store, h, config, axes, rows, share, len(todo))
            todo = []
    for h, config, axes, name in todo:
        results[h] = _run_and_store(store, "replay", kind, h, config, axes, name)
    return [results[item[0]] for item in items]


def _run_task(root: str, mode: str, kind: str, engine_version: str, items: list) -> list:
    """A Dask task: its points, written as they finish: replay points of one pass
    (``_tasks``) together, anything else one after another."""
    if engine_version != _core.ENGINE_VERSION:
        raise PagelabError(f"this worker's engine is {_core.ENGINE_VERSION}, the sweep's is {engine_version}: "
                           "install the same pagelab on every worker")
    store = Store(root)
    if mode == "replay" and len(items) > 1:
        return _run_pass_and_store(store, kind, items)
    return [_run_and_store(store, mode, kind, h, config, axes, name) for h, config, axes, name in items]


# ---------------------------------------------------------------- progress

class SweepBar(ProgressBar):
    """Points done, failed and left, with an estimate of the time left."""

    def __init__(self, total: int, enabled: Optional[bool] = None):
        super().__init__("sweep", total=total, enabled=enabled)
        self.failed = 0

    def _columns(self) -> list:
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        return [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("points ({task.fields[failed]} failed, {task.fields[left]} left)"),
                TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn()]

    def _task_fields(self) -> dict:
        return {"total": self.total, "failed": 0, "left": self.total}

    def _show(self, done: int) -> None:
        self._progress.update(self._task, completed=done, failed=self.failed, left=(self.total or 0) - done)

    def points(self, done: int, failed: int) -> None:
        self.failed = failed
        self(done)


# ---------------------------------------------------------------- the sweep

@dataclass
class _Outcome:
    ok: int = 0
    failed: int = 0
    rows: Dict[str, list] = field(default_factory=dict)
    failures: Dict[str, dict] = field(default_factory=dict)


def _read_stored(store: Store, points: List[Point], retry_failed: bool) -> Tuple[Dict[str, list], Dict[str, dict], int]:
    """Stored results of these points: (rows by hash, failure records by hash, bad
    files removed). Unreadable files are deleted: their points run again."""
    from concurrent.futures import ThreadPoolExecutor

    merged, _axes, bad = store.read_merged()
    have, failed = store.stored_hashes()
    wanted = {p.hash for p in points}
    rows: Dict[str, list] = {h: r for h, r in merged.items() if h in wanted}
    candidates = sorted((have & wanted) - set(rows))
    if candidates:
        with ThreadPoolExecutor(max_workers=4) as pool:
            for h, stored in zip(candidates, pool.map(store.read_point, candidates)):
                if stored is None:
                    bad += 1
                else:
                    rows[h] = stored["rows"]
    failures: Dict[str, dict] = {}
    for h in sorted((failed & wanted) - set(rows)):
        record = store.read_failure(h)
        if record is None:
            bad += 1
        elif not retry_failed:
            failures[h] = record
    return rows, failures, bad


def _tasks(todo: List[Point], mode: str, threads: int, points_per_task: Optional[int]) -> List[List[Point]]:
    """The points in tasks of at most ``points_per_task``. Replay points that share a
    source, seed and policies (``pass_key``) go in tasks of their own, each replayed in
    one engine pass: about four tasks per worker thread, so that the last tasks finish
    together, each mixing the group's sizes (every k-th point). Other points: about 64
    tasks per thread, in grid order."""
    threads = max(threads, 1)
    if mode != "replay":
        chunk = points_per_task or max(1, min(MAX_POINTS_PER_TASK, len(todo) // (64 * threads)))
        return [todo[i:i + chunk] for i in range(0, len(todo), chunk)]
    chunk = points_per_task or max(1, min(MAX_POINTS_PER_TASK, len(todo) // (4 * threads)))
    groups: Dict[str, List[Point]] = {}
    for p in todo:
        groups.setdefault(pass_key(p.config), []).append(p)
    tasks = []
    for group in groups.values():
        k = -(-len(group) // chunk)
        tasks.extend(group[j::k] for j in range(k))
    return tasks


def _task_items(spec: SweepSpec, task: List[Point]) -> list:
    return [(p.hash, p.config, p.axes, spec.file) for p in task]


def _run_inline(todo: List[Point], store: Store, spec: SweepSpec, points_per_task: Optional[int], bar: SweepBar,
                outcome: _Outcome) -> None:
    """Here, task after task; the engine runs the simulations of one pass in parallel."""
    root = os.fspath(store.root)
    for task in _tasks(todo, spec.mode, 1, points_per_task):
        for result in _run_task(root, spec.mode, spec.kind, _core.ENGINE_VERSION, _task_items(spec, task)):
            _record(result, outcome, bar)


def _record(result: dict, outcome: _Outcome, bar: Optional[SweepBar]) -> None:
    if result["status"] == "ok":
        outcome.ok += 1
        outcome.rows[result["point"]] = result["rows"]
        outcome.failures.pop(result["point"], None)
    else:
        outcome.failed += 1
        outcome.failures[result["point"]] = result
    if bar is not None:
        bar.points(outcome.ok + outcome.failed, outcome.failed)


def _import_distributed():
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise PagelabError("sweeps need Dask: pip install 'dask[distributed]' (make setup installs it), "
                           "or run the points here with workers = 0 (--workers 0)") from None
    return distributed


def _run_dask(todo: List[Point], store: Store, spec: SweepSpec, scheduler: Optional[str], workers: Optional[int],
              points_per_task: Optional[int], bar: SweepBar, outcome: _Outcome, log: Callable[[str], None]) -> None:
    import asyncio
    import contextlib

    distributed = _import_distributed()
    from distributed import Client, LocalCluster, as_completed

    with contextlib.ExitStack() as stack:
        if scheduler:
            try:
                client = stack.enter_context(Client(scheduler, timeout="15s"))
            except (OSError, TimeoutError) as err:
                raise PagelabError(f"scheduler {scheduler}: cannot connect ({one_line(err)})") from None
        else:
            n = workers or os.cpu_count() or 1
            cluster = stack.enter_context(_local_cluster(LocalCluster, n))
            client = stack.enter_context(Client(cluster))
        threads = sum(client.nthreads().values())
        root = os.fspath(store.root)
        pending = iter(_tasks(todo, spec.mode, threads, points_per_task))
        members: Dict[Any, List[Point]] = {}

        def window() -> int:
            return max(8, 4 * max(threads, 1))

        def submit_next() -> bool:
            part = next(pending, None)
            if part is None:
                return False
            fut = client.submit(_run_task, root, spec.mode, spec.kind, _core.ENGINE_VERSION, _task_items(spec, part),
                                pure=False)
            members[fut] = part
            ac.add(fut)
            return True

        ac = as_completed()
        for _ in range(window()):
            if not submit_next():
                break
        # while the first points run: what the end of the sweep needs (0.3 s, not after the last point)
        import pandas  # noqa: F401
        import pyarrow.parquet  # noqa: F401

        last_count = time.monotonic()
        for fut in ac:
            part = members.pop(fut)
            try:
                results = fut.result()
            except (distributed.client.CancelledError, asyncio.CancelledError):
                raise PagelabError("the Dask scheduler cancelled the sweep's tasks (scheduler lost?); "
                                   "run the sweep again to resume") from None
            except Exception as err:  # KilledWorker (a point that kills workers), a worker's engine mismatch
                error = one_line(err)
                if isinstance(err, distributed.KilledWorker):
                    error = ("killed its worker each time it ran (a crash, or over the worker's memory limit); "
                             f"Dask gave up: {error}")
                results = []
                for p in part:
                    stored = _stored_result(store, p.hash)
                    if stored is not None:
                        results.append(stored)
                        continue
                    record = {"point": p.hash, "kind": spec.kind, "error": error, "axes": p.axes,
                              "config": p.config, "engine_version": _core.ENGINE_VERSION, "seconds": 0.0}
                    store.write_failure(p.hash, record)
                    results.append({"point": p.hash, "status": "failed", "error": record["error"], "seconds": 0.0})
            fut.release()
            for r in results:
                _record(r, outcome, bar)
            if time.monotonic() - last_count > 5:  # clusters grow and shrink
                threads = sum(client.nthreads().values())
                last_count = time.monotonic()
            while ac.count() < window():
                if not submit_next():
                    break


def _exit_if_worker_bootstrapping() -> None:
    """In a local worker process that is still importing the user's script (a script
    calling sweep() outside ``if __name__ == "__main__":``), leave at once and quietly:
    the parent sees the worker fail to start and says why, in one line, instead of every
    worker printing a traceback. multiprocessing marks that phase with ``_inheriting``
    (its own check for the same mistake reads it)."""
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise SystemExit(1)


def _local_cluster(local_cluster, n: int):
    """A LocalCluster of ``n`` single-threaded worker processes on 127.0.0.1. The workers
    start with SIGINT ignored (they inherit it): Ctrl-C in a terminal reaches the whole
    process group, and only this process should act on it (it shuts the workers down)."""
    import logging
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        # one engine thread a worker: a pass's simulations would otherwise run on as many
        # threads as cores in every worker, each worker's threads waiting on the others'
        cluster = local_cluster(n_workers=n, threads_per_worker=1, processes=True,
                                dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL,
                                env={"RAYON_NUM_THREADS": "1"})
    except RuntimeError as err:  # a worker process that could not start
        raise PagelabError(f"the local Dask cluster did not start ({one_line(err)}); a script that calls "
                           "pagelab.sweep() must call it under 'if __name__ == \"__main__\":', since each worker "
                           "process imports the script; workers=0 runs the points here") from None
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)
    return cluster


def _frame(spec: SweepSpec, points: List[Point], rows: Dict[str, list], failures: Dict[str, dict]):
    """The sweep's DataFrame in grid order: the axis columns (this spec's values), the
    result columns, seconds, error, point."""
    import pandas as pd

    axis_names = [a.name for a in spec.axes]
    records = []
    for p in points:
        if p.hash in rows:
            for r in rows[p.hash]:
                rec = {k: v for k, v in r.items() if k != "config"}
                for name, value in p.axes.items():  # this spec's values (another spec may have stored it)
                    rec.setdefault(name, value)
                rec.setdefault("error", None)
                records.append(rec)
        elif p.hash in failures:
            f = failures[p.hash]
            records.append(dict(p.axes, error=f["error"], seconds=f.get("seconds"), point=p.hash))
    return _ordered(pd.DataFrame.from_records(records), axis_names)


def _ordered(df, axis_names: List[str]):
    tail = ["pass_points", "seconds", "error", "engine_version", "point"]
    cols = [c for c in axis_names if c in df.columns]
    cols += [c for c in df.columns if c not in cols and c not in tail]
    cols += [c for c in tail if c in df.columns]
    return df[cols] if len(df.columns) else df


def sweep(spec: SpecLike, out: Optional[Union[str, os.PathLike]] = None, scheduler: Optional[str] = None,
          workers: Optional[int] = None, retry_failed: bool = False, points_per_task: Optional[int] = None,
          progress: Optional[bool] = None, log: Optional[Callable[[str], None]] = None):
    """Runs every point of a sweep not yet in the store; returns a DataFrame of all its
    points (one row per result row: the axis values, the numbers, seconds, error, point).

    ``spec`` is a TOML path or a dict of the same structure (docs/sweeps.md). ``out`` is
    the store (default ``results/sweep-<name>``). Points run on a local Dask cluster of
    ``workers`` processes (default: one per core), or on the Dask cluster at ``scheduler``
    (``tcp://host:port``); ``workers=0`` runs them here without Dask. Replay points that
    differ only in memory sizes run together, in passes of up to ``points_per_task``
    (docs/sweeps.md). ``log`` receives the status lines; ``progress`` shows a bar on
    stderr.
    """
    _exit_if_worker_bootstrapping()
    parsed = load_spec(spec)
    if scheduler is not None and workers is not None:
        raise PagelabError("workers: only applies to a local cluster (not with a scheduler address)")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 0):
        raise PagelabError(f"workers: expected a whole number from 0, got {workers!r}")
    if points_per_task is not None and (isinstance(points_per_task, bool) or not isinstance(points_per_task, int)
                                        or points_per_task < 1):
        raise PagelabError(f"points per task: expected a positive whole number, got {points_per_task!r}")
    points = list(parsed.points())
    root = Path(out if out is not None else Path("results") / f"sweep-{_safe(parsed.name)}")
    check_not_dangling(root)  # before resolve(), which would follow the link
    store = Store(root.resolve())
    if store.root.exists() and not store.root.is_dir():
        raise PagelabError(f"{store.root}: exists and is not a directory")
    say = log or (lambda _line: None)
    new_store = not store.root.exists()
    try:
        return _sweep_into(store, parsed, points, retry_failed, workers, scheduler, points_per_task,
                           progress, say)
    except BaseException:
        # a sweep that stored nothing (a scheduler out of reach, an interrupted start)
        # leaves no empty store behind
        if new_store and store.root.is_dir() and not any(store.stored_hashes()):
            import shutil

            shutil.rmtree(store.root, ignore_errors=True)
        raise


def _sweep_into(store: Store, parsed: SweepSpec, points: List[Point], retry_failed: bool,
                workers: Optional[int], scheduler: Optional[str], points_per_task: Optional[int],
                progress: Optional[bool], say: Callable[[str], None]):
    store.points_dir.mkdir(parents=True, exist_ok=True)
    store.failed_dir.mkdir(parents=True, exist_ok=True)
    from .files import write_text

    write_text(store.spec_file, json.dumps(parsed.to_json(), indent=1, default=str))
    store.clean_stray()
    rows, failures, bad = _read_stored(store, points, retry_failed)
    todo = [p for p in points if p.hash not in rows and p.hash not in failures]
    done = len(rows) + len(failures)
    line = f"{parsed.name}: {len(points)} points; {done} points already done, {len(todo)} to run"
    if failures:
        line += f" ({len(failures)} of the done failed: retry_failed / --retry-failed runs them again)"
    say(line)
    if bad:
        print(f"pagelab: warning: {bad} unreadable result files in {store.root} deleted; their points run again",
              file=sys.stderr)
    outcome = _Outcome(failures=dict(failures))
    t0 = time.perf_counter()
    if todo:
        with SweepBar(len(todo), enabled=progress) as bar:
            if workers == 0:
                _run_inline(todo, store, parsed, points_per_task, bar, outcome)
            else:
                _run_dask(todo, store, parsed, scheduler, workers, points_per_task, bar, outcome, say)
    seconds = time.perf_counter() - t0
    rows.update(outcome.rows)
    store.merge(rows, [a.name for a in parsed.axes])
    df = _frame(parsed, points, rows, outcome.failures)
    df.attrs.update({"store": os.fspath(store.root), "name": parsed.name, "points": len(points),
                     "already_done": done, "ran": outcome.ok + outcome.failed, "failed_now": outcome.failed,
                     "failed": len(outcome.failures), "seconds": seconds})
    return df


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "sweep"


def results(store: Union[str, os.PathLike]):
    """Every point in a results store, merged: one DataFrame (failed points with their
    error and no numbers), in the grid order of the store's sweep.json."""
    import pandas as pd

    s = Store(store)
    if not s.root.is_dir():
        raise PagelabError(f"{os.fspath(store)}: no such directory")
    if not s.is_store():
        raise PagelabError(f"{os.fspath(store)}: not a sweep store (no sweep.json or points/)")
    info = {}
    if s.spec_file.exists():
        try:
            info = json.loads(s.spec_file.read_text())
        except ValueError:
            info = {}
    merged, axis_names, bad = s.read_merged(delete_bad=False)
    records = [{k: v for k, v in r.items() if k != "config"} for h in sorted(merged) for r in merged[h]]
    have, failed = s.stored_hashes()
    have -= set(merged)
    for h in sorted(have):
        stored = s.read_point(h, delete_bad=False)
        if stored is None:
            bad += 1
            continue
        axis_names += [a for a in stored["axes"] if a not in axis_names]
        records += [{k: v for k, v in r.items() if k != "config"} for r in stored["rows"]]
    for h in sorted(failed - have - set(merged)):
        f = s.read_failure(h, delete_bad=False)
        if f is None:
            bad += 1
            continue
        axes = f.get("axes") or {}
        axis_names += [a for a in axes if a not in axis_names]
        records.append(dict(axes, error=f["error"], seconds=f.get("seconds"), point=h))
    df = pd.DataFrame.from_records(records)
    if "error" not in df.columns and len(df):
        df["error"] = None
    spec_axes = [a["name"] for a in info.get("axes", [])]
    order = spec_axes + [a for a in axis_names if a not in spec_axes]
    df = _ordered(df, order)
    if len(df) and spec_axes:
        keys = []
        for a in info["axes"]:
            if a["name"] not in df.columns:
                continue
            pos = {canonical_json(column_value(v)): i for i, v in reversed(list(enumerate(a["values"])))}
            key = f"__order_{len(keys)}"
            df[key] = [pos.get(canonical_json(v.item() if hasattr(v, "item") else v), len(pos))
                       for v in df[a["name"]]]
            keys.append(key)
        if keys:
            df = df.sort_values(keys, kind="stable").drop(columns=keys).reset_index(drop=True)
    df.attrs.update({"store": os.fspath(s.root), "name": info.get("name"), "unreadable": bad,
                     "points": df["point"].nunique() if len(df) else 0,
                     "failed": int(df["error"].notna().sum()) if "error" in df.columns and len(df) else 0})
    return df


# ---------------------------------------------------------------- the command line

def cli_sweep(args) -> int:
    """`pagelab sweep SPEC [--out DIR] [--scheduler ADDRESS] [--workers N]`."""
    from .cli import UsageError

    workers = None
    if args.workers is not None:
        try:
            workers = int(args.workers)
        except ValueError:
            workers = -1
        if workers < 0:
            raise UsageError(f"--workers: expected a whole number from 0, got '{args.workers}'")
        if args.scheduler:
            raise UsageError("--workers: only applies to a local cluster (not with --scheduler)")
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

    df = sweep(args.spec, out=args.out, scheduler=args.scheduler, workers=workers,
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


def cli_results(args) -> int:
    """`pagelab results DIR [--csv FILE] [--parquet FILE]`."""
    from .cli import UsageError, parse_int
    from .console import print_table
    from .files import atomic_path

    limit = parse_int(args.limit, "--limit") if args.limit is not None else 40
    df = results(args.dir)
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
