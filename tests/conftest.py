"""End-to-end tests run the real `pagelab` command in a subprocess, as a user would."""

import os
import subprocess
import sys
from dataclasses import dataclass

import pytest


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_cli(*args, cwd=None, timeout=300, env=None) -> Run:
    """Runs `pagelab ARGS` with its output on a pipe, 1000 columns wide unless ``env``
    sets COLUMNS (the autouse fixture below), so that tests find table headers
    unwrapped; tests/test_console.py checks fitting to narrow widths."""
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.run([sys.executable, "-m", "pagelab", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL, env=full_env)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def assert_user_error(r: Run, *fragments: str) -> None:
    """One line on stderr starting 'pagelab: error:', containing every fragment;
    a non-zero exit; no traceback."""
    assert r.code != 0, r
    assert "Traceback" not in r.err, r.err
    lines = [l for l in r.err.splitlines() if l.strip()]
    assert len(lines) == 1, r.err
    assert lines[0].startswith("pagelab: error:"), lines[0]
    for f in fragments:
        assert f in lines[0], (f, lines[0])


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(autouse=True)
def wide_tables(monkeypatch):
    """Tables are printed 1000 columns wide in every test, in-process and by run_cli."""
    monkeypatch.setenv("COLUMNS", "1000")
