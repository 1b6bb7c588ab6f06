//! End-to-end checks of gang scheduling and the adaptive paging mechanisms
//! (gang-adaptive-paging.txt), on two jobs that each fit in memory but not together.

use super::config::*;
use super::disk::DiskModel;
use super::gang::GangResult;
use super::tests::{config, process};
use super::*;

/// The jobs of [`gang_cfg`] writing each page once every 12 s instead of every 60 ms:
/// the incoming job faults its pages back over the quantum, not at once.
fn slow(m: &[Mechanism]) -> SystemConfig {
    let mut cfg = gang_cfg(1000, 600, m, 1);
    for p in &mut cfg.processes {
        p.cpu_ns_per_ref = Some(20e6);
        p.params.insert("passes".into(), serde_json::Value::from(3));
    }
    cfg
}

/// Two jobs that each write `pages` pages over and over, on `nodes` nodes of `frames`
/// frames, quanta of 10 s; each job has about 30 s of CPU work.
fn gang_cfg(frames: u64, pages: i64, mechanisms: &[Mechanism], nodes: u32) -> SystemConfig {
    let job = |name: &str| {
        let mut p = process(name, "scan", &[("pages", pages), ("passes", 30_000_000 / (pages * 100)), ("write", 1)]);
        p.cpu_ns_per_ref = Some(100_000.0);
        p
    };
    let mut cfg = config(frames, vec![job("a"), job("b")]);
    cfg.system.reclaim = ReclaimKind::Clock;
    cfg.system.sample_ms = 100.0;
    cfg.swap.read_around = ReadAroundKind::Linux;
    cfg.swap.page_cluster = Some(4);
    if let DiskModel::Hdd(h) = &mut cfg.disk.model {
        h.sequential = super::disk::SequentialKind::Queued;
    }
    // the switches from before issue 16 (copies of the serial run on every node, block
    // reads): these tests pin their behaviour; the new defaults have tests of their own
    cfg.gang = Some(GangConfig {
        nodes,
        quantum_s: 10.0,
        mechanisms: mechanisms.to_vec(),
        partition: PartitionKind::Copies,
        ai_reads: AiReads::Block,
        ..Default::default()
    });
    cfg
}

fn run(cfg: &SystemConfig) -> GangResult {
    run_gang(cfg, &mut |_| true).unwrap()
}

fn major_faults(r: &GangResult) -> u64 {
    r.nodes.iter().flat_map(|n| &n.processes).map(|p| p.counters.major_faults).sum()
}

fn pages_paged(r: &GangResult) -> u64 {
    r.nodes.iter().map(|n| n.pages_read + n.pages_written).sum()
}

use Mechanism::*;

#[test]
fn with_memory_for_every_job_no_mechanism_changes_anything() {
    let base = run(&gang_cfg(2000, 600, &[], 1));
    assert_eq!(major_faults(&base), 0);
    assert!(base.stats[0].switches >= 4, "{:?}", base.stats);
    for m in [vec![So], vec![Ao], vec![Ai], vec![Bg], vec![So, Ao, Ai, Bg]] {
        let r = run(&gang_cfg(2000, 600, &m, 1));
        assert_eq!(r.jobs, base.jobs, "{m:?}");
        assert_eq!(pages_paged(&r), 0, "{m:?}");
    }
    // and gang scheduling costs nothing then: the last job ends when it would in batch
    let mut batch = gang_cfg(2000, 600, &[], 1);
    batch.gang.as_mut().unwrap().mode = GangMode::Batch;
    let b = run(&batch);
    assert_eq!(b.end_ns, base.end_ns);
    assert_eq!(b.stats[0].switches, 1);
}

#[test]
fn batch_runs_the_jobs_one_after_the_other() {
    let mut cfg = gang_cfg(1000, 600, &[], 1);
    cfg.gang.as_mut().unwrap().mode = GangMode::Batch;
    let r = run(&cfg);
    let (a, b) = (&r.jobs[0], &r.jobs[1]);
    assert!(a.end_ns < b.end_ns);
    // a runs alone from the start: no major fault; b starts when a ends
    let pa = &r.nodes[0].processes[0];
    assert_eq!(pa.counters.major_faults, 0);
    assert_eq!(r.switches.len(), 2);
    assert_eq!(r.switches[1].t_ns, a.end_ns);
    assert!((a.end_ns as f64 / a.dedicated_ns as f64 - 1.0).abs() < 1e-9);
}

/// Figure 2: without selective page-out the incoming job's residual pages, older than
/// the outgoing job's, are evicted first and faulted back.
#[test]
fn selective_page_out_keeps_the_incoming_jobs_residual_pages() {
    let lru = run(&gang_cfg(1000, 600, &[], 1));
    let so = run(&gang_cfg(1000, 600, &[So], 1));
    assert!(so.stats[0].so_pages > 0);
    let (f0, f1) = (major_faults(&lru), major_faults(&so));
    assert!(f1 * 10 < f0 * 8, "major faults: {f0} without so, {f1} with");
    assert!(so.end_ns < lru.end_ns);
}

/// Figure 3: with aggressive page-out the outgoing job's pages leave at the switch, so
/// the incoming job's faults no longer have page-outs (by kswapd or direct reclaim)
/// scattered among them.
#[test]
fn aggressive_page_out_moves_the_page_outs_to_the_switch() {
    let demand = |r: &GangResult| r.nodes[0].pages_written - r.stats[0].ao_written - r.stats[0].bg_pages;
    let so = run(&gang_cfg(1000, 600, &[So], 1));
    let ao = run(&gang_cfg(1000, 600, &[So, Ao], 1));
    assert!(ao.stats[0].ao_written > 0);
    // the first switch to each job has no working-set estimate: 244 pages go on demand
    let (d0, d1) = (demand(&so), demand(&ao));
    assert!(d1 * 10 < d0 * 3, "page-outs among the faults: {d0} so, {d1} so/ao");
    assert!(ao.end_ns < so.end_ns);
}

/// Figure 4: adaptive page-in reads the pages recorded at the switch in block reads;
/// the job's major faults and the number of reads drop.
#[test]
fn adaptive_page_in_replaces_faults_by_block_reads() {
    let so = run(&gang_cfg(1000, 600, &[So, Ao], 1));
    let ai = run(&gang_cfg(1000, 600, &[So, Ao, Ai], 1));
    assert!(ai.stats[0].ai_pages > 0);
    let (f0, f1) = (major_faults(&so), major_faults(&ai));
    assert!(f1 * 2 < f0, "major faults: {f0} so/ao, {f1} so/ao/ai");
    let (r0, r1) = (so.nodes[0].disk_reads, ai.nodes[0].disk_reads);
    assert!(r1 * 2 < r0, "reads: {r0} so/ao, {r1} so/ao/ai");
    assert!(ai.end_ns < so.end_ns);
}

/// Section 3.4: background writing cleans the running job's pages before the switch,
/// so fewer pages are written at the switch. The jobs write each page once every 12 s,
/// so that a page cleaned in the last second of a quantum stays clean.
#[test]
fn background_writing_leaves_fewer_dirty_pages_for_the_switch() {
    let ao = run(&slow(&[So, Ao]));
    let bg = run(&slow(&[So, Ao, Bg]));
    assert!(bg.stats[0].bg_pages > 0);
    let (w0, w1) = (ao.stats[0].ao_written, bg.stats[0].ao_written);
    assert!(w1 * 10 < w0 * 7, "pages written by aggressive page-out at switches: {w0} so/ao, {w1} so/ao/bg");
    assert!(bg.end_ns < ao.end_ns, "{} {}", bg.end_ns, ao.end_ns);
}

/// Parallel jobs on two nodes: a barrier releases every process barrier_us + message_us
/// (one round) after the last arrival, so the job's supersteps each cost that much more than alone, and both
/// nodes finish together.
#[test]
fn barriers_synchronise_the_nodes_of_a_job() {
    let mut cfg = gang_cfg(2000, 100, &[], 2);
    cfg.processes.truncate(1);
    cfg.processes[0].params.insert("passes".into(), serde_json::Value::from(100));
    cfg.processes[0].superstep_refs = Some(1000); // 10 passes of 100 pages: 10 supersteps
    // a tree barrier over 2 nodes: one round of messages
    cfg.gang.as_mut().unwrap().barrier_us = 400.0;
    cfg.gang.as_mut().unwrap().message_us = 600.0;
    let r = run(&cfg);
    let ends: Vec<u64> = r.nodes.iter().map(|n| n.processes[0].end_ns).collect();
    assert_eq!(ends[0], ends[1]);
    // 10 barriers of 1 ms each (the last one ends the job)
    let alone = r.jobs[0].dedicated_ns;
    assert_eq!(ends[0], alone + 10 * 1_000_000, "alone {alone}");
}

/// Memory locked on every node (the paper's mlock trick) is memory the jobs do not get:
/// jobs that fit together page once enough of it is locked.
#[test]
fn locked_memory_takes_frames_from_the_jobs() {
    let free = run(&gang_cfg(2000, 600, &[], 1));
    let mut cfg = gang_cfg(2000, 600, &[], 1);
    cfg.gang.as_mut().unwrap().locked_mb = 1000.0 * 4096.0 / 1048576.0; // 1000 frames
    let locked = run(&cfg);
    assert_eq!(pages_paged(&free), 0);
    assert!(major_faults(&locked) > 0 && locked.end_ns > free.end_ns);
    let same = run(&gang_cfg(1000, 600, &[], 1));
    assert_eq!(locked, same, "2000 frames with 1000 locked are 1000 frames");
}

/// Jobs that page on two nodes: each job ends at the same instant on both.
#[test]
fn a_parallel_job_ends_together_on_every_node() {
    let r = run(&gang_cfg(1000, 600, &[], 2));
    for (j, job) in r.jobs.iter().enumerate() {
        let ends: Vec<u64> = r.nodes.iter().map(|n| n.processes[j].end_ns).collect();
        assert!(ends.iter().all(|&e| e == job.end_ns), "{ends:?}");
    }
    assert!(major_faults(&r) > 0);
}

#[test]
fn gang_runs_are_deterministic() {
    let cfg = gang_cfg(1000, 600, &[So, Ao, Ai, Bg], 2);
    let a = run(&cfg);
    let b = run(&cfg);
    assert_eq!(a, b);
}

#[test]
fn gang_configuration_errors_name_the_key() {
    let bad = |f: &dyn Fn(&mut SystemConfig), key: &str| {
        let mut cfg = gang_cfg(1000, 600, &[], 2);
        f(&mut cfg);
        let e = run_gang(&cfg, &mut |_| true).unwrap_err().to_string();
        assert!(e.starts_with(key), "{e}");
    };
    bad(&|c| c.gang.as_mut().unwrap().nodes = 0, "gang.nodes:");
    bad(&|c| c.gang.as_mut().unwrap().quantum_s = 0.0, "gang.quantum_s:");
    bad(&|c| c.gang.as_mut().unwrap().barrier_us = -1.0, "gang.barrier_us:");
    bad(&|c| c.gang.as_mut().unwrap().message_us = f64::NAN, "gang.message_us:");
    bad(&|c| {
        let g = c.gang.as_mut().unwrap();
        g.barrier_us = 0.0;
        g.message_us = 0.0;
    }, "gang:");
    bad(&|c| c.gang.as_mut().unwrap().bg_fraction = 1.5, "gang.bg_fraction:");
    bad(&|c| c.gang.as_mut().unwrap().locked_mb = 4.0, "gang.locked_mb:");
    bad(&|c| c.gang.as_mut().unwrap().mechanisms = vec![So, So], "gang.mechanisms:");
    bad(&|c| c.token.policy = TokenPolicyKind::Paper, "gang:");
    bad(&|c| c.processes[1].start_ms = 5.0, "processes[1].start_ms:");
    bad(&|c| c.processes[1].superstep_refs = Some(0), "processes[1].superstep_refs:");
    // two jobs of 600 pages each need 1200 slots on every node
    bad(&|c| c.system.swap_slots = 1000, "system.swap_slots:");
}
