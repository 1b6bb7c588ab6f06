"""The fault parameters of predictive-replacement.txt (section 1, Figure 1) and the
derived series of its section 4 characterisation (figures 2-12).

For a page between its i-th and (i+1)-th fault under a replacement policy at a fixed
memory size: L (lifetime) from the fault to the last access before the eviction, D (dead
time) from that last access to the eviction, W (window) from the eviction to the next
fault, R = D + W (reuse), F = L + D + W (fault distance). Each in two units: ``_refs``,
memory references (a record of consecutive references to one page counts its repeats:
a trace with every reference written out gives the same numbers), and ``_faults``,
faults to other pages (the global fault counter G2 of section 5.1, the
page's own faults left out). The engine replays the stream with the same victims as
``pagelab.replay`` and returns one row per residency; this module turns the rows into a
DataFrame and the figures' series.

    import pagelab
    df = pagelab.fault_parameters(pagelab.workload("npb-mg"), policy="lru", frames=1000)
    df[["L_refs", "D_refs", "L_faults", "D_faults"]].describe()
"""

from __future__ import annotations

from typing import List, Optional

from . import _core
from ._core import PagelabError
from .api import ProgressHook, Trace, Workload, as_source, whole_number
from .figures.faults import write_figures
from .fault_stats import (DIFFERENCE_CAP, PARAMETERS, UNITS, _MISSING, busiest_pages, cdf,  # noqa: F401
                          dead_ratio, lifetime_cov, lifetime_differences, lifetime_over_time, lifetimes,
                          residency_differences, summary)
from .files import output_dir

def fault_parameters(source, policy: str = "lru", frames: Optional[int] = None, seed: int = 0,
                     progress: ProgressHook = None):
    """One row per residency of ``source`` under ``policy`` on ``frames`` frames: page (the
    dense id of the (process, page) pair), pid, vpage, fault_record and fault_count (the
    record index of the fault and the global fault count including it), L, D, W, R, F in
    both units (``L_refs`` ... ``F_faults``), ``finished`` (False: the page was still
    resident at the end, so its L and D run up to the end only, or it was given back by a
    free record) and ``freed`` (the residency ended with a free, not an eviction: L and D
    run up to the free). W, R and F are missing
    (<NA>) when the page never faulted again. Rows are in the order of their faults.

    ``df.attrs`` holds policy, frames, records, references, faults, compulsory_faults,
    distinct_pages and source."""
    import numpy as np
    import pandas as pd

    src = as_source(source)
    if not isinstance(policy, str) or not policy.strip():
        raise PagelabError(f"policy: expected a policy name ({', '.join(_core.policies())}), got {policy!r}")
    if frames is None:
        raise PagelabError("frames: expected a positive whole number of frames, got None")
    raw = _core.fault_parameters(src.spec(), policy.strip(), whole_number(frames, "frames", 1),
                                 whole_number(seed, "seed"), progress)
    cols = {k: np.frombuffer(v, dtype="<u8") for k, v in raw["columns"].items()}
    flags = cols["flags"]
    data = {
        "page": cols["page"].astype(np.int64),
        "pid": cols["pid"].astype(np.int64),
        "vpage": cols["vpage"].astype(np.uint64),
        "fault_record": cols["fault_record"].astype(np.int64),
        "fault_count": cols["fault_faults"].astype(np.int64),
    }
    for unit in UNITS:
        for p in PARAMETERS:
            values = cols[f"{p}_{unit}"]
            if p in ("L", "D"):
                data[f"{p}_{unit}"] = values.astype(np.int64)
            else:
                missing = values == _MISSING
                data[f"{p}_{unit}"] = pd.arrays.IntegerArray(np.where(missing, 0, values).astype(np.int64), missing)
    data["finished"] = (flags & 1) != 0
    data["freed"] = (flags & 4) != 0
    df = pd.DataFrame(data)
    df.attrs.update({k: raw[k] for k in ("policy", "frames", "records", "references", "faults",
                                          "compulsory_faults", "distinct_pages")})
    df.attrs["source"] = src.name
    return df


def frames_for_fraction(source, fraction: float, progress: ProgressHook = None) -> int:
    """Memory of ``fraction`` of the source's distinct pages (at least one frame), from one
    pass over the source, as the demo sizes its runs."""
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise PagelabError(f"memory fraction: expected a number in (0, 1], got {fraction!r}")
    pages = int(as_source(source).info(progress=progress)["distinct_pages"])
    return max(1, int(pages * fraction))


# ---------------------------------------------------------------- derived series

_TRACE_SUFFIXES = (".zst", ".plt", ".csv", ".txt", ".lackey", ".oraclegeneral", ".bin")


def source_label(source) -> str:
    """A short name for file names and legends: the workload with its parameters
    (``npb-mg_n=32``), or the trace file's name without its format suffixes."""
    import re
    from pathlib import Path

    if isinstance(source, Workload):
        base = source.workload_name + "".join(f"_{k}={v}" for k, v in sorted(source.params.items()))
    elif isinstance(source, Trace):
        base = Path(source.path).name
        while True:
            stem, dot, suffix = base.rpartition(".")
            if not dot or not stem or f".{suffix.lower()}" not in _TRACE_SUFFIXES:
                break
            base = stem
    else:
        base = str(getattr(source, "name", source))
    return re.sub(r"[^A-Za-z0-9._=+-]+", "-", base).strip("-.") or "source"


def check_output_dir(out_dir) -> None:
    """Fails now, before any work, if ``out_dir`` cannot be created or written."""
    import os
    from pathlib import Path

    path = Path(out_dir)
    if path.exists() and not path.is_dir():
        raise PagelabError(f"{out_dir}: not a directory")
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise PagelabError(f"{out_dir}: cannot create a directory there ({probe} is not a directory)")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise PagelabError(f"{out_dir}: permission denied (cannot write in {probe})")


def write_outputs(results, out_dir, pages: int = 2):
    """Writes, for ``results`` = [(source, DataFrame)], ``residencies-<source>.parquet``
    per source, ``summary.csv`` and the figures into ``out_dir``. Everything is made in a
    staging directory inside ``out_dir`` and moved into place at the end, so a failure
    leaves no partial file (nor a new empty ``out_dir``). Returns (file names, summary
    rows)."""
    import os
    import shutil
    import tempfile
    from pathlib import Path

    import pandas as pd

    out = Path(out_dir)
    created = not out.exists()
    output_dir(out)
    stage = Path(tempfile.mkdtemp(prefix=".analyze-faults-", dir=out))
    try:
        labels: List[str] = []
        for source, _ in results:
            label = source_label(source)
            base, n = label, 2
            while label in labels:
                label, n = f"{base}-{n}", n + 1
            labels.append(label)
        names, rows, datasets = [], [], []
        for label, (_, df) in zip(labels, results):
            name = f"residencies-{label}.parquet"
            df.to_parquet(stage / name, index=False)
            names.append(name)
            rows.append(dict(summary(df), source=label, name=df.attrs.get("source", label)))
            datasets.append((label, df))
        pd.DataFrame(rows).to_csv(stage / "summary.csv", index=False)
        names.append("summary.csv")
        names += write_figures(datasets, stage, pages=pages)
        for name in names:
            os.replace(stage / name, out / name)
        return names, rows
    except BaseException:
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(stage, ignore_errors=True)
