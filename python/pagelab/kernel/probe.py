"""Measuring this machine for the simulator (issue 17's calibration): the swap device
(4 KiB random reads and sequential writes, O_DIRECT, on the file system that holds the
swap file) and the kernel's fault costs (a zero-fill first touch; a swap-in, paged out
with MADV_PAGEOUT), both done by ``pagelab-runner --probe-*``, then the simulator's
keys fitted to them (:func:`fit`). ``pagelab kernel probe`` prints both."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Optional

from .._core import PagelabError
from .host import swap_devices
from .probe_sizes import PROBE_MB, PROBE_PAGES, PROBE_READS
from .runner import find_runner
from .swapfile import recorded_setup


def probe_dir() -> Path:
    """Where the device is measured: the directory of the swap file ``kernel setup``
    made, else of the first active swap file, else /var/tmp."""
    rec = recorded_setup()
    if rec and rec.get("swap_file"):
        return Path(rec["swap_file"]).parent
    for d in swap_devices():
        if d.get("type") == "file":
            return Path(d["name"]).parent
    return Path("/var/tmp")


def _run(args: list, what: str) -> dict:
    r = subprocess.run([find_runner()] + args, capture_output=True, text=True)
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[0]
        raise PagelabError(f"{what}: {why.replace('pagelab-runner: error: ', '')}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def probe(directory: Optional[str] = None, mb: int = PROBE_MB, reads: int = PROBE_READS,
          pages: int = PROBE_PAGES) -> dict:
    """Measures the device under ``directory`` (default :func:`probe_dir`) and the fault
    costs: {"disk": ..., "faults": ..., "swap": active swap devices, "kernel": ...}. The
    swap-in costs need active swap (``pagelab kernel setup``); without it they are None."""
    d = Path(directory) if directory else probe_dir()
    if not d.is_dir():
        raise PagelabError(f"{d}: no such directory (the device is measured through a file created there)")
    disk = _run(["--probe-disk", os.fspath(d), "--probe-mb", str(mb), "--probe-reads", str(reads)],
                f"probing the device under {d}")
    faults = _run(["--probe-faults", str(pages)], "probing the fault costs")
    return {"disk": disk, "faults": faults, "swap": swap_devices(), "kernel": os.uname().release,
            "page_cluster": _page_cluster()}


def _page_cluster() -> Optional[int]:
    try:
        return int(Path("/proc/sys/vm/page-cluster").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _median(sorted_values: list) -> float:
    n = len(sorted_values)
    return sorted_values[(n - 1) // 2] if n % 2 else (sorted_values[n // 2 - 1] + sorted_values[n // 2]) / 2


def fit(measured: dict) -> dict:
    """The simulator's keys fitted to a :func:`probe`: an SSD (``latency_us`` the median
    4 KiB random read less its transfer at the fitted bandwidth, ``bandwidth_mb_s`` the
    sequential write rate: page-outs are sequential writes), ``minor_fault_ns`` (a first
    touch's wall time), ``major_fault_cpu_ns`` (a random swap-in's wall time less the
    device's 4 KiB read, so that a simulated major fault costs what a measured one does),
    and ``swap.page_cluster`` from the kernel's. Keys that could not be measured (no
    swap) are left out. Returns {"disk": {...}, "system": {...}, "swap": {...},
    "measured": {...}} with the numbers behind them."""
    disk, faults = measured["disk"], measured["faults"]
    bandwidth = float(disk["seq_write_mb_s"])
    read_us = _median(disk["random_read_4k_us"])
    transfer_us = 4096 / (bandwidth * 1e6) * 1e6
    latency = max(read_us - transfer_us, 1.0)
    first = faults["first_touch"]
    minor_ns = first["wall_ns"] / max(first["pages"], 1)
    out = {"disk": {"model": "ssd", "latency_us": round(latency, 2), "bandwidth_mb_s": round(bandwidth, 1)},
           "system": {"minor_fault_ns": round(minor_ns, 1)}, "swap": {},
           "measured": {"read_4k_us_median": read_us, "write_mb_s": bandwidth,
                        "read_mb_s": float(disk["seq_read_mb_s"]), "write_4k_us": float(disk["seq_write_4k_us"]),
                        "first_touch_ns": minor_ns, "first_touch_cpu_ns": first["cpu_ns"] / max(first["pages"], 1)}}
    rnd = faults.get("swap_in_random")
    if rnd and rnd["major_faults"] > 0:
        per_major = rnd["wall_ns"] / rnd["major_faults"]
        out["system"]["major_fault_cpu_ns"] = round(max(per_major - read_us * 1000.0, 1.0), 1)
        out["measured"].update({"major_fault_ns": per_major, "major_fault_cpu_ns": rnd["cpu_ns"] / rnd["major_faults"],
                                "random_majors_per_page": rnd["major_faults"] / rnd["pages"]})
    seq = faults.get("swap_in_sequential")
    if seq and seq["major_faults"] > 0:
        out["measured"]["sequential_pages_per_major"] = seq["pages"] / seq["major_faults"]
    if measured.get("page_cluster") is not None:
        out["swap"]["page_cluster"] = int(measured["page_cluster"])
    return out


def probe_lines(measured: dict, fitted: dict) -> list:
    """The human form of a probe and its fit."""
    m = fitted["measured"]
    lines = [f"device under {measured['disk']['path'].rsplit('/', 1)[0]}: 4 KiB random read {m['read_4k_us_median']:.1f} us "
             f"(median of {len(measured['disk']['random_read_4k_us'])}), 4 KiB sequential write {m['write_4k_us']:.1f} us, "
             f"sequential write {m['write_mb_s']:,.0f} MB/s, read {m['read_mb_s']:,.0f} MB/s",
             f"first touch (zero-fill fault): {m['first_touch_ns'] / 1000:.2f} us ({m['first_touch_cpu_ns'] / 1000:.2f} us CPU)"]
    if "major_fault_ns" in m:
        lines.append(f"swap-in (random order): {m['major_fault_ns'] / 1000:.1f} us a major fault "
                     f"({m['major_fault_cpu_ns'] / 1000:.1f} us CPU), {m['random_majors_per_page']:.2f} major faults a page")
    else:
        lines.append("swap-in: not measured (no active swap: pagelab kernel setup --swap SIZE)")
    if "sequential_pages_per_major" in m:
        lines.append(f"swap-in (address order): {m['sequential_pages_per_major']:.1f} pages a major fault "
                     f"(readahead; vm.page-cluster {measured.get('page_cluster')})")
    lines.append("simulator keys fitted to them:")
    for table in ("system", "disk", "swap"):
        if fitted[table]:
            lines.append(f"  [{table}]")
            lines += [f"  {k} = {json.dumps(v)}" for k, v in fitted[table].items()]
    return lines
