"""Predictive replacement from Python (predictive-replacement.txt): the Dead-List
policies through replay and DP-Approx in the timed system. The experiment:
test_experiment_predictive.py."""

import textwrap


from conftest import assert_user_error, run_cli

import pagelab
from pagelab import timed


def test_last_static_beats_lru_on_a_loop_and_opt_bounds_it():
    """A loop one page larger than memory: LRU faults on every reference, the Dead-List
    learns each page's lifetime; OPT stays below both."""
    w = pagelab.workload("scan", pages=201, passes=30)
    r = pagelab.replay(w, policy=["lru", "last-static:0", "last-dynamic:5", "opt"], frames=[200])
    lru, static, dynamic, opt = (r.faults(p, 200) for p in ("lru", "last-static:0", "last-dynamic:5", "opt"))
    assert lru == 201 * 30
    assert opt <= static < lru / 4 and opt <= dynamic < lru / 2


def test_dp_approx_in_the_timed_system_reports_its_evictions():
    config = {
        "system": {"frames": 450, "reclaim": "clock", "dead_list": "dp-approx:0.5"},
        "process": [{"name": "loop", "workload": "scan", "params": {"pages": 500, "passes": 20, "write": True}}],
    }
    r = timed.run_system(config)
    counters = r.raw["reclaim_counters"]
    assert counters["dead_list_evictions"] > 0 and counters["dead_list_predictions"] > 0
    config["system"].pop("dead_list")
    clock = timed.run_system(config)
    assert r.process("loop")["major_faults"] < clock.process("loop")["major_faults"]
    assert clock.raw["reclaim_counters"] == {}


def test_policy_reclaim_from_a_config_file(tmp_path):
    path = tmp_path / "arc.toml"
    path.write_text(textwrap.dedent("""\
        [system]
        frames = 300
        reclaim = "policy"
        policy = "arc"

        [[process]]
        name = "z"
        workload = "zipf"
        params = { pages = 600, refs = 50000 }
        """))
    r = run_cli("run", path, "--out", tmp_path / "out")
    assert r.code == 0, r.err
    path.write_text(path.read_text().replace('"arc"', '"opt"'))
    assert_user_error(run_cli("run", path, "--out", tmp_path / "out2"), "system.policy", "cannot run in the timed system")


