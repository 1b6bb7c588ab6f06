"""Output files written whole or not at all: write to a temporary file beside the
target, then rename. A failed or interrupted run leaves nothing half-written."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator, Union

from ._core import PagelabError


def check_not_dangling(path: Path) -> None:
    """A symbolic link to nothing cannot be written through: say so, instead of the
    system's "File exists"."""
    if path.is_symlink() and not path.exists():
        raise PagelabError(f"{path}: is a symbolic link to {os.readlink(path)}, which does not exist")


def output_dir(path: Union[str, os.PathLike]) -> Path:
    """The output folder ``path``, created with its parents if missing; a one-line
    PagelabError when a file or a dangling symbolic link is in the way."""
    path = Path(path)
    check_not_dangling(path)
    if path.exists() and not path.is_dir():
        raise PagelabError(f"{path}: is a file, expected an output folder")
    with parent_dirs(path / "x"):
        pass
    return path


@contextlib.contextmanager
def parent_dirs(target: Union[str, os.PathLike]) -> Iterator[None]:
    """Creates the missing folders above ``target`` (every output path of pagelab may
    name new folders); when the block fails, removes again those it created that are
    still empty, so a failed command leaves nothing behind."""
    created = []
    parent = Path(target).parent
    while not parent.exists() and parent != parent.parent:
        check_not_dangling(parent)
        created.append(parent)
        parent = parent.parent
    if not parent.is_dir():
        raise PagelabError(f"{parent}: is a file, expected a folder")
    for d in reversed(created):
        d.mkdir()
    try:
        yield
    except BaseException:
        for d in created:
            try:
                d.rmdir()
            except OSError:
                break
        raise


@contextlib.contextmanager
def atomic_path(target: Union[str, os.PathLike]) -> Iterator[Path]:
    """Yields a temporary path in the target's directory; renames it onto the target
    when the block succeeds, removes it otherwise (and the folders it created)."""
    target = Path(target)
    with parent_dirs(target):
        with _atomic_in_existing_dir(target) as tmp:
            yield tmp


@contextlib.contextmanager
def _atomic_in_existing_dir(target: Path) -> Iterator[Path]:
    import tempfile  # here: it costs every command 3 ms of its start, and few write files

    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:
        raise OSError(err.errno, err.strerror, os.fspath(target)) from None
    os.close(fd)
    # mkstemp makes the file private (0600); give it the mode a plain open() would
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    except OSError as err:
        if err.filename in (tmp, tmp_path):
            # the user named the target, not our temporary file
            raise OSError(err.errno, err.strerror, os.fspath(target)) from None
        raise
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text(target: Union[str, os.PathLike], text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text)
