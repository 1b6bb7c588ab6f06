//! Timed-system throughput: page touches per second of wall time on the two-process
//! experiment of token-ordered-lru.txt (LU-1/LU-2, n = 300, half the memory they need),
//! one machine run without the dedicated runs. `cargo bench -p pagelab-bench --bench system`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pagelab_core::system::config::{SystemConfig, TokenPolicyKind};
use pagelab_core::system::machine::Machine;

fn config(policy: TokenPolicyKind) -> SystemConfig {
    let json = r#"{"system": {"frames": 176, "cpu_ns_per_ref": 3000.0, "sample_ms": 100.0},
        "processes": [{"name": "lu-1", "workload": "lu", "params": {"n": 300}},
                      {"name": "lu-2", "workload": "lu", "params": {"n": 300}}]}"#;
    let mut cfg = SystemConfig::from_json(json).unwrap();
    cfg.token.policy = policy;
    cfg
}

fn throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("timed-system-lu-pair");
    group.sample_size(10);
    for policy in [TokenPolicyKind::None, TokenPolicyKind::Paper] {
        let cfg = config(policy);
        let touches: u64 = Machine::new(&cfg, 176, 1 << 16, None).unwrap().run(&mut |_| true).unwrap().processes.iter().map(|p| p.counters.records).sum();
        group.throughput(Throughput::Elements(touches));
        group.bench_function(format!("{policy:?}"), |b| {
            b.iter(|| Machine::new(&cfg, 176, 1 << 16, None).unwrap().run(&mut |_| true).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);
