//! Tests of the workload generators through the public API (`list`, `open_workload`).

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{list, open_workload};
use crate::trace::{AccessKind, PageId, RefBatch, RefSource, Reference};
use crate::Error;

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn open(name: &str, params: &[(&str, &str)], page_size: u64, seed: u64) -> Box<dyn RefSource> {
    open_workload(name, &kv(params), page_size, seed).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn open_err(name: &str, params: &[(&str, &str)], page_size: u64) -> String {
    match open_workload(name, &kv(params), page_size, 1) {
        Ok(_) => panic!("{name} {params:?} page size {page_size}: expected an error"),
        Err(e @ Error::Invalid { .. }) => e.to_string(),
        Err(e) => panic!("expected Error::Invalid, got {e:?}"),
    }
}

/// A whole stream, with the invariants every source must keep checked on the way.
struct Stream {
    ids: Vec<PageId>,
    refs: Vec<Reference>,
    distinct: u32,
}

impl Stream {
    /// The stream after the program's initialisation (the writes before the first read).
    fn without_initialization(mut self) -> Stream {
        let first_read = self.refs.iter().position(|r| r.kind == AccessKind::Read).unwrap_or(0);
        self.refs.drain(..first_read);
        self
    }
    fn references(&self) -> u64 {
        self.refs.iter().map(|r| r.repeat as u64).sum()
    }
    fn pages(&self) -> Vec<u64> {
        self.refs.iter().map(|r| r.page).collect()
    }
    fn count(&self, kind: AccessKind) -> u64 {
        self.refs.iter().filter(|r| r.kind == kind).map(|r| r.repeat as u64).sum()
    }
}

fn read_all(mut src: Box<dyn RefSource>) -> Stream {
    let meta = src.meta().clone();
    assert!(meta.name.starts_with("workload:"), "{}", meta.name);
    assert_eq!(meta.processes.len(), 1);
    assert_eq!(meta.processes[0].0, 0);
    let mut batch = RefBatch::default();
    let mut out = Stream { ids: Vec::new(), refs: Vec::new(), distinct: 0 };
    let mut page_of_id: Vec<u64> = Vec::new();
    let mut id_of_page: HashMap<u64, PageId> = HashMap::new();
    loop {
        let n = src.next_batch(&mut batch).unwrap();
        assert_eq!(n, batch.len());
        if n == 0 {
            break;
        }
        for i in 0..n {
            let r = batch.get(i);
            let id = batch.id[i];
            assert_eq!(r.pid, 0);
            assert_eq!(r.repeat == 0, r.kind == AccessKind::Free, "{}: a free has repeat 0, a reference at least 1", meta.name);
            if let Some(prev) = out.refs.last() {
                assert!(
                    !(prev.pid == r.pid && prev.page == r.page && prev.kind == r.kind && prev.repeat != u32::MAX),
                    "{}: record {} repeats (page {}, {:?}) unfolded",
                    meta.name,
                    out.refs.len(),
                    r.page,
                    r.kind
                );
            }
            // Dense ids in first-touch order, one per page.
            assert!(id as usize <= page_of_id.len(), "{}: id {id} skips ahead of {}", meta.name, page_of_id.len());
            if id as usize == page_of_id.len() {
                assert!(!id_of_page.contains_key(&r.page), "{}: page {} got a second id", meta.name, r.page);
                page_of_id.push(r.page);
                id_of_page.insert(r.page, id);
            }
            assert_eq!(page_of_id[id as usize], r.page, "{}: id {id} names two pages", meta.name);
            out.ids.push(id);
            out.refs.push(r);
        }
        assert_eq!(src.distinct_pages() as usize, page_of_id.len(), "{}: distinct_pages after a batch", meta.name);
    }
    assert_eq!(src.next_batch(&mut batch).unwrap(), 0, "the end stays the end");
    out.distinct = src.distinct_pages();
    if let Some(records) = meta.records {
        assert_eq!(records, out.refs.len() as u64, "{}: meta.records", meta.name);
    }
    out
}

fn run(name: &str, params: &[(&str, &str)], page_size: u64, seed: u64) -> Stream {
    read_all(open(name, params, page_size, seed))
}

/// Small runs of every workload.
const SMALL: &[(&str, &[(&str, &str)], bool)] = &[
    ("lu", &[("n", "20")], true),
    ("sor", &[("n", "20"), ("iterations", "3")], false),
    ("matmul", &[("n", "12")], false),
    ("matmul", &[("n", "12"), ("order", "ikj")], false),
    ("mergesort", &[("n", "500")], true),
    ("bitrev", &[("n", "1024")], false),
    ("jacobi", &[("n", "20"), ("m", "30"), ("iterations", "3")], false),
    ("spmv", &[("rows", "300"), ("nnz_per_row", "4"), ("iterations", "2")], true),
    ("spmv", &[("rows", "200"), ("cols", "500"), ("nnz_per_row", "40")], true),
    ("shrinking-loop", &[("pages", "50"), ("loops", "30")], false),
    ("scan", &[("pages", "20"), ("passes", "3")], false),
    ("uniform", &[("refs", "5000"), ("pages", "100")], true),
    ("zipf", &[("refs", "5000"), ("pages", "1000")], true),
    ("phases", &[("phases", "3"), ("refs_per_phase", "2000"), ("pages", "50")], true),
    ("growing-table", &[("pages", "40"), ("stages", "4"), ("lookups", "500")], true),
    ("spikes", &[("refs", "20000"), ("base_pages", "30"), ("spike_pages", "60")], true),
    ("spikes", &[("refs", "20000"), ("base_pages", "30"), ("spike_pages", "60"), ("free_spikes", "true")], true),
    ("bit-r", &[("n", "4096"), ("block", "4")], false),
    ("bit-r", &[("n", "4096"), ("method", "naive"), ("elem_bytes", "8")], false),
    ("lu", &[("n", "40"), ("schur", "temporary"), ("block", "8")], true),
];

#[test]
fn workload_list_names_every_workload() {
    let names: Vec<&str> = list().iter().map(|w| w.name).collect();
    assert_eq!(
        names,
        [
            "lu",
            "sor",
            "matmul",
            "mergesort",
            "bitrev",
            "bit-r",
            "jacobi",
            "spmv",
            "shrinking-loop",
            "scan",
            "uniform",
            "zipf",
            "phases",
            "growing-table",
            "spikes",
            "npb-lu",
            "npb-sp",
            "npb-cg",
            "npb-is",
            "npb-mg",
            "npb-ft",
            "npb-bt",
            "spec-gzip",
            "spec-mcf",
            "spec-swim",
            "spec-wupwise",
            "spec-apsi"
        ]
    );
    for w in list() {
        assert!(!w.summary.is_empty() && !w.summary.contains('\n'), "{}", w.name);
        assert!(!w.params.is_empty(), "{}", w.name);
        for p in &w.params {
            assert!(!p.default.is_empty() && !p.help.is_empty(), "{}.{}", w.name, p.name);
        }
    }
}

#[test]
fn workload_defaults_open() {
    // Every default parses; read one batch only, then drop mid-stream.
    for w in list() {
        let mut src = open(w.name, &[], 4096, 1);
        let mut batch = RefBatch::default();
        assert!(src.next_batch(&mut batch).unwrap() > 0, "{}", w.name);
        assert_eq!(src.meta().name, format!("workload:{}", w.name));
        assert_eq!(src.meta().processes, vec![(0, w.name.to_string())]);
        assert_eq!(src.meta().page_size, 4096);
    }
}

#[test]
fn workload_small_runs_keep_invariants_and_are_deterministic() {
    for &(name, params, random) in SMALL {
        let a = run(name, params, 512, 7);
        let b = run(name, params, 512, 7);
        assert!(!a.refs.is_empty(), "{name}");
        assert!(a.refs == b.refs, "{name} {params:?}: same seed, different stream");
        assert!(a.ids == b.ids, "{name} {params:?}: same seed, different ids");
        let c = run(name, params, 512, 8);
        if random {
            assert!(a.refs != c.refs, "{name} {params:?}: the seed changes nothing");
        } else {
            assert!(a.refs == c.refs, "{name} {params:?}: not random, yet the seed matters");
        }
    }
}

#[test]
fn workload_batches_are_reused_without_losing_records() {
    // More than one batch, read with a fresh batch each time and with one batch reused.
    let params = [("refs", "300000"), ("pages", "5000")];
    let reused = run("uniform", &params, 4096, 3);
    let mut src = open("uniform", &params, 4096, 3);
    let mut refs = Vec::new();
    loop {
        let mut batch = RefBatch::default();
        if src.next_batch(&mut batch).unwrap() == 0 {
            break;
        }
        refs.extend((0..batch.len()).map(|i| batch.get(i)));
    }
    assert!(refs.len() > crate::trace::BATCH_RECORDS);
    assert_eq!(refs, reused.refs);
    assert_eq!(reused.references(), 300_000);
}

#[test]
fn workload_scan_exact_sequence() {
    let s = run("scan", &[("pages", "5"), ("passes", "3")], 4096, 1);
    assert_eq!(s.refs.len(), 15);
    for (i, r) in s.refs.iter().enumerate() {
        assert_eq!(*r, Reference { pid: 0, page: (i % 5) as u64, kind: AccessKind::Read, repeat: 1, gap: 0 });
        assert_eq!(s.ids[i], (i % 5) as PageId);
    }
    let w = run("scan", &[("pages", "4"), ("passes", "2"), ("write", "true")], 4096, 1);
    assert_eq!(w.refs.len(), 8);
    assert!(w.refs.iter().all(|r| r.kind == AccessKind::Write && r.repeat == 1));
    // A single page folds into one record.
    let one = run("scan", &[("pages", "1"), ("passes", "6")], 4096, 1);
    assert_eq!(one.refs.len(), 1);
    assert_eq!(one.refs[0].repeat, 6);
}

#[test]
fn workload_lu_reads_writes_and_touches_the_whole_matrix() {
    for (n, page_size) in [(20u64, 512u64), (30, 4096), (64, 4096), (7, 64)] {
        let n_s = n.to_string();
        let s = run("lu", &[("n", &n_s)], page_size, 1);
        assert!(s.count(AccessKind::Read) > 0 && s.count(AccessKind::Write) > 0);
        assert_eq!(s.distinct as u64, (n * n * 8).div_ceil(page_size), "lu n={n} page size {page_size}");
        // Elimination alone is sum over k of (n-k-1) * (3 + 3 (n-k-1)) references.
        let elimination: u64 = (0..n).map(|k| (n - k - 1) * (3 + 3 * (n - k - 1))).sum();
        let pivot_scans: u64 = (0..n).map(|k| n - k).sum();
        let swaps = s.references() - elimination - pivot_scans;
        assert_eq!(swaps % (4 * n), 0, "row swaps are 4n references each");
        assert!(swaps > 0, "a random matrix needs some pivoting");
    }
}

#[test]
fn workload_matmul_counts() {
    let n = 12u64;
    for (order, refs) in [("ijk", 2 * n * n * n + n * n), ("ikj", 3 * n * n * n + n * n)] {
        for page_size in [64u64, 512, 4096] {
            let s = run("matmul", &[("n", "12"), ("order", order)], page_size, 1);
            assert_eq!(s.references(), refs, "{order}");
            assert_eq!(s.distinct as u64, 3 * (n * n * 8).div_ceil(page_size), "{order} page size {page_size}");
        }
    }
    let s = run("matmul", &[("n", "4")], 4096, 1);
    // A, B, C are pages 0, 1, 2: ijk order is (A B)^4 then C.
    let pages = s.pages();
    assert_eq!(&pages[..9], &[0, 1, 0, 1, 0, 1, 0, 1, 2]);
}

#[test]
fn workload_stencil_counts() {
    let s = run("sor", &[("n", "20"), ("iterations", "3")], 512, 1);
    assert_eq!(s.references(), 3 * 18 * 18 * 6);
    assert_eq!(s.count(AccessKind::Write), 3 * 18 * 18);
    let j = run("jacobi", &[("n", "20"), ("m", "30"), ("iterations", "3")], 512, 1);
    assert_eq!(j.references(), 3 * 18 * 28 * 5);
    assert_eq!(j.count(AccessKind::Write), 3 * 18 * 28);
    // Two grids of 20*30*8 = 4800 bytes: 10 pages of 512 each.
    assert_eq!(j.distinct, 20);
}

#[test]
fn workload_mergesort_counts() {
    let n = 1000u64;
    let s = run("mergesort", &[("n", "1000")], 512, 3);
    // Each merge of m keys copies them (R a, W aux) and writes them back (W a) after one
    // or two reads of aux each.
    fn merged(len: u64) -> u64 {
        if len < 2 { 0 } else { merged(len / 2) + merged(len - len / 2) + len }
    }
    let m = merged(n);
    assert_eq!(s.count(AccessKind::Write), 2 * m);
    let reads = s.count(AccessKind::Read);
    assert!(reads > 2 * m && reads < 3 * m, "{reads}");
    // keys and aux: 8000 bytes each, 16 pages of 512.
    assert_eq!(s.distinct, 32);
}

#[test]
fn workload_bitrev_swaps_and_rejects_non_powers_of_two() {
    let n = 1024u64;
    let swaps = (0..n).filter(|&i| i < (i.reverse_bits() >> 54)).count() as u64;
    let s = run("bitrev", &[("n", "1024")], 512, 1);
    assert_eq!(s.references(), 4 * swaps);
    assert_eq!(s.count(AccessKind::Write), 2 * swaps);
    let e = open_err("bitrev", &[("n", "1000")], 4096);
    assert!(e.contains("power of two") && e.contains("'n'"), "{e}");
    open_err("bitrev", &[("n", "2")], 4096);
}

#[test]
fn workload_spmv_counts() {
    let (rows, nnz) = (300u64, 4u64);
    let s = run("spmv", &[("rows", "300"), ("nnz_per_row", "4")], 512, 1);
    assert_eq!(s.references(), rows * (3 * nnz + 3));
    assert_eq!(s.count(AccessKind::Write), rows);
    // nnz_per_row = cols: every column in every row.
    let full = run("spmv", &[("rows", "20"), ("cols", "50"), ("nnz_per_row", "50")], 64, 1);
    assert_eq!(full.references(), 20 * (3 * 50 + 3));
    let e = open_err("spmv", &[("rows", "20"), ("cols", "50"), ("nnz_per_row", "51")], 4096);
    assert!(e.contains("nnz_per_row"), "{e}");
}

#[test]
fn workload_shrinking_loop_shrinks() {
    // 10 pages = 5120 elements, one touch per page per loop. SIZE shrinks in elements:
    // 5120 -> 4608 (9 pages) -> 4147 (still 9 touches: j = 4096 < 4147) -> 3732 (8).
    let s = run("shrinking-loop", &[("pages", "10"), ("loops", "35")], 4096, 1);
    assert_eq!(s.refs.len() as u64, 2 * (10 * 10 + 10 * 9 + 10 * 9 + 5 * 8));
    assert_eq!(s.distinct, 10);
    // Read then write of each page, pages in order.
    assert_eq!(s.refs[0].kind, AccessKind::Read);
    assert_eq!(s.refs[1].kind, AccessKind::Write);
    assert_eq!(s.refs[1].page, 0);
    assert_eq!(s.refs[2].page, 1);
    let last_pass: Vec<u64> = s.refs[s.refs.len() - 16..].iter().map(|r| r.page).step_by(2).collect();
    assert_eq!(last_pass, (0..8).collect::<Vec<u64>>());
    // step=1: every element, R and W alternate on the same page (no folding across kinds).
    let e = run("shrinking-loop", &[("pages", "2"), ("loops", "1"), ("step", "1")], 64, 1);
    assert_eq!(e.refs.len(), 2 * 16);
    assert!(e.refs.iter().all(|r| r.repeat == 1));
    // shrink=1: never shrinks; shrink_every=1 with shrink=0.5 halves every loop.
    let h = run("shrinking-loop", &[("pages", "8"), ("loops", "5"), ("shrink_every", "1"), ("shrink", "0.5")], 4096, 1);
    // 4096 elements -> 2048 -> 1024 -> 512 -> 256: 8, 4, 2, 1 and 1 pages touched.
    assert_eq!(h.refs.len() as u64, 2 * (8 + 4 + 2 + 1 + 1));
}

#[test]
fn workload_zipf_is_skewed() {
    let pages = 1000u64;
    let refs = 200_000u64;
    let s = run("zipf", &[("refs", "200000"), ("pages", "1000"), ("write_ratio", "0")], 4096, 5);
    assert_eq!(s.references(), refs);
    assert_eq!(s.count(AccessKind::Write), 0);
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for r in &s.refs {
        *counts.entry(r.page).or_default() += r.repeat as u64;
    }
    let harmonic: f64 = (1..=pages).map(|r| 1.0 / r as f64).sum();
    let mut sorted: Vec<u64> = counts.values().copied().collect();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    for rank in 1..=3u64 {
        let expected = refs as f64 / (rank as f64 * harmonic);
        let got = sorted[rank as usize - 1] as f64;
        assert!((got - expected).abs() < 0.05 * expected, "rank {rank}: {got} vs {expected}");
    }
    // The hottest page is not page 0 (ranks are scattered), for this seed at least.
    let hottest = counts.iter().max_by_key(|(_, c)| **c).unwrap().0;
    assert_ne!(*hottest, 0);
    // Writes follow write_ratio.
    let w = run("zipf", &[("refs", "100000"), ("pages", "1000"), ("write_ratio", "0.3")], 4096, 5);
    let ratio = w.count(AccessKind::Write) as f64 / 100_000.0;
    assert!((ratio - 0.3).abs() < 0.01, "{ratio}");
}

#[test]
fn workload_zipf_large_page_counts_use_rejection_sampling() {
    let pages = 5_000_000u64; // above the alias-table limit
    let refs = 100_000u64;
    let s = run("zipf", &[("refs", "100000"), ("pages", "5000000")], 4096, 5);
    assert_eq!(s.references(), refs);
    assert!(s.refs.iter().all(|r| r.page < pages));
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for r in &s.refs {
        *counts.entry(r.page).or_default() += r.repeat as u64;
    }
    let top = *counts.values().max().unwrap() as f64;
    let harmonic = (pages as f64).ln() + 0.5772156649;
    let expected = refs as f64 / harmonic;
    assert!((top - expected).abs() < 0.1 * expected, "{top} vs {expected}");
}

#[test]
fn workload_uniform_and_phases_stay_in_range() {
    let u = run("uniform", &[("refs", "20000"), ("pages", "100")], 4096, 2);
    assert_eq!(u.references(), 20_000);
    assert_eq!(u.distinct, 100);
    assert!(u.refs.iter().all(|r| r.page < 100));
    // Phases: 3 phases of 40 pages overlapping by 10: sets start at 0, 30, 60.
    let p = run("phases", &[("phases", "3"), ("refs_per_phase", "4000"), ("pages", "40"), ("overlap", "0.25")], 4096, 2);
    assert_eq!(p.references(), 12_000);
    assert_eq!(p.distinct, 100);
    let mut seen = 0u64;
    for r in &p.refs {
        let phase = seen / 4000;
        assert!(r.page >= phase * 30 && r.page < phase * 30 + 40, "phase {phase}: page {}", r.page);
        seen += r.repeat as u64;
    }
    let same = run("phases", &[("phases", "3"), ("refs_per_phase", "4000"), ("pages", "40"), ("overlap", "1")], 4096, 2);
    assert_eq!(same.distinct, 40);
}

#[test]
fn workload_larger_pages_mean_fewer_pages() {
    for &(name, params, _) in SMALL {
        if matches!(name, "scan" | "uniform" | "zipf" | "phases" | "shrinking-loop" | "spikes" | "growing-table") {
            continue; // page-granular workloads: sizes are given in pages
        }
        let small = run(name, params, 64, 1);
        let large = run(name, params, 4096, 1);
        assert!(large.distinct < small.distinct, "{name}: {} vs {}", large.distinct, small.distinct);
        assert_eq!(large.references(), small.references(), "{name}: references do not depend on the page size");
    }
}

#[test]
fn workload_parameter_errors() {
    let e = open_err("nope", &[], 4096);
    assert!(e.starts_with("workload: unknown workload 'nope' (expected one of: lu, sor,"), "{e}");
    let e = open_err("lu", &[("bogus", "1")], 4096);
    assert_eq!(e, "workload lu: unknown parameter 'bogus' (expected: n, schur, block)");
    let e = open_err("sor", &[("bogus", "1")], 4096);
    assert_eq!(e, "workload sor: unknown parameter 'bogus' (expected: n, iterations)");
    let e = open_err("scan", &[("pages", "lots")], 4096);
    assert_eq!(e, "workload scan: parameter 'pages': expected a positive whole number, got 'lots'");
    let e = open_err("scan", &[("pages", "0")], 4096);
    assert!(e.contains("'pages'") && e.contains("positive"), "{e}");
    let e = open_err("lu", &[("n", "1")], 4096);
    assert!(e.contains("'n'") && e.contains("from 2"), "{e}");
    let e = open_err("lu", &[("n", "100000")], 4096);
    assert!(e.contains("'n'"), "{e}");
    let e = open_err("jacobi", &[("m", "2")], 4096);
    assert!(e.contains("'m'"), "{e}");
    let e = open_err("zipf", &[("alpha", "0")], 4096);
    assert!(e.contains("'alpha'") && e.contains("> 0"), "{e}");
    let e = open_err("uniform", &[("write_ratio", "1.5")], 4096);
    assert!(e.contains("'write_ratio'"), "{e}");
    let e = open_err("scan", &[("write", "maybe")], 4096);
    assert!(e.contains("'write'") && e.contains("true or false"), "{e}");
    let e = open_err("matmul", &[("order", "kji")], 4096);
    assert!(e.contains("'order'") && e.contains("ijk, ikj"), "{e}");
    let e = open_err("shrinking-loop", &[("shrink", "1.5")], 4096);
    assert!(e.contains("'shrink'"), "{e}");
    let e = open_err("scan", &[("pages", "3"), ("pages", "4")], 4096);
    assert!(e.contains("twice"), "{e}");
    for bad in [0u64, 1000, 32, 1 << 31] {
        let e = open_err("scan", &[], bad);
        assert!(e.starts_with("page size: "), "{e}");
    }
    // Address space beyond 2^32 pages.
    let e = open_err("scan", &[("pages", "5000000000")], 4096);
    assert!(e.starts_with("workload scan: "), "{e}");
    let e = open_err("matmul", &[("n", "4000000000")], 4096);
    assert!(e.starts_with("workload matmul: "), "{e}");
    // Numbers in other spellings.
    let s = run("scan", &[("pages", "1e1"), ("passes", "2_0")], 4096, 1);
    assert_eq!(s.refs.len(), 200);
}

/// Distinct pages seen before reference position `at` (references, not records).
fn distinct_before(s: &Stream, at: u64) -> usize {
    let mut seen = std::collections::HashSet::new();
    let mut pos = 0u64;
    for r in &s.refs {
        if pos >= at {
            break;
        }
        seen.insert(r.page);
        pos += r.repeat as u64;
    }
    seen.len()
}

#[test]
fn workload_growing_table_grows_in_stairs() {
    // 4096-byte pages, records of 8 elements: 64 records a page. 400 table pages, index
    // auto = 8 pages right after the table.
    let (pages, stages, index) = (400u64, 8u64, 8u64);
    let s = run("growing-table", &[("pages", "400"), ("stages", "8"), ("lookups", "3000")], 4096, 4);
    assert_eq!(s.distinct as u64, pages + index);
    assert!(s.refs.iter().all(|r| r.page < pages + index));
    // Stage k starts with the first write to a table page at or beyond (k-1) * 50: the
    // pages seen before it are the first (k-1) * 50 table pages and the whole index.
    let per_stage = pages / stages;
    let mut pos = 0u64;
    let mut starts = Vec::new();
    let mut next_stage_page = per_stage;
    for r in &s.refs {
        if r.page < pages && r.page >= next_stage_page {
            assert_eq!(r.kind, AccessKind::Write, "a stage begins by appending");
            starts.push(pos);
            next_stage_page += per_stage;
        }
        pos += r.repeat as u64;
    }
    assert_eq!(starts.len() as u64, stages - 1);
    for (k, &at) in starts.iter().enumerate() {
        let seen = distinct_before(&s, at) as u64;
        assert_eq!(seen, (k as u64 + 1) * per_stage + index, "before stage {}", k + 2);
    }
    // Each stage's lookups reach the whole table so far (3000 draws over <= 400 pages).
    assert_eq!(distinct_before(&s, starts[0]) as u64, per_stage + index);
    // Updates: about update_ratio of the lookups write their record (8 elements each).
    let reads = s.count(AccessKind::Read);
    let lookups = stages * 3000;
    assert_eq!(reads, lookups * (2 + 8));
    let writes = s.count(AccessKind::Write);
    let appends = pages * 512 + stages * index * 512;
    let update_writes = (writes - appends) as f64 / (8.0 * lookups as f64);
    assert!((update_writes - 0.2).abs() < 0.02, "{update_writes}");
    // Page size and parameters scale the footprint; update_ratio=0 means no update writes.
    let t = run(
        "growing-table",
        &[("pages", "100"), ("stages", "3"), ("lookups", "200"), ("index_pages", "5"), ("update_ratio", "0")],
        512,
        1,
    );
    assert_eq!(t.distinct, 105);
    assert_eq!(t.count(AccessKind::Write), 100 * 64 + 3 * 5 * 64);
}

#[test]
fn workload_spikes_shape() {
    let refs = 100_000u64;
    let (base, spike, second) = (50u64, 200u64, 214u64); // 200 * 1.07 = 214
    let s = run("spikes", &[("refs", "100000"), ("base_pages", "50"), ("spike_pages", "200")], 4096, 9);
    assert_eq!(s.references(), refs);
    assert_eq!(s.distinct as u64, base + spike + second);
    // First and last reference position of every page.
    let mut span: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut pos = 0u64;
    for r in &s.refs {
        let e = span.entry(r.page).or_insert((pos, pos));
        e.1 = pos + r.repeat as u64 - 1;
        pos += r.repeat as u64;
    }
    let within = |lo: f64, hi: f64, pages: std::ops::Range<u64>| {
        for p in pages {
            let (first, last) = span[&p];
            assert!(first >= (lo * refs as f64) as u64 && last < (hi * refs as f64) as u64, "page {p}: {first}..{last}");
        }
    };
    within(0.30, 0.45, base..base + spike);
    within(0.70, 0.85, base + spike..base + spike + second);
    // The base set is referenced from the start to the end.
    for p in 0..base {
        let (first, last) = span[&p];
        assert!(first < refs / 20 && last > refs - refs / 20, "base page {p}: {first}..{last}");
    }
    // Each spike's first pass writes every page of its region.
    let first_kind: HashMap<u64, AccessKind> =
        s.refs.iter().rev().map(|r| (r.page, r.kind)).collect::<Vec<_>>().into_iter().collect();
    assert!((base..base + spike + second).all(|p| first_kind[&p] == AccessKind::Write));
    // Smaller parameters, other spike positions.
    let t = run(
        "spikes",
        &[("refs", "20000"), ("base_pages", "10"), ("spike_pages", "30"), ("second_spike", "2"), ("first_at", "0.1"), ("second_at", "0.5")],
        4096,
        1,
    );
    assert_eq!(t.references(), 20_000);
    assert_eq!(t.distinct, 10 + 30 + 60);
}

#[test]
fn workload_new_generators_parameter_errors() {
    let e = open_err("growing-table", &[("stages", "0")], 4096);
    assert!(e.starts_with("workload growing-table: parameter 'stages'"), "{e}");
    let e = open_err("growing-table", &[("pages", "1"), ("stages", "1000")], 4096);
    assert!(e.contains("'stages'") && e.contains("at most the number of records (64)"), "{e}");
    let e = open_err("growing-table", &[("update_ratio", "1.2")], 4096);
    assert!(e.contains("'update_ratio'"), "{e}");
    let e = open_err("growing-table", &[("index_pages", "0")], 4096);
    assert!(e.contains("'index_pages'"), "{e}");
    let e = open_err("growing-table", &[("pages", "1"), ("record", "600")], 4096);
    assert!(e.contains("'record'") && e.contains("does not fit"), "{e}");
    let e = open_err("growing-table", &[("record", "5000")], 4096);
    assert!(e.contains("'record'"), "{e}");
    let e = open_err("growing-table", &[("skew", "-1")], 4096);
    assert!(e.starts_with("workload growing-table: parameter 'skew'"), "{e}");
    let e = open_err("growing-table", &[("skew", "steep")], 4096);
    assert!(e.contains("'skew'") && e.contains("steep"), "{e}");
    let e = open_err("spikes", &[("second_spike", "0")], 4096);
    assert!(e.contains("'second_spike'") && e.contains("> 0"), "{e}");
    let e = open_err("spikes", &[("spike_pages", "1"), ("second_spike", "0.1")], 4096);
    assert!(e.contains("'second_spike'") && e.contains("at least one page"), "{e}");
    let e = open_err("spikes", &[("spike_fraction", "0.5")], 4096);
    assert!(e.starts_with("workload spikes: ") && e.contains("overlap"), "{e}");
    let e = open_err("spikes", &[("second_at", "0.9")], 4096);
    assert!(e.contains("ends after the run"), "{e}");
    let e = open_err("spikes", &[("refs", "10000")], 4096);
    assert!(e.contains("spike 1 of 3000 pages") && e.contains("not enough for one pass"), "{e}");
    let e = open_err("spikes", &[("refs", "lots")], 4096);
    assert_eq!(e, "workload spikes: parameter 'refs': expected a positive whole number, got 'lots'");
    let e = open_err("spikes", &[("write_ratio", "-1")], 4096);
    assert!(e.contains("'write_ratio'"), "{e}");
}

/// Runs `f` on another thread and fails if it does not finish in time.
fn within(seconds: u64, what: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(seconds)).unwrap_or_else(|_| panic!("{what}: still running after {seconds} s"));
}

#[test]
fn workload_drop_stops_the_generator() {
    // Long streams: a drop after one batch (or none) must not wait for the end.
    for (name, params) in [
        ("zipf", vec![("refs", "1000000000000"), ("pages", "1000")]),
        ("scan", vec![("pages", "1000"), ("passes", "1000000000")]),
        ("matmul", vec![("n", "100000")]),
        ("lu", vec![("n", "3000")]),
        ("growing-table", vec![("lookups", "1000000000000")]),
        ("spikes", vec![("refs", "1000000000000")]),
    ] {
        let params = kv(&params);
        within(20, name, move || {
            let mut src = open_workload(name, &params, 4096, 1).unwrap();
            let mut batch = RefBatch::default();
            assert!(src.next_batch(&mut batch).unwrap() > 0);
            drop(src); // joins the generator thread
            let src = open_workload(name, &params, 4096, 1).unwrap();
            drop(src);
        });
    }
}

/// Not a test of behaviour: prints reference / record / page counts of every default
/// run and the zipf benchmark throughput. `cargo test --release -p pagelab-core
/// workload_report -- --ignored --nocapture`
#[test]
#[ignore]
fn workload_report() {
    println!("{:<16} {:>12} {:>12} {:>8} {:>8} {:>10}", "workload", "references", "records", "pages", "ms", "M refs/s");
    for w in list() {
        let t = Instant::now();
        let (refs, records, pages) = count(open(w.name, &[], 4096, 1));
        let secs = t.elapsed().as_secs_f64();
        println!("{:<16} {:>12} {:>12} {:>8} {:>8.1} {:>10.1}", w.name, refs, records, pages, secs * 1e3, refs as f64 / secs / 1e6);
    }
    for (name, params) in [
        ("zipf", vec![("refs", "10000000"), ("pages", "750000")]),
        ("uniform", vec![("refs", "10000000"), ("pages", "750000")]),
        ("matmul", vec![("n", "300")]),
        ("scan", vec![("pages", "100000"), ("passes", "100")]),
        ("growing-table", vec![("lookups", "300000")]),
        ("spikes", vec![("refs", "30000000")]),
    ] {
        let t = Instant::now();
        let (refs, records, pages) = count(open(name, &params, 4096, 1));
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{name} {params:?}: {refs} references, {records} records, {pages} pages in {:.3} s: {:.1} M refs/s",
            secs,
            refs as f64 / secs / 1e6
        );
    }
}

fn count(mut src: Box<dyn RefSource>) -> (u64, u64, u32) {
    let mut batch = RefBatch::default();
    let (mut refs, mut records) = (0u64, 0u64);
    while src.next_batch(&mut batch).unwrap() > 0 {
        records += batch.len() as u64;
        refs += batch.repeat.iter().map(|&r| r as u64).sum::<u64>();
    }
    (refs, records, src.distinct_pages())
}

/// The benchmark workload alone (for profiling): `cargo test --release -p pagelab-core
/// workload_bench_zipf -- --ignored --nocapture`; ZIPF_REFS, ZIPF_PAGES and ZIPF_ALPHA
/// override refs=10M, pages=750k, alpha=1.
#[test]
#[ignore]
fn workload_bench_zipf() {
    for _ in 0..3 {
        let t = Instant::now();
        let pages_param = std::env::var("ZIPF_PAGES").unwrap_or("750000".into());
        let pages = pages_param.clone();
        let alpha = std::env::var("ZIPF_ALPHA").unwrap_or("1.0".into());
        let refs_param = std::env::var("ZIPF_REFS").unwrap_or("10000000".into());
        let refs = refs_param.clone();
        let src = open("zipf", &[("refs", &refs), ("pages", &pages), ("alpha", &alpha)], 4096, 1);
        let opened = t.elapsed().as_secs_f64();
        let (refs, records, pages) = count(src);
        let secs = t.elapsed().as_secs_f64();
        println!(
            "zipf refs={refs_param} pages={pages_param} alpha={alpha}: {refs} references, {records} records, {pages} pages in {secs:.3} s \
             (open {opened:.3} s): {:.1} M refs/s",
            refs as f64 / secs / 1e6
        );
    }
}

#[test]
fn workload_growing_table_skew_makes_recent_records_hot() {
    // one stage of 400 table pages: share of table reads in the newest 40 pages
    let share = |skew: &str| {
        let s = run("growing-table", &[("pages", "400"), ("stages", "1"), ("lookups", "20000"), ("skew", skew)], 4096, 2);
        let (mut recent, mut all) = (0u64, 0u64);
        for r in s.refs.iter().filter(|r| r.kind == AccessKind::Read && r.page < 400) {
            all += r.repeat as u64;
            if r.page >= 360 {
                recent += r.repeat as u64;
            }
        }
        recent as f64 / all as f64
    };
    let uniform = share("0");
    assert!((0.07..0.13).contains(&uniform), "{uniform}");
    assert!(share("1.2") > 0.5, "{}", share("1.2"));
}

/// A workload run: name, parameters, and whether the seed matters.
type NpbRun = (&'static str, &'static [(&'static str, &'static str)], bool);

/// Small runs of the NPB-like workloads.
const NPB_SMALL: &[NpbRun] = &[
    ("npb-lu", &[("n", "6"), ("iterations", "2")], false),
    ("npb-sp", &[("n", "6"), ("iterations", "2")], false),
    ("npb-cg", &[("n", "300"), ("nonzeros_per_row", "7"), ("iterations", "2"), ("cg_iterations", "3")], true),
    ("npb-is", &[("n_keys", "5000"), ("max_key", "512"), ("iterations", "2")], true),
    ("npb-mg", &[("n", "8"), ("iterations", "2")], false),
];

#[test]
fn workload_npb_deterministic_and_page_size_independent() {
    for &(name, params, random) in NPB_SMALL {
        let a = run(name, params, 512, 7);
        let b = run(name, params, 512, 7);
        assert!(a.refs.len() > 100, "{name}");
        assert!(a.refs == b.refs && a.ids == b.ids, "{name}: same seed, different stream");
        let c = run(name, params, 512, 8);
        assert_eq!(a.refs != c.refs, random, "{name}: the seed matters iff the workload is random");
        let small = run(name, params, 64, 1);
        let large = run(name, params, 4096, 1);
        assert!(large.distinct < small.distinct, "{name}: {} vs {}", large.distinct, small.distinct);
        assert_eq!(large.references(), small.references(), "{name}: references depend on the page size");
    }
}

/// Pages of an array of `elements` 8-byte elements.
fn npb_pages(elements: u64, page_size: u64) -> u64 {
    (elements * 8).div_ceil(page_size)
}

/// The footprint is every page of every array (arrays are page-aligned and adjacent).
fn assert_footprint(s: &Stream, arrays: &[u64], page_size: u64, what: &str) {
    let expected: u64 = arrays.iter().map(|&e| npb_pages(e, page_size)).sum();
    assert_eq!(s.distinct as u64, expected, "{what}: distinct pages");
    assert_eq!(s.refs.iter().map(|r| r.page).max(), Some(expected - 1), "{what}: highest page");
}

#[test]
fn workload_npb_footprints_and_counts() {
    for (n, it, ps) in [(6u64, 2u64, 64u64), (9, 1, 512), (20, 1, 4096)] {
        let (n_s, it_s) = (n.to_string(), it.to_string());
        let what = format!("n={n} iterations={it} page size {ps}");
        let lu = run("npb-lu", &[("n", &n_s), ("iterations", &it_s)], ps, 1);
        assert_footprint(&lu, &[5 * n * n * n; 7], ps, &format!("npb-lu {what}"));
        let lu_refs = 60 * n * n * n - 30 * n * n + 70 * (n - 1) * n * n + 20 * n * (n - 1) * (n - 1);
        // the initialisation writes every element of the 7 grids once
        let lu_init = 7 * 5 * n * n * n;
        assert_eq!(lu.references(), lu_init + it * lu_refs, "npb-lu {what}");
        assert_eq!(lu.count(AccessKind::Write), lu_init + it * (10 * n * n * n + 10 * (n - 1) * n * n), "npb-lu {what}");
        let sp = run("npb-sp", &[("n", &n_s), ("iterations", &it_s)], ps, 1);
        let g = n * n * n;
        assert_footprint(&sp, &[5 * g, 5 * g, 5 * g, 15 * g], ps, &format!("npb-sp {what}"));
        assert_eq!(sp.references(), 30 * g + it * (315 * g - 120 * n * n), "npb-sp {what}");
        assert_eq!(sp.count(AccessKind::Write), 30 * g + it * 85 * g, "npb-sp {what}");
    }
    // CG: exactly n * nonzeros_per_row entries (odd: with the diagonal; even: without).
    for (n, nnz, ps) in [(300u64, 7u64, 64u64), (1000, 8, 512), (5000, 11, 4096)] {
        let (n_s, nnz_s) = (n.to_string(), nnz.to_string());
        let params = [("n", n_s.as_str()), ("nonzeros_per_row", nnz_s.as_str()), ("iterations", "2"), ("cg_iterations", "3")];
        let s = run("npb-cg", &params, ps, 3);
        let t = n * nnz;
        assert_footprint(&s, &[t, t, n + 1, n, n, n, n, n], ps, &format!("npb-cg n={n} nnz={nnz}"));
        // makea (rowptr, colidx, values) and x = 1, then the iterations
        let init = (n + 1) + 2 * t + n;
        assert_eq!(s.references(), init + 2 * (3 + 1) * (15 * n + 3 * t), "npb-cg n={n}");
        assert_eq!(s.count(AccessKind::Write), init + 2 * (6 * n + 4 * n * 3), "npb-cg n={n}");
    }
    for (keys, max_key, ps) in [(5000u64, 512u64, 64u64), (100_000, 3000, 4096)] {
        let (k_s, m_s) = (keys.to_string(), max_key.to_string());
        let s = run("npb-is", &[("n_keys", &k_s), ("max_key", &m_s), ("iterations", "3")], ps, 3);
        assert_footprint(&s, &[keys, keys, max_key], ps, &format!("npb-is n_keys={keys}"));
        // create_seq writes every key once, then the iterations
        assert_eq!(s.references(), keys + 3 * (3 * max_key + 7 * keys + 10 + 2), "npb-is n_keys={keys}");
        assert_eq!(s.count(AccessKind::Write), keys + 3 * (2 + 2 * max_key + 3 * keys), "npb-is n_keys={keys}");
    }
    for (n, ps) in [(8u64, 64u64), (16, 512), (32, 4096)] {
        let s = run("npb-mg", &[("n", &n.to_string()), ("iterations", "2")], ps, 1);
        let levels: Vec<u64> = std::iter::successors(Some(n), |&m| (m > 4).then_some(m / 2)).map(|m| m * m * m).collect();
        let mut arrays = vec![n * n * n];
        arrays.extend(levels.iter().chain(&levels));
        assert_footprint(&s, &arrays, ps, &format!("npb-mg n={n}"));
        // resid and psinv: 9 references a point; rprj3: 8 a coarse point; interp: 3 a fine point.
        let (finest, coarsest) = (levels[0], levels[levels.len() - 1]);
        let coarser: u64 = levels[1..].iter().sum();
        let up: u64 = levels[..levels.len() - 1].iter().sum();
        let cycle = 8 * coarser + 9 * coarsest + 21 * up + 9 * finest;
        let init: u64 = arrays.iter().sum();
        assert_eq!(s.references(), init + 9 * finest + 2 * cycle, "npb-mg n={n}");
    }
}

/// Pages written in `range`, relative to its start, consecutive repeats dropped.
fn writes_in(s: &Stream, range: std::ops::Range<u64>) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for r in s.refs.iter().filter(|r| r.kind == AccessKind::Write && range.contains(&r.page)) {
        if out.last() != Some(&(r.page - range.start)) {
            out.push(r.page - range.start);
        }
    }
    out
}

#[test]
fn workload_npb_lu_lower_sweep_forward_upper_sweep_backward() {
    // n = 6, 64-byte pages: each grid is 216 points of 40 bytes = 135 pages; rsd is the
    // second. One iteration writes rsd in rhs (all of it, ascending), in the lower sweep
    // (k >= 1, ascending) and in the upper sweep (k <= 4, descending), never in update.
    let (n, ps) = (6u64, 64u64);
    let grid = (n * n * n * 40).div_ceil(ps);
    let s = run("npb-lu", &[("n", "6"), ("iterations", "1")], ps, 1).without_initialization();
    let w = writes_in(&s, grid..2 * grid);
    let lower_end = w.iter().rposition(|&p| p == grid - 1).unwrap();
    let upper = &w[lower_end + 1..];
    // A 40-byte point may straddle two pages (its components are written in ascending
    // order), so compare pages by when the sweep leaves them: last writes descend.
    let mut order: Vec<u64> = Vec::new();
    for (t, &p) in upper.iter().enumerate() {
        if !upper[t + 1..].contains(&p) {
            order.push(p);
        }
    }
    let top = ((n - 1) * n * n * 40 - 1) / ps; // last byte of plane k = n-2
    assert_eq!(order, (0..=top).rev().collect::<Vec<u64>>());
    // The lower sweep, by first write, ascends from plane k = 1 to the end of the grid.
    let rhs_end = w.iter().position(|&p| p == grid - 1).unwrap();
    let lower = &w[rhs_end + 1..=lower_end];
    let mut first: Vec<u64> = Vec::new();
    for &p in lower {
        if !first.contains(&p) {
            first.push(p);
        }
    }
    assert_eq!(first, ((n * n * 40) / ps..grid).collect::<Vec<u64>>());
}

#[test]
fn workload_npb_sp_line_solves_stride_through_rhs() {
    // n = 8, 64-byte pages: rhs (the second grid) has points of 40 bytes, so a j step is
    // n*5*8 = 320 bytes = 5 pages and a k step n*n*5*8 = 2560 bytes = 40 pages (39 or 41
    // between the ends of points that straddle a page). Only the z-solve steps along k:
    // n*n lines of n-1 steps, once forward and once back.
    let (n, ps) = (8u64, 64u64);
    let grid = (n * n * n * 40) / ps;
    let s = run("npb-sp", &[("n", "8"), ("iterations", "1")], ps, 1).without_initialization();
    let w = writes_in(&s, grid..2 * grid);
    let jumps: Vec<i64> = w.windows(2).map(|p| p[1] as i64 - p[0] as i64).collect();
    let count = |lo: i64, hi: i64| jumps.iter().filter(|&&d| (lo..=hi).contains(&d)).count() as u64;
    assert_eq!(count(38, 42), n * n * (n - 1), "forward k steps");
    assert_eq!(count(-42, -38), n * n * (n - 1), "backward k steps");
    assert!(count(-7, -4) >= n * n * (n - 1), "backward j steps");
    // u (the first grid) is written only by add, in ascending order.
    let u = writes_in(&s, 0..grid);
    assert_eq!(u, (0..grid).collect::<Vec<u64>>());
}

#[test]
fn workload_npb_cg_gathers_a_symmetric_pattern() {
    // n = 200, 5 nonzeros a row (diagonal + 2 partners each way), 64-byte pages (8
    // elements). One product q = A p: rows end at their write of q; the reads of p in a
    // row are its columns, sorted; the entries, counted by (row page, column page), are
    // symmetric.
    let (n, nnz, ps) = (200u64, 5u64, 64u64);
    let s = run("npb-cg", &[("n", "200"), ("nonzeros_per_row", "5"), ("iterations", "1"), ("cg_iterations", "1")], ps, 9);
    let t = npb_pages(n * nnz, ps);
    let colidx = t..2 * t;
    let vec_pages = npb_pages(n, ps);
    let p0 = 2 * t + npb_pages(n + 1, ps) + 2 * vec_pages; // values, colidx, rowptr, x, z, then p
    let (p, q) = (p0..p0 + vec_pages, p0 + vec_pages..p0 + 2 * vec_pages);
    // the first product: the first read of colidx (makea wrote it before)
    let start = s.refs.iter().position(|r| colidx.contains(&r.page) && r.kind == AccessKind::Read).unwrap();
    let (mut row, mut cols, mut blocks) = (0u64, Vec::new(), HashMap::new());
    for r in &s.refs[start..] {
        if p.contains(&r.page) {
            assert_eq!(r.kind, AccessKind::Read);
            cols.push(r.page - p.start);
            *blocks.entry((row / 8, r.page - p.start)).or_insert(0u64) += 1;
        } else if q.contains(&r.page) && r.kind == AccessKind::Write {
            assert!(cols.windows(2).all(|c| c[0] <= c[1]), "row {row}: columns not sorted: {cols:?}");
            assert!(cols.contains(&(row / 8)), "row {row}: no diagonal");
            cols.clear();
            row += 1;
            if row == n {
                break;
            }
        }
    }
    assert_eq!(row, n);
    assert_eq!(blocks.values().sum::<u64>(), n * nnz);
    for (&(a, b), &c) in &blocks {
        assert_eq!(blocks.get(&(b, a)), Some(&c), "block ({a}, {b})");
    }
    // The gathers are not sequential: some row reads a column page far from its own.
    assert!(blocks.keys().any(|&(a, b)| a.abs_diff(b) > 5));
}

#[test]
fn workload_npb_is_counts_at_the_keys_and_places_by_rank() {
    // 4096 keys below 1024, 64-byte pages: key and key_buff 512 pages each, count 128
    // (8 keys a page). Counting and placing both read then write count[key] right after
    // reading key[i]; placing then writes key_buff[rank].
    let s = run("npb-is", &[("n_keys", "4096"), ("max_key", "1024"), ("iterations", "1")], 64, 4);
    let (key, buff, count) = (0..512u64, 512..1024u64, 1024..1152u64);
    let (mut counted, mut placed) = (Vec::new(), Vec::new());
    for i in 2..s.refs.len() {
        let (a, b, c) = (s.refs[i - 2], s.refs[i - 1], s.refs[i]);
        let hit = a.kind == AccessKind::Read && key.contains(&a.page) && b.kind == AccessKind::Read;
        if hit && count.contains(&b.page) && c.kind == AccessKind::Write && c.page == b.page {
            match s.refs.get(i + 1) {
                Some(d) if d.kind == AccessKind::Write && buff.contains(&d.page) => placed.push((c.page - 1024, d.page - 512)),
                _ => counted.push(c.page - 1024),
            }
        }
    }
    assert_eq!((counted.len(), placed.len()), (4096, 4096));
    // The same keys both times.
    let mut again: Vec<u64> = placed.iter().map(|&(c, _)| c).collect();
    let mut sorted = counted.clone();
    again.sort_unstable();
    sorted.sort_unstable();
    assert_eq!(again, sorted);
    // Sum of four uniforms: about 61% of the keys in the middle quarter (uniform: 25%).
    let middle = counted.iter().filter(|&&c| (48..80).contains(&c)).count() as f64 / 4096.0;
    assert!((0.5..0.72).contains(&middle), "{middle}");
    // Ranks follow keys: a larger key's count page never places below a smaller one's.
    placed.sort_unstable();
    assert!(placed.windows(2).all(|w| w[0].0 == w[1].0 || w[0].1 <= w[1].1), "key_buff out of key order");
    assert_eq!(placed.iter().map(|&(_, b)| b).collect::<std::collections::BTreeSet<_>>().len(), 512);
}

#[test]
fn workload_npb_mg_v_cycle_visits_every_level() {
    // n = 16, 64-byte pages: v 512 pages, u at 16, 8, 4 (512, 64, 8), r likewise.
    let s = run("npb-mg", &[("n", "16"), ("iterations", "1")], 64, 1).without_initialization();
    let sizes = [512u64, 512, 64, 8, 512, 64, 8]; // v, u0, u1, u2, r0, r1, r2
    let array = |page: u64| {
        let mut end = 0;
        sizes.iter().position(|&n| {
            end += n;
            page < end
        })
    };
    let mut labels: Vec<usize> = Vec::new();
    let mut written = [0u64; 7];
    for r in s.refs.iter().filter(|r| r.kind == AccessKind::Write) {
        let a = array(r.page).unwrap();
        written[a] += 1;
        if labels.last() != Some(&a) {
            labels.push(a);
        }
    }
    // resid r0; down r1, r2; psinv u2; up: interp u1, resid r1, psinv u1, interp u0,
    // resid r0, psinv u0; resid r0.
    assert_eq!(labels, [4, 5, 6, 3, 2, 5, 2, 1, 4, 1, 4]);
    assert_eq!(written[0], 0, "v is only read");
    assert_eq!(s.distinct as u64, sizes.iter().sum::<u64>());
}

#[test]
fn workload_npb_parameter_errors() {
    for bad in ["12", "0", "4", "lots"] {
        let e = open_err("npb-mg", &[("n", bad)], 4096);
        assert!(e.starts_with("workload npb-mg: parameter 'n'"), "{e}");
        if bad != "lots" {
            assert!(e.contains("power of two >= 8") && e.contains(bad), "{e}");
        }
    }
    let e = open_err("npb-lu", &[("n", "1")], 4096);
    assert!(e.starts_with("workload npb-lu: parameter 'n'") && e.contains(">= 2"), "{e}");
    let e = open_err("npb-sp", &[("n", "2")], 4096);
    assert!(e.starts_with("workload npb-sp: parameter 'n'"), "{e}");
    let e = open_err("npb-cg", &[("nonzeros_per_row", "0")], 4096);
    assert!(e.starts_with("workload npb-cg: parameter 'nonzeros_per_row'"), "{e}");
    let e = open_err("npb-cg", &[("n", "100000000"), ("nonzeros_per_row", "20")], 4096);
    assert!(e.starts_with("workload npb-cg: parameter 'nonzeros_per_row'") && e.contains("at most"), "{e}");
    let e = open_err("npb-cg", &[("cg_iterations", "0")], 4096);
    assert!(e.starts_with("workload npb-cg: parameter 'cg_iterations'"), "{e}");
    let e = open_err("npb-is", &[("max_key", "0")], 4096);
    assert!(e.starts_with("workload npb-is: parameter 'max_key'"), "{e}");
    let e = open_err("npb-is", &[("n_keys", "lots")], 4096);
    assert_eq!(e, "workload npb-is: parameter 'n_keys': expected a whole number from 1 to 1073741824, got 'lots'");
    for name in ["npb-lu", "npb-sp", "npb-cg", "npb-is", "npb-mg"] {
        let e = open_err(name, &[("iterations", "0")], 4096);
        assert!(e.starts_with(&format!("workload {name}: parameter 'iterations'")), "{e}");
    }
    let e = open_err("npb-sp", &[("n", "3000000")], 4096);
    assert!(e.starts_with("workload npb-sp: ") && e.contains("pages"), "{e}");
}

#[test]
fn workload_npb_and_spec_drop_stops_the_generator() {
    for (name, params) in [
        ("npb-lu", vec![("iterations", "1000000000")]),
        ("npb-sp", vec![("n", "400")]),
        ("npb-cg", vec![("iterations", "1000000000")]),
        ("npb-is", vec![("iterations", "1000000000")]),
        ("npb-mg", vec![("n", "512")]),
        ("npb-ft", vec![("iterations", "1000000000")]),
        ("npb-bt", vec![("iterations", "1000000000")]),
        ("spec-gzip", vec![("files", "1000000")]),
        ("spec-gzip", vec![("files", "1000000"), ("harness", "spec")]),
        ("spec-mcf", vec![("iterations", "1000000000")]),
        ("spec-swim", vec![("iterations", "1000000000")]),
        ("spec-wupwise", vec![("iterations", "1000000000")]),
        ("spec-apsi", vec![("iterations", "1000000000")]),
    ] {
        let params = kv(&params);
        within(20, name, move || {
            let mut src = open_workload(name, &params, 4096, 1).unwrap();
            let mut batch = RefBatch::default();
            assert!(src.next_batch(&mut batch).unwrap() > 0);
            drop(src);
        });
    }
}

// seven workloads of predictive-replacement.txt

/// Small runs of the seven workloads of predictive-replacement.txt (Table 1).
const PAPER_SMALL: &[NpbRun] = &[
    ("npb-ft", &[("n1", "8"), ("n2", "4"), ("n3", "8"), ("iterations", "2")], false),
    ("npb-bt", &[("n", "5"), ("iterations", "2")], false),
    ("npb-bt", &[("n", "5"), ("iterations", "2"), ("work", "line")], false),
    ("spec-gzip", &[("files", "5"), ("file_kib", "24"), ("window_kib", "4")], true),
    ("spec-gzip", &[("harness", "spec"), ("files", "3"), ("file_kib", "24"), ("window_kib", "4")], true),
    ("spec-mcf", &[("nodes", "300"), ("arcs", "2000"), ("iterations", "2"), ("pivots", "20")], true),
    ("spec-swim", &[("n", "12"), ("iterations", "2")], false),
    ("spec-wupwise", &[("l", "3"), ("iterations", "2")], false),
    ("spec-apsi", &[("nx", "8"), ("ny", "6"), ("nz", "5"), ("iterations", "2")], false),
];

#[test]
fn workload_paper_deterministic_and_page_size_independent() {
    for &(name, params, random) in PAPER_SMALL {
        let a = run(name, params, 512, 7);
        let b = run(name, params, 512, 7);
        assert!(a.refs.len() > 100, "{name}");
        assert!(a.refs == b.refs && a.ids == b.ids, "{name} {params:?}: same seed, different stream");
        let c = run(name, params, 512, 8);
        assert_eq!(a.refs != c.refs, random, "{name} {params:?}: the seed matters iff the workload is random");
        let small = run(name, params, 64, 1);
        let large = run(name, params, 4096, 1);
        assert!(large.distinct < small.distinct, "{name}: {} vs {}", large.distinct, small.distinct);
        assert_eq!(large.references(), small.references(), "{name} {params:?}: references depend on the page size");
    }
}

#[test]
fn workload_paper_write_every_page_before_reading_it() {
    for &(name, params, _) in PAPER_SMALL {
        for page_size in [64u64, 4096] {
            let s = run(name, params, page_size, 3);
            let mut written = std::collections::HashSet::new();
            for (i, r) in s.refs.iter().enumerate() {
                if r.kind == AccessKind::Write {
                    written.insert(r.page);
                } else if r.kind == AccessKind::Free {
                    // given back: its contents are gone
                    assert!(written.remove(&r.page), "{name} {params:?}: record {i} frees page {} it never wrote", r.page);
                } else {
                    assert!(written.contains(&r.page), "{name} {params:?}: record {i} reads page {} before any write", r.page);
                }
            }
        }
    }
}

#[test]
fn workload_paper_footprints() {
    for ps in [64u64, 512, 4096] {
        let (n1, n2, n3) = (16u64, 8u64, 4u64);
        let s = run("npb-ft", &[("n1", "16"), ("n2", "8"), ("n3", "4"), ("iterations", "1")], ps, 1);
        let points = n1 * n2 * n3;
        assert_footprint(&s, &[2 * points, 2 * points, points], ps, &format!("npb-ft page size {ps}"));
        for (n, it) in [(5u64, 2u64), (8, 1)] {
            let (n_s, it_s) = (n.to_string(), it.to_string());
            let g = n * n * n;
            let grid = run("npb-bt", &[("n", &n_s), ("iterations", &it_s)], ps, 1);
            assert_footprint(&grid, &[5 * g, 5 * g, 5 * g, 25 * g, 25 * g, 75 * g], ps, &format!("npb-bt n={n} page size {ps}"));
            // per step: compute_rhs, 3 n^2 line solves of 545 n - 480 references, add
            let step = 1695 * g - 1470 * n * n;
            assert_eq!(grid.references(), 140 * g + it * step, "npb-bt n={n}");
            let line = run("npb-bt", &[("n", &n_s), ("iterations", &it_s), ("work", "line")], ps, 1);
            assert_footprint(&line, &[5 * g, 5 * g, 5 * g, 25 * n, 25 * n, 75 * n], ps, &format!("npb-bt line n={n}"));
            assert_eq!(line.references(), 15 * g + 125 * n + it * step, "npb-bt line n={n}");
        }
        let s = run("spec-mcf", &[("nodes", "500"), ("arcs", "3000"), ("iterations", "2"), ("pivots", "10")], ps, 1);
        assert_footprint(&s, &[500 * 8, 3000 * 4], ps, &format!("spec-mcf page size {ps}"));
        let s = run("spec-swim", &[("n", "20"), ("iterations", "1")], ps, 1);
        assert_footprint(&s, &[400; 13], ps, &format!("spec-swim page size {ps}"));
        let s = run("spec-wupwise", &[("l", "3"), ("iterations", "1")], ps, 1);
        let mut fields = vec![81 * 72];
        fields.extend([81 * 24; 8]);
        assert_footprint(&s, &fields, ps, &format!("spec-wupwise page size {ps}"));
        let s = run("spec-apsi", &[("nx", "10"), ("ny", "7"), ("nz", "3"), ("iterations", "1")], ps, 1);
        assert_footprint(&s, &[210; 8], ps, &format!("spec-apsi page size {ps}"));
    }
    // gzip: the tables (window 2 W, prev, head and d_buf 2 W each, l_buf W) and every page
    // of every input; the outputs as far as the compressed data reaches.
    let (w, file, files, ps) = (4096u64, 24 * 1024u64, 5u64, 512u64);
    let s = run("spec-gzip", &[("files", "5"), ("file_kib", "24"), ("window_kib", "4")], ps, 1);
    let tables = (2 * w + 3 * 2 * w + w) / ps;
    let (input, output) = (file / ps, (2 * file + 64).div_ceil(ps));
    let mut touched = std::collections::BTreeSet::new();
    touched.extend(s.refs.iter().map(|r| r.page));
    assert_eq!(touched.len() as u64, s.distinct as u64);
    // window, prev and head whole; l_buf and d_buf as far as a block's items reach
    assert!((0..6 * w / ps).all(|p| touched.contains(&p)), "every page of window, prev and head");
    for f in 0..files {
        let start = tables + f * (input + output);
        assert!((start..start + input).all(|p| touched.contains(&p)), "file {f}: every input page");
        let out = touched.range(start + input..start + input + output).count() as u64;
        // random data (the fourth input) does not compress; the others do
        if f == 3 {
            assert!(out >= input && out <= input + 2, "file {f}: {out} output pages for {input} input pages");
        } else {
            assert!(out >= 1 && out < input * 4 / 5, "file {f}: {out} output pages for {input} input pages");
        }
    }
    assert!(*touched.last().unwrap() < tables + files * (input + output));
    // gzip with harness=spec: see workload_spec_gzip_layout
}

#[test]
fn workload_paper_parameter_errors() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("npb-ft", "n1", "12", "power of two >= 2"),
        ("npb-ft", "n3", "1", "power of two >= 2"),
        ("npb-bt", "n", "2", ">= 3"),
        ("npb-bt", "work", "cells", "one of grid, line"),
        ("spec-gzip", "window_kib", "3", "power of two from 1 to 16384"),
        ("spec-gzip", "level", "10", "from 1 to 9"),
        ("spec-gzip", "harness", "bzip", "one of once, spec"),
        ("spec-gzip", "level", "1,3", "from 1 to 9"),
        ("spec-gzip", "files", "0", "from 1"),
        ("spec-gzip", "file_kib", "lots", "from 1"),
        ("spec-mcf", "nodes", "1", "from 2"),
        ("spec-mcf", "pivots", "-1", "whole number"),
        ("spec-swim", "n", "2", ">= 3"),
        ("spec-wupwise", "l", "1", ">= 2"),
        ("spec-wupwise", "l", "100000", "too many sites"),
        ("spec-apsi", "nz", "1", ">= 2"),
    ];
    for &(name, param, value, expected) in cases {
        let e = open_err(name, &[(param, value)], 4096);
        assert!(e.starts_with(&format!("workload {name}: parameter '{param}'")), "{e}");
        assert!(e.contains(expected) && !e.contains('\n'), "{e}");
    }
    // spec-gzip's harness=spec parameters, and with harness=once they are refused
    for (param, value, expected) in [
        ("level", "1,3,x", "from 1 to 9, comma-separated"),
        ("level", "", "from 1 to 9"),
        ("kinds", "log,pdf", "log, image, binary, random, tarball"),
        ("free_between", "maybe", "true or false"),
    ] {
        let e = open_err("spec-gzip", &[("harness", "spec"), (param, value)], 4096);
        assert!(e.starts_with(&format!("workload spec-gzip: parameter '{param}'")) && e.contains(expected), "{e}");
    }
    for (param, value) in [("kinds", "image"), ("free_between", "false")] {
        let e = open_err("spec-gzip", &[(param, value)], 4096);
        assert_eq!(e, format!("workload spec-gzip: parameter '{param}': only with harness=spec (harness=once cycles the five kinds and frees nothing)"));
    }
    for name in ["npb-ft", "npb-bt", "spec-mcf", "spec-swim", "spec-wupwise", "spec-apsi"] {
        let e = open_err(name, &[("iterations", "0")], 4096);
        assert!(e.starts_with(&format!("workload {name}: parameter 'iterations'")), "{e}");
    }
    // sizes beyond the address space
    for (name, params) in [
        ("npb-ft", vec![("n1", "1048576"), ("n2", "1048576"), ("n3", "1024")]),
        ("spec-swim", vec![("n", "100000000")]),
        ("spec-wupwise", vec![("l", "2000")]),
        ("spec-apsi", vec![("nx", "100000"), ("ny", "100000"), ("nz", "100000")]),
    ] {
        let e = open_err(name, &params, 4096);
        assert!(e.starts_with(&format!("workload {name}: ")) && !e.contains('\n'), "{e}");
    }
}

#[test]
fn workload_npb_ft_butterflies_stride_by_powers_of_two() {
    // n1 = n2 = n3 = 8, 64-byte pages (4 complex points): u0 and u1 are 128 pages each. A
    // butterfly on two pages is R a, R b, W a, W b (on one page it folds to R, W). Lines
    // step 1 point along dimension 1, 8 points (2 pages) along 2 and 64 points (16 pages)
    // along 3, so pass s = 0, 1, 2 pairs pages 2^s * 16 apart along 3 and 2^s * 2 along
    // 2; along 1 only pass 2 leaves the page (1 page apart). 64 lines of 4 pairs each.
    let s = run("npb-ft", &[("n1", "8"), ("n2", "8"), ("n3", "8"), ("iterations", "1")], 64, 1);
    let u1 = 128..256u64;
    let evolve = s.refs.iter().position(|r| r.kind == AccessKind::Read && r.page < 128).unwrap();
    let mut strides: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
    let mut first: Vec<u64> = Vec::new();
    for q in s.refs[evolve..].windows(4) {
        let kinds = [q[0].kind, q[1].kind, q[2].kind, q[3].kind];
        let butterfly = kinds == [AccessKind::Read, AccessKind::Read, AccessKind::Write, AccessKind::Write]
            && q[2].page == q[0].page
            && q[3].page == q[1].page
            && q[1].page > q[0].page;
        if butterfly && u1.contains(&q[0].page) && u1.contains(&q[1].page) {
            let d = q[1].page - q[0].page;
            *strides.entry(d).or_default() += 1;
            if !first.contains(&d) {
                first.push(d);
            }
        }
    }
    let expected: std::collections::BTreeMap<u64, u64> = [1, 2, 4, 8, 16, 32, 64].into_iter().map(|d| (d, 256)).collect();
    assert_eq!(strides, expected);
    // the inverse FFT runs along dimension 3 first, then 2, then 1
    assert_eq!(first, [16, 32, 64, 2, 4, 8, 1]);
}

#[test]
fn workload_npb_bt_line_solves_walk_up_and_down_each_line() {
    // n = 8, 64-byte pages: rhs (the second grid) has points of 40 bytes, a k step is
    // n*n*40 = 2560 bytes = 40 pages. Only z_solve steps along k: for each of the n*n
    // lines the elimination writes rhs up the line and the back substitution down it.
    let (n, ps) = (8u64, 64u64);
    let grid = (n * n * n * 40) / ps;
    for work in ["grid", "line"] {
        let s = run("npb-bt", &[("n", "8"), ("iterations", "1"), ("work", work)], ps, 1).without_initialization();
        let w = writes_in(&s, grid..2 * grid);
        let jumps: Vec<i64> = w.windows(2).map(|p| p[1] as i64 - p[0] as i64).collect();
        let count = |lo: i64, hi: i64| jumps.iter().filter(|&&d| (lo..=hi).contains(&d)).count() as u64;
        assert_eq!(count(38, 42), n * n * (n - 1), "{work}: forward k steps");
        assert_eq!(count(-42, -38), n * n * (n - 1), "{work}: backward k steps");
    }
    // The block work: lhs (the sixth array, 75 doubles a point) is written 3 blocks a
    // point in each set-up, then bb at l > 0 (matmul_sub) and bb, cc (bb at the last
    // point) in binvcrhs: 75 n + 75 (n - 1) + 25 doubles a line, wherever lhs lives.
    let g = n * n * n;
    let lhs_writes = |s: &Stream, range: std::ops::Range<u64>| {
        s.refs.iter().filter(|r| r.kind == AccessKind::Write && range.contains(&r.page)).map(|r| r.repeat as u64).sum::<u64>()
    };
    let grid_run = run("npb-bt", &[("n", "8"), ("iterations", "1")], 4096, 1).without_initialization();
    let lhs_start = 3 * npb_pages(5 * g, 4096) + 2 * npb_pages(25 * g, 4096);
    let per_line = 150 * n - 50;
    assert_eq!(lhs_writes(&grid_run, lhs_start..u64::MAX), 3 * n * n * per_line);
    let line_run = run("npb-bt", &[("n", "8"), ("iterations", "1"), ("work", "line")], 64, 1).without_initialization();
    let lhs_start = 3 * npb_pages(5 * g, 64) + 2 * npb_pages(25 * n, 64);
    assert_eq!(lhs_writes(&line_run, lhs_start..u64::MAX), 3 * n * n * per_line);
}

/// For each page in `range`: the largest LRU stack distance at which it was referenced
/// again (0 if referenced once).
fn reuse_distances(s: &Stream, range: std::ops::Range<u64>) -> HashMap<u64, u32> {
    let mut sd = crate::analysis::StackDistances::new();
    let mut out: HashMap<u64, u32> = HashMap::new();
    for (r, &id) in s.refs.iter().zip(&s.ids) {
        let d = sd.reference(id, r.repeat);
        if range.contains(&r.page) {
            let e = out.entry(r.page).or_default();
            *e = (*e).max(d);
        }
    }
    out
}

#[test]
fn workload_spec_gzip_touches_input_pages_once() {
    // 512-byte pages, 4 KiB window: the tables are 16 (window) + 3 * 16 (prev, head,
    // d_buf) + 8 (l_buf) = 72 pages, each input 64 pages and its output buffer 129.
    // Input arrives in blocks of up to 2 W (16 pages): each page is written, then read
    // by the copy into the window while little more than a block and the window are
    // touched, and never again: LRU with a few dozen frames faults on it once.
    let (ps, tables, input, output) = (512u64, 72u64, 64u64, 129u64);
    let s = run("spec-gzip", &[("files", "5"), ("file_kib", "32"), ("window_kib", "4")], ps, 2);
    for f in 0..5 {
        let start = tables + f * (input + output);
        let d = reuse_distances(&s, start..start + input);
        assert_eq!(d.len() as u64, input, "file {f}: every input page");
        assert!(d.values().all(|&x| x > 0 && x <= 40), "file {f}: input reuse distances {:?}", d.values().max());
        // the output is written sequentially, once
        let mut firsts: Vec<u64> = Vec::new();
        for r in s.refs.iter().filter(|r| (start + input..start + input + output).contains(&r.page)) {
            assert_eq!(r.kind, AccessKind::Write);
            if !firsts.contains(&r.page) {
                firsts.push(r.page);
            }
        }
        assert!(firsts.windows(2).all(|w| w[1] == w[0] + 1), "file {f}: output pages in order");
    }
    // the hash chains are probed at data-dependent places: head[] reads are not sequential
    let head = 32..48u64;
    let reads: Vec<u64> = s.refs.iter().filter(|r| r.kind == AccessKind::Read && head.contains(&r.page)).map(|r| r.page).collect();
    let ascending = reads.windows(2).filter(|w| w[1] >= w[0]).count() as f64 / reads.len() as f64;
    assert!(ascending < 0.8, "{ascending}");
}

#[test]
fn workload_spec_mcf_prices_arcs_in_order_gathering_scattered_nodes() {
    // 4096-byte pages: 4000 nodes of 64 bytes (63 pages), then 40000 arcs of 32 bytes
    // (313 pages). Each iteration's pricing reads the arc pages in order, once through.
    let (iterations, node_pages, arc_pages) = (3u64, 63u64, 313u64);
    let s = run("spec-mcf", &[("nodes", "4000"), ("arcs", "40000"), ("iterations", "3"), ("pivots", "50")], 4096, 5)
        .without_initialization();
    let arcs: Vec<u64> = s.refs.iter().filter(|r| r.page >= node_pages).map(|r| r.page - node_pages).collect();
    let mut sweeps = 0;
    let mut start = 0;
    for i in 1..=arcs.len() {
        if i == arcs.len() || !(arcs[i] == arcs[i - 1] || arcs[i] == arcs[i - 1] + 1) {
            if arcs[start] == 0 && arcs[i - 1] == arc_pages - 1 {
                sweeps += 1;
            }
            start = i;
        }
    }
    assert_eq!(sweeps, iterations);
    // The pricing reads the potentials of the arcs' heads: nodes all over the array.
    let first_sweep_end = s.refs.iter().position(|r| r.page == node_pages + arc_pages - 1).unwrap();
    let node_reads: Vec<u64> = s.refs[..first_sweep_end].iter().filter(|r| r.page < node_pages).map(|r| r.page).collect();
    let nodes: std::collections::HashSet<u64> = node_reads.iter().copied().collect();
    assert_eq!(nodes.len() as u64, node_pages);
    // tails ascend with the arcs, heads are random: about half the steps between node
    // reads go back (a sequential gather would have none)
    let back = node_reads.windows(2).filter(|w| w[1] < w[0]).count() as f64 / node_reads.len() as f64;
    assert!((0.35..0.65).contains(&back), "{back}");
}

#[test]
fn workload_spec_swim_touches_all_13_arrays_each_step() {
    // n = 12, 64-byte pages: each array is 144 doubles = 18 pages. Arrays: u v p unew vnew
    // pnew uold vold pold cu cv z h. calc1 writes cu cv z h reading u v p; calc2 writes
    // unew vnew pnew reading uold vold pold z cu cv h; calc3 writes u v p uold vold pold.
    let s = run("spec-swim", &[("n", "12"), ("iterations", "3")], 64, 1).without_initialization();
    let array = |page: u64| (page / 18) as usize;
    let phase_of = |a: usize| match a {
        9..=12 => 1,
        3..=5 => 2,
        _ => 3,
    };
    // (phase, arrays read, arrays written); reads belong to the phase of the next write
    type Sets = std::collections::BTreeSet<usize>;
    let mut phases: Vec<(usize, Sets, Sets)> = Vec::new();
    let mut pending = Sets::new();
    for r in &s.refs {
        let a = array(r.page);
        if r.kind == AccessKind::Read {
            pending.insert(a);
            continue;
        }
        if phases.last().map(|p| p.0) != Some(phase_of(a)) {
            phases.push((phase_of(a), Sets::new(), Sets::new()));
        }
        let p = phases.last_mut().unwrap();
        p.1.append(&mut pending);
        p.2.insert(a);
    }
    assert!(pending.is_empty());
    let ids: Vec<usize> = phases.iter().map(|p| p.0).collect();
    assert_eq!(ids, [1, 2, 3, 1, 2, 3, 1, 2, 3]);
    let set = |a: &[usize]| a.iter().copied().collect::<Sets>();
    for step in phases.chunks(3) {
        // the periodic copies read the written arrays back
        assert_eq!(step[0].2, set(&[9, 10, 11, 12]));
        assert_eq!(step[0].1, set(&[0, 1, 2, 9, 10, 11, 12]));
        assert_eq!(step[1].2, set(&[3, 4, 5]));
        assert_eq!(step[1].1, set(&[3, 4, 5, 6, 7, 8, 9, 10, 11, 12]));
        assert_eq!(step[2].2, set(&[0, 1, 2, 6, 7, 8]));
        assert_eq!(step[2].1, set(&[0, 1, 2, 3, 4, 5, 6, 7, 8]));
        let all: Sets = step.iter().flat_map(|p| p.1.union(&p.2).copied()).collect();
        assert_eq!(all.len(), 13);
    }
}

#[test]
fn workload_spec_wupwise_dirac_reads_the_8_neighbours() {
    // l = 4, 64-byte pages: the gauge field (256 sites x 576 bytes) is 2304 pages, each
    // spinor field 768 pages, 3 a site. Fields: b x r r0 p v s t. The first operator
    // application is t = A x: between the writes of t at two sites it reads x at the
    // site and at its 8 periodic neighbours.
    let (l, gauge, field) = (4u64, 2304u64, 768u64);
    let s = run("spec-wupwise", &[("l", "4"), ("iterations", "1")], 64, 1).without_initialization();
    let (x, t) = (gauge + field, gauge + 7 * field);
    let mut read: std::collections::BTreeSet<u64> = Default::default();
    let mut sites = 0u64;
    for r in &s.refs {
        if r.kind == AccessKind::Read && (x..x + field).contains(&r.page) {
            read.insert((r.page - x) / 3);
        } else if r.kind == AccessKind::Write && (t..t + field).contains(&r.page) {
            if read.is_empty() {
                continue; // the same site's next page
            }
            let site = (r.page - t) / 3;
            let mut expected: std::collections::BTreeSet<u64> = [site].into();
            for mu in 0..4 {
                let stride = l.pow(mu);
                let c = site / stride % l;
                expected.insert(site - c * stride + (c + 1) % l * stride);
                expected.insert(site - c * stride + (c + l - 1) % l * stride);
            }
            assert_eq!(read, expected, "site {site}");
            read.clear();
            sites += 1;
            if sites == l.pow(4) {
                break;
            }
        }
    }
    assert_eq!(sites, 256);
}

#[test]
fn workload_spec_apsi_column_solves_stride_across_pages() {
    // nx = ny = 8, nz = 6, 64-byte pages: a level is 64 doubles = 8 pages, a field 48
    // pages; dc is the eighth field. Only the vertical solves step along z: up each of
    // the 64 columns (5 steps of +8 pages) and back down (5 of -8).
    let s = run("spec-apsi", &[("nx", "8"), ("ny", "8"), ("nz", "6"), ("iterations", "2")], 64, 1).without_initialization();
    let w = writes_in(&s, 7 * 48..8 * 48);
    let jumps: Vec<i64> = w.windows(2).map(|p| p[1] as i64 - p[0] as i64).collect();
    assert_eq!(jumps.iter().filter(|&&d| d == 8).count(), 2 * 64 * 5);
    assert_eq!(jumps.iter().filter(|&&d| d == -8).count(), 2 * 64 * 5);
    // The horizontal FFT passes on phi (the sixth field) pair rows 1, 2 and 4 pages apart.
    let phi = 5 * 48..6 * 48u64;
    let mut strides = std::collections::BTreeSet::new();
    for q in s.refs.windows(4) {
        let kinds = [q[0].kind, q[1].kind, q[2].kind, q[3].kind];
        let butterfly = kinds == [AccessKind::Read, AccessKind::Read, AccessKind::Write, AccessKind::Write]
            && q[2].page == q[0].page
            && q[3].page == q[1].page
            && q[1].page > q[0].page;
        if butterfly && q.iter().all(|r| phi.contains(&r.page)) {
            strides.insert(q[1].page - q[0].page);
        }
    }
    assert_eq!(strides, [1, 2, 4].into());
}


// ------------------------------------------------------------------ stand-ins of issue 15

/// The exact LRU fault curve of a workload run (the `pagelab mrc` curve).
fn lru_curve(name: &str, params: &[(&str, &str)], page_size: u64) -> crate::analysis::LruFaultCurve {
    crate::analysis::mrc(open(name, params, page_size, 1).as_mut(), &mut |_| true).unwrap()
}

/// Faults of `policy` on `frames` frames, by replay.
fn replay_faults(name: &str, params: &[(&str, &str)], page_size: u64, policy: crate::policy::PolicyKind, frames: u64) -> u64 {
    let (name, params) = (name.to_string(), kv(params));
    let open = move || open_workload(&name, &params, page_size, 1);
    let cfg = crate::replay::ReplayConfig { policies: vec![policy], frames: vec![frames], seed: 1, repeats: Default::default() };
    crate::replay::replay(&open, &cfg, &mut |_| true).unwrap()[0].faults
}

/// Pages touched and not freed after each record: the program's MAD as it runs.
fn live_pages(s: &Stream) -> Vec<u64> {
    let mut live = std::collections::HashSet::new();
    s.refs
        .iter()
        .map(|r| {
            if r.kind == AccessKind::Free {
                live.remove(&r.page);
            } else {
                live.insert(r.page);
            }
            live.len() as u64
        })
        .collect()
}

/// References before the first moment `at_least` distinct pages had been touched.
fn references_to_touch(s: &Stream, at_least: usize) -> u64 {
    let mut seen = std::collections::HashSet::new();
    let mut pos = 0u64;
    for r in &s.refs {
        seen.insert(r.page);
        if seen.len() >= at_least {
            return pos;
        }
        pos += r.repeat as u64;
    }
    pos
}

#[test]
fn workload_bit_r_moves_every_element_four_times() {
    // cobra: each element is read and written once into the buffer and once out of it
    // (a swap is two reads and two writes for two elements): 4 references an element
    for (n, block) in [(1u64 << 12, 4u64), (1 << 12, 64), (1 << 13, 8), (16, 1)] {
        let (n_s, b_s) = (n.to_string(), block.to_string());
        let s = run("bit-r", &[("n", &n_s), ("block", &b_s)], 512, 1);
        assert_eq!(s.references(), 4 * n, "n = {n}, block = {block}");
        assert_eq!(s.count(AccessKind::Write), 2 * n, "n = {n}, block = {block}");
        // the array (4-byte elements) and the buffer of block^2 elements
        assert_eq!(s.distinct as u64, (4 * n).div_ceil(512) + (4 * block * block).div_ceil(512), "n = {n}, block = {block}");
    }
    // naive: the bitrev loop, with 4-byte elements
    let n = 1024u64;
    let swaps = (0..n).filter(|&i| i < (i.reverse_bits() >> 54)).count() as u64;
    let s = run("bit-r", &[("n", "1024"), ("method", "naive")], 512, 1);
    assert_eq!(s.references(), 4 * swaps);
    assert_eq!(s.distinct, 8);
    let wide = run("bit-r", &[("n", "1024"), ("method", "naive"), ("elem_bytes", "8")], 512, 1);
    assert_eq!(wide.refs, run("bitrev", &[("n", "1024")], 512, 1).refs, "8-byte naive bit-r is bitrev");
}

#[test]
fn workload_bit_r_blocked_walk_faults_far_less_than_the_naive_walk() {
    // 2^20 elements of 4 bytes: 1024 pages of 4 KiB. A tile pair of B = 32 touches 32
    // rows on each side (128 bytes each, one page each) and the 1-page buffer: the block
    // working set is 65 pages.
    let params = |method: &'static str| [("n", "1048576"), ("block", "32"), ("method", method)];
    let blocked = lru_curve("bit-r", &params("cobra"), 4096);
    let naive = lru_curve("bit-r", &params("naive"), 4096);
    assert_eq!((blocked.distinct_pages, naive.distinct_pages), (1025, 1024));
    for frames in [100u64, 200, 400, 800] {
        let (fb, fnv) = (blocked.faults_at(frames), naive.faults_at(frames));
        assert!(fb * 8 < fnv, "{frames} frames: blocked {fb}, naive {fnv}");
    }
    // with the whole array in memory, only the first touches
    assert_eq!(blocked.faults_at(1025), 1025);
    assert_eq!(naive.faults_at(1024), 1024);
    // above the block working set (65 pages) the pages of tile b's side stay in memory
    // from one tile to the next (32 tiles share them): a tile pair refaults the 32 rows of
    // tile rev b only, 512 tile pairs of 32 pages; below it tile b's side refaults as well
    let (f40, f100) = (blocked.faults_at(40), blocked.faults_at(100));
    assert!((512 * 32..512 * 32 + 1025).contains(&f100), "{f100}");
    assert!(f40 > f100 * 3 / 2, "{f40} vs {f100}");
}

#[test]
fn workload_bit_r_acquires_its_allotment_quickly() {
    // type 1: every page is touched within the first few percent of the run
    for method in ["cobra", "naive"] {
        let s = run("bit-r", &[("n", "262144"), ("method", method)], 4096, 1);
        let total = s.references();
        assert_eq!(s.distinct as usize, 256 + usize::from(method == "cobra"));
        let t = references_to_touch(&s, 256);
        assert!(t * 10 < total, "{method}: all pages after {t} of {total} references");
    }
}

#[test]
fn workload_bit_r_parameter_errors() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("n", "1000")], "parameter 'n': expected a power of two"),
        (&[("n", "2")], "parameter 'n'"),
        (&[("block", "3")], "parameter 'block': expected a power of two B with B^2 <= n"),
        (&[("n", "1024"), ("block", "64")], "parameter 'block'"),
        (&[("elem_bytes", "3")], "parameter 'elem_bytes': expected 1, 2, 4, 8 or 16"),
        (&[("elem_bytes", "32")], "parameter 'elem_bytes'"),
        (&[("method", "recursive")], "parameter 'method': expected one of cobra, naive"),
    ];
    for &(params, expected) in cases {
        let e = open_err("bit-r", params, 4096);
        assert!(e.starts_with("workload bit-r: ") && e.contains(expected) && !e.contains('\n'), "{e}");
    }
}

#[test]
fn workload_spec_gzip_layout() {
    // 512-byte pages, a 4 KiB window: tables of 16 (window) + 16 (prev) + 16 (head) + 8
    // (inbuf) + 4 (outbuf) + 16 (d_buf) + 16 (inflate tables) = 92 pages; then three
    // buffers of 24 KiB + 100 KiB (248 pages each), of which the input's 48 are used;
    // then the validation samples (one page).
    let (ps, tables, buf, used) = (512u64, 92u64, 248u64, 48u64);
    let s = run("spec-gzip", &[("harness", "spec"), ("files", "2"), ("file_kib", "24"), ("window_kib", "4"), ("kinds", "log,random")], ps, 1);
    let mut touched = std::collections::BTreeSet::new();
    touched.extend(s.refs.iter().map(|r| r.page));
    assert_eq!(touched.len() as u64, s.distinct as u64);
    let has = |r: std::ops::Range<u64>| r.filter(|p| touched.contains(p)).count() as u64;
    assert_eq!(has(0..48), 48, "window, prev and head");
    assert_eq!(has(76..92), 16, "the inflate tables");
    let [b0, b1, b2] = [tables, tables + buf, tables + 2 * buf];
    // buffer 0: the input, whole; buffer 2: only spec_init's byte every KiB (every other
    // page); buffer 1: the compressed data, at most the input's size (random data) or so
    assert_eq!(has(b0..b0 + used), used);
    assert_eq!(has(b0 + used..b0 + buf), 0);
    assert_eq!(touched.range(b2..b2 + buf).copied().collect::<Vec<_>>(), (0..used / 2).map(|k| b2 + 2 * k).collect::<Vec<_>>());
    let compressed = has(b1 + 1..b1 + buf);
    assert!(compressed >= used / 2 && compressed <= used + 4, "{compressed} compressed pages");
    assert_eq!(*touched.last().unwrap(), tables + 3 * buf, "the validation samples, last");
    // the first run gives back every page it touched before the second, once each; the
    // second run's memory is not freed (the process ends)
    let first_free = s.refs.iter().position(|r| r.kind == AccessKind::Free).unwrap();
    let mut run1: Vec<u64> = s.refs[..first_free].iter().map(|r| r.page).collect();
    run1.sort_unstable();
    run1.dedup();
    let frees: Vec<u64> = s.refs.iter().filter(|r| r.kind == AccessKind::Free).map(|r| r.page).collect();
    assert_eq!(frees, run1, "in page order, once");
    let kept = run("spec-gzip", &[("harness", "spec"), ("files", "2"), ("file_kib", "24"), ("window_kib", "4"), ("kinds", "log,random"), ("free_between", "false")], ps, 1);
    assert_eq!(kept.count(AccessKind::Free), 0);
    assert!(kept.refs.iter().all(|r| r.kind != AccessKind::Free));
    assert_eq!(kept.references(), s.references(), "the frees change no reference");
}

#[test]
fn workload_spec_gzip_levels_pass_over_both_buffers() {
    // every level compresses the whole input (buffer 0 read), clears it, uncompresses
    // into it (written again) and clears the compressed data: per level, buffer 0 is
    // read once through by the compression and written twice through
    // 4 KiB pages, a 32 KiB window: 78 pages of tables, then buffer 0
    let ps = 4096u64;
    let one = run("spec-gzip", &[("harness", "spec"), ("files", "1"), ("file_kib", "64"), ("level", "1")], ps, 3);
    let five = run("spec-gzip", &[("harness", "spec"), ("files", "1"), ("file_kib", "64")], ps, 3);
    assert_eq!(one.distinct, five.distinct, "the levels reuse the same memory");
    // input pages are written 1 (load) + 2 per level and read by each compression
    let b0 = 78u64;
    let writes = |s: &Stream| s.refs.iter().filter(|r| r.kind == AccessKind::Write && (b0..b0 + 16).contains(&r.page)).map(|r| r.repeat as u64).sum::<u64>();
    // spec_init writes 4 bytes of each page; a page is 512 words
    assert_eq!(writes(&one), 16 * (4 + 512 * 3));
    assert_eq!(writes(&five), 16 * (4 + 512 + 5 * 2 * 512));
    // one level is one pass of compress and uncompress
    let six = run("spec-gzip", &[("harness", "spec"), ("files", "1"), ("file_kib", "64"), ("level", "6")], ps, 3);
    assert!(six.references() > one.references());
}

#[test]
fn workload_spec_gzip_is_type_1_with_reuse_over_its_buffers() {
    let params = [("harness", "spec"), ("files", "1"), ("file_kib", "256"), ("window_kib", "32"), ("kinds", "image")];
    let s = run("spec-gzip", &params, 4096, 1);
    let footprint = s.distinct as u64;
    // type 1: spec_init touches the three buffers at once
    let t = references_to_touch(&s, (footprint * 9 / 10) as usize);
    assert!(t * 50 < s.references(), "90% of the pages after {t} of {} references", s.references());
    // the LRU curve: a knee near the window (window, prev, head and the buffers around
    // them: 78 pages), then a plateau of the passes over the buffers down to the
    // footprint, where only the first touches remain
    let lru = lru_curve("spec-gzip", &params, 4096);
    let (below, above) = (lru.faults_at(30), lru.faults_at(120));
    assert!(below > 20 * above, "30 frames: {below}, 120 frames: {above}");
    let half = footprint / 2;
    assert!(lru.faults_at(half) > 3 * footprint, "{} faults at {half} frames", lru.faults_at(half));
    assert_eq!(lru.faults_at(footprint), footprint);
    // below the footprint OPT keeps part of the buffers from level to level: well below LRU
    let opt = replay_faults("spec-gzip", &params, 4096, crate::policy::PolicyKind::Opt, half);
    assert_eq!(replay_faults("spec-gzip", &params, 4096, crate::policy::PolicyKind::Lru, half), lru.faults_at(half));
    assert!(opt * 10 < lru.faults_at(half) * 7, "OPT {opt}, LRU {} at {half} frames", lru.faults_at(half));
}

#[test]
fn workload_spikes_give_their_regions_back() {
    let params = [("refs", "100000"), ("base_pages", "50"), ("spike_pages", "200")];
    let (base, spike, second) = (50u64, 200u64, 214u64);
    let s = run("spikes", &[params[0], params[1], params[2], ("free_spikes", "true")], 4096, 9);
    let kept = run("spikes", &params, 4096, 9);
    assert_eq!(kept.refs, run("spikes", &[params[0], params[1], params[2], ("free_spikes", "false")], 4096, 9).refs);
    // the same references; the frees come in addition
    let references: Vec<Reference> = s.refs.iter().filter(|r| r.kind != AccessKind::Free).copied().collect();
    assert_eq!(references, kept.refs);
    assert_eq!(s.distinct, kept.distinct);
    let frees: Vec<u64> = s.refs.iter().filter(|r| r.kind == AccessKind::Free).map(|r| r.page).collect();
    assert_eq!(frees, (base..base + spike + second).collect::<Vec<_>>(), "each region, in order, once");
    // MAD: the base set, up by a spike, back down after it, twice
    let live = live_pages(&s);
    let peak = |lo: f64, hi: f64| {
        let n = live.len() as f64;
        *live[(lo * n) as usize..(hi * n) as usize].iter().max().unwrap()
    };
    assert_eq!(peak(0.0, 0.25), base);
    assert_eq!(peak(0.25, 0.5), base + spike);
    assert_eq!(peak(0.5, 0.65), base);
    assert_eq!(peak(0.65, 0.9), base + second);
    assert_eq!(*live.last().unwrap(), base);
    assert_eq!(*live_pages(&kept).last().unwrap(), base + spike + second);
    let e = open_err("spikes", &[("free_spikes", "sometimes")], 4096);
    assert_eq!(e, "workload spikes: parameter 'free_spikes': expected true or false, got 'sometimes'");
}

#[test]
fn workload_lu_temporary_schur_update_climbs_and_drops() {
    // n = 64 doubles (8 pages of 4 KiB per 64 rows: the matrix is 8 pages), block 8:
    // steps at k = 0, 8, ..., 56, the first seven with a temporary of (56 - k)^2 doubles
    let s = run("lu", &[("n", "64"), ("schur", "temporary"), ("block", "8")], 4096, 1);
    let (matrix, first_t) = (8u64, (56u64 * 56 * 8).div_ceil(4096));
    assert_eq!(s.distinct as u64, matrix + first_t);
    let live = live_pages(&s);
    assert_eq!(*live.iter().max().unwrap(), matrix + first_t);
    assert_eq!(*live.last().unwrap(), matrix, "the last temporary is freed");
    // seven hills, each climbing page by page from the matrix alone and back
    let mut hills = Vec::new();
    let mut top = 0;
    for w in live.windows(2) {
        if w[1] > w[0] && w[1] > matrix {
            top = top.max(w[1]);
        }
        if w[1] == matrix && w[0] > matrix {
            hills.push(top - matrix);
            top = 0;
        }
    }
    let expected: Vec<u64> = (1..8u64).map(|k| ((64 - 8 * k) * (64 - 8 * k) * 8).div_ceil(4096)).filter(|&p| p > 0).collect();
    assert_eq!(hills, expected);
    // in-place (the default) is the same program as before, whatever the block
    let plain = run("lu", &[("n", "64")], 4096, 1);
    assert_eq!(plain.refs, run("lu", &[("n", "64"), ("schur", "in-place"), ("block", "4")], 4096, 1).refs);
    assert_eq!(plain.distinct, 8);
    assert!(plain.refs.iter().all(|r| r.kind != AccessKind::Free));
    let e = open_err("lu", &[("schur", "recursive")], 4096);
    assert_eq!(e, "workload lu: parameter 'schur': expected one of in-place, temporary, got 'recursive'");
    let e = open_err("lu", &[("block", "0")], 4096);
    assert!(e.starts_with("workload lu: parameter 'block'"), "{e}");
}

/// Not a test of behaviour: the LRU fault curves (and OPT at a few sizes) of the
/// stand-ins of token-ordered-lru.txt, new and old. `cargo test --release -p
/// pagelab-core standins_report -- --ignored --nocapture`
#[test]
#[ignore]
fn standins_report() {
    use crate::policy::PolicyKind;
    let cases: &[(&str, &[(&str, &str)], &[f64])] = &[
        ("bitrev", &[("n", "524288")], &[0.05, 0.1, 0.25, 0.5, 0.75, 1.0]),
        ("bit-r", &[("n", "1048576")], &[0.05, 0.1, 0.25, 0.5, 0.75, 1.0]),
        ("bit-r", &[("n", "1048576"), ("method", "naive")], &[0.05, 0.1, 0.25, 0.5, 0.75, 1.0]),
        ("spec-gzip", &[("files", "1"), ("file_kib", "384"), ("level", "6")], &[0.05, 0.1, 0.25, 0.5, 0.75, 1.0]),
        ("spec-gzip", &[("harness", "spec"), ("files", "1"), ("file_kib", "384"), ("kinds", "image")], &[0.05, 0.1, 0.25, 0.5, 0.75, 1.0]),
        ("spikes", &[("base_pages", "300"), ("spike_pages", "800")], &[0.1, 0.25, 0.4, 0.5, 0.75, 1.0]),
        ("spikes", &[("base_pages", "300"), ("spike_pages", "800"), ("free_spikes", "true")], &[0.1, 0.25, 0.4, 0.5, 0.75, 1.0]),
        ("lu", &[("n", "300")], &[0.1, 0.25, 0.5, 0.75, 1.0]),
        ("lu", &[("n", "300"), ("schur", "temporary")], &[0.1, 0.25, 0.5, 0.75, 1.0]),
    ];
    for &(name, params, fractions) in cases {
        let t = Instant::now();
        let curve = lru_curve(name, params, 4096);
        let s = run(name, params, 4096, 1);
        let peak = *live_pages(&s).iter().max().unwrap();
        println!(
            "{name} {params:?}: {} references, {} records, {} pages (peak {peak} live), {:.1} s",
            curve.references,
            curve.records,
            curve.distinct_pages,
            t.elapsed().as_secs_f64()
        );
        for &f in fractions {
            let frames = ((curve.distinct_pages as f64 * f).round() as u64).max(1);
            let opt = replay_faults(name, params, 4096, PolicyKind::Opt, frames);
            println!("  {frames:>6} frames ({:>3.0}%): LRU {:>10}  OPT {:>10}  OPT/LRU {:.2}", f * 100.0, curve.faults_at(frames), opt, opt as f64 / curve.faults_at(frames) as f64);
        }
    }
}

// ---------------------------------------------------------------- compatibility (issue 15)

/// FNV-1a over every record of a workload's stream (page, kind, repeat, gap, id).
fn compat_stream_hash(name: &str, params: &[(&str, &str)], page_size: u64) -> (u64, u64) {
    let kv: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let mut src = crate::workload::open_workload(name, &kv, page_size, 1).unwrap();
    let mut batch = crate::trace::RefBatch::default();
    let (mut h, mut records) = (0xcbf2_9ce4_8422_2325u64, 0u64);
    loop {
        let n = src.next_batch(&mut batch).unwrap();
        if n == 0 {
            break;
        }
        for i in 0..n {
            for v in [batch.page[i], batch.kind[i] as u64, batch.repeat[i] as u64, batch.gap[i] as u64, batch.id[i] as u64] {
                for b in v.to_le_bytes() {
                    h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
                }
            }
            records += 1;
        }
    }
    (h, records)
}

/// The old workloads, as main (da31785) has them: names and parameters whose meaning is
/// kept; `extra` is what the new code needs to say to mean the same.
const COMPAT_STREAMS: &[(&str, &[(&str, &str)])] = &[
    ("bitrev", &[("n", "65536")]),
    ("spikes", &[("refs", "200000"), ("base_pages", "50"), ("spike_pages", "200")]),
    ("lu", &[("n", "64")]),
    ("spec-gzip", &[("files", "2"), ("file_kib", "128"), ("window_kib", "16"), ("level", "6")]),
    ("spec-gzip", &[("files", "1"), ("file_kib", "64")]),
];

/// System runs of the old workloads (JSON configurations).
fn compat_system_configs() -> Vec<String> {
    let pair = |token: &str, reclaim: &str, spikes_extra: &str| {
        format!(
            r#"{{"system": {{"frames": 220, "reclaim": "{reclaim}", "swap_out": "largest_rss", "free_pages": "batch"}}, "token": {{"policy": "{token}", "protect": "always", "hold_limit_s": 60.0, "unsuitable_s": 60.0, "self_take_limit": 1000}},
               "disk": {{"preset": "legacy"}}, "swap": {{"read_around": "none", "async_writes": "unbounded"}},
               "processes": [{{"name": "bitrev", "workload": "bitrev", "params": {{"n": 131072}}, "seed": 1, "cpu_ns_per_ref": 30000.0}},
                             {{"name": "spikes", "workload": "spikes", "params": {{"base_pages": 60, "spike_pages": 160, "second_spike": 1.07, "refs": 400000{spikes_extra}}}, "seed": 1, "cpu_ns_per_ref": 16000.0}}]}}"#
        )
    };
    vec![pair("none", "linux22", ""), pair("paper", "linux22", ""),
         r#"{"system": {"frames": 30, "reclaim": "bsd"}, "swap": {"clustering": "mclustering", "read_around": "bsd", "async_writes": "unbounded"}, "disk": {"preset": "legacy"},
             "processes": [{"name": "lu", "workload": "lu", "params": {"n": 160}, "seed": 1}]}"#.to_string()]
}

fn compat_system_summary(json: &str) -> Vec<[u64; 5]> {
    let cfg = crate::system::SystemConfig::from_json(json).unwrap();
    let r = crate::system::run_system(&cfg, &mut |_| true).unwrap();
    r.processes
        .iter()
        .map(|p| [p.counters.major_faults, p.counters.minor_faults, p.counters.page_outs, p.end_ns - p.start_ns, p.dedicated_ns])
        .collect()
}

fn compat_replay(name: &str, params: &[(&str, &str)]) -> Vec<u64> {
    use crate::policy::PolicyKind;
    let (n, kv) = (name.to_string(), params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>());
    let open = move || crate::workload::open_workload(&n, &kv, 4096, 1);
    let cfg = crate::replay::ReplayConfig { policies: vec![PolicyKind::Lru, PolicyKind::Opt, PolicyKind::CLOCK], frames: vec![40, 120], seed: 1, repeats: Default::default() };
    let mut out: Vec<u64> = crate::replay::replay(&open, &cfg, &mut |_| true).unwrap().iter().map(|r| r.faults).collect();
    let kv2: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let curve = crate::analysis::mrc(crate::workload::open_workload(name, &kv2, 4096, 1).unwrap().as_mut(), &mut |_| true).unwrap();
    out.extend([40u64, 120].map(|f| curve.faults_at(f)));
    out
}

/// Old workload names with old parameters give the streams, replays and timed runs of
/// main before issue 15 (da31785) bit for bit (the timed runs with the switches back to
/// the Linux 2.2 model and the disk of that engine): the values below were printed by this
/// code built on that commit. So the free records, the new stand-ins and the replay and
/// system paths that handle frees change nothing for a stream without frees.
#[test]
fn old_workloads_give_old_numbers_bit_for_bit() {
    let streams: &[(u64, u64)] = &COMPAT_OLD_STREAMS;
    for ((name, params), &old) in COMPAT_STREAMS.iter().zip(streams) {
        assert_eq!(compat_stream_hash(name, params, 4096), old, "{name} {params:?}");
    }
    // the new parameters' defaults are the old programs
    assert_eq!(compat_stream_hash("spikes", &[("refs", "200000"), ("base_pages", "50"), ("spike_pages", "200"), ("free_spikes", "false")], 4096), streams[1]);
    assert_eq!(compat_stream_hash("lu", &[("n", "64"), ("schur", "in-place"), ("block", "8")], 4096), streams[2]);
    assert_eq!(compat_stream_hash("spec-gzip", &[("files", "1"), ("file_kib", "64"), ("harness", "once")], 4096), streams[4]);
    let systems: &[&[[u64; 5]]] = &COMPAT_OLD_SYSTEMS;
    for (json, &old) in compat_system_configs().iter().zip(systems) {
        assert_eq!(compat_system_summary(json), old, "{json}");
    }
    assert_eq!(compat_replay("spikes", &[("refs", "200000"), ("base_pages", "50"), ("spike_pages", "200")]), COMPAT_OLD_REPLAY_SPIKES);
    assert_eq!(compat_replay("lu", &[("n", "160")]), COMPAT_OLD_REPLAY_LU);
    // and the new stand-ins do differ from them where they should
    let freed = compat_replay("spikes", &[("refs", "200000"), ("base_pages", "50"), ("spike_pages", "200"), ("free_spikes", "true")]);
    assert_ne!(freed, COMPAT_OLD_REPLAY_SPIKES);
}

/// Printed by `compat_stream_hash` at da31785, in the order of [`COMPAT_STREAMS`].
const COMPAT_OLD_STREAMS: [(u64, u64); 5] = [
    (9231095523668428837, 130304),
    (6627156539540845449, 199306),
    (6111675053881084613, 269081),
    (7947169643145377860, 1388559),
    (8329267821277122997, 484148),
];
/// Per process: major faults, minor faults, page-outs, run time, dedicated time (ns).
const COMPAT_OLD_SYSTEMS: [&[[u64; 5]]; 3] = [
    &[[55051, 286, 55242, 1654117256333, 7833856000], [96610, 655, 33878, 2043960583440, 6400391000]],
    &[[26985, 2265, 29096, 767808460426, 7833856000], [76135, 1175, 31687, 1242651493967, 6400391000]],
    &LU_SYSTEM,
];
/// LRU, OPT, CLOCK at 40 and 120 frames (replay), then LRU at 40 and 120 (the curve).
const COMPAT_OLD_REPLAY_SPIKES: [u64; 8] = [147981, 57758, 70333, 30161, 152430, 57830, 147981, 57758];
const COMPAT_OLD_REPLAY_LU: [u64; 8] = [2906, 50, 414, 50, 2824, 50, 2906, 50];
const LU_SYSTEM: [[u64; 5]; 1] = [[3085, 110, 2839, 24649788987, 84208400]];

/// Not a test of behaviour: references and footprints of token-lru's stand-ins at the
/// experiment's sizes, to set `cpu_ns_per_ref` so that a stand-in's run alone lasts as
/// long as its predecessor's. `cargo test -p pagelab-core --lib standins_sizes --
/// --ignored --nocapture`
#[test]
#[ignore]
fn standins_sizes() {
    let cases: &[(&str, &[(&str, &str)])] = &[
        ("bitrev", &[("n", "524288")]),
        ("bit-r", &[("n", "1048576")]),
        ("spec-gzip", &[("harness", "spec"), ("files", "1"), ("file_kib", "1290"), ("kinds", "image")]),
        ("spikes", &[("base_pages", "300"), ("spike_pages", "800"), ("second_spike", "1.07"), ("refs", "3000000"), ("free_spikes", "true")]),
        ("lu", &[("n", "300")]),
        ("lu", &[("n", "300"), ("schur", "temporary")]),
    ];
    for &(name, params) in cases {
        let mut src = open(name, params, 4096, 1);
        let mut batch = RefBatch::default();
        let (mut references, mut records, mut live, mut peak) = (0u64, 0u64, std::collections::HashSet::new(), 0usize);
        while src.next_batch(&mut batch).unwrap() > 0 {
            for i in 0..batch.len() {
                references += batch.repeat[i] as u64;
                records += 1;
                if batch.kind[i] == AccessKind::Free {
                    live.remove(&batch.page[i]);
                } else {
                    live.insert(batch.page[i]);
                    peak = peak.max(live.len());
                }
            }
        }
        println!("SIZE {name} {params:?}: {references} references, {records} records, {} pages, peak {peak} live", src.distinct_pages());
    }
}
