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

import json
import os
import re
from pathlib import Path
from typing import Callable, Dict, List, Optional, Union

from .._core import PagelabError
from ..files import check_not_dangling, write_text
from .executor import Job, exit_if_worker_bootstrapping, execute
from .spec import Point, SpecLike, SweepSpec, canonical_json, column_value, load_spec
from .store import Store

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
    exit_if_worker_bootstrapping()
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
    write_text(store.spec_file, json.dumps(parsed.to_json(), indent=1, default=str))
    root = os.fspath(store.root)
    jobs = [Job(p.hash, parsed.mode, p.config, root, p.axes, parsed.file) for p in points]
    outcome = execute(jobs, workers=workers, scheduler=scheduler, points_per_task=points_per_task,
                      progress=progress, log=say, retry_failed=retry_failed, label=parsed.name)
    store.merge(outcome.rows, [a.name for a in parsed.axes])
    df = _frame(parsed, points, outcome.rows, outcome.failures)
    df.attrs.update({"store": os.fspath(store.root), "name": parsed.name, "points": len(points),
                     "already_done": outcome.already_done, "ran": outcome.ran, "failed_now": outcome.failed,
                     "failed": len(outcome.failures), "seconds": outcome.seconds})
    return df


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


