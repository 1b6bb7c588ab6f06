"""The figures' common style and saving: black-and-white readable line styles, figures
built without pyplot's global state, and saving that is whole or nothing (a PNG always
with an SVG beside it)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import List, Union

from .._core import PagelabError
from ..files import atomic_path

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


def figure_files(path: Union[str, os.PathLike]) -> List[Path]:
    """The files a figure saved to ``path`` makes: the path, and for a ``.png`` the
    ``.svg`` beside it (``_save``)."""
    path = Path(os.fspath(path))
    return [path, path.with_suffix(".svg")] if path.suffix.lower() == ".png" else [path]


def _save(fig, path: Union[str, os.PathLike]) -> None:
    """Writes the figure to ``path`` (format from the suffix), whole or not at all. A
    ``.png`` is also written as ``.svg`` beside it (for print and scaling); both are
    renamed into place only once both are drawn. The figure's title goes into each file's
    metadata (the report's caption); the SVG carries no date and fixed element ids, so the
    same figure gives the same file."""
    import matplotlib

    check_figure_path(path)
    title = figure_title(fig)
    targets = [(target, target.suffix[1:].lower()) for target in figure_files(path)]
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
