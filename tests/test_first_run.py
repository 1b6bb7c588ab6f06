"""What a new user meets first (issue 20): --version, help, option placement, one-line
errors, outputs that create their folders, results that explain a wrong lookup."""

import json
import os
from pathlib import Path

import pytest

from conftest import assert_user_error, run_cli

import pagelab
from pagelab import api


def test_version_names_package_engine_and_commit():
    r = run_cli("--version")
    assert r.code == 0, r.err
    line = r.out.strip()
    assert "\n" not in line
    info = pagelab.build_info()
    assert line == f"pagelab {info['pagelab']} (engine {info['engine']}, commit {info['commit']})"
    assert info["commit"] == "unknown" or len(info["commit"].split("-")[0]) == 40


def test_result_json_and_reports_record_the_build(tmp_path):
    r = run_cli("run", "examples/two-programs.toml", "--out", tmp_path / "run", "--json",
                cwd=os.path.dirname(os.path.dirname(__file__)))
    assert r.code == 0, r.err
    assert json.loads(r.out)["pagelab"] == pagelab.build_info()
    assert json.loads((tmp_path / "run" / "result.json").read_text())["pagelab"]["commit"] == \
        pagelab.build_info()["commit"]


def test_a_command_group_without_its_subcommand_shows_its_own_help():
    r = run_cli("trace")
    assert r.code == 2
    assert "usage: pagelab trace" in r.out and "convert" in r.out and "capture" in r.out


def test_progress_switches_after_the_command():
    r = run_cli("replay", "--workload", "scan", "--frames", "10", "--no-progress")
    assert r.code == 0, r.err
    r = run_cli("replay", "--workload", "scan", "--frames", "10", "--progress", env={"PAGELAB_PROGRESS_DELAY": "0"})
    assert r.code == 0, r.err
    assert "records" in r.err


def test_progress_does_not_pass_its_total_with_opt():
    r = run_cli("replay", "--workload", "scan", "--param", "pages=3000,passes=30", "--frames", "100",
                "--policy", "lru,opt", "--progress", env={"PAGELAB_PROGRESS_DELAY": "0", "COLUMNS": "200"})
    assert r.code == 0, r.err
    import re

    pairs = [(int(a.replace(",", "")), int(b.replace(",", "")))
             for a, b in re.findall(r"(\d[\d,]*)/(\d[\d,]*) records", r.err)]
    assert pairs, r.err
    assert all(done <= total for done, total in pairs), pairs
    assert pairs[-1][0] == pairs[-1][1] == 2 * 90_000


def test_error_lines_name_the_command_once():
    r = run_cli("replay", "--frames", "10")
    assert_user_error(r, "replay:")
    assert not r.err.startswith("pagelab: error: pagelab")


@pytest.mark.parametrize("args, fragment", [
    (["--frames", "99999999999999999999"], "--frames"),
    (["--frames", "18446744073709551616"], "--frames"),
    (["--frames", "10", "--page-size", "99999999999999999999"], "--page-size"),
    (["--frames", "10", "--param", "n=2,n=3"], "given twice"),
    (["--frames", "10", "--param", "n=2", "--param", "n=3"], "given twice"),
    (["--frames", "10", "--seed", "-1"], "--seed"),
])
def test_numbers_out_of_range_are_one_line_errors(args, fragment):
    r = run_cli("replay", "--workload", "lu", *args)
    assert_user_error(r, fragment)


def test_help_says_what_the_suffixes_mean():
    r = run_cli("replay", "--help")
    assert "4k = 4096" in " ".join(r.out.split())


def test_api_rejects_numbers_the_engine_cannot_hold():
    w = pagelab.workload("scan")
    for bad in ([2 ** 70], [0], [-3], [1.5], ["10"]):
        with pytest.raises(pagelab.PagelabError, match="frames"):
            pagelab.replay(w, policy="lru", frames=bad)
    with pytest.raises(pagelab.PagelabError, match="seed"):
        pagelab.replay(w, policy="lru", frames=[10], seed=-1)
    with pytest.raises(pagelab.PagelabError, match="page_size"):
        pagelab.workload("scan", page_size=-4096)
    with pytest.raises(pagelab.PagelabError, match="seed"):
        pagelab.workload("scan", seed=2 ** 64)
    with pytest.raises(pagelab.PagelabError, match="page_size"):
        pagelab.Trace("x.plt", page_size=2 ** 80)
    with pytest.raises(pagelab.PagelabError, match="frames"):
        pagelab.fault_parameters(w, frames=2 ** 70)
    import numpy as np

    assert pagelab.replay(w, policy="lru", frames=[np.int64(10)]).faults("lru", 10) > 0


def test_a_lookup_the_result_cannot_answer_says_what_it_has():
    r = pagelab.replay(pagelab.workload("scan"), policy=["lru", "fifo"], frames=[10, 20])
    with pytest.raises(pagelab.PagelabError, match="no policy 'opt'.*lru, fifo"):
        r.faults("opt", 10)
    with pytest.raises(pagelab.PagelabError, match="not replayed at 15 frames.*10, 20"):
        r.faults("lru", 15)
    with pytest.raises(pagelab.PagelabError, match="give frames"):
        r.faults("lru")


def test_outputs_create_missing_folders_everywhere(tmp_path):
    src = tmp_path / "t.plt"
    assert run_cli("workload", "emit", "scan", "-o", src).code == 0
    for args, out in [(["trace", "convert", src], "a/b/t.csv"),
                      (["workload", "emit", "scan", "-o"], "c/d/s.plt"),
                      (["replay", "--trace", src, "--frames", "10", "--csv"], "e/f/r.csv"),
                      (["mrc", "--trace", src, "-o"], "g/h/m.csv")]:
        r = run_cli(*args, tmp_path / out)
        assert r.code == 0, (args, r.err)
        assert (tmp_path / out).is_file()


def test_a_failed_output_leaves_no_folder_behind(tmp_path):
    r = run_cli("trace", "convert", tmp_path / "absent.plt", tmp_path / "new" / "dir" / "x.csv")
    assert_user_error(r, "absent.plt")
    assert list(tmp_path.iterdir()) == []


def test_dangling_output_folder(tmp_path):
    (tmp_path / "out").symlink_to(tmp_path / "nowhere")
    for args in (["run", "examples/two-programs.toml"], ["reproduce", "token-lru", "--quick"],
                 ["demo"]):
        r = run_cli(*args, "--out", tmp_path / "out", cwd=os.path.dirname(os.path.dirname(__file__)))
        assert_user_error(r, "symbolic link", "nowhere")
    assert not (tmp_path / "nowhere").exists()


def test_mrc_with_a_bad_figure_name_writes_nothing(tmp_path):
    r = run_cli("mrc", "--workload", "lu", "-o", tmp_path / "m.csv", "--plot", tmp_path / "m.weird")
    assert_user_error(r, "m.weird", "figure format")
    r = run_cli("mrc", "--workload", "lu", "-o", tmp_path / "m.csv", "--plot", "/proc/no/m.png")
    assert_user_error(r, "/proc/no")
    assert ".tmp" not in r.err
    assert list(tmp_path.iterdir()) == []


def test_capture_writes_the_format_its_name_asks_for(tmp_path):
    out = tmp_path / "true.csv"
    r = run_cli("trace", "capture", "-o", out, "--", "/bin/true")
    if r.code != 0 and "valgrind" in r.err:
        pytest.skip(r.err)
    assert r.code == 0, r.err
    text = out.read_text()
    assert text.startswith("# page_size=4096") and "pid,page,kind,repeat" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["true.csv"]
    info = pagelab.Trace.open(out).info()
    assert info["references"] > 1000


def test_unreachable_scheduler_leaves_no_store(tmp_path):
    spec = tmp_path / "g.toml"
    spec.write_text('[sweep]\nkind = "replay"\n[base]\nsource = { workload = "scan" }\npolicy = "lru"\n'
                    'frames = 10\n[[axis]]\nkey = "frames"\nvalues = [10, 20]\n')
    r = run_cli("sweep", spec, "--out", tmp_path / "store", "--scheduler", "tcp://127.0.0.1:9")
    assert_user_error(r, "tcp://127.0.0.1:9")
    assert not (tmp_path / "store").exists()


def test_sweep_from_an_unguarded_script_prints_one_clear_error(tmp_path):
    import subprocess
    import sys

    spec = tmp_path / "g.toml"
    spec.write_text('[sweep]\nkind = "replay"\n[base]\nsource = { workload = "scan" }\npolicy = "lru"\n'
                    'frames = 10\n[[axis]]\nkey = "frames"\nvalues = [10, 20]\n')
    script = tmp_path / "s.py"
    script.write_text(f"import pagelab\npagelab.sweep({str(spec)!r}, out={str(tmp_path / 'out')!r}, workers=2)\n")
    p = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert p.returncode != 0
    assert p.stderr.count("Traceback") == 1, p.stderr
    assert 'if __name__ == "__main__"' in p.stderr
    assert len(p.stderr.splitlines()) < 30, p.stderr
    assert not (tmp_path / "out").exists()


def test_experiments_ship_inside_the_package():
    from pagelab.experiments.runner import EXPERIMENTS_DIR, experiment_path

    assert EXPERIMENTS_DIR.parent == Path(api.__file__).parent
    names = sorted(p.stem for p in EXPERIMENTS_DIR.glob("*.toml"))
    assert names == ["calibration", "gang", "mclustering", "numa", "predictive", "predictive-real", "token-lru"]
    assert experiment_path("token-lru").is_file()
    with pytest.raises(pagelab.PagelabError, match="unknown.*token-lru"):
        experiment_path("nosuch")
