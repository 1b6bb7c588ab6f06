"""Tables fit the output's width: nothing is cut, wide tables print in blocks of columns
that repeat the label column, and headers wrap only when the table does not fit."""

import re

import pytest

from conftest import run_cli

from pagelab.console import column_blocks, print_table

COLUMNS = ["", "gzip/vortex3 ours", "gzip/vortex3 paper", "bit-r/gcc ours", "bit-r/gcc paper",
           "vortex3/gcc ours", "vortex3/gcc paper", "LU-1/LU-2 ours", "LU-1/LU-2 paper"]
ROWS = [["LRU page faults", "5,037/4,618", "328,551/294,038", "11,903/12,258", "108,352/139,807",
         "2,575/3,126", "248,045/275,982", "5,309/5,295", "138,372/77,680"],
        ["Slowdown reduction", "86%/72%", "50%/52%", "93%/88%", "23%/38%", "33%/65%", "54%/67%",
         "10%/18%", "28%/12%"]]


@pytest.mark.parametrize("width", [60, 80, 100, 140])
def test_wide_table_fits_without_cutting_a_cell(capsys, width):
    print_table("Table 2, ours beside the paper's", COLUMNS, ROWS, width=width)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= width, out
    assert "…" not in out
    for row in ROWS:
        for cell in row:
            assert cell in out, (cell, out)
    # the label column is repeated in every block
    blocks = out.count("Table 2, ours beside the paper's")
    assert out.count("LRU page faults") == blocks


def test_a_table_that_fits_is_one_block_with_headers_on_one_line(capsys):
    print_table("small", ["job", "completion (s)", "major faults"], [["a", "60.48", "4"]], width=100)
    out = capsys.readouterr().out
    assert "completion (s)" in out and "major faults" in out and "(1 of" not in out


def test_blocks_keep_the_column_order_and_the_label_column():
    cells = [[r[i] for i in range(len(COLUMNS))] for r in ROWS]
    blocks = column_blocks(COLUMNS, cells, 70)
    assert all(b[0] == 0 for b in blocks)
    assert [i for b in blocks for i in b[1:]] == list(range(1, len(COLUMNS)))


def test_prose_wraps_between_words(capsys):
    text = "LU decomposition with partial pivoting of a random n x n matrix (nbench LU)"
    print_table("workloads", ["name", "what it is"], [["lu", text]], width=50)
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 50
    words = re.findall(r"[A-Za-z()]+", text)
    assert all(w in out for w in words)


def test_piped_command_output_honours_columns():
    r = run_cli("workload", "list", env={"COLUMNS": "72"})
    assert r.code == 0, r.err
    assert max(len(line) for line in r.out.splitlines()) <= 72
    assert "shrinking-loop" in r.out
