"""The calibration experiment (experiments/calibration.toml, issue 17): this machine
probed, the simulator fitted, the same configurations on both backends, the ledger. The
shipped file takes minutes; here a trimmed copy (two small workloads alone and as a
pair, one memory size, two repetitions, two models) runs end to end through `pagelab
reproduce` as root (CI), with swap set up for the module when none is active. Not root:
the run is a one-line error (checked as nobody), the rest skips saying why."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import paging_lock

from pagelab.experiments import calibration as C
from pagelab.experiments.protocol import EXPERIMENTS_DIR, load_spec, spec_variants
from pagelab.experiments.runner import reproduce, shipped, simulated
from pagelab.kernel.host import memory_hierarchy
from pagelab.outputs.report import build_report

ROOT = os.geteuid() == 0
WHY_NOT = ("not root: the calibration runs on the kernel backend" if not ROOT else
           "no memory cgroup controller on this machine" if memory_hierarchy() is None else None)
if WHY_NOT:
    print(f"tests/test_experiment_calibration.py: the calibration run skips: {WHY_NOT}", file=sys.stderr)
needs_root = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
FILE = EXPERIMENTS_DIR / "calibration.toml"


def trimmed(tmp: Path) -> Path:
    """The shipped file with small workloads, one size, two repetitions, two models."""
    text = FILE.read_text()
    text = re.sub(r"(?ms)^\[\[workload\]\].*?(?=^# The simulator's reclaim models)", "", text)
    text = re.sub(r"(?ms)^\[\[model\]\]\nname = \"clock\".*?(?=^\[\[model\]\]\nname = \"lru\")", "", text)
    text = re.sub(r"(?ms)^\[\[model\]\]\nname = \"freebsd8\".*?(?=^# ---)", "", text)
    text = re.sub(r"(?m)^memory = .*$", "memory = [0.6]", text)
    text = re.sub(r"(?m)^run_s = .*$", "run_s = 0.4", text)
    text = re.sub(r"(?m)^repeats = .*$", "repeats = 2", text)
    text = re.sub(r"(?m)^pairs = .*$", 'pairs = [["scan", "zipf"]]', text)
    text = re.sub(r"(?m)^probe = .*$", "probe = { mb = 16, reads = 100, pages = 2000 }", text)
    # claims about the models left out go too
    text = re.sub(r"(?ms)^\[\[claim\]\]\nid = \"(clock|freebsd8)-[^\n]*\n.*?(?=^\[\[claim\]\]|^# ---)", "", text)
    text = text.replace("# The simulator's reclaim models",
                        '[[workload]]\nname = "scan"\nworkload = "scan"\nparams = { pages = 2000, passes = 4, '
                        'write = true }\n\n[[workload]]\nname = "zipf"\nworkload = "zipf"\n'
                        'params = { refs = 40000, pages = 2000, alpha = 1.0, write_ratio = 0.3 }\n\n'
                        "# The simulator's reclaim models")
    path = tmp / "calibration-small.toml"
    path.write_text(text)
    return path


@pytest.fixture
def swap(kernel_swap):
    """Swap for the module (conftest.py's kernel_swap), and the machine's paging to the
    test (conftest.py's paging_lock)."""
    with paging_lock():
        yield kernel_swap


def test_the_shipped_file_checks_and_stays_out_of_reproduce_all():
    spec = load_spec(FILE)
    assert spec.experiment["kernel"] is True
    assert "calibration" in shipped() and "calibration" not in simulated()
    # every claim names a model of the file or a kernel measure
    models = {m["name"] for m in spec.table("model")}
    for c in spec.claims:
        if "." in c.measure:
            assert c.measure.split(".")[1] in models, c.id
    # the sensitivity ranges vary only what the simulated points or the analysis read
    assert {v.variant.split("=")[0].strip() for v in spec_variants(spec)} == {"fit.latency_scale", "fit.major_fault_scale",
                                                                       "setup.min_faults"}


@needs_root
def test_a_small_calibration_puts_the_simulator_beside_the_kernel(tmp_path, swap):
    out = tmp_path / "cal"
    run = reproduce([str(trimmed(tmp_path))], out=str(out), workers=0)[0]
    assert run.error is None, run.error
    summary = json.loads((out / "summary.json").read_text())
    # 3 configurations (scan, zipf, the pair) at one size: one kernel point and one per model each
    assert summary["points"] == 3 * 3
    fitted = summary["analysis"]["probe"]["fitted"]
    assert fitted["disk"]["model"] == "ssd" and fitted["disk"]["latency_us"] > 0
    assert fitted["system"]["major_fault_cpu_ns"] > 0  # swap is active: a swap-in was measured
    faults = next(v for v in summary["views"] if v["title"].startswith("major faults"))
    assert faults["columns"] == ["run", "kernel", "linux22", "lru"] and len(faults["rows"]) == 4
    # the kernel paged: below the footprint every run took major faults
    assert all(float(row[1].replace(",", "")) > 0 for row in faults["rows"]), faults["rows"]
    verdicts = {c["id"]: c["verdict"] for c in summary["claims"]}
    assert set(verdicts) == {c.id for c in load_spec(trimmed(tmp_path)).claims}
    assert verdicts["kernel-repeatable"] != "not measured"
    assert (out / "calibration-faults.png").exists() and (out / "calibration-slowdown.png").exists()
    report = build_report(out).read_text()
    assert "kernel" in report and "linux22" in report and "lru" in report


def test_not_root_is_a_one_line_error():
    where = Path(tempfile.mkdtemp(prefix="pagelab-notroot-", dir="/tmp"))
    os.chmod(where, 0o777)
    cmd = [sys.executable, "-m", "pagelab", "reproduce", "calibration", "--quick", "--out", str(where / "o")]
    if ROOT:
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=where, env=dict(os.environ, HOME=str(where)))
        left = list(where.iterdir())
    finally:
        shutil.rmtree(where)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1, p.stderr
    assert left == []  # nothing written
    assert lines[0] == ("pagelab: error: calibration.toml: the calibration runs on the kernel backend, "
                        "which needs root"), lines
