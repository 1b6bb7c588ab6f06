"""Notebook use: results render as HTML tables, `.plot()` returns a figure Jupyter
shows, and progress bars draw in a cell's output (through IPython's display handles)."""

import sys
import types

import pytest

import pagelab
from pagelab import progress as progress_module
from pagelab.progress import ProgressBar


@pytest.fixture(scope="module")
def replay():
    return pagelab.replay(pagelab.workload("lu"), policy=["lru", "opt"], frames=[10, 20])


def test_replay_results_render_as_html(replay):
    html = replay._repr_html_()
    assert html.count("<tr") == 1 + len(replay) and "<table" in html
    assert "fault_ratio" in html and "opt" in html


def test_curve_renders_a_sample_of_sizes():
    curve = pagelab.mrc(pagelab.workload("scan", pages=200, passes=2))
    html = curve._repr_html_()
    assert 2 <= html.count("<tr") - 1 <= 20


def test_plot_returns_a_figure_without_touching_pyplot(replay, tmp_path):
    from matplotlib.figure import Figure

    before = set(sys.modules)
    fig = replay.plot()
    assert isinstance(fig, Figure)
    assert [line.get_label() for line in fig.axes[0].get_lines()] == ["lru", "opt"]
    fig.savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 1000
    assert "matplotlib.pyplot" not in set(sys.modules) - before
    curve = pagelab.mrc(pagelab.workload("lu"))
    assert isinstance(curve.plot(), Figure)


def test_system_and_gang_results(tmp_path):
    from matplotlib.figure import Figure

    res = pagelab.run_system("examples/two-programs.toml")
    assert "<table" in res._repr_html_() and "slowdown" in res._repr_html_()
    assert isinstance(res.plot(), Figure) and isinstance(res.plot(res.process_names[1]), Figure)
    with pytest.raises(pagelab.PagelabError, match="no process 'nosuch'"):
        res.plot("nosuch")
    gang = pagelab.run_system("examples/gang-two-jobs.toml")
    assert "<table" in gang._repr_html_()
    assert isinstance(gang.plot(node=1), Figure)
    with pytest.raises(pagelab.PagelabError, match="node"):
        gang.plot(node=5)


@pytest.fixture
def fake_jupyter(monkeypatch):
    """An IPython whose shell is a Jupyter kernel's, recording what is displayed."""
    shown = []

    class ZMQInteractiveShell:
        pass

    class Handle:
        def update(self, obj):
            shown.append(obj.data)

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: ZMQInteractiveShell()
    display = types.ModuleType("IPython.display")

    class HTML:
        def __init__(self, data):
            self.data = data

    display.HTML = HTML
    display.display = lambda obj, display_id=False: Handle()
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    return shown


def test_progress_draws_in_a_notebook_cell(fake_jupyter):
    assert progress_module.in_notebook()
    bar = ProgressBar("replaying", total=100, delay=0)
    assert bar.enabled  # stderr is no terminal, but a notebook wants the bar
    with bar:
        for done in range(0, 101, 10):
            bar(done)
    assert fake_jupyter, "nothing was displayed"
    assert "replaying" in fake_jupyter[-1] and "100/100" in fake_jupyter[-1]


def test_no_notebook_no_bar(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert not progress_module.in_notebook()
    assert not ProgressBar("x").enabled


def test_bar_legend_never_covers_the_bars():
    """Figure 13 of the predictive reproduction hid bar tops under its legend."""
    import pandas as pd

    from pagelab.figures.bars import draw_grouped_bars

    df = pd.DataFrame([{"workload": w, "config": c, "v": 1.0} for w in "ABCDEFGH"
                       for c in ("LRU", "EELRU", "OPT", "Last-static", "Last-dynamic")])
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = draw_grouped_bars(df, "v", "faults", "tall bars everywhere")
    renderer = FigureCanvasAgg(fig).get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.x0 >= ax.get_window_extent(renderer).x1
