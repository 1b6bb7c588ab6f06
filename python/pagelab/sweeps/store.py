"""The results store: one file per finished point, keyed by its hash::

    DIR/sweep.json                 the spec, its axes and values (the latest sweep run here)
    DIR/points/<hash>.parquet      the result rows of one point (written whole, then renamed)
    DIR/points/<hash>.json.gz      the whole result of an experiment's point (idem)
    DIR/failed/<hash>.json         a point that failed: its configuration and a one-line error
    DIR/merged/<hash>.parquet      many points' rows, merged at the end of a large sweep

A file that cannot be read, or that holds another point, is deleted and its point runs
again."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from .. import _core
from .._core import PagelabError
from ..files import atomic_path, write_text
from .points import one_line

#: a temporary file older than this (seconds) belongs to a writer that died
STRAY_AGE_S = 60.0
#: a sweep that ends with at least this many point files merges them into one file
#: (reading a store costs about 0.6 ms a file: 2 minutes for 200,000 points, 2 s merged)
MERGE_AT = 1000

_HASH_NAME = re.compile(r"^[0-9a-f]{64}$")

# ---------------------------------------------------------------- the store

class Store:
    """The results store of a sweep: one file per finished point, keyed by its hash."""

    def __init__(self, root: Union[str, os.PathLike]):
        self.root = Path(root)
        self.points_dir = self.root / "points"
        self.failed_dir = self.root / "failed"
        self.merged_dir = self.root / "merged"
        self.spec_file = self.root / "sweep.json"

    def point_path(self, h: str) -> Path:
        return self.points_dir / f"{h}.parquet"

    def failed_path(self, h: str) -> Path:
        return self.failed_dir / f"{h}.json"

    def is_store(self) -> bool:
        return self.spec_file.exists() or self.points_dir.is_dir()

    def stored_hashes(self) -> Tuple[set, set]:
        """(points with a result file, points with a failure record), by name only."""
        def names(d: Path, suffix: str) -> set:
            try:
                entries = os.listdir(d)
            except FileNotFoundError:
                return set()
            return {n[: -len(suffix)] for n in entries if n.endswith(suffix) and _HASH_NAME.match(n[: -len(suffix)])}

        return names(self.points_dir, ".parquet"), names(self.failed_dir, ".json")

    def read_point(self, h: str, delete_bad: bool = True) -> Optional[dict]:
        """{"rows": [...], "axes": [...]} of a stored point, or None when there is no
        file or it cannot be read or holds another point (then it is deleted)."""
        import pyarrow.parquet as pq

        path = self.point_path(h)
        try:
            with pq.ParquetFile(path) as f:  # 3x faster than read_table for small files
                table = f.read(use_threads=False)
            meta = table.schema.metadata or {}
            if meta.get(b"pagelab.point", b"").decode() != h or table.num_rows < 1 or "point" not in table.column_names:
                raise ValueError("another point")
            rows = table.to_pylist()
            if any(r.get("point") != h for r in rows):
                raise ValueError("another point")
            axes = json.loads(meta.get(b"pagelab.axes", b"[]").decode())
            return {"rows": rows, "axes": axes}
        except FileNotFoundError:
            return None
        except Exception:  # a truncated or foreign file: never data
            if delete_bad:
                _unlink(path)
            return None

    def write_point(self, h: str, rows: List[dict], axis_names: List[str]) -> None:
        """Writes the point's rows whole (a temporary file renamed over the target)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        # every row's columns: from_pylist alone takes them from the first row, and a
        # replay's rows differ (the predictive policies' counters come after LRU's row)
        columns = list(dict.fromkeys(k for r in rows for k in r))
        table = pa.Table.from_pydict({c: [r.get(c) for r in rows] for c in columns})
        meta = dict(table.schema.metadata or {})
        meta.update({b"pagelab.point": h.encode(), b"pagelab.axes": json.dumps(axis_names).encode(),
                     b"pagelab.engine_version": _core.ENGINE_VERSION.encode()})
        table = table.replace_schema_metadata(meta)
        with atomic_path(self.point_path(h)) as tmp:
            pq.write_table(table, tmp)

    # An experiment's point also keeps its whole result, beside its rows: a dict as
    # gzipped JSON, a residency table as Parquet (its attrs in the file's metadata).

    def full_paths(self, h: str) -> Tuple[Path, Path]:
        return self.points_dir / f"{h}.full.json.gz", self.points_dir / f"{h}.full.parquet"

    def has_full(self, h: str) -> bool:
        return any(p.exists() for p in self.full_paths(h))

    def write_full(self, h: str, full: Any) -> None:
        """Writes a point's whole result (whole, then renamed)."""
        json_path, parquet_path = self.full_paths(h)
        if hasattr(full, "to_parquet"):
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(full, preserve_index=False)
            meta = dict(table.schema.metadata or {})
            meta[b"pagelab.attrs"] = json.dumps(full.attrs, default=str).encode()
            meta[b"pagelab.point"] = h.encode()
            with atomic_path(parquet_path) as tmp:
                pq.write_table(table.replace_schema_metadata(meta), tmp)
            return
        data = gzip.compress(json.dumps({"point": h, "result": full}, separators=(",", ":")).encode(), 3)
        with atomic_path(json_path) as tmp:
            tmp.write_bytes(data)

    def read_full(self, h: str) -> Any:
        """A point's whole result (a dict, or a DataFrame with its attrs); a PagelabError
        when it is missing or damaged (the run stores it again when run again)."""
        json_path, parquet_path = self.full_paths(h)
        try:
            if parquet_path.exists():
                import pyarrow.parquet as pq

                table = pq.read_table(parquet_path)
                meta = table.schema.metadata or {}
                if meta.get(b"pagelab.point", b"").decode() != h:
                    raise ValueError("another point")
                df = table.to_pandas()
                df.attrs.update(json.loads(meta.get(b"pagelab.attrs", b"{}").decode()))
                return df
            record = json.loads(gzip.decompress(json_path.read_bytes()))
            if record.get("point") != h:
                raise ValueError("another point")
            return record["result"]
        except FileNotFoundError:
            raise PagelabError(f"{self.root}: point {h[:12]}: no stored result") from None
        except Exception as err:  # a truncated or foreign file
            for path in (json_path, parquet_path):
                _unlink(path)
            raise PagelabError(f"{self.root}: point {h[:12]}: the stored result is damaged ({one_line(err)}) "
                               "and was removed; run again to recompute it") from None

    def read_merged(self, delete_bad: bool = True) -> Tuple[Dict[str, list], List[str], int]:
        """(rows by point, axis names, unreadable files) of the merged files. A file that
        cannot be read is deleted (unless ``delete_bad`` is false): its points run again."""
        import pyarrow.parquet as pq

        rows: Dict[str, list] = {}
        axis_names: List[str] = []
        bad = 0
        try:
            names = sorted(n for n in os.listdir(self.merged_dir) if n.endswith(".parquet") and not n.startswith("."))
        except FileNotFoundError:
            return rows, axis_names, 0
        for name in names:
            path = self.merged_dir / name
            try:
                with pq.ParquetFile(path) as f:
                    table = f.read()
                meta = table.schema.metadata or {}
                if meta.get(b"pagelab.merged") != b"1" or "point" not in table.column_names:
                    raise ValueError("not a merged file")
                these: Dict[str, list] = {}
                for r in table.to_pylist():
                    if not isinstance(r["point"], str) or not _HASH_NAME.match(r["point"]):
                        raise ValueError("a row without its point")
                    these.setdefault(r["point"], []).append(r)
                for a in json.loads(meta.get(b"pagelab.axes", b"[]").decode()):
                    if a not in axis_names:
                        axis_names.append(a)
            except FileNotFoundError:
                continue
            except Exception:  # a damaged file: never data
                bad += 1
                if delete_bad:
                    _unlink(path)
                continue
            for h, point_rows in these.items():
                rows.setdefault(h, point_rows)
        return rows, axis_names, bad

    def merge(self, rows: Dict[str, list], axis_names: List[str]) -> int:
        """Merges the point files of these points, when there are MERGE_AT or more, into
        one file under merged/ (written whole, then renamed), then deletes them. Returns
        how many were merged (0 if their columns cannot share one table)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        loose = sorted(self.stored_hashes()[0] & set(rows))
        if len(loose) < MERGE_AT:
            return 0
        records = [r for h in loose for r in rows[h]]
        columns = list(dict.fromkeys(k for r in records for k in r))
        try:
            table = pa.Table.from_pydict({c: [r.get(c) for r in records] for c in columns})
        except (pa.ArrowException, TypeError, ValueError):  # an axis with values of several types
            return 0
        table = table.replace_schema_metadata({b"pagelab.merged": b"1", b"pagelab.axes": json.dumps(axis_names).encode(),
                                               b"pagelab.engine_version": _core.ENGINE_VERSION.encode()})
        name = hashlib.sha256("".join(loose).encode()).hexdigest()
        try:
            with atomic_path(self.merged_dir / f"{name}.parquet") as tmp:
                pq.write_table(table, tmp)
        except OSError as err:  # a full disk, say: the point files stay, as good as before
            print(f"pagelab: warning: {self.merged_dir}: could not merge {len(loose)} point files "
                  f"({one_line(err)}); they stay as they are", file=sys.stderr)
            return 0
        for h in loose:
            _unlink(self.point_path(h))
        return len(loose)

    def read_failure(self, h: str, delete_bad: bool = True) -> Optional[dict]:
        path = self.failed_path(h)
        try:
            record = json.loads(path.read_text())
            if not isinstance(record, dict) or record.get("point") != h or not isinstance(record.get("error"), str):
                raise ValueError("another point")
            return record
        except FileNotFoundError:
            return None
        except Exception:
            if delete_bad:
                _unlink(path)
            return None

    def write_failure(self, h: str, record: dict) -> None:
        write_text(self.failed_path(h), json.dumps(record, indent=1, default=str))

    def clean_stray(self, max_age: float = STRAY_AGE_S) -> int:
        """Removes temporary files left by writers that died (older than ``max_age``)."""
        removed, now = 0, time.time()
        for d in (self.points_dir, self.failed_dir, self.merged_dir):
            try:
                entries = list(os.scandir(d))
            except FileNotFoundError:
                continue
            for e in entries:
                if e.name.startswith(".") and e.name.endswith(".tmp"):
                    try:
                        if now - e.stat().st_mtime > max_age:
                            os.unlink(e.path)
                            removed += 1
                    except OSError:
                        pass
        return removed


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


