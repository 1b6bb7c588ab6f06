"""Figures with matplotlib: fault curves per policy and miss-ratio curves.
Readable in black-and-white print: distinct markers and line styles, labelled axes.
Every figure module saves through ``_save``: a PNG always comes with an SVG beside it."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Union

from ._core import PagelabError
from .files import atomic_path

STYLES = [("-", "o"), ("--", "s"), ("-.", "^"), (":", "D"), ((0, (5, 1)), "v"), ((0, (3, 1, 1, 1)), "x")]


def line_color(i: int) -> str:
    """Black for the first len(STYLES) lines, then gray: with the style cycle, up to 12
    lines stay distinct in black-and-white print."""
    return "black" if (i // len(STYLES)) % 2 == 0 else "0.55"


class _Figures:
    """``subplots`` and ``close`` as pyplot has them, on plain ``matplotlib.figure.Figure``
    objects: no global figure registry and no backend switch, so saving figures from the
    command line, from worker threads or inside a notebook (where ``.plot()`` returns
    such a figure and Jupyter shows it) never disturbs the user's own pyplot state."""

    FIGURE_KEYS = ("figsize", "dpi", "layout", "constrained_layout", "tight_layout")

    @classmethod
    def subplots(cls, *args, **kw):
        from matplotlib.figure import Figure

        fig = Figure(**{k: kw.pop(k) for k in cls.FIGURE_KEYS if k in kw})
        return fig, fig.subplots(*args, **kw)

    @staticmethod
    def close(fig) -> None:
        """Nothing to release: the figure is not registered anywhere."""


def _pyplot() -> _Figures:
    return _Figures()


def figure_title(fig) -> str:
    """The figure's title, for the files' metadata (the report's caption): its suptitle,
    else its axes' titles joined by '; '."""
    title = fig.get_suptitle() if hasattr(fig, "get_suptitle") else ""
    if title:
        return " ".join(title.split())
    titles = []
    for ax in fig.axes:
        for loc in ("center", "left", "right"):
            t = " ".join(ax.get_title(loc=loc).split())
            if t and t not in titles:
                titles.append(t)
    return "; ".join(titles)


def check_figure_path(path: Union[str, os.PathLike]) -> None:
    """A one-line PagelabError unless matplotlib can write the file's format (its
    suffix); commands call it before any work, so a bad figure name costs nothing."""
    from matplotlib.backend_bases import FigureCanvasBase

    fmt = Path(os.fspath(path)).suffix[1:].lower()
    formats = FigureCanvasBase.get_supported_filetypes()
    if fmt not in formats:
        raise PagelabError(f"{os.fspath(path)}: cannot tell the figure format from the name "
                           f"(expected one of .{', .'.join(sorted(formats))})")


def _save(fig, path: Union[str, os.PathLike]) -> None:
    """Writes the figure to ``path`` (format from the suffix), whole or not at all. A
    ``.png`` is also written as ``.svg`` beside it (for print and scaling); both are
    renamed into place only once both are drawn. The figure's title goes into each file's
    metadata (the report's caption); the SVG carries no date and fixed element ids, so the
    same figure gives the same file."""
    import matplotlib

    path = Path(os.fspath(path))
    fmt = path.suffix[1:].lower()
    check_figure_path(path)
    title = figure_title(fig)
    targets = [(path, fmt)]
    if fmt == "png":
        targets.append((path.with_suffix(".svg"), "svg"))
    with contextlib.ExitStack() as stack, matplotlib.rc_context({"svg.hashsalt": "pagelab"}):
        # entered in order, left in reverse: the SVG is renamed into place before the PNG
        tmps = [(stack.enter_context(atomic_path(target)), f) for target, f in targets]
        for tmp, f in tmps:
            meta = {}
            if f in ("png", "svg", "pdf") and title:
                meta["Title"] = title
            if f in ("svg", "pdf"):
                meta["Date"] = None
            fig.savefig(tmp, format=f, dpi=120, bbox_inches="tight", metadata=meta or None)


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
        df = curve.to_dataframe()
        x = df["frames"] / max(curve.distinct_pages, 1) if relative else df["frames"]
        y = np.maximum(df["fault_ratio"].to_numpy(dtype=float), 1e-9)
        every = max(1, len(df) // 8)
        ax.plot(x, y, linestyle=ls, marker=marker, markevery=every, markersize=4, color=line_color(i),
                markerfacecolor="white", label=curve.source_name)
    ax.set_xlabel("memory size (fraction of distinct pages)" if relative else "memory size (frames)")
    ax.set_ylabel("fault ratio (faults / reference, log scale)")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(True, color="0.85", which="both")
    ax.legend(frameon=False, fontsize="small")
    return fig
