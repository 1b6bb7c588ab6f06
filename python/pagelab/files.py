"""Output files written whole or not at all: write to a temporary file beside the
target, then rename. A failed or interrupted run leaves nothing half-written."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator, Union


@contextlib.contextmanager
def atomic_path(target: Union[str, os.PathLike]) -> Iterator[Path]:
    """Yields a temporary path in the target's directory; renames it onto the target
    when the block succeeds, removes it otherwise."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    # mkstemp makes the file private (0600); give it the mode a plain open() would
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text(target: Union[str, os.PathLike], text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text)
