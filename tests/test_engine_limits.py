"""Issue 20, robustness of the engine: every absurd value or malformed input ends in one
line naming the file or the key, a non-zero exit and no file left behind; what is not
absurd runs in bounded memory."""

import json
import zlib

import pytest

from conftest import assert_user_error, run_cli

import pagelab

SCAN = """
[[process]]
name = "a"
workload = "scan"
params = { pages = 50, passes = 2 }
"""


def write_config(tmp_path, body: str, name: str = "sys.toml"):
    path = tmp_path / name
    path.write_text(body + SCAN)
    return path


def run_config(tmp_path, body: str, name: str = "sys.toml"):
    path = write_config(tmp_path, body, name)
    out = tmp_path / "out"
    return run_cli("run", path, "--out", out), out


# ------------------------------------------------------------ configuration values

BAD_CONFIGS = [
    # (configuration before the [[process]] entry, fragments of the one-line error)
    ("[system]\nframes = 100\ncpu_ns_per_ref = 1e18\n", ["system.cpu_ns_per_ref", "one simulated day", "got 1e18"]),
    ("[system]\nframes = 100\ncpu_ns_per_ref = 1e20\n", ["system.cpu_ns_per_ref", "one simulated day"]),
    ("[system]\nframes = 100\nsample_ms = 1e-9\n", ["system.sample_ms", "1 ns, the clock's resolution"]),
    ("[system]\nframes = 100\nswap_slots = 1000000000000000\n", ["system.swap_slots", "at most 268435456"]),
    ("[system]\nframes = 100\nspace_time = true\nspace_time_buckets = 4000000000\n",
     ["system.space_time_buckets", "1 to 4096"]),
    ("[system]\nframes = 100\n[disk]\nrpm = 1e-12\n", ["disk.rpm", "one simulated day", "got 1e-12"]),
    ("[system]\nframes = 100\n[disk]\nmodel = \"ssd\"\nbandwidth_mb_s = 1e-300\n",
     ["disk.bandwidth_mb_s", "one simulated day", "got 1e-300"]),
    ("[system]\nframes = 100\n[disk]\nlatency_us = 50\n", ["disk", "'latency_us' is a key of model = \"ssd\""]),
]


@pytest.mark.parametrize("body,fragments", BAD_CONFIGS, ids=[f[0] for _, f in BAD_CONFIGS])
def test_absurd_configuration_values_are_one_line_errors(tmp_path, body, fragments):
    r, out = run_config(tmp_path, body)
    assert_user_error(r, "sys.toml", *fragments)
    assert not out.exists()


def test_a_clock_past_2_63_ns_is_an_error_not_a_wrapped_number(tmp_path):
    # a day per reference (allowed) over 120,000 references: 2^63 ns is 106,752 days
    body = "[system]\nframes = 2000\ncpu_ns_per_ref = 86400e9\n"
    path = tmp_path / "sys.toml"
    path.write_text(body + SCAN.replace("pages = 50, passes = 2", "pages = 1000, passes = 120"))
    r = run_cli("run", path, "--out", tmp_path / "out")
    assert_user_error(r, "sys.toml", "simulated time exceeds 2^63 ns")
    assert not (tmp_path / "out").exists()


def test_a_disk_table_without_model_is_the_documented_hdd(tmp_path):
    r, out = run_config(tmp_path, "[system]\nframes = 100\n[disk]\nrpm = 5400\n")
    assert r.code == 0, r.err
    assert (out / "result.json").exists()


def test_a_tiny_sample_interval_keeps_at_most_200000_samples(tmp_path):
    # one sample per reference at 1 ns a reference: 500,000 samples without the limit
    body = "[system]\nframes = 200\nsample_ms = 0.000001\ncpu_ns_per_ref = 1.0\n"
    path = tmp_path / "sys.toml"
    path.write_text(body + SCAN.replace("pages = 50, passes = 2", "pages = 100, passes = 5000"))
    r = run_cli("run", path, "--out", tmp_path / "out")
    assert r.code == 0, r.err
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert len(result["system_series"]["t_s"]) <= 200_000
    assert result["sample_ns"] >= 4
    assert sum(result["series"][0]["npf"]) == result["processes"][0]["major_faults"]


# ------------------------------------------------------------ trace inputs

def _checksum_table_at(b: bytes) -> int:
    """Offset of the block-checksum count of a version-2 .plt (after the process table)."""
    at = int.from_bytes(b[48:56], "little")
    count = int.from_bytes(b[at:at + 4], "little")
    at += 4
    for _ in range(count):
        at += 6 + int.from_bytes(b[at + 4:at + 6], "little")
    return at


def reseal(b: bytearray) -> None:
    """Recomputes the checksums of a version-2 .plt after a change (docs/trace-format.md)."""
    trailer = int.from_bytes(b[48:56], "little")
    at = _checksum_table_at(b) + 4
    for i in range(56, trailer, 65536):
        b[at:at + 4] = zlib.crc32(bytes(b[i:min(i + 65536, trailer)])).to_bytes(4, "little")
        at += 4
    b[at:at + 4] = zlib.crc32(bytes(b[:56]) + bytes(b[trailer:at])).to_bytes(4, "little")


@pytest.fixture
def raw_plt(tmp_path):
    path = tmp_path / "t.plt"
    pagelab.workload("scan", pages=5000, passes=2).save(path)
    return path


def test_a_flipped_payload_byte_of_a_raw_trace_is_found(tmp_path, raw_plt):
    data = bytearray(raw_plt.read_bytes())
    assert int.from_bytes(data[8:10], "little") == 2
    data[56 + 70000] ^= 0x01  # in body block 1
    bad = tmp_path / "bad.plt"
    bad.write_bytes(bytes(data))
    r = run_cli("trace", "info", bad)
    assert_user_error(r, "bad.plt", "byte 65592", "expected body block 1", "CRC-32", "corrupt")
    out = tmp_path / "copy.csv"
    r = run_cli("trace", "convert", bad, out)
    assert_user_error(r, "bad.plt", "CRC-32")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.plt", "t.plt"]


def test_first_touches_beyond_the_header_count_are_an_error_at_once(tmp_path):
    path = tmp_path / "t.plt.zst"
    pagelab.workload("scan", pages=5000, passes=2).save(path)
    data = bytearray(path.read_bytes())
    assert int.from_bytes(data[10:12], "little") & 1  # a zstd body
    data[40:48] = (10).to_bytes(8, "little")  # distinct_pages
    reseal(data)
    path.write_bytes(bytes(data))
    r = run_cli("trace", "info", path)
    assert_user_error(r, "t.plt.zst", "expected at most 10 distinct pages as the header says", "record 10 of 10000")


def test_a_huge_text_line_is_an_error_at_its_line(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("pid,page\n0,1\n0," + "1" * 100_000 + "\n")
    r = run_cli("trace", "info", path)
    assert_user_error(r, "big.csv", "line 3", "expected a line of at most 4096 bytes")
    lackey = tmp_path / "big.lackey"
    lackey.write_text("I  0401a2b0,3\n L " + "0" * 10_000 + ",8\n")
    r = run_cli("trace", "info", lackey)
    assert_user_error(r, "big.lackey", "line 2", "at most 4096 bytes")


def test_a_huge_repeat_is_refused_for_oracle_output_with_no_file_left(tmp_path):
    rep = tmp_path / "rep.csv"
    rep.write_text("pid,page,kind,repeat\n0,1,r,4294967295\n")  # 38 bytes
    r = run_cli("trace", "convert", rep, tmp_path / "out.oracleGeneral")
    assert_user_error(r, "out.oracleGeneral", "expected at most 1073741824 references", "repeats 4294967295 times")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep.csv"]


def test_oracle_output_of_repeats_matches_the_expanded_stream(tmp_path):
    rep = tmp_path / "rep.csv"
    rep.write_text("pid,page,kind,repeat\n0,1,r,3\n0,2,r,2\n0,1,w,1\n0,3,r,4\n0,2,r,1\n")
    out = tmp_path / "out.oracleGeneral"
    r = run_cli("trace", "convert", rep, out)
    assert r.code == 0, r.err
    data = out.read_bytes()
    got = [(int.from_bytes(data[i:i + 4], "little"), int.from_bytes(data[i + 4:i + 12], "little"),
            int.from_bytes(data[i + 16:i + 24], "little", signed=True)) for i in range(0, len(data), 24)]
    pages = [1, 1, 1, 2, 2, 1, 3, 3, 3, 3, 2]
    expect = [(i, p, next((j for j in range(i + 1, len(pages)) if pages[j] == p), -1)) for i, p in enumerate(pages)]
    assert got == expect


def test_numa_costs_that_overflow_the_clock_are_refused(tmp_path):
    # local_ns = 1e30 made the run hang on wrapped times
    path = tmp_path / "numa.toml"
    path.write_text('[numa]\npage_size = 2048\nlocal_ns = 1e30\n[numa.workload]\nname = "vecmat"\n'
                    'params = { n = 64, procs = 4, repeat = 2 }\n')
    r = run_cli("run", path, "--out", tmp_path / "out", timeout=60)
    assert_user_error(r, "numa.toml", "numa.local_ns", "one simulated day")
    assert not (tmp_path / "out").exists()
