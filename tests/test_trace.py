"""Trace formats end to end: info, convert round trips, capture under Valgrind."""

import json
import os
import shutil

import numpy as np
import pytest

from conftest import run_cli

import pagelab


def records(source):
    df = source.to_dataframe()
    return list(zip(df["pid"], df["page"], df["kind"].astype(str), df["repeat"]))


@pytest.fixture
def mixed(tmp_path):
    """A small trace with reads and writes (LU writes its matrix)."""
    path = tmp_path / "lu.plt"
    r = run_cli("workload", "emit", "lu", "--param", "n=40", "-o", path)
    assert r.code == 0, r.err
    return path


def test_trace_info_json(mixed):
    r = run_cli("trace", "info", mixed, "--json")
    assert r.code == 0, r.err
    info = json.loads(r.out)
    assert info["page_size"] == 4096
    assert info["references"] == info["reads"] + info["writes"] + info["instructions"]
    assert info["writes"] > 0 and info["reads"] > 0
    assert info["footprint_bytes"] == info["distinct_pages"] * 4096
    assert len(info["processes"]) == 1
    table = run_cli("trace", "info", mixed)
    assert table.code == 0 and "distinct pages" in table.out


@pytest.mark.parametrize("name", ["copy.plt", "copy.plt.zst", "copy.csv", "copy.csv.zst"])
def test_convert_round_trip(tmp_path, mixed, name):
    out = tmp_path / name
    r = run_cli("trace", "convert", mixed, out)
    assert r.code == 0, r.err
    assert records(pagelab.Trace.open(out)) == records(pagelab.Trace.open(mixed))


def test_oracle_general_round_trip(tmp_path, mixed):
    out = tmp_path / "copy.oracleGeneral"
    assert run_cli("trace", "convert", mixed, out).code == 0
    assert out.stat().st_size % 24 == 0
    orig = pagelab.Trace.open(mixed).to_dataframe()
    expected = np.repeat(orig["page"].to_numpy(), orig["repeat"].to_numpy())
    back = pagelab.Trace.open(out).to_dataframe()
    got = np.repeat(back["page"].to_numpy(), back["repeat"].to_numpy())
    assert (got == expected).all()
    # replacement results agree (oracleGeneral carries no writes)
    a = pagelab.replay(out, policy=["lru", "opt"], frames=[10, 30])
    b = pagelab.replay(mixed, policy=["lru", "opt"], frames=[10, 30])
    assert [x["faults"] for x in a] == [x["faults"] for x in b]


def test_page_size_conversion(tmp_path):
    src = tmp_path / "a.csv"
    src.write_text("pid,addr,kind\n" + "".join(f"1,{hex(a)},r\n" for a in [0, 100, 5000, 9000, 70000, 4100]))
    t = pagelab.Trace.open(src, page_size=8192)
    assert [int(p) for p in t.to_dataframe()["page"]] == [0, 1, 8, 0]


def test_python_trace_api(mixed):
    t = pagelab.Trace.open(mixed)
    df = t.to_dataframe(limit=10)
    assert len(df) == 10
    assert set(df.columns) == {"id", "pid", "page", "kind", "repeat", "gap"}
    total = sum(len(b["id"]) for b in t.batches())
    assert total == t.info()["records"]


def test_workload_list():
    r = run_cli("workload", "list", "--json")
    assert r.code == 0
    names = [w["name"] for w in json.loads(r.out)]
    for n in ["lu", "sor", "matmul", "mergesort", "bitrev", "jacobi", "spmv", "shrinking-loop",
              "scan", "uniform", "zipf", "phases"]:
        assert n in names


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_capture_real_program(tmp_path):
    out = tmp_path / "true.plt"
    r = run_cli("trace", "capture", "-o", out, "--", "/bin/true", timeout=600)
    assert r.code == 0, r.err
    info = pagelab.Trace.open(out).info()
    # the dynamic loader alone runs tens of thousands of instructions
    assert info["instructions"] > 10_000
    assert info["reads"] > 1000 and info["writes"] > 100
    assert info["distinct_pages"] > 10
    r = run_cli("replay", "--trace", out, "--frames", "4,16", "--policy", "lru,opt")
    assert r.code == 0, r.err


#: a tiny lackey stream (Valgrind's own lines, instruction fetches, a load, a store, a
#: modify spanning two pages) for `trace capture` through a stand-in for valgrind
LACKEY = ("==7== Lackey, an example Valgrind tool\n"
          "I  00001000,3\n L 00002000,8\nI  00001003,2\n S 00002008,4\n M 00003ffc,8\nI  00005000,4\n")


@pytest.fixture
def fake_valgrind(tmp_path):
    """A `valgrind` on PATH that writes LACKEY to the --log-fd it is given."""
    import sys

    fixture = tmp_path / "fixture.lackey"
    fixture.write_text(LACKEY)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "valgrind"
    script.write_text(f"#!{sys.executable}\n"
                      "import os, sys\n"
                      "fd = int(next(a for a in sys.argv[1:] if a.startswith('--log-fd=')).split('=')[1])\n"
                      f"os.write(fd, open({str(fixture)!r}, 'rb').read())\n")
    script.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


@pytest.mark.parametrize("data_only", [False, True])
def test_capture_data_only_from_a_lackey_fixture(tmp_path, fake_valgrind, data_only):
    """`trace capture --data-only` drops lackey's instruction fetches (I lines) while
    parsing: the load, the store and the modify's two pages remain (issue 22)."""
    out = tmp_path / "t.plt"
    flag = ["--data-only"] if data_only else []
    r = run_cli("trace", "capture", "-o", out, *flag, "--", "/bin/true", env=fake_valgrind)
    assert r.code == 0, r.err
    info = pagelab.Trace.open(out).info()
    assert (info["reads"], info["writes"]) == (1, 3)
    assert info["instructions"] == (0 if data_only else 3)
    assert ("4 data references" if data_only else "7 references") in r.out
    assert records(pagelab.Trace.open(out))[-1] == ((0, 4, "write", 1) if data_only else (0, 5, "instruction", 1))


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_capture_real_program_data_only(tmp_path):
    out = tmp_path / "true-data.plt"
    r = run_cli("trace", "capture", "--data-only", "-o", out, "--", "/bin/true", timeout=600)
    assert r.code == 0, r.err
    info = pagelab.Trace.open(out).info()
    assert info["instructions"] == 0
    assert info["reads"] > 1000 and info["writes"] > 100
    assert "data references" in r.out

