"""Figures of gang runs (gang-adaptive-paging.txt): paging activity traces (figure 6) and
grouped bars of completion time, switching overhead and paging reduction (figures 7-9).
Readable in black-and-white print: bars told apart by gray level and hatching, lines by
style."""

from __future__ import annotations

from typing import Optional, Sequence

from .style import _pyplot, _save

#: bar fills in series order: (gray level, hatch)
BAR_STYLES = [("0.15", ""), ("white", "//"), ("0.6", ""), ("white", ".."), ("0.85", "xx"), ("0.4", "\\\\")]


def plot_paging_activity(runs: Sequence[tuple], path, node: int = 0, until_s: Optional[float] = None,
                         title: Optional[str] = None) -> None:
    """Pages read and written per second on one node, one panel per (label, GangResult),
    with the job switches as dotted lines (figure 6)."""
    _save(draw_paging_activity(runs, node, until_s, title), path)


def draw_paging_activity(runs: Sequence[tuple], node: int = 0, until_s: Optional[float] = None,
                         title: Optional[str] = None):
    """The figure of :func:`plot_paging_activity`, unsaved (``GangResult.plot``)."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(runs), 1, figsize=(7, 1.9 * len(runs) + 0.6), sharex=True, squeeze=False)
    for ax, (label, result) in zip(axes[:, 0], runs):
        df = result.paging_activity
        df = df[df["node"] == node]
        if until_s is not None:
            df = df[df["t_s"] <= until_s]
        ax.fill_between(df["t_s"], df["pages_in_per_s"], step="pre", color="0.1", linewidth=0, label="page-ins")
        ax.plot(df["t_s"], -df["pages_out_per_s"], drawstyle="steps-pre", color="0.45", linewidth=1.0)
        ax.fill_between(df["t_s"], -df["pages_out_per_s"], step="pre", color="0.65", linewidth=0,
                        label="page-outs (drawn downward)")
        for t in result.switch_times_s:
            if until_s is None or t <= until_s:
                ax.axvline(t, color="black", linestyle=":", linewidth=0.8)
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_ylabel("pages/s")
        ax.set_title(label, loc="left", fontsize="medium")
        ax.grid(True, axis="y", color="0.9")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, frameon=False, fontsize="small", loc="upper center", ncol=2,
               bbox_to_anchor=(0.5, 0.0))
    axes[-1, 0].set_xlabel("simulated time (s); dotted lines: job switches")
    if title:
        fig.suptitle(title, x=0.02, ha="left")
    return fig


def plot_grouped_bars(df, path, value: str, ylabel: str, title: str, group: str = "workload",
                      series: str = "config", percent: bool = False, log: bool = False,
                      reference: Optional[float] = None, xlabel: Optional[str] = None) -> None:
    """Bars of ``value`` by ``group`` (x) and ``series`` (one bar per series in a group);
    ``log`` for a logarithmic axis, ``reference`` draws a dashed line at that value;
    ``xlabel`` names the groups (default: the ``group`` column's name)."""
    _save(draw_grouped_bars(df, value, ylabel, title, group, series, percent, log, reference, xlabel), path)


def draw_grouped_bars(df, value: str, ylabel: str, title: str, group: str = "workload", series: str = "config",
                      percent: bool = False, log: bool = False, reference: Optional[float] = None,
                      xlabel: Optional[str] = None):
    """The figure of :func:`plot_grouped_bars`, unsaved."""
    plt = _pyplot()
    groups = list(dict.fromkeys(df[group]))
    names = list(dict.fromkeys(df[series]))
    width = 0.8 / max(len(names), 1)
    fig, ax = plt.subplots(figsize=(min(14, max(5, 1.1 * len(groups) * max(1, len(names) / 2))), 3.6))
    for i, name in enumerate(names):
        fill, hatch = BAR_STYLES[i % len(BAR_STYLES)]
        xs, ys = [], []
        for g, gname in enumerate(groups):
            row = df[(df[group] == gname) & (df[series] == name)]
            if len(row):
                xs.append(g - 0.4 + width * (i + 0.5))
                ys.append(float(row[value].iloc[0]) * (100 if percent else 1))
        ax.bar(xs, ys, width=width, color=fill, hatch=hatch, edgecolor="black", linewidth=0.8, label=name)
    if log:
        ax.set_yscale("log")
    if reference is not None:
        ax.axhline(reference, color="black", linestyle="--", linewidth=0.8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=30 if len(groups) > 6 else 0, ha="right" if len(groups) > 6 else "center")
    ax.set_xlabel(group.replace("_", " ") if xlabel is None else xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, axis="y", color="0.88")
    ax.set_axisbelow(True)
    # beside the axes, not over them: a legend inside would hide the tops of bars
    ax.legend(frameon=False, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return fig
