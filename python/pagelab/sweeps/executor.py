"""Runs jobs: here (``workers=0``), on a local Dask cluster of one worker process per
core, or on an existing Dask cluster. A job is one point: its mode (replay, system,
gang, numa, fault-parameters), its configuration and the store its result goes to; the
worker that ran it writes the result there at once, so a killed run resumes. Jobs of
one run may go to different stores and be of different modes (``pagelab reproduce
all`` runs five experiments as one run). Dask is imported only here, and only when
jobs have to run."""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import _core
from .._core import PagelabError
from ..progress import ProgressBar
from .points import one_line, pass_key, run_point, run_replay_pass
from .spec import canonical_json
from .store import Store, _unlink

#: most jobs one task runs (a Dask task, or a pass run here)
MAX_POINTS_PER_TASK = 32


@dataclass(frozen=True)
class Job:
    """One point to run and where its result goes."""
    hash: str
    mode: str          # "replay", "system", "gang", "numa" or "fault-parameters"
    config: dict
    root: str          # the store
    axes: dict = field(default_factory=dict)
    name: str = "config"
    #: also store the whole result (an experiment's analysis and figures read it)
    full: bool = False


@dataclass
class Outcome:
    """Rows by point hash, failure records by point hash, and what this run did."""
    rows: Dict[str, list] = field(default_factory=dict)
    failures: Dict[str, dict] = field(default_factory=dict)
    already_done: int = 0
    ok: int = 0
    failed: int = 0
    seconds: float = 0.0

    @property
    def ran(self) -> int:
        return self.ok + self.failed


# ---------------------------------------------------------------- one job, on a worker

def _run_and_store(store: Store, job: Job) -> dict:
    """Runs one job where it is (a worker) and writes its files there. A job already
    stored (a task run again after its worker was lost) is read, not run again."""
    stored = _stored_result(store, job)
    if stored is not None:
        return stored
    t0 = time.perf_counter()
    try:
        rows, full = run_point(job.mode, job.config, job.name, full=job.full)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as err:  # engine errors, and a panic (a BaseException in PyO3)
        seconds = time.perf_counter() - t0
        record = {"point": job.hash, "kind": job.mode, "error": one_line(err), "axes": job.axes,
                  "config": job.config, "engine_version": _core.ENGINE_VERSION, "seconds": seconds}
        store.write_failure(job.hash, record)
        return {"point": job.hash, "status": "failed", "error": record["error"], "seconds": seconds}
    if job.full:
        store.write_full(job.hash, full)
    return _store_rows(store, job, rows, time.perf_counter() - t0, 1)


def _stored_result(store: Store, job: Job) -> Optional[dict]:
    """The result of a job already in the store (its task ran before), or None."""
    if job.full and not store.has_full(job.hash):
        return None
    stored = store.read_point(job.hash)
    if stored is None:
        return None
    return {"point": job.hash, "status": "ok", "rows": stored["rows"], "seconds": 0.0, "reused": True}


def _store_rows(store: Store, job: Job, result: List[dict], seconds: float, pass_points: int) -> dict:
    config_json = canonical_json(job.config)
    rows = []
    for r in result:
        row = dict(job.axes)
        row.update(r)
        row.update({"seconds": seconds, "pass_points": pass_points, "engine_version": _core.ENGINE_VERSION,
                    "point": job.hash, "config": config_json})
        rows.append(row)
    store.write_point(job.hash, rows, list(job.axes))
    _unlink(store.failed_path(job.hash))
    return {"point": job.hash, "status": "ok", "rows": rows, "seconds": seconds}


def _run_pass_and_store(store: Store, jobs: List[Job]) -> list:
    """Replays jobs of one ``pass_key`` in one engine pass and writes each. Their
    ``seconds`` is an even share of the pass. If the pass fails, each job runs alone,
    so that each failure is recorded with its own error."""
    results: Dict[str, dict] = {}
    todo = []
    for job in jobs:
        stored = _stored_result(store, job)
        if stored is not None:
            results[job.hash] = stored
        else:
            todo.append(job)
    if len(todo) > 1:
        t0 = time.perf_counter()
        try:
            per_point = run_replay_pass([job.config for job in todo])
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException:  # one point's error fails the pass: each alone below
            per_point = None
        if per_point is not None:
            share = (time.perf_counter() - t0) / len(todo)
            for job, rows in zip(todo, per_point):
                if job.full:
                    store.write_full(job.hash, {"rows": rows})
                results[job.hash] = _store_rows(store, job, rows, share, len(todo))
            todo = []
    for job in todo:
        results[job.hash] = _run_and_store(store, job)
    return [results[job.hash] for job in jobs]


def _run_task(engine_version: str, jobs: List[Job]) -> list:
    """A Dask task: its jobs, written as they finish: replay jobs of one pass
    (``_tasks``) together, anything else one after another."""
    if engine_version != _core.ENGINE_VERSION:
        raise PagelabError(f"this worker's engine is {_core.ENGINE_VERSION}, the run's is {engine_version}: "
                           "install the same pagelab on every worker")
    if len(jobs) > 1 and all(j.mode == "replay" for j in jobs) and len({j.root for j in jobs}) == 1:
        return _run_pass_and_store(Store(jobs[0].root), jobs)
    return [_run_and_store(Store(job.root), job) for job in jobs]


# ---------------------------------------------------------------- progress

class SweepBar(ProgressBar):
    """Points done, failed and left, with an estimate of the time left."""

    def __init__(self, total: int, enabled: Optional[bool] = None, description: str = "sweep"):
        super().__init__(description, total=total, enabled=enabled)
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


# ---------------------------------------------------------------- a run

def read_stored(jobs: List[Job], retry_failed: bool) -> Tuple[Dict[str, list], Dict[str, dict], int]:
    """Stored results of these jobs: (rows by hash, failure records by hash, bad files
    removed). Unreadable files are deleted: their jobs run again. A job that wants its
    whole result counts as stored only with that file too."""
    rows: Dict[str, list] = {}
    failures: Dict[str, dict] = {}
    bad = 0
    by_root: Dict[str, List[Job]] = {}
    for job in jobs:
        by_root.setdefault(job.root, []).append(job)
    for root, these in by_root.items():
        store = Store(root)
        merged, _axes, unreadable = store.read_merged()
        bad += unreadable
        have, failed = store.stored_hashes()
        full_wanted = {j.hash for j in these if j.full}
        usable = {h for h in have if h not in full_wanted or store.has_full(h)}
        wanted = {j.hash for j in these}
        found = {h: r for h, r in merged.items() if h in wanted and (h not in full_wanted or store.has_full(h))}
        candidates = sorted((usable & wanted) - set(found))
        if candidates:
            with ThreadPoolExecutor(max_workers=4) as pool:
                for h, stored in zip(candidates, pool.map(store.read_point, candidates)):
                    if stored is None:
                        bad += 1
                    else:
                        found[h] = stored["rows"]
        rows.update(found)
        for h in sorted((failed & wanted) - set(found)):
            record = store.read_failure(h)
            if record is None:
                bad += 1
            elif not retry_failed:
                failures[h] = record
    return rows, failures, bad


def execute(jobs: List[Job], workers: Optional[int] = None, scheduler: Optional[str] = None,
            points_per_task: Optional[int] = None, progress: Optional[bool] = None,
            log: Optional[Callable[[str], None]] = None, retry_failed: bool = False,
            label: str = "sweep") -> Outcome:
    """Runs every job whose result is not stored yet (``retry_failed``: also the failed
    ones) and returns every job's rows and failures. ``workers=0`` runs them here;
    otherwise a local Dask cluster of ``workers`` processes (default one per core) or
    the cluster at ``scheduler``. ``log`` receives the status lines."""
    say = log or (lambda _line: None)
    unique = list({j.hash: j for j in jobs}.values())
    for root in {j.root for j in unique}:
        store = Store(root)
        store.points_dir.mkdir(parents=True, exist_ok=True)
        store.failed_dir.mkdir(parents=True, exist_ok=True)
        store.clean_stray()
    rows, failures, bad = read_stored(unique, retry_failed)
    todo = [j for j in unique if j.hash not in rows and j.hash not in failures]
    outcome = Outcome(rows=rows, failures=dict(failures), already_done=len(rows) + len(failures))
    line = f"{label}: {len(unique)} points; {outcome.already_done} points already done, {len(todo)} to run"
    if failures:
        line += f" ({len(failures)} of the done failed: retry_failed / --retry-failed runs them again)"
    say(line)
    if bad:
        print(f"pagelab: warning: {bad} unreadable result files deleted; their points run again", file=sys.stderr)
    t0 = time.perf_counter()
    # kernel points measure this machine: here, one at a time, after every simulated
    # point, so that nothing else loads the machine while they run
    kernel = [j for j in todo if j.mode == "kernel"]
    todo = [j for j in todo if j.mode != "kernel"]
    if todo:
        with SweepBar(len(todo), enabled=progress, description=label) as bar:
            if workers == 0:
                _run_inline(todo, points_per_task, bar, outcome)
            else:
                _run_dask(todo, scheduler, workers, points_per_task, bar, outcome)
    if kernel:
        say(f"{label}: {len(kernel)} kernel points, one at a time on this machine")
        with SweepBar(len(kernel), enabled=progress, description=f"{label} (kernel)") as bar:
            for job in kernel:
                _record(_run_and_store(Store(job.root), job), outcome, bar)
    outcome.seconds = time.perf_counter() - t0
    return outcome


def _tasks(todo: List[Job], threads: int, points_per_task: Optional[int]) -> List[List[Job]]:
    """The jobs in tasks of at most ``points_per_task``. Replay jobs of one store that
    share a source, seed and policies (``pass_key``) go in tasks of their own, each
    replayed in one engine pass: about four tasks per worker thread, so that the last
    tasks finish together, each mixing the group's sizes (every k-th job). Other jobs:
    about 64 tasks per thread, in order (one job a task when there are few)."""
    threads = max(threads, 1)
    replays = [j for j in todo if j.mode == "replay"]
    others = [j for j in todo if j.mode != "replay"]
    tasks: List[List[Job]] = []
    if others:
        chunk = points_per_task or max(1, min(MAX_POINTS_PER_TASK, len(others) // (64 * threads)))
        tasks += [others[i:i + chunk] for i in range(0, len(others), chunk)]
    if replays:
        chunk = points_per_task or max(1, min(MAX_POINTS_PER_TASK, len(replays) // (4 * threads)))
        groups: Dict[Tuple[str, str], List[Job]] = {}
        for j in replays:
            groups.setdefault((j.root, pass_key(j.config)), []).append(j)
        for group in groups.values():
            k = -(-len(group) // chunk)
            tasks.extend(group[i::k] for i in range(k))
    return tasks


def _run_inline(todo: List[Job], points_per_task: Optional[int], bar: SweepBar, outcome: Outcome) -> None:
    """Here, task after task; the engine runs the simulations of one pass in parallel."""
    for task in _tasks(todo, 1, points_per_task):
        for result in _run_task(_core.ENGINE_VERSION, task):
            _record(result, outcome, bar)


def _record(result: dict, outcome: Outcome, bar: Optional[SweepBar]) -> None:
    if result["status"] == "ok":
        outcome.ok += 1
        outcome.rows[result["point"]] = result["rows"]
        outcome.failures.pop(result["point"], None)
    else:
        outcome.failed += 1
        outcome.failures[result["point"]] = result
    if bar is not None:
        bar.points(outcome.ran, outcome.failed)


def _import_distributed():
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise PagelabError("sweeps need Dask: pip install 'dask[distributed]' (make setup installs it), "
                           "or run the points here with workers = 0 (--workers 0)") from None
    return distributed


def _run_dask(todo: List[Job], scheduler: Optional[str], workers: Optional[int], points_per_task: Optional[int],
              bar: SweepBar, outcome: Outcome) -> None:
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
        pending = iter(_tasks(todo, threads, points_per_task))
        members: Dict[Any, List[Job]] = {}

        def window() -> int:
            return max(8, 4 * max(threads, 1))

        def submit_next() -> bool:
            part = next(pending, None)
            if part is None:
                return False
            fut = client.submit(_run_task, _core.ENGINE_VERSION, part, pure=False)
            members[fut] = part
            ac.add(fut)
            return True

        ac = as_completed()
        for _ in range(window()):
            if not submit_next():
                break
        # while the first points run: what the end of the run needs (0.3 s, not after the last point)
        import pandas  # noqa: F401
        import pyarrow.parquet  # noqa: F401

        last_count = time.monotonic()
        for fut in ac:
            part = members.pop(fut)
            try:
                results = fut.result()
            except (distributed.client.CancelledError, asyncio.CancelledError):
                raise PagelabError("the Dask scheduler cancelled the run's tasks (scheduler lost?); "
                                   "run it again to resume") from None
            except Exception as err:  # KilledWorker (a point that kills workers), a worker's engine mismatch
                error = one_line(err)
                if isinstance(err, distributed.KilledWorker):
                    error = ("killed its worker each time it ran (a crash, or over the worker's memory limit); "
                             f"Dask gave up: {error}")
                results = []
                for job in part:
                    store = Store(job.root)
                    stored = _stored_result(store, job)
                    if stored is not None:
                        results.append(stored)
                        continue
                    record = {"point": job.hash, "kind": job.mode, "error": error, "axes": job.axes,
                              "config": job.config, "engine_version": _core.ENGINE_VERSION, "seconds": 0.0}
                    store.write_failure(job.hash, record)
                    results.append({"point": job.hash, "status": "failed", "error": record["error"], "seconds": 0.0})
            fut.release()
            for r in results:
                _record(r, outcome, bar)
            if time.monotonic() - last_count > 5:  # clusters grow and shrink
                threads = sum(client.nthreads().values())
                last_count = time.monotonic()
            while ac.count() < window():
                if not submit_next():
                    break


def exit_if_worker_bootstrapping() -> None:
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
