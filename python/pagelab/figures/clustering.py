"""Page-out clustering figures (mclustering-pageout.txt figures 3 and 4): execution time,
disk writes and page-ins per memory ratio under each configuration, and the disk writes
by pages per write. They take plain numbers per run (``time_s``, ``disk_writes``,
``page_ins``, ``write_sizes``: writes by size, ``write_sizes[k]`` = writes of k pages),
so saved results can be drawn again."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from .style import _pyplot, _save

#: bar styles for black-and-white print: (face gray, hatch), told apart by the legend
BAR_STYLES = [("white", ""), ("0.45", ""), ("white", "///"), ("0.8", "///"), ("white", "xx"), ("0.6", "..")]


def _bars(ax, groups: Sequence[str], series: Sequence[tuple], width: float = 0.8, headroom: float = 1.25) -> None:
    """Grouped bars: ``series`` is a list of (label, values, style index), one value per group;
    the y axis reaches ``headroom`` times the tallest bar, leaving room for a legend."""
    import numpy as np

    x = np.arange(len(groups))
    n = max(len(series), 1)
    top = max([v for _, values, _ in series for v in values if v is not None] + [0])
    w = width / n
    for i, (label, values, style) in enumerate(series):
        face, hatch = BAR_STYLES[style % len(BAR_STYLES)]
        ax.bar(x - width / 2 + (i + 0.5) * w, values, w, label=label, color=face, hatch=hatch,
               edgecolor="black", linewidth=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(groups)
    # headroom above the tallest bar for the legend
    ax.set_ylim(0, top * headroom if top > 0 else 1)
    ax.grid(True, axis="y", color="0.85")
    ax.set_axisbelow(True)


def write_size_bins(write_sizes: Sequence[int], max_pages: int = 16) -> Tuple[List[str], List[int]]:
    """(labels, counts) of disk writes by pages per write: 1..max_pages, plus a last
    "max_pages+1+" bin when any write was larger (index 0 of ``write_sizes`` unused)."""
    counts = [int(write_sizes[k]) if k < len(write_sizes) else 0 for k in range(1, max_pages + 1)]
    labels = [str(k) for k in range(1, max_pages + 1)]
    over = sum(int(v) for v in write_sizes[max_pages + 1:])
    if over:
        labels.append(f"{max_pages + 1}+")
        counts.append(over)
    return labels, counts


def plot_clustering(rows: Sequence[dict], labels: Sequence[str], path, title: str,
                    dist_ratio: Optional[float] = None, dist_pages: int = 16,
                    configs: Sequence[str] = ("bsd", "mclustering")):
    """Figures 3 and 4 of mclustering-pageout.txt for one workload: (a) execution time
    under each configuration per VM/PM ratio, (b) disk writes (page-out I/Os) and
    page-ins, (c) disk writes by pages per write at ``dist_ratio`` (1..dist_pages, larger
    ones in a last bar; default: the middle ratio). ``rows``: per ratio, ``ratio`` and
    per configuration key (``configs``) the run's numbers (``time_s``, ``disk_writes``,
    ``page_ins``, ``write_sizes``); ``labels`` name the configurations."""
    plt = _pyplot()
    fig, (ax_a, ax_b, ax_c) = plt.subplots(1, 3, figsize=(16, 4.6),
                                           gridspec_kw={"width_ratios": [1, 1.4, 2]})
    groups = [f"{r['ratio']:g}" for r in rows]
    _bars(ax_a, groups, [(labels[i], [r[c]["time_s"] for r in rows], i) for i, c in enumerate(configs)])
    ax_a.set_xlabel("virtual memory / physical memory")
    ax_a.set_ylabel("execution time (simulated s)")
    ax_a.set_title("(a) execution time")
    ax_a.legend(frameon=False, fontsize="small", loc="upper left", ncol=2)

    series = [(f"disk writes, {labels[i]}", [r[c]["disk_writes"] for r in rows], i)
              for i, c in enumerate(configs)]
    series += [(f"page-ins, {labels[i]}", [r[c]["page_ins"] for r in rows], 2 + i)
               for i, c in enumerate(configs)]
    _bars(ax_b, groups, series, headroom=1.4)
    ax_b.set_xlabel("virtual memory / physical memory")
    ax_b.set_ylabel("disk I/Os (count)")
    ax_b.set_title("(b) disk writes (page-outs) and page-ins")
    ax_b.legend(frameon=False, fontsize="small", loc="upper left", ncol=2)

    if dist_ratio is None:
        dist_ratio = rows[len(rows) // 2]["ratio"]
    row = next((r for r in rows if r["ratio"] == dist_ratio), rows[len(rows) // 2])
    bins = [write_size_bins(row[c].get("write_sizes", []), dist_pages) for c in configs]
    names = max((b[0] for b in bins), key=len)
    _bars(ax_c, names, [(labels[i], b[1] + [0] * (len(names) - len(b[1])), i) for i, b in enumerate(bins)])
    ax_c.set_xlabel("cluster size (pages per disk write)")
    ax_c.set_ylabel("disk writes (count)")
    ax_c.set_title(f"(c) disk writes by cluster size at {row['ratio']:g}x")
    ax_c.legend(frameon=False, fontsize="small", loc="upper right")

    fig.suptitle(title)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return fig
