"""HTML reports of `pagelab reproduce` results.

``build_report(DIR)`` writes DIR/report.html from what an experiment run stored in DIR
(summary.json, table.csv, experiment.toml, the figures), without running anything: the
claim ledger (each of the paper's claims, its rule, our measure and the verdict, with
its robustness when a sensitivity run was made), our table with the paper's numbers
beside ours, every figure (the PNG shown, the SVG linked), the exact configuration,
versions and git commit, and the command that re-runs it. ``build_index(DIR)`` writes DIR/index.html linking the
reports of the experiment subdirectories of a `pagelab reproduce all` directory;
``build(DIR)`` is `pagelab report DIR`: whichever of the two DIR holds.

One self-contained file: styles and a small script inline, figures by relative path
beside it, readable printed in black and white (no meaning carried by colour alone).
The script marks, on window load, each <img> with ``data-loaded="yes"`` or ``"no"`` and
writes any script error into ``<div id="errors">``, so a headless browser can check the
page (tests/test_report.py). Every text taken from the results is escaped.
"""

from __future__ import annotations

import csv
import datetime
import html
import json
import os
import shlex
import struct
import zlib
from pathlib import Path
from typing import List, Optional, Union
from urllib.parse import quote

from .._core import PagelabError
from ..files import write_text
from ..version import version_line

REPORT = "report.html"
INDEX = "index.html"
SUMMARY = "summary.json"
TABLE = "table.csv"
EXPERIMENT_COPY = "experiment.toml"
#: subdirectories of a results directory that hold no figures of the report
SKIP_DIRS = {"runs", "store"}

PathLike = Union[str, os.PathLike]

# ---------------------------------------------------------------- the page's parts

CHECK_SCRIPT = """
(function () {
  var pending = [];
  function note(text) {
    var box = document.getElementById("errors");
    if (!box) { pending.push(text); return; }
    var p = document.createElement("p");
    p.textContent = text;
    box.appendChild(p);
  }
  window.onerror = function (message, source, line) {
    note("script error: " + message + (source ? " (" + source + ":" + line + ")" : ""));
    return false;
  };
  window.addEventListener("load", function () {
    pending.splice(0).forEach(note);
    var imgs = document.getElementsByTagName("img");
    for (var i = 0; i < imgs.length; i++) {
      var ok = imgs[i].complete && imgs[i].naturalWidth > 0;
      imgs[i].setAttribute("data-loaded", ok ? "yes" : "no");
    }
    document.body.setAttribute("data-checked", "yes");
  });
})();
"""

STYLE = """
body { font-family: Georgia, "DejaVu Serif", serif; color: #000; background: #fff; max-width: 70rem;
       margin: 1.5rem auto; padding: 0 1rem; line-height: 1.4; }
h1 { font-size: 1.6rem; margin-bottom: 0.3rem; }
h2 { font-size: 1.25rem; border-bottom: 1px solid #000; margin-top: 2rem; }
code, pre, .cmd { font-family: "DejaVu Sans Mono", Menlo, monospace; font-size: 0.85rem; }
pre { border: 1px solid #888; padding: 0.6rem; overflow-x: auto; white-space: pre-wrap; }
.claim { border-left: 4px solid #000; padding-left: 0.8rem; }
.meta, .note, figcaption .files { font-size: 0.9rem; }
nav ol { columns: 2; font-size: 0.9rem; }
.verdict { font-weight: bold; }
.verdict.no, td.no { text-decoration: underline; }
.verdict.partly { font-style: italic; }
.verdict.none { font-weight: normal; color: #444; }
table.ledger td { max-width: 22rem; }
table { border-collapse: collapse; font-size: 0.8rem; margin: 0.5rem 0; }
th, td { border: 1px solid #777; padding: 0.15rem 0.4rem; vertical-align: top; }
th { background: #eee; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th.paper, td.paper { font-style: italic; border-left: 2px dashed #000; background: #f6f6f6; }
.scroll { overflow-x: auto; }
figure { margin: 1.2rem 0; break-inside: avoid; page-break-inside: avoid; }
figure img { max-width: 100%; height: auto; border: 1px solid #ccc; }
figcaption { font-size: 0.9rem; }
dl.kv { display: grid; grid-template-columns: max-content auto; gap: 0.1rem 1rem; }
dl.kv dt { font-weight: bold; }
dl.kv dd { margin: 0; }
#errors:empty { display: none; }
#errors { border: 3px double #000; padding: 0.5rem; font-weight: bold; }
#errors::before { content: "Errors on this page:"; }
footer { margin-top: 2rem; font-size: 0.8rem; border-top: 1px solid #000; }
@page { size: A4 landscape; margin: 12mm; }
@media print {
  body { max-width: none; margin: 0; font-size: 10pt; }
  nav { display: none; }
  a { color: #000; text-decoration: none; }
  .scroll { overflow: visible; }
  table { font-size: 7pt; }
  th { overflow-wrap: normal; word-break: normal; hyphens: manual; }
  td.num { white-space: nowrap; }
  thead { display: table-header-group; }
  tr { break-inside: avoid; }
  th, th.paper, td.paper { background: none; }
  h2 { break-after: avoid; }
}
"""


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _href(rel: str) -> str:
    """A relative path as an escaped URL (for src and href)."""
    return _e(quote(rel.replace(os.sep, "/")))


def _page(title: str, body: List[str]) -> str:
    built = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{STYLE}</style>",
        f"<script>{CHECK_SCRIPT}</script>",
        "</head>",
        "<body>",
        '<div id="errors" role="alert"></div>',
        *body,
        f'<footer><p>Built <span id="built">{_e(built)}</span> by {_e(version_line())} '
        "from the stored results; nothing was re-run.</p></footer>",
        "</body>",
        "</html>",
        "",
    ])


# ---------------------------------------------------------------- values

def fmt_number(x: float) -> str:
    """A number as a table shows it: whole numbers with thousands separators, others
    with about three significant digits."""
    if x != x:
        return "–"
    if x in (float("inf"), float("-inf")):
        return "∞" if x > 0 else "-∞"
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 100:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def fmt_value(v) -> str:
    """A JSON value as text: yes/no, numbers as fmt_number, lists joined by '/'."""
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        return fmt_number(v)
    if isinstance(v, list):
        return "/".join(fmt_value(x) for x in v) if v else "none"
    if isinstance(v, dict):
        return ", ".join(f"{k}: {fmt_value(x)}" for k, x in v.items()) if v else "none"
    return str(v)


def fmt_cell(text: str) -> tuple:
    """(shown text, is a number) of one table.csv cell."""
    t = text.strip()
    if t == "":
        return "–", False
    if t in ("True", "False"):
        return ("yes" if t == "True" else "no"), False
    try:
        return f"{int(t):,}", True
    except ValueError:
        pass
    try:
        return fmt_number(float(t)), True
    except ValueError:
        return t, False


def _cls(*names: str) -> str:
    """A class attribute of the non-empty names, or nothing."""
    names = [n for n in names if n]
    return f' class="{" ".join(names)}"' if names else ""


def _label(key: str) -> str:
    return key.replace("_", " ")


# ---------------------------------------------------------------- reading the results

def _read_summary(d: Path) -> Optional[dict]:
    """summary.json of DIR (None when absent); one-line errors when unreadable."""
    path = d / SUMMARY
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise PagelabError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise PagelabError(f"{path}: expected a JSON object")
    return data


def _experiment_summary(d: Path) -> dict:
    if not d.is_dir():
        raise PagelabError(f"{d}: no such directory" if not d.exists() else f"{d}: not a directory")
    summary = _read_summary(d)
    if summary is None:
        raise PagelabError(f"{d}: no {SUMMARY} (not an output directory of `pagelab reproduce`)")
    if "experiment" not in summary:
        raise PagelabError(f"{d / SUMMARY}: not the summary of an experiment (no \"experiment\" key)")
    return summary


def is_experiment_dir(d: Path) -> bool:
    try:
        summary = _read_summary(d)
    except PagelabError:
        return False
    return summary is not None and "experiment" in summary


def experiment_subdirs(d: Path) -> List[Path]:
    """The subdirectories of DIR holding an experiment's results, by name."""
    return sorted(p for p in d.iterdir() if p.is_dir() and is_experiment_dir(p))


def png_info(path: Path) -> dict:
    """Width, height and text metadata (Title, ...) of a PNG file, without an image
    library; {} when the file is not a PNG."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return {}
    info, pos = {}, 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR" and len(chunk) >= 8:
            info["width"], info["height"] = struct.unpack(">II", chunk[:8])
        elif kind == b"tEXt" and b"\0" in chunk:
            key, text = chunk.split(b"\0", 1)
            info[key.decode("latin-1")] = text.decode("latin-1")
        elif kind == b"iTXt" and b"\0" in chunk:
            key, rest = chunk.split(b"\0", 1)
            if len(rest) >= 2:
                compressed, rest = rest[0], rest[2:]
                parts = rest.split(b"\0", 2)
                if len(parts) == 3:
                    text = parts[2]
                    try:
                        text = zlib.decompress(text) if compressed else text
                        info[key.decode("latin-1")] = text.decode("utf-8")
                    except (zlib.error, UnicodeDecodeError):
                        pass
        elif kind == b"IEND":
            break
    return info


def figure_files(d: Path, summary: dict) -> List[str]:
    """The figures of DIR as paths relative to it: summary.json's in its order, then any
    other PNG under DIR (outside runs/), by path."""
    listed = [str(f) for f in summary.get("figures") or [] if isinstance(f, str)]
    seen = set(listed)
    others = []
    for p in sorted(d.rglob("*.png")):
        rel = p.relative_to(d)
        if any(part in SKIP_DIRS or part.startswith(".") for part in rel.parts[:-1]) or rel.name.startswith("."):
            continue
        if rel.as_posix() not in seen:
            others.append(rel.as_posix())
    return listed + others


# ---------------------------------------------------------------- sections

def _section_head(summary: dict, d: Path) -> List[str]:
    name, paper, title = summary.get("experiment"), summary.get("paper"), summary.get("title")
    run = summary.get("reproduce") or {}
    quick = summary.get("quick", run.get("quick"))
    when = run.get("date")
    meta = ["Quick run (scaled-down problem sizes, --quick)" if quick else "Full-size run"]
    if summary.get("sensitivity"):
        meta.append("with its sensitivity ranges")
    if when:
        meta.append(f"run {when}")
    if summary.get("seconds") is not None:
        meta.append(f"{fmt_value(summary['seconds'])} s of wall time")
    if summary.get("engine_seconds") is not None:
        meta.append(f"{fmt_value(summary['engine_seconds'])} s of engine runs (stored points reused count too)")
    tally = summary.get("tally") or {}
    counts = ", ".join(f"{n} {v}" for v, n in tally.items() if n)
    out = [
        "<header>",
        f"<h1>{_e(name)}: reproducing {_e(paper or 'the paper')}</h1>",
        f'<p class="claim"><b>What is reproduced.</b> {_e(title or "(not recorded)")}</p>',
    ]
    if summary.get("description"):
        out.append(f"<p>{_e(summary['description'])}</p>")
    out += [
        f'<p class="meta">Paper: <cite>{_e(paper or "not recorded")}</cite> (README, References). '
        f'{_e("; ".join(meta))}. Claims: {_e(counts or "none recorded")}.</p>',
        "</header>",
        "<nav><ol>",
        '<li><a href="#claims">Claims</a></li>',
        '<li><a href="#results">Results table</a></li>',
        '<li><a href="#figures">Figures</a></li>',
        '<li><a href="#configuration">Configuration</a></li>',
        '<li><a href="#rerun">How to re-run</a></li>',
        "</ol></nav>",
    ]
    return out


VERDICT_CLASS = {"reproduced": "yes", "partly": "partly", "not reproduced": "no", "not measured": "none"}


def _section_claims(summary: dict) -> List[str]:
    claims = summary.get("claims")
    out = ['<section id="claims">', "<h2>1. Claims</h2>"]
    if not isinstance(claims, list) or not claims:
        out += ['<p class="note">No claim ledger in summary.json (results of an older pagelab).</p>', "</section>"]
        return out
    robust = any(isinstance(c, dict) and c.get("robustness") for c in claims)
    out.append('<p class="note">Each claim of the paper with the rule that would refute it, fixed in the '
               "experiment file before the run, and what this run measured. "
               + ("Robustness: the variants of the sensitivity ranges (the file's own settings included) in "
                  "which the claim is reproduced." if robust else
                  "Run with <code>--sensitivity</code> to see how robust each verdict is.") + "</p>")
    cols = ["claim", "source", "paper", "ours", "rule", "verdict"] + (["robustness"] if robust else [])
    out.append('<div class="scroll"><table class="ledger"><thead><tr>')
    out += [f"<th>{_e(c)}</th>" for c in cols]
    out.append("</tr></thead><tbody>")
    for c in claims:
        if not isinstance(c, dict):
            continue
        verdict = str(c.get("verdict", "not measured"))
        out.append("<tr>")
        out.append(f"<td><b>{_e(c.get('id'))}</b><br>{_e(c.get('statement'))}</td>")
        out.append(f"<td>{_e(c.get('source'))}</td>")
        out.append(f'<td class="paper">{_e(c.get("paper"))}</td>')
        out.append(f"<td>{_e(c.get('ours'))}<br><small>{_e(c.get('detail'))}</small></td>")
        out.append(f"<td>{_e(c.get('rule'))}</td>")
        out.append(f'<td class="verdict {VERDICT_CLASS.get(verdict, "none")}">{_e(verdict)}</td>')
        if robust:
            out.append(f"<td class=\"num\">{_e(c.get('robustness') or '–')}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    notes = [c for c in claims if isinstance(c, dict) and c.get("note")]
    if notes:
        out.append('<ul class="notes">')
        out += [f"<li><b>{_e(c['id'])}</b>: {_e(c['note'])}</li>" for c in notes]
        out.append("</ul>")
    lines = summary.get("lines")
    if isinstance(lines, list) and lines:
        out.append("<h3>Findings of this run</h3><ul>")
        out += [f"<li>{_e(line)}</li>" for line in lines if isinstance(line, str)]
        out.append("</ul>")
    out.append("</section>")
    return out


def order_columns(columns: List[str]) -> List[str]:
    """table.csv's columns with each ``paper_X`` right after ours: the column ``X``, else
    the first column ending in ``_X`` (paper_s beside mean_s); unmatched ones stay put."""
    ours = [c for c in columns if not c.startswith("paper_")]
    partner = {}
    for c in columns:
        if c.startswith("paper_"):
            x = c[len("paper_"):]
            match = x if x in ours else next((o for o in ours if o.endswith("_" + x)), None)
            if match is not None:
                partner[c] = match
    out = []
    for c in columns:
        if c in partner:
            continue
        out.append(c)
        out += [p for p in columns if partner.get(p) == c]
    return out


def _section_table(d: Path, summary: dict) -> List[str]:
    out = ['<section id="results">', "<h2>2. Results</h2>"]
    path = d / TABLE
    if not path.is_file():
        out += [f'<p class="note">No {TABLE} in this directory.</p>', "</section>"]
        return out
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        out += [f'<p class="note">{TABLE} is empty.</p>', "</section>"]
        return out
    header, body = rows[0], rows[1:]
    cols = order_columns(header)
    index = {c: i for i, c in enumerate(header)}
    papers = [c for c in header if c.startswith("paper_")]
    note = (f"Our results, {len(body):,} rows of <a href=\"{_href(TABLE)}\">{TABLE}</a>. "
            + ("Columns named <code>paper_…</code> (italic, dashed left border) are the paper's numbers, "
               "each beside ours; – where the paper gives none." if papers
               else "The table holds no numbers of the paper (see below where the experiment file records some)."))
    out.append(f'<p class="note">{note}</p>')
    out.append('<div class="scroll"><table class="results"><thead><tr>')
    out += [f"<th{_cls('paper' if c.startswith('paper_') else '')}>{_e(c)}</th>" for c in cols]
    out.append("</tr></thead><tbody>")
    for r in body:
        out.append("<tr>")
        for c in cols:
            i = index[c]
            text, num = fmt_cell(r[i] if i < len(r) else "")
            out.append(f"<td{_cls('num' if num else '', 'paper' if c.startswith('paper_') else '')}>{_e(text)}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    paper_numbers = summary.get("paper_numbers")
    if isinstance(paper_numbers, dict) and paper_numbers:
        out.append("<h3>The paper's numbers, as recorded in the experiment file</h3>")
        out.append('<table class="paper-numbers"><thead><tr><th>quantity</th><th class="paper">paper</th>'
                   "</tr></thead><tbody>")
        for key, value in _flatten(paper_numbers):
            out.append(f"<tr><td>{_e(key)}</td><td class=\"num paper\">{_e(fmt_value(value))}</td></tr>")
        out.append("</tbody></table>")
    out.append("</section>")
    return out


def _flatten(d: dict, prefix: str = "") -> List[tuple]:
    out = []
    for k, v in d.items():
        key = f"{prefix} / {_label(k)}" if prefix else _label(k)
        if isinstance(v, dict):
            out += _flatten(v, key)
        else:
            out.append((key, v))
    return out


def _section_figures(d: Path, summary: dict) -> List[str]:
    figures = figure_files(d, summary)
    out = ['<section id="figures">', "<h2>3. Figures</h2>"]
    if not figures:
        out += ['<p class="note">This experiment writes no figures.</p>', "</section>"]
        return out
    out.append(f'<p class="note">{len(figures)} figure{"s" if len(figures) != 1 else ""}, each as PNG '
               "(shown) and SVG (linked, for print and scaling).</p>")
    for n, rel in enumerate(figures, 1):
        png = d / rel
        svg_rel = rel[:-4] + ".svg" if rel.lower().endswith(".png") else None
        info = png_info(png) if png.is_file() else {}
        caption = info.get("Title") or Path(rel).stem.replace("-", " ").replace("_", " ")
        out.append(f'<figure id="figure-{n}">')
        if png.is_file():
            size = (f' width="{info["width"]}" height="{info["height"]}"'
                    if "width" in info and "height" in info else "")
            out.append(f'<img src="{_href(rel)}" alt="{_e(caption)}"{size}>')
        else:
            out.append(f'<p class="note"><b>Missing:</b> {_e(rel)} is listed in summary.json but not in '
                       "this directory.</p>")
        files = [f'<a href="{_href(rel)}">{_e(rel)}</a>'] if png.is_file() else []
        if svg_rel and (d / svg_rel).is_file():
            files.append(f'<a href="{_href(svg_rel)}">{_e(svg_rel)}</a>')
        elif svg_rel:
            files.append(f"no SVG ({_e(svg_rel)} not written: results from an older pagelab)")
        out.append(f"<figcaption><b>Figure {n}.</b> {_e(caption)}"
                   f'<br><span class="files">{" · ".join(files)}</span></figcaption>')
        out.append("</figure>")
    out.append("</section>")
    return out


def _section_configuration(d: Path, summary: dict) -> List[str]:
    run = summary.get("reproduce") or {}
    items = [
        ("experiment", summary.get("experiment")),
        ("paper", summary.get("paper")),
        ("experiment file", run.get("experiment_file")),
        ("problem sizes", "quick (scaled down)" if summary.get("quick", run.get("quick")) else "full"),
        ("points", summary.get("points")),
        ("pagelab version", (run.get("pagelab") or {}).get("pagelab")),
        ("engine version", (run.get("pagelab") or {}).get("engine")),
        ("git commit", (run.get("pagelab") or {}).get("commit")),
        ("run date (UTC)", run.get("date")),
        ("wall time", None if summary.get("seconds") is None else f"{fmt_value(summary['seconds'])} s"),
    ]
    out = ['<section id="configuration">', "<h2>4. Configuration</h2>", '<dl class="kv">']
    for k, v in items:
        out.append(f"<dt>{_e(k)}</dt><dd>{_e('not recorded' if v is None else v)}</dd>")
    out.append("</dl>")
    toml = d / EXPERIMENT_COPY
    if toml.is_file():
        out.append(f'<p>The experiment file as run, verbatim (<a href="{_href(EXPERIMENT_COPY)}">'
                   f"{EXPERIMENT_COPY}</a>):</p>")
        out.append(f'<pre class="toml">{_e(toml.read_text(errors="replace"))}</pre>')
    else:
        out.append(f'<p class="note">No copy of the experiment file ({EXPERIMENT_COPY}) in this directory: '
                   "results from an older pagelab.</p>")
    out.append("</section>")
    return out


def rerun_command(d: Path, summary: dict) -> str:
    run = summary.get("reproduce") or {}
    if run.get("command"):
        return run["command"]
    quick = ["--quick"] if summary.get("quick") else []
    return shlex.join(["pagelab", "reproduce", str(summary.get("experiment"))] + quick + ["--out", os.fspath(d)])


def _out_of(command: str, default: str) -> str:
    try:
        words = shlex.split(command)
    except ValueError:
        return default
    return words[words.index("--out") + 1] if "--out" in words[:-1] else default


def _section_rerun(d: Path, summary: dict) -> List[str]:
    cmd = rerun_command(d, summary)
    out_dir = _out_of(cmd, os.fspath(d))
    return [
        '<section id="rerun">', "<h2>5. How to re-run</h2>",
        "<p>From the root of a checkout of pagelab, after <code>make build</code>:</p>",
        f'<pre class="cmd">{_e(cmd)}</pre>',
        "<p>This runs the experiment again and rewrites this directory (results, figures and this report). "
        "To rebuild only this report from the stored results, without running anything:</p>",
        f'<pre class="cmd">{_e(shlex.join(["pagelab", "report", out_dir]))}</pre>',
        "</section>",
    ]


# ---------------------------------------------------------------- the files

def build_report(directory: PathLike) -> Path:
    """Writes DIR/report.html from the results stored in DIR; returns its path.
    PagelabError (one line) when DIR is missing or holds no experiment's summary.json."""
    d = Path(directory)
    summary = _experiment_summary(d)
    body = (_section_head(summary, d) + _section_claims(summary) + _section_table(d, summary)
            + _section_figures(d, summary) + _section_configuration(d, summary) + _section_rerun(d, summary))
    title = f"pagelab: {summary.get('experiment')} ({summary.get('paper') or 'no paper recorded'})"
    path = d / REPORT
    write_text(path, _page(title, body))
    return path


def build_index(directory: PathLike) -> Path:
    """Writes DIR/index.html linking the report of every experiment subdirectory of DIR
    (a `pagelab reproduce all` directory); returns its path."""
    d = Path(directory)
    if not d.is_dir():
        raise PagelabError(f"{d}: no such directory" if not d.exists() else f"{d}: not a directory")
    subs = experiment_subdirs(d)
    if not subs:
        raise PagelabError(f"{d}: no experiment subdirectories (none holds a {SUMMARY} of `pagelab reproduce`)")
    rows, quick, outs, totals = [], set(), set(), {}
    for sub in subs:
        s = _read_summary(sub) or {}
        run = s.get("reproduce") or {}
        tally = s.get("tally") if isinstance(s.get("tally"), dict) else {}
        for v, n in tally.items():
            totals[v] = totals.get(v, 0) + (n if isinstance(n, int) else 0)
        quick.add(bool(s.get("quick", run.get("quick"))))
        outs.add(os.path.dirname(_out_of(rerun_command(sub, s), "")))
        link = f"{sub.name}/{REPORT}"
        name = (f'<a href="{_href(link)}">{_e(s.get("experiment"))}</a>' if (sub / REPORT).is_file()
                else f"{_e(s.get('experiment'))} (no report yet)")
        rows.append(
            f"<tr><td>{name}</td><td>{_e(s.get('paper') or '–')}</td><td>{_e(s.get('title') or '–')}</td>"
            f"<td>{_e(', '.join(f'{n} {v}' for v, n in tally.items() if n) or '–')}</td>"
            f"<td>{'quick' if s.get('quick', run.get('quick')) else 'full'}</td>"
            f"<td>{_e(run.get('date') or 'not recorded')}</td>"
            f"<td class=\"num\">{_e(fmt_value(s.get('seconds')))}</td></tr>")
    out_dir = outs.pop() if len(outs) == 1 and "" not in outs else os.fspath(d)
    cmd = shlex.join(["pagelab", "reproduce", "all"] + (["--quick"] if quick == {True} else []) + ["--out", out_dir])
    body = [
        "<header><h1>pagelab: reproduced experiments</h1>",
        f'<p class="meta">{len(subs)} experiment{"s" if len(subs) != 1 else ""}; claims: '
        f"{_e(', '.join(f'{n} {v}' for v, n in totals.items() if n) or 'none recorded')}. Each report holds "
        "the claim ledger, our numbers beside the paper's, the figures, the configuration and the command "
        "that re-runs it.</p></header>",
        '<section id="experiments"><h2>Experiments</h2><div class="scroll"><table class="index">',
        "<thead><tr><th>experiment (report)</th><th>paper</th><th>what is reproduced</th><th>claims</th>"
        "<th>sizes</th><th>run date (UTC)</th><th>wall time (s)</th></tr></thead><tbody>",
        *rows,
        "</tbody></table></div></section>",
        '<section id="rerun"><h2>How to re-run</h2>',
        f'<pre class="cmd">{_e(cmd)}</pre>',
        "<p>To rebuild the reports and this index from the stored results, without running anything:</p>",
        f'<pre class="cmd">{_e(shlex.join(["pagelab", "report", out_dir]))}</pre></section>',
    ]
    path = d / INDEX
    write_text(path, _page("pagelab: reproduced experiments", body))
    return path


def build(directory: PathLike) -> List[Path]:
    """`pagelab report DIR`: DIR/report.html when DIR holds an experiment's results;
    when it holds experiment subdirectories (`pagelab reproduce all`), a report in each
    and DIR/index.html. The paths written, the index last."""
    d = Path(directory)
    if not d.is_dir():
        raise PagelabError(f"{d}: no such directory" if not d.exists() else f"{d}: not a directory")
    summary = _read_summary(d)
    if summary is not None and "experiment" in summary:
        return [build_report(d)]
    subs = experiment_subdirs(d)
    if subs:
        return [build_report(s) for s in subs] + [build_index(d)]
    if summary is not None:
        raise PagelabError(f"{d / SUMMARY}: not the summary of an experiment (no \"experiment\" key), "
                           "and no experiment subdirectories")
    raise PagelabError(f"{d}: no {SUMMARY} (not an output directory of `pagelab reproduce`)")
