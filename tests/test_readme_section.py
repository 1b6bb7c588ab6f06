"""`pagelab report DIR --readme README.md` writes the reproduced results between the
README's markers from stored results, and only there."""

import json
import shutil

import pytest

from conftest import assert_user_error, run_cli

from pagelab.outputs.readme import BEGIN, END
from pagelab.experiments.runner import reproduce


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("all")
    reproduce(["token-lru"], out=str(out / "token-lru"), quick=True, workers=0)
    return out


def test_the_section_is_generated_between_the_markers(results, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nbefore\n\n{BEGIN}\nold text\n{END}\n\nafter\n")
    r = run_cli("report", results, "--readme", readme)
    assert r.code == 0, r.err
    text = readme.read_text()
    assert text.startswith("# title\n\nbefore\n\n") and text.endswith(f"{END}\n\nafter\n")
    assert "old text" not in text
    summary = json.loads((results / "token-lru" / "summary.json").read_text())
    section = text[text.index(BEGIN):text.index(END)]
    assert summary["title"] in section
    for c in summary["claims"]:
        assert f"**{c['id']}**" in section and f"**{c['verdict']}**" in section
    images = [line for line in section.splitlines() if line.startswith("![")]
    assert images and all((tmp_path / line[line.index("(") + 1:-1]).is_file() for line in images)
    # run twice: the same text (the figures copied again, nothing appended)
    assert run_cli("report", results, "--readme", readme).code == 0
    assert readme.read_text() == text


def test_readme_errors(results, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("no markers here\n")
    assert_user_error(run_cli("report", results, "--readme", readme), "README.md", "generated section")
    assert readme.read_text() == "no markers here\n"
    assert_user_error(run_cli("report", tmp_path / "none", "--readme", readme), "none")
