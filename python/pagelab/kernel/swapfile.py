"""`pagelab kernel setup --swap SIZE [--file PATH]` and `pagelab kernel teardown`: a swap
file created, formatted and enabled, and what was done recorded in a state file, so
that teardown undoes exactly that (swapoff, then removes the file) and nothing else.

The state file is ``$PAGELAB_STATE_DIR/kernel-state.json``, by default
``/var/lib/pagelab`` for root (``$XDG_STATE_HOME/pagelab`` otherwise). Each step is
recorded before the next is taken, so a setup interrupted half-way is still undone by
teardown."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Optional

from .._core import PagelabError
from ..files import write_text
from .host import is_root, swap_devices

DEFAULT_SWAP_FILE = "/var/tmp/pagelab.swap"
STATE_NAME = "kernel-state.json"
MIN_SWAP_BYTES = 1 << 20
_CHUNK = 1 << 20

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(i?[bB])?\s*$")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str, what: str = "--swap") -> int:
    """'256M', '1G', '1.5GiB', '4096' (bytes): binary units. One-line error otherwise."""
    m = _SIZE.match(str(text))
    if not m:
        raise PagelabError(f"{what}: expected a size such as 256M, 1G or 1.5GiB (bytes without a unit), got '{text}'")
    value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if value < MIN_SWAP_BYTES:
        raise PagelabError(f"{what}: expected at least 1M of swap, got '{text}'")
    return int(value) // 4096 * 4096


def state_dir() -> Path:
    env = os.environ.get("PAGELAB_STATE_DIR")
    if env:
        return Path(env)
    if is_root():
        return Path("/var/lib/pagelab")
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(base) / "pagelab"


def state_path() -> Path:
    return state_dir() / STATE_NAME


def recorded_setup() -> Optional[dict]:
    """What `kernel setup` recorded and teardown has not undone yet, or None."""
    path = state_path()
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise PagelabError(f"{path}: unreadable state of `pagelab kernel setup` ({err}); "
                           "undo it by hand (swapoff, rm) and remove this file") from None


def _record(state: dict) -> None:
    path = state_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(state, indent=2) + "\n")
    except OSError as err:
        raise PagelabError(f"{path}: cannot record the setup: {err.strerror or err}") from None


def _run(cmd: list) -> None:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise PagelabError(f"{cmd[0]}: not found (install util-linux)") from None
    if r.returncode != 0:
        why = (r.stderr.strip() or r.stdout.strip() or f"exit status {r.returncode}").splitlines()[-1]
        raise PagelabError(f"{' '.join(cmd)}: {why}")


def _active(path: str) -> bool:
    real = os.path.realpath(path)
    return any(os.path.realpath(d["name"]) == real for d in swap_devices())


def _write_zeros(path: Path, size: int) -> None:
    zeros = bytes(_CHUNK)
    with open(path, "r+b") as f:
        left = size
        while left > 0:
            n = min(left, _CHUNK)
            f.write(zeros[:n])
            left -= n
        f.flush()
        os.fsync(f.fileno())


def setup_swap(size: str, file: Optional[str] = None, log=print) -> dict:
    """Creates a swap file of ``size`` at ``file`` (default /var/tmp/pagelab.swap),
    mkswap, swapon; records it. Returns the recorded state."""
    nbytes = parse_size(size)
    if not is_root():
        raise PagelabError("kernel setup needs root (it enables swap system-wide): run it as root")
    existing = recorded_setup()
    if existing is not None:
        raise PagelabError(f"a swap file set up by pagelab is already recorded ({existing.get('swap_file')}, "
                           f"in {state_path()}): run `pagelab kernel teardown` first")
    path = Path(os.path.abspath(os.path.expanduser(file or DEFAULT_SWAP_FILE)))
    if path.exists():
        raise PagelabError(f"{path}: already exists; pagelab only enables a swap file it creates "
                           "(choose another --file or remove it)")
    if not path.parent.is_dir():
        raise PagelabError(f"{path.parent}: no such directory")
    stat = os.statvfs(path.parent)
    free = stat.f_bavail * stat.f_frsize
    if nbytes > free - (64 << 20):
        raise PagelabError(f"{path.parent}: {free >> 20} MiB free, too little for a {nbytes >> 20} MiB swap file")
    state = {"swap_file": str(path), "size_bytes": nbytes, "created": False, "enabled": False,
             "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError as err:
        raise PagelabError(f"{path}: cannot create: {err.strerror or err}") from None
    state["created"] = True
    _record(state)
    try:
        try:
            os.posix_fallocate(fd, 0, nbytes)
        finally:
            os.close(fd)
        _run(["mkswap", str(path)])
        try:
            _run(["swapon", str(path)])
        except PagelabError:
            # some file systems refuse fallocated (unwritten) extents for swap: write zeros
            _write_zeros(path, nbytes)
            _run(["mkswap", str(path)])
            _run(["swapon", str(path)])
        state["enabled"] = True
        _record(state)
    except (PagelabError, OSError, KeyboardInterrupt) as err:
        _undo(state)
        if isinstance(err, KeyboardInterrupt):
            raise
        msg = str(err) if isinstance(err, PagelabError) else f"{path}: {err.strerror or err}"
        raise PagelabError(f"{msg} (setup undone)") from None
    log(f"swap: {path} ({nbytes >> 20} MiB) enabled; recorded in {state_path()}")
    return state


def _undo(state: dict) -> list:
    """Undoes a recorded setup; returns what was done. The state file is removed last."""
    done = []
    path = state["swap_file"]
    if _active(path):
        _run(["swapoff", path])
        done.append(f"swapoff {path}")
    if state.get("created") and os.path.exists(path):
        os.unlink(path)
        done.append(f"removed {path}")
    try:
        state_path().unlink()
    except FileNotFoundError:
        pass
    try:
        state_dir().rmdir()  # setup made it; left alone if anything else is in it
    except OSError:
        pass
    return done


def teardown_swap(log=print) -> list:
    """Undoes what `kernel setup` recorded; nothing recorded: says so and does nothing."""
    state = recorded_setup()
    if state is None:
        log(f"nothing to tear down (no setup recorded in {state_path()})")
        return []
    if not is_root():
        raise PagelabError("kernel teardown needs root (it disables swap system-wide): run it as root")
    done = _undo(state)
    log("; ".join(done) if done else f"{state['swap_file']}: already gone; record removed")
    return done
