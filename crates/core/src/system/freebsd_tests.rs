//! End-to-end checks of `reclaim = "freebsd8"` (freebsd.rs); the unit tests of its rules
//! are beside the code.

use super::config::*;
use super::tests::{config, process};
use super::*;

fn run(cfg: &SystemConfig) -> SystemResult {
    run_system(cfg, &mut |_| true).unwrap()
}

fn freebsd(frames: u64, procs: Vec<ProcessConfig>, clustering: ClusteringKind) -> SystemConfig {
    let mut cfg = config(frames, procs);
    cfg.system.reclaim = ReclaimKind::Freebsd8;
    cfg.swap.clustering = clustering;
    cfg.swap.read_around = ReadAroundKind::Bsd;
    cfg
}

fn counter(r: &SystemResult, key: &str) -> u64 {
    r.reclaim_counters.iter().find(|(k, _)| k == key).map(|(_, v)| *v).unwrap_or_else(|| panic!("no counter {key}"))
}

/// The keys of `[system.freebsd]` and the combinations freebsd8 refuses: one line each,
/// naming the key.
#[test]
fn freebsd_config_errors_name_the_key() {
    let with = |system: &str, rest: &str| {
        let text = format!(r#"{{"system": {{"frames": 3000{system}}}{rest}, "processes": [{{"name": "a", "workload": "scan"}}]}}"#);
        SystemConfig::from_json(&text).map(|_| ()).map_err(|e| e.to_string())
    };
    assert!(with(r#", "reclaim": "freebsd8", "freebsd": {"memory_pages": 262144, "cluster_scan": "paper", "launder_counts": "pages"}"#, "").is_ok());
    for (system, rest, key) in [
        (r#", "reclaim": "freebsd8", "freebsd": {"bogus": 1}"#, "", "system.freebsd.bogus"),
        (r#", "reclaim": "freebsd8", "freebsd": {"launder_counts": "all"}"#, "", "system.freebsd.launder_counts"),
        (r#", "reclaim": "freebsd8", "freebsd": {"pageout_page_count": 0}"#, "", "system.freebsd.pageout_page_count"),
        (r#", "reclaim": "freebsd8", "freebsd": {"memory_pages": 0}"#, "", "system.freebsd.memory_pages"),
        (r#", "reclaim": "bsd", "freebsd": {"prefault": false}"#, "", "system.freebsd"),
        (r#", "reclaim": "freebsd8""#, r#", "token": {"policy": "paper"}"#, "system.reclaim"),
        (r#", "reclaim": "freebsd8""#, r#", "gang": {"nodes": 2}"#, "system.reclaim"),
        (r#", "reclaim": "freebsd8""#, r#", "swap": {"read_around": "linux"}"#, "swap.read_around"),
        (r#", "reclaim": "freebsd8", "dead_list": "dp-approx""#, "", "system.dead_list"),
    ] {
        let e = with(system, rest).unwrap_err();
        assert!(e.starts_with(key), "{system}{rest}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // 8.2's targets for a memory too small to hold them
    let text = r#"{"system": {"frames": 40, "reclaim": "freebsd8"}, "processes": [{"name": "a", "workload": "scan"}]}"#;
    let e = SystemConfig::from_json(text).unwrap_err().to_string();
    assert!(e.starts_with("system.freebsd.memory_pages: FreeBSD 8.2's targets for 40 pages"), "{e}");
}

/// With memory for every page nothing is paged: freebsd8 runs the processes exactly as
/// Linux 2.2's reclaim does (the same faults, the same time).
#[test]
fn without_pressure_freebsd8_changes_nothing() {
    let procs = vec![process("lu", "lu", &[("n", 100)]), process("w", "scan", &[("pages", 300), ("passes", 3), ("write", 1)])];
    let mut base = config(20_000, procs.clone());
    base.system.quantum_ms = 0.5;
    let mut fb = freebsd(20_000, procs, ClusteringKind::Bsd);
    fb.system.quantum_ms = 0.5;
    let (a, b) = (run(&base), run(&fb));
    assert_eq!(a.processes, b.processes);
    assert_eq!(b.disk_writes + b.disk_reads, 0);
    assert_eq!(counter(&b, "freebsd_daemon_scans"), 0);
}

/// Section 3.4's first situation on the FreeBSD model: a program writing its pages in
/// order gets full clusters (vm_pageout_page_count = 16 pages on a machine of 2000 pages
/// or more), under BSD clustering and under mClustering.
#[test]
fn a_sequential_writer_gets_full_clusters() {
    let writer = || vec![process("w", "scan", &[("pages", 3000), ("passes", 3), ("write", 1)])];
    for clustering in [ClusteringKind::Bsd, ClusteringKind::Mclustering] {
        let r = run(&freebsd(2000, writer(), clustering));
        assert!(r.disk_writes > 100, "{clustering:?}: {}", r.disk_writes);
        let full = r.write_sizes.get(16).copied().unwrap_or(0);
        assert!(full * 10 >= r.disk_writes * 9, "{clustering:?}: mostly full clusters: {:?}", r.write_sizes);
        assert!(r.write_sizes.len() <= 17, "{clustering:?}: {:?}", r.write_sizes);
        assert!(counter(&r, "freebsd_clusters_laundered") > 0);
    }
}

/// mClustering runs where 8.2 launders a cluster: its writes carry whole clusters, at
/// most a buffer each, and never outnumber BSD clustering's on the same run. LU on a
/// memory of 1 GB scaled to 240 frames (as the experiment), deterministic.
#[test]
fn mclustering_collects_8_2_clusters() {
    let lu = || vec![process("lu", "lu", &[("n", 400)])];
    let scaled = |c: ClusteringKind| {
        let mut cfg = freebsd(240, lu(), c);
        cfg.system.freebsd.memory_pages = Some(262144);
        cfg
    };
    let bsd = run(&scaled(ClusteringKind::Bsd));
    let mcl = run(&scaled(ClusteringKind::Mclustering));
    assert!(bsd.disk_writes > 500, "{}", bsd.disk_writes);
    assert!(mcl.disk_writes <= bsd.disk_writes, "{} vs {}", mcl.disk_writes, bsd.disk_writes);
    assert!(mcl.write_sizes.len() <= 17);
    assert!(counter(&mcl, "freebsd_soft_faults") > 0);
    assert_eq!(mcl, run(&scaled(ClusteringKind::Mclustering)));
}

/// reclaim = "bsd" is the old simplified model: its numbers on a small configuration are
/// those of the engine before freebsd8 was added.
#[test]
fn bsd_numbers_are_unchanged() {
    for (clustering, expected) in [(ClusteringKind::Bsd, EXPECTED_BSD as fn() -> Numbers), (ClusteringKind::Mclustering, EXPECTED_MCL)] {
        let mut cfg = config(100, vec![process("lu", "lu", &[("n", 200)]), process("s", "scan", &[("pages", 150), ("passes", 3), ("write", 1)])]);
        cfg.system.reclaim = ReclaimKind::Bsd;
        cfg.system.quantum_ms = 1.0;
        cfg.swap.clustering = clustering;
        cfg.swap.read_around = ReadAroundKind::Bsd;
        let r = run(&cfg);
        let majors: Vec<u64> = r.processes.iter().map(|p| p.counters.major_faults).collect();
        let ends: Vec<u64> = r.processes.iter().map(|p| p.end_ns).collect();
        let got = (r.end_ns, r.disk_writes, r.disk_reads, r.pages_written, r.pages_read, r.prefetched, majors, ends);
        assert_eq!(got, expected(), "{clustering:?}");
    }
}

type Numbers = (u64, u64, u64, u64, u64, u64, Vec<u64>, Vec<u64>);

/// The engine's numbers for this configuration before freebsd8 was added (commit
/// da31785, measured on an unmodified checkout).
#[allow(non_snake_case)]
fn EXPECTED_BSD() -> Numbers {
    (2047903560, 110, 121, 580, 596, 475, vec![66, 55], vec![2047903560, 1763944575])
}

#[allow(non_snake_case)]
fn EXPECTED_MCL() -> Numbers {
    (1808970208, 54, 121, 580, 596, 475, vec![66, 55], vec![1808970208, 1533544557])
}
