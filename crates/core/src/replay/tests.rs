//! Replay against theory: OPT is a lower bound, LRU equals the stack-distance curve,
//! a loop of n+1 pages defeats LRU and FIFO (and suits MRU), write-backs count dirty
//! evictions.

use super::*;
use crate::analysis::mrc;
use crate::policy::LastDynamicRule;
use crate::trace::{AccessKind, Reference, VecSource};

fn pages_source(pages: Vec<u64>) -> impl Fn() -> Result<Box<dyn RefSource>> {
    move || Ok(Box::new(VecSource::from_pages(&pages)) as Box<dyn RefSource>)
}

fn run(open: &dyn Fn() -> Result<Box<dyn RefSource>>, policies: &[PolicyKind], frames: &[u64]) -> Vec<ReplayResult> {
    let cfg = ReplayConfig { policies: policies.to_vec(), frames: frames.to_vec(), seed: 7, repeats: Default::default() };
    replay(open, &cfg, &mut |_| true).unwrap()
}

fn faults(results: &[ReplayResult], policy: &str, frames: u64) -> u64 {
    results.iter().find(|r| r.policy == policy && r.frames == frames).unwrap().faults
}

fn random_pages(n: usize, range: u64, seed: u64) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // skewed: low pages far more often
            let r = (x >> 33) % range;
            r * r / range
        })
        .collect()
}

#[test]
fn loop_of_n_plus_one_pages() {
    let n = 50u64;
    let passes = 30u64;
    let pages: Vec<u64> = (0..passes).flat_map(|_| 0..=n).collect();
    let open = pages_source(pages);
    let r = run(&open, &PolicyKind::ALL, &[n]);
    let total = (n + 1) * passes;
    assert_eq!(faults(&r, "lru", n), total);
    assert_eq!(faults(&r, "fifo", n), total);
    assert_eq!(faults(&r, "clock", n), total);
    // MRU evicts the page just used, the one the loop needs last: one fault a pass
    assert_eq!(faults(&r, "mru", n), (n + 1) + (passes - 1));
    let opt = faults(&r, "opt", n);
    assert!(opt >= n + 1 && opt <= n + 1 + total / n + passes, "{opt}");
}

#[test]
fn opt_is_a_lower_bound_and_lru_matches_the_curve() {
    let pages = random_pages(60_000, 900, 3);
    let open = pages_source(pages);
    let curve = mrc(open().unwrap().as_mut(), &mut |_| true).unwrap();
    let frames: Vec<u64> = vec![1, 2, 5, 17, 64, 200, 450, 899, 900, 2000];
    let r = run(&open, &PolicyKind::ALL, &frames);
    for &f in &frames {
        let opt = faults(&r, "opt", f);
        for p in PolicyKind::ALL.iter().filter(|p| !p.variable_size()) {
            assert!(opt <= faults(&r, &p.label(), f), "{} at {f}", p.label());
        }
        assert_eq!(faults(&r, "lru", f), curve.faults_at(f), "lru at {f}");
    }
}

#[test]
fn dirty_evictions_and_compulsory_faults() {
    // write 0, read 1, read 2 with one frame: 0 is evicted dirty once
    let refs = [(0, AccessKind::Write), (1, AccessKind::Read), (2, AccessKind::Read), (0, AccessKind::Read)]
        .iter()
        .map(|&(page, kind)| Reference { pid: 0, page, kind, repeat: 2, gap: 0 })
        .collect::<Vec<_>>();
    let open = move || Ok(Box::new(VecSource::new("t", 4096, refs.clone())) as Box<dyn RefSource>);
    let r = run(&open, &[PolicyKind::Lru], &[1]);
    assert_eq!(r[0].faults, 4);
    assert_eq!(r[0].compulsory_faults, 3);
    assert_eq!(r[0].dirty_evictions, 1);
    assert_eq!(r[0].references, 8);
    assert_eq!(r[0].records, 4);
}

#[test]
fn deterministic_and_seeded() {
    let open = pages_source(random_pages(20_000, 500, 9));
    let a = run(&open, &[PolicyKind::Random], &[50, 100]);
    let b = run(&open, &[PolicyKind::Random], &[50, 100]);
    assert_eq!(a, b);
    let cfg = ReplayConfig { policies: vec![PolicyKind::Random], frames: vec![50], seed: 8, repeats: Default::default() };
    let c = replay(&open, &cfg, &mut |_| true).unwrap();
    assert_ne!(a[0].faults, c[0].faults);
}

#[test]
fn bad_configuration() {
    let open = pages_source(vec![1, 2, 3]);
    for frames in [vec![], vec![0], vec![5, 0]] {
        let cfg = ReplayConfig { policies: vec![PolicyKind::Lru], frames, seed: 0, repeats: Default::default() };
        assert!(matches!(replay(&open, &cfg, &mut |_| true), Err(Error::Invalid { .. })));
    }
    assert!(PolicyKind::from_name("nosuch").unwrap_err().to_string().contains("nosuch"));
    assert_eq!(PolicyKind::from_name("LRU").unwrap(), PolicyKind::Lru);
}

#[test]
fn policy_parameters_read_back_and_bad_ones_say_what_is_expected() {
    for p in PolicyKind::ALL {
        assert_eq!(PolicyKind::from_name(&p.label()).unwrap(), p, "{}", p.label());
    }
    assert_eq!(PolicyKind::from_name(" Last-Static:-5 ").unwrap(), PolicyKind::LastStatic { k: -5 });
    assert_eq!(PolicyKind::from_name("last-dynamic:800").unwrap(), PolicyKind::LastDynamic { threshold: 800, rule: LastDynamicRule::Paper });
    for (text, rule) in [("last-dynamic:60,censored", LastDynamicRule::Censored), ("Last-Dynamic:60, Ended-Fails", LastDynamicRule::EndedFails), ("last-dynamic:60,paper", LastDynamicRule::Paper)] {
        let kind = PolicyKind::from_name(text).unwrap();
        assert_eq!(kind, PolicyKind::LastDynamic { threshold: 60, rule }, "{text}");
        assert_eq!(PolicyKind::from_name(&kind.label()).unwrap(), kind);
    }
    assert_eq!(PolicyKind::LastDynamic { threshold: 60, rule: LastDynamicRule::Censored }.label(), "last-dynamic:60,censored");
    assert_eq!(PolicyKind::LastDynamic { threshold: 60, rule: LastDynamicRule::Paper }.label(), "last-dynamic:60");
    assert_eq!(PolicyKind::from_name("dp-approx:0.25").unwrap(), PolicyKind::DpApprox { a: 0.25 });
    assert_eq!(PolicyKind::from_name("ws:500").unwrap(), PolicyKind::WorkingSet { tau: 500 });
    for (bad, says) in [
        ("dp-approx:0", "0 < a <= 1"),
        ("dp-approx:x", "0 < a <= 1"),
        ("ws:0", "window of 1 or more"),
        ("pff:-3", "interval of 1 or more"),
        ("last-static:1.5", "whole number"),
        ("last-dynamic:-1", "threshold"),
        ("last-dynamic:60,nosuch", "ended-fails"),
        ("last-dynamic:censored", "threshold"),
        ("lru:3", "takes no parameter"),
    ] {
        let e = PolicyKind::from_name(bad).unwrap_err().to_string();
        assert!(e.contains(says) && e.contains(bad) && !e.contains('\n'), "{bad}: {e}");
    }
}

#[test]
fn variable_size_policies_run_once_and_report_their_memory() {
    let open = pages_source(random_pages(20_000, 300, 4));
    let policies = [PolicyKind::Lru, PolicyKind::WorkingSet { tau: 200 }, PolicyKind::LastStatic { k: 5 }];
    let r = run(&open, &policies, &[10, 100]);
    let labels: Vec<(&str, u64)> = r.iter().map(|x| (x.policy.as_str(), x.frames)).collect();
    assert_eq!(labels, [("lru", 10), ("lru", 100), ("ws:200", 0), ("last-static:5", 10), ("last-static:5", 100)]);
    // a full pool holds its frames except while filling
    assert!(r[0].mean_resident > 9.9 && r[0].mean_resident <= 10.0);
    assert!(r[2].mean_resident > 1.0);
    // predictive policies report their counts
    let counts: Vec<&str> = r[3].counters.iter().map(|(k, _)| k.as_str()).collect();
    assert!(counts.contains(&"predictions") && counts.contains(&"dead_list_evictions"));
    assert!(r[0].counters.is_empty());
}

fn rec(page: u64, kind: AccessKind) -> Reference {
    Reference { pid: 0, page, kind, repeat: if kind == AccessKind::Free { 0 } else { 1 }, gap: 0 }
}

#[test]
fn a_freed_page_leaves_memory_and_its_next_touch_is_compulsory_for_every_policy() {
    use AccessKind::{Free, Read, Write};
    // four pages written, page 2 freed and touched again, a free of a page never
    // touched, page 0 freed while dirty: with room for all, every policy faults on the
    // four first touches and on the touch after the free, and writes nothing back
    let refs = vec![
        rec(0, Write), rec(1, Write), rec(2, Write), rec(3, Read),
        rec(2, Free), rec(2, Read), rec(9, Free), rec(0, Free), rec(1, Read),
    ];
    let open = move || Ok(Box::new(VecSource::new("t", 4096, refs.clone())) as Box<dyn RefSource>);
    for r in run(&open, &PolicyKind::ALL, &[10]) {
        assert_eq!((r.faults, r.compulsory_faults, r.dirty_evictions), (5, 5, 0), "{}", r.policy);
        assert_eq!((r.records, r.references), (9, 6), "{}", r.policy);
    }
    // one frame short: after the free of 0 the pool has room again, so 2's touch takes
    // no victim; without the frees it would have evicted dirty pages
    use AccessKind::Free as F;
    let tight = vec![rec(0, Write), rec(1, Write), rec(2, Write), rec(0, F), rec(3, Read), rec(1, Read), rec(0, Read)];
    let open = move || Ok(Box::new(VecSource::new("t", 4096, tight.clone())) as Box<dyn RefSource>);
    let r = run(&open, &[PolicyKind::Lru], &[3]);
    // 0, 1, 2, 3 first touches, 1 hit, 0 again (compulsory: freed) evicting 2 (dirty)
    assert_eq!((r[0].faults, r[0].compulsory_faults, r[0].dirty_evictions), (5, 5, 1));
}

#[test]
fn a_trace_with_frees_replays_by_the_rule() {
    // the spikes workload gives its regions back; written to a trace and read again, its
    // replay counts what the rule says: LRU equals the one-pass curve (where a free takes
    // the page out of the stack), OPT is below every policy, each first touch and each
    // touch after a free is compulsory
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spikes.plt");
    let params: Vec<(String, String)> =
        [("refs", "60000"), ("base_pages", "40"), ("spike_pages", "120"), ("free_spikes", "true")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let mut w = crate::workload::open_workload("spikes", &params, 4096, 3).unwrap();
    crate::trace::convert(w.as_mut(), &path, crate::trace::TraceFormat::Pagelab, false, &mut |_| true).unwrap();
    let open = || crate::trace::open_trace(&path, None, None);
    let curve = mrc(open().unwrap().as_mut(), &mut |_| true).unwrap();
    // 40 + 120 + 128 pages; the spikes' pages are never touched after their free
    assert_eq!((curve.distinct_pages, curve.compulsory_faults), (288, 288));
    let frames = [20u64, 60, 100, 170, 300];
    let r = run(&open, &PolicyKind::ALL, &frames);
    for &f in &frames {
        let opt = faults(&r, "opt", f);
        for x in r.iter().filter(|x| x.frames == f) {
            assert!(opt <= x.faults, "{} at {f}", x.policy);
            assert_eq!(x.compulsory_faults, 288, "{} at {f}", x.policy);
        }
        assert_eq!(faults(&r, "lru", f), curve.faults_at(f), "lru at {f}");
    }
    // the base set and one spike fit in 170 frames: only compulsory faults, and nothing
    // is written back, since the first spike's pages are gone when the second comes;
    // without the frees LRU evicts them (the oldest) for the second spike, dirty
    let lru170 = r.iter().find(|x| x.policy == "lru" && x.frames == 170).unwrap();
    assert_eq!((lru170.faults, lru170.dirty_evictions), (288, 0));
    let kept: Vec<(String, String)> = params.iter().filter(|(k, _)| k != "free_spikes").cloned().collect();
    let open_kept = move || crate::workload::open_workload("spikes", &kept, 4096, 3);
    let k = &run(&open_kept, &[PolicyKind::Lru], &[170])[0];
    assert_eq!(k.faults, 288);
    assert!(k.dirty_evictions >= 118, "{}", k.dirty_evictions);
    // the fault parameters replay the same way
    let fp = crate::analysis::fault_parameters(&open, PolicyKind::Lru, 100, 7, &mut |_| true).unwrap();
    assert_eq!((fp.faults, fp.compulsory_faults), (faults(&r, "lru", 100), 288));
    let fp = crate::analysis::fault_parameters(&open, PolicyKind::Opt, 100, 7, &mut |_| true).unwrap();
    assert_eq!(fp.faults, faults(&r, "opt", 100));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// With free records anywhere: OPT still faults no more than any fixed-size
        /// policy, LRU still equals the curve, and every policy's compulsory faults are
        /// the first touches plus the touches after a free.
        #[test]
        fn invariants_with_frees(pages in prop::collection::vec(0u64..30, 1..500),
                                 kinds in prop::collection::vec(0u8..10, 500),
                                 frames in 1u64..35) {
            let refs: Vec<Reference> = pages.iter().zip(&kinds).map(|(&page, &k)| match k {
                0 => rec(page, AccessKind::Free),
                1..=3 => rec(page, AccessKind::Write),
                _ => rec(page, AccessKind::Read),
            }).collect();
            let mut live = std::collections::HashSet::new();
            let mut compulsory = 0u64;
            for x in &refs {
                if x.kind == AccessKind::Free {
                    live.remove(&x.page);
                } else if live.insert(x.page) {
                    compulsory += 1;
                }
            }
            let open = move || Ok(Box::new(VecSource::new("p", 4096, refs.clone())) as Box<dyn RefSource>);
            let r = run(&open, &PolicyKind::ALL, &[frames]);
            let curve = mrc(open().unwrap().as_mut(), &mut |_| true).unwrap();
            let opt = faults(&r, "opt", frames);
            for x in &r {
                prop_assert!(x.frames == 0 || opt <= x.faults, "{}: {} < opt {}", x.policy, x.faults, opt);
                prop_assert_eq!(x.compulsory_faults, compulsory);
                prop_assert!(x.dirty_evictions <= x.faults);
            }
            prop_assert_eq!(faults(&r, "lru", frames), curve.faults_at(frames));
            prop_assert_eq!(curve.compulsory_faults, compulsory);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// On any stream and any size: OPT faults no more than any policy, LRU replay
        /// equals the one-pass stack-distance curve, every policy's compulsory faults
        /// equal the distinct pages, and write-backs never exceed faults.
        #[test]
        fn invariants(pages in prop::collection::vec(0u64..40, 1..600),
                      writes in prop::collection::vec(any::<bool>(), 600),
                      frames in 1u64..45) {
            let refs: Vec<Reference> = pages.iter().zip(&writes).map(|(&page, &w)| Reference {
                pid: 0, page, kind: if w { AccessKind::Write } else { AccessKind::Read }, repeat: 1, gap: 0,
            }).collect();
            let open = move || Ok(Box::new(VecSource::new("p", 4096, refs.clone())) as Box<dyn RefSource>);
            let r = run(&open, &PolicyKind::ALL, &[frames]);
            let curve = mrc(open().unwrap().as_mut(), &mut |_| true).unwrap();
            let opt = faults(&r, "opt", frames);
            let distinct = pages.iter().collect::<std::collections::HashSet<_>>().len() as u64;
            for x in &r {
                // variable-size policies (frames 0) may use more memory than OPT has
                prop_assert!(x.frames == 0 || opt <= x.faults);
                prop_assert_eq!(x.compulsory_faults, distinct);
                prop_assert!(x.dirty_evictions <= x.faults);
            }
            prop_assert_eq!(faults(&r, "lru", frames), curve.faults_at(frames));
        }
    }
}

/// LRU and OPT at many sizes come from their one-pass curves: every field of every
/// result equals the replay size by size (mean resident set included), on random
/// streams with repeats, a loop and a workload, mixed with other policies (a
/// variable-size one among them) and repeated names, in the order asked for.
#[test]
fn the_one_pass_curves_give_the_results_of_replays_size_by_size() {
    let loop_pages: Vec<u64> = (0..12).flat_map(|_| 0..=40u64).collect();
    let repeats: Vec<Reference> = random_pages(30_000, 500, 3)
        .into_iter()
        .enumerate()
        .map(|(i, p)| Reference { pid: 0, page: p, kind: AccessKind::Read, repeat: 1 + (i % 4) as u32, gap: 0 })
        .collect();
    let sources: Vec<Box<dyn Fn() -> Result<Box<dyn RefSource>>>> = vec![
        Box::new(pages_source(random_pages(50_000, 3_000, 1))),
        Box::new(pages_source(loop_pages)),
        Box::new(move || Ok(Box::new(VecSource::new("r", 4096, repeats.clone())) as Box<dyn RefSource>)),
        Box::new(|| crate::workload::open_workload("lu", &[("n".to_string(), "40".to_string())], 4096, 1)),
    ];
    let policies = [PolicyKind::Fifo, PolicyKind::Lru, PolicyKind::WorkingSet { tau: 500 }, PolicyKind::Opt, PolicyKind::Lru];
    for (i, open) in sources.iter().enumerate() {
        let many: Vec<u64> = (1..=30).map(|i| i * i * 5).collect();
        for frames in [&[1u64, 2, 3][..], &[5, 40, 41, 300, 2_999, 5_000][..], &many[..]] {
            assert!(frames.len() >= CURVE_MIN_SIZES);
            let cfg = ReplayConfig { policies: policies.to_vec(), frames: frames.to_vec(), seed: 3, repeats: Default::default() };
            let fast = replay(open.as_ref(), &cfg, &mut |_| true).unwrap();
            let each = replay_each(open.as_ref(), &cfg, &mut |_| true).unwrap();
            assert_eq!(fast, each, "source {i}, frames {frames:?}");
        }
    }
}

/// A stream with writes (or frees) is replayed size by size: the curves cannot give
/// the write-backs.
#[test]
fn a_stream_with_writes_is_replayed_size_by_size() {
    let refs: Vec<Reference> = random_pages(5_000, 200, 9)
        .into_iter()
        .enumerate()
        .map(|(i, p)| rec(p, if i % 3 == 0 { AccessKind::Write } else { AccessKind::Read }))
        .collect();
    let open = move || Ok(Box::new(VecSource::new("w", 4096, refs.clone())) as Box<dyn RefSource>);
    let cfg = ReplayConfig { policies: vec![PolicyKind::Lru, PolicyKind::Opt], frames: vec![10, 20, 40, 80], seed: 0, repeats: Default::default() };
    let fast = replay(&open, &cfg, &mut |_| true).unwrap();
    assert_eq!(fast, replay_each(&open, &cfg, &mut |_| true).unwrap());
    assert!(fast.iter().all(|r| r.dirty_evictions > 0));
}

/// What a policy sees of a record's repeats. Folded (the default), the replay equals a
/// driver playing each record once; as hits, it equals a driver playing every reference
/// (each repeat a hit, as libCacheSim and the authors' programs read a trace), for
/// every fixed-size policy and preset. The presets named after a reference program see
/// the hits in either mode. Policies the driver cannot play alone are left out: OPT (its
/// next uses), SEQ (virtual pages), Working Set and PFF (variable size).
#[test]
fn repeats_fold_into_one_reference_or_show_as_hits() {
    use crate::policy::testing::drive;
    use crate::policy::{ClockProParams, LirsParams};
    let records: Vec<(u64, u32)> = random_pages(4_000, 120, 21).into_iter().enumerate().map(|(i, p)| (p, 1 + (i as u32 * 7 % 5) / 3)).collect();
    let refs: Vec<Reference> = records.iter().map(|&(page, repeat)| Reference { pid: 0, page, kind: AccessKind::Read, repeat, gap: 0 }).collect();
    // the source folds equal neighbours too: the driver plays what it reads
    let open = move || Ok(Box::new(VecSource::new("r", 4096, refs.clone())) as Box<dyn RefSource>);
    let (mut folded, mut expanded): (Vec<PageId>, Vec<PageId>) = (Vec::new(), Vec::new());
    let mut src = open().unwrap();
    let mut batch = crate::trace::RefBatch::default();
    while src.next_batch(&mut batch).unwrap() > 0 {
        for (&id, &r) in batch.id.iter().zip(&batch.repeat) {
            folded.push(id);
            expanded.extend(std::iter::repeat_n(id, r as usize));
        }
    }
    assert!(expanded.len() > folded.len() + 1_000, "the stream has repeats");
    let mut kinds: Vec<PolicyKind> = PolicyKind::ALL
        .iter()
        .copied()
        .filter(|p| !p.variable_size() && !p.needs_future() && !p.needs_vpages())
        .collect();
    kinds.extend([
        PolicyKind::Clock { referenced: false },
        PolicyKind::Arc { fractional_p: true },
        PolicyKind::Lirs(LirsParams::AUTHORS),
        PolicyKind::ClockPro(ClockProParams::AUTHORS),
    ]);
    let mut differ = Vec::new();
    for &kind in &kinds {
        for frames in [3u32, 17, 60] {
            let play = |stream: &[PageId]| crate::with_policy!(kind, frames, 7, None, |p| { let mut p = p; drive(&mut p, frames as usize, stream, |_, _, _| {}).0 });
            for repeats in [Repeats::Fold, Repeats::Hits] {
                let cfg = ReplayConfig { policies: vec![kind], frames: vec![frames as u64], seed: 7, repeats };
                let got = replay(&open, &cfg, &mut |_| true).unwrap()[0].faults;
                let sees = kind.repeats(repeats);
                let want = play(if sees == Repeats::Hits { &expanded } else { &folded });
                assert_eq!(got, want, "{} at {frames} frames, repeats {}", kind.label(), repeats.name());
            }
            if play(&expanded) != play(&folded) {
                differ.push(kind.label());
            }
        }
    }
    // the switch matters where the papers' and programs' readings differ
    for name in ["clock:libcachesim", "arc", "arc:libcachesim", "lfu", "lirs", "car", "clock-pro", "lirs:authors"] {
        assert!(differ.iter().any(|d| d == name), "{name}: hits and folded give the same faults ({differ:?})");
    }
    for name in ["lru", "fifo", "clock", "random", "mru"] {
        assert!(!differ.iter().any(|d| d == name), "{name}: a repeat changed its faults");
    }
}

/// One OPT simulation on an oracleGeneral file reads the file once, its future told by
/// the file's next-access times (from 0 as pagelab writes them, or from 1 as
/// libCacheSim's traceConv does), and gives every count of the pre-pass on the same
/// trace as CSV, with the policies beside it too. A file with one wrong time is read a
/// second time, with the pre-pass, and gives them as well.
#[test]
fn opt_told_by_an_oracle_file_gives_the_pre_pass_results() {
    use crate::trace::{convert, open_trace, TraceFormat};
    use std::cell::Cell;
    let dir = tempfile::tempdir().unwrap();
    let refs: Vec<Reference> = random_pages(30_000, 700, 9)
        .into_iter()
        .enumerate()
        .map(|(i, page)| Reference { pid: 0, page, kind: AccessKind::Read, repeat: 1 + (i % 5 == 0) as u32 * 2, gap: 0 })
        .collect();
    let (oracle, csv) = (dir.path().join("t.oracleGeneral"), dir.path().join("t.csv"));
    for (path, format) in [(&oracle, TraceFormat::Oracle), (&csv, TraceFormat::Csv)] {
        let mut src = VecSource::new("r", 4096, refs.clone());
        convert(&mut src, path, format, false, &mut |_| true).unwrap();
    }
    let bytes = std::fs::read(&oracle).unwrap();
    let time_at = |b: &[u8], i: usize| i64::from_le_bytes(b[i * 24 + 16..i * 24 + 24].try_into().unwrap());
    let set_time = |b: &mut Vec<u8>, i: usize, t: i64| b[i * 24 + 16..i * 24 + 24].copy_from_slice(&t.to_le_bytes());
    let from_1 = dir.path().join("from1.oracleGeneral");
    let mut b = bytes.clone();
    for i in 0..b.len() / 24 {
        let t = time_at(&b, i);
        if t != -1 {
            set_time(&mut b, i, t + 1);
        }
    }
    std::fs::write(&from_1, &b).unwrap();
    let wrong = dir.path().join("wrong.oracleGeneral");
    let mut b = bytes.clone();
    // the last reference of a record (the times inside a record's repeats are not read)
    let page_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i * 24 + 4..i * 24 + 12].try_into().unwrap());
    let late = (20_000..).find(|&i| time_at(&b, i) != -1 && page_at(&b, i + 1) != page_at(&b, i)).unwrap();
    let t = time_at(&b, late);
    set_time(&mut b, late, t + 1);
    std::fs::write(&wrong, &b).unwrap();

    let opens = Cell::new(0);
    let opening = |path: &std::path::Path| {
        let path = path.to_path_buf();
        let opens = &opens;
        move || {
            opens.set(opens.get() + 1);
            open_trace(&path, None, None)
        }
    };
    for (file, reads) in [(&oracle, 1), (&from_1, 1), (&wrong, 2)] {
        for policies in [vec![PolicyKind::Opt], vec![PolicyKind::Lru, PolicyKind::Opt, PolicyKind::Fifo]] {
            for frames in [1u64, 40, 300, 699] {
                for repeats in [Repeats::Fold, Repeats::Hits] {
                    let cfg = ReplayConfig { policies: policies.clone(), frames: vec![frames], seed: 7, repeats };
                    let want = replay(&opening(&csv), &cfg, &mut |_| true).unwrap();
                    opens.set(0);
                    let got = replay(&opening(file), &cfg, &mut |_| true).unwrap();
                    let what = format!("{} at {frames} frames, {policies:?}", file.display());
                    assert_eq!(opens.get(), reads, "{what}");
                    assert_eq!(got, want, "{what}");
                }
            }
        }
    }
    // several OPT sizes share the pre-pass: the file is read once, for it
    let cfg = ReplayConfig { policies: vec![PolicyKind::Opt], frames: vec![40, 300], seed: 7, repeats: Repeats::Fold };
    let want = replay(&opening(&csv), &cfg, &mut |_| true).unwrap();
    opens.set(0);
    assert_eq!(replay(&opening(&oracle), &cfg, &mut |_| true).unwrap(), want);
    assert_eq!(opens.get(), 1);
}
