"""Tables on the terminal: fitted to its width, never cut. A table wider than the
terminal is printed as several tables side by side in reading order, each repeating the
first (label) column, the way wide data frames are printed; no number is abbreviated or
broken. The full table always goes to a CSV file where a command writes one."""

from __future__ import annotations

import os
import shutil
import sys
from typing import TYPE_CHECKING, List, Sequence

if TYPE_CHECKING:  # the experiments load with the commands that show them
    from .experiments.runner import ExperimentRun

#: width for output that is not a terminal (pipes, files, CI logs), unless COLUMNS says
PIPE_WIDTH = 100
#: a column's padding and border in rich's default box style
CELL_CHROME = 3


def output_width() -> int:
    """The terminal's width; for a pipe or a file, $COLUMNS or 100."""
    if sys.stdout.isatty():
        return shutil.get_terminal_size((PIPE_WIDTH, 24)).columns
    try:
        return max(40, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return PIPE_WIDTH


#: a column of prose (cells with spaces) wraps at this width, or at its longest word
PROSE_WIDTH = 30


def is_prose(cells: Sequence[str]) -> bool:
    """Cells of words (descriptions, parameter lists), which may wrap between words;
    numbers and names never wrap."""
    return any(" " in c.strip() for c in cells)


def _content_width(header: str, cells: Sequence[str]) -> int:
    """A column's text width: its widest cell, or its header's longest word, or up to 12
    characters of header (so that short headers stay on one line). Prose wraps at
    PROSE_WIDTH characters, or its longest word."""
    longest_word = max((len(w) for w in header.split()), default=0)
    if is_prose(cells):
        widest = max(len(c) for c in cells)
        words = max(len(w) for c in cells for w in c.split() or [""])
        return max([longest_word, min(len(header), 12), min(widest, max(words, PROSE_WIDTH))])
    return max([longest_word, min(len(header), 12)] + [len(c) for c in cells])


def wrap_header(header: str, width: int) -> str:
    """The header broken between words into lines of at most ``width`` characters."""
    import textwrap

    return "\n".join(textwrap.wrap(header, width, break_long_words=False)) or header


def _needed(header: str, cells: Sequence[str]) -> int:
    return _content_width(header, cells) + CELL_CHROME


def column_blocks(columns: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> List[List[int]]:
    """Indices of the columns of each printed block: column 0 (the labels) in every
    block, the others in order, as many as fit in ``width``. A column wider than the
    width alone still gets a block of its own."""
    needed = [_needed(c, [r[i] for r in rows]) for i, c in enumerate(columns)]
    blocks, current, used = [], [0], needed[0] + 1
    for i in range(1, len(columns)):
        if len(current) > 1 and used + needed[i] > width:
            blocks.append(current)
            current, used = [0], needed[0] + 1
        current.append(i)
        used += needed[i]
    blocks.append(current)
    return blocks


def print_table(title: str, columns: List[str], rows: List[list], width: int = 0) -> None:
    """Prints a table with rich: headers wrap between words, cells never wrap or get
    cut; too wide for ``width`` (default: the output's), it is printed in blocks of
    columns."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    width = width or output_width()
    cells = [[str(x) for x in r] for r in rows]
    natural = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    if not any(is_prose([r[i] for r in cells]) for i in range(len(columns))) and \
            1 + sum(n + CELL_CHROME for n in natural) <= width:
        blocks, compact = [list(range(len(columns)))], False  # fits as it is: no header wraps
    else:
        blocks, compact = column_blocks(columns, cells, width), True
    console = Console(width=width, soft_wrap=False)
    for b, block in enumerate(blocks):
        label = title if len(blocks) == 1 else f"{title} ({b + 1} of {len(blocks)})"
        # the title on a line of its own, never wrapped: it may name a long path
        console.print(escape(label), soft_wrap=True, highlight=False)
        table = Table()
        widths = {i: _content_width(columns[i], [r[i] for r in cells]) if compact else natural[i] for i in block}
        spare = width - 1 - sum(w + CELL_CHROME for w in widths.values())
        for i in block:  # prose takes the room left over, up to its widest cell
            if spare > 0 and is_prose([r[i] for r in cells]):
                grow = min(spare, max(len(r[i]) for r in cells) - widths[i])
                if grow > 0:
                    widths[i] += grow
                    spare -= grow
        for i in block:
            text = widths[i]
            prose = is_prose([r[i] for r in cells])
            # cells are data, not rich markup: "x[i]" must not turn into italics
            table.add_column(escape(wrap_header(columns[i], text)),
                             justify="left" if i == 0 or prose else "right",
                             no_wrap=not prose, min_width=text, max_width=text if prose else None)
        for r in cells:
            table.add_row(*[escape(r[i]) for i in block])
        console.print(table)


def show_experiment_run(run: ExperimentRun) -> bool:
    """Prints one experiment's run: its tables, findings and claim ledger, and builds
    its report. False (after a one-line error on stderr) when its analysis failed."""
    from .outputs.report import build_report

    exp = run.spec.experiment
    print(f"\n=== {run.spec.name}: {exp['paper']}, {exp['title']}")
    if run.error is not None:
        print(f"pagelab: error: {run.spec.path.name}: {run.error} (the finished points are stored in "
              f"{run.out / 'store'}; run again to resume)", file=sys.stderr)
        return False
    for view in run.analysis.views:
        print_table(view.title, view.columns, view.rows)
    for line in run.analysis.lines:
        print(line)
    print_ledger(run)
    print(f"results in {run.out}/: summary.json, claims.csv, {len(run.figures)} figures; "
          f"report: {build_report(run.out)}")
    return True


def print_ledger(run: ExperimentRun) -> None:
    """The ledger in short (claims.csv and the report have the statement, the paper's
    numbers, our measure and the rule): claim, verdict, the rule's evidence, and with
    --sensitivity the variants where it holds."""
    from .experiments.claims import tally

    robust = any(r.variants for r in run.ledger)
    rows = [[r.claim.id, r.verdict, r.detail] + ([r.robustness()] if robust else []) for r in run.ledger]
    t = tally(run.ledger)
    print_table(f"claims of {run.spec.experiment['paper']}: " + ", ".join(f"{n} {v}" for v, n in t.items() if n)
                + " (claims.csv and the report: statements, the paper's numbers, ours, rules)",
                ["claim", "verdict", "evidence"] + (["holds in (variants)"] if robust else []), rows)
