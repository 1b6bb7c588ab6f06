//! Replay throughput on the foundation issue's benchmark trace: Zipf(1.0) references
//! over 750,000 pages, read from a pagelab trace file, single simulation per run.
//! `cargo bench -p pagelab-bench` (PAGELAB_BENCH_REFS overrides the 10M references).
//! Throughput is reported in references per second.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pagelab_core::analysis::{mrc, opt_mrc};
use pagelab_core::policy::PolicyKind;
use pagelab_core::replay::{replay, ReplayConfig};
use pagelab_core::trace::{convert, open_trace, TraceFormat};
use pagelab_core::workload::open_workload;

fn bench_trace(refs: u64) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pagelab-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("zipf.plt");
    let params = vec![
        ("refs".to_string(), refs.to_string()),
        ("pages".to_string(), "750000".to_string()),
        ("alpha".to_string(), "1.0".to_string()),
    ];
    let mut src = open_workload("zipf", &params, 4096, 1).unwrap();
    convert(src.as_mut(), &path, TraceFormat::Pagelab, false, &mut |_| true).unwrap();
    path
}

fn throughput(c: &mut Criterion) {
    let refs: u64 = std::env::var("PAGELAB_BENCH_REFS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000_000);
    let path = bench_trace(refs);
    let open = || open_trace(&path, None, None);
    let references = {
        let mut src = open().unwrap();
        pagelab_core::trace::trace_info(src.as_mut(), &mut |_| true).unwrap().references
    };
    let frames = 75_000;
    let mut group = c.benchmark_group("zipf-750k-pages");
    group.sample_size(10);
    group.throughput(Throughput::Elements(references));
    group.bench_function("read", |b| {
        b.iter(|| {
            let mut src = open().unwrap();
            let mut batch = Default::default();
            let mut n = 0;
            while src.next_batch(&mut batch).unwrap() > 0 {
                n += batch.id.len();
            }
            n
        })
    });
    for policy in [PolicyKind::Lru, PolicyKind::CLOCK, PolicyKind::Fifo, PolicyKind::Random, PolicyKind::Opt] {
        let cfg = ReplayConfig { policies: vec![policy], frames: vec![frames], seed: 1, repeats: Default::default() };
        group.bench_function(policy.name(), |b| b.iter(|| replay(&open, &cfg, &mut |_| true).unwrap()));
    }
    group.bench_function("mrc-all-sizes", |b| {
        b.iter(|| {
            let mut src = open().unwrap();
            mrc(src.as_mut(), &mut |_| true).unwrap()
        })
    });
    group.bench_function("mrc-opt-all-sizes", |b| {
        b.iter(|| {
            let mut src = open().unwrap();
            opt_mrc(src.as_mut(), &mut |_| true).unwrap()
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

criterion_group!(benches, throughput);
criterion_main!(benches);
