"""Our numbers against a paper's: one point per number the paper prints (its value on
x, ours on y), one marker per set (a table, a claim), and the diagonal where they would
agree. Readable in black-and-white print: sets told apart by marker shape and fill."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from .style import _pyplot, _save

#: (marker, fill) per set, in order
MARKERS = [("o", "black"), ("s", "white"), ("^", "0.5"), ("D", "white"), ("v", "black"), ("x", "black"),
           ("P", "0.5"), ("*", "white"), ("<", "black"), (">", "white")]


def plot_against_paper(sets: Dict[str, Sequence[Tuple[float, float]]], path, title: str,
                       xlabel: str = "the paper's value", ylabel: str = "ours", log: bool = False,
                       diagonal: str = "ours = paper's") -> None:
    """``sets``: label -> [(paper's value, ours), ...]; ``log`` for logarithmic axes;
    ``diagonal``: the legend of the line where the two agree."""
    _save(draw_against_paper(sets, title, xlabel, ylabel, log, diagonal), path)


def draw_against_paper(sets: Dict[str, Sequence[Tuple[float, float]]], title: str,
                       xlabel: str = "the paper's value", ylabel: str = "ours", log: bool = False,
                       diagonal: str = "ours = paper's"):
    """The figure of :func:`plot_against_paper`, unsaved."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 4.6))
    values: List[float] = []
    for i, (label, pairs) in enumerate(sets.items()):
        marker, fill = MARKERS[i % len(MARKERS)]
        xs = [p for p, _ in pairs]
        ys = [o for _, o in pairs]
        values += xs + ys
        ax.scatter(xs, ys, marker=marker, facecolor=fill if marker != "x" else None, edgecolor="black",
                   color="black" if marker == "x" else None, s=34, linewidths=0.8, label=label, zorder=3)
    lo, hi = _limits(values, log)
    if lo is not None:
        ax.plot([lo, hi], [lo, hi], color="black", linestyle="--", linewidth=0.8, label=diagonal, zorder=2)
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    if log and lo is not None:
        from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # 1, 2, 5, 10, ... written out, not as powers of ten
            axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(FormatStrFormatter("%g"))
            axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, color="0.9")
    ax.set_axisbelow(True)
    ax.legend(frameon=False, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return fig


def _limits(values: List[float], log: bool) -> Tuple[Optional[float], Optional[float]]:
    values = [v for v in values if v == v and (v > 0 or not log)]
    if not values:
        return None, None
    lo, hi = min(values), max(values)
    if log:
        return lo / 1.2, hi * 1.2
    pad = 0.05 * (hi - lo) if hi > lo else max(abs(hi) * 0.05, 0.05)
    return lo - pad, hi + pad
