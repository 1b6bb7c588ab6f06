"""Where the real-program suite's traces live, and the ``suite:NAME`` trace name.

A suite member (``pagelab suite build``, ``suite.py``) is one real program captured once
under Valgrind into ``DIR/NAME.plt``, with its manifest ``DIR/NAME.json`` (command,
input recipe, package versions, capture time) written last, so a member is built when
its manifest is there. DIR is ``$PAGELAB_SUITE_DIR`` if set, else
``$XDG_CACHE_HOME/pagelab/suite``, else ``~/.cache/pagelab/suite``.

Anywhere a trace path is taken (``--trace``, ``analyze faults`` sources, a sweep's
``source.trace``, a ``[[process]]``'s ``trace``, an experiment's program), the name
``suite:NAME`` stands for the member's trace; a member not built is a one-line error
naming the command that builds it. This module is the foundation layer's part (no
engine call): the build itself is ``suite.py``'s."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional, Union

from ._core import PagelabError

PREFIX = "suite:"
ENV = "PAGELAB_SUITE_DIR"

#: the members, in the order `pagelab suite list` shows them (suite.py defines each; a
#: test keeps the two equal). hpcc-* are parts of the hpcc capture, cut at the
#: benchmark's section boundaries.
MEMBERS = ("hpcc", "hpcc-hpl", "hpcc-fft", "hpcc-stream", "hpcc-randomaccess", "gzip", "gzip-small", "bzip2", "xz",
           "gcc", "sqlite", "sort")


def suite_dir(override: Optional[Union[str, os.PathLike]] = None) -> Path:
    """The suite's cache folder: ``override``, else $PAGELAB_SUITE_DIR, else the XDG cache."""
    if override:
        return Path(os.path.expanduser(os.fspath(override)))
    env = os.environ.get(ENV)
    if env:
        return Path(os.path.expanduser(env))
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(os.path.expanduser(xdg)) if xdg else Path.home() / ".cache"
    return base / "pagelab" / "suite"


def is_suite_name(text: Union[str, os.PathLike, None]) -> bool:
    return isinstance(text, str) and text.startswith(PREFIX)


def member_of(text: str) -> str:
    """The member a ``suite:NAME`` names; a one-line error for an unknown one."""
    name = text[len(PREFIX):].strip()
    if name not in MEMBERS:
        raise PagelabError(f"{text}: no suite member '{name}' (the members: {', '.join(MEMBERS)})")
    return name


def trace_path(name: str, directory: Optional[Union[str, os.PathLike]] = None) -> Path:
    return suite_dir(directory) / f"{name}.plt"


def manifest_path(name: str, directory: Optional[Union[str, os.PathLike]] = None) -> Path:
    return suite_dir(directory) / f"{name}.json"


def build_command(name: str) -> str:
    base = "hpcc" if name.startswith("hpcc-") else name
    return f"pagelab suite build {base}"


def built_trace(name: str, directory: Optional[Union[str, os.PathLike]] = None) -> Path:
    """The trace of a built member; a one-line error naming the build command otherwise."""
    trace, manifest = trace_path(name, directory), manifest_path(name, directory)
    if not (trace.is_file() and manifest.is_file()):
        raise PagelabError(f"suite:{name}: suite member '{name}' is not built in {suite_dir(directory)} "
                           f"(run {build_command(name)})")
    return trace


def resolve(text: Union[str, os.PathLike]) -> Union[str, os.PathLike]:
    """A trace path as given, or the built trace of ``suite:NAME`` (absolute)."""
    if not is_suite_name(text):
        return text
    return os.fspath(built_trace(member_of(text)))


def manifest(name: str, directory: Optional[Union[str, os.PathLike]] = None) -> Optional[dict]:
    """A member's manifest, None when it is not built (or its manifest is unreadable)."""
    path = manifest_path(name, directory)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and trace_path(name, directory).is_file() else None
