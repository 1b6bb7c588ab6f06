"""The results revision guard: a change that alters any result must raise the engine's
results revision (crates/core/src/lib.rs `results_revision!`), which keys every stored
sweep point; otherwise a results store would serve points the new engine computes
otherwise. A set of small runs over each model (Linux 2.2, the 2.6.20 token, FreeBSD 8.2
with mClustering, the old BSD model, gang, NUMA, replay, the one-pass curve) is digested
and pinned to the revision in tests/results_revision.json.

When this test fails after a deliberate change of results: raise the revision, rebuild,
and run `python tests/test_results_revision.py --pin` (it rewrites the file)."""

import hashlib
import json
import sys
from pathlib import Path

import pagelab
from pagelab import _core, numa, timed

PINNED = Path(__file__).with_name("results_revision.json")

PAIR = {
    "system": {"frames": 300, "cpu_ns_per_ref": 20000.0, "sample_ms": 500.0},
    "processes": [
        {"name": "a", "workload": "growing-table", "params": {"pages": 200, "stages": 4, "lookups": 4000, "skew": 1.0}, "seed": 1},
        {"name": "b", "workload": "spikes", "params": {"base_pages": 60, "spike_pages": 150, "second_spike": 1.07, "refs": 60000}},
    ],
}


def _with(base: dict, **tables) -> dict:
    cfg = json.loads(json.dumps(base))
    for table, values in tables.items():
        cfg.setdefault(table, {}).update(values)
    return cfg


def _system_runs() -> dict:
    lu = {"name": "lu", "workload": "lu", "params": {"n": 120}}
    mcl = {"system": {"frames": 60, "cpu_ns_per_ref": 20.0, "reclaim": "freebsd8"},
           "swap": {"clustering": "mclustering"}, "processes": [lu]}
    gang = {"system": {"frames": 80, "reclaim": "clock", "sample_ms": 250.0},
            "gang": {"nodes": 2, "quantum_s": 1, "mechanisms": ["so", "ao", "ai", "bg"]},
            "processes": [{"name": "a", "workload": "scan", "params": {"pages": 60, "passes": 40, "write": True},
                           "cpu_ns_per_ref": 100000, "superstep_refs": 600},
                          {"name": "b", "workload": "scan", "params": {"pages": 60, "passes": 40, "write": True},
                           "cpu_ns_per_ref": 100000, "superstep_refs": 600}]}
    configs = {
        "linux22-lru": _with(PAIR, token={"policy": "none"}),
        "linux22-paper-token": _with(PAIR, token={"policy": "paper"}),
        "linux22-2620-token": _with(PAIR, token={"policy": "linux2620"}),
        "freebsd8-mclustering": mcl,
        "bsd-clustering": _with(mcl, system={"reclaim": "bsd"}, swap={"clustering": "bsd"}),
        "gang": gang,
    }
    return {name: timed.run_engine(cfg, name).raw for name, cfg in configs.items()}


def _other_runs() -> dict:
    runs = {
        "numa-daemons": numa.run_numa({"numa": {"page_size": 2048, "migration": "daemons",
                                                "workload": {"name": "vecmat", "params": {"n": 128, "procs": 4, "repeat": 10}}}}).raw,
    }
    source = pagelab.workload("lu", n=60)
    runs["replay"] = pagelab.replay(source, ["lru", "opt", "arc", "lirs", "clock-pro", "eelru", "last-dynamic:60"],
                                    [40, 90]).to_dataframe().to_dict("records")
    # a loop 1.5 times memory: where CLOCK-Pro's start and LIRS's reserves decide
    runs["replay-loop"] = pagelab.replay(pagelab.workload("scan", pages=150, passes=10),
                                         ["clock-pro", "lirs", "clock", "arc", "car"], [100]).to_dataframe().to_dict("records")
    curve = pagelab.mrc(source)
    runs["mrc"] = [curve.faults_at(f) for f in (10, 50, 90)]
    return runs


def _strip(value):
    """Drop what names the engine or measures wall time: it is not a result."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in ("engine_version", "seconds", "wall_s", "pagelab")}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def digests() -> dict:
    runs = {**_system_runs(), **_other_runs()}
    return {name: hashlib.sha256(json.dumps(_strip(raw), sort_keys=True, default=str).encode()).hexdigest()[:16]
            for name, raw in sorted(runs.items())}


def test_results_change_only_with_the_results_revision():
    pinned = json.loads(PINNED.read_text())
    now = digests()
    if pinned["revision"] != _core.RESULTS_REVISION:
        raise AssertionError(f"the results revision is {_core.RESULTS_REVISION} but {PINNED.name} pins "
                             f"{pinned['revision']}: run `python tests/test_results_revision.py --pin`")
    changed = sorted(k for k in set(now) | set(pinned["digests"]) if now.get(k) != pinned["digests"].get(k))
    assert not changed, (f"results changed ({', '.join(changed)}) under the same results revision "
                         f"{_core.RESULTS_REVISION}: raise results_revision! in crates/core/src/lib.rs, rebuild and "
                         f"run `python tests/test_results_revision.py --pin`")


if __name__ == "__main__":
    if sys.argv[1:] != ["--pin"]:
        sys.exit("usage: python tests/test_results_revision.py --pin")
    PINNED.write_text(json.dumps({"revision": _core.RESULTS_REVISION, "digests": digests()}, indent=2) + "\n")
    print(f"{PINNED}: revision {_core.RESULTS_REVISION} pinned")
