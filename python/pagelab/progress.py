"""A progress bar on stderr for runs longer than a second (rich), fed by the engine's
per-batch progress callback. Quiet runs and non-terminals get no bar unless forced."""

from __future__ import annotations

import os
import sys
import time
from typing import Optional


class ProgressBar:
    """Callable progress hook: ``hook(records_done)``. The bar appears only once the run
    has lasted ``delay`` seconds, so short runs print nothing."""

    def __init__(self, description: str, total: Optional[int] = None, enabled: Optional[bool] = None,
                 delay: Optional[float] = None):
        self.description = description
        self.total = total
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        # PAGELAB_PROGRESS_DELAY overrides the one-second delay (tests set it to 0).
        self.delay = float(os.environ.get("PAGELAB_PROGRESS_DELAY", "1.0")) if delay is None else delay
        self.start = time.monotonic()
        self._progress = None
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
            self._progress.start()
            self._task = self._progress.add_task(self.description, **self._task_fields())
        self._show(done)

    # What the bar shows; subclasses measuring something else override these three.

    def _columns(self) -> list:
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        return [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("records"), TimeElapsedColumn(), TimeRemainingColumn()]

    def _task_fields(self) -> dict:
        return {"total": self.total}

    def _show(self, done: int) -> None:
        self._progress.update(self._task, completed=self._offset + done)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
