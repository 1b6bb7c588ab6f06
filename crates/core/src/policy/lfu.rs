//! In-cache LFU: evict the resident page with the fewest references since it was loaded,
//! the least recently used one among equal counts. A count starts at 1 when the page is
//! loaded and is forgotten when it leaves ("in-cache" LFU, as opposed to perfect LFU,
//! which counts every reference of the stream). LFU keeps pages that were popular once
//! long after they stop being used; it is here as the pure frequency end of the
//! comparison with LRU, 2Q, ARC and LIRS.
//!
//! O(1) per operation with the layout of Shah, Mitra and Matani ("An O(1) algorithm for
//! implementing the LFU cache eviction scheme", 2010): frequency groups in increasing
//! order of count, each holding its pages in LRU order. Over dense ids and flat arrays:
//! - one intrusive doubly linked list over the resident pages, in (count, last use)
//!   order: the head is the victim, each group is a contiguous run of it, oldest first;
//! - per page a node `{prev, next, group}` (one entry, so a hit touches one cache line
//!   of the per-page array, the one `prefetch` asks for);
//! - per group `{count, first, last}`, allocated from a `Vec` with a free list. Groups
//!   need no links of their own: the group after `g` is the group of the page after
//!   `g.last`, and the lowest group is the group of the head.
//!
//! A hit moves the page to the end of the group of count + 1, which, if it exists, is
//! the next group; otherwise a group of count + 1 is created right after the page's
//! group (or, if the page was alone in its group, that group's count goes up in place).
//! A page last referenced later than another of the same count joined their group later,
//! so each group's order is the order of last use. A new page joins the end of the
//! count-1 group, which, if it exists, is the lowest.

use super::ReplacementPolicy;
use crate::trace::PageId;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    prev: u32,
    next: u32,
    /// The page's group; NIL when not resident.
    group: u32,
}

const FREE_NODE: Node = Node { prev: NIL, next: NIL, group: NIL };

#[derive(Debug, Clone, Copy)]
struct Group {
    /// References since load of every page of the group.
    count: u64,
    /// Least recently used page of the group.
    first: u32,
    /// Most recently used page of the group.
    last: u32,
}

#[derive(Debug)]
pub struct Lfu {
    nodes: Vec<Node>,
    /// The victim: first page of the lowest group.
    head: u32,
    tail: u32,
    groups: Vec<Group>,
    free_groups: Vec<u32>,
}

impl Default for Lfu {
    fn default() -> Self {
        Lfu { nodes: Vec::new(), head: NIL, tail: NIL, groups: Vec::new(), free_groups: Vec::new() }
    }
}

impl Lfu {
    pub fn new() -> Self {
        Self::default()
    }

    fn new_group(&mut self, count: u64, page: PageId) -> u32 {
        let g = Group { count, first: page, last: page };
        match self.free_groups.pop() {
            Some(i) => {
                self.groups[i as usize] = g;
                i
            }
            None => {
                self.groups.push(g);
                (self.groups.len() - 1) as u32
            }
        }
    }

    /// Links `page` into the order right after `after` (at the head for NIL).
    #[inline]
    fn link_after(&mut self, page: PageId, after: u32) {
        let next = if after == NIL { self.head } else { self.nodes[after as usize].next };
        let node = &mut self.nodes[page as usize];
        node.prev = after;
        node.next = next;
        if after == NIL {
            self.head = page;
        } else {
            self.nodes[after as usize].next = page;
        }
        if next == NIL {
            self.tail = page;
        } else {
            self.nodes[next as usize].prev = page;
        }
    }

    #[inline]
    fn unlink(&mut self, page: PageId) {
        let Node { prev, next, .. } = self.nodes[page as usize];
        if prev == NIL {
            self.head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
    }

    /// Takes `page` out of its group's bounds (before unlinking it), freeing the group
    /// when it was the only page.
    #[inline]
    fn leave_group(&mut self, page: PageId, g: u32) {
        let Node { prev, next, .. } = self.nodes[page as usize];
        let group = &mut self.groups[g as usize];
        match (group.first == page, group.last == page) {
            (true, true) => self.free_groups.push(g),
            (true, false) => group.first = next,
            (false, true) => group.last = prev,
            (false, false) => {}
        }
    }

    fn remove(&mut self, page: PageId) {
        let g = self.nodes[page as usize].group;
        self.leave_group(page, g);
        self.unlink(page);
        self.nodes[page as usize] = FREE_NODE;
    }

    #[cfg(test)]
    fn count_of(&self, page: PageId) -> Option<u64> {
        let g = self.nodes.get(page as usize)?.group;
        (g != NIL).then(|| self.groups[g as usize].count)
    }

    #[cfg(test)]
    fn order(&self) -> Vec<PageId> {
        std::iter::successors((self.head != NIL).then_some(self.head), |&p| {
            let n = self.nodes[p as usize].next;
            (n != NIL).then_some(n)
        })
        .collect()
    }

    /// The structure's invariants: links both ways, each live group one contiguous run
    /// bounded by its `first` and `last`, counts strictly increasing along the order.
    #[cfg(test)]
    fn check_structure(&self) {
        let order = self.order();
        let mut prev = NIL;
        let mut seen_groups = std::collections::HashSet::new();
        let mut last_count = 0;
        for (i, &p) in order.iter().enumerate() {
            let node = self.nodes[p as usize];
            assert_eq!(node.prev, prev, "prev link of {p}");
            let g = node.group;
            assert_ne!(g, NIL, "a listed page has a group");
            let group = self.groups[g as usize];
            if i == 0 || self.nodes[prev as usize].group != g {
                assert_eq!(group.first, p, "group {g} starts at its first page");
                assert!(seen_groups.insert(g), "group {g} is contiguous");
                assert!(group.count > last_count, "counts increase along the order");
                last_count = group.count;
            }
            if node.next == NIL || self.nodes[node.next as usize].group != g {
                assert_eq!(group.last, p, "group {g} ends at its last page");
            }
            prev = p;
        }
        assert_eq!(self.tail, prev);
        assert_eq!(seen_groups.len() + self.free_groups.len(), self.groups.len(), "every group is live or free");
        let resident = self.nodes.iter().filter(|n| n.group != NIL).count();
        assert_eq!(resident, order.len(), "the resident pages are the listed ones");
    }
}

impl ReplacementPolicy for Lfu {
    fn name(&self) -> &'static str {
        "lfu"
    }

    fn reserve_pages(&mut self, pages: usize) {
        if pages > self.nodes.len() {
            self.nodes.resize(pages, FREE_NODE);
        }
    }

    /// Moves the page to the end of the group of count + 1.
    #[inline]
    fn on_hit(&mut self, page: PageId, _time: u64) {
        let g = self.nodes[page as usize].group;
        let Group { count, first, last } = self.groups[g as usize];
        let after = self.nodes[last as usize].next;
        let up = if after != NIL {
            let h = self.nodes[after as usize].group;
            if self.groups[h as usize].count == count + 1 {
                h
            } else {
                NIL
            }
        } else {
            NIL
        };
        if up == NIL && first == page && last == page {
            // alone in its group and no group of count + 1: the group moves up
            self.groups[g as usize].count += 1;
            return;
        }
        self.leave_group(page, g);
        self.unlink(page);
        if up != NIL {
            let end = self.groups[up as usize].last;
            self.link_after(page, end);
            self.groups[up as usize].last = page;
            self.nodes[page as usize].group = up;
        } else {
            // g keeps other pages; the new group goes right after them
            let end = self.groups[g as usize].last;
            self.link_after(page, end);
            self.nodes[page as usize].group = self.new_group(count + 1, page);
        }
    }

    /// Appends the page to the count-1 group, the lowest one, creating it if needed.
    fn on_insert(&mut self, page: PageId, _time: u64) {
        if self.head != NIL {
            let g = self.nodes[self.head as usize].group;
            if self.groups[g as usize].count == 1 {
                let end = self.groups[g as usize].last;
                self.link_after(page, end);
                self.groups[g as usize].last = page;
                self.nodes[page as usize].group = g;
                return;
            }
        }
        self.link_after(page, NIL);
        self.nodes[page as usize].group = self.new_group(1, page);
    }

    /// The head: least recently used page of the lowest count.
    fn select_victim(&mut self, _time: u64) -> PageId {
        let victim = self.head;
        assert_ne!(victim, NIL, "select_victim with no resident page");
        self.remove(victim);
        victim
    }

    fn on_remove(&mut self, page: PageId) {
        if self.nodes[page as usize].group != NIL {
            self.remove(page);
        }
    }

    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        crate::hint::prefetch(&self.nodes, page as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing::run;
    use rand::{Rng, SeedableRng};

    /// The definition, by brute force: per resident page its count and last use; the
    /// victim is found by an O(n) scan.
    struct Model {
        c: usize,
        /// (count, last use) of each resident page.
        entry: Vec<Option<(u64, u64)>>,
    }

    impl Model {
        fn new(c: usize, pages: usize) -> Self {
            Model { c, entry: vec![None; pages] }
        }

        fn victim(&self) -> Option<PageId> {
            (0..self.entry.len()).filter_map(|p| self.entry[p].map(|e| (e, p as PageId))).min().map(|(_, p)| p)
        }

        fn reference(&mut self, page: PageId, t: u64) {
            match &mut self.entry[page as usize] {
                Some((count, last)) => {
                    *count += 1;
                    *last = t;
                }
                None => {
                    if self.entry.iter().flatten().count() == self.c {
                        let v = self.victim().unwrap();
                        self.entry[v as usize] = None;
                    }
                    self.entry[page as usize] = Some((1, t));
                }
            }
        }

        fn remove(&mut self, page: PageId) {
            self.entry[page as usize] = None;
        }

        /// The policy agrees: same resident pages with the same counts, same next victim.
        fn check(&self, lfu: &Lfu, t: usize) {
            lfu.check_structure();
            for (p, e) in self.entry.iter().enumerate() {
                assert_eq!(lfu.count_of(p as PageId), e.map(|e| e.0), "count of {p} at {t}");
            }
            assert_eq!(lfu.order().first().copied(), self.victim(), "victim at {t}");
        }
    }

    #[test]
    fn victims_match_a_brute_force_model() {
        for (c, pages, seed) in [(1usize, 4u32, 1u64), (2, 5, 2), (4, 10, 3), (16, 40, 4), (50, 60, 5), (50, 400, 6)] {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            // skewed, so that counts spread over many groups
            let stream: Vec<PageId> = (0..20_000)
                .map(|_| if rng.gen_bool(0.6) { rng.gen_range(0..pages / 5 + 1) } else { rng.gen_range(0..pages) })
                .collect();
            let mut model = Model::new(c, pages as usize);
            let mut lfu = Lfu::new();
            run(&mut lfu, c, &stream, |lfu, t, _| {
                model.reference(stream[t], t as u64);
                model.check(lfu, t);
            });
            assert!(lfu.groups.len() > 1 || c == 1);
        }
    }

    /// The same, with pages also leaving through `on_remove` (any position in a group).
    #[test]
    fn on_remove_keeps_the_order() {
        let (c, pages) = (12usize, 30u32);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut lfu = Lfu::new();
        lfu.reserve_pages(pages as usize);
        let mut model = Model::new(c, pages as usize);
        let mut resident = vec![false; pages as usize];
        let mut count = 0;
        for t in 0..20_000usize {
            if rng.gen_bool(0.1) {
                let p = rng.gen_range(0..pages);
                if resident[p as usize] {
                    resident[p as usize] = false;
                    count -= 1;
                }
                lfu.on_remove(p);
                model.remove(p);
            } else {
                let x = if rng.gen_bool(0.5) { rng.gen_range(0..6) } else { rng.gen_range(0..pages) };
                if resident[x as usize] {
                    lfu.on_hit(x, t as u64);
                } else {
                    lfu.on_miss(x, t as u64);
                    if count == c {
                        let v = lfu.select_victim(t as u64);
                        resident[v as usize] = false;
                    } else {
                        count += 1;
                    }
                    lfu.on_insert(x, t as u64);
                    resident[x as usize] = true;
                }
                model.reference(x, t as u64);
            }
            model.check(&lfu, t);
        }
    }

    /// Worked by hand, cache of 3 (count@last use after each step in the comments).
    #[test]
    fn hand_worked_victims() {
        let stream = [0, 1, 2, 1, 0, 3, 4, 4, 5, 0, 5, 6, 6, 6, 6, 7, 8, 2, 2, 2, 9];
        let mut lfu = Lfu::new();
        lfu.reserve_pages(10);
        let mut resident = [false; 10];
        let (mut count, mut victims) = (0, Vec::new());
        for (t, &x) in stream.iter().enumerate() {
            if resident[x as usize] {
                lfu.on_hit(x, t as u64);
            } else {
                if count == 3 {
                    let v = lfu.select_victim(t as u64);
                    resident[v as usize] = false;
                    victims.push(v);
                } else {
                    count += 1;
                }
                lfu.on_insert(x, t as u64);
                resident[x as usize] = true;
            }
            lfu.check_structure();
        }
        // t5 (3): 0=2, 1=2, 2=1 -> 2, the only count 1
        // t6 (4): 0=2, 1=2, 3=1 -> 3
        // t8 (5): 0=2@4, 1=2@3, 4=2@7 -> 1, the oldest of equal counts
        // t11 (6): 0=3, 4=2@7, 5=2@10 -> 4
        // t15 (7): 0=3, 5=2, 6=4 -> 5
        // t16 (8): 7 (count 1); t17 (2): 8 (count 1)
        // t20 (9): 0=3@9, 2=3@19, 6=4 -> 0
        assert_eq!(victims, vec![2, 3, 1, 4, 5, 7, 8, 0]);
        assert_eq!((lfu.count_of(2), lfu.count_of(6), lfu.count_of(9)), (Some(3), Some(4), Some(1)));
        assert_eq!(lfu.order(), vec![9, 2, 6]);
        // counts are forgotten on eviction: 0 comes back at 1
        assert_eq!(lfu.count_of(0), None);
    }

    /// Five pages used three times each, then 100 new pages once each, twenty rounds,
    /// cache of 10: the scan pages (count 1) only ever evict each other under LFU, so the
    /// hot pages fault once; LRU loses them to every scan.
    #[test]
    fn frequent_pages_survive_a_scan() {
        let c = 10;
        let mut stream: Vec<PageId> = Vec::new();
        let mut next_new = 100;
        for _ in 0..20 {
            for _ in 0..3 {
                stream.extend(0..5);
            }
            stream.extend(next_new..next_new + 100);
            next_new += 100;
        }
        let mut lfu = Lfu::new();
        let faults = run(&mut lfu, c, &stream, |lfu, _, _| lfu.check_structure());
        let lru = run(&mut crate::policy::Lru::new(), c, &stream, |_, _, _| {});
        assert_eq!(faults, 5 + 20 * 100, "LFU {faults}");
        assert_eq!(lru, 20 * 105, "LRU {lru}");
        assert!((0..5).all(|p| lfu.count_of(p) == Some(60)));
    }
}
