"""Figures of timed-system runs (matplotlib, Agg): memory-time graphs (MAD, RSS, NAP, NPF:
token-ordered-lru.txt figures 1-10 and 12-16) and space-time graphs (figure 11).
They take the engine's result dict (``SystemResult.raw``), so a saved result.json can be
plotted again. Readable in black-and-white print: black lines told apart by style and
marker, gray levels told apart by a legend with outlined patches."""

from __future__ import annotations

from typing import Optional, Sequence

from .style import STYLES, _pyplot, _save

#: space-time states, drawn darkest first: (label, gray level); untouched pages are white
SPACE_TIME_STATES = [("visited in the last interval", "0.0"),
                     ("swapped out", "0.5"),
                     ("resident, not visited", "0.82")]


def _series(raw: dict, process: str) -> Optional[dict]:
    for s in raw.get("series", []):
        if s["process"] == process:
            return s
    return None


def _line(ax, x, y, i: int, label: str) -> None:
    ls, marker = STYLES[i % len(STYLES)]
    every = max(1, len(x) // 10)
    ax.plot(x, y, linestyle=ls, marker=marker, markevery=every, markersize=4, color="black",
            markerfacecolor="white", linewidth=1.2, label=label)


def _token_grabs(raw: dict, process: str) -> list:
    return [e["t_ns"] / 1e9 for e in raw.get("token_events", [])
            if e["process"] == process and e["event"] in ("grab", "handover")]


def plot_memory(raw: dict, process: str, path, title: Optional[str] = None) -> None:
    """Memory-time graph of one process: MAD, RSS and NAP in pages (top), major faults per
    sampling interval (NPF, bottom), against simulated time in seconds."""
    _save(draw_memory(raw, process, title), path)


def draw_memory(raw: dict, process: str, title: Optional[str] = None):
    """The figure of :func:`plot_memory`, unsaved (``SystemResult.plot``)."""
    plt = _pyplot()
    s = _series(raw, process) or {"t_s": [], "mad": [], "rss": [], "nap": [], "npf": []}
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 1.3]})
    for i, (key, label) in enumerate([("mad", "MAD (allocated)"), ("rss", "RSS (resident)"),
                                      ("nap", "NAP (accessed in interval)")]):
        _line(ax, s["t_s"], s[key], i, label)
    grabs = _token_grabs(raw, process)
    if grabs:
        ax.plot(grabs, [0] * len(grabs), linestyle="none", marker="|", markersize=14, color="black",
                label="token taken")
    ax.set_ylabel("memory (pages)")
    ax.set_ylim(bottom=0)
    ax.grid(True, color="0.85")
    ax.legend(frameon=False, fontsize="small", loc="best")
    ax.set_title(title or f"{process}: memory over time")
    ax2.step(s["t_s"], s["npf"], where="pre", color="black", linewidth=1.0)
    ax2.fill_between(s["t_s"], s["npf"], step="pre", color="0.75")
    ax2.set_ylabel("NPF (major faults\nper interval)")
    ax2.set_xlabel("time (simulated s)")
    ax2.set_ylim(bottom=0)
    ax2.grid(True, color="0.85")
    fig.tight_layout()
    return fig


def space_time_matrix(entry: dict):
    """(states[bucket, sample], x edges in s, y edges in pages): per cell the state of
    most of the bucket's touched pages: 1 visited, 2 swapped, 3 resident not visited
    (ties go to the darker state); 0 when none of its pages has been touched yet."""
    import numpy as np

    t = np.asarray(entry.get("t_s", []), dtype=float)
    visited = np.asarray(entry.get("visited", []), dtype=float)
    resident = np.asarray(entry.get("resident", []), dtype=float)
    swapped = np.asarray(entry.get("swapped", []), dtype=float)
    ppb = max(int(entry.get("pages_per_bucket", 1)), 1)
    if visited.ndim != 2 or visited.size == 0:
        return np.zeros((1, 1), dtype=int), np.array([0.0, 1.0]), np.array([0.0, float(ppb)])
    stack = np.stack([visited, swapped, resident])  # state, sample, bucket; darkest first
    # argmax takes the first maximum, so ties go to the darker state
    states = np.where(stack.sum(axis=0) > 0, np.argmax(stack, axis=0) + 1, 0).T  # bucket, sample
    # sample i describes the interval that ends at t[i]
    t = t[: states.shape[1]]
    if len(t) < states.shape[1]:
        t = np.arange(1, states.shape[1] + 1, dtype=float)
    dt = t[1] - t[0] if len(t) >= 2 else (t[0] if t[0] > 0 else 1.0)
    x = np.concatenate([[t[0] - dt], t])
    y = np.arange(states.shape[0] + 1, dtype=float) * ppb
    return states, x, y


def _space_time_axes(ax, entry: dict, title: str) -> None:
    from matplotlib.colors import BoundaryNorm, ListedColormap

    states, x, y = space_time_matrix(entry)
    cmap = ListedColormap(["1.0"] + [g for _, g in SPACE_TIME_STATES])  # 0 white, 1 visited, ...
    ax.pcolormesh(x, y, states, cmap=cmap, norm=BoundaryNorm([-0.5, 0.5, 1.5, 2.5, 3.5], 4),
                  shading="flat", rasterized=True)
    ax.set_xlabel("time (simulated s)")
    ax.set_ylabel("virtual page")
    ax.set_title(title)


def _space_time_legend(fig_or_ax, **kw) -> None:
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=g, edgecolor="black", label=label) for label, g in SPACE_TIME_STATES]
    handles.append(Patch(facecolor="white", edgecolor="black", label="not touched yet"))
    fig_or_ax.legend(handles=handles, frameon=False, fontsize="small", **kw)


def plot_space_time(entry: dict, path, title: Optional[str] = None) -> None:
    """Space-time graph of one process (figure 11): x time, y virtual pages in buckets,
    each cell gray by the state of most of its touched pages."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    _space_time_axes(ax, entry, title or f"{entry.get('process', '')}: pages over time")
    _space_time_legend(fig, loc="lower center", ncol=4, bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    _save(fig, path)
    plt.close(fig)


def plot_space_time_pair(entries: Sequence[dict], path, title: str) -> None:
    """Space-time graphs of several processes side by side (figure 11: small and large)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(entries), figsize=(6 * len(entries), 4.5), squeeze=False)
    for ax, entry in zip(axes[0], entries):
        _space_time_axes(ax, entry, entry.get("process", ""))
    fig.suptitle(title)
    _space_time_legend(fig, loc="lower center", ncol=4, bbox_to_anchor=(0.5, -0.01))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    _save(fig, path)
    plt.close(fig)


def plot_pair(runs: Sequence[tuple], processes: Sequence[str], path, title: str) -> None:
    """MAD and RSS of each process (columns) under each policy (rows): the memory-time
    graphs of figures 6-10 (global LRU) and 12-16 (token). ``runs`` is a list of
    (row label, result dict)."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(runs), len(processes), figsize=(5.5 * len(processes), 3.3 * len(runs)),
                             sharex=True, sharey="col", squeeze=False)
    for r, (label, raw) in enumerate(runs):
        for c, name in enumerate(processes):
            ax = axes[r][c]
            s = _series(raw, name) or {"t_s": [], "mad": [], "rss": []}
            _line(ax, s["t_s"], s["mad"], 0, "MAD")
            _line(ax, s["t_s"], s["rss"], 1, "RSS")
            grabs = _token_grabs(raw, name)
            if grabs:
                ax.plot(grabs, [0] * len(grabs), linestyle="none", marker="|", markersize=12,
                        color="black", label="token taken")
            p = next((p for p in raw.get("processes", []) if p["name"] == name), None)
            extra = f", slowdown {p['slowdown']:.2f}, {p['major_faults']:,} faults" if p else ""
            ax.set_title(f"{name} under {label}{extra}", fontsize="medium")
            ax.set_ylim(bottom=0)
            ax.grid(True, color="0.85")
            if c == 0:
                ax.set_ylabel("memory (pages)")
            if r == len(runs) - 1:
                ax.set_xlabel("time (simulated s)")
            if r == 0 and c == 0:
                ax.legend(frameon=False, fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
