"""A progress bar on stderr for runs longer than a second (rich), fed by the engine's
per-batch progress callback. In Jupyter the same bar is drawn as HTML in the cell's
output and updated in place. Quiet runs and other non-terminals get no bar unless
forced."""

from __future__ import annotations

import io
import os
import sys
import time
from typing import Optional


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython's ZMQ shell), where stderr is not a terminal
    but a bar is still wanted."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001 - an IPython without a running shell
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class NotebookView:
    """Shows a rich Progress in a Jupyter cell: rendered to HTML with rich's own export
    and put in one display area that each refresh replaces (IPython's display handles,
    no widgets needed). At most ``per_second`` refreshes a second, plus the last."""

    def __init__(self, per_second: float = 4.0):
        from IPython.display import HTML, display

        self._html = HTML
        self.handle = display(HTML(""), display_id=True)
        self.interval = 1.0 / per_second
        self.last = 0.0

    def refresh(self, progress, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        from rich.console import Console

        console = Console(record=True, file=io.StringIO(), width=100, force_jupyter=False,
                          force_terminal=True, color_system="truecolor")
        console.print(progress.get_renderable())
        self.handle.update(self._html(console.export_html(inline_styles=True, code_format="<pre>{code}</pre>")))


class ProgressBar:
    """Callable progress hook: ``hook(records_done)``. The bar appears only once the run
    has lasted ``delay`` seconds, so short runs print nothing."""

    def __init__(self, description: str, total: Optional[int] = None, enabled: Optional[bool] = None,
                 delay: Optional[float] = None):
        self.description = description
        self.total = total
        self.enabled = (sys.stderr.isatty() or in_notebook()) if enabled is None else enabled
        # PAGELAB_PROGRESS_DELAY overrides the one-second delay (tests set it to 0).
        self.delay = float(os.environ.get("PAGELAB_PROGRESS_DELAY", "1.0")) if delay is None else delay
        self.start = time.monotonic()
        self._progress = None
        self._notebook: Optional[NotebookView] = None
        self._task = None
        self._offset = 0
        self._last = 0
        #: how many times the engine restarted its count
        self.passes = 0

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def next_pass(self) -> None:
        """The engine restarts its count (e.g. OPT's pre-pass, then the replay)."""
        self._offset += self._last
        self._last = 0
        self.passes += 1

    def __call__(self, done: int) -> None:
        if done < self._last:
            self.next_pass()
        self._last = done
        if not self.enabled:
            return
        if self._progress is None:
            if time.monotonic() - self.start < self.delay:
                return
            from rich.console import Console
            from rich.progress import Progress

            self._progress = Progress(*self._columns(), console=Console(stderr=True), transient=False)
            if in_notebook():
                self._notebook = NotebookView()
            else:
                self._progress.start()
            self._task = self._progress.add_task(self.description, **self._task_fields())
        self._show(done)
        if self._notebook is not None:
            self._notebook.refresh(self._progress)

    # What the bar shows; subclasses measuring something else override these three.

    def _columns(self) -> list:
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        return [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("records"), TimeElapsedColumn(), TimeRemainingColumn()]

    def _task_fields(self) -> dict:
        return {"total": self.total}

    def _show(self, done: int) -> None:
        completed = self._offset + done
        if self.total is not None and completed > self.total:
            # a pass the caller did not count: grow the total rather than run past it
            self.total = completed
            self._progress.update(self._task, total=self.total)
        self._progress.update(self._task, completed=completed)

    def close(self) -> None:
        if self._progress is not None:
            if self._notebook is not None:
                self._notebook.refresh(self._progress, force=True)
            else:
                self._progress.stop()
            self._progress = None
