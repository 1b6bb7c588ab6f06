"""The NUMA machine from Python (numa-page-migration.txt): a [numa] configuration through
`pagelab run`, its errors, the experiment file's checks, and `pagelab reproduce numa
--quick` end to end."""

import json
import re
import textwrap

import pandas as pd
import pytest

from conftest import assert_user_error, run_cli

import pagelab
from pagelab import numa
from pagelab.reproduce import experiment_path
from pagelab.reproduce_numa import check_numa_experiment, load_numa_experiment

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


def test_the_experiment_file_checks():
    data = load_numa_experiment(experiment_path("numa"))
    assert [t["name"] for t in data["table"]] == [f"table{i}" for i in range(1, 9)]
    for change, says in [
        (lambda d: d.update(bogus=1), "unknown top-level key 'bogus'"),
        (lambda d: d["table"][0].update(rows=["nosuch"]), "table[0].rows"),
        (lambda d: d["table"][0]["paper"].update({"No migration": [1.0]}), "one number per column"),
        (lambda d: d["configs"].update(x={"bogus": 1}), "configs.x: unknown key 'bogus'"),
        (lambda d: d["table"][0]["columns"][0].update(page_size="1K"), "page_size"),
    ]:
        d = load_numa_experiment(experiment_path("numa"))
        change(d)
        with pytest.raises(pagelab.PagelabError, match=re.escape(says)):
            check_numa_experiment(d, "numa.toml")


def test_reproduce_numa_quick(tmp_path):
    out = tmp_path / "out"
    r = run_cli("reproduce", "numa", "--quick", "--out", out)
    assert r.code == 0, r.err
    assert "Table 5" in r.out and "acceptance met" in r.out, r.out[-2000:]
    table = pd.read_csv(out / "table.csv", keep_default_na=False)
    assert set(table["table"]) == {f"table{i}" for i in range(1, 9)}
    assert (table["mean_s"] > 0).all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["acceptance"]["met"], summary["acceptance"]
