"""`pagelab bench`: whole-program replay throughput, measured the way a user runs it
(reading a pagelab trace from disk, through the Python front), on the Zipf trace of
the foundation issue: 10M references over 750,000 pages, alpha 1.0."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from . import api


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run_bench(args) -> int:
    from .cli import UsageError, parse_int, print_table

    refs = parse_int(args.refs, "--refs")
    pages = parse_int(args.pages, "--pages")
    try:
        alpha = float(args.alpha)
    except ValueError:
        raise UsageError(f"--alpha: expected a number, got '{args.alpha}'") from None
    frames = parse_int(args.frames, "--frames") if args.frames else max(1, pages // 10)
    repeat = parse_int(args.repeat, "--repeat")
    policies = [p.strip() for p in args.policy.split(",") if p.strip()]
    rows, out = [], {"refs": refs, "pages": pages, "alpha": alpha, "frames": frames, "results": {}}
    with tempfile.TemporaryDirectory(prefix="pagelab-bench-") as tmp:
        path = Path(tmp) / "zipf.plt"
        w = api.workload("zipf", seed=1, refs=refs, pages=pages, alpha=alpha)
        w.save(path)
        trace = api.Trace.open(path)
        info = trace.info()
        n = info["references"]
        t_read = _best(lambda: trace.info(), repeat)
        rows.append(["read trace (info)", f"{t_read:.3f}", f"{n / t_read / 1e6:.1f}", ""])
        out["results"]["read"] = n / t_read
        lru_time = None
        for policy in policies:
            t = _best(lambda: api.replay(trace, policy=policy, frames=[frames]), repeat)
            if policy == "lru":
                lru_time = t
            rows.append([f"replay {policy}", f"{t:.3f}", f"{n / t / 1e6:.1f}", ""])
            out["results"][policy] = n / t
        t_mrc = _best(lambda: api.mrc(trace), repeat)
        ratio = f"{t_mrc / lru_time:.2f}x LRU" if lru_time else ""
        rows.append(["mrc (all sizes)", f"{t_mrc:.3f}", f"{n / t_mrc / 1e6:.1f}", ratio])
        out["results"]["mrc"] = n / t_mrc
        if lru_time:
            out["mrc_over_lru"] = t_mrc / lru_time
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print_table(f"pagelab bench: Zipf alpha={alpha}, {n:,} references, {info['distinct_pages']:,} pages, "
                    f"{frames:,} frames (best of {repeat})",
                    ["what", "seconds", "M refs/s", "note"], rows)
    return 0
