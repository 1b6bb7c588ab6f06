"""What several experiment modules share: schema pieces for engine tables and
processes, scaling of problem sizes for --quick, programs' footprints, percentages."""

from __future__ import annotations

import copy
import functools
import json
import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from .. import api
from .._core import PagelabError
from ..configs import merge
from ..suite_cache import is_suite_name, resolve
from ..system import workload_as_trace
from .schema import AnyTable, Field, List_, Number, Str, Table

#: the engine's configuration tables an experiment's [base] may hold (checked by the engine)
ENGINE_TABLES = ("system", "disk", "swap", "token", "load_control", "gang")


def base_table(*tables: str) -> Table:
    """[base]: engine tables laid under every run of the experiment."""
    return Table({t: Field(AnyTable(f"a table of the engine's [{t}] keys (docs/system-config.md)"), None)
                  for t in tables})


def process_fields(extra: Optional[Dict[str, Field]] = None) -> Dict[str, Field]:
    """The keys of one program: the engine's process keys, and ``scale``: the params
    that --quick multiplies by quick_scale."""
    fields = {
        "name": Field(Str(), doc="the program's name in tables and figures"),
        "workload": Field(Str(), doc="a built-in workload (pagelab workload list)"),
        "params": Field(AnyTable("a table of the workload's parameters"), {}, "its parameters"),
        "seed": Field(Number(min=0, whole=True), None, "its seed"),
        "cpu_ns_per_ref": Field(Number(min=0), None, "CPU time per reference (ns)"),
        "start_ms": Field(Number(min=0), None, "when it starts (ms)"),
        "scale": Field(List_(Str()), [], "params scaled by quick_scale with --quick"),
    }
    fields.update(extra or {})
    return fields


#: keys of a program that are the experiment's, not the engine's
EXPERIMENT_PROCESS_KEYS = ("scale", "units", "paper_name")


def _is_power_of_two(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


def scale_value(value: Any, factor: float) -> Any:
    """A size parameter scaled: whole numbers stay whole and at least 1; powers of two
    stay powers of two (bitrev's n); other values are left alone."""
    if factor == 1.0 or isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, float):
        return value * factor
    if _is_power_of_two(value):
        return max(1, 1 << max(0, round(math.log2(value * factor))))
    return max(1, int(round(value * factor)))


def engine_process(entry: dict, factor: float = 1.0) -> dict:
    """A program entry as the engine's process: the experiment's keys dropped, the params
    listed in ``scale`` scaled by ``factor``."""
    p = {k: copy.deepcopy(v) for k, v in entry.items() if k not in EXPERIMENT_PROCESS_KEYS and v is not None}
    if factor != 1.0:
        params = dict(p.get("params", {}))
        for key in entry.get("scale", []):
            if key in params:
                params[key] = scale_value(params[key], factor)
        p["params"] = params
    return p


@functools.lru_cache(maxsize=256)
def _footprint(key: str) -> int:
    spec = json.loads(key)
    if "workload" in spec:
        src = api.Workload(spec["workload"], seed=spec["seed"], page_size=spec["page_size"], **spec["params"])
    else:
        src = api.Trace(spec["trace"], format=spec.get("format"), page_size=spec["page_size"])
    return int(src.info()["distinct_pages"])


def footprint_pages(process: dict, page_size: int, base_dir: Path) -> int:
    """Distinct pages a process touches (its peak memory demand when nothing is freed),
    from one pass over its references; cached, since sensitivity variants ask again."""
    try:
        return _footprint(_source_key(process, page_size, base_dir))
    except PagelabError as err:
        raise PagelabError(f"process '{process.get('name', '?')}': {err}") from None


def _source_key(process: dict, page_size: int, base_dir: Path) -> str:
    """A process's reference source as canonical JSON: the key of the caches below."""
    if is_suite_name(process.get("workload")):
        process = workload_as_trace(process, f"process '{process.get('name', '?')}'")
    if "workload" in process:
        key = {"workload": process["workload"], "seed": int(process.get("seed") or 0), "page_size": page_size,
               "params": {k: v for k, v in process.get("params", {}).items()}}
    else:
        path = Path(resolve(process["trace"]))
        key = {"trace": str(path if path.is_absolute() else base_dir / path), "format": process.get("format"),
               "page_size": page_size}
    return json.dumps(key, sort_keys=True)


@functools.lru_cache(maxsize=64)
def _lru_curve(key: str) -> api.MissRatioCurve:
    spec = json.loads(key)
    if "workload" in spec:
        src = api.Workload(spec["workload"], seed=spec["seed"], page_size=spec["page_size"], **spec["params"])
    else:
        src = api.Trace(spec["trace"], format=spec.get("format"), page_size=spec["page_size"])
    return api.mrc(src)


def lru_faults_alone(process: dict, page_size: int, base_dir: Path, frames: Sequence[int]) -> List[int]:
    """The process's major faults under LRU alone in ``frames`` frames, at each size given
    (its exact LRU fault curve, one Mattson pass, cached): what the program does to memory
    by itself, to read a pair's results beside (issue 15). Compulsory faults (a page's
    first touch, and its first touch after a free), which the timed system counts as
    minor, are left out."""
    try:
        curve = _lru_curve(_source_key(process, page_size, base_dir))
    except PagelabError as err:
        raise PagelabError(f"process '{process.get('name', '?')}': {err}") from None
    return [curve.faults_at(max(1, int(f))) - int(curve.compulsory_faults) for f in frames]


def reduction_pct(before: float, after: float) -> Optional[float]:
    """How much smaller ``after`` is than ``before``, in percent of ``before`` (negative
    when it grew). None when ``before`` is 0."""
    if not before:
        return None
    return 100.0 * (before - after) / before


def fmt_pct(value: Optional[float], signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:+.0f}%" if signed else f"{value:.0f}%"


def laid_over(base: dict, over: dict) -> dict:
    """``over`` laid over a copy of ``base`` (tables merged key by key)."""
    return merge(base, over)


def mean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def process_by_name(raw: dict, name: str) -> dict:
    for p in raw["processes"]:
        if p["name"] == name:
            return p
    raise PagelabError(f"no process '{name}' in the run")


def series_of(values: List[Any]) -> List[float]:
    return [float("nan") if v is None else float(v) for v in values]
