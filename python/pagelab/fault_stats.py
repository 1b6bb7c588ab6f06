"""Statistics of residency tables (the DataFrames of ``pagelab.fault_parameters``): the
series of predictive-replacement.txt section 4 (figures 2-12). Plain pandas and numpy
on a table: nothing here runs the engine, so figures can use it from below the API."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from ._core import PagelabError

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
