//! End-to-end checks of the timed system on small workloads.

use super::config::*;
use super::*;

pub(super) fn process(name: &str, workload: &str, params: &[(&str, i64)]) -> ProcessConfig {
    ProcessConfig {
        name: name.to_string(),
        workload: Some(workload.to_string()),
        params: params.iter().map(|(k, v)| (k.to_string(), serde_json::Value::from(*v))).collect(),
        trace: None,
        format: None,
        seed: Some(1),
        start_ms: 0.0,
        cpu_ns_per_ref: None,
        use_gaps: false,
        priority: false,
    }
}

pub(super) fn config(frames: u64, processes: Vec<ProcessConfig>) -> SystemConfig {
    let json = format!(r#"{{"system": {{"frames": {frames}}}, "processes": []}}"#);
    let mut cfg = SystemConfig::from_json(&json).unwrap_or_else(|_| {
        // an empty process list does not validate; build it field by field instead
        let text = format!(r#"{{"system": {{"frames": {frames}}}, "processes": [{{"name": "x", "workload": "scan"}}]}}"#);
        SystemConfig::from_json(&text).unwrap()
    });
    cfg.processes = processes;
    cfg
}

fn run(cfg: &SystemConfig) -> SystemResult {
    run_system(cfg, &mut |_| true).unwrap()
}

#[test]
fn alone_with_enough_memory_there_are_no_major_faults() {
    let cfg = config(100_000, vec![process("lu", "lu", &[("n", 64)])]);
    let r = run(&cfg);
    let p = &r.processes[0];
    assert_eq!(p.major_faults, 0);
    assert_eq!(p.page_outs, 0);
    assert_eq!(p.minor_faults, 8); // 64*64*8 bytes = 8 pages, first touches
    assert!((p.slowdown() - 1.0).abs() < 1e-9, "{}", p.slowdown());
    assert!(p.references > 0 && p.end_ns > 0);
}

#[test]
fn two_loops_that_do_not_fit_page_and_slow_down() {
    let procs = vec![
        process("a", "scan", &[("pages", 300), ("passes", 20), ("write", 1)]),
        process("b", "scan", &[("pages", 300), ("passes", 20), ("write", 1)]),
    ];
    let mut cfg = config(400, procs);
    // a pass takes 6 us: slices short enough that the two interleave
    cfg.system.quantum_ms = 0.002;
    let r = run(&cfg);
    for p in &r.processes {
        assert!(p.major_faults > 100, "{}: {}", p.name, p.major_faults);
        assert!(p.page_outs > 100);
        assert!(p.slowdown() > 2.0, "{}: {}", p.name, p.slowdown());
    }
    assert!(r.disk_reads > 0 && r.disk_writes > 0);
    // the series cover the run
    assert_eq!(r.series.t_s.len(), r.processes[0].series.rss.len());
}

#[test]
fn deterministic() {
    let procs = vec![process("a", "zipf", &[("pages", 2000), ("refs", 200_000)]), process("b", "lu", &[("n", 100)])];
    let cfg = config(1500, procs);
    assert_eq!(run(&cfg), run(&cfg));
}

#[test]
fn config_errors_name_the_key() {
    let e = SystemConfig::from_json(r#"{"system": {"frames": 10, "bogus": 1}, "processes": []}"#).unwrap_err().to_string();
    assert!(e.contains("system") && e.contains("bogus"), "{e}");
    let e = SystemConfig::from_json(r#"{"system": {"frames": 0}, "processes": [{"name": "a", "workload": "scan"}]}"#).unwrap_err().to_string();
    assert!(e.contains("system.frames"), "{e}");
    let e = SystemConfig::from_json(r#"{"system": {"frames": 100}, "processes": [{"name": "a"}]}"#).unwrap_err().to_string();
    assert!(e.contains("processes[0]"), "{e}");
    let e = SystemConfig::from_json(r#"{"system": {"frames": 100}, "token": {"policy": "magic"}, "processes": [{"name": "a", "workload": "scan"}]}"#).unwrap_err().to_string();
    assert!(e.contains("token.policy"), "{e}");
}

fn with_token(mut cfg: SystemConfig, policy: TokenPolicyKind) -> SystemConfig {
    cfg.token.policy = policy;
    cfg
}

#[test]
fn with_memory_for_both_the_token_changes_nothing() {
    let procs = vec![process("a", "lu", &[("n", 120)]), process("b", "zipf", &[("pages", 500), ("refs", 300_000)])];
    let mut cfg = config(5000, procs);
    cfg.system.quantum_ms = 0.5;
    let base = run(&cfg);
    assert_eq!(base.processes.iter().map(|p| p.major_faults).sum::<u64>(), 0);
    for policy in [TokenPolicyKind::Paper, TokenPolicyKind::Linux2620] {
        let r = run(&with_token(cfg.clone(), policy));
        assert_eq!(r.processes, base.processes, "{policy:?}");
        assert!(r.token_events.is_empty());
    }
}

/// Section 5.4: two shrinking cyclic loops of 53 and 58 units on 60 units of memory.
/// Under global LRU both thrash; with the token one establishes its working set.
#[test]
fn the_token_ends_thrashing_of_two_cyclic_loops() {
    let loops = |name: &str, pages: i64| {
        let mut p = process(name, "shrinking-loop", &[("pages", pages), ("loops", 40)]);
        p.cpu_ns_per_ref = Some(200_000.0);
        p
    };
    let cfg = config(600, vec![loops("small", 530), loops("large", 580)]);
    let lru = run(&cfg);
    let token = run(&with_token(cfg, TokenPolicyKind::Paper));
    let faults = |r: &SystemResult| r.processes.iter().map(|p| p.major_faults).sum::<u64>();
    let time = |r: &SystemResult| r.processes.iter().map(|p| p.slowdown()).sum::<f64>();
    assert!(faults(&token) * 3 < faults(&lru), "{} vs {}", faults(&token), faults(&lru));
    assert!(time(&token) * 2.0 < time(&lru), "{} vs {}", time(&token), time(&lru));
    assert!(token.processes.iter().map(|p| p.token_grabs).sum::<u64>() >= 1);
}

/// An oracle tying the timed system to replay: with exact global LRU reclaim, no
/// watermark reserve and one page reclaimed at a time, one process faults (major +
/// minor) exactly as often as LRU replay at the same number of frames.
#[test]
fn lru_reclaim_faults_like_lru_replay() {
    use crate::policy::PolicyKind;
    use crate::replay::{replay, ReplayConfig};
    for (workload, params) in [("lu", vec![("n", 128)]), ("zipf", vec![("pages", 300), ("refs", 50_000)])] {
        let p = process("p", workload, &params);
        let mut cfg = config(20, vec![p.clone()]);
        cfg.system.reclaim = ReclaimKind::Lru;
        cfg.system.reclaim_batch = 1;
        cfg.system.watermarks = Some(Watermarks { min: 0, low: 0, high: 0 });
        let r = run(&cfg);
        let spec = p.source(4096, 0, 0).unwrap();
        let rc = ReplayConfig { policies: vec![PolicyKind::Lru], frames: vec![20], seed: 0 };
        let expected = replay(&|| spec.open(), &rc, &mut |_| true).unwrap()[0].faults;
        let got = r.processes[0].major_faults + r.processes[0].minor_faults;
        assert_eq!(got, expected, "{workload}");
        assert!(r.processes[0].major_faults > 0, "{workload}");
    }
}

#[test]
fn every_reclaim_policy_pages_under_pressure() {
    for kind in [ReclaimKind::Linux22, ReclaimKind::Clock, ReclaimKind::Lru] {
        let procs = vec![process("a", "zipf", &[("pages", 600), ("refs", 100_000)]), process("b", "lu", &[("n", 120)])];
        let mut cfg = config(400, procs);
        cfg.system.reclaim = kind;
        cfg.system.quantum_ms = 0.5;
        let r = run(&cfg);
        let majors: u64 = r.processes.iter().map(|p| p.major_faults).sum();
        assert!(majors > 50, "{kind:?}: {majors}");
        assert!(r.processes.iter().all(|p| p.end_ns > p.start_ns));
    }
}

/// Load control (section 2.3): suspending the larger of two thrashing loops lets the
/// other run in the memory; the pair faults far less than under plain LRU (it resumes
/// the suspended loop as soon as the fault rate falls, so it thrashes again for a while).
#[test]
fn load_control_suspends_under_thrashing() {
    let loops = |name: &str, pages: i64| {
        let mut p = process(name, "shrinking-loop", &[("pages", pages), ("loops", 40)]);
        p.cpu_ns_per_ref = Some(200_000.0);
        p
    };
    let cfg = config(600, vec![loops("small", 530), loops("large", 580)]);
    let plain = run(&cfg);
    let mut lc = cfg.clone();
    lc.load_control = LoadControlConfig { enabled: true, high_faults_per_s: 20.0, low_faults_per_s: 5.0, window_s: 1.0 };
    let r = run(&lc);
    let faults = |r: &SystemResult| r.processes.iter().map(|p| p.major_faults).sum::<u64>();
    assert!(faults(&r) * 10 < faults(&plain) * 6, "{} vs {}", faults(&r), faults(&plain));
    assert!(r.processes.iter().any(|p| p.suspended_ns > 0));
    assert!(r.token_events.iter().any(|e| e.event == "suspend"));
}

/// A process's CPU cost from its trace's instruction gaps: cost = refs * cpu_ns_per_ref
/// + gaps * cpu_ns_per_instruction, plus one minor fault per page.
#[test]
fn cpu_cost_from_instruction_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.csv");
    std::fs::write(&path, "pid,page,kind,repeat,gap\n0,1,r,1,100\n0,2,w,3,1000\n0,1,r,1,0\n").unwrap();
    let mut p = process("t", "scan", &[]);
    p.workload = None;
    p.params.clear();
    p.trace = Some(path);
    p.use_gaps = true;
    p.cpu_ns_per_ref = Some(10.0);
    let mut cfg = config(100, vec![p]);
    cfg.system.cpu_ns_per_instruction = 2.0;
    cfg.system.minor_fault_ns = 500.0;
    let r = run(&cfg);
    let expected = 5 * 10 + (100 + 1000) * 2 + 2 * 500;
    assert_eq!(r.processes[0].end_ns, expected);
    assert_eq!(r.processes[0].references, 5);
}
