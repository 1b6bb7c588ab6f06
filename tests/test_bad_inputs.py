"""The bad-input corpus (tests/bad_inputs.txt): every case ends in one line on stderr,
``pagelab: error: ...``, matching its pattern, with its exit code (1: bad input, 2: bad
command line), no traceback, no abort, and no file left behind in its working folder;
or, where a case's exit is 0, in a documented result whose stdout matches the pattern.

A case is one line: ``EXIT | PATTERN | COMMAND``. PATTERN is a regular expression searched
in the error line (in stdout for exit 0). COMMAND is the argument list after ``pagelab``,
split as a shell would, after ``{{KIND NAME: CONTENT}}`` fixtures are made in the case's
own folder (its working directory) and replaced by their names:

- ``text``: a file holding CONTENT (escapes: \\n, \\t, \\xHH); ``zst``: the same,
  zstd-compressed;
- ``plt`` / ``pltz``: a valid pagelab trace (raw / zstd) of ``scan`` (50 pages, 2 passes);
- ``flip``: that raw trace with the byte at offset CONTENT (negative: from the end)
  inverted; ``cut``: with its last CONTENT bytes cut off;
- ``line``: a zstd-compressed CSV whose first line is CONTENT MiB long;
- ``link``: a symbolic link to CONTENT (which does not exist); ``dir``: a folder.

Cases run in a fork server (tests/cli_forkserver.py): pagelab is imported once and each
case is a forked child, so 200 cases take seconds, not minutes."""

import codecs
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import pagelab

CORPUS = Path(__file__).with_name("bad_inputs.txt")
FIXTURE = re.compile(r"\{\{(\w+) ([^:}]+?)(?:: (.*?))?\}\}")


def load_cases():
    cases = []
    for number, raw in enumerate(CORPUS.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(" | ", 2)]
        if len(parts) != 3 or not parts[0].isdigit():
            raise ValueError(f"{CORPUS.name}:{number}: expected 'EXIT | PATTERN | COMMAND', got {raw!r}")
        cases.append(pytest.param(int(parts[0]), parts[1], parts[2], id=f"line{number}"))
    return cases


CASES = load_cases()


@pytest.fixture(scope="module")
def server():
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("cli_forkserver.py"))],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    yield proc
    proc.stdin.close()
    proc.wait(timeout=60)


@pytest.fixture(scope="module")
def scan_trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus-traces")
    w = pagelab.workload("scan", pages=50, passes=2)
    w.save(d / "scan.plt")
    w.save(d / "scan.plt.zst")
    return d / "scan.plt", d / "scan.plt.zst"


def _unescape(text: str) -> bytes:
    return codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape").encode("latin-1")


def make_fixture(kind: str, name: str, content: str, where: Path, traces) -> None:
    import pyarrow

    path = where / name
    raw, zst = traces
    if kind == "text":
        path.write_bytes(_unescape(content or ""))
    elif kind == "zst":
        path.write_bytes(pyarrow.compress(_unescape(content or ""), codec="zstd", asbytes=True))
    elif kind == "plt":
        path.write_bytes(raw.read_bytes())
    elif kind == "pltz":
        path.write_bytes(zst.read_bytes())
    elif kind == "flip":
        data = bytearray(raw.read_bytes())
        data[int(content)] ^= 0xFF
        path.write_bytes(bytes(data))
    elif kind == "cut":
        path.write_bytes(raw.read_bytes()[: -int(content)])
    elif kind == "line":
        line = b"1" * (int(content) << 20) + b"\n2\n"
        path.write_bytes(pyarrow.compress(line, codec="zstd", asbytes=True))
    elif kind == "link":
        path.symlink_to(content)
    elif kind == "dir":
        path.mkdir()
    else:
        raise ValueError(f"unknown fixture kind {kind!r}")


def _files(root: Path) -> set:
    return {os.path.relpath(os.path.join(d, f), root) for d, dirs, files in os.walk(root) for f in files + dirs}


@pytest.mark.parametrize("exit_code, pattern, command", CASES)
def test_bad_input(server, scan_trace, tmp_path, exit_code, pattern, command):
    def expand(m):
        make_fixture(m.group(1), m.group(2), m.group(3), tmp_path, scan_trace)
        return shlex.quote(m.group(2))

    argv = shlex.split(FIXTURE.sub(expand, command))
    before = _files(tmp_path)
    env = dict(os.environ, COLUMNS="200", PAGELAB_PROGRESS_DELAY="1000")
    server.stdin.write(json.dumps({"argv": argv, "cwd": str(tmp_path), "env": env}) + "\n")
    result = json.loads(server.stdout.readline())
    code, out, err = result["code"], result["out"], result["err"]
    where = f"pagelab {shlex.join(argv)}\nexit {code}\nstdout: {out[-2000:]}\nstderr: {err[-3000:]}"
    assert "Traceback" not in err, where
    if exit_code == 0:
        assert code == 0, where
        assert re.search(pattern, out), where
    else:
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == exit_code, where
        assert len(lines) == 1 and lines[0].startswith("pagelab: error: "), where
        assert re.search(pattern, lines[0]), where
        left = sorted(_files(tmp_path) - before)
        assert not left, f"left behind: {left}\n{where}"


def test_the_corpus_is_large():
    assert len(CASES) >= 200, len(CASES)
