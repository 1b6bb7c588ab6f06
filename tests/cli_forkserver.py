"""Runs `pagelab` command lines fast for the bad-input corpus: this process imports
pagelab and its heavy dependencies once, then forks a child per command line, which
runs the CLI's main() with its own working directory, environment, stdout and stderr,
and exits with main()'s code (or dies by its signal: an abort shows as 134). A child is
a real process with a real exit status, as from a shell; only the start-up is shared.

Protocol: one JSON object a line on stdin, {"argv": [...], "cwd": str, "env": {...}};
one JSON object a line on stdout, {"code": int, "out": str, "err": str}.

The server never runs the engine itself: rayon's worker threads must not exist when it
forks, or a child that runs the engine would wait for threads it does not have."""

import json
import os
import sys
import tempfile

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import matplotlib  # noqa: E402,F401 - imported once here, shared by every child
import numpy  # noqa: E402,F401
import pandas  # noqa: E402,F401
import rich.console  # noqa: E402,F401

from pagelab import cli  # noqa: E402


def run_case(request: dict) -> dict:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 70
            try:
                os.chdir(request["cwd"])
                os.environ.clear()
                os.environ.update(request["env"])
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdout = os.fdopen(1, "w", closefd=False)
                sys.stderr = os.fdopen(2, "w", closefd=False)
                code = cli.main(request["argv"])
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 1
            except BaseException:  # a traceback is what the corpus must never see
                import traceback

                traceback.print_exc()
                code = 99
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code if isinstance(code, int) else 1)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        code = 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell says
        out.seek(0)
        err.seek(0)
        return {"code": code, "out": out.read().decode(errors="replace"), "err": err.read().decode(errors="replace")}


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(run_case(json.loads(line))) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
