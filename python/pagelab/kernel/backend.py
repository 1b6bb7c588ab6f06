"""A kernel run: the configuration's processes as real processes in memory cgroups
(the run's parent limited to frames x page size, one child each), sampled every
``system.sample_ms`` from /proc and the cgroup files; then each process alone without
a limit, for its slowdown. The result has the simulator's SystemResult schema, with
``backend = "kernel"`` and the kernel's version (docs/kernel-backend.md).

A process is a workload or a trace (performed by pagelab-runner, the same records in
the same order as the simulator) or ``command = [...]`` (any program). Whatever ends a
run (its end, Ctrl-C, SIGTERM, a crashed or OOM-killed process) kills every process
left and removes the cgroups before the function returns or raises."""

from __future__ import annotations

import ctypes
import json
import os
import platform
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, List, Optional

from .._core import PagelabError
from ..gang import GangResult
from ..progress import ProgressBar
from ..system import SystemResult, kernel_options
from .cgroups import RunCgroups
from .controllers import CONTROL_MS, Controller, ProcView, RunView, controllers_for, resolved_controls
from .host import is_root, memory_hierarchy, swap_devices
from .procfs import disk_busy_ms, free_bytes, process_sample, referenced_bytes, swap_disks, vmstat
from .runner import find_runner

#: keys a `command` process may have
COMMAND_KEYS = ("name", "command", "start_ms")
#: how often exits are looked for between samples (s)
POLL_S = 0.02
#: the shortest sampling interval the kernel backend takes (s)
MIN_SAMPLE_S = 0.05

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


class KernelRunBar(ProgressBar):
    """Progress of a kernel run in wall seconds: run 1 is the shared run, then one run
    per process alone (each restarts the count)."""

    def _columns(self) -> list:
        from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

        return [SpinnerColumn(), TextColumn("[bold]{task.description}"),
                TextColumn("run {task.fields[run]}: {task.fields[wall]:,.1f} s"), TimeElapsedColumn()]

    def _task_fields(self) -> dict:
        return {"total": None, "run": 1, "wall": 0.0}

    def _show(self, done_ms: int) -> None:
        self._progress.update(self._task, wall=done_ms / 1000.0, run=self.passes + 1)


class KernelProcess:
    """One [[process]] entry as something to start: a runner command line or a command."""

    def __init__(self, index: int, entry: dict, system: dict, runner: Optional[str], config_name: str):
        self.index = index
        self.name = str(entry.get("name", f"process-{index}"))
        self.start_s = float(entry.get("start_ms", 0.0)) / 1000.0
        where = f"{config_name}: process[{index}]"
        if "command" in entry:
            extra = [k for k in entry if k not in COMMAND_KEYS]
            if extra:
                raise PagelabError(f"{where}.{extra[0]}: does not apply to a 'command' process "
                                   f"(it takes {', '.join(COMMAND_KEYS)})")
            cmd = entry["command"]
            if not isinstance(cmd, list) or not cmd or not all(isinstance(c, str) for c in cmd):
                raise PagelabError(f"{where}.command: expected a non-empty array of strings, got {cmd!r}")
            self.argv = list(cmd)
            self.is_runner = False
        else:
            table = {k: v for k, v in entry.items() if k != "start_ms"}
            stream = [runner, "--process", json.dumps(table), "--page-size", str(system.get("page_size", 4096)),
                      "--seed", str(system.get("seed", 0))]
            # two processes: the stream generated outside the cgroup, its records sent
            # over a pipe to the one that performs them inside (wire.rs), so that the
            # cgroup holds the stream's pages and a few KB, not the generator's buffers
            self.emit_argv = stream + ["--emit"]
            self.argv = stream + ["--touch",
                                  "--cpu-ns-per-ref", repr(float(system.get("cpu_ns_per_ref", 20.0))),
                                  "--cpu-ns-per-instruction", repr(float(system.get("cpu_ns_per_instruction", 1.0))),
                                  # its own memory sampled as often as pagelab samples (peak_own_rss_bytes)
                                  "--progress-ms", str(max(int(float(system.get("sample_ms", 1000.0))), 50))]
            self.is_runner = True
            r = subprocess.run(stream + ["--check"], capture_output=True, text=True)
            if r.returncode != 0:
                why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[0]
                raise PagelabError(f"{where}: {why.replace('pagelab-runner: error: ', '')}")


class _Running:
    def __init__(self, proc: KernelProcess, popen: subprocess.Popen, t0: float, out: Path, err: Path,
                 emitter: Optional[subprocess.Popen] = None, emit_err: Optional[Path] = None):
        self.proc = proc
        self.popen = popen
        #: the runner's stream generator (outside the cgroup), feeding popen's stdin
        self.emitter = emitter
        self.emit_err = emit_err
        self.start = time.monotonic() - t0
        self.end: Optional[float] = None
        self.status: Optional[int] = None
        self.rusage = None
        self.out, self.err = out, err
        self.last = {"major_faults": 0, "minor_faults": 0, "cpu_ns": 0}
        self.peak_swap = 0
        self.peak_rss = 0
        self.report: Optional[dict] = None
        self.series = {"t_s": [], "mad": [], "rss": [], "nap": [], "npf": [], "swap": []}


class OomKilled(PagelabError):
    """A process of the run was killed by the OOM killer: not a result."""


def _sigterm_as_interrupt(signum, frame):
    raise KeyboardInterrupt


def _outcome(status: int) -> str:
    if os.WIFEXITED(status):
        return f"exited with status {os.WEXITSTATUS(status)}"
    sig = os.WTERMSIG(status)
    return f"killed by {signal.Signals(sig).name}"


def _tail(path: Path) -> str:
    try:
        lines = [l for l in path.read_text(errors="replace").splitlines() if l.strip() and not l.startswith("{")]
    except OSError:
        return ""
    return lines[-1].strip() if lines else ""


def _run_group(procs: List[KernelProcess], limit_bytes: Optional[int], sample_s: float, page_size: int,
               config_name: str, progress: Optional[Callable] = None, cpus: Optional[List[int]] = None,
               controllers: Optional[List[Controller]] = None, control_s: float = CONTROL_MS / 1000.0) -> dict:
    """Runs ``procs`` together in a fresh cgroup tree limited to ``limit_bytes`` (None:
    unlimited), with ``controllers`` acting on it every ``control_s``, until all have
    ended; returns the raw measurements."""
    with tempfile.TemporaryDirectory(prefix="pagelab-kernel-") as tmp, \
            RunCgroups(limit_bytes, [p.name for p in procs]) as cg:
        running: List[_Running] = []
        try:
            view = RunView(cg, limit_bytes, page_size)
            try:
                return _supervise(procs, running, cg, Path(tmp), limit_bytes, sample_s, page_size, config_name,
                                  progress, cpus, controllers or [], control_s, view)
            finally:
                # whatever happened: a controller's changes (stopped processes, limits)
                # end with the run
                for c in controllers or []:
                    c.finish(view)
        finally:
            # whatever happened: no process of ours outlives the run, none is left a zombie
            for r in running:
                if r.end is None:
                    _kill(r.popen)
                    r.end = -1.0
                if r.emitter is not None and r.emitter.returncode is None:
                    _kill(r.emitter)


def _kill(popen: subprocess.Popen) -> None:
    try:
        os.kill(popen.pid, signal.SIGKILL)
        _, status = os.waitpid(popen.pid, 0)
        popen.returncode = status
    except (ProcessLookupError, ChildProcessError):
        pass


def _emitter_done(r: "_Running", config_name: str) -> None:
    """After the performer ended well: its stream's generator must have ended well too
    (one that failed midway would have ended the records early)."""
    if r.emitter is None:
        return
    try:
        status = r.emitter.wait(timeout=10.0)
    except subprocess.TimeoutExpired:
        _kill(r.emitter)
        raise PagelabError(f"{config_name}: process '{r.proc.name}': its stream generator did not end after "
                           "the records did; every other process was ended and the cgroups removed") from None
    if status != 0:
        why = _tail(r.emit_err)
        raise PagelabError(f"{config_name}: process '{r.proc.name}': its stream generator exited with status "
                           f"{status}{': ' + why if why else ''}; every other process was ended and the cgroups removed")


def _supervise(procs, running, cg, tmp, limit_bytes, sample_s, page_size, config_name, progress, cpus,
               controllers, control_s, view) -> dict:
    """The loop of a run: starts each process at its start_ms, reaps the ended ones (a
    bad end raises at once), samples every ``sample_s``, lets the controllers act every
    ``control_s``."""
    pending = sorted(procs, key=lambda p: p.start_s)
    t0 = time.monotonic()
    vm0 = vmstat()
    last_vm, last_t = vm0, 0.0
    disks = swap_disks(d["name"] for d in swap_devices())
    busy0 = last_busy = disk_busy_ms(disks)
    system_series = {"t_s": [], "free": [], "cpu_util": [], "disk_util": [], "swap_ins": [], "swap_outs": [],
                     "cgroup_bytes": [], "cgroup_swap_bytes": [], "cgroup_swap_ins": []}
    refaults0 = last_refaults = cg.refaults_anon()
    next_sample = sample_s
    next_control = 0.0
    peak_usage = 0
    ncpu = len(cpus) if cpus else os.cpu_count() or 1
    while pending or any(r.end is None for r in running):
        now = time.monotonic() - t0
        view.now_s = now
        while pending and pending[0].start_s <= now:
            p = pending.pop(0)
            _start(p, cg.procs_file(p.name), tmp, t0, running, cpus)
            pv = ProcView(p.index, p.name, running[-1].popen.pid, str(cg.children[p.name]))
            view.procs.append(pv)
            for c in controllers:
                c.started(view, pv)
        for r in running:
            if r.end is None:
                pid, status, rusage = os.wait4(r.popen.pid, os.WNOHANG)
                if pid:
                    r.end, r.status, r.rusage = time.monotonic() - t0, status, rusage
                    r.popen.returncode = status
                    r.report = _runner_report(r)
                    if status != 0:
                        _fail(r, cg, limit_bytes, config_name)
                    _emitter_done(r, config_name)
                    pv = next(v for v in view.procs if v.pid == r.popen.pid)
                    pv.ended = True
                    # what follows in this pass (the controllers' tick) is after the
                    # exit: its events must not carry an earlier time than the exit's
                    # (the run's events are sorted by time: a grab stamped with the pass's
                    # start came before the release it followed)
                    now = view.now_s = r.end
                    for c in controllers:
                        c.exited(view, pv)
        if controllers and now >= next_control:
            view.now_s = now
            for pv in view.live():
                sample = process_sample(pv.pid)
                if sample is not None:
                    pv.major_faults, pv.rss_bytes, pv.swap_bytes = (sample["major_faults"], sample["rss_bytes"],
                                                                     sample["swap_bytes"])
            for c in controllers:
                c.tick(view, now)
            next_control = now + control_s
        peak_usage = max(peak_usage, cg.usage_bytes())
        if now >= next_sample:
            cpu_delta = 0
            for r in running:
                if r.end is None:
                    cpu_delta += _sample(r, now, page_size, clear_refs=not view.keeps_referenced)
            vm = vmstat()
            system_series["t_s"].append(round(now, 3))
            system_series["free"].append(free_bytes() // page_size)
            system_series["cpu_util"].append(cpu_delta / max((now - last_t) * 1e9 * ncpu, 1.0))
            busy = disk_busy_ms(disks)
            system_series["disk_util"].append((busy - last_busy) / max((now - last_t) * 1000.0, 1.0) if disks else None)
            last_busy = busy
            system_series["swap_ins"].append(vm.get("pswpin", 0) - last_vm.get("pswpin", 0))
            system_series["swap_outs"].append(vm.get("pswpout", 0) - last_vm.get("pswpout", 0))
            system_series["cgroup_bytes"].append(cg.usage_bytes())
            system_series["cgroup_swap_bytes"].append(cg.swap_bytes())
            refaults = cg.refaults_anon()
            system_series["cgroup_swap_ins"].append(refaults - last_refaults)
            last_refaults = refaults
            last_vm, last_t = vm, now
            next_sample += sample_s
            if progress is not None:
                progress(int(now * 1000))
        time.sleep(POLL_S)
    end = time.monotonic() - t0
    vm1 = vmstat()
    peak = cg.peak_bytes()
    return {"end_s": end, "running": running, "system_series": system_series, "swap_disks": disks,
            "disk_busy_ns": (disk_busy_ms(disks) - busy0) * 1_000_000 if disks else None,
            "swap_ins": vm1.get("pswpin", 0) - vm0.get("pswpin", 0),
            "swap_outs": vm1.get("pswpout", 0) - vm0.get("pswpout", 0),
            "cgroup_swap_ins": cg.refaults_anon() - refaults0,
            "peak_bytes": max(peak or 0, peak_usage), "cgroup_version": cg.version, "cpus": ncpu,
            "cgroup": str(cg.path), "stale_removed": cg.removed_stale, "pressure": cg.pressure()}


def _start(p: KernelProcess, procs_file: str, tmp: Path, t0: float, running: List[_Running],
           cpus: Optional[List[int]] = None) -> None:
    """Starts ``p`` in its cgroup and appends it to ``running``. SIGINT and SIGTERM are
    held off from the fork until the process is in ``running``, so an interruption can
    never leave a started process that the clean-up does not know of."""
    out, err = tmp / f"{p.index}.out", tmp / f"{p.index}.err"
    parent = os.getpid()
    held = {signal.SIGINT, signal.SIGTERM}

    def child_setup(cgroup_procs: Optional[str], on_cpus) -> Callable[[], None]:
        """What a child does before exec: join its cgroup (so all of its memory is
        charged there from the start; None: stay in pagelab's), keep to its CPUs, die
        with pagelab even if pagelab is SIGKILLed (and at once if it already died), then
        take signals again."""
        def setup():
            if cgroup_procs is not None:
                with open(cgroup_procs, "w") as f:
                    f.write(str(os.getpid()))
            if on_cpus:
                os.sched_setaffinity(0, on_cpus)
            _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:
                os._exit(1)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        return setup

    # the stream's generator stays in pagelab's own cgroup (its buffers are not the
    # run's) and, with kernel.cpus, runs on the other CPUs, so as not to take the run's
    generator_cpus = (set(range(os.cpu_count() or 1)) - set(cpus)) if cpus else None

    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    emitter, emit_err, pipe = None, None, None
    try:
        if p.is_runner:
            # the stream's generator first, writing its records into a pipe
            pipe = os.pipe()
            emit_err = tmp / f"{p.index}.emit.err"
            with open(emit_err, "wb") as fe:
                try:
                    emitter = subprocess.Popen(p.emit_argv, stdin=subprocess.DEVNULL, stdout=pipe[1], stderr=fe,
                                               preexec_fn=child_setup(None, generator_cpus), start_new_session=True)
                except (OSError, subprocess.SubprocessError) as err_:
                    raise PagelabError(f"process '{p.name}': cannot start {p.emit_argv[0]}: {err_}") from None
            os.close(pipe[1])
        with open(out, "wb") as fo, open(err, "wb") as fe:
            try:
                popen = subprocess.Popen(p.argv, stdin=pipe[0] if pipe else subprocess.DEVNULL, stdout=fo, stderr=fe,
                                         preexec_fn=child_setup(procs_file, cpus), start_new_session=True)
            except (OSError, subprocess.SubprocessError) as err_:
                if emitter is not None:
                    _kill(emitter)
                raise PagelabError(f"process '{p.name}': cannot start {p.argv[0]}: {err_}") from None
        running.append(_Running(p, popen, t0, out, err, emitter, emit_err))
    finally:
        if pipe is not None:
            os.close(pipe[0])
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _sample(r: _Running, now: float, page_size: int, clear_refs: bool = True) -> int:
    """One sample of a running process into its series; returns its CPU ns since the last.
    NAP is the pages referenced since the last sample, or with ``clear_refs`` False
    (a controller owns the referenced bits: the gang controller clears them at each
    switch-in) since the controller last cleared them."""
    s = process_sample(r.popen.pid)
    if s is None:
        return 0
    ref = referenced_bytes(r.popen.pid, clear=clear_refs)
    r.series["t_s"].append(round(now, 3))
    r.series["rss"].append(s["rss_bytes"] // page_size)
    r.series["mad"].append((s["rss_bytes"] + s["swap_bytes"]) // page_size)
    r.series["nap"].append(None if ref is None else ref // page_size)
    r.series["npf"].append(s["major_faults"] - r.last["major_faults"])
    r.series["swap"].append(s["swap_bytes"] // page_size)
    r.peak_swap = max(r.peak_swap, s["swap_bytes"])
    r.peak_rss = max(r.peak_rss, s["peak_rss_bytes"])
    cpu = s["cpu_ns"] - r.last["cpu_ns"]
    r.last = s
    return cpu


def _fail(r: _Running, cg: RunCgroups, limit_bytes: Optional[int], config_name: str) -> None:
    """A process ended badly: one line saying what happened (the caller's context
    managers then end the others and remove the cgroups)."""
    name = r.proc.name
    if os.WIFSIGNALED(r.status) and os.WTERMSIG(r.status) == signal.SIGKILL and cg.oom_kills(cg.children[name]) > 0:
        swap = sum(d["size_bytes"] for d in swap_devices())
        limit = f"{limit_bytes / 2**20:.1f} MiB" if limit_bytes else "no limit"
        raise OomKilled(f"{config_name}: process '{name}' was killed by the OOM killer (memory limit {limit}, "
                           f"swap {swap / 2**20:.0f} MiB): not a result; every other process was ended and "
                           "the cgroups removed")
    why = _tail(r.err)
    raise PagelabError(f"{config_name}: process '{name}' {_outcome(r.status)}{': ' + why if why else ''}; "
                       "every other process was ended and the cgroups removed")


def _runner_report(r: _Running) -> Optional[dict]:
    if not r.proc.is_runner:
        return None
    try:
        return json.loads(r.out.read_text().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None


def run_kernel(engine_config: dict, name: str, progress: Optional[Callable] = None, dedicated: bool = True):
    """Runs a normalised configuration (system.load_config's structure) on this kernel:
    a :class:`pagelab.system.SystemResult` with ``raw["backend"] == "kernel"``.
    ``dedicated=False`` skips the runs alone (slowdown then is None). With the
    ``[kernel]`` table's ``repeats`` > 1
    the whole run is repeated: per-process numbers are the medians and ``spread`` holds
    each one's smallest and largest (the kernel is not deterministic)."""
    if "numa" in engine_config:
        raise PagelabError(f"{name}: [numa]: the kernel backend runs [system] + [[process]] configurations (and "
                           "[gang] on one machine) only")
    gang = "gang" in engine_config
    options = kernel_options(engine_config.get("kernel", {}), name)
    dedicated = dedicated and options["dedicated"]
    ncpus = len(options["cpus"]) if options["cpus"] else None
    # the controllers' settings checked before anything runs, root or not (a bad [token]
    # or [gang] key is one line now, not after the runs alone)
    controllers_for(engine_config, name, None, ncpus)
    if not is_root():
        raise PagelabError("the kernel backend needs root (it creates memory cgroups and reads other "
                           "processes' /proc files): run as root, or use the simulator (the default backend)")
    system = engine_config.get("system", {})
    page_size = int(system.get("page_size", 4096))
    if page_size % os.sysconf("SC_PAGE_SIZE"):
        raise PagelabError(f"{name}: system.page_size: the kernel backend needs a multiple of this machine's "
                           f"page size ({os.sysconf('SC_PAGE_SIZE')}), got {page_size}")
    frames = system.get("frames")
    if not isinstance(frames, int) or isinstance(frames, bool) or frames < 1:
        raise PagelabError(f"{name}: system.frames: expected a whole number >= 1, got {frames!r}")
    sample_s = max(float(system.get("sample_ms", 1000.0)) / 1000.0, MIN_SAMPLE_S)
    entries = engine_config["processes"]
    runner = find_runner() if any("command" not in e for e in entries) else None
    if runner is not None:
        _read_through(runner)
    procs = [KernelProcess(i, e, system, runner, name) for i, e in enumerate(entries)]
    names = [p.name for p in procs]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise PagelabError(f"{name}: process names must be unique: '{dup}' appears twice")
    limit = frames * page_size
    if gang:
        # the paper's mlock() trick: locked memory is taken from the machine's (as the
        # simulator takes gang.locked_mb from system.frames)
        locked = resolved_controls(engine_config, name)["gang"]["locked_mb"]
        limit -= int(round(locked * 2**20 / page_size)) * page_size
    old = signal.signal(signal.SIGTERM, _sigterm_as_interrupt) if _main_thread() else None
    runs = []
    oom_kills = 0
    try:
        # the token's holding limit is scaled to the runs alone (as in the simulator):
        # with a token they come first; otherwise after the run, so that a run that
        # fails fails at once
        alone_first = engine_config.get("token", {}).get("policy", "none") != "none"
        while len(runs) < options["repeats"]:
            alone = _alone_runs(procs, sample_s, page_size, name, progress, options) if dedicated and alone_first else {}
            dedicated_ns = [int(alone[p.name] * 1e9) for p in procs] if alone else None
            controllers = controllers_for(engine_config, name, dedicated_ns, ncpus)
            try:
                shared = _run_group(procs, limit, sample_s, page_size, name, progress, options["cpus"],
                                    controllers, options["control_ms"] / 1000.0)
            except OomKilled:
                oom_kills += 1
                if oom_kills > options["oom_retries"]:
                    raise
                continue
            if dedicated and not alone_first:
                alone = _alone_runs(procs, sample_s, page_size, name, progress, options)
            runs.append(_result(shared, alone, procs, limit, frames, page_size, name))
            for c in controllers:
                extra = c.result()
                runs[-1]["token_events"] = runs[-1]["token_events"] + list(extra.pop("token_events", []))
                # per process counters (token_grabs, token_held_ns, suspended_ns) into its row
                per_process = extra.pop("processes", {})
                for row in runs[-1]["processes"]:
                    row.update(per_process.get(row["name"], {}))
                runs[-1].setdefault("controllers", {})[c.name] = extra
            runs[-1]["token_events"].sort(key=lambda e: e["t_ns"])
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    raw = runs[0] if len(runs) == 1 else _combine(runs)
    raw["kernel_options"] = options
    raw["oom_kills"] = oom_kills
    if gang:
        return GangResult(gang_raw(raw), config=engine_config, name=name)
    return SystemResult(raw, config=engine_config, name=name)


def gang_raw(raw: dict) -> dict:
    """A kernel run of a [gang] configuration (one machine) in the simulator's gang
    schema (pagelab.gang.GangResult): its jobs (each job's end and its run alone
    without a limit), the switch log, and one node: the run's own result with the gang
    controller's counters under ``gang`` and its swap traffic as ``pages_in`` and
    ``pages_out`` in the system series. The counters and the switch log are the median
    repetition's, as the series are."""
    ctl = raw.get("controllers", {}).get("gang", {})
    node = {k: v for k, v in raw.items() if k not in ("controllers", "kernel_options", "oom_kills")}
    series = dict(node["system_series"])
    # pages read: the run's own (its cgroup's refaults); pages written: the machine's
    # (the kernel counts swap-outs per machine only), as the backend's pages_written
    series["pages_in"], series["pages_out"] = series["cgroup_swap_ins"], series["swap_outs"]
    node["system_series"] = series
    node["machine_pages_read"] = node["pages_read"]
    node["pages_read"] = node["cgroup_pages_read"]
    pages = [p.get("pages") for p in node["processes"]]
    node["gang"] = dict(ctl.get("gang", {}), exchanged_pages=0, ghost_pages=0,
                        footprint_pages=sum(pages) if None not in pages else None)
    jobs = [{"name": p["name"], "end_ns": p["start_ns"] + p["runtime_ns"], "dedicated_ns": p["dedicated_ns"]}
            for p in node["processes"]]
    return {"backend": "kernel", "kernel": raw["kernel"], "cgroup_version": raw["cgroup_version"],
            "end_ns": raw["end_ns"], "jobs": jobs, "switches": ctl.get("switches", []),
            "switch_details": ctl.get("switch_details", []), "nodes": [node],
            "kernel_options": raw["kernel_options"], "oom_kills": raw["oom_kills"]}


def _alone_runs(procs, sample_s, page_size, name, progress, options) -> dict:
    """Each process alone without a limit: its dedicated time (s), by name."""
    alone = {}
    for p in procs:
        solo = KernelProcess.__new__(KernelProcess)
        solo.__dict__.update(p.__dict__)
        solo.start_s = 0.0
        g = _run_group([solo], None, sample_s, page_size, name, progress, options["cpus"])
        r = g["running"][0]
        alone[p.name] = r.end - r.start
    return alone


#: per-process numbers whose median (and spread) a repeated run reports
_REPEATED = ("runtime_ns", "dedicated_ns", "slowdown", "major_faults", "minor_faults", "page_ins", "cpu_ns",
             "peak_rss_bytes", "peak_swap_bytes", "runner_own_rss_bytes", "token_grabs", "token_held_ns",
             "suspended_ns")


def _median(values: list):
    v = sorted(values)
    n = len(v)
    if n == 0:
        return None
    m = v[(n - 1) // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    return int(m) if all(isinstance(x, int) for x in v) and float(m).is_integer() else m


def _combine(runs: List[dict]) -> dict:
    """Repeated runs as one result: the repetition with the median end time for its
    series and system numbers, each process's numbers the medians over the
    repetitions, their smallest and largest in ``spread``, each repetition's own in
    ``repetitions``."""
    order = sorted(range(len(runs)), key=lambda i: runs[i]["end_ns"])
    out = json.loads(json.dumps(runs[order[(len(runs) - 1) // 2]]))
    for i, row in enumerate(out["processes"]):
        spread = {}
        for key in _REPEATED:
            values = [r["processes"][i][key] for r in runs if r["processes"][i].get(key) is not None]
            if values:
                row[key] = _median(values)
                spread[key] = [min(values), max(values)]
        row["spread"] = spread
    for key in ("pages_read", "pages_written", "cgroup_pages_read", "end_ns"):
        values = [r[key] for r in runs if r.get(key) is not None]
        out[key] = _median(values) if values else None
        out.setdefault("spread", {})[key] = [min(values), max(values)] if values else None
    out["repetitions"] = [{"end_ns": r["end_ns"], "limit_bytes": r["limit_bytes"],
                           "pages_read": r["pages_read"], "pages_written": r["pages_written"],
                           "processes": [{k: p.get(k) for k in ("name",) + _REPEATED} for p in r["processes"]]}
                          for r in runs]
    return out


def _read_through(path: str) -> None:
    """Reads the runner's binary once here, so that its pages are in the page cache,
    charged to pagelab's own cgroup, before a run's process maps them: otherwise the
    first run after a new build would be charged for them (megabytes of its limit)."""
    try:
        with open(path, "rb") as f:
            while f.read(1 << 20):
                pass
    except OSError:
        pass  # starting it will say what is wrong


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _result(shared: dict, alone: dict, procs, limit: int, frames: int, page_size: int, name: str) -> dict:
    rows, series = [], []
    cpu_busy = 0
    for r in shared["running"]:
        rep = r.report
        ru = r.rusage
        cpu_ns = int((ru.ru_utime + ru.ru_stime) * 1e9)
        cpu_busy += cpu_ns
        runtime = r.end - r.start
        dedicated = alone.get(r.proc.name)
        rows.append({
            "name": r.proc.name, "start_ns": int(r.start * 1e9), "end_ns": int(r.end * 1e9),
            "runtime_ns": int(runtime * 1e9),
            "dedicated_ns": int(dedicated * 1e9) if dedicated is not None else None,
            "slowdown": runtime / dedicated if dedicated else None,
            "references": rep["references"] if rep else None, "records": rep["records"] if rep else None,
            "major_faults": ru.ru_majflt, "minor_faults": ru.ru_minflt,
            "pages_freed": rep["frees"] if rep else None,
            # every major fault of an anonymous page is a swap-in; swap-outs cannot be
            # told apart per process (the kernel counts them system-wide)
            "page_ins": ru.ru_majflt, "page_outs": None,
            "token_grabs": 0, "token_held_ns": 0, "suspended_ns": 0,
            "cpu_ns": cpu_ns,
            # VmHWM of the program (reset by exec), sampled, or the runner's own at its end;
            # not wait4's ru_maxrss, which counts pagelab's pages between fork and exec
            "peak_rss_bytes": max(r.peak_rss, rep["memory"]["peak_rss_bytes"] if rep else 0),
            "peak_swap_bytes": r.peak_swap,
            "runner_own_rss_bytes": rep["peak_own_rss_bytes"] if rep else None,
            "pages": rep["pages"] if rep else None,
            "kind": "runner" if r.proc.is_runner else "command",
            "outcome": _outcome(r.status),
        })
        series.append(dict(r.series, process=r.proc.name))
    end_ns = int(shared["end_s"] * 1e9)
    return {
        "backend": "kernel", "kernel": platform.release(), "cgroup_version": shared["cgroup_version"],
        "frames": frames, "page_size": page_size, "limit_bytes": limit, "peak_bytes": shared["peak_bytes"],
        "swap_bytes": sum(d["size_bytes"] for d in swap_devices()),
        "end_ns": end_ns, "cpu_busy_ns": cpu_busy / shared["cpus"], "cpus": shared["cpus"],
        # the swap devices' busy time (/proc/diskstats io_ticks): all I/O on them, not only swap
        "disk_busy_ns": shared["disk_busy_ns"], "swap_disks": shared["swap_disks"],
        "disk_reads": None, "disk_writes": None,
        "pages_read": shared["swap_ins"], "pages_written": shared["swap_outs"],
        # the run's own swap-ins (its cgroup's refaults); pages_read is the machine's
        "cgroup_pages_read": shared["cgroup_swap_ins"],
        "processes": rows, "series": series, "system_series": shared["system_series"],
        "token_events": [], "stale_cgroups_removed": shared["stale_removed"],
        "memory_pressure": shared["pressure"],
    }
