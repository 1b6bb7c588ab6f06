"""`make demo` runs `pagelab demo`: it must finish and leave its table, figures and JSON."""

import json

from conftest import run_cli


def test_demo(tmp_path):
    out = tmp_path / "demo"
    r = run_cli("demo", "--out", out, timeout=900)
    assert r.code == 0, r.err
    assert "OPT" in r.out and str(out) in r.out
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["workloads"]) >= 8
    for w in summary["workloads"]:
        assert (out / w["figure"]).stat().st_size > 1000
        for f in w["frames"]:
            opt = w["faults"]["opt"][str(f)]
            assert all(w["faults"][p][str(f)] >= opt for p in w["faults"])
    assert (out / "mrc.png").stat().st_size > 1000
    svg = (out / "mrc.svg").read_text()  # every workload's curve is in the combined figure
    assert all(w["workload"] in svg for w in summary["workloads"]), [w["workload"] for w in summary["workloads"]]
    assert (out / "replay.csv").read_text().startswith("source,policy,frames")
    # the timed-system part: Table 2 of token-ordered-lru.txt
    token = json.loads((out / "token-lru" / "summary.json").read_text())
    assert token["experiment"] == "token-lru" and len(token["analysis"]["pairs"]) == 5
    assert token["claims"] and all(c["verdict"] for c in token["claims"])
    assert (out / "token-lru" / "report.html").is_file()
    assert "token-lru" in r.out
