"""The timed system's Python front: configuration loading and its errors, figures from
synthetic results, and the `pagelab run` command end to end. The token-lru experiment:
test_experiment_token_lru.py."""

import json
import textwrap

import pytest

from conftest import assert_user_error, run_cli

import pagelab
from pagelab import _core, system
from pagelab.figures.memory import plot_memory, plot_pair, plot_space_time, plot_space_time_pair

needs_engine = pytest.mark.skipif(not hasattr(_core, "run_system"),
                                  reason="engine has no run_system binding yet")

SMALL = """\
[system]
frames = 150
sample_ms = 1.0

[disk]
model = "ssd"

[token]
policy = "paper"

[[process]]
name = "lu-a"
workload = "lu"
params = { n = 80 }

[[process]]
name = "scan-b"
workload = "scan"
params = { pages = 120, passes = 5 }
start_ms = 10.0
"""


def write(tmp_path, text, name="sys.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


# ---------------------------------------------------------------- configuration

def test_load_config_renames_processes_and_resolves_traces(tmp_path):
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "t.csv").write_text("1\n2\n")
    path = write(tmp_path, SMALL + '\n[[process]]\nname = "t"\ntrace = "traces/t.csv"\n')
    cfg, name = system.load_config(path)
    assert name == str(path)
    assert "process" not in cfg and [p["name"] for p in cfg["processes"]] == ["lu-a", "scan-b", "t"]
    assert cfg["processes"][2]["trace"] == str(tmp_path / "traces" / "t.csv")
    assert cfg["system"]["frames"] == 150 and cfg["processes"][0]["params"] == {"n": 80}
    json.dumps(cfg)  # what goes to the engine


def test_load_config_from_dict():
    cfg, name = system.load_config({"system": {"frames": 10}, "process": [{"name": "a", "workload": "scan"}]})
    assert name == "config" and cfg["processes"][0]["name"] == "a"


def test_toml_syntax_error_is_one_line_with_file_and_line(tmp_path):
    path = write(tmp_path, "[system]\nframes = 100\nquantum_ms = = 3\n", "bad.toml")
    with pytest.raises(pagelab.PagelabError) as err:
        system.load_config(path)
    msg = str(err.value)
    assert "\n" not in msg and "bad.toml" in msg and "line 3" in msg, msg
    r = run_cli("run", path, "--out", tmp_path / "out")
    assert_user_error(r, "bad.toml", "line 3")
    assert not (tmp_path / "out").exists()


def test_unknown_top_level_table(tmp_path):
    path = write(tmp_path, SMALL + "\n[schedular]\nquantum_ms = 5\n", "typo.toml")
    r = run_cli("run", path, "--out", tmp_path / "out")
    assert_user_error(r, "typo.toml", "schedular")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("text, fragment", [
    ("[[process]]\nname = 'a'\nworkload = 'scan'\n", "[system]"),
    ("[system]\nframes = 10\n", "process"),
    ("[system]\nframes = 10\n[process]\nname = 'a'\n", "[[process]]"),
    ("system = 3\n[[process]]\nname = 'a'\n", "system"),
    ("[system]\nframes = 10\n[[processes]]\nname = 'a'\n", "processes"),
])
def test_bad_top_level(tmp_path, text, fragment):
    path = write(tmp_path, text, "c.toml")
    with pytest.raises(pagelab.PagelabError) as err:
        system.load_config(path)
    assert "c.toml" in str(err.value) and fragment in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_config_file(tmp_path):
    r = run_cli("run", tmp_path / "absent.toml")
    assert_user_error(r, "absent.toml")


def test_missing_trace_named_with_process(tmp_path):
    path = write(tmp_path, SMALL + '\n[[process]]\nname = "t"\ntrace = "nope.plt"\n', "tr.toml")
    r = run_cli("run", path)
    assert_user_error(r, "tr.toml", "process[2].trace", "nope.plt")


def test_engine_error_paths_are_renamed():
    err = system.engine_error("token.toml", pagelab.PagelabError("processes[1].params: unknown parameter 'x'"))
    assert str(err) == "token.toml: process[1].params: unknown parameter 'x'"
    assert str(system.engine_error("a.toml", pagelab.PagelabError("system.frames: expected a positive number"))) \
        == "a.toml: system.frames: expected a positive number"


# ---------------------------------------------------------------- synthetic results

def synthetic_result(space_time=True):
    import numpy as np

    t = [0.5 * (i + 1) for i in range(40)]
    names = ["lu-1", "lu-2"]
    series, st = [], []
    for k, n in enumerate(names):
        mad = [min(300, 20 * (i + 1)) for i in range(40)]
        rss = [max(0, m - 30 * ((i + k) % 3)) for i, m in enumerate(mad)]
        series.append({"process": n, "t_s": t, "mad": mad, "rss": rss,
                       "nap": [r // 2 for r in rss], "npf": [(i * 7 + k) % 13 for i in range(40)]})
        buckets, ppb = 30, 10
        rng = np.random.default_rng(k)
        visited = rng.integers(0, 5, (40, buckets))
        resident = rng.integers(0, 4, (40, buckets))
        swapped = rng.integers(0, 2, (40, buckets))
        st.append({"process": n, "t_s": t, "pages_per_bucket": ppb, "visited": visited.tolist(),
                   "resident": resident.tolist(), "swapped": swapped.tolist()})
    raw = {
        "engine_version": "test", "end_ns": 20_000_000_000, "cpu_busy_ns": 9_000_000_000,
        "disk_busy_ns": 15_000_000_000, "disk_reads": 1200, "disk_writes": 300, "pages_read": 1500,
        "pages_written": 2400,
        "processes": [
            {"name": n, "start_ns": 0, "end_ns": 19_000_000_000 + k, "runtime_ns": 19_000_000_000 + k,
             "dedicated_ns": 5_000_000_000, "slowdown": (19_000_000_000 + k) / 5e9, "references": 10_000_000,
             "records": 9_000_000, "major_faults": 12345 + k, "minor_faults": 300, "page_ins": 12000 + k,
             "page_outs": 900, "token_grabs": 1 - k, "token_held_ns": 4_000_000_000 * (1 - k),
             "suspended_ns": 0}
            for k, n in enumerate(names)],
        "series": series,
        "system_series": {"t_s": t, "free": [10] * 40, "cpu_util": [0.4] * 40, "disk_util": [0.8] * 40},
        "token_events": [{"t_ns": 2_000_000_000, "event": "grab", "process": "lu-1"},
                         {"t_ns": 9_000_000_000, "event": "release", "process": "lu-1"}],
    }
    if space_time:
        raw["space_time"] = st
    return raw


def test_system_result_tables():
    r = system.SystemResult(synthetic_result())
    assert list(r.processes["name"]) == ["lu-1", "lu-2"]
    assert r.processes["runtime_s"][0] == pytest.approx(19.0)
    s = r.series
    assert list(s.columns) == ["process", "t_s", "mad", "rss", "nap", "npf"] and len(s) == 80
    assert list(r.system_series.columns) == ["t_s", "free", "cpu_util", "disk_util"]
    assert list(r.token_events["event"]) == ["grab", "release"]
    assert set(r.space_time) == {"lu-1", "lu-2"}
    assert json.loads(r.to_json())["end_ns"] == 20_000_000_000
    assert r.cpu_utilisation == pytest.approx(0.45)


def test_report_table_formatting():
    r = system.SystemResult(synthetic_result())
    rows = system.process_rows(r)
    assert rows[0] == ["lu-1", "19.00", "5.00", "3.80", "12,345", "300", "12,000", "900", "1"]
    assert len(system.PROCESS_TABLE_COLUMNS) == len(rows[0])
    line = system.system_line(r)
    assert "CPU utilisation 45.0%" in line and "disk busy 75.0%" in line


def test_run_outputs_from_synthetic_result(tmp_path):
    r = system.SystemResult(synthetic_result())
    written = system.write_run_outputs(r, tmp_path / "out")
    for name in ["result.json", "processes.csv", "series.csv", "memory-lu-1.png", "memory-lu-2.png",
                 "space-time-lu-1.png", "space-time-lu-2.png"]:
        assert name in written
        assert (tmp_path / "out" / name).stat().st_size > 1000 or name.endswith(".csv"), name
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".")]


def test_plots_from_synthetic_result(tmp_path):
    raw = synthetic_result()
    plot_memory(raw, "lu-1", tmp_path / "m.png")
    plot_space_time(raw["space_time"][0], tmp_path / "st.png")
    plot_space_time_pair(raw["space_time"], tmp_path / "st2.png", title="two")
    plot_pair([("global LRU", raw), ("token-ordered LRU", raw)], ["lu-1", "lu-2"], tmp_path / "p.png", "pair")
    for f in ["m.png", "st.png", "st2.png", "p.png"]:
        assert (tmp_path / f).stat().st_size > 1000


def test_space_time_states():
    from pagelab.figures.memory import space_time_matrix

    entry = {"t_s": [1.0, 2.0], "pages_per_bucket": 4,
             "visited": [[4, 0, 0], [0, 0, 1]], "resident": [[0, 3, 0], [0, 0, 1]],
             "swapped": [[0, 1, 0], [4, 0, 1]]}
    states, x, y = space_time_matrix(entry)
    # bucket x sample; 0 untouched, 1 visited, 2 swapped, 3 resident-not-visited
    assert states.tolist() == [[1, 2], [3, 0], [0, 1]]
    assert list(x) == [0.0, 1.0, 2.0] and list(y) == [0, 4, 8, 12]


# ---------------------------------------------------------------- with the engine

@needs_engine
def test_run_small_config(tmp_path):
    path = write(tmp_path, SMALL)
    out = tmp_path / "out"
    r = run_cli("run", path, "--out", out)
    assert r.code == 0, r.err
    assert "lu-a" in r.out and "scan-b" in r.out and "CPU utilisation" in r.out
    for name in ["result.json", "processes.csv", "series.csv", "memory-lu-a.png", "memory-scan-b.png"]:
        assert (out / name).stat().st_size > 100, name
    raw = json.loads((out / "result.json").read_text())
    assert [p["name"] for p in raw["processes"]] == ["lu-a", "scan-b"]
    for p in raw["processes"]:
        assert p["runtime_ns"] == p["end_ns"] - p["start_ns"]
        assert p["slowdown"] == pytest.approx(p["runtime_ns"] / p["dedicated_ns"])


@needs_engine
def test_run_is_deterministic(tmp_path):
    path = write(tmp_path, SMALL)
    a = pagelab.run_system(path).raw
    b = pagelab.run_system(path).raw
    assert a == b


@needs_engine
def test_engine_error_is_prefixed_with_file(tmp_path):
    path = write(tmp_path, SMALL.replace("params = { n = 80 }", "params = { n = 80, bogus = 1 }"), "e.toml")
    r = run_cli("run", path)
    assert_user_error(r, "e.toml", "process[0]", "bogus")


@needs_engine
def test_too_small_swap_area_is_one_line(tmp_path):
    path = write(tmp_path, SMALL.replace("frames = 150\n", "frames = 150\nswap_slots = 10\n", 1), "small.toml")
    r = run_cli("run", path, "--out", tmp_path / "out")
    assert_user_error(r, "small.toml", "system.swap_slots")
    assert not (tmp_path / "out").exists()
