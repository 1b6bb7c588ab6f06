"""Running experiments: their points as one run of the sweep executor (in parallel,
each point stored as it finishes, so an interrupted run resumes), then per experiment
its analysis, its claim ledger, its sensitivity (the claims re-judged on every variant
of the ranges the file declares) and its files:

    OUT/experiment.toml            the experiment file as run, verbatim
    OUT/summary.json               what the report and the README are built from
    OUT/claims.csv, claims.json    the ledger: claim, paper, ours, rule, verdict (robustness)
    OUT/table.csv, OUT/<name>.csv  the analysis' tables
    OUT/sensitivity.csv            with --sensitivity: each claim's verdict in each variant
    OUT/*.png, *.svg               the figures
    OUT/store/                     every point's result (the sweep store): resuming reads it

``reproduce_all`` runs several experiments as one run: their points share the workers.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from .._core import PagelabError
from ..figures.sensitivity import plot_sensitivity
from ..files import atomic_path, output_dir, write_text
from ..sweeps.executor import Job, exit_if_worker_bootstrapping, execute
from ..sweeps.spec import point_hash
from ..sweeps.store import Store
from ..system import read_toml
from ..version import build_info
from .claims import ClaimResult, evaluate, tally
from .protocol import EXPERIMENTS_DIR, Analysis, Point, Results, Spec, load_spec, spec_variants

#: `pagelab reproduce all`
ALL = "all"
SUMMARY = "summary.json"


def shipped() -> List[str]:
    """The experiments shipped with the package, by name."""
    return sorted(p.stem for p in EXPERIMENTS_DIR.glob("*.toml"))


def simulated() -> List[str]:
    """The shipped experiments `reproduce all` runs: those that run no point on this
    machine's kernel (``[experiment] kernel = true`` needs root and is named alone) and
    need no real-program suite (``real_suite = true``: built apart, and named alone)."""
    out = []
    for name in shipped():
        data = read_toml(EXPERIMENTS_DIR / f"{name}.toml")
        exp = data.get("experiment") if isinstance(data, dict) else None
        if not (isinstance(exp, dict) and (exp.get("kernel") is True or exp.get("real_suite") is True)):
            out.append(name)
    return out


def experiment_path(name: str) -> Path:
    """The shipped experiment NAME, or NAME itself when it is a path to a file."""
    if name.endswith(".toml") or os.sep in name:
        return Path(name)
    path = EXPERIMENTS_DIR / f"{name}.toml"
    if not path.is_file():
        raise PagelabError(f"experiment '{name}': unknown (known: {', '.join(shipped()) or 'none'}, {ALL}; "
                           "or give the path to an experiment file)")
    return path


@dataclass
class ExperimentRun:
    spec: Spec
    out: Path
    analysis: Optional[Analysis] = None
    ledger: List[ClaimResult] = field(default_factory=list)
    figures: List[str] = field(default_factory=list)
    error: Optional[str] = None
    points: int = 0


@dataclass
class _Planned:
    spec: Spec
    out: Path
    variants: List[Spec]
    #: per variant (base first): point key -> hash
    keys: List[Dict[str, str]]


def _plan(spec: Spec, out: Path, sensitivity: bool) -> Tuple[_Planned, List[Job]]:
    variants = [spec] + (spec_variants(spec) if sensitivity else [])
    root = os.fspath((out / "store").resolve())
    jobs, keys = [], []
    for v in variants:
        points = v.module.points(v)
        mapping: Dict[str, str] = {}
        for p in points:
            if p.key in mapping:
                raise PagelabError(f"{spec.path.name}: two points named '{p.key}' ({v.variant})")
            if v.on == "kernel" and p.mode in ("system", "gang"):
                # reproduce --on kernel: the system runs as real processes (one machine)
                p = Point(p.key, "kernel", p.config)
            h = point_hash(p.mode, p.config)
            mapping[p.key] = h
            jobs.append(Job(h, p.mode, p.config, root, {}, f"{spec.name}: {p.key}", full=True))
        keys.append(mapping)
    return _Planned(spec, out, variants, keys), jobs


def reproduce(names: List[str], out: Optional[str] = None, quick: bool = False, sensitivity: bool = False,
              workers: Optional[int] = None, scheduler: Optional[str] = None, retry_failed: bool = False,
              progress: Optional[bool] = None, log: Optional[Callable[[str], None]] = None,
              on: str = "simulator") -> List[ExperimentRun]:
    """Runs experiments (names of shipped ones, paths, or ``all``) as one run and writes
    each one's files. One experiment goes to ``out`` (default results/NAME, with ``on =
    "kernel"`` results/NAME-kernel); several to ``out``/NAME. ``on = "kernel"``: their
    system runs go to this machine's kernel (root), one at a time."""
    exit_if_worker_bootstrapping()
    say = log or (lambda _line: None)
    paths = [experiment_path(n) for n in simulated()] if names == [ALL] else [experiment_path(n) for n in names]
    if on == "kernel" and names == [ALL]:
        raise PagelabError("reproduce all --on kernel: name the experiments (those with a kernel version: "
                           "token-lru, gang)")
    specs = [load_spec(p, quick, on) for p in paths]  # every file checked before anything runs
    seen: Dict[str, Path] = {}
    for s in specs:
        if s.name in seen:
            raise PagelabError(f"{s.path}: experiment '{s.name}' is also {seen[s.name]}")
        seen[s.name] = s.path
    several = len(specs) > 1 or names == [ALL]
    plans, jobs = [], []
    for s in specs:
        stem = s.name + ("-kernel" if on == "kernel" else "")
        d = Path(out) / stem if (several and out) else Path(out) if out else Path("results") / stem
        # planned first (a plan can fail: a kernel experiment without root), so that a
        # failed plan leaves no folder behind
        plan, these = _plan(s, d, sensitivity)
        plans.append(plan)
        jobs += these
    for plan in plans:
        output_dir(plan.out)
    label = "reproduce " + (ALL if names == [ALL] else ", ".join(s.name for s in specs))
    t0 = time.perf_counter()
    outcome = execute(jobs, workers=workers, scheduler=scheduler, progress=progress, log=say,
                      retry_failed=retry_failed, label=label)
    failures = {h: f.get("error", "failed") for h, f in outcome.failures.items()}
    seconds = time.perf_counter() - t0
    runs = []
    for plan in plans:
        engine = sum(float((outcome.rows.get(h) or [{}])[0].get("seconds") or 0.0) for h in plan.keys[0].values())
        runs.append(_finish(plan, failures, sensitivity, quick, seconds, engine))
    return runs


# ---------------------------------------------------------------- after the points

def _analyse(spec: Spec, keys: Dict[str, str], store: Store, failures: Dict[str, str]) -> Tuple[Analysis, Results]:
    results = Results(store, keys, {h: failures[h] for h in keys.values() if h in failures})
    return spec.module.analyse(spec, results), results


def _finish(plan: _Planned, failures: Dict[str, str], sensitivity: bool, quick: bool, seconds: float,
            engine_seconds: float) -> ExperimentRun:
    spec, out = plan.spec, plan.out
    store = Store((out / "store").resolve())
    run = ExperimentRun(spec, out, points=len(plan.keys[0]))
    try:
        analysis, results = _analyse(spec, plan.keys[0], store, failures)
    except PagelabError as err:
        run.error = str(err)
        return run
    run.analysis = analysis
    run.ledger = evaluate(spec.claims, analysis.measures)
    variant_rows = []
    if sensitivity:
        by_claim: Dict[str, List[Tuple[str, str]]] = {c.claim.id: [] for c in run.ledger}
        for variant, keys in zip(plan.variants[1:], plan.keys[1:]):
            error = ""
            try:
                va, _ = _analyse(variant, keys, store, failures)
                verdicts = {r.claim.id: r for r in evaluate(variant.claims, va.measures)}
            except PagelabError as err:
                verdicts = {}
                error = str(err)
            for c in run.ledger:
                r = verdicts.get(c.claim.id)
                v = r.verdict if r is not None else "not measured"
                by_claim[c.claim.id].append((variant.variant, v))
                variant_rows.append({"claim": c.claim.id, "variant": variant.variant, "verdict": v,
                                     "ours": r.ours if r is not None else error})
        for c in run.ledger:
            c.variants = [("base", c.verdict)] + by_claim[c.claim.id]
    run.figures = list(spec.module.figures(spec, analysis, results, out))
    if sensitivity and run.ledger:
        name = "sensitivity.png"
        plot_sensitivity(run.ledger, out / name, title=f"{spec.name}: claims across the sensitivity ranges")
        run.figures.append(name)
    _write(run, variant_rows, quick, sensitivity, seconds, engine_seconds)
    return run


def jsonable(x: Any) -> Any:
    """Numbers and containers as JSON has them (numpy scalars to Python, nan to None)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _write(run: ExperimentRun, variant_rows: List[dict], quick: bool, sensitivity: bool, seconds: float,
           engine_seconds: float) -> None:
    import pandas as pd

    spec, out, a = run.spec, run.out, run.analysis
    with atomic_path(out / "experiment.toml") as tmp:  # verbatim, byte for byte
        tmp.write_bytes(spec.path.read_bytes())
    tables = []
    for name, df in a.tables.items():
        fname = "table.csv" if name == "table" else f"{name}.csv"
        with atomic_path(out / fname) as tmp:
            df.to_csv(tmp, index=False)
        tables.append(fname)
    records = [r.record() for r in run.ledger]
    with atomic_path(out / "claims.csv") as tmp:
        pd.DataFrame([{k: v for k, v in r.items() if k != "variants"} for r in records]).to_csv(tmp, index=False)
    write_text(out / "claims.json", json.dumps(jsonable(records), indent=1))
    if sensitivity:
        with atomic_path(out / "sensitivity.csv") as tmp:
            pd.DataFrame(variant_rows).to_csv(tmp, index=False)
    exp = spec.experiment
    command = ["pagelab", "reproduce", os.fspath(spec.path) if spec.path.parent != EXPERIMENTS_DIR else spec.name]
    command += (["--quick"] if quick else []) + (["--sensitivity"] if sensitivity else [])
    command += (["--on", "kernel"] if spec.on == "kernel" else []) + ["--out", os.fspath(out)]
    summary = {
        "experiment": spec.name, "paper": exp["paper"], "title": exp["title"], "description": exp["description"],
        "quick": quick, "scale": spec.scale, "sensitivity": sensitivity, "points": run.points, "on": spec.on,
        "seconds": round(seconds, 2), "engine_seconds": round(engine_seconds, 2), "figures": run.figures,
        "tables": tables,
        "claims": jsonable(records), "tally": tally(run.ledger),
        "measures": jsonable(a.measures), "views": [jsonable(v.__dict__) for v in a.views], "lines": a.lines,
        "analysis": jsonable(a.summary),
        "reproduce": {"command": shlex.join(command), "experiment_file": os.fspath(spec.path), "quick": quick,
                      "pagelab": build_info(),
                      "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()},
    }
    write_text(out / SUMMARY, json.dumps(summary, indent=1))
