"""Figures of the fault-parameter analysis (predictive-replacement.txt figures 2-12), with
matplotlib (Agg). Each figure has the paper's two panels side by side: (a) distances in
memory references (page touches), (b) in faults to other pages. Each function takes one
or several workloads as ``[(label, DataFrame)]`` (DataFrames from
``pagelab.fault_parameters``) and draws them on one figure, told apart by line style and
marker so that the figures read in black and white."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from .. import fault_stats as fa
from .style import STYLES, _pyplot, _save, figure_files

Datasets = Sequence[Tuple[str, object]]

PANEL_UNITS = [("refs", "(a) memory references"), ("faults", "(b) faults to other pages")]


def _panels(title: str):
    plt = _pyplot()
    # constrained layout: laid out once, while saving (tight_layout draws a second time)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    fig.suptitle(title)
    return plt, fig, axes


def _finish(plt, fig, axes, path) -> None:
    for ax in axes:
        ax.grid(True, color="0.85", which="major")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(frameon=False, fontsize="small", loc="best")
    _save(fig, path)
    plt.close(fig)


def _cdf_line(ax, values, i: int, label: str) -> None:
    import numpy as np

    x, y = fa.cdf(values)
    ls, marker = STYLES[i % len(STYLES)]
    if len(x) == 0:
        ax.plot([], [], linestyle=ls, marker=marker, color="black", markerfacecolor="white",
                label=f"{label} (no data)")
        return
    # rise from 0 at the smallest value, so that a jump there shows
    x, y = np.concatenate([x[:1], x]), np.concatenate([[0.0], y])
    every = max(1, len(x) // 8)
    ax.step(x, y, where="post", linestyle=ls, marker=marker, markevery=every, markersize=4, color="black",
            markerfacecolor="white", linewidth=1.2, label=label)


def _cdf_figure(datasets: Datasets, path, title: str, series, xlabel: str, ylabel: str,
                symlog: bool = False, xlim: Optional[Tuple[float, float]] = None, note: Optional[str] = None) -> None:
    plt, fig, axes = _panels(title)
    if note:
        fig.text(0.5, -0.01, note, ha="center", va="top", fontsize="small")
    for ax, (unit, panel) in zip(axes, PANEL_UNITS):
        for i, (label, df) in enumerate(datasets):
            _cdf_line(ax, series(df, unit), i, label)
        ax.set_title(panel)
        ax.set_xlabel(xlabel.format(unit=fa.UNITS[unit]))
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, 1.02)
        if symlog:
            ax.set_xscale("symlog", linthresh=1)
        if xlim:
            ax.set_xlim(*xlim)
    _finish(plt, fig, axes, path)


_CAP_NOTE = (f"Differences beyond {fa.DIFFERENCE_CAP:,} in size are treated identically (drawn at "
             f"±{fa.DIFFERENCE_CAP:,}); symmetric log axis, linear within 1 of 0.")


def plot_dead_ratio(datasets: Datasets, path, title: str = "D/(L+D) of evicted pages (figures 2-3)") -> None:
    """CDF of D/(L+D) over evicted residencies: a curve that rises early means the
    policy evicts pages soon after they die."""
    _cdf_figure(datasets, path, title, fa.dead_ratio, "D/(L+D), distances in {unit}",
                "share of evicted pages (CDF)", xlim=(0, 1))


def plot_lifetime_diff(datasets: Datasets, path, signed: bool = False, title: Optional[str] = None) -> None:
    """CDF of the absolute (figure 4) or signed (figure 5) differences of successive L of
    the same page; differences beyond 50000 are drawn at +-50000."""
    if signed:
        title = title or "Differences between successive L of a page (figure 5)"
        xlabel, xlim = "L(i+1) - L(i), in {unit}", None
    else:
        title = title or "Absolute differences between successive L of a page (figure 4)"
        xlabel, xlim = "|L(i+1) - L(i)|, in {unit}", (0, None)
    _cdf_figure(datasets, path, title, lambda df, unit: fa.lifetime_differences(df, unit, signed=signed), xlabel,
                "share of successive pairs (CDF)", symlog=True, xlim=xlim, note=_CAP_NOTE)


def plot_residency_diff(datasets: Datasets, path,
                        title: str = "Absolute differences between successive L+D of a page (figure 6)") -> None:
    """CDF of |(L+D)(i+1) - (L+D)(i)|: what the operating system can measure."""
    _cdf_figure(datasets, path, title, fa.residency_differences, "|(L+D)(i+1) - (L+D)(i)|, in {unit}",
                "share of successive pairs (CDF)", symlog=True, xlim=(0, None), note=_CAP_NOTE)


def plot_lifetime_cdf(datasets: Datasets, path, title: str = "Lifetime L of evicted pages (figure 7)") -> None:
    _cdf_figure(datasets, path, title, fa.lifetimes, "L, in {unit}", "share of evicted pages (CDF)",
                symlog=True, xlim=(0, None), note="Symmetric log axis, linear within 1 of 0.")


def plot_lifetime_time(datasets: Datasets, path, pages: int = 2,
                       title: str = "L of chosen pages over time (figures 8-9)") -> None:
    """L of each residency of the ``pages`` pages with the most residencies (per
    workload), against the time of the residency's fault in the same unit."""
    plt, fig, axes = _panels(title)
    i = 0
    lines: List[tuple] = []
    for label, df in datasets:
        track = fa.lifetime_over_time(df, k=pages)
        for page, rows in track.groupby("page", sort=False):
            vpage = int(rows["vpage"].iloc[0])
            lines.append((f"{label}, page {vpage:#x}", rows, i))
            i += 1
    for ax, (unit, panel) in zip(axes, PANEL_UNITS):
        time_col = "fault_record" if unit == "refs" else "fault_count"
        for name, rows, k in lines:
            ls, marker = STYLES[k % len(STYLES)]
            every = max(1, len(rows) // 25)
            ax.plot(rows[time_col], rows[f"L_{unit}"], linestyle=ls, marker=marker, markevery=every, markersize=4,
                    color="black", markerfacecolor="white", linewidth=1.0, label=name)
        if not lines:
            ax.text(0.5, 0.5, "no page with an evicted residency", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(panel)
        ax.set_xlabel("time of the fault (record index)" if unit == "refs" else "time of the fault (faults so far)")
        ax.set_ylabel(f"L ({fa.UNITS[unit]})")
        ax.set_ylim(bottom=0)
    _finish(plt, fig, axes, path)


def plot_lifetime_cov(datasets: Datasets, path,
                      title: str = "Coefficient of variation of L per page (figures 10-12)") -> None:
    """CoV of L (standard deviation / mean) of each page with at least two evicted
    residencies, pages in virtual-page order along the x axis."""
    plt, fig, axes = _panels(title)
    for ax, (unit, panel) in zip(axes, PANEL_UNITS):
        for i, (label, df) in enumerate(datasets):
            cov = fa.lifetime_cov(df, unit)
            vpages = df.drop_duplicates("page").set_index("page")["vpage"]
            order = vpages.reindex(cov.index).argsort(kind="stable").to_numpy()
            y = cov.to_numpy()[order]
            _, marker = STYLES[i % len(STYLES)]
            ax.plot(range(len(y)), y, linestyle="none", marker=marker, markersize=2.5 if len(y) > 500 else 4,
                    color="black" if i % 2 == 0 else "0.45", markerfacecolor="white" if i % 2 else "black",
                    markeredgewidth=0.6, label=f"{label} ({len(y):,} pages)")
        ax.set_title(panel)
        ax.set_xlabel("virtual page (pages with 2+ evicted residencies, in address order)")
        ax.set_ylabel(f"CoV of L, L in {fa.UNITS[unit]}")
        ax.set_ylim(bottom=0)
    _finish(plt, fig, axes, path)


#: the figures `pagelab analyze faults` writes, in order
FIGURE_FILES = ["fig02-dead-ratio.png", "fig04-lifetime-diff.png", "fig05-lifetime-signed-diff.png",
                "fig06-residency-diff.png", "fig07-lifetime-cdf.png", "fig08-lifetime-time.png",
                "fig10-lifetime-cov.png"]


def write_figures(datasets: Datasets, out_dir, pages: int = 2) -> List[str]:
    """Every figure of the analysis into ``out_dir`` (FIGURE_FILES), each PNG with its SVG
    beside it (plots._save); returns the names of the files written, PNG and SVG."""
    from pathlib import Path

    out = Path(out_dir)
    draw = {
        "fig02-dead-ratio.png": lambda p: plot_dead_ratio(datasets, p),
        "fig04-lifetime-diff.png": lambda p: plot_lifetime_diff(datasets, p, signed=False),
        "fig05-lifetime-signed-diff.png": lambda p: plot_lifetime_diff(datasets, p, signed=True),
        "fig06-residency-diff.png": lambda p: plot_residency_diff(datasets, p),
        "fig07-lifetime-cdf.png": lambda p: plot_lifetime_cdf(datasets, p),
        "fig08-lifetime-time.png": lambda p: plot_lifetime_time(datasets, p, pages=pages),
        "fig10-lifetime-cov.png": lambda p: plot_lifetime_cov(datasets, p),
    }
    names = []
    for name in FIGURE_FILES:
        draw[name](out / name)
        names += [p.name for p in figure_files(name)]
    return names
