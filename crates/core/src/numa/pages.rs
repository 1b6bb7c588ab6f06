//! The shared page table: where each page lives, and per page and node one copy of its
//! entry with a lock and that node's processor's reference history
//! (numa-page-migration.txt sections 2.1, 3 and 4.1). Flat arrays indexed by
//! `page * nodes + node`.

use super::config::History;

pub struct Pages {
    pub nodes: usize,
    pub page_size: u64,
    /// The node whose memory holds each page.
    pub node_of: Vec<u16>,
    /// The simulated time until which each entry copy is locked.
    pub locked_until: Vec<u64>,
    /// The hardware history: a Referenced bit (0/1) or a Usage count.
    pub refs: Vec<u32>,
    /// Aging's software copy, updated at each examination.
    pub age: Vec<u8>,
    pub history: History,
    /// The node each page left at its last migration (`NO_NODE` before its first).
    pub left_from: Vec<u16>,
    /// Per page: migrations back to the node it left at its previous migration (a page
    /// moving A -> B -> A: section 5.3's "thrashing (excessive transfers between two
    /// local memories)").
    pub pingpongs: Vec<u32>,
}

/// No node: a page that never migrated.
pub const NO_NODE: u16 = u16::MAX;

impl Pages {
    pub fn new(nodes: usize, page_size: u64, node_of: Vec<u16>, history: History) -> Pages {
        let n = node_of.len() * nodes;
        let pages = node_of.len();
        Pages {
            nodes,
            page_size,
            node_of,
            locked_until: vec![0; n],
            refs: vec![0; n],
            age: vec![0; n],
            history,
            left_from: vec![NO_NODE; pages],
            pingpongs: vec![0; pages],
        }
    }

    /// Moves `page` to node `dest`; true when that is a ping-pong (back to the node the
    /// page left at its previous migration).
    pub fn migrate(&mut self, page: usize, dest: u16) -> bool {
        let pingpong = self.left_from[page] == dest;
        if pingpong {
            self.pingpongs[page] += 1;
        }
        self.left_from[page] = self.node_of[page];
        self.node_of[page] = dest;
        pingpong
    }

    pub fn len(&self) -> usize {
        self.node_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.node_of.is_empty()
    }

    /// A reference by `node`'s processor, at its translation (section 4.1's start macro).
    #[inline]
    pub fn touch(&mut self, page: usize, node: usize) {
        let r = &mut self.refs[page * self.nodes + node];
        *r = match self.history {
            History::Usage => r.saturating_add(1),
            _ => 1,
        };
    }

    /// The daemon reads and clears copy `(page, node)`: the value the migration policy
    /// compares (a Usage count, the Referenced bit, or the aged byte).
    pub fn examine(&mut self, page: usize, node: usize) -> u32 {
        let i = page * self.nodes + node;
        let r = std::mem::take(&mut self.refs[i]);
        match self.history {
            History::Aging(k) => {
                let bit = (r > 0) as u8;
                self.age[i] = (self.age[i] >> 1) | (bit << (k - 1));
                self.age[i] as u32
            }
            _ => r,
        }
    }

    /// Locks every copy of `page`'s entry from `now` (waiting for the last holder) for
    /// `hold` ns; returns when the hold ends.
    pub fn lock_all(&mut self, page: usize, now: u64, hold: u64) -> u64 {
        let copies = &mut self.locked_until[page * self.nodes..(page + 1) * self.nodes];
        let start = copies.iter().copied().fold(now, u64::max);
        // saturating: the machine turns a time past its limit into an error
        let end = start.saturating_add(hold);
        copies.iter_mut().for_each(|c| *c = end);
        end
    }

    /// Locks copy `(page, node)` from `now` for `hold` ns; returns (start, end).
    #[inline]
    pub fn lock_one(&mut self, page: usize, node: usize, now: u64, hold: u64) -> (u64, u64) {
        let c = &mut self.locked_until[page * self.nodes + node];
        let start = now.max(*c);
        let end = start.saturating_add(hold);
        *c = end;
        (start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histories_read_and_clear() {
        for (history, seen) in [(History::Usage, [3, 0, 1]), (History::Referenced, [1, 0, 1]), (History::Aging(2), [2, 1, 2])] {
            let mut p = Pages::new(2, 64, vec![0], history);
            let mut got = Vec::new();
            // pass 1: three references; pass 2: none; pass 3: one
            for touches in [3, 0, 1] {
                for _ in 0..touches {
                    p.touch(0, 1);
                }
                got.push(p.examine(0, 1));
            }
            assert_eq!(got, seen, "{history:?}");
        }
        // aging with 3 bits after referenced, referenced, idle: 100 -> 110 -> 011
        let mut p = Pages::new(1, 64, vec![0], History::Aging(3));
        p.touch(0, 0);
        assert_eq!(p.examine(0, 0), 0b100);
        p.touch(0, 0);
        assert_eq!(p.examine(0, 0), 0b110);
        assert_eq!(p.examine(0, 0), 0b011);
    }

    #[test]
    fn a_page_back_where_it_last_came_from_is_a_pingpong() {
        let mut p = Pages::new(3, 64, vec![0, 0], History::Usage);
        assert!(!p.migrate(0, 1), "0 -> 1: a first move");
        assert!(!p.migrate(0, 2), "1 -> 2: not back to 1's predecessor");
        assert!(!p.migrate(0, 0), "2 -> 0: it left 1, not 0, last");
        assert!(p.migrate(0, 2), "0 -> 2: back to the node it just left");
        assert!(p.migrate(0, 0), "2 -> 0: and back again");
        assert!(!p.migrate(1, 1));
        assert_eq!(p.pingpongs, vec![2, 0]);
        assert_eq!(p.node_of, vec![0, 1]);
    }

    #[test]
    fn locks_serve_in_request_order() {
        let mut p = Pages::new(2, 64, vec![0, 1], History::Usage);
        assert_eq!(p.lock_one(0, 0, 100, 50), (100, 150));
        assert_eq!(p.lock_one(0, 0, 120, 10), (150, 160), "waits for the holder");
        assert_eq!(p.lock_one(0, 1, 120, 10), (120, 130), "another copy is free");
        assert_eq!(p.lock_all(0, 125, 5), 165, "all copies: after the last holder");
        assert_eq!(p.locked_until[0..2], [165, 165]);
    }
}
