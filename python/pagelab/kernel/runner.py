"""Where the native runner (``pagelab-runner``, crates/runner) is. In order:
``$PAGELAB_RUNNER``; ``pagelab/bin/pagelab-runner`` inside the installed package
(`make build` copies it there, and a wheel built after it carries it); ``pagelab-runner``
on PATH (``cargo install --path crates/runner``); a source checkout's
``target/release`` (or ``target/debug``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .._core import PagelabError

RUNNER = "pagelab-runner"
PACKAGE_DIR = Path(__file__).resolve().parent.parent


def find_runner() -> str:
    env = os.environ.get("PAGELAB_RUNNER")
    if env:
        if not os.access(env, os.X_OK):
            raise PagelabError(f"PAGELAB_RUNNER={env}: not an executable file")
        return env
    candidates = [PACKAGE_DIR / "bin" / RUNNER]
    on_path = shutil.which(RUNNER)
    if on_path:
        candidates.append(Path(on_path))
    checkout = PACKAGE_DIR.parent.parent
    candidates += [checkout / "target" / "release" / RUNNER, checkout / "target" / "debug" / RUNNER]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    raise PagelabError(f"{RUNNER}: not found (looked in $PAGELAB_RUNNER, {PACKAGE_DIR / 'bin'}, PATH, "
                       f"{checkout / 'target'}): build it with `make build` or "
                       "`cargo install --path crates/runner`")
