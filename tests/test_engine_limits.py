"""Issue 20, robustness of the engine: every absurd value or malformed input ends in one
line naming the file or the key, a non-zero exit and no file left behind; what is not
absurd runs in bounded memory."""

import json

import pytest

from conftest import assert_user_error, run_cli

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
