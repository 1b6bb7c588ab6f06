//! The paper's qualitative findings (numa-page-migration.txt section 5), each on a small
//! case, and the machine's bookkeeping.

use super::config::{Migration, NumaConfig};
use super::*;

fn config(workload: &str, params: &[(&str, serde_json::Value)], page_size: u64, migration: Migration) -> NumaConfig {
    let mut cfg = NumaConfig { page_size, migration, ..NumaConfig::default() };
    cfg.workload.name = workload.to_string();
    cfg.workload.params = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    cfg
}

fn run(cfg: &NumaConfig) -> NumaResult {
    run_numa(cfg, &mut |_| true).unwrap()
}

fn vecmat(repeat: i64, page_size: u64, migration: Migration) -> NumaConfig {
    config("vecmat", &[("n", 256.into()), ("procs", 4.into()), ("repeat", repeat.into())], page_size, migration)
}

fn jacobi(layout: &str, page_size: u64, migration: Migration) -> NumaConfig {
    config("jacobi-numa", &[("n", 256.into()), ("procs", 16.into()), ("iterations", 3.into()), ("layout", layout.into())], page_size, migration)
}

/// Section 5.1: with 10-20 repeat references and 2 KiB pages, a daemon's migrations
/// beat no migration, and Foresight (each page moved just before its new user needs
/// it) beats the daemon: None and Foresight bracket the daemon.
#[test]
fn migration_pays_off_for_vector_matrix_with_repeat_references() {
    for repeat in [10, 20] {
        let none = run(&vecmat(repeat, 2048, Migration::None));
        let foresight = run(&vecmat(repeat, 2048, Migration::Foresight));
        let daemon = run(&vecmat(repeat, 2048, Migration::Daemons));
        assert!(daemon.migrations() > 0);
        assert!(foresight.mean_ns() < daemon.mean_ns(), "repeat {repeat}: foresight {} daemon {}", foresight.mean_ns(), daemon.mean_ns());
        assert!(daemon.mean_ns() < none.mean_ns(), "repeat {repeat}: daemon {} none {}", daemon.mean_ns(), none.mean_ns());
        assert!(daemon.remote_refs < none.remote_refs);
    }
}

/// Section 5.3: in Jacobi the placement is already the best, so the daemon only adds
/// contention; pages laid out horizontally, spanning several partitions, make every run
/// much slower than pages inside one partition (vertical), and migration cannot repair
/// it (each page has several heavy users).
#[test]
fn jacobi_gains_nothing_and_horizontal_pages_degrade_it() {
    let none_v = run(&jacobi("vertical", 1024, Migration::None));
    let daemon_v = run(&jacobi("vertical", 1024, Migration::Daemons));
    assert!(daemon_v.mean_ns() >= none_v.mean_ns(), "daemon {} none {}", daemon_v.mean_ns(), none_v.mean_ns());
    let none_h = run(&jacobi("horizontal", 1024, Migration::None));
    let daemon_h = run(&jacobi("horizontal", 1024, Migration::Daemons));
    assert!(none_h.mean_ns() > 2.0 * none_v.mean_ns(), "horizontal {} vertical {}", none_h.mean_ns(), none_v.mean_ns());
    assert!(daemon_h.mean_ns() > 2.0 * daemon_v.mean_ns(), "horizontal {} vertical {}", daemon_h.mean_ns(), daemon_v.mean_ns());
    assert!((daemon_h.mean_ns() / none_h.mean_ns() - 1.0).abs() < 0.15, "daemon {} none {}", daemon_h.mean_ns(), none_h.mean_ns());
    // vertical pages of one partition: only the partition edges are read remotely
    assert!(none_v.remote_refs * 50 < none_v.local_refs);
}

/// Section 5.3, Table 6: aging with enough bits approximates a Usage field where one
/// Referenced bit does not (Jacobi, where the boundary pages are shared).
#[test]
fn aging_with_enough_bits_approximates_usage() {
    let time = |history: &str| {
        let mut cfg = jacobi("horizontal", 1024, Migration::Daemons);
        cfg.history = history.to_string();
        run(&cfg).mean_ns()
    };
    let usage = time("usage");
    let gap = |h: &str| (time(h) - usage).abs() / usage;
    let (bit, aging8) = (gap("referenced"), gap("aging:8"));
    assert!(aging8 <= bit, "aging:8 off by {aging8}, a Referenced bit by {bit}");
    assert!(aging8 < 0.1, "aging:8 off by {aging8}");
}

/// Section 3.2 and 5.1: a second daemon halves each daemon's partition, so passes come
/// faster (responsiveness), at the price of more lock contention with the processors.
#[test]
fn more_daemons_trade_contention_for_responsiveness() {
    let with = |daemons: u32| {
        let mut cfg = vecmat(10, 1024, Migration::Daemons);
        cfg.daemons = daemons;
        run(&cfg)
    };
    let (one, two) = (with(1), with(2));
    let passes = |r: &NumaResult| r.daemons.iter().map(|d| d.passes).sum::<u64>() as f64 / r.max_ns() as f64;
    assert!(passes(&two) > 1.5 * passes(&one), "passes per ns: {} against {}", passes(&two), passes(&one));
    assert!(two.lock_wait_ns > one.lock_wait_ns, "processor lock waits: {} against {}", two.lock_wait_ns, one.lock_wait_ns);
}

#[test]
fn deterministic_and_counts_add_up() {
    let cfg = vecmat(10, 1024, Migration::Daemons);
    let (a, b) = (run(&cfg), run(&cfg));
    assert_eq!(a, b);
    let total: u64 = 256 * 256 * 3 / 4 * 10;
    assert_eq!(a.local_refs + a.remote_refs, total);
    // a run without pressure for locks: None, local accesses only on the rows' own nodes
    let none = run(&vecmat(1, 1024, Migration::None));
    assert_eq!(none.lock_wait_ns, 0);
    assert!(none.migrations() == 0 && none.daemons.is_empty());
}

#[test]
fn configuration_errors_name_the_key() {
    for (json, key) in [
        (r#"{"workload": {"name": "vecmat"}, "page_size": 1000}"#, "numa.page_size"),
        (r#"{"workload": {"name": "vecmat"}, "history": "aging:9"}"#, "numa.history"),
        (r#"{"workload": {"name": "vecmat"}, "remote_factor": 0.5}"#, "numa.remote_factor"),
        (r#"{"workload": {"name": "vecmat"}, "migration": "daemons", "daemons": 0}"#, "numa.daemons"),
        (r#"{"page_size": 1024}"#, "numa.workload"),
        (r#"{"workload": {"name": "vecmat"}, "bogus": 1}"#, "bogus"),
    ] {
        let e = NumaConfig::from_json(json).unwrap_err().to_string();
        assert!(e.contains(key) && !e.contains('\n'), "{json}: {e}");
    }
    let mut cfg = vecmat(1, 1024, Migration::None);
    cfg.workload.name = "nosuch".into();
    assert!(run_numa(&cfg, &mut |_| true).unwrap_err().to_string().contains("nosuch"));
}

/// Issue 20: costs whose nanoseconds cannot be represented are refused naming the key
/// (local_ns = 1e30 made the run hang on wrapped times); the clock is checked.
#[test]
fn absurd_costs_are_refused_and_the_clock_is_checked() {
    use crate::numa::NumaConfig;
    let with = |extra: &str| NumaConfig::from_json(&format!(r#"{{"page_size": 2048, {extra} "workload": {{"name": "vecmat", "params": {{"n": 64, "procs": 4, "repeat": 2}}}}}}"#));
    for (extra, key) in [
        (r#""local_ns": 1e30,"#, "numa.local_ns"),
        (r#""local_ns": 1e13, "remote_factor": 100,"#, "numa.remote_factor"),
        (r#""block_us": 1e30,"#, "numa.block_us"),
        (r#""examine_ns": 1e15,"#, "numa.examine_ns"),
        (r#""copy_ns_per_byte": 1e30,"#, "numa.copy_ns_per_byte"),
        (r#""pte_update_ns": 1e12,"#, "numa.pte_update_ns"),
    ] {
        let e = with(extra).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{key}: expected costs of at most one simulated day")), "{extra}: {e}");
    }
    // a day per access (allowed) over more references than 2^63 ns hold
    let big = r#"{"page_size": 2048, "local_ns": 86400e9, "remote_factor": 1, "workload": {"name": "vecmat", "params": {"n": 256, "procs": 4, "repeat": 20}}}"#;
    let cfg = NumaConfig::from_json(big).unwrap();
    let e = crate::numa::run_numa(&cfg, &mut |_| true).unwrap_err().to_string();
    assert!(e.starts_with("numa: simulated time exceeds 2^63 ns"), "{e}");
}
