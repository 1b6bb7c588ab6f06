//! The Dead-List of predictive-replacement.txt section 5: resident pages chained by
//! predicted death time, "approximately sorted", with O(1) insertion.
//!
//! Section 5 chains "pages with similar values of estimated lifetime distances in a hash
//! bucket", m = 101 chains, a page inserted at the tail of its chain. Here a page's
//! chain is chosen by its predicted lifetime (in faults to other pages): one chain per
//! value below 32, then eight chains per doubling, the last chain taking every lifetime
//! from 2^14 up. Pages of one chain were predicted alike and inserted in fault order, so
//! each chain is nearly sorted by death time and its head is nearly its earliest death;
//! the list's head is the earliest of the 101 chain heads (O(m) as the paper says).
//! Every operation is on one flat per-page array of links (one cache line a page), no
//! allocation after `reserve_pages`; the chain heads' deaths sit in one small array, so
//! finding the head reads 101 contiguous numbers, not 101 pages.

use crate::trace::PageId;

/// Number of chains (section 5: "a fairly small value of m (currently set to 101)").
pub const CHAINS: usize = 101;
const NIL: u32 = u32::MAX;
const NOT_LISTED: u8 = u8::MAX;

/// A page's links: neighbours in its chain, the chain, and its predicted death (in the
/// caller's fault count).
#[derive(Debug, Clone, Copy)]
struct Node {
    death: u64,
    next: u32,
    prev: u32,
    chain: u8,
}

const UNLISTED: Node = Node { death: 0, next: NIL, prev: NIL, chain: NOT_LISTED };

#[derive(Debug)]
pub struct DeadList {
    head: [u32; CHAINS],
    tail: [u32; CHAINS],
    /// The death of each chain's head; u64::MAX for an empty chain.
    head_death: [u64; CHAINS],
    node: Vec<Node>,
    len: usize,
}

impl Default for DeadList {
    fn default() -> Self {
        DeadList { head: [NIL; CHAINS], tail: [NIL; CHAINS], head_death: [u64::MAX; CHAINS], node: Vec::new(), len: 0 }
    }
}

/// The chain of a predicted lifetime: exact below 32, then 8 chains per doubling.
pub fn chain_of(lifetime: u64) -> usize {
    if lifetime < 32 {
        return lifetime as usize;
    }
    let octave = 63 - lifetime.leading_zeros() as usize; // >= 5
    let sub = ((lifetime >> (octave - 3)) & 7) as usize;
    (32 + (octave - 5) * 8 + sub).min(CHAINS - 1)
}

impl DeadList {
    pub fn reserve_pages(&mut self, pages: usize) {
        if pages > self.node.len() {
            self.node.resize(pages, UNLISTED);
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn contains(&self, page: PageId) -> bool {
        self.node[page as usize].chain != NOT_LISTED
    }

    /// Appends `page`, predicted to live `lifetime` more faults, dying at `death`.
    pub fn insert(&mut self, page: PageId, lifetime: u64, death: u64) {
        debug_assert!(!self.contains(page));
        let c = chain_of(lifetime);
        let tail = self.tail[c];
        self.node[page as usize] = Node { death, next: NIL, prev: tail, chain: c as u8 };
        match tail {
            NIL => {
                self.head[c] = page;
                self.head_death[c] = death;
            }
            t => self.node[t as usize].next = page,
        }
        self.tail[c] = page;
        self.len += 1;
    }

    /// Takes `page` off its chain; nothing if it is not listed.
    pub fn remove(&mut self, page: PageId) {
        let Node { next, prev, chain, .. } = self.node[page as usize];
        if chain == NOT_LISTED {
            return;
        }
        let c = chain as usize;
        match prev {
            NIL => {
                self.head[c] = next;
                self.head_death[c] = if next == NIL { u64::MAX } else { self.node[next as usize].death };
            }
            x => self.node[x as usize].next = next,
        }
        match next {
            NIL => self.tail[c] = prev,
            x => self.node[x as usize].prev = prev,
        }
        self.node[page as usize] = UNLISTED;
        self.len -= 1;
    }

    /// The list's head: the chain head with the earliest predicted death (ties to the
    /// lower chain), with that death.
    pub fn head(&self) -> Option<(PageId, u64)> {
        let (mut best, mut at) = (u64::MAX, CHAINS);
        for (c, &d) in self.head_death.iter().enumerate() {
            if d < best {
                best = d;
                at = c;
            }
        }
        if at == CHAINS {
            // every chain empty, or every listed page dying at u64::MAX (never)
            return self.head.iter().position(|&h| h != NIL).map(|c| (self.head[c], u64::MAX));
        }
        Some((self.head[at], best))
    }

    /// Pages in chain order, for tests.
    #[cfg(test)]
    pub fn chain_pages(&self, c: usize) -> Vec<PageId> {
        let mut out = Vec::new();
        let mut at = self.head[c];
        while at != NIL {
            out.push(at);
            at = self.node[at as usize].next;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_are_exact_then_logarithmic_and_monotone() {
        for l in 0..32 {
            assert_eq!(chain_of(l), l as usize);
        }
        assert_eq!(chain_of(32), 32);
        assert_eq!(chain_of(36), 33);
        assert_eq!(chain_of(63), 39);
        assert_eq!(chain_of(64), 40);
        assert_eq!(chain_of(1 << 14), 100);
        assert_eq!(chain_of(u64::MAX), 100);
        let mut last = 0;
        for l in 0..100_000u64 {
            let c = chain_of(l);
            assert!(c >= last && c < CHAINS);
            last = c;
        }
    }

    #[test]
    fn head_is_the_earliest_chain_head_and_removal_relinks() {
        let mut d = DeadList::default();
        d.reserve_pages(10);
        assert_eq!(d.head(), None);
        d.insert(1, 5, 105); // chain 5
        d.insert(2, 5, 107); // chain 5, behind 1
        d.insert(3, 40, 90); // chain 34
        d.insert(4, 2, 103); // chain 2
        assert_eq!(d.len(), 4);
        assert_eq!(d.head(), Some((3, 90)));
        d.remove(3);
        assert_eq!(d.head(), Some((4, 103)));
        assert_eq!(d.chain_pages(5), vec![1, 2]);
        d.remove(1);
        assert_eq!(d.chain_pages(5), vec![2]);
        d.remove(1); // not listed: nothing
        assert_eq!(d.len(), 2);
        d.remove(4);
        assert_eq!(d.head(), Some((2, 107)));
        d.insert(1, 5, 110);
        assert_eq!(d.chain_pages(5), vec![2, 1]);
        assert!(d.contains(1) && !d.contains(3));
    }

    /// Approximately sorted: a chain's head is never later than the chain's earliest
    /// death by more than the chain's width, when pages enter in fault order.
    #[test]
    fn head_error_is_bounded_by_the_chain_width() {
        let mut d = DeadList::default();
        d.reserve_pages(5000);
        let mut x = 7u64;
        let mut listed = Vec::new();
        for (now, page) in (0..5000u32).enumerate() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let l = (x >> 33) % 3000;
            d.insert(page, l, now as u64 + l);
            listed.push((page, now as u64 + l, l));
            if page % 3 == 0 && listed.len() > 1 {
                let (victim, _, _) = listed.swap_remove(((x >> 20) % listed.len() as u64) as usize);
                d.remove(victim);
            }
            let (_, hd) = d.head().unwrap();
            let min = listed.iter().map(|&(_, death, _)| death).min().unwrap();
            // the chain holding `min` has width at most l/8: its head died no later than min + l/8
            let (_, _, lmin) = *listed.iter().find(|&&(_, death, _)| death == min).unwrap();
            assert!(hd >= min && hd <= min + lmin / 8 + 1, "head {hd}, earliest {min}");
        }
    }
}
