//! A migration daemon (numa-page-migration.txt section 3): on its own processor it
//! loops over its partition of the pages: block for a duration; examine every copy of
//! every entry (holding one copy's lock at a time, reading and clearing the history);
//! then migrate each chosen page (holding all copies' locks while the page is copied
//! and every copy updated). The policy (section 3.3): a page moves to the node whose
//! processor referenced it the most since the last pass, unless its own node's
//! processor referenced it as much. Ties between other nodes go to the lowest node.
//!
//! The examination order ([`ExamineOrder`]): entry by entry (all copies of one entry,
//! then the next entry; section 3.1's "each copy of each page table entry") or copy by
//! copy (all its entries in node 0's copy, then in node 1's, ...; section 3's "steps
//! through all of the copies of the page table"). Either way the decisions are taken
//! when the whole examination phase is over (section 3.1: an examination phase, then a
//! migration phase), from per-page tallies.
//!
//! Each copy examined and each page migrated is one step, so the machine interleaves
//! the daemon with the processors in simulated time and lock contention shows up in
//! both. With the memory modules as servers ([`Memory`]) an examination also asks the
//! entry copy's module for its words (and waits for it), and a migration's copy and
//! entry updates occupy the modules they reach.

use super::config::ExamineOrder;
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

/// A migration a daemon made, with the tallies that chose it (for the migration trace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moved {
    pub page: usize,
    pub from: u16,
    pub to: u16,
    /// The history value of the page's own node and of the destination at the pass.
    pub own: u32,
    pub best: u32,
    /// Back to the node the page left at its previous migration.
    pub pingpong: bool,
}

pub struct Daemon {
    /// Its partition: pages `first..end`.
    first: usize,
    end: usize,
    pub time: u64,
    phase: Phase,
    block_ns: u64,
    examine_ns: u64,
    order: ExamineOrder,
    migrate: MigrationCost,
    /// Per page of the partition (index `page - first`), this pass: its own node's
    /// value, the best other value and that node.
    own: Vec<u32>,
    best: Vec<u32>,
    best_node: Vec<u16>,
    chosen: Vec<(usize, u16)>,
    pub stats: DaemonStats,
}

impl Daemon {
    /// `migrate`: copying a page and updating all its entry copies.
    pub fn new(first: usize, end: usize, block_ns: u64, examine_ns: u64, order: ExamineOrder, migrate: MigrationCost) -> Daemon {
        let len = end.saturating_sub(first);
        Daemon {
            first,
            end,
            time: 0,
            phase: Phase::Blocked,
            block_ns,
            examine_ns,
            order,
            migrate,
            own: vec![0; len],
            best: vec![0; len],
            best_node: vec![0; len],
            chosen: Vec::new(),
            stats: DaemonStats::default(),
        }
    }

    /// The copy examined after `(page, node)` in this daemon's order, None after the last.
    fn next_copy(&self, page: usize, node: usize, nodes: usize) -> Option<(usize, usize)> {
        match self.order {
            ExamineOrder::Entries if node + 1 < nodes => Some((page, node + 1)),
            ExamineOrder::Entries if page + 1 < self.end => Some((page + 1, 0)),
            ExamineOrder::Copies if page + 1 < self.end => Some((page + 1, node)),
            ExamineOrder::Copies if node + 1 < nodes => Some((self.first, node + 1)),
            _ => None,
        }
    }

    /// One step at `self.time`; `memory`: the modules, when they are servers. Returns the
    /// migration made by a migration step.
    pub fn step(&mut self, pages: &mut Pages, memory: Option<&mut Memory>) -> Option<Moved> {
        match self.phase {
            Phase::Blocked => {
                self.time = self.time.saturating_add(self.block_ns);
                self.stats.passes += 1;
                self.phase = if self.first < self.end { Phase::Examine { page: self.first, node: 0 } } else { Phase::Blocked };
                if self.first >= self.end {
                    // nothing to examine: a pass is its blocking alone (at least 1 ns)
                    self.time = self.time.saturating_add(1);
                }
                self.own.fill(0);
                self.best.fill(0);
                self.best_node.fill(0);
                None
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
                let i = page - self.first;
                // the page's node changes only in this daemon's migration phase
                if node == pages.node_of[page] as usize {
                    self.own[i] = value;
                } else if value > self.best[i] {
                    // strictly more: a tie between other nodes keeps the lowest
                    self.best[i] = value;
                    self.best_node[i] = node as u16;
                }
                if let Some((page, node)) = self.next_copy(page, node, pages.nodes) {
                    self.phase = Phase::Examine { page, node };
                    return None;
                }
                for i in 0..self.own.len() {
                    if self.best[i] > self.own[i] {
                        self.chosen.push((self.first + i, self.best_node[i]));
                    }
                }
                self.phase = if self.chosen.is_empty() { Phase::Blocked } else { Phase::Migrate { next: 0 } };
                None
            }
            Phase::Migrate { next } => {
                let (page, dest) = self.chosen[next];
                let before = self.time;
                let wait_from = pages.locked_until[page * pages.nodes..(page + 1) * pages.nodes].iter().copied().fold(before, u64::max);
                let hold = self.migrate.hold_ns.max(1);
                self.time = pages.lock_all(page, before, hold);
                self.stats.lock_wait_ns += wait_from - before;
                let from = pages.node_of[page];
                if let Some(m) = memory {
                    m.migration(from as usize, dest as usize, self.time - hold, &self.migrate);
                }
                let pingpong = pages.migrate(page, dest);
                self.stats.migrations += 1;
                if next + 1 < self.chosen.len() {
                    self.phase = Phase::Migrate { next: next + 1 };
                } else {
                    self.chosen.clear();
                    self.phase = Phase::Blocked;
                }
                let i = page - self.first;
                Some(Moved { page, from, to: dest, own: self.own[i], best: self.best[i], pingpong })
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
        let mut d = Daemon::new(0, 3, 50, 10, ExamineOrder::Entries, cost(1000));
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
        let mut d = Daemon::new(0, 1, 0, 10, ExamineOrder::Entries, cost(100));
        run_pass(&mut d, &mut pages);
        // copy 0 at 0..10, copy 1 waits for the holder until 500
        assert_eq!(d.stats.lock_wait_ns, 490);
        assert_eq!(d.time, 510);
    }

    /// Copy by copy the daemon reaches page 1's copy on node 0 second (entry by entry,
    /// third): a processor holding it then makes only that order wait.
    #[test]
    fn the_order_decides_which_copy_comes_when() {
        for (order, wait) in [(ExamineOrder::Entries, 0), (ExamineOrder::Copies, 5)] {
            let mut pages = Pages::new(2, 64, vec![0, 0], History::Usage);
            pages.lock_one(1, 0, 0, 15);
            let mut d = Daemon::new(0, 2, 0, 10, order, cost(100));
            run_pass(&mut d, &mut pages);
            // entries: (0,0) 0-10, (0,1) 10-20, (1,0) at 20; copies: (0,0) 0-10, (1,0) waits to 15
            assert_eq!(d.stats.lock_wait_ns, wait, "{order:?}");
            assert_eq!(d.time, 40 + wait, "{order:?}");
        }
    }

    /// Without references during the pass the order changes nothing: the same tallies,
    /// the same pages moved, at the same times.
    #[test]
    fn without_references_during_a_pass_the_orders_agree() {
        let outcome = |order| {
            let mut pages = Pages::new(3, 64, vec![0, 1, 2, 0], History::Usage);
            for (page, node, times) in [(0, 2, 3), (0, 1, 1), (1, 1, 2), (1, 0, 2), (2, 0, 5), (3, 1, 1), (3, 2, 1)] {
                for _ in 0..times {
                    pages.touch(page, node);
                }
            }
            let mut d = Daemon::new(0, 4, 0, 10, order, cost(100));
            run_pass(&mut d, &mut pages);
            (pages.node_of.clone(), d.stats.clone(), d.time)
        };
        let entries = outcome(ExamineOrder::Entries);
        // page 0 to node 2, page 1 stays (a tie with its home), page 2 to node 0, page 3 to
        // node 1 (a tie between others: the lowest)
        assert_eq!(entries.0, vec![2, 1, 0, 1]);
        assert_eq!(entries, outcome(ExamineOrder::Copies));
    }
}
