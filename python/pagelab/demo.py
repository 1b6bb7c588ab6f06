"""`pagelab demo` (run by `make demo`): replay the built-in workloads under every
policy at several memory sizes, compute each one's exact LRU curve, print a summary
table, and write figures (PNG), a CSV of every row and a JSON summary; then reproduce
token-ordered-lru.txt's Table 2 and figure 11 on the timed system (results/demo/token-lru)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from . import api
from .console import print_table, show_experiment_run
from .experiments.runner import reproduce
from .files import atomic_path, output_dir, write_text
from .figures.curves import plot_fault_curves, plot_mrc
from .progress import ProgressBar
from .version import build_info

#: (workload, parameters): small enough that the whole demo takes seconds.
DEMO_WORKLOADS = [
    ("lu", {}),
    ("sor", {}),
    ("matmul", {}),
    ("mergesort", {}),
    ("jacobi", {}),
    ("spmv", {}),
    ("shrinking-loop", {}),
    ("phases", {}),
    ("zipf", {"refs": 1_000_000, "pages": 50_000}),
]
#: memory sizes as fractions of each workload's distinct pages
FRACTIONS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9]
POLICIES = ["lru", "fifo", "clock", "random", "opt"]


def run_demo(out_dir: str, progress=None) -> int:
    out = Path(out_dir)
    output_dir(out)
    started = time.perf_counter()
    all_rows, curves, summary = [], [], {"pagelab": build_info(),
                                         "policies": POLICIES, "fractions": FRACTIONS, "workloads": []}
    table = []
    for name, params in DEMO_WORKLOADS:
        w = api.workload(name, seed=1, **params)
        with ProgressBar(f"{name}: curve", enabled=progress) as bar:
            curve = api.mrc(w, progress=bar)
        curves.append(curve)
        pages = curve.distinct_pages
        frames = sorted({max(1, int(pages * f)) for f in FRACTIONS})
        with ProgressBar(f"{name}: replay", api.replay_progress_total(w, POLICIES), enabled=progress) as bar:
            results = api.replay(w, policy=POLICIES, frames=frames, seed=1, progress=bar)
        df = results.to_dataframe()
        all_rows.append(df)
        fig = out / f"faults-{name}.png"
        plot_fault_curves(df, fig, title=f"{w.name}: {pages:,} pages, {curve.references:,} references")
        # LRU replay must agree with the one-pass curve at every size: the demo checks it.
        for f in frames:
            if results.faults("lru", f) != curve.faults_at(f):
                raise RuntimeError(f"engine self-check failed: {name} at {f} frames: LRU replay "
                                   f"{results.faults('lru', f)} != stack-distance curve {curve.faults_at(f)}")
        at = frames[len(frames) // 2]
        opt = max(results.faults("opt", at), 1)
        table.append([name, f"{pages:,}", f"{curve.references:,}", f"{at:,}"] +
                     [f"{results.faults(p, at) / opt:.2f}" for p in POLICIES[:-1]] +
                     [f"{results.faults('opt', at):,}"])
        summary["workloads"].append({
            "workload": w.name, "distinct_pages": pages, "references": curve.references,
            "records": curve.records, "frames": frames, "figure": fig.name,
            "faults": {p: {str(f): results.faults(p, f) for f in frames} for p in POLICIES},
        })
    import pandas as pd

    rows = pd.concat(all_rows, ignore_index=True)
    with atomic_path(out / "replay.csv") as tmp:
        rows.to_csv(tmp, index=False)
    plot_mrc(curves, out / "mrc.png", title="exact LRU fault ratio by memory size")
    summary["seconds"] = round(time.perf_counter() - started, 2)
    write_text(out / "summary.json", json.dumps(summary, indent=2))
    print_table("faults relative to OPT at the middle memory size (1.00 = optimal)",
                ["workload", "pages", "references", "frames"] + POLICIES[:-1] + ["OPT faults"], table)
    print(f"\nresults in {out}/: summary.json, replay.csv ({len(rows)} rows), mrc.png, "
          f"faults-<workload>.png for {len(DEMO_WORKLOADS)} workloads ({summary['seconds']} s)\n")
    # the timed system: token-ordered-lru.txt's Table 2 and figure 11, about 10 s
    runs = reproduce(["token-lru"], out=str(out / "token-lru"), progress=progress, workers=0)
    return 0 if all(show_experiment_run(r) for r in runs) else 1
