//! End-to-end checks of issue 15's swap disk: the legacy preset is the engine before
//! it, the kernels' request queues merge what they should, and the bound on
//! asynchronous page-out writes makes writers wait when reached and changes nothing
//! when not.

use super::async_writes::AsyncWritesKind;
use super::config::*;
use super::disk::QueueKind;
use super::tests::{config, process};
use super::*;

fn run(cfg: &SystemConfig) -> SystemResult {
    run_system(cfg, &mut |_| true).unwrap()
}

fn counter(r: &SystemResult, name: &str) -> u64 {
    r.disk_counters.iter().find(|(k, _)| k == name).map(|(_, v)| *v).unwrap_or_else(|| panic!("no disk counter {name}: {:?}", r.disk_counters))
}

/// The same numbers as the engine before issue 15 (commit da31785), to the nanosecond:
/// `[disk] preset = "legacy"` with `[swap] async_writes = "unbounded"` is today's old
/// default, on the FIFO path, the page-out paths, read-around, and a gang run with
/// adaptive page-in and background writing.
#[test]
fn the_legacy_preset_is_the_engine_before_issue_15() {
    let legacy = r#""disk": {"preset": "legacy"}"#;
    let single = |text: &str| {
        let cfg = SystemConfig::from_json(text).unwrap();
        let r = run(&cfg);
        let majors: Vec<u64> = r.processes.iter().map(|p| p.counters.major_faults).collect();
        (r.end_ns, r.disk_reads, r.disk_writes, r.pages_read, r.pages_written, r.disk_busy_ns, majors)
    };
    // with Linux 2.2's reclaim as it was before issue 15 (linux22_tests.rs `old_options`)
    let lu_pair = format!(
        r#"{{"system": {{"frames": 176, "cpu_ns_per_ref": 3000.0, "sample_ms": 100.0, "swap_out": "largest_rss", "free_pages": "batch"}}, {legacy}, "swap": {{"async_writes": "unbounded", "read_around": "none"}},
        "processes": [{{"name": "lu-1", "workload": "lu", "params": {{"n": 300}}}}, {{"name": "lu-2", "workload": "lu", "params": {{"n": 300}}}}]}}"#
    );
    assert_eq!(single(&lu_pair), (936066537107, 84055, 42694, 84055, 42694, 919922197232, vec![42034, 42021]));
    for (clustering, expected) in [
        ("mclustering", (101358205439, 10655, 1601, 26360, 14444, 100764184373, vec![10655])),
        ("bsd", (117034739234, 10711, 5420, 26400, 14361, 116490520360, vec![10711])),
    ] {
        let text = format!(
            r#"{{"system": {{"frames": 130, "reclaim": "bsd"}}, {legacy}, "swap": {{"clustering": "{clustering}", "read_around": "bsd", "async_writes": "unbounded"}},
            "processes": [{{"name": "p", "workload": "lu", "params": {{"n": 300}}}}]}}"#
        );
        assert_eq!(single(&text), expected, "{clustering}");
    }
    let gang = r#"{"system": {"frames": 300, "reclaim": "clock", "sample_ms": 100.0}, "swap": {"read_around": "linux", "page_cluster": 4, "async_writes": "unbounded"},
        "disk": {"preset": "legacy", "stream_sequential": true}, "gang": {"nodes": 2, "quantum_s": 2.0, "mechanisms": ["so", "ao", "ai", "bg"], "partition": "copies", "ai_reads": "block"},
        "processes": [{"name": "a", "workload": "scan", "params": {"pages": 400, "passes": 20, "write": 1}, "cpu_ns_per_ref": 20000.0},
                      {"name": "b", "workload": "scan", "params": {"pages": 400, "passes": 20, "write": 1}, "cpu_ns_per_ref": 20000.0}]}"#;
    let g = run_gang(&SystemConfig::from_json(gang).unwrap(), &mut |_| true).unwrap();
    assert_eq!(g.end_ns, 81091588111);
    for n in &g.nodes {
        assert_eq!((n.end_ns, n.disk_reads, n.disk_writes, n.pages_read, n.pages_written, n.disk_busy_ns), (81091588111, 2101, 14680, 22623, 15415, 80803417111));
    }
}

/// Two LU programs under Linux 2.2 reclaim: kswapd and direct reclaim write single
/// pages, which the swap allocator places on successive slots.
fn linux_pair(tweak: impl Fn(&mut SystemConfig)) -> SystemResult {
    let mut cfg = config(176, vec![process("lu-1", "lu", &[("n", 200)]), process("lu-2", "lu", &[("n", 200)])]);
    cfg.system.cpu_ns_per_ref = 3000.0;
    cfg.swap.free_on_write = true;
    // the single-page writes of Linux 2.2's reclaim as it was before issue 15: the
    // disk's rules on their own
    cfg.system.swap_out = SwapOutRule::LargestRss;
    cfg.system.free_pages = Some(FreePagesRule::Batch);
    cfg.swap.read_around = ReadAroundKind::None;
    tweak(&mut cfg);
    run(&cfg)
}

/// Linux 2.2's queue merges page-out writes of successive slots into larger requests,
/// never beyond MAX_SECTORS (30 pages); FreeBSD 8.2's and the FIFO queue merge nothing.
#[test]
fn linux22_merges_page_outs_and_the_others_do_not() {
    let linux = linux_pair(|c| c.disk.queue = QueueKind::Linux22);
    assert!(counter(&linux, "disk_merged") > 20, "{:?}", linux.disk_counters);
    assert!(linux.write_sizes.len() > 2 && linux.write_sizes.len() <= 31, "{:?}", linux.write_sizes);
    assert!(linux.disk_writes < linux.pages_written, "{} requests for {} pages", linux.disk_writes, linux.pages_written);
    for queue in [QueueKind::Freebsd82, QueueKind::Fifo] {
        let r = linux_pair(|c| c.disk.queue = queue);
        assert_eq!(counter(&r, "disk_merged"), 0);
        assert_eq!(r.disk_writes, r.pages_written, "{queue:?}: every page-out is its own request");
    }
    // the default queue of a Linux 2.2 system is Linux 2.2's
    assert_eq!(linux_pair(|_| {}), linux);
}

/// The bound on asynchronous page-out writes: a small one makes writers wait (and
/// changes the run); one that is never reached changes nothing at all.
#[test]
fn the_write_bound_makes_writers_wait_and_changes_nothing_unreached() {
    for rule in [AsyncWritesKind::Linux22, AsyncWritesKind::Freebsd82] {
        let unbounded = linux_pair(|c| c.swap.async_writes = AsyncWritesKind::Unbounded);
        let unreached = linux_pair(|c| {
            c.swap.async_writes = rule;
            c.swap.async_write_max = Some(1 << 20);
        });
        assert_eq!(counter(&unreached, "write_waits"), 0);
        assert_eq!(counter(&unbounded, "write_peak"), 0, "nothing counted without a bound");
        assert!(counter(&unreached, "write_peak") > 2, "{rule:?}: {:?}", unreached.disk_counters);
        let without_counters = |r: &SystemResult| SystemResult { disk_counters: Vec::new(), ..r.clone() };
        assert_eq!(without_counters(&unreached), without_counters(&unbounded), "{rule:?}: a bound never reached changes nothing");
        let tight = linux_pair(|c| {
            c.swap.async_writes = rule;
            c.swap.async_write_max = Some(2);
        });
        assert!(counter(&tight, "write_waits") > 20, "{rule:?}: {:?}", tight.disk_counters);
        assert_ne!(tight.end_ns, unbounded.end_ns);
        // every page still gets written and read back
        assert_eq!(tight.processes.len(), 2);
        assert!(tight.processes.iter().all(|p| p.end_ns > 0 && p.counters.page_outs > 0));
    }
    // the kernels' own bounds: Linux 2.2's 32 pages, FreeBSD 8.2's 4 requests. (On this
    // small memory Linux's is never reached: kswapd stops at the high watermark, 30
    // free frames, before 33 pages are in flight; Linux 2.2 on the paper's 384 MB has a
    // high watermark of 768 pages.)
    use super::async_writes::WriteBound;
    let bound = |reclaim: ReclaimKind, max: Option<u32>, kind: AsyncWritesKind, gang: bool| {
        let mut cfg = config(64, vec![process("p", "scan", &[("pages", 8)])]);
        cfg.system.reclaim = reclaim;
        cfg.swap.async_write_max = max;
        if gang {
            cfg.gang = Some(Default::default());
        }
        kind.bound(&cfg)
    };
    // Linux 2.2's own try_to_free_pages applies rw_swap_page's rule (free_pages.rs)
    assert_eq!(bound(ReclaimKind::Linux22, None, AsyncWritesKind::Kernel, false), WriteBound::Unbounded);
    assert_eq!(bound(ReclaimKind::Linux22, None, AsyncWritesKind::Kernel, true), WriteBound::SyncOver { max_pages: 32 });
    assert_eq!(bound(ReclaimKind::Clock, None, AsyncWritesKind::Kernel, false), WriteBound::SyncOver { max_pages: 32 });
    assert_eq!(bound(ReclaimKind::Bsd, None, AsyncWritesKind::Kernel, false), WriteBound::WaitAt { max_requests: 4 });
    assert_eq!(bound(ReclaimKind::Freebsd8, None, AsyncWritesKind::Kernel, false), WriteBound::WaitAt { max_requests: 4 });
    assert_eq!(bound(ReclaimKind::Bsd, Some(9), AsyncWritesKind::Kernel, false), WriteBound::WaitAt { max_requests: 9 });
    assert_eq!(bound(ReclaimKind::Bsd, None, AsyncWritesKind::Unbounded, false), WriteBound::Unbounded);
    let kernel = linux_pair(|_| {});
    assert_eq!(counter(&kernel, "write_waits"), 0);
    let unbounded = linux_pair(|c| c.swap.async_writes = AsyncWritesKind::Unbounded);
    assert_eq!(SystemResult { disk_counters: Vec::new(), ..kernel }, SystemResult { disk_counters: Vec::new(), ..unbounded });
}

/// Under the BSD VM the kernel's bound is FreeBSD 8.2's four write requests; the page
/// daemon waits at it, the run completes, and the FIFO queue with no bound gives back
/// the old engine's writes.
#[test]
fn the_bsd_vm_waits_at_four_writes() {
    let bsd = |tweak: &dyn Fn(&mut SystemConfig)| {
        let mut cfg = config(130, vec![process("p", "lu", &[("n", 300)])]);
        cfg.system.reclaim = ReclaimKind::Bsd;
        cfg.swap.clustering = ClusteringKind::Mclustering;
        cfg.swap.read_around = ReadAroundKind::Bsd;
        tweak(&mut cfg);
        run(&cfg)
    };
    let kernel = bsd(&|_| {});
    let explicit = bsd(&|c| {
        c.swap.async_writes = AsyncWritesKind::Freebsd82;
        c.swap.async_write_max = Some(4);
    });
    assert_eq!(kernel, explicit);
    assert!(counter(&kernel, "write_waits") > 0, "{:?}", kernel.disk_counters);
    // mClustering's buffer written at the end of a page-out run waits for a buffer too
    assert_eq!(counter(&kernel, "write_peak"), 4, "{:?}", kernel.disk_counters);
    assert!(kernel.disk_writes > 1000);
}

/// `[swap] async_write_max` is checked.
#[test]
fn write_bound_errors_name_the_key() {
    let base = r#"{"system": {"frames": 100}, "swap": X, "processes": [{"name": "a", "workload": "scan"}]}"#;
    for (bad, says) in [
        (r#"{"async_write_max": 0}"#, "swap.async_write_max: expected 1 to 1048576"),
        (r#"{"async_writes": "unbounded", "async_write_max": 8}"#, "swap.async_write_max: is a bound: it does not combine with async_writes = \"unbounded\""),
        (r#"{"async_writes": "linux"}"#, "swap.async_writes: unknown variant `linux`"),
    ] {
        let e = SystemConfig::from_json(&base.replace('X', bad)).unwrap_err().to_string();
        assert!(e.starts_with(says), "{bad}: {e}");
    }
    // a disk too small for the swap area is refused before the run
    let text = r#"{"system": {"frames": 100, "swap_slots": 20000}, "disk": {"disk_mb": 10}, "processes": [{"name": "a", "workload": "scan"}]}"#;
    let e = run_system(&SystemConfig::from_json(text).unwrap(), &mut |_| true).unwrap_err().to_string();
    assert!(e.contains("disk.disk_mb: the swap area (20000 slots, 81.9 MB) does not fit on a disk of 10 MB"), "{e}");
}

/// FreeBSD 8.2's `swap_async_max`: with a bound of N write requests, never more than N
/// page-out writes are in flight, and the bound is reached; without it the same run
/// has more in flight at once. Linux 2.2's rule lets a write start asynchronously while
/// at most `swap_cluster` pages are in flight, so with single-page writes at most
/// `swap_cluster` + 1 are.
#[test]
fn at_most_swap_async_max_writes_are_outstanding() {
    let loose = linux_pair(|c| {
        c.swap.async_writes = AsyncWritesKind::Freebsd82;
        c.swap.async_write_max = Some(1 << 20);
    });
    let free_peak = counter(&loose, "write_peak");
    for max in [1u64, 2, 4] {
        let r = linux_pair(|c| {
            c.swap.async_writes = AsyncWritesKind::Freebsd82;
            c.swap.async_write_max = Some(max as u32);
        });
        assert_eq!(counter(&r, "write_peak"), max, "swap_async_max = {max}: {:?}", r.disk_counters);
        assert!(counter(&r, "write_waits") > 0);
        assert!(free_peak > max, "without the bound {free_peak} writes were in flight at once");
    }
    for max in [1u64, 3] {
        let r = linux_pair(|c| {
            c.swap.async_writes = AsyncWritesKind::Linux22;
            c.swap.async_write_max = Some(max as u32);
        });
        assert_eq!(counter(&r, "write_peak"), max + 1, "swap_cluster = {max}: {:?}", r.disk_counters);
        assert!(counter(&r, "write_waits") > 0);
    }
}
