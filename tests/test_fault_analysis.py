"""The fault parameters L, D, W, R, F (predictive-replacement.txt Figure 1) and
`pagelab analyze faults`: identities, a hand-traced example, the CLI's files and errors."""

import pandas as pd
import pytest

from conftest import assert_user_error, run_cli

import pagelab
from pagelab import fault_analysis as fa

UNITS = ("refs", "faults")
FIGURES = ["fig02-dead-ratio.png", "fig04-lifetime-diff.png", "fig05-lifetime-signed-diff.png",
           "fig06-residency-diff.png", "fig07-lifetime-cdf.png", "fig08-lifetime-time.png",
           "fig10-lifetime-cov.png"]

#: pages A=10, B=20, C=30 on 2 frames under LRU (the Rust test's example); the second 10
#: of the run "10, 10" folds into the record before it, and counts as a reference of its
#: own in the references unit (issue 22):
#:
#:     reference 0 1 2 3 4 5 6 7 8
#:     page      A B A A C A B C A
#:     evicts            B   C A B
HAND_PAGES = [10, 20, 10, 10, 30, 10, 20, 30, 10]
NA = None
#: per residency: (vpage, finished, L, D, W, R, F) in references, then in faults
HAND_REFS = [(10, True, 5, 2, 1, 3, 8), (20, True, 0, 3, 2, 5, 5), (30, True, 0, 2, 1, 3, 3),
             (20, True, 0, 2, NA, NA, NA), (30, False, 0, 2, NA, NA, NA), (10, False, 0, 1, NA, NA, NA)]
HAND_FAULTS = [(2, 2, 0, 2, 4), (0, 1, 0, 1, 1), (0, 1, 0, 1, 1), (0, 2, NA, NA, NA), (0, 1, NA, NA, NA),
               (0, 0, NA, NA, NA)]


@pytest.fixture
def hand_trace(tmp_path):
    path = tmp_path / "hand.csv"
    path.write_text("".join(f"{p}\n" for p in HAND_PAGES))
    return path


def _values(series):
    return [None if pd.isna(v) else int(v) for v in series]


def test_hand_example(hand_trace):
    df = pagelab.fault_parameters(str(hand_trace), policy="lru", frames=2)
    assert df.attrs["records"] == 8 and df.attrs["references"] == 9 and df.attrs["faults"] == 6
    assert df["vpage"].tolist() == [r[0] for r in HAND_REFS]
    assert df["finished"].tolist() == [r[1] for r in HAND_REFS]
    assert df["fault_record"].tolist() == [0, 1, 3, 5, 6, 7]
    for k, p in enumerate("LDWRF"):
        assert _values(df[f"{p}_refs"]) == [r[2 + k] for r in HAND_REFS], p
        assert _values(df[f"{p}_faults"]) == [r[k] for r in HAND_FAULTS], p


def test_hand_example_series(hand_trace):
    df = pagelab.fault_parameters(str(hand_trace), policy="lru", frames=2)
    assert fa.dead_ratio(df, "refs").tolist() == [2 / 7, 1.0, 1.0, 1.0]
    assert fa.dead_ratio(df, "faults").tolist() == [0.5, 1.0, 1.0, 1.0]
    # only B has two evicted residencies (C's second is still resident at the end)
    assert fa.lifetime_differences(df, "refs").tolist() == [0]
    assert fa.residency_differences(df, "faults").tolist() == [1]
    assert fa.lifetimes(df, "refs").tolist() == [5, 0, 0, 0]
    b = int(df.loc[df["vpage"] == 20, "page"].iloc[0])
    assert fa.busiest_pages(df, 1) == [b]
    assert fa.lifetime_over_time(df, k=1)["fault_record"].tolist() == [1, 5]
    cov = fa.lifetime_cov(df, "faults")
    assert cov.index.tolist() == [b] and cov.tolist() == [0.0]
    s = fa.summary(df)
    assert (s["residencies"], s["faults"], s["finished"]) == (6, 6, 4)
    assert s["dead_ratio_below_half_refs"] == 0.25 and s["dead_ratio_below_half_faults"] == 0.0


def test_differences_are_capped():
    df = pd.DataFrame({"page": [1, 1, 1, 2, 2], "L_refs": [0, 100_000, 5, 7, 7], "finished": True})
    assert fa.lifetime_differences(df, "refs").tolist() == [50_000, 50_000, 0]
    assert fa.lifetime_differences(df, "refs", signed=True).tolist() == [50_000, -50_000, 0]
    assert fa.lifetime_differences(df, "refs", cap=None, signed=True).tolist() == [100_000, -99_995, 0]


@pytest.mark.parametrize("policy", ["lru", "clock", "opt", "fifo"])
def test_identities_on_a_builtin_workload(policy):
    w = pagelab.workload("zipf", refs=20_000, pages=800, seed=3)
    frames = 200
    df = pagelab.fault_parameters(w, policy=policy, frames=frames, seed=1)
    assert len(df) == df.attrs["faults"] == pagelab.replay(w, policy, frames, seed=1).faults(policy, frames)
    assert (~df["finished"]).sum() == frames
    for unit in UNITS:
        L, D, W, R, F = (df[f"{p}_{unit}"] for p in "LDWRF")
        defined = W.notna()
        assert defined.sum() > 0.5 * len(df)
        assert (R.isna() == ~defined).all() and (F.isna() == ~defined).all()
        assert (R[defined] == D[defined] + W[defined]).all()
        assert (F[defined] == L[defined] + D[defined] + W[defined]).all()
        assert not (defined & ~df["finished"]).any()  # a page back in memory was evicted first
        assert (D[df["finished"]] >= 1).all()
        ratio = fa.dead_ratio(df, unit)
        assert len(ratio) == df["finished"].sum() and ((ratio > 0) & (ratio <= 1)).all()


def test_rejects_bad_arguments():
    w = pagelab.workload("scan", pages=20, passes=2)
    with pytest.raises(pagelab.PagelabError, match="frames"):
        pagelab.fault_parameters(w, frames=0)
    with pytest.raises(pagelab.PagelabError, match="nosuch"):
        pagelab.fault_parameters(w, policy="nosuch", frames=5)
    with pytest.raises(pagelab.PagelabError, match="fixed-size"):
        pagelab.fault_parameters(w, policy="ws", frames=5)


def test_cli_writes_every_file(tmp_path, hand_trace):
    out = tmp_path / "out"
    r = run_cli("analyze", "faults", "workload:npb-mg:n=16,iterations=2", "workload:zipf:refs=20000,pages=500",
                "--memory-fraction", "0.5", "--out", out, "--pages", "3")
    assert r.code == 0, r.err
    assert "npb-mg_iterations=2_n=16" in r.out and str(out) in r.out
    names = {p.name for p in out.iterdir()}
    assert names == {"residencies-npb-mg_iterations=2_n=16.parquet", "residencies-zipf_pages=500_refs=20000.parquet",
                     "summary.csv", *FIGURES, *(f[:-4] + ".svg" for f in FIGURES)}
    summary = pd.read_csv(out / "summary.csv")
    assert summary["source"].tolist() == ["npb-mg_iterations=2_n=16", "zipf_pages=500_refs=20000"]
    for col in ("residencies", "faults", "dead_ratio_below_half_refs", "dead_ratio_below_half_faults",
                "median_abs_dL_refs", "median_abs_dL_faults", "share_abs_dL_le_10_faults", "median_cov_L_faults"):
        assert col in summary.columns
    df = pd.read_parquet(out / "residencies-npb-mg_iterations=2_n=16.parquet")
    assert len(df) == summary["residencies"].iloc[0] == summary["faults"].iloc[0]
    assert summary["frames"].iloc[0] == pagelab.workload("npb-mg", n=16, iterations=2).info()["distinct_pages"] // 2
    for name in FIGURES:
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_trace_file_and_frames(tmp_path, hand_trace):
    out = tmp_path / "out"
    r = run_cli("analyze", "faults", hand_trace, "--frames", "2", "--out", out)
    assert r.code == 0, r.err
    df = pd.read_parquet(out / "residencies-hand.parquet")
    assert _values(df["F_faults"]) == [r[4] for r in HAND_FAULTS]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("args, fragment", [
    (["workload:scan", "--frames", "5", "--policy", "nosuch"], "nosuch"),
    (["workload:scan", "--frames", "5", "--policy", "ws"], "fixed-size"),
    (["workload:scan", "--frames", "0"], "--frames"),
    (["workload:scan", "--memory-fraction", "1.5"], "--memory-fraction"),
    (["workload:scan"], "--frames"),
    (["workload:nosuch", "--frames", "5"], "nosuch"),
    (["workload:scan:bogus=3", "--frames", "5"], "bogus"),
    (["absent.plt", "--frames", "5"], "absent.plt"),
])
def test_cli_errors(tmp_path, args, fragment):
    out = tmp_path / "out"
    r = run_cli("analyze", "faults", *args, "--out", out)
    assert_user_error(r, fragment)
    assert not out.exists()


def test_cli_unwritable_out_dir(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    r = run_cli("analyze", "faults", "workload:scan:pages=20,passes=2", "--frames", "5", "--out", blocker / "out")
    assert_user_error(r, "out")
    assert blocker.read_text() == "not a directory"
