"""Fault curves per policy and miss-ratio curves. Readable in black-and-white print:
distinct markers and line styles, labelled axes."""

from __future__ import annotations

from .style import STYLES, _pyplot, _save, line_color

def plot_fault_curves(df, path, title: str) -> None:
    """Faults against memory size, one line per policy (``df`` from ReplayResults)."""
    _save(draw_fault_curves(df, title), path)


def draw_fault_curves(df, title: str):
    """The figure of :func:`plot_fault_curves`, unsaved (``ReplayResults.plot``)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, (policy, group) in enumerate(df.groupby("policy", sort=False)):
        ls, marker = STYLES[i % len(STYLES)]
        group = group.sort_values("frames")
        ax.plot(group["frames"], group["faults"], linestyle=ls, marker=marker, color=line_color(i),
                markerfacecolor="white", label=policy)
    ax.set_xlabel("memory size (frames)")
    ax.set_ylabel("page faults")
    ax.set_title(title)
    ax.grid(True, color="0.85")
    ax.legend(frameon=False)
    return fig


def plot_mrc(curves, path, title: str = "LRU miss-ratio curves") -> None:
    """Fault ratio against memory size for one or more MissRatioCurve objects.

    One curve: memory in frames. Several: memory as a fraction of each source's distinct
    pages, so workloads of different footprints share the axis. The fault ratio is on a
    log scale: the interesting knees are often orders of magnitude apart."""
    _save(draw_mrc(curves, title), path)


def draw_mrc(curves, title: str = "LRU miss-ratio curves"):
    """The figure of :func:`plot_mrc`, unsaved (``MissRatioCurve.plot``)."""
    import numpy as np

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    relative = len(curves) > 1
    for i, curve in enumerate(curves):
        ls, marker = STYLES[i % len(STYLES)]
        # at most about 5,000 of the sizes are drawn (evenly spread, and every size below
        # 1,000 frames, where the curve falls fastest): the figure is the same, drawn in a
        # tenth of the time for a million sizes; the CSV has every size
        n = len(curve.faults)
        shown = np.unique(np.concatenate([np.arange(min(n, 1000)), np.linspace(0, n - 1, 4000).astype(np.int64)])) \
            if n > 5000 else np.arange(n)
        frames = (shown + 1).astype(float)
        x = frames / max(curve.distinct_pages, 1) if relative else frames
        y = np.maximum(curve.fault_ratios()[shown], 1e-9)
        # markers a fixed distance apart along the line (the drawn sizes are not even)
        every = max(1, n // 8) if n <= 5000 else 0.12
        ax.plot(x, y, linestyle=ls, marker=marker, markevery=every, markersize=4, color=line_color(i),
                markerfacecolor="white", label=curve.source_name)
    ax.set_xlabel("memory size (fraction of distinct pages)" if relative else "memory size (frames)")
    ax.set_ylabel("fault ratio (faults / reference, log scale)")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(True, color="0.85", which="both")
    ax.legend(frameon=False, fontsize="small")
    return fig


def plot_counterpart_curves(pairs, path, title: str) -> None:
    """One panel a pair: a real program's LRU fault curve and its generator's, faults per
    reference (log scale) against memory as a share of each one's own footprint.
    ``pairs``: (panel title, [(label, shares, fault ratios), ...]) each."""
    plt = _pyplot()
    n = max(1, len(pairs))
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.8), squeeze=False)
    for ax, (panel, lines) in zip(axes[0], pairs):
        for i, (label, xs, ys) in enumerate(lines):
            ls, marker = STYLES[i % len(STYLES)]
            ax.plot(xs, ys, linestyle=ls, marker=marker, color=line_color(i), markerfacecolor="white", label=label)
        ax.set_yscale("log")
        ax.set_xlabel("memory (share of its footprint)")
        ax.set_ylabel("LRU faults per reference")
        ax.set_title(panel)
        ax.grid(True, color="0.85")
        ax.legend(frameon=False, fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    _save(fig, path)
