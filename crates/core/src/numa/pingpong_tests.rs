//! Why the daemons ping-pong (docs/numa.md, "Why the daemons ping-pong";
//! numa-page-migration.txt sections 3.3, 5.3 and 5.4): the migration trace of a run taken
//! apart, and the small cases that pin each finding down.

use super::config::{ExamineOrder, Migration, NumaConfig};
use super::machine::{run_numa_traced, MigrationEvent, MigrationTrace};
use super::workloads;
use super::*;

fn cfg(workload: &str, params: &[(&str, serde_json::Value)], page_size: u64, migration: Migration) -> NumaConfig {
    let mut cfg = NumaConfig { page_size, migration, ..NumaConfig::default() };
    cfg.workload.name = workload.to_string();
    cfg.workload.params = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    cfg
}

fn traced(cfg: &NumaConfig) -> (NumaResult, MigrationTrace) {
    run_numa_traced(cfg, &mut |_| true).unwrap()
}

/// The nodes owning some byte of each page at the start (a horizontal Jacobi page of
/// 1 KiB has two, a vertical one one).
fn owners(cfg: &NumaConfig, pages: usize) -> Vec<Vec<u16>> {
    let w = workloads::open(&cfg.workload.name, &cfg.workload_params(), cfg.seed).unwrap();
    (0..pages as u64)
        .map(|p| {
            let mut nodes: Vec<u16> = (p * cfg.page_size..((p + 1) * cfg.page_size).min(w.bytes)).step_by(4).map(|a| (w.home)(a)).collect();
            nodes.sort_unstable();
            nodes.dedup();
            nodes
        })
        .collect()
}

/// A run's migrations taken apart: rates per page and per iteration, between whom, with
/// which tallies, when in the iteration, how soon a ping-pong brings a page back.
struct Anatomy {
    migrations: usize,
    pingpongs: usize,
    pages: f64,
    /// Whether the workload has barriers (iterations).
    barriers: bool,
    iterations: f64,
    /// Seconds: a daemon pass, an iteration, the mean spread of the barrier arrivals.
    pass_s: f64,
    iteration_s: f64,
    spread_s: f64,
    /// Shares of the migrations: between two owners of the page's bytes (the processors
    /// whose partitions share a horizontal page); to an owner; with no reference from the
    /// page's own node since its copy was last read.
    between_owners: f64,
    to_owner: f64,
    own_zero: f64,
    /// Migrations by tenth of their iteration (shares).
    tenths: [f64; 10],
    /// Page-iterations with one, two, three or more migrations.
    per_page_iteration: [usize; 3],
    /// Median time a page stays away before a ping-pong brings it back, s.
    return_s: f64,
    /// Completion time over None's, minus 1.
    vs_none: Option<f64>,
}

impl Anatomy {
    fn per_page_iteration(&self, n: usize) -> f64 {
        n as f64 / self.pages / self.iterations
    }

    fn line(&self, label: &str) -> String {
        let tenths: Vec<String> = self.tenths.iter().map(|x| format!("{:.0}", 100.0 * x)).collect();
        let [once, twice, more] = self.per_page_iteration;
        if !self.barriers {
            // no barriers (the wave): rates over the run
            return format!(
                "{label}: {} migrations ({:.3}/page), {} ping-pongs ({:.3}/page); pass {:.3} s; to an owner {:.1}%, \
                 own node had 0 references {:.1}%{}; a ping-pong returns a page after {:.2} s (median)",
                self.migrations,
                self.migrations as f64 / self.pages,
                self.pingpongs,
                self.pingpongs as f64 / self.pages,
                self.pass_s,
                100.0 * self.to_owner,
                100.0 * self.own_zero,
                self.vs_none.map_or(String::new(), |v| format!(", {:+.1}% vs None", v * 100.0)),
                self.return_s,
            );
        }
        format!(
            "{label}: {} migrations ({:.3}/page/iteration), {} ping-pongs ({:.3}/page/iteration); \
             pass {:.3} s, iteration {:.2} s ({:.1} passes/iteration), barrier spread {:.2} s; \
             between the page's owners {:.1}%, to an owner {:.1}%, own node had 0 references {:.1}%{}; \
             by tenth of the iteration (%): {}; page-iterations with 1/2/3+ migrations {once}/{twice}/{more}; \
             a ping-pong returns a page after {:.2} s (median)",
            self.migrations,
            self.per_page_iteration(self.migrations),
            self.pingpongs,
            self.per_page_iteration(self.pingpongs),
            self.pass_s,
            self.iteration_s,
            self.iteration_s / self.pass_s,
            self.spread_s,
            100.0 * self.between_owners,
            100.0 * self.to_owner,
            100.0 * self.own_zero,
            self.vs_none.map_or(String::new(), |v| format!(", {:+.1}% vs None", v * 100.0)),
            tenths.join(" "),
            self.return_s,
        )
    }
}

fn anatomy(cfg: &NumaConfig, r: &NumaResult, t: &MigrationTrace, none: Option<&NumaResult>) -> Anatomy {
    let passes = r.daemons.iter().map(|d| d.passes).sum::<u64>() as f64 / r.daemons.len().max(1) as f64;
    let iterations = t.barrier_releases.len().max(1) as f64;
    let owners = owners(cfg, r.pages as usize);
    let m = &t.migrations;
    let n = m.len().max(1) as f64;
    let share = |f: &dyn Fn(&MigrationEvent) -> bool| m.iter().filter(|e| f(e)).count() as f64 / n;
    let owns = |e: &MigrationEvent, node: u16| owners[e.page as usize].contains(&node);
    // when in its iteration each migration ends
    let iteration_of = |at: u64| t.barrier_releases.partition_point(|&b| b <= at);
    let mut tenths = [0.0; 10];
    let mut in_iterations = 0.0;
    for e in m {
        let k = iteration_of(e.at_ns);
        if k < t.barrier_releases.len() {
            let start = if k == 0 { 0 } else { t.barrier_releases[k - 1] };
            let len = (t.barrier_releases[k] - start).max(1);
            tenths[(((e.at_ns - start) * 10) / len).min(9) as usize] += 1.0;
            in_iterations += 1.0;
        }
    }
    tenths.iter_mut().for_each(|x| *x /= f64::max(in_iterations, 1.0));
    // the spread between the first and the last processor at each barrier
    let procs = r.end_ns.len();
    let spread: f64 = 0.0 + t
        .barrier_arrivals
        .chunks(procs)
        .map(|c| (c.iter().map(|a| a.1).max().unwrap_or(0) - c.iter().map(|a| a.1).min().unwrap_or(0)) as f64 / 1e9)
        .sum::<f64>()
        / (t.barrier_arrivals.len() / procs.max(1)).max(1) as f64;
    // migrations per page and iteration: once (following the user) or more (bouncing)
    let mut per = std::collections::BTreeMap::<(u64, usize), u32>::new();
    for e in m {
        *per.entry((e.page, iteration_of(e.at_ns))).or_default() += 1;
    }
    let mut per_page_iteration = [0usize; 3];
    for &x in per.values() {
        per_page_iteration[(x as usize - 1).min(2)] += 1;
    }
    // how long a page stays away before a ping-pong brings it back
    let mut last_at = vec![u64::MAX; r.pages as usize];
    let mut gaps: Vec<u64> = Vec::new();
    for e in m {
        let l = last_at[e.page as usize];
        if e.pingpong && l != u64::MAX {
            gaps.push(e.at_ns - l);
        }
        last_at[e.page as usize] = e.at_ns;
    }
    gaps.sort_unstable();
    Anatomy {
        migrations: m.len(),
        pingpongs: m.iter().filter(|e| e.pingpong).count(),
        pages: r.pages as f64,
        barriers: !t.barrier_releases.is_empty(),
        iterations,
        pass_s: r.max_ns() as f64 / passes.max(1.0) / 1e9,
        iteration_s: r.max_ns() as f64 / iterations / 1e9,
        spread_s: spread,
        between_owners: share(&|e| owns(e, e.from) && owns(e, e.to)),
        to_owner: share(&|e| owns(e, e.to)),
        own_zero: share(&|e| e.own == 0),
        tenths,
        per_page_iteration,
        return_s: gaps.get(gaps.len() / 2).map_or(0.0, |&g| g as f64 / 1e9),
        vs_none: none.map(|none| r.mean_ns() / none.mean_ns() - 1.0),
    }
}

fn jacobi_params(layout: &str) -> Vec<(&'static str, serde_json::Value)> {
    vec![("n", 512.into()), ("procs", 16.into()), ("iterations", 10.into()), ("layout", layout.into())]
}

/// Jacobi 1K(H) at the paper's size: which migrations are ping-pongs, between whom,
/// when, with which tallies; the same with the two examination orders and over a range
/// of examination costs (passes per iteration); the vertical columns and the wave.
/// `cargo test --release -p pagelab-core --lib numa::pingpong_tests::measure_pingpong -- --ignored --nocapture`
#[test]
#[ignore = "prints measurements at the paper's sizes (minutes)"]
fn measure_pingpong() {
    for (layout, page) in [("horizontal", 1024u64), ("vertical", 1024), ("vertical", 2048), ("horizontal", 2048), ("vertical", 512)] {
        let none = run_numa(&cfg("jacobi-numa", &jacobi_params(layout), page, Migration::None), &mut |_| true).unwrap();
        for order in [ExamineOrder::Entries, ExamineOrder::Copies] {
            let mut c = cfg("jacobi-numa", &jacobi_params(layout), page, Migration::Daemons);
            c.examine_order = order;
            let (r, t) = traced(&c);
            println!("{}", anatomy(&c, &r, &t, Some(&none)).line(&format!("jacobi {layout} {page} {order:?}")));
        }
    }
    // (c) passes per iteration: the examination cost scaled
    for (layout, page) in [("horizontal", 1024u64), ("horizontal", 2048), ("vertical", 2048)] {
        let none = run_numa(&cfg("jacobi-numa", &jacobi_params(layout), page, Migration::None), &mut |_| true).unwrap();
        for scale in [0.25, 4.0, 16.0, 64.0, 128.0] {
            let mut c = cfg("jacobi-numa", &jacobi_params(layout), page, Migration::Daemons);
            c.examine_ns *= scale;
            let (r, t) = traced(&c);
            println!("{}", anatomy(&c, &r, &t, Some(&none)).line(&format!("jacobi {layout} {page} examine x{scale}")));
        }
    }
    for page in [512u64, 1024, 2048] {
        let params = [("n", 100.into()), ("procs", 16.into()), ("steps", 800.into())];
        let none = run_numa(&cfg("wave", &params, page, Migration::None), &mut |_| true).unwrap();
        for (order, scale) in [(ExamineOrder::Entries, 1.0), (ExamineOrder::Copies, 1.0), (ExamineOrder::Entries, 4.0), (ExamineOrder::Entries, 16.0)] {
            let mut c = cfg("wave", &params, page, Migration::Daemons);
            c.examine_order = order;
            c.examine_ns *= scale;
            let (r, t) = traced(&c);
            println!("{}", anatomy(&c, &r, &t, Some(&none)).line(&format!("wave {page} {order:?} examine x{scale}")));
        }
    }
}

/// Jacobi 1K(H): the two processors sharing each horizontal page (partition columns 0
/// and 1, 2 and 3 of a partition row), iteration by iteration: which one reaches the
/// barrier later, whether the roles swap from one iteration to the next, and whether the
/// iteration's migrations go to the later one.
/// `cargo test --release -p pagelab-core --lib numa::pingpong_tests::measure_horizontal_roles -- --ignored --nocapture`
#[test]
#[ignore = "prints measurements at the paper's size (a minute)"]
fn measure_horizontal_roles() {
    for order in [ExamineOrder::Entries, ExamineOrder::Copies] {
        let mut c = cfg("jacobi-numa", &jacobi_params("horizontal"), 1024, Migration::Daemons);
        c.examine_order = order;
        let (r, t) = traced(&c);
        let procs = r.end_ns.len();
        // arrival time of each processor at each barrier
        let mut arrivals = vec![Vec::new(); procs];
        for &(p, at) in &t.barrier_arrivals {
            arrivals[p as usize].push(at);
        }
        let iterations = t.barrier_releases.len();
        let pairs: Vec<(usize, usize)> = (0..procs).step_by(2).map(|p| (p, p + 1)).collect();
        let late = |k: usize, (a, b): (usize, usize)| if arrivals[a][k] > arrivals[b][k] { a } else { b };
        let (mut swaps, mut pair_steps) = (0, 0);
        for k in 1..iterations {
            for &pair in &pairs {
                pair_steps += 1;
                swaps += usize::from(late(k, pair) != late(k - 1, pair));
            }
        }
        let (mut to_late, mut counted) = (0, 0);
        let mut lead = 0.0;
        for e in &t.migrations {
            let k = t.barrier_releases.partition_point(|&b| b <= e.at_ns);
            if k >= iterations {
                continue;
            }
            let pair = ((e.to as usize) & !1, (e.to as usize) | 1);
            if (e.from as usize) & !1 != pair.0 {
                continue; // not between the pair sharing the page
            }
            counted += 1;
            to_late += usize::from(late(k, pair) == e.to as usize);
        }
        for k in 0..iterations {
            for &(a, b) in &pairs {
                lead += arrivals[a][k].abs_diff(arrivals[b][k]) as f64 / 1e9;
            }
        }
        println!(
            "jacobi horizontal 1024 {order:?}: late/early roles swapped in {swaps} of {pair_steps} pair-iterations; \
             {to_late} of {counted} migrations within a pair went to the pair's later processor of that iteration; \
             mean lead within a pair {:.2} s",
            lead / (iterations * pairs.len()) as f64
        );
    }
}

/// The paper's 1K(H) geometry at half the size: at n 256 a partition's row segment is 256
/// bytes, so a 512-byte horizontal page holds the segments of two partitions, as a 1 KiB
/// page does at n 512.
fn half_size(layout: &str) -> Vec<(&'static str, serde_json::Value)> {
    vec![("n", 256.into()), ("procs", 16.into()), ("iterations", 4.into()), ("layout", layout.into())]
}

/// A traced run of `c` and its anatomy (no None run to compare with).
fn dissect(c: &NumaConfig) -> (NumaResult, Anatomy) {
    let (r, t) = traced(c);
    let a = anatomy(c, &r, &t, None);
    (r, a)
}

fn examined_by(mut c: NumaConfig, order: ExamineOrder, scale: f64) -> NumaConfig {
    c.examine_order = order;
    c.examine_ns *= scale;
    c
}

#[test]
fn the_trace_observes_without_changing_the_run() {
    let c = cfg("jacobi-numa", &half_size("horizontal"), 512, Migration::Daemons);
    let (r, t) = traced(&c);
    assert_eq!(r, run_numa(&c, &mut |_| true).unwrap());
    assert_eq!(t.migrations.len() as u64, r.migrations());
    assert_eq!(t.migrations.iter().filter(|e| e.pingpong).count() as u64, r.pingpongs);
    assert!(t.migrations.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
    assert!(t.migrations.iter().all(|e| e.from != e.to && e.best > e.own && e.daemon == Some(0)));
    assert_eq!((t.barrier_releases.len(), t.barrier_arrivals.len()), (4, 4 * 16));
    let f = cfg("vecmat", &[("n", 64.into()), ("procs", 4.into()), ("repeat", 2.into())], 256, Migration::Foresight);
    let (r, t) = traced(&f);
    assert_eq!(t.migrations.len() as u64, r.foresight_migrations);
    assert!(t.migrations.iter().all(|e| e.daemon.is_none()) && t.barrier_releases.is_empty());
}

/// Sections 3.3 and 5.3, why horizontal pages ping-pong: a page holding two partitions'
/// row segments lives on the first one's node, so the other processor's references are
/// all remote; the two run at different speeds, so on each page one is rows ahead of the
/// other. A pass shorter than that lead sees one of them alone: the greedy policy moves
/// the page to it when it is not the page's node. The later processor pulls the page, is
/// local and early in the next iteration, and the other pulls it back: about one move
/// per page and iteration, all through the iteration, between the page's two owners,
/// nearly always with no reference from the page's node in the pass.
#[test]
fn horizontal_pages_follow_the_later_of_their_two_owners() {
    let (_, a) = dissect(&cfg("jacobi-numa", &half_size("horizontal"), 512, Migration::Daemons));
    let line = a.line("n 256, 512 B horizontal");
    assert!(a.between_owners > 0.9 && a.own_zero > 0.8, "{line}");
    assert!(a.per_page_iteration(a.pingpongs) > 0.5, "{line}");
    // once per page and iteration, not a bounce within one
    let [once, twice, more] = a.per_page_iteration;
    assert!(once > 4 * (twice + more), "{line}");
    // a ping-pong brings a page back an iteration later
    assert!((0.7..1.3).contains(&(a.return_s / a.iteration_s)), "{line}");
    // all through the iteration (the lead grows row by row), not at its ends
    assert!(a.tenths.iter().all(|&x| x < 0.3), "{line}");
    assert!(a.spread_s > 2.0 * a.pass_s, "the lead outlasts passes: {line}");
}

/// Section 3.2 (a daemon's pass time; the paper does not give the examination's cost):
/// a pass longer than an iteration sees both owners' references to a page in one window,
/// where the page's own node referenced it as often as the other and it stays: the
/// ping-pong is gone. The wave's pages (no barriers) bounce between a block's owner and
/// the neighbour reading its edge within a time step; passes of a step or more see the
/// owner's five-fold references every time.
#[test]
fn passes_longer_than_the_lead_stop_the_pingpong() {
    let c = cfg("jacobi-numa", &half_size("horizontal"), 512, Migration::Daemons);
    let (_, fast) = dissect(&c);
    let (_, slow) = dissect(&examined_by(c, ExamineOrder::Entries, 16.0));
    assert!(slow.pass_s > slow.iteration_s, "{}", slow.line("x16"));
    assert!(fast.per_page_iteration(fast.pingpongs) > 0.5, "{}", fast.line("x1"));
    assert!(slow.per_page_iteration(slow.pingpongs) < 0.01, "{}", slow.line("x16"));
    assert!(slow.migrations * 10 < fast.migrations);
    let w = cfg("wave", &[("n", 40.into()), ("procs", 16.into()), ("steps", 40.into())], 1024, Migration::Daemons);
    let (r, a) = dissect(&w);
    let step_s = r.max_ns() as f64 / 40.0 / 1e9;
    assert!(a.pingpongs as f64 > r.pages as f64 && a.return_s < step_s && a.pass_s < step_s / 2.0, "{}", a.line("wave x1"));
    let w16 = examined_by(w, ExamineOrder::Entries, 16.0);
    let r16 = run_numa(&w16, &mut |_| true).unwrap();
    assert!(r16.pingpongs * 20 < r.pingpongs, "{} against {}", r16.pingpongs, r.pingpongs);
}

/// Section 5.3's boundary rows, and the examination order (sections 3 and 3.1 leave it
/// open). Vertical pages are each in one partition; only boundary rows are read by a
/// neighbour. Entry by entry, all copies of a page are read within a few examinations,
/// so a move needs the owner's last writes and the neighbour's first reads to fall in
/// different passes: it happens only around the barrier, in the iteration's first fifth
/// or last tenth (at this size), always to or from a non-owner. Copy by copy, node k's copy of an entry
/// is read k/16 of a pass after node 0's, so uses up to a pass apart land in different
/// windows all through the iteration; each page moved makes its owner remote and late,
/// which widens the gaps: several times the migrations and a slower run.
#[test]
fn examining_copy_by_copy_splits_uses_a_pass_apart() {
    let c = cfg("jacobi-numa", &half_size("vertical"), 1024, Migration::Daemons);
    let (re, entries) = dissect(&c);
    let line = entries.line("entries");
    assert!(entries.migrations > 0 && entries.between_owners == 0.0 && entries.to_owner < 0.6, "{line}");
    assert!(entries.tenths[0] + entries.tenths[1] + entries.tenths[9] > 0.95, "{line}");
    let copies_cfg = examined_by(c, ExamineOrder::Copies, 1.0);
    let rc = run_numa(&copies_cfg, &mut |_| true).unwrap();
    assert!(rc.migrations() > 2 * re.migrations(), "copies {} entries {}", rc.migrations(), re.migrations());
    assert!(rc.mean_ns() > 1.1 * re.mean_ns(), "copies {} entries {}", rc.mean_ns(), re.mean_ns());
}

/// With one node there is one copy of each entry: both orders examine the same copies in
/// the same sequence, and the runs are equal.
#[test]
fn one_copy_per_entry_makes_the_orders_equal() {
    let c = cfg("jacobi-numa", &[("n", 32.into()), ("procs", 1.into()), ("iterations", 2.into())], 512, Migration::Daemons);
    let entries = run_numa(&c, &mut |_| true).unwrap();
    let copies = run_numa(&examined_by(c, ExamineOrder::Copies, 1.0), &mut |_| true).unwrap();
    assert!(entries.daemons[0].examined > 0);
    assert_eq!(entries, copies);
}
