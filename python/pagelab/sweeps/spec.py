"""A sweep's spec: a base configuration and the axes to vary (docs/sweeps.md), parsed
and checked, and its points: every combination as a full configuration, keyed by the
SHA-256 of its canonical JSON."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

from .. import _core
from .._core import PagelabError
from ..api import Trace, Workload
from ..configs import merge, toml_kind
from ..numa import check_numa_config
from ..suite_cache import resolve
from ..system import engine_error, normalize_config, read_toml

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
#: the engine's largest memory size (frames are 32-bit, one value kept for "none")
MAX_FRAMES = (1 << 32) - 2


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
    if isinstance(spec, dict):
        data, file, base_dir, stem = spec, "spec", Path.cwd(), "sweep"
    elif isinstance(spec, (str, os.PathLike)):
        file = os.fspath(spec)
        data = read_toml(spec)
        base_dir, stem = Path(spec).resolve().parent, Path(spec).stem
    else:
        raise TypeError(f"expected a TOML path or a dict, got {type(spec).__name__}")
    if not isinstance(data, dict):
        raise PagelabError(f"{file}: expected a table with [sweep], [base] and [[axis]], got {toml_kind(data)}")
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
        raise PagelabError(f"{file}: base: expected a table ([base]), got {toml_kind(base)}")
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
        raise PagelabError(f"{file}: axis: expected [[axis]] entries, got {toml_kind(axes)}")
    groups, seen_keys, seen_names = [], {}, {}
    for i, entry in enumerate(axes):
        where = f"{file}: axis[{i}]"
        if not isinstance(entry, dict):
            raise PagelabError(f"{where}: expected a table, got {toml_kind(entry)}")
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
                    raise PagelabError(f"{where}.zip[{j}]: expected a table, got {toml_kind(m)}")
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
            raise PagelabError(f"{where}.values: expected an array of values for key '{key}', got {toml_kind(values)}")
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
                           + (f", got {toml_kind(v)}" if v is not None else ", got nothing"))
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
            raise PagelabError(f"{where}: '{prefix}' is {toml_kind(node)}, not a table")


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
        return {"numa": copy.deepcopy(check_numa_config(raw, where))}
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
                raise PagelabError(f"{where}.source.params.{k}: expected a number, string or boolean, got {toml_kind(v)}")
        src = {"workload": source["workload"],
               "params": {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in sorted(params.items())},
               "page_size": _whole(source.get("page_size", 4096), f"{where}.source.page_size")}
    elif "trace" in source:
        for key in source:
            if key not in TRACE_SOURCE_KEYS:
                raise _unknown(f"{where}.source.{key}", key, TRACE_SOURCE_KEYS)
        if not isinstance(source["trace"], str):
            raise PagelabError(f"{where}.source.trace: expected a path (a string)")
        try:
            trace = resolve(source["trace"])
        except PagelabError as err:
            raise PagelabError(f"{where}.source.trace: {err}") from None
        path = Path(os.path.expanduser(trace))
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
        raise PagelabError(f"{where}.policy: expected a policy name or an array of them, got {toml_kind(policy)}")
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


