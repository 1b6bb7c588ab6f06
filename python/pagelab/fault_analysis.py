"""The fault parameters of predictive-replacement.txt (section 1, Figure 1) and the
derived series of its section 4 characterisation (figures 2-12).

For a page between its i-th and (i+1)-th fault under a replacement policy at a fixed
memory size: L (lifetime) from the fault to the last access before the eviction, D (dead
time) from that last access to the eviction, W (window) from the eviction to the next
fault, R = D + W (reuse), F = L + D + W (fault distance). Each in two units: ``_refs``,
records of the stream (page touches: consecutive references to one page are one record),
and ``_faults``, faults to other pages (the global fault counter G2 of section 5.1, the
page's own faults left out). The engine replays the stream with the same victims as
``pagelab.replay`` and returns one row per residency; this module turns the rows into a
DataFrame and the figures' series.

    import pagelab
    df = pagelab.fault_parameters(pagelab.workload("npb-mg"), policy="lru", frames=1000)
    df[["L_refs", "D_refs", "L_faults", "D_faults"]].describe()
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from . import _core
from ._core import PagelabError
from .api import ProgressHook, as_source, whole_number
from .files import output_dir

#: section 4: "differences up-to a large value (set to 50000), and all the differences
#: greater than that are treated identically"
DIFFERENCE_CAP = 50_000
#: the two units, as column suffixes, with their axis labels
UNITS = {"refs": "memory references (page touches)", "faults": "faults to other pages"}
PARAMETERS = ("L", "D", "W", "R", "F")
#: engine value of an undefined entry (u64::MAX)
_MISSING = (1 << 64) - 1


def _check_unit(unit: str) -> str:
    if unit not in UNITS:
        raise PagelabError(f"unit: expected one of {', '.join(UNITS)}, got {unit!r}")
    return unit


def fault_parameters(source, policy: str = "lru", frames: Optional[int] = None, seed: int = 0,
                     progress: ProgressHook = None):
    """One row per residency of ``source`` under ``policy`` on ``frames`` frames: page (the
    dense id of the (process, page) pair), pid, vpage, fault_record and fault_count (the
    record index of the fault and the global fault count including it), L, D, W, R, F in
    both units (``L_refs`` ... ``F_faults``) and ``finished`` (False: the page was still
    resident at the end, so its L and D run up to the end only). W, R and F are missing
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

def _finished(df):
    return df[df["finished"]]


def dead_ratio(df, unit: str = "refs"):
    """D / (L + D) of every finished residency (figures 2-3). D >= 1 in both units for a
    finished residency (the eviction comes after the last access, by a fault to another
    page), so the ratio is always defined."""
    import numpy as np

    _check_unit(unit)
    f = _finished(df)
    l, d = f[f"L_{unit}"].to_numpy(np.float64), f[f"D_{unit}"].to_numpy(np.float64)
    return d / (l + d)


def _successive_differences(df, values, signed: bool, cap: Optional[int]):
    import numpy as np

    f = _finished(df)
    v = values(f).to_numpy(np.int64)
    pages = f["page"].to_numpy()
    order = np.argsort(pages, kind="stable")  # by page, each page's rows in fault order
    v, pages = v[order], pages[order]
    same = pages[1:] == pages[:-1]
    diff = (v[1:] - v[:-1])[same]
    if not signed:
        diff = np.abs(diff)
    if cap is not None:
        diff = np.clip(diff, -cap, cap)
    return diff


def lifetime_differences(df, unit: str = "refs", signed: bool = False, cap: Optional[int] = DIFFERENCE_CAP):
    """Differences L(i+1) - L(i) of successive finished residencies of the same page,
    absolute (figure 4) or signed (figure 5), clipped to +-``cap`` (section 4's 50000:
    larger differences are treated identically)."""
    _check_unit(unit)
    return _successive_differences(df, lambda f: f[f"L_{unit}"], signed, cap)


def residency_differences(df, unit: str = "refs", signed: bool = False, cap: Optional[int] = DIFFERENCE_CAP):
    """The same for L + D (figure 6): what an operating system can measure, since it sees
    faults and evictions but not the last access."""
    _check_unit(unit)
    return _successive_differences(df, lambda f: f[f"L_{unit}"] + f[f"D_{unit}"], signed, cap)


def lifetimes(df, unit: str = "refs"):
    """L of every finished residency (figure 7's CDF)."""
    import numpy as np

    _check_unit(unit)
    return _finished(df)[f"L_{unit}"].to_numpy(np.int64)


def cdf(values):
    """(x, y): the sorted distinct values and the share of values at or below each."""
    import numpy as np

    v = np.sort(np.asarray(values))
    if v.size == 0:
        return v.astype(np.float64), np.zeros(0)
    x, counts = np.unique(v, return_counts=True)
    return x, np.cumsum(counts) / v.size


def busiest_pages(df, k: int = 2) -> List[int]:
    """The ``k`` pages (dense ids) with the most finished residencies, ties by page id."""
    f = _finished(df)
    counts = f.groupby("page").size().reset_index(name="n").sort_values(["n", "page"], ascending=[False, True])
    return [int(p) for p in counts["page"].head(k)]


def lifetime_over_time(df, pages: Optional[Sequence[int]] = None, k: int = 2):
    """L of each finished residency of the chosen pages against the time of its fault
    (figures 8-9): columns page, vpage, fault_record, fault_count, L_refs, L_faults. The
    pages default to the ``k`` with the most residencies."""
    chosen = list(pages) if pages is not None else busiest_pages(df, k)
    f = _finished(df)
    cols = ["page", "vpage", "fault_record", "fault_count", "L_refs", "L_faults"]
    return f.loc[f["page"].isin(chosen), cols].reset_index(drop=True)


def lifetime_cov(df, unit: str = "refs", min_residencies: int = 2):
    """Coefficient of variation of L per page (figures 10-12): standard deviation (of the
    population) over mean, for pages with at least ``min_residencies`` finished
    residencies. A page whose every L is 0 has CoV 0 (constant, so perfectly predictable).
    A Series indexed by page id, in page order."""
    import numpy as np
    import pandas as pd

    _check_unit(unit)
    g = _finished(df).groupby("page")[f"L_{unit}"]
    n, mean, std = g.size(), g.mean(), g.std(ddof=0)
    keep = n >= min_residencies
    mean, std = mean[keep].to_numpy(np.float64), std[keep].to_numpy(np.float64)
    cov = np.divide(std, mean, out=np.zeros_like(std), where=mean > 0)
    return pd.Series(cov, index=n.index[keep.to_numpy()], name=f"cov_L_{unit}", dtype=np.float64)


def summary(df) -> Dict[str, object]:
    """The numbers of ``summary.csv`` for one analysed source."""
    import numpy as np

    def share(values, test):
        return float(np.mean(test(values))) if len(values) else float("nan")

    def median(values):
        return float(np.median(values)) if len(values) else float("nan")

    out: Dict[str, object] = {
        "source": df.attrs.get("source", ""),
        "policy": df.attrs.get("policy", ""),
        "frames": df.attrs.get("frames", 0),
        "records": df.attrs.get("records", 0),
        "distinct_pages": df.attrs.get("distinct_pages", 0),
        "faults": df.attrs.get("faults", len(df)),
        "residencies": len(df),
        "finished": int(df["finished"].sum()),
    }
    for unit in UNITS:
        out[f"dead_ratio_below_half_{unit}"] = share(dead_ratio(df, unit), lambda r: r < 0.5)
    for unit in UNITS:
        diffs = lifetime_differences(df, unit)
        out[f"median_abs_dL_{unit}"] = median(diffs)
        out[f"share_abs_dL_le_10_{unit}"] = share(diffs, lambda d: d <= 10)
    for unit in UNITS:
        out[f"median_cov_L_{unit}"] = median(lifetime_cov(df, unit).to_numpy())
    return out


# ---------------------------------------------------------------- output files

#: trace-file suffixes dropped from a source's file-name label
_TRACE_SUFFIXES = (".zst", ".plt", ".csv", ".txt", ".lackey", ".oraclegeneral", ".bin")


def source_label(source) -> str:
    """A short name for file names and legends: the workload with its parameters
    (``npb-mg_n=32``), or the trace file's name without its format suffixes."""
    import re
    from pathlib import Path

    from .api import Trace, Workload

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

    from .fault_plots import write_figures

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
