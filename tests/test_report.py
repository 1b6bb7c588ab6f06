"""The HTML report of `pagelab reproduce` (report.py) and `pagelab report DIR`: built at
the end of a real quick run, rebuilt from the stored results without running anything,
loaded in headless Chromium (every figure renders, no script error), every PNG with its
SVG beside it, escaping, and the one-line errors."""

import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import assert_user_error, run_cli

from pagelab.outputs import report
from pagelab.figures.style import _pyplot, _save
from pagelab.experiments.protocol import EXPERIMENTS_DIR

#: the quickest experiment with figures and paper_ columns (about 5 s with --quick)
EXPERIMENT = "mclustering"
BUILT = re.compile(r'<span id="built">[^<]*</span>')


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / EXPERIMENT
    started = time.perf_counter()
    r = run_cli("--no-progress", "reproduce", EXPERIMENT, "--quick", "--out", out)
    assert r.code == 0, r.err
    return out, r, time.perf_counter() - started


def _files(d: Path, skip=("report.html", "index.html")) -> dict:
    """Every file under d but the reports: relative path -> (mtime_ns, sha256)."""
    return {p.relative_to(d).as_posix(): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(d.rglob("*")) if p.is_file() and p.name not in skip}


# ---------------------------------------------------------------- the report of a run

def test_reproduce_writes_the_report(quick_run):
    out, r, seconds = quick_run
    assert seconds < 40, seconds
    page = out / "report.html"
    assert f"report: {page}" in r.out
    text = page.read_text()
    summary = json.loads((out / "summary.json").read_text())
    # the experiment file, verbatim, and how it was run
    assert (out / "experiment.toml").read_bytes() == (EXPERIMENTS_DIR / f"{EXPERIMENT}.toml").read_bytes()
    run = summary["reproduce"]
    assert run["command"] == f"pagelab reproduce {EXPERIMENT} --quick --out {out}"
    assert run["quick"] is True and run["pagelab"]["engine"] and run["pagelab"]["commit"] and run["date"]
    # sections: title + paper + what is reproduced, the claims, table, figures, configuration, re-run
    for ident in ("claims", "results", "figures", "configuration", "rerun"):
        assert f'<section id="{ident}">' in text, ident
    assert html.escape(summary["title"]) in text and html.escape(summary["paper"]) in text
    # the ledger: a row per claim with its verdict
    ledger = re.search(r'<table class="ledger">.*?<tbody>(.*?)</tbody>', text, re.S).group(1)
    assert ledger.count("<tr>") == len(summary["claims"])
    for c in summary["claims"]:
        assert html.escape(c["statement"]) in ledger and html.escape(c["rule"]) in ledger
        assert f'">{html.escape(c["verdict"])}</td>' in ledger
    assert html.escape(run["command"]) in text
    assert html.escape(f"pagelab report {out}") in text
    assert html.escape((EXPERIMENTS_DIR / f"{EXPERIMENT}.toml").read_text()) in text
    assert f"<dd>{html.escape(run['pagelab']['pagelab'])}</dd>" in text
    assert f"<dd>{html.escape(run['pagelab']['commit'])}</dd>" in text
    # the table: every row of table.csv, the paper's columns beside ours
    header = re.search(r'<table class="results"><thead><tr>(.*?)</tr></thead>', text, re.S).group(1)
    cols = re.findall(r"<th[^>]*>([^<]*)</th>", header)
    csv_cols = (out / "table.csv").read_text().splitlines()[0].split(",")
    assert sorted(cols) == sorted(csv_cols)
    for paper in (c for c in csv_cols if c.startswith("paper_")):
        assert cols[cols.index(paper) - 1] == paper[len("paper_"):], (paper, cols)
    body = re.search(r'<table class="results">.*?<tbody>(.*?)</tbody>', text, re.S).group(1)
    assert body.count("<tr>") == len((out / "table.csv").read_text().splitlines()) - 1
    # every figure: the PNG shown, the SVG linked, a caption from the figure's title
    for fig in summary["figures"]:
        assert f'<img src="{fig}"' in text, fig
        assert f'href="{fig[:-4]}.svg"' in text, fig
        title = report.png_info(out / fig)["Title"]
        assert title and html.escape(title) in text


def test_svg_beside_every_png(quick_run):
    out, _, _ = quick_run
    pngs = [p for p in out.rglob("*.png") if "runs" not in p.relative_to(out).parts]
    assert len(pngs) >= 2
    for png in pngs:
        svg = png.with_suffix(".svg")
        assert svg.is_file(), svg
        assert b"<svg" in svg.read_bytes()[:2000]
    assert not [p for p in out.rglob(".*")], "temporary files left behind"


def test_save_writes_png_and_svg_atomically(tmp_path):
    plt = _pyplot()
    for i in range(2):
        fig, ax = plt.subplots()
        ax.plot([1, 2, 3], [3, 1, 2])
        ax.set_xlabel("time (s)")
        ax.set_title("a <title> & more")
        _save(fig, tmp_path / f"f{i}.png")
        plt.close(fig)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f0.png", "f0.svg", "f1.png", "f1.svg"]
    assert (tmp_path / "f0.svg").read_bytes() == (tmp_path / "f1.svg").read_bytes()  # no date, fixed ids
    info = report.png_info(tmp_path / "f0.png")
    assert info["Title"] == "a <title> & more" and info["width"] > 100
    fig, _ = plt.subplots()
    _save(fig, tmp_path / "only.svg")  # another format: just that file
    plt.close(fig)
    assert not (tmp_path / "only.png").exists() and (tmp_path / "only.svg").is_file()


def test_report_command_rebuilds_without_running(quick_run):
    out, _, _ = quick_run
    page = out / "report.html"
    before_text, before_files = page.read_text(), _files(out)
    time.sleep(0.01)  # a rebuilt date would differ only after a second, but mtimes would show a rewrite
    started = time.perf_counter()
    r = run_cli("report", out)
    seconds = time.perf_counter() - started
    assert r.code == 0, r.err
    assert seconds < 2, seconds
    assert r.out.strip() == f"report: {page}"
    assert _files(out) == before_files  # nothing else written, runs/ untouched
    after = page.read_text()
    assert BUILT.search(after)
    assert BUILT.sub("", after) == BUILT.sub("", before_text)


def test_report_of_a_reproduce_all_directory(quick_run, tmp_path):
    out, _, _ = quick_run
    root = tmp_path / "all"
    for name in ("first", "second"):
        shutil.copytree(out, root / name)
        (root / name / "report.html").unlink()
    (root / "notes").mkdir()  # not an experiment: left out
    r = run_cli("report", root)
    assert r.code == 0, r.err
    assert r.out.splitlines() == [f"report: {root / 'first' / 'report.html'}",
                                  f"report: {root / 'second' / 'report.html'}",
                                  f"report: {root / 'index.html'}"]
    index = (root / "index.html").read_text()
    assert 'href="first/report.html"' in index and 'href="second/report.html"' in index
    assert "notes" not in index
    tally = json.loads((out / "summary.json").read_text())["tally"]
    assert ", ".join(f"{2 * n} {v}" for v, n in tally.items() if n) in index  # summed over both
    # the index's re-run command names the directory the experiments were run into
    assert html.escape(f"pagelab reproduce all --quick --out {out.parent}") in index


def test_report_escapes_everything(tmp_path):
    d = tmp_path / "x"
    d.mkdir()
    evil = "<script>alert(1)</script> & \"quotes\""
    (d / "summary.json").write_text(json.dumps({
        "experiment": "x<y", "paper": evil, "title": evil, "quick": False,
        "claims": [{"id": "a<b", "source": evil, "statement": evil, "paper": evil, "ours": "c&d", "rule": evil,
                    "verdict": "not reproduced", "detail": evil}],
        "tally": {"reproduced": 0, "partly": 0, "not reproduced": 1, "not measured": 0},
        "figures": ["missing<1>.png"]}))
    (d / "table.csv").write_text('name,value,paper_value\n"<b>bold</b>",1.5,2\n')
    (d / "experiment.toml").write_text('claim = "</pre><script>alert(2)</script>"\n')
    text = report.build_report(d).read_text()
    assert "<script>alert" not in text and "<b>bold" not in text
    assert html.escape(evil) in text and "&lt;b&gt;bold&lt;/b&gt;" in text
    assert "&lt;/pre&gt;&lt;script&gt;alert(2)" in text
    assert ">not reproduced</td>" in text and "a&lt;b" in text and "c&amp;d" in text
    assert "<img" not in text and "missing&lt;1&gt;.png" in text  # listed but absent: no broken image
    assert text.count("<script>") == 1  # only the page's own check script


def test_order_columns_puts_the_paper_beside_ours():
    cols = ["pair", "paper_program", "program", "lru_faults", "token_faults", "paper_lru_faults",
            "mean_s", "max_s", "paper_s", "paper_unmatched"]
    assert report.order_columns(cols) == [
        "pair", "program", "paper_program", "lru_faults", "paper_lru_faults", "token_faults",
        "mean_s", "paper_s", "max_s", "paper_unmatched"]


# ---------------------------------------------------------------- errors

def test_report_errors(tmp_path):
    assert_user_error(run_cli("report", tmp_path / "nope"), "nope", "no such directory")
    (tmp_path / "file").write_text("x")
    assert_user_error(run_cli("report", tmp_path / "file"), "not a directory")
    (tmp_path / "empty").mkdir()
    assert_user_error(run_cli("report", tmp_path / "empty"), "empty", "no summary.json")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "summary.json").write_text("{not json")
    assert_user_error(run_cli("report", tmp_path / "bad"), "summary.json", "not valid JSON")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "summary.json").write_text('{"policies": []}')
    assert_user_error(run_cli("report", tmp_path / "other"), "not the summary of an experiment")
    assert not list((tmp_path / "other").glob("*.html"))
    assert_user_error(run_cli("report"), "report")  # DIR is required


# ---------------------------------------------------------------- in a real browser

class _Dom(HTMLParser):
    """The parts of a dumped DOM the check reads: body attributes, every img's
    attributes, the text inside #errors."""

    def __init__(self):
        super().__init__()
        self.body, self.imgs, self.errors, self._in_errors = None, [], "", 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        elif tag == "img":
            self.imgs.append(a)
        if self._in_errors:
            self._in_errors += 1
        elif a.get("id") == "errors":
            self._in_errors = 1

    def handle_endtag(self, tag):
        if self._in_errors:
            self._in_errors -= 1

    def handle_data(self, data):
        if self._in_errors:
            self.errors += data


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    reason = "chromium is not installed (Debian package `chromium`; `make setup` installs it)"
    if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
        pytest.fail(f"{reason}: the report's browser check cannot be skipped under CI=true")
    pytest.skip(reason)


def _browse(exe: str, page: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [exe, "--headless=new", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage", "--no-first-run",
           "--hide-scrollbars", f"--user-data-dir={tmp / 'chromium-profile'}", *args, page.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def _dom(exe: str, page: Path, tmp: Path) -> _Dom:
    """The DOM after the page's load handler ran (virtual time lets every image load)."""
    dom = _Dom()
    dom.feed(_browse(exe, page, tmp, "--virtual-time-budget=5000", "--dump-dom").stdout)
    assert dom.body is not None and dom.body.get("data-checked") == "yes", "the page's check script did not run"
    return dom


def test_report_in_headless_chromium(quick_run, tmp_path):
    exe = _chromium()
    out, _, _ = quick_run
    summary = json.loads((out / "summary.json").read_text())
    dom = _dom(exe, out / "report.html", tmp_path)
    assert dom.errors.strip() == "", dom.errors
    assert [i["src"] for i in dom.imgs] == summary["figures"]
    assert all(i.get("data-loaded") == "yes" for i in dom.imgs), dom.imgs
    # the page as a picture: a real rendering, not a blank or error page
    shot = tmp_path / "report.png"
    _browse(exe, out / "report.html", tmp_path, f"--screenshot={shot}", "--window-size=1200,2400")
    from matplotlib.image import imread

    pixels = imread(shot)
    assert pixels.shape[:2] == (2400, 1200), pixels.shape
    ink = (pixels[..., :3].mean(axis=2) < 0.5).mean()  # share of dark pixels: text, rules, figures
    assert 0.005 < ink < 0.5, ink
    assert len({tuple(p) for p in pixels[::7, ::7, :3].reshape(-1, 3).round(2).tolist()}) > 20


def test_chromium_check_catches_broken_pages(quick_run, tmp_path):
    """The check can fail: a figure gone missing and a script error both show."""
    exe = _chromium()
    out, _, _ = quick_run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns("runs"))
    figures = json.loads((copy / "summary.json").read_text())["figures"]
    (copy / figures[0]).unlink()
    page = copy / "report.html"
    page.write_text(page.read_text().replace("</body>", "<script>noSuchFunction();</script></body>"))
    dom = _dom(exe, page, tmp_path)
    loaded = {i["src"]: i.get("data-loaded") for i in dom.imgs}
    assert loaded[figures[0]] == "no" and all(loaded[f] == "yes" for f in figures[1:]), loaded
    assert "noSuchFunction" in dom.errors, dom.errors


def test_printed_reports_keep_header_words_whole():
    """Printed, narrow columns broke their headers one letter a line (overflow-wrap:
    anywhere); words now stay whole and the page turns to landscape."""
    from pagelab.outputs.report import STYLE

    printed = STYLE[STYLE.index("@media print"):]
    assert "anywhere" not in STYLE and "break-all" not in STYLE
    assert "overflow-wrap: normal" in printed
    assert "@page { size: A4 landscape" in STYLE
