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


def test_policy_lists_keep_last_dynamics_rule():
    """`--policy` splits on commas, except the one inside `last-dynamic:T,RULE`."""
    from pagelab.api import split_policies

    assert split_policies("lru, last-dynamic:60,censored,opt") == ["lru", "last-dynamic:60,censored", "opt"]
    assert split_policies("last-dynamic:60,ended-fails") == ["last-dynamic:60,ended-fails"]
    assert split_policies("lru,,fifo") == ["lru", "fifo"]
    r = run_cli("replay", "--workload", "scan", "--param", "pages=101", "--param", "passes=20", "--frames", "100",
                "--policy", "lru,last-dynamic:60,ended-fails,last-dynamic:60")
    assert r.code == 0, r.err
    assert "last-dynamic:60,ended-fails" in r.out
    r = run_cli("replay", "--workload", "scan", "--frames", "10", "--policy", "last-dynamic:60,nosuch")
    assert r.code != 0 and "ended-fails" in r.err and "Traceback" not in r.err


def test_last_dynamic_rules_on_a_loop_and_the_accuracy_columns():
    """Issue 22's loop: 101 pages in 100 frames. The paper's Last-dynamic costs
    Last-static-0 only its warm-up; the rule before issue 22 (ended-fails) faulted 3.5x as
    often. Every prediction is judged or censored."""
    w = pagelab.workload("scan", pages=101, passes=200)
    policies = ["last-static:0", "last-dynamic:60", "last-dynamic:60,censored", "last-dynamic:60,ended-fails"]
    df = pagelab.replay(w, policy=policies, frames=[100]).to_dataframe().set_index("policy")
    static, paper = df.loc["last-static:0", "faults"], df.loc["last-dynamic:60", "faults"]
    assert paper <= static + 2 * 101 and df.loc["last-dynamic:60,censored", "faults"] == paper
    assert df.loc["last-dynamic:60,ended-fails", "faults"] > 3 * static
    share = df["dead_list_evictions"] / (df["dead_list_evictions"] + df["lru_evictions"])
    assert share["last-dynamic:60"] > 0.6 > 0.45 > share["last-dynamic:60,ended-fails"]
    kinds = ["under_predictions", "over_predictions", "correct_predictions", "censored_predictions"]
    assert (df[kinds].sum(axis=1) == df["predictions"]).all()
