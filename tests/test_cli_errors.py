"""Every user mistake: one clear line, a non-zero exit, no traceback, no partial output."""

import os
import zlib

import pytest

from conftest import assert_user_error, run_cli

import pagelab


@pytest.fixture
def plt_trace(tmp_path):
    path = tmp_path / "t.plt"
    pagelab.workload("scan", pages=50, passes=2).save(path)
    return path


def test_unknown_policy():
    r = run_cli("replay", "--workload", "scan", "--frames", "10", "--policy", "lru,nosuch")
    assert_user_error(r, "nosuch")


def test_unknown_workload():
    r = run_cli("replay", "--workload", "nosuch", "--frames", "10")
    assert_user_error(r, "nosuch")


def test_unknown_workload_parameter():
    r = run_cli("replay", "--workload", "scan", "--param", "bogus=3", "--frames", "10")
    assert_user_error(r, "bogus")


def test_bad_workload_parameter_value():
    r = run_cli("replay", "--workload", "scan", "--param", "pages=lots", "--frames", "10")
    assert_user_error(r, "pages")


@pytest.mark.parametrize("frames", ["0", "-5", "ten", "", "10,,0"])
def test_bad_frames(frames):
    r = run_cli("replay", "--workload", "scan", "--frames", frames)
    assert_user_error(r, "frames")


def test_missing_trace_file(tmp_path):
    r = run_cli("trace", "info", tmp_path / "absent.plt")
    assert_user_error(r, "absent.plt")


def test_wrong_magic(tmp_path):
    bad = tmp_path / "bad.plt"
    bad.write_bytes(b"NOTATRACE" + bytes(100))
    r = run_cli("trace", "info", bad, "--format", "pagelab")
    assert_user_error(r, "bad.plt")


def test_truncated_pagelab_trace(tmp_path, plt_trace):
    data = plt_trace.read_bytes()
    cut = tmp_path / "cut.plt"
    cut.write_bytes(data[: len(data) - 7])
    r = run_cli("trace", "info", cut)
    assert_user_error(r, "cut.plt", "byte")


def test_corrupt_zstd_frame(tmp_path):
    good = tmp_path / "z.plt.zst"
    pagelab.workload("scan", pages=2000, passes=3).save(good)
    data = bytearray(good.read_bytes())
    mid = len(data) // 2 + 20
    for i in range(mid, min(mid + 16, len(data))):
        data[i] ^= 0xFF
    bad = tmp_path / "bad.plt.zst"
    bad.write_bytes(bytes(data))
    r = run_cli("trace", "info", bad)
    assert_user_error(r, "bad.plt.zst")


def test_text_garbage_line(tmp_path):
    t = tmp_path / "g.csv"
    t.write_text("0x1000\n0x2000\nhello world\n0x3000\n")
    r = run_cli("trace", "info", t)
    assert_user_error(r, "g.csv", "line 3")


def test_lackey_cut_mid_line(tmp_path):
    t = tmp_path / "cut.lackey"
    t.write_text("I  04017c2a,3\n L 04e2ac40,8\n S 04e2")
    r = run_cli("trace", "info", t, "--format", "lackey")
    assert_user_error(r, "cut.lackey", "line 3")


def test_oracle_bad_length(tmp_path):
    t = tmp_path / "x.oracleGeneral"
    t.write_bytes(bytes(24 * 3 + 5))
    r = run_cli("trace", "info", t, "--format", "oracle")
    assert_user_error(r, "x.oracleGeneral")


def test_convert_error_leaves_no_output(tmp_path):
    src = tmp_path / "g.csv"
    src.write_text("1\n2\n3\n" * 100 + "garbage\n")
    out = tmp_path / "out.plt"
    r = run_cli("trace", "convert", src, out)
    assert_user_error(r, "g.csv")
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["g.csv"]


def test_unknown_output_format(tmp_path, plt_trace):
    r = run_cli("trace", "convert", plt_trace, tmp_path / "x.weird")
    assert_user_error(r, "x.weird")
    assert not (tmp_path / "x.weird").exists()


def test_bad_page_size(plt_trace):
    r = run_cli("replay", "--trace", plt_trace, "--frames", "10", "--page-size", "3000")
    assert_user_error(r, "page")


def test_unknown_format_name(plt_trace):
    r = run_cli("trace", "info", plt_trace, "--format", "parquet")
    assert_user_error(r, "parquet")


def test_usage_error_is_one_line():
    r = run_cli("replay", "--frames", "10")
    assert_user_error(r)
    r = run_cli("replay", "--workload", "scan", "--trace", "x", "--frames", "10")
    assert_user_error(r)


def test_capture_missing_program(tmp_path):
    out = tmp_path / "c.plt"
    r = run_cli("trace", "capture", "-o", out, "--", "/nonexistent/program")
    assert_user_error(r, "/nonexistent/program")
    assert not out.exists()


def test_python_api_raises_pagelab_error():
    with pytest.raises(pagelab.PagelabError, match="nosuch"):
        pagelab.workload("nosuch")
    with pytest.raises(pagelab.PagelabError, match="frames"):
        pagelab.replay(pagelab.workload("scan"), policy="lru", frames=[0])
    with pytest.raises(pagelab.PagelabError):
        pagelab.Trace.open("/nonexistent/trace.plt")


def _help_of(parser, *path):
    """The help text of the (sub)command at ``path`` of ``parser``."""
    import argparse

    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser.format_help()


def test_a_command_alone_parses_as_among_all():
    """The parser of one command (what `main` builds for it) is that command's parser
    of the whole command line: the same help for every command and subcommand."""
    from pagelab.cli import COMMANDS, build_parser, command_of

    whole = build_parser()
    for name in COMMANDS:
        alone = build_parser(name)
        assert _help_of(alone, name) == _help_of(whole, name), name
        for sub in ("info", "build", "list", "faults", "status"):
            try:
                want = _help_of(whole, name, sub)
            except (StopIteration, KeyError):
                continue
            assert _help_of(alone, name, sub) == want, (name, sub)
    # the command is the first argument that is not an option; help first needs them all
    assert command_of(["--no-progress", "replay", "--trace", "t"]) == "replay"
    assert command_of(["--help", "replay"]) is None
    assert command_of(["nosuch"]) is None and command_of([]) is None and command_of(["--version"]) is None
