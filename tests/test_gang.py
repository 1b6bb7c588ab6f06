"""Gang scheduling and adaptive paging from Python (gang-adaptive-paging.txt): a gang
configuration through `pagelab run` and its errors. The experiment: test_experiment_gang.py."""

import json
import textwrap

import pytest

from conftest import assert_user_error, run_cli

from pagelab import timed
from pagelab.gang import GangResult, label

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
# the switches from before issue 16: a whole instance per node, block reads
partition = "copies"
ai_reads = "block"

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
    (('partition = "copies"', 'partition = "split_next"'),
     "gang.partition: unknown variant `split_next`, expected one of `split`, `split_neighbours`, `copies`"),
    (("frames = 700", "frames = 700\n[gang2]"), "unknown top-level key 'gang2'"),
])
def test_gang_config_errors_are_one_line(tmp_path, edit, expected):
    text = GANG.format(mechanisms='["so"]').replace(*edit, 1)
    path = _write(tmp_path, text)
    r = run_cli("run", path, "--out", tmp_path / "out")
    assert_user_error(r, expected)
    assert str(path) in r.err or path.name in r.err
    assert not (tmp_path / "out" / "result.json").exists()


