//! A migration daemon (numa-page-migration.txt section 3): on its own processor it
//! loops over its partition of the pages: block for a duration; examine every copy of
//! every entry (holding one copy's lock at a time, reading and clearing the history);
//! then migrate each chosen page (holding all copies' locks while the page is copied
//! and every copy updated). The policy (section 3.3): a page moves to the node whose
//! processor referenced it the most since the last pass, unless its own node's
//! processor referenced it as much. Ties between other nodes go to the lowest node.
//!
//! Each copy examined and each page migrated is one step, so the machine interleaves
//! the daemon with the processors in simulated time and lock contention shows up in
//! both. With the memory modules as servers ([`Memory`]) an examination also asks the
//! entry copy's module for its words (and waits for it), and a migration's copy and
//! entry updates occupy the modules they reach.

use super::memory::{Memory, MigrationCost, ENTRY_WORDS};
use super::pages::Pages;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Blocked,
    Examine { page: usize, node: usize },
    Migrate { next: usize },
}

/// What one daemon did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DaemonStats {
    pub passes: u64,
    pub examined: u64,
    pub migrations: u64,
    /// Time spent waiting for entry locks held by processors (or the other daemons).
    pub lock_wait_ns: u64,
    /// Time spent waiting for memory modules (with `memory_contention`).
    pub memory_wait_ns: u64,
}

pub struct Daemon {
    /// Its partition: pages `first..end`.
    first: usize,
    end: usize,
    pub time: u64,
    phase: Phase,
    block_ns: u64,
    examine_ns: u64,
    migrate: MigrationCost,
    /// The page being examined: its node's value, the best other value and node.
    own: u32,
    best: (u32, usize),
    chosen: Vec<(usize, u16)>,
    pub stats: DaemonStats,
}

impl Daemon {
    /// `migrate`: copying a page and updating all its entry copies.
    pub fn new(first: usize, end: usize, block_ns: u64, examine_ns: u64, migrate: MigrationCost) -> Daemon {
        Daemon {
            first,
            end,
            time: 0,
            phase: Phase::Blocked,
            block_ns,
            examine_ns,
            migrate,
            own: 0,
            best: (0, 0),
            chosen: Vec::new(),
            stats: DaemonStats::default(),
        }
    }

    /// One step at `self.time`; `memory`: the modules, when they are servers.
    pub fn step(&mut self, pages: &mut Pages, memory: Option<&mut Memory>) {
        match self.phase {
            Phase::Blocked => {
                self.time = self.time.saturating_add(self.block_ns);
                self.stats.passes += 1;
                self.phase = if self.first < self.end { Phase::Examine { page: self.first, node: 0 } } else { Phase::Blocked };
                if self.first >= self.end {
                    // nothing to examine: a pass is its blocking alone (at least 1 ns)
                    self.time = self.time.saturating_add(1);
                }
            }
            Phase::Examine { page, node } => {
                // the entry copy lives in `node`'s memory
                let queued = memory.map_or(0, |m| m.request(node, self.time, ENTRY_WORDS));
                self.stats.memory_wait_ns += queued;
                let (start, end) = pages.lock_one(page, node, self.time, self.examine_ns + queued);
                self.stats.lock_wait_ns += start - self.time;
                self.stats.examined += 1;
                self.time = end;
                let value = pages.examine(page, node);
                if node == 0 {
                    self.own = 0;
                    self.best = (0, 0);
                }
                if node == pages.node_of[page] as usize {
                    self.own = value;
                } else if value > self.best.0 {
                    self.best = (value, node);
                }
                if node + 1 < pages.nodes {
                    self.phase = Phase::Examine { page, node: node + 1 };
                    return;
                }
                if self.best.0 > self.own {
                    self.chosen.push((page, self.best.1 as u16));
                }
                self.phase = if page + 1 < self.end {
                    Phase::Examine { page: page + 1, node: 0 }
                } else if self.chosen.is_empty() {
                    Phase::Blocked
                } else {
                    Phase::Migrate { next: 0 }
                };
            }
            Phase::Migrate { next } => {
                let (page, dest) = self.chosen[next];
                let before = self.time;
                let wait_from = pages.locked_until[page * pages.nodes..(page + 1) * pages.nodes].iter().copied().fold(before, u64::max);
                let hold = self.migrate.hold_ns.max(1);
                self.time = pages.lock_all(page, before, hold);
                self.stats.lock_wait_ns += wait_from - before;
                if let Some(m) = memory {
                    m.migration(pages.node_of[page] as usize, dest as usize, self.time - hold, &self.migrate);
                }
                pages.migrate(page, dest);
                self.stats.migrations += 1;
                if next + 1 < self.chosen.len() {
                    self.phase = Phase::Migrate { next: next + 1 };
                } else {
                    self.chosen.clear();
                    self.phase = Phase::Blocked;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numa::config::History;

    fn run_pass(d: &mut Daemon, pages: &mut Pages) {
        d.step(pages, None); // block
        while d.phase != Phase::Blocked {
            d.step(pages, None);
        }
    }

    fn cost(hold_ns: u64) -> MigrationCost {
        MigrationCost { copy_ns: hold_ns, pte_ns: 0, words: 1, hold_ns }
    }

    #[test]
    fn moves_a_page_to_its_heaviest_user_unless_home_uses_it_as_much() {
        // 3 pages on node 0, 3 nodes
        let mut pages = Pages::new(3, 64, vec![0, 0, 0], History::Usage);
        // page 0: node 2 uses it most; page 1: home ties with node 1; page 2: nobody
        for _ in 0..3 {
            pages.touch(0, 2);
        }
        pages.touch(0, 1);
        pages.touch(1, 0);
        pages.touch(1, 1);
        let mut d = Daemon::new(0, 3, 50, 10, cost(1000));
        run_pass(&mut d, &mut pages);
        assert_eq!(pages.node_of, vec![2, 0, 0]);
        assert_eq!(d.stats, DaemonStats { passes: 1, examined: 9, migrations: 1, lock_wait_ns: 0, memory_wait_ns: 0 });
        // blocked 50, 9 examinations of 10, one migration of 1000
        assert_eq!(d.time, 50 + 90 + 1000);
        // history was cleared: the next pass moves nothing
        run_pass(&mut d, &mut pages);
        assert_eq!(d.stats.migrations, 1);
    }

    #[test]
    fn examining_waits_for_a_held_entry() {
        let mut pages = Pages::new(2, 64, vec![0], History::Referenced);
        pages.lock_one(0, 1, 0, 500);
        let mut d = Daemon::new(0, 1, 0, 10, cost(100));
        run_pass(&mut d, &mut pages);
        // copy 0 at 0..10, copy 1 waits for the holder until 500
        assert_eq!(d.stats.lock_wait_ns, 490);
        assert_eq!(d.time, 510);
    }
}
