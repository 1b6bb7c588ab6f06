"""Running one point of a sweep or an experiment: a replay (alone or in a pass with
others of the same source), a timed system, a gang or a NUMA run; its result rows, and
for experiments its whole result."""

from __future__ import annotations

from typing import Any, List, Tuple

from .._core import PagelabError
from ..api import replay
from ..fault_analysis import fault_parameters
from ..fault_stats import summary
from ..numa import run_numa
from ..kernel.backend import run_kernel
from ..timed import run_engine
from .spec import _replay_source, canonical_json

# ---------------------------------------------------------------- running one point

REPLAY_COLUMNS = ["source", "policy", "frames", "references", "records", "faults", "compulsory_faults",
                  "fault_ratio", "dirty_evictions", "distinct_pages", "mean_resident"]


#: the ways a point runs ("kernel": a system configuration on this machine's kernel, root)
MODES = ("replay", "system", "gang", "numa", "fault-parameters", "kernel")


def run_point(mode: str, config: dict, name: str = "config", full: bool = False) -> Tuple[List[dict], Any]:
    """Runs one point: (its result rows, its whole result when ``full``, else None).
    Rows: one per policy and size for a replay, one per process or job for a timed
    system, one for a NUMA run or a fault-parameter analysis. The whole result is the
    engine's result dict (a system, gang or NUMA run: what result.json holds), the
    residency table (fault parameters: a DataFrame), or the rows (a replay)."""
    if mode == "replay":
        rows = run_replay_pass([config])[0]
        return rows, ({"rows": rows} if full else None)
    if mode == "numa":
        result = run_numa(config, name)
        return [result.summary()], (result.raw if full else None)
    if mode == "fault-parameters":
        df = fault_parameters(_replay_source(config), policy=config["policy"], frames=config["frames"],
                              seed=config.get("seed", 0))
        return [summary(df)], (df if full else None)
    if mode not in ("system", "gang", "kernel"):
        raise PagelabError(f"{name}: unknown point mode '{mode}' (expected {', '.join(MODES)})")
    result = run_kernel(config, name) if mode == "kernel" else run_engine(config, name)
    raw = result.raw
    if mode == "gang" or (mode == "kernel" and "gang" in config):
        # a [gang] configuration on the kernel (one machine) has the simulator's gang rows
        jobs = result.jobs.to_dict("records")
        mech = result.mechanisms.drop(columns=["node"]).sum().to_dict()
        extra = {"makespan_s": result.end_s, "paged_pages": result.paged_pages,
                 **{k: int(v) for k, v in mech.items()}}
        return [dict(j, **extra) for j in jobs], (raw if full else None)
    system = {"end_s": raw["end_ns"] / 1e9, "cpu_utilisation": result.cpu_utilisation,
              "disk_utilisation": result.disk_utilisation, "disk_reads": raw["disk_reads"],
              "disk_writes": raw["disk_writes"], "pages_read": raw["pages_read"],
              "pages_written": raw["pages_written"]}
    rows = []
    for p in raw["processes"]:
        dedicated = p["dedicated_ns"] / 1e9 if p["dedicated_ns"] is not None else None
        rows.append({"process": p["name"], "runtime_s": p["runtime_ns"] / 1e9, "dedicated_s": dedicated,
                     "slowdown": p["slowdown"], "major_faults": p["major_faults"], "minor_faults": p["minor_faults"],
                     "page_ins": p["page_ins"], "page_outs": p["page_outs"], "references": p["references"],
                     "records": p["records"], "token_grabs": p["token_grabs"],
                     "token_held_s": p["token_held_ns"] / 1e9, "suspended_s": p["suspended_ns"] / 1e9, **system})
    return rows, (raw if full else None)


def pass_key(config: dict) -> str:
    """Replay points with the same key differ only in memory sizes: one engine pass can
    replay them all, reading (and for OPT recording) their source once."""
    return canonical_json({"source": config["source"], "seed": config["seed"], "policy": config["policy"]})


def run_replay_pass(configs: List[dict]) -> List[List[dict]]:
    """The result rows of each replay point, from one engine pass over their common
    source (``pass_key`` equal) at the union of their memory sizes. Each point's rows
    are what replaying it alone gives: its policies in order, each at its own sizes in
    order, a variable-size policy (frames 0) once."""
    first = configs[0]
    assert all(pass_key(c) == pass_key(first) for c in configs), "points of one pass share source, seed, policy"
    per_point = [c["frames"] if isinstance(c["frames"], list) else [c["frames"]] for c in configs]
    union = list(dict.fromkeys(f for frames in per_point for f in frames))
    r = replay(_replay_source(first), policy=first["policy"], frames=union, seed=first["seed"])
    rows = [dict({c: row.get(c) for c in REPLAY_COLUMNS}, **row.get("counters", {})) for row in r.rows]
    # the engine's order: each policy at every size of `union`, a variable-size one once
    by_policy, at = [], 0
    for _ in (first["policy"] if isinstance(first["policy"], list) else [first["policy"]]):
        n = 1 if rows[at]["frames"] == 0 else len(union)
        by_policy.append(rows[at:at + n])
        at += n
    assert at == len(rows), "one engine row per policy and size"
    out = []
    for frames in per_point:
        point_rows = []
        for policy_rows in by_policy:
            if len(policy_rows) == 1 and policy_rows[0]["frames"] == 0:
                point_rows.append(dict(policy_rows[0]))
            else:
                point_rows.extend(dict(policy_rows[union.index(f)]) for f in frames)
        out.append(point_rows)
    return out


def one_line(err: BaseException) -> str:
    text = str(err).strip()
    line = text.splitlines()[0].strip() if text else ""
    if isinstance(err, PagelabError):
        return line or "error"
    return f"{type(err).__name__}: {line}" if line else type(err).__name__


