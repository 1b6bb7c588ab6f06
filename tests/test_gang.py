"""Gang scheduling and adaptive paging from Python (gang-adaptive-paging.txt): a gang
configuration through `pagelab run`, its errors, the experiment file's checks, and
`pagelab reproduce gang --quick` end to end."""

import json
import textwrap

import pytest

from conftest import assert_user_error, run_cli

from pagelab import system, timed
from pagelab.gang import GangResult, label
from pagelab.reproduce import experiment_path
from pagelab.reproduce_gang import check_gang, load_gang

GANG = """\
[system]
frames = 700
reclaim = "clock"
sample_ms = 250

[disk]
model = "hdd"
stream_sequential = true

[swap]
read_around = "linux"
free_on_write = true

[gang]
nodes = 2
quantum_s = 2
mechanisms = {mechanisms}

[[process]]
name = "a"
workload = "scan"
params = {{ pages = 400, passes = 200, write = true }}
cpu_ns_per_ref = 100000
superstep_refs = 4000

[[process]]
name = "b"
workload = "scan"
params = {{ pages = 400, passes = 200, write = true }}
cpu_ns_per_ref = 100000
superstep_refs = 4000
"""


def _write(tmp_path, text, name="gang.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_labels():
    assert label([]) == "LRU"
    assert label(["bg", "so", "ai", "ao"]) == "so/ao/ai/bg"


def test_run_gang_from_python(tmp_path):
    lru = timed.run_system(_write(tmp_path, GANG.format(mechanisms="[]"), "lru.toml"))
    adaptive = timed.run_system(_write(tmp_path, GANG.format(mechanisms='["so", "ao", "ai", "bg"]')))
    assert isinstance(lru, GangResult) and len(lru.nodes) == 2
    jobs = adaptive.jobs
    assert list(jobs["job"]) == ["a", "b"] and (jobs["end_s"] > jobs["dedicated_s"]).all()
    # the same instant on both nodes, and the adaptive paging pays off on this pair
    assert adaptive.job_end_s("b") == adaptive.end_s
    assert adaptive.end_s < lru.end_s
    m = adaptive.mechanisms
    assert list(m["node"]) == [0, 1] and (m["ai_pages"] > 0).all() and (m["ao_pages"] > 0).all()
    act = adaptive.paging_activity
    assert set(act["node"]) == {0, 1} and act["pages_in_per_s"].sum() > 0
    assert len(adaptive.switch_times_s) >= 4


def test_pagelab_run_writes_a_gang_report(tmp_path):
    path = _write(tmp_path, GANG.format(mechanisms='["so", "ao"]'))
    out = tmp_path / "out"
    r = run_cli("run", path, "--out", out)
    assert r.code == 0, r.err
    assert "completion (s)" in r.out and "so/ao" in r.out and "switches" in r.out
    for name in ("result.json", "jobs.csv", "mechanisms.csv", "paging.csv", "paging-activity.png"):
        assert (out / name).stat().st_size > 0, name
    raw = json.loads((out / "result.json").read_text())
    assert [j["name"] for j in raw["jobs"]] == ["a", "b"] and len(raw["nodes"]) == 2


@pytest.mark.parametrize("edit, expected", [
    (("quantum_s = 2", "quantum_s = 2\nbogus = 1"), "gang.bogus: unknown field `bogus`"),
    (("nodes = 2", "nodes = 0"), "gang.nodes: expected 1 to 1024 nodes, got 0"),
    (('mechanisms = ["so"]', 'mechanisms = ["so", "xx"]'), "gang.mechanisms"),
    (("superstep_refs = 4000\n\n", "superstep_refs = 0\n\n"), "process[0].superstep_refs: expected at least 1"),
    (("frames = 700", "frames = 700\n[gang2]"), "unknown top-level key 'gang2'"),
])
def test_gang_config_errors_are_one_line(tmp_path, edit, expected):
    text = GANG.format(mechanisms='["so"]').replace(*edit, 1)
    path = _write(tmp_path, text)
    r = run_cli("run", path, "--out", tmp_path / "out")
    assert_user_error(r, expected)
    assert str(path) in r.err or path.name in r.err
    assert not (tmp_path / "out" / "result.json").exists()


def test_the_experiment_file_checks():
    data = load_gang(experiment_path("gang"))
    assert [w["name"] for w in data["workload"]] == ["LU", "SP", "CG", "IS", "MG"]
    assert data["parallel"]["nodes"] == [2, 4] and data["breakdown"]["workload"] == "LU"

    def bad(edit, what):
        d = json.loads(json.dumps(data))
        edit(d)
        with pytest.raises(Exception) as e:
            check_gang(d, "gang.toml")
        assert what in str(e.value) and str(e.value).startswith("gang.toml: ")

    bad(lambda d: d["experiment"].update(memory_ratio=2.5), "experiment.memory_ratio")
    bad(lambda d: d["base"]["system"].update(frames=10), "base.system.frames")
    bad(lambda d: d["base"]["gang"].update(mechanisms=["so"]), "base.gang.mechanisms")
    bad(lambda d: d["parallel"].update(workloads=["XX"]), "parallel.workloads")
    bad(lambda d: d["workload"][0].update(color="red"), "workload 'LU': unknown key 'color'")
    bad(lambda d: d["experiment"]["quick"].update(speed=2), "experiment.quick: unknown key 'speed'")


def test_reproduce_gang_quick(tmp_path):
    out = tmp_path / "gang"
    r = run_cli("reproduce", "gang", "--quick", "--out", out, timeout=1800)
    assert r.code == 0, r.err
    summary = json.loads((out / "summary.json").read_text())
    assert [row["workload"] for row in summary["serial"]] == ["LU", "SP", "CG", "IS", "MG"]
    assert {(row["workload"], row["nodes"]) for row in summary["parallel"]} == {
        (w, n) for w in ("LU", "CG", "IS") for n in (2, 4)}
    for row in summary["serial"] + summary["parallel"]:
        lru, all4 = row["LRU"], row["configs"]["so/ao/ai/bg"]
        # every instance pages, and the batch baseline is the shortest
        assert lru["pages_paged"] > 0 and row["batch_s"] <= min(lru["completion_s"], all4["completion_s"])
        assert all4["overhead_s"] < lru["overhead_s"], row
    assert [r_["nodes"] for r_ in summary["breakdown"]] == [1, 2, 4]
    assert summary["acceptance"]["met"], summary["acceptance"]
    assert "figure 9" in r.out and "acceptance" in r.out
    for fig in summary["figures"]:
        assert (out / fig).stat().st_size > 5000, fig
    assert (out / "table.csv").read_text().startswith("part,workload,nodes,config,")
