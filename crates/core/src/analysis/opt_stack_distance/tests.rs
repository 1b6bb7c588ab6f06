use super::*;
use crate::policy::PolicyKind;
use crate::replay::{replay, ReplayConfig};
use crate::trace::{AccessKind, Reference, VecSource};
use rand::{Rng, SeedableRng};

/// OPT stack distances by Mattson's method: the stack ordered by priority (next use,
/// from a pre-pass), each reference moving the page to the top and the pages of later
/// next use down ("one pass of insertion sort"). O(n) per reference.
fn mattson(ids: &[PageId]) -> Vec<u32> {
    let mut next = vec![u64::MAX; ids.len()];
    let mut seen: std::collections::HashMap<PageId, usize> = Default::default();
    for (t, &p) in ids.iter().enumerate().rev() {
        next[t] = seen.get(&p).map_or(u64::MAX, |&u| u as u64);
        seen.insert(p, t);
    }
    let mut stack: Vec<(PageId, u64)> = Vec::new();
    let mut out = Vec::new();
    for (t, &p) in ids.iter().enumerate() {
        let pos = stack.iter().position(|&(q, _)| q == p);
        let depth = match pos {
            Some(i) => {
                stack.remove(i);
                i
            }
            None => stack.len(),
        };
        out.push(if pos.is_some() { depth as u32 + 1 } else { 0 });
        stack.insert(0, (p, next[t]));
        for i in 1..depth.min(stack.len() - 1) + 1 {
            if i + 1 < stack.len() && stack[i].1 > stack[i + 1].1 && i < depth {
                stack.swap(i, i + 1);
            }
        }
    }
    out
}

fn folded(pages: impl IntoIterator<Item = u32>) -> Vec<PageId> {
    let mut out: Vec<PageId> = Vec::new();
    for p in pages {
        if out.last() != Some(&p) {
            out.push(p);
        }
    }
    out
}

#[test]
fn distances_match_mattsons_priority_stack() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    for (pages, len) in [(3u32, 200usize), (7, 400), (40, 3000), (300, 20_000)] {
        let raw: Vec<u32> = (0..len).map(|_| if rng.gen_bool(0.5) { rng.gen_range(0..pages / 3 + 1) } else { rng.gen_range(0..pages) }).collect();
        let ids: Vec<PageId> = {
            let mut d = crate::trace::Densifier::new();
            folded(raw).into_iter().map(|p| d.id(0, p as u64)).collect()
        };
        let mut sd = OptStackDistances::new();
        let got: Vec<u32> = ids.iter().map(|&p| sd.reference(p, 1)).collect();
        assert_eq!(got, mattson(&ids), "pages {pages}");
    }
}

/// MIN replay at every size 1..=pages of `refs`.
fn replayed(refs: &[Reference]) -> Vec<u64> {
    let pages = {
        let mut s: Vec<u64> = refs.iter().map(|r| r.page).collect();
        s.sort_unstable();
        s.dedup();
        s.len() as u64
    };
    let cfg = ReplayConfig { policies: vec![PolicyKind::Opt], frames: (1..=pages + 2).collect(), seed: 0, repeats: Default::default() };
    let open = || Ok(Box::new(VecSource::new("t", 4096, refs.to_vec())) as Box<dyn RefSource>);
    replay(&open, &cfg, &mut |_| true).unwrap().iter().map(|r| r.faults).collect()
}

fn curve(refs: &[Reference]) -> LruFaultCurve {
    opt_mrc(&mut VecSource::new("t", 4096, refs.to_vec()), &mut |_| true).unwrap()
}

fn read(page: u64, repeat: u32) -> Reference {
    Reference { pid: 0, page, kind: AccessKind::Read, repeat, gap: 0 }
}

/// The curve equals MIN replay at every size, on random streams (with repeats), long
/// enough to renumber the slots several times.
#[test]
fn the_curve_equals_min_replay_at_every_size() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    for (pages, len) in [(1u64, 10usize), (2, 50), (5, 300), (30, 2_000), (200, 10_000), (60, 120_000)] {
        let refs: Vec<Reference> = (0..len)
            .map(|_| read(if rng.gen_bool(0.6) { rng.gen_range(0..pages / 4 + 1) } else { rng.gen_range(0..pages) }, if rng.gen_bool(0.1) { 3 } else { 1 }))
            .collect();
        let c = curve(&refs);
        let want = replayed(&refs);
        for (s, &f) in want.iter().enumerate() {
            assert_eq!(c.faults_at(s as u64 + 1), f, "pages {pages}, size {}", s + 1);
        }
    }
}

/// With frees: a freed page's entry stays as a page never used again, its next touch is
/// a first reference (compulsory at every size), as in replay.
#[test]
fn the_curve_equals_min_replay_with_frees() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
    for (pages, len) in [(4u64, 300usize), (20, 3_000), (100, 20_000)] {
        let refs: Vec<Reference> = (0..len)
            .map(|_| {
                let page = rng.gen_range(0..pages);
                if rng.gen_bool(0.05) {
                    Reference { pid: 0, page, kind: AccessKind::Free, repeat: 0, gap: 0 }
                } else {
                    read(page, 1)
                }
            })
            .collect();
        let c = curve(&refs);
        let want = replayed(&refs);
        for (s, &f) in want.iter().enumerate() {
            assert_eq!(c.faults_at(s as u64 + 1), f, "pages {pages}, size {}", s + 1);
        }
    }
}

/// A loop of n + 1 pages on n frames: MIN faults once per n references after the first
/// pass (it keeps n - 1 pages and cycles the last frame); LRU faults on every one.
#[test]
fn a_loop() {
    let n = 50u64;
    let refs: Vec<Reference> = (0..20).flat_map(|_| (0..=n).map(|p| read(p, 1))).collect();
    let c = curve(&refs);
    assert_eq!(c.faults_at(n + 1), n + 1);
    let want = replayed(&refs);
    assert_eq!(c.faults_at(n), want[n as usize - 1]);
    assert!(c.faults_at(n) < (n + 1) + 19 * 2);
}

/// Slots run out (and are renumbered) both on a first reference and on a re-reference:
/// 40,000 new pages take 80,000 slots, more than the first 65,536; then a random stream
/// over them renumbers again. The curve equals MIN replay at sizes across the range.
#[test]
fn renumbering_on_first_and_later_references() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
    let pages = 40_000u64;
    let refs: Vec<Reference> = (0..pages).map(|p| read(p, 1)).chain((0..60_000).map(|_| read(rng.gen_range(0..pages / 8), 1))).collect();
    let c = curve(&refs);
    let sizes = [1u64, 2, 100, 3_000, 4_999, 5_000, 5_001, 39_999, 40_000];
    let cfg = ReplayConfig { policies: vec![PolicyKind::Opt], frames: sizes.to_vec(), seed: 0, repeats: Default::default() };
    let open = || Ok(Box::new(VecSource::new("t", 4096, refs.clone())) as Box<dyn RefSource>);
    let want: Vec<u64> = replay(&open, &cfg, &mut |_| true).unwrap().iter().map(|r| r.faults).collect();
    let got: Vec<u64> = sizes.iter().map(|&s| c.faults_at(s)).collect();
    assert_eq!(got, want);
}

/// The run starts kept are those of their definition (size 1, and each size whose marker
/// is older than the marker of the size below it), with their markers' pairs, after every
/// reference and free of random streams long enough to renumber the pairs twice.
#[test]
fn the_run_starts_are_kept_exactly() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(13);
    for (pages, len) in [(3u32, 500usize), (40, 5_000), (500, 70_000)] {
        let mut sd = OptStackDistances::new();
        for step in 0..len {
            let page = if rng.gen_bool(0.5) { rng.gen_range(0..pages / 3 + 1) } else { rng.gen_range(0..pages) };
            if rng.gen_bool(0.03) {
                sd.free(page);
            } else {
                sd.reference(page, 1);
            }
            let want: Vec<u32> = (1..=sd.sizes).filter(|&s| s == 1 || sd.marker[s as usize] < sd.marker[s as usize - 1]).collect();
            assert_eq!(sd.start_size, want, "pages {pages}, step {step}");
            let pairs: Vec<u32> = want.iter().map(|&s| sd.marker[s as usize]).collect();
            assert_eq!(sd.start_pair, pairs, "pages {pages}, step {step}");
        }
    }
}

proptest::proptest! {
    /// The vector compares are unsigned compares, whatever the top bit of either side.
    #[test]
    fn below_mask_is_the_compares(q in proptest::array::uniform16(proptest::prop_oneof![0u32..64, proptest::num::u32::ANY, proptest::strategy::Just(u32::MAX), proptest::strategy::Just(1 << 31)]), bound in proptest::prop_oneof![0u32..64, proptest::num::u32::ANY]) {
        let want = q.iter().enumerate().fold(0u32, |m, (j, &x)| m | u32::from(x < bound) << j);
        proptest::prop_assert_eq!(super::below_mask(&q, bound), want);
    }
}

/// `first_slot_reaching` slot by slot: R at each slot from the word's top down, and the
/// first at or above `lo` at -1 or less.
fn first_slot_reaching_slot_by_slot(x: u64, lo: u32, right: i32) -> Option<u32> {
    let mut r = [0i32; 65];
    r[64] = right;
    for i in (0..64).rev() {
        let weight = if (x >> i) & 1 == 0 { 0 } else if i % 2 == 0 { 1 } else { -1 };
        r[i] = r[i + 1] + weight;
    }
    (lo..64).find(|&i| r[i as usize] <= -1)
}

proptest::proptest! {
    /// The byte masks and the first-slot table give the slot the slot-by-slot walk does,
    /// for every start and every R above the word (the bounds' clamps included).
    #[test]
    fn the_first_slot_reaching_is_the_walks(a in proptest::num::u64::ANY, b in proptest::num::u64::ANY, form in 0u8..4, lo in 0u32..64, right in -12i32..40) {
        // sparse, even and dense words, and words of the bytes at the ends of the tables
        // (all markers, all live slots, empty, full)
        let extremes = (0..8).fold(0u64, |x, k| x | [0x55u64, 0xAA, 0x00, 0xFF, 0x15, 0xA8, 0x54, 0x2A][(a >> (8 * k)) as usize & 7] << (8 * k));
        let x = [a & b, a, a | b, extremes][form as usize];
        proptest::prop_assert_eq!(super::first_slot_reaching(x, lo, right), first_slot_reaching_slot_by_slot(x, lo, right));
    }
}

/// The pass down a leaf's path in SSE2 lanes gives what the pass a level at a time gives,
/// at every leaf, for trees of depths that are and are not multiples of four.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_path_in_lanes_is_the_path_a_level_at_a_time() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(17);
    let mut depths = Vec::new();
    for (pages, refs) in [(500u32, 20_000usize), (30_000, 90_000), (40_000, 200_000), (100_000, 400_000)] {
        let mut sd = OptStackDistances::new();
        for _ in 0..refs {
            let p = if rng.gen_bool(0.5) { rng.gen_range(0..pages / 10) } else { rng.gen_range(0..pages) };
            sd.reference(p, 1);
        }
        let mut found = 0;
        for w in 0..sd.words {
            let leaf = sd.words + w;
            let got = sd.path_sse2(leaf);
            assert_eq!(got, sd.path_scalar(leaf), "leaf {leaf} of {} words", sd.words);
            found += usize::from(got.1 != 0);
        }
        assert!(found > sd.words / 4, "most leaves have a sibling that reaches -1: {found} of {}", sd.words);
        depths.push(sd.words.trailing_zeros());
    }
    assert!(depths.iter().any(|d| d % 4 == 0) && depths.iter().any(|d| d % 4 != 0), "depths {depths:?}");
}
