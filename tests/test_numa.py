"""The NUMA machine from Python (numa-page-migration.txt): a [numa] configuration through
`pagelab run` and its errors. The experiment: test_experiment_numa.py."""

import json
import textwrap

import pytest

from conftest import assert_user_error, run_cli

from pagelab import numa

CONFIG = """\
[numa]
page_size = 2048
migration = "{migration}"
history = "usage"

[numa.workload]
name = "vecmat"
params = {{ n = 128, procs = 4, repeat = 10 }}
"""


def _write(tmp_path, text, name="numa.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_run_a_numa_config(tmp_path):
    path = _write(tmp_path, CONFIG.format(migration="daemons"))
    r = run_cli("run", path, "--out", tmp_path / "out")
    assert r.code == 0, r.err
    assert "vecmat on 4 processors" in r.out and "migrations" in r.out
    saved = json.loads((tmp_path / "out" / "result.json").read_text())
    assert saved["result"]["migrations"] > 0 and len(saved["result"]["end_ns"]) == 4


def test_api_daemons_between_none_and_foresight():
    runs = {m: numa.run_numa({"numa": {"page_size": 2048, "migration": m,
                                       "workload": {"name": "vecmat", "params": {"n": 128, "procs": 4, "repeat": 10}}}})
            for m in ("none", "foresight", "daemons")}
    assert runs["foresight"].mean_s < runs["daemons"].mean_s < runs["none"].mean_s
    assert runs["none"].migrations == 0 and runs["foresight"].migrations > 0
    assert {w["name"] for w in numa.numa_workloads()} == {"vecmat", "spmv-csr", "jacobi-numa", "wave"}


@pytest.mark.parametrize("change, says", [
    (("history = \"usage\"", "history = \"aging:9\""), "numa.history"),
    (("page_size = 2048", "page_size = 1000"), "numa.page_size"),
    (("page_size = 2048", "page_size = 2048\nbogus = 1"), "unknown key 'bogus'"),
    (("name = \"vecmat\"", "name = \"nosuch\""), "nosuch"),
    (("n = 128", "n = 0"), "'n'"),
    (("procs = 4", "procs = 3"), "procs"),
])
def test_numa_config_errors_are_one_line(tmp_path, change, says):
    text = CONFIG.format(migration="daemons").replace(*change)
    r = run_cli("run", _write(tmp_path, text), "--out", tmp_path / "out")
    assert_user_error(r, says)
    assert not (tmp_path / "out" / "result.json").exists()


