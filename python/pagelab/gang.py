"""Gang-scheduled parallel jobs with adaptive paging (gang-adaptive-paging.txt): the
result of a run with a ``[gang]`` table, its tables and its figures.

In such a configuration each ``[[process]]`` entry is a parallel job with one process
per node; ``[system]`` describes one node. The engine returns each job's completion,
the job switches, and every node's own results (a :class:`~pagelab.system.SystemResult`
each) with the counters of the adaptive paging mechanisms.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

from ._core import PagelabError
from .api import html_table
from .figures.bars import draw_paging_activity, plot_paging_activity
from .files import atomic_path, output_dir, write_text
from .system import SystemResult
from .version import build_info

#: the mechanisms of section 3, in the paper's order of their names (so/ao/ai/bg)
MECHANISMS = ("so", "ao", "ai", "bg")


def label(mechanisms) -> str:
    """'so/ao/ai/bg' for a list of mechanisms; 'LRU' (the original paging) for none."""
    ms = [m for m in MECHANISMS if m in mechanisms]
    return "/".join(ms) if ms else "LRU"


class GangResult:
    """The result of a gang run."""

    JOB_COLUMNS = ["job", "end_s", "dedicated_s", "major_faults", "page_ins", "page_outs"]
    MECHANISM_COUNTERS = ["switches", "so_pages", "ao_pages", "ao_written", "ai_pages", "ai_reads", "bg_pages"]

    def __init__(self, raw: dict, config: dict, name: str = "config"):
        self.raw = raw
        self.config = config
        self.name = name
        self.nodes: List[SystemResult] = [SystemResult(n, config=config, name=f"{name} node {i}")
                                          for i, n in enumerate(raw["nodes"])]

    @property
    def end_s(self) -> float:
        return self.raw["end_ns"] / 1e9

    def job_end_s(self, job: str) -> float:
        for j in self.raw["jobs"]:
            if j["name"] == job:
                return j["end_ns"] / 1e9
        names = ", ".join(j["name"] for j in self.raw["jobs"])
        raise PagelabError(f"job: no job '{job}' in this result (it has: {names})")

    @property
    def jobs(self):
        """One row per job: completion (s), its dedicated time (the job alone with all
        the memory it wants: split over several nodes, its own parallel run; otherwise
        the serial run), and its major faults, pages read and pages written summed over
        the nodes. On the kernel a process's pages written are not known (the kernel
        counts swap-outs for the whole machine): None, as a dedicated time not measured."""
        import pandas as pd

        def total(values):
            return None if any(v is None for v in values) else sum(values)

        rows = []
        for i, j in enumerate(self.raw["jobs"]):
            procs = [n["processes"][i] for n in self.raw["nodes"]]
            rows.append([j["name"], j["end_ns"] / 1e9, None if j["dedicated_ns"] is None else j["dedicated_ns"] / 1e9,
                         total([p["major_faults"] for p in procs]), total([p["page_ins"] for p in procs]),
                         total([p["page_outs"] for p in procs])])
        return pd.DataFrame(rows, columns=self.JOB_COLUMNS)

    @property
    def paged_pages(self) -> int:
        """Pages read and written by every node's swap disk: the paging of the run."""
        return sum(n["pages_read"] + n["pages_written"] for n in self.raw["nodes"])

    @property
    def mechanisms(self):
        """One row per node: the adaptive paging counters."""
        import pandas as pd

        rows = [[i] + [n["gang"][k] for k in self.MECHANISM_COUNTERS] for i, n in enumerate(self.raw["nodes"])]
        return pd.DataFrame(rows, columns=["node"] + self.MECHANISM_COUNTERS)

    @property
    def paging_activity(self):
        """Long form: one row per (node, sample): pages read and written per second
        (figure 6)."""
        import pandas as pd

        parts = []
        for i, n in enumerate(self.raw["nodes"]):
            s = n["system_series"]
            t = s["t_s"]
            dt = [t[0]] + [b - a for a, b in zip(t, t[1:])] if t else []
            parts.append(pd.DataFrame({
                "node": i, "t_s": t,
                "pages_in_per_s": [x / max(d, 1e-9) for x, d in zip(s["pages_in"], dt)],
                "pages_out_per_s": [x / max(d, 1e-9) for x, d in zip(s["pages_out"], dt)],
            }))
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
            columns=["node", "t_s", "pages_in_per_s", "pages_out_per_s"])

    @property
    def switch_times_s(self) -> list:
        return [s["t_ns"] / 1e9 for s in self.raw["switches"] if s["from"] is not None]

    def to_json(self) -> str:
        """The engine's result with the pagelab build that produced it (``"pagelab"``)."""
        return json.dumps(dict(self.raw, pagelab=build_info()), indent=2)

    def plot(self, node: int = 0, title: Optional[str] = None):
        """Pages read and written per second on ``node``, job switches dotted (the
        paper's figure 6): a matplotlib Figure."""
        if not 0 <= node < len(self.nodes):
            raise PagelabError(f"node: expected 0 to {len(self.nodes) - 1}, got {node}")
        return draw_paging_activity([(self.name, self)], node=node, title=title)

    def _repr_html_(self) -> str:
        return html_table(repr(self), self.jobs) + f"<p>{summary_line(self)}</p>"

    def __repr__(self) -> str:
        where = "s on the kernel" if self.raw.get("backend") == "kernel" else "simulated s"
        return f"GangResult({self.name!r}, {len(self.raw['jobs'])} jobs on {len(self.nodes)} nodes, {self.end_s:.1f} {where})"


JOB_TABLE_COLUMNS = ["job", "completion (s)", "dedicated (s)", "major faults", "page-ins", "page-outs"]


def _number(value, fmt: str) -> str:
    """A table cell: '-' for a number not known (None or NaN: the kernel's per-process
    page-outs)."""
    if value is None or value != value:
        return "-"
    return format(value, fmt)


def job_rows(result: GangResult) -> list:
    return [[r.job, f"{r.end_s:,.2f}", _number(r.dedicated_s, ",.2f"), _number(r.major_faults, ",.0f"),
             _number(r.page_ins, ",.0f"), _number(r.page_outs, ",.0f")] for r in result.jobs.itertuples()]


def summary_line(result: GangResult) -> str:
    g = result.config.get("gang", {})
    m = result.mechanisms.sum()
    where = f"on the kernel ({result.raw.get('kernel')}), " if result.raw.get("backend") == "kernel" else ""
    return (f"gang: {where}{len(result.nodes)} node(s), {g.get('mode', 'gang')}, {label(g.get('mechanisms', []))}; "
            f"{int(m['switches'] / max(len(result.nodes), 1))} switches; {result.paged_pages:,} pages paged; "
            f"selective {int(m['so_pages']):,}, aggressive {int(m['ao_pages']):,}, adaptive page-in "
            f"{int(m['ai_pages']):,} pages in {int(m['ai_reads']):,} reads, background {int(m['bg_pages']):,}")


def write_gang_outputs(result: GangResult, out: Path) -> list:
    """result.json, jobs.csv, mechanisms.csv, paging.csv and paging-activity.png into
    ``out``. Returns the file names written."""
    out = Path(out)
    output_dir(out)
    write_text(out / "result.json", result.to_json())
    for fname, df in (("jobs.csv", result.jobs), ("mechanisms.csv", result.mechanisms),
                      ("paging.csv", result.paging_activity)):
        with atomic_path(out / fname) as tmp:
            df.to_csv(tmp, index=False)
    plot_paging_activity([(label(result.config.get("gang", {}).get("mechanisms", [])), result)],
                         out / "paging-activity.png")
    return ["result.json", "jobs.csv", "mechanisms.csv", "paging.csv", "paging-activity.png"]
