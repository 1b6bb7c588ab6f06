//! Tests of the NUMA workloads through the registry (`list`, `open`): parameters,
//! errors, placement. Each workload's own file tests its streams.

use super::{block_of, block_start, isqrt, list, open, PairCursor};
use crate::numa::stream::Op;
use crate::Error;

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn open_err(name: &str, params: &[(&str, &str)]) -> String {
    match open(name, &kv(params), 1) {
        Ok(_) => panic!("{name} {params:?}: expected an error"),
        Err(e @ Error::Invalid { .. }) => e.to_string(),
        Err(e) => panic!("expected Error::Invalid, got {e:?}"),
    }
}

#[test]
fn list_names_and_parameters() {
    let names: Vec<&str> = list().iter().map(|w| w.name).collect();
    assert_eq!(names, ["vecmat", "spmv-csr", "jacobi-numa", "wave"]);
    for w in list() {
        assert!(!w.summary.is_empty() && !w.summary.contains('\n'));
        let procs = w.params.iter().find(|p| p.name == "procs").expect("every workload takes procs");
        assert_eq!(procs.default, "16");
        // Defaults open, with the default number of processors.
        let opened = open(w.name, &[], 1).unwrap();
        assert_eq!(opened.name, w.name);
        assert_eq!(opened.streams.len(), 16);
    }
}

#[test]
fn bad_parameters_are_one_line_errors_naming_the_parameter() {
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [&'a str]);
    let cases: &[Case] = &[
        ("jacobi-numa", &[("procs", "15")], &["workload jacobi-numa", "'procs'", "perfect square", "15"]),
        ("wave", &[("procs", "8")], &["workload wave", "'procs'", "perfect square"]),
        ("vecmat", &[("procs", "15")], &["workload vecmat", "'procs'", "even"]),
        ("spmv-csr", &[("procs", "3")], &["workload spmv-csr", "'procs'", "even"]),
        ("vecmat", &[("procs", "0")], &["'procs'", "from 1 to 65536"]),
        ("vecmat", &[("procs", "70000")], &["'procs'"]),
        ("spmv-csr", &[("matrix", "042")], &["workload spmv-csr", "'matrix'", "003, 009, 014, 021", "042"]),
        ("spmv-csr", &[("procs", "400")], &["'procs'", "147 rows"]),
        ("vecmat", &[("n", "0")], &["workload vecmat", "'n'", "got '0'"]),
        ("vecmat", &[("n", "7")], &["'n'", "procs/2 = 8"]),
        ("jacobi-numa", &[("n", "0")], &["workload jacobi-numa", "'n'"]),
        ("jacobi-numa", &[("n", "3")], &["'n'", "sqrt(procs) = 4"]),
        ("wave", &[("n", "0")], &["workload wave", "'n'"]),
        ("wave", &[("steps", "0")], &["'steps'"]),
        ("jacobi-numa", &[("iterations", "-1")], &["'iterations'"]),
        ("jacobi-numa", &[("layout", "diagonal")], &["'layout'", "horizontal, vertical", "diagonal"]),
        ("vecmat", &[("repeat", "0")], &["'repeat'"]),
        ("vecmat", &[("repeat", "5000000000")], &["'repeat'"]),
        ("wave", &[("sizes", "3")], &["workload wave", "unknown parameter 'sizes'", "procs, n, steps"]),
        ("wave", &[("n", "3"), ("n", "4")], &["'n' given twice"]),
        ("wave", &[("layout", "diagonal")], &["workload wave", "'layout'", "blocks, rows", "diagonal"]),
        ("wave", &[("align", "3000")], &["workload wave", "'align'", "power of two", "3000"]),
        ("surface", &[], &["unknown workload 'surface'", "vecmat, spmv-csr, jacobi-numa, wave"]),
    ];
    for (name, params, needles) in cases {
        let message = open_err(name, params);
        assert!(!message.contains('\n'), "{message}");
        for needle in *needles {
            assert!(message.contains(needle), "{name} {params:?}: '{message}' lacks '{needle}'");
        }
    }
}

#[test]
fn homes_cover_the_address_space_with_valid_nodes() {
    let cases: &[(&str, &[(&str, &str)])] = &[
        ("vecmat", &[]),
        ("vecmat", &[("procs", "6"), ("n", "101")]),
        ("spmv-csr", &[]),
        ("spmv-csr", &[("matrix", "009")]),
        ("spmv-csr", &[("matrix", "014"), ("procs", "10")]),
        ("spmv-csr", &[("matrix", "021"), ("procs", "2")]),
        ("jacobi-numa", &[]),
        ("jacobi-numa", &[("layout", "vertical")]),
        ("jacobi-numa", &[("procs", "9"), ("n", "100"), ("layout", "vertical")]),
        ("jacobi-numa", &[("procs", "25"), ("n", "37")]),
        ("wave", &[]),
        ("wave", &[("procs", "9")]),
        ("wave", &[("procs", "1"), ("n", "5")]),
        ("wave", &[("layout", "rows")]),
        ("wave", &[("procs", "9"), ("n", "10"), ("align", "4")]),
    ];
    for (name, params) in cases {
        let w = open(name, &kv(params), 1).unwrap();
        let procs = w.streams.len();
        let mut seen = vec![false; procs];
        for addr in 0..w.bytes {
            let node = (w.home)(addr) as usize;
            assert!(node < procs, "{name} {params:?}: address {addr} on node {node}");
            seen[node] = true;
        }
        // Every processor holds part of the data; out-of-range addresses stay valid.
        assert!(seen.iter().all(|&s| s), "{name} {params:?}");
        assert!(((w.home)(w.bytes + 12345) as usize) < procs);
    }
}

#[test]
fn streams_are_deterministic() {
    for w in list() {
        let ops = |seed: u64| -> Vec<Vec<Op>> {
            let params = if w.name == "wave" || w.name == "jacobi-numa" { kv(&[("n", "20")]) } else { Vec::new() };
            let opened = open(w.name, &params, seed).unwrap();
            opened.streams.into_iter().map(|s| s.take(5000).collect()).collect()
        };
        assert_eq!(ops(9), ops(9), "{}", w.name);
    }
}

#[test]
fn block_split_helpers() {
    for len in 1..60u64 {
        for blocks in 1..=len {
            let mut k = 0;
            for i in 0..len {
                while block_start(k + 1, len, blocks) <= i {
                    k += 1;
                }
                assert_eq!(block_of(i, len, blocks), k, "item {i} of {len} in {blocks} blocks");
            }
            assert_eq!(block_start(blocks, len, blocks), len);
        }
    }
    for x in 0..10_000u64 {
        let r = isqrt(x);
        assert!(r * r <= x && (r + 1) * (r + 1) > x);
    }
}

#[test]
fn pair_cursor_never_hands_out_a_row_twice() {
    let c = PairCursor::new(10, 14);
    assert_eq!(c.take(true), Some(10));
    assert_eq!(c.take(false), Some(13));
    assert_eq!(c.take(false), Some(12));
    assert_eq!(c.take(true), Some(11));
    assert_eq!(c.take(true), None);
    assert_eq!(c.take(false), None);
    // Two threads racing over one block take every row exactly once.
    let c = std::sync::Arc::new(PairCursor::new(0, 100_000));
    let handles: Vec<_> = [true, false]
        .into_iter()
        .map(|top| {
            let c = c.clone();
            std::thread::spawn(move || std::iter::from_fn(|| c.take(top)).collect::<Vec<u32>>())
        })
        .collect();
    let mut all: Vec<u32> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    all.sort_unstable();
    assert_eq!(all, (0..100_000).collect::<Vec<u32>>());
}
