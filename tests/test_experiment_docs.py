"""docs/experiments.md's worked example runs as written: its module and its file,
through the runner, with the sensitivity ranges, give a ledger and a report."""

import json
import re
from pathlib import Path

import pytest

import pagelab.experiments
from pagelab.experiments.runner import reproduce

DOC = Path(__file__).resolve().parent.parent / "docs" / "experiments.md"


def blocks(language: str) -> list:
    text = DOC.read_text()
    example = text[text.index("## Adding an experiment"):]
    return re.findall(rf"```{language}\n(.*?)```", example, re.S)


@pytest.fixture
def example(tmp_path, monkeypatch):
    (module,) = blocks("python")
    (toml,) = blocks("toml")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "lru_vs_opt.py").write_text(module)
    # the module is found where the shipped ones are: the package's search path
    monkeypatch.setattr(pagelab.experiments, "__path__", list(pagelab.experiments.__path__) + [str(pkg)])
    path = tmp_path / "lru-vs-opt.toml"
    path.write_text(toml)
    return path


def test_the_worked_example_runs(example, tmp_path):
    (run,) = reproduce([str(example)], out=str(tmp_path / "out"), quick=True, sensitivity=True, workers=0)
    assert run.error is None, run.error
    verdicts = {r.claim.id: r.verdict for r in run.ledger}
    assert verdicts == {"opt-bound": "reproduced", "lru-stack": "reproduced"}
    assert all(len(r.variants) == 3 for r in run.ledger)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["experiment"] == "lru-vs-opt" and (tmp_path / "out" / "faults.png").stat().st_size > 1000
    assert (tmp_path / "out" / "sensitivity.png").is_file()


def test_the_appendix_is_the_declarations():
    """docs/experiments.md's appendix equals what the schemas declare, so the docs list
    every key of every shipped experiment, with its type and default."""
    from pagelab.experiments.protocol import reference
    from pagelab.experiments.runner import shipped

    text = DOC.read_text()
    appendix = text[text.index("### Every file"):].rstrip()
    assert appendix == reference(shipped()).rstrip(), "regenerate the appendix: protocol.reference(shipped())"
