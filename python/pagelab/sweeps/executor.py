"""Runs points: here (``workers=0``), on a local Dask cluster of one worker process per
core, or on an existing Dask cluster; each finished point is written to the store by the
worker that ran it, so a killed run resumes. Dask is imported only here, and only when
points have to run."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import _core
from .._core import PagelabError
from ..progress import ProgressBar
from .points import one_line, pass_key, run_point, run_replay_pass
from .spec import Point, SweepSpec, canonical_json
from .store import Store, _unlink

#: most points one task runs (a Dask task, or a pass run here)
MAX_POINTS_PER_TASK = 32

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


