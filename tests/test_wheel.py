"""A pip install works on its own (issue 20): the wheel built from this checkout, installed
into a fresh virtual environment, runs `pagelab demo`, every `pagelab reproduce` (quick
sizes) and the README's Python example from a directory outside the checkout, with only
`examples/` beside it. The wheel build reuses the engine `make build` compiled."""

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(cmd, cwd, timeout=900, env=None):
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL, env=env)
    assert p.returncode == 0, f"{cmd}: exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def readme_python_example() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## The Python API"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    maturin = shutil.which("maturin", path=os.path.dirname(sys.executable))
    if maturin is None:
        pytest.skip("maturin is not installed in this environment (make setup installs it)")
    tmp = tmp_path_factory.mktemp("wheel")
    _run([maturin, "build", "--release", "--quiet", "--out", tmp / "dist"], cwd=ROOT, timeout=1800)
    wheels = list((tmp / "dist").glob("pagelab-*.whl"))
    assert len(wheels) == 1, wheels
    venv.EnvBuilder(with_pip=True).create(tmp / "venv")
    py = tmp / "venv" / "bin" / "python"
    _run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheels[0]], cwd=tmp)
    work = tmp / "elsewhere"
    shutil.copytree(ROOT / "examples", work / "examples")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{tmp / 'venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return py, work, env


def test_the_installed_package_is_not_the_checkout(installed):
    py, work, env = installed
    p = _run([py, "-c", "import pagelab, pagelab.experiments.protocol as r; print(pagelab.__file__); "
                        "print(r.EXPERIMENTS_DIR); print(pagelab.build_info())"], cwd=work, env=env)
    lines = p.stdout.splitlines()
    assert not lines[0].startswith(str(ROOT)) and not lines[1].startswith(str(ROOT)), lines
    assert "'commit'" in lines[2]


def test_demo_from_the_wheel(installed):
    py, work, env = installed
    p = _run([Path(py).parent / "pagelab", "demo", "--out", "demo"], cwd=work, env=env)
    assert (work / "demo" / "summary.json").is_file() and (work / "demo" / "token-lru" / "report.html").is_file()
    assert "report:" in p.stdout


def test_every_reproduce_from_the_wheel(installed):
    py, work, env = installed
    _run([Path(py).parent / "pagelab", "reproduce", "all", "--quick", "--out", "repro"], cwd=work, env=env)
    names = sorted(d.name for d in (work / "repro").iterdir() if d.is_dir())
    assert names == ["gang", "mclustering", "numa", "predictive", "token-lru"], names
    for name in names:
        assert (work / "repro" / name / "report.html").is_file(), name


def test_readme_python_example_from_the_wheel(installed):
    py, work, env = installed
    script = work / "readme_example.py"
    script.write_text(readme_python_example())
    _run([py, script], cwd=work, env=env)
    assert (work / "lu.plt.zst").is_file() and (work / "results" / "lu-sizes").is_dir()


def test_the_wheel_carries_the_kernel_runner(installed):
    """`make build` puts pagelab-runner into python/pagelab/bin/; a wheel built after it
    carries it, and the installed package finds it there and runs it."""
    if not (ROOT / "python" / "pagelab" / "bin" / "pagelab-runner").is_file():
        pytest.skip("python/pagelab/bin/pagelab-runner is not built (make build builds it)")
    py, work, env = installed
    p = _run([py, "-c", "from pagelab.kernel.runner import find_runner; print(find_runner())"], cwd=work, env=env)
    runner = p.stdout.strip()
    assert runner.endswith("pagelab/bin/pagelab-runner") and not runner.startswith(str(ROOT)), runner
    out = _run([runner, "--process", '{"name": "a", "workload": "scan", "params": {"pages": 10, "passes": 2}}'],
               cwd=work, env=env)
    assert '"records":20' in out.stdout
