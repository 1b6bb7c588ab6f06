"""Command-line arguments: the checks and conversions of what users type, each mistake
a :class:`UsageError` (one line, exit 2)."""

from __future__ import annotations

from typing import List, Optional

from .api import U64_MAX


class UsageError(Exception):
    """A command-line mistake found after parsing (bad list, bad k=v)."""


#: how --help describes the number suffixes parse_int accepts
BINARY_SUFFIXES = "k, M, G are binary multiples: 4k = 4096"


def parse_int(text: str, what: str) -> int:
    """A positive whole number below 2^64; accepts 4096, 4k, 2M, 1G (binary multiples:
    k = 1024)."""
    t = text.strip().lower()
    mult = 1
    for suffix, m in (("k", 1 << 10), ("m", 1 << 20), ("g", 1 << 30)):
        if t.endswith(suffix):
            t, mult = t[:-1], m
            break
    try:
        value = int(t, 0) * mult
    except ValueError:
        raise UsageError(f"{what}: expected a positive whole number (e.g. 4096 or 4k), got '{text}'") from None
    if value <= 0:
        raise UsageError(f"{what}: expected a positive whole number, got '{text}'")
    if value > U64_MAX:
        raise UsageError(f"{what}: expected a number below 2^64, got '{text}'")
    return value


def parse_int_list(text: str, what: str) -> List[int]:
    items = [x for x in text.split(",") if x.strip()]
    if not items:
        raise UsageError(f"{what}: expected a comma-separated list of positive numbers, got '{text}'")
    return [parse_int(x, what) for x in items]


def parse_params(pairs: Optional[List[str]]) -> dict:
    params = {}
    for pair in pairs or []:
        for item in pair.split(","):
            if not item.strip():
                continue
            if "=" not in item:
                raise UsageError(f"--param: expected NAME=VALUE, got '{item}'")
            k, v = item.split("=", 1)
            k = k.strip()
            if k in params:
                raise UsageError(f"--param: '{k}' given twice ('{k}={params[k]}' and '{item.strip()}')")
            params[k] = v.strip()
    return params


def parse_seed(text: str) -> int:
    try:
        seed = int(text, 0)
    except ValueError:
        raise UsageError(f"--seed: expected a whole number, got '{text}'") from None
    if seed < 0 or seed >= 1 << 64:
        raise UsageError(f"--seed: expected a number from 0 to 2^64-1, got '{text}'")
    return seed


def parse_fraction(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 1:
        raise UsageError(f"{what}: expected a fraction of the distinct pages in (0, 1], got '{text}'")
    return value


def parse_workers(args) -> Optional[int]:
    if args.workers is None:
        return None
    try:
        workers = int(args.workers)
    except ValueError:
        workers = -1
    if workers < 0:
        raise UsageError(f"--workers: expected a whole number from 0, got '{args.workers}'")
    if args.scheduler:
        raise UsageError("--workers: only applies to a local cluster (not with --scheduler)")
    return workers
