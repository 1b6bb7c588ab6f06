"""The Python API: sources (traces and workloads), replay, miss-ratio curves.

Everything here converts arguments and results; the engine (``pagelab._core``) does the
work. Results convert to pandas DataFrames.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Sequence, Union

from . import _core
from ._core import PagelabError
from .files import parent_dirs
from .suite_cache import is_suite_name, resolve
from .figures.curves import draw_fault_curves, draw_mrc

KIND_NAMES = ("read", "write", "instruction", "free")
#: the engine's whole numbers are 64-bit unsigned
U64_MAX = (1 << 64) - 1

ProgressHook = Optional[Callable[[int], None]]


def whole_number(value, what: str, minimum: int = 0, maximum: int = U64_MAX) -> int:
    """``value`` as an int in [minimum, maximum], else a one-line PagelabError naming
    ``what`` (never Python's OverflowError or TypeError from the bindings)."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            import numbers

            if not isinstance(value, numbers.Integral):
                raise TypeError
            value = int(value)
        except TypeError:
            raise PagelabError(f"{what}: expected a whole number, got {value!r}") from None
    if not minimum <= value <= maximum:
        limit = "2^64-1" if maximum == U64_MAX else f"{maximum:,}"
        raise PagelabError(f"{what}: expected a whole number from {minimum:,} to {limit}, got {value}")
    return value


def html_table(title: str, df, max_rows: int = 60) -> str:
    """A result as Jupyter shows it: a title line, then the table (at most ``max_rows``
    rows; the object's ``to_dataframe()`` has them all)."""
    import html

    return f"<p><b>{html.escape(title)}</b></p>" + df.to_html(max_rows=max_rows, index=False, border=0)


class Source:
    """Something that yields references: a trace file or a built-in workload."""

    def spec(self) -> dict:
        raise NotImplementedError

    @property
    def name(self) -> str:
        raise NotImplementedError

    def meta(self) -> dict:
        """Page size, process table and record count (None when unknown before reading)."""
        return _core.SourceReader(self.spec()).meta()

    def info(self, progress: ProgressHook = None) -> dict:
        """Reads the whole source once: references, distinct pages, footprint, kind mix."""
        return _core.trace_info(self.spec(), progress)

    def batches(self) -> Iterator[dict]:
        """Streams the records in batches of numpy arrays: id, pid, page, kind, repeat, gap."""
        import numpy as np

        reader = _core.SourceReader(self.spec())
        dtypes = {"id": "<u4", "pid": "<u4", "page": "<u8", "kind": "u1", "repeat": "<u4", "gap": "<u4"}
        while True:
            batch = reader.next_batch()
            if batch is None:
                return
            yield {k: np.frombuffer(v, dtype=dtypes[k]).astype(dtypes[k].lstrip("<"))
                   for k, v in batch.items()}

    def to_dataframe(self, limit: Optional[int] = None):
        """The records as a DataFrame (kind as a category); ``limit`` caps the row count."""
        import numpy as np
        import pandas as pd

        frames, rows = [], 0
        for batch in self.batches():
            df = pd.DataFrame(batch)
            if limit is not None and rows + len(df) > limit:
                df = df.iloc[: limit - rows]
            frames.append(df)
            rows += len(df)
            if limit is not None and rows >= limit:
                break
        if not frames:
            df = pd.DataFrame({k: np.array([], dtype=t) for k, t in
                               [("id", np.uint32), ("pid", np.uint32), ("page", np.uint64),
                                ("kind", np.uint8), ("repeat", np.uint32), ("gap", np.uint32)]})
        else:
            df = pd.concat(frames, ignore_index=True)
        df["kind"] = pd.Categorical.from_codes(df["kind"].astype("int8"), categories=list(KIND_NAMES))
        return df

    def save(self, path: Union[str, os.PathLike], format: Optional[str] = None,
             compress: Optional[bool] = None, progress: ProgressHook = None) -> int:
        """Writes this source as a trace file; format and compression from the file name
        unless given. Returns the number of records written."""
        fmt, zst = output_format(path, format)
        with parent_dirs(path):
            return _core.convert(self.spec(), os.fspath(path), fmt, zst if compress is None else compress, progress)


class Trace(Source):
    """A trace file in any supported format (see ``trace_formats()``), or ``suite:NAME``:
    a member of the real-program suite (``pagelab suite build``)."""

    def __init__(self, path: Union[str, os.PathLike], format: Optional[str] = None,
                 page_size: Optional[int] = None):
        self.label = path if is_suite_name(path) else None
        self.path = Path(resolve(path))
        self.format = format
        self.page_size = None if page_size is None else whole_number(page_size, "page_size", 1)

    @classmethod
    def open(cls, path: Union[str, os.PathLike], format: Optional[str] = None,
             page_size: Optional[int] = None) -> "Trace":
        """Opens (and checks the header of) a trace; the format is detected if not given."""
        trace = cls(path, format, page_size)
        trace.meta()  # fail now, with the engine's one-line error, if it cannot be read
        return trace

    @property
    def name(self) -> str:
        return self.label or str(self.path)

    def spec(self) -> dict:
        return {"trace": os.fspath(self.path), "format": self.format, "page_size": self.page_size}

    def __repr__(self) -> str:
        return f"Trace({str(self.path)!r}, format={self.format!r}, page_size={self.page_size!r})"


class Workload(Source):
    """A built-in workload generator with parameters (see ``workloads()``)."""

    def __init__(self, name: str, seed: int = 0, page_size: int = 4096, **params):
        self.workload_name = name
        self.seed = whole_number(seed, "seed")
        self.page_size = whole_number(page_size, "page_size", 1)
        self.params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items()}

    @property
    def name(self) -> str:
        extra = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.workload_name}({extra})" if extra else self.workload_name

    def spec(self) -> dict:
        return {"workload": self.workload_name, "params": dict(self.params),
                "page_size": self.page_size, "seed": self.seed}

    def __repr__(self) -> str:
        return f"Workload({self.workload_name!r}, seed={self.seed}, page_size={self.page_size}, params={self.params})"


def workload(name: str, seed: int = 0, page_size: int = 4096, **params) -> Workload:
    """A built-in workload; raises PagelabError for an unknown name or parameter."""
    w = Workload(name, seed=seed, page_size=page_size, **params)
    w.meta()  # validates name and parameters now
    return w


def workloads() -> list:
    """The built-in workloads with their parameters and defaults."""
    return _core.workloads()


def trace_formats() -> list:
    return list(_core.trace_formats())


def policies() -> list:
    return list(_core.policies())


def split_policies(text: str) -> list:
    """The policies of a comma-separated list, as ``--policy`` takes them. Last-dynamic's
    parameter may hold a comma of its own (``last-dynamic:60,censored``): a piece that is
    not a policy's name continues a ``last-dynamic:`` before it."""
    known = set(policies())
    out: list = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        name = piece.split(":", 1)[0].strip().lower()
        if out and name not in known and out[-1].lower().startswith("last-dynamic:"):
            out[-1] += "," + piece
        else:
            out.append(piece)
    return out


def as_source(source) -> Source:
    """Accepts a Source, or a path to a trace file."""
    if isinstance(source, Source):
        return source
    if isinstance(source, (str, os.PathLike)):
        return Trace(source)
    raise TypeError(f"expected a pagelab Trace, Workload or a path, got {type(source).__name__}")


def output_format(path, format: Optional[str]) -> tuple:
    """(format name, compressed) for an output path: explicit format wins, else the
    extension (.plt, .csv/.txt, .oracleGeneral, with an optional .zst)."""
    name = os.fspath(path).lower()
    compressed = name.endswith(".zst")
    if compressed:
        name = name[: -len(".zst")]
    if format:
        return format, compressed
    for suffix, fmt in ((".plt", "pagelab"), (".csv", "csv"), (".txt", "csv"),
                        (".oraclegeneral", "oracle"), (".oraclegeneral.bin", "oracle"),
                        (".bin", "oracle")):
        if name.endswith(suffix):
            return fmt, compressed
    raise PagelabError(f"{os.fspath(path)}: cannot tell the output format from the file name "
                       "(expected .plt, .csv, .txt or .oracleGeneral, optionally .zst; or give a format)")


class ReplayResults:
    """Results of one replay: a row per (policy, frames)."""

    COLUMNS = ["source", "policy", "frames", "references", "records", "faults",
               "compulsory_faults", "fault_ratio", "dirty_evictions", "distinct_pages", "mean_resident"]

    def __init__(self, source_name: str, rows: list):
        self.source_name = source_name
        self.rows = [dict(source=source_name, **r) for r in rows]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i):
        return self.rows[i]

    def faults(self, policy: str, frames: Optional[int] = None) -> int:
        """Faults of ``policy`` (its label, e.g. ``"last-static:5"``) at ``frames``;
        without ``frames`` the policy's only row (a variable-size policy has frames 0)."""
        rows = [r for r in self.rows if r["policy"] == policy and (frames is None or r["frames"] == frames)]
        if len(rows) == 1:
            return rows[0]["faults"]
        policies_ = list(dict.fromkeys(r["policy"] for r in self.rows))
        if policy not in policies_:
            raise PagelabError(f"faults: no policy '{policy}' in this result (it has: {', '.join(policies_)})")
        sizes = [r["frames"] for r in self.rows if r["policy"] == policy]
        if frames is None:
            raise PagelabError(f"faults: '{policy}' was replayed at {len(sizes)} sizes: give frames "
                               f"(one of {', '.join(map(str, sizes))})")
        raise PagelabError(f"faults: '{policy}' was not replayed at {frames} frames "
                           f"(sizes: {', '.join(map(str, sizes))})")

    def to_dataframe(self):
        """One row per (policy, frames); policy-specific counts (e.g. ``predictions``,
        ``dead_list_evictions`` of the predictive policies) as extra columns."""
        import pandas as pd

        extra = list(dict.fromkeys(k for r in self.rows for k in r.get("counters", {})))
        records = [dict({c: r.get(c) for c in self.COLUMNS}, **r.get("counters", {})) for r in self.rows]
        return pd.DataFrame(records, columns=self.COLUMNS + extra)

    def to_json(self) -> str:
        return json.dumps(self.rows, indent=2)

    def plot(self, title: Optional[str] = None):
        """Faults against memory size, a line per policy: a matplotlib Figure (Jupyter
        shows it; ``fig.savefig(path)`` writes it)."""
        return draw_fault_curves(self.to_dataframe(), title or f"faults of {self.source_name}")

    def _repr_html_(self) -> str:
        return html_table(repr(self), self.to_dataframe())

    def __repr__(self) -> str:
        return f"ReplayResults({self.source_name!r}, {len(self.rows)} rows)"


def _as_list(value, what: str) -> list:
    if isinstance(value, (str, int)):
        return [value]
    try:
        return list(value)
    except TypeError:
        raise PagelabError(f"{what}: expected a value or a list of values, got {value!r}") from None


def replay_progress_total(source, policy: Union[str, Sequence[str]]) -> Optional[int]:
    """The count a progress bar of ``replay(source, policy, ...)`` ends at: the source's
    records times the passes the engine makes (two with OPT), None when unknown."""
    records = as_source(source).meta().get("records")
    if records is None:
        return None
    return records * _core.replay_passes([p.strip() for p in _as_list(policy, "policy")])


def replay(source, policy: Union[str, Sequence[str]] = "lru", frames: Union[int, Iterable[int]] = (),
           seed: int = 0, progress: ProgressHook = None, repeats: str = "fold") -> ReplayResults:
    """Replays a source under each policy at each memory size (in frames), streaming the
    source once for all of them, sizes in parallel. Returns ReplayResults.

    ``repeats``: what a policy sees of a run of references to one page: ``"fold"`` one
    reference, as a kernel's reference bit sees it; ``"hits"`` every reference after the
    first as a hit, as cache simulators and the policies' authors' programs read a trace
    (the presets named after such a program always do; docs/policies.md)."""
    src = as_source(source)
    policies_ = [p.strip() for p in _as_list(policy, "policy")]
    frames_ = _as_list(frames, "frames")
    if not frames_:
        raise PagelabError("frames: expected at least one memory size in frames")
    frames_ = [whole_number(f, "frames", 1) for f in frames_]
    rows = _core.replay(src.spec(), policies_, frames_, whole_number(seed, "seed"), progress, repeats)
    return ReplayResults(src.name, rows)


class MissRatioCurve:
    """The exact LRU or OPT fault count at every memory size, from one pass (Mattson)."""

    def __init__(self, source_name: str, raw: dict, policy: str = "lru"):
        import numpy as np

        self.source_name = source_name
        #: the stack algorithm of the curve: lru or opt
        self.policy = policy
        self.records = raw["records"]
        self.references = raw["references"]
        self.distinct_pages = raw["distinct_pages"]
        self.compulsory_faults = raw["compulsory_faults"]
        #: faults[s - 1] = the policy's faults with s frames, s = 1 .. distinct_pages
        faults = raw["faults"]
        self.faults = (np.frombuffer(faults, dtype="<u8").astype(np.uint64)
                       if isinstance(faults, (bytes, bytearray)) else np.asarray(faults, dtype=np.uint64))

    def faults_at(self, frames: int) -> int:
        if frames <= 0:
            raise PagelabError(f"frames: expected a positive number, got {frames}")
        if frames > len(self.faults):
            return int(self.compulsory_faults)
        return int(self.faults[frames - 1])

    def to_dataframe(self):
        import pandas as pd

        return pd.DataFrame(self._columns())

    def fault_ratios(self):
        """faults / references at every memory size 1 .. distinct_pages (numpy)."""
        return self.faults / max(self.references, 1)

    def _columns(self) -> dict:
        """frames, faults, fault_ratio: the columns of the DataFrame and of the CSV."""
        import numpy as np

        return {"frames": np.arange(1, len(self.faults) + 1, dtype=np.uint64), "faults": self.faults,
                "fault_ratio": self.fault_ratios()}

    def write_csv(self, path) -> None:
        """The curve as CSV (frames, faults, fault_ratio), the columns of
        :meth:`to_dataframe`, written by Arrow's CSV writer: a 629,203-size curve in 0.1 s
        where pandas takes 0.6 s (the floats are the same shortest round-trip text)."""
        import pyarrow as pa
        import pyarrow.csv as pa_csv

        columns = self._columns()
        with open(path, "wb") as f:
            f.write((",".join(columns) + "\n").encode())  # Arrow would quote the names
            pa_csv.write_csv(pa.table(columns), f, pa_csv.WriteOptions(include_header=False))

    def plot(self, title: Optional[str] = None):
        """The fault ratio at every memory size (log scale): a matplotlib Figure."""
        return draw_mrc([self], title or f"{self.policy.upper()} fault curve: {self.source_name}")

    def _repr_html_(self) -> str:
        """The curve at about 20 sizes spread over the range (``to_dataframe()``: every size)."""
        import numpy as np

        df = self.to_dataframe()
        if len(df) > 20:
            df = df.iloc[np.unique(np.linspace(0, len(df) - 1, 20).round().astype(int))]
        return html_table(repr(self), df)

    def __repr__(self) -> str:
        return (f"MissRatioCurve({self.source_name!r}, {self.references} references, "
                f"{self.distinct_pages} pages)")


def mrc(source, progress: ProgressHook = None, policy: str = "lru") -> MissRatioCurve:
    """The exact miss-ratio curve of a source under LRU or OPT (Belady's MIN), both
    stack algorithms, for every memory size, in one pass."""
    src = as_source(source)
    return MissRatioCurve(src.name, _core.mrc(src.spec(), progress, policy), policy=policy.strip().lower())
