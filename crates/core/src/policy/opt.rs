//! OPT (Belady 1966, MIN): evict the resident page whose next reference is farthest in
//! the future. Here the future comes from a pre-pass that gives, for every record index,
//! the index of the next record that touches the same page ([`next_use_times`]);
//! [`super::OptFromTrace`] takes it from the trace instead. Both keep their resident
//! pages in [`ResidentKeys`].
//!
//! A resident page's key is its next use, a record index; distinct pages have distinct
//! keys, so the keys of the resident pages are a set of times. It is kept as a bitmap
//! over the stream's record indices with a summary bit per word above it
//! ([`TimeSet`]: 10 M records take 1.25 MiB, about the core's L2 cache): the victim is
//! the page of the record at the set's largest time, found by four leading-zero counts
//! down the levels; a reference takes its page's old key out (the current time) and
//! puts the new one in. Pages never used again (key [`NEVER`]) are evicted first, the
//! largest id first, from a second such set, over page ids. (A max-heap of (key, page)
//! with stale entries left in it gave the same victims: its sifts were a third of an OPT
//! replay. A max-heap of the never-used-again pages alone, stale entries skipped, gave
//! them too: on the 10 M-reference benchmark most of its 629,450 pages pass through it,
//! and the set took the replay from 0.362-0.387 s to 0.352-0.366 s, best of five.)
use super::ReplacementPolicy;
use crate::trace::{has_frees, AccessKind, PageId};

/// Next-use time of a record whose page is never touched again.
pub const NEVER: u32 = u32::MAX;

/// Key 0 marks a page that is not resident (no record's next use can be 0).
const NOT_RESIDENT: u32 = 0;

/// For each record index `t` of `ids`, the index of the next record with the same id,
/// or [`NEVER`]. `pages` bounds the ids. One backward pass: the output is written in
/// order and only the per-page `following` array is accessed at random.
///
/// `kinds` (empty, or one per id) marks free records: a page freed before its next
/// touch is not used again (its next touch is a new, zero-filled page), so the records
/// before a free get [`NEVER`], and so does the free itself.
pub fn next_use_times(ids: &[PageId], kinds: &[AccessKind], pages: usize) -> Vec<u32> {
    debug_assert!(kinds.is_empty() || kinds.len() == ids.len());
    let mut next = vec![NEVER; ids.len()];
    let mut following = vec![NEVER; pages];
    let frees = !kinds.is_empty() && has_frees(kinds);
    for t in (0..ids.len()).rev() {
        let id = ids[t] as usize;
        if id >= following.len() {
            following.resize(id + 1, NEVER);
        }
        if frees && kinds[t] == AccessKind::Free {
            following[id] = NEVER;
            continue;
        }
        next[t] = following[id];
        following[id] = t as u32;
    }
    next
}

/// What OPT knows of the stream before it runs: every record's next use
/// ([`next_use_times`]) and every record's page (the page a next use belongs to).
#[derive(Debug)]
pub struct Future {
    pub next: Vec<u32>,
    pub ids: std::sync::Arc<Vec<PageId>>,
}

impl Future {
    pub fn new(ids: std::sync::Arc<Vec<PageId>>, kinds: &[AccessKind], pages: usize) -> Self {
        Future { next: next_use_times(&ids, kinds, pages), ids }
    }
}

/// A set of integers (times, or page ids) below a bound: a bitmap with, above each level,
/// one bit per non-empty word of the level below, up to a single word. Insert, remove and
/// largest element in O(levels), 4 levels for 16 M elements.
#[derive(Debug, Default)]
pub struct TimeSet {
    /// Level 0 is the bitmap of times; the last level has one word.
    levels: Vec<Vec<u64>>,
}

impl TimeSet {
    /// An empty set of times in `0..bound`.
    pub fn new(bound: usize) -> Self {
        let mut levels = Vec::new();
        let mut n = bound.max(1);
        loop {
            let words = n.div_ceil(64);
            levels.push(vec![0u64; words]);
            if words == 1 {
                break;
            }
            n = words;
        }
        TimeSet { levels }
    }

    #[inline]
    pub fn insert(&mut self, t: u32) {
        let mut i = t as usize;
        for level in &mut self.levels {
            let (w, b) = (i / 64, i % 64);
            let was = level[w];
            level[w] = was | 1 << b;
            if was != 0 {
                return;
            }
            i = w;
        }
    }

    #[inline]
    pub fn remove(&mut self, t: u32) {
        let mut i = t as usize;
        for level in &mut self.levels {
            let (w, b) = (i / 64, i % 64);
            level[w] &= !(1 << b);
            if level[w] != 0 {
                return;
            }
            i = w;
        }
    }

    /// The elements it can hold are below this (at least the bound it was made for).
    pub fn bound(&self) -> usize {
        self.levels[0].len() * 64
    }

    /// The same set below a larger bound.
    pub fn grown(&self, bound: usize) -> TimeSet {
        let mut s = TimeSet::new(bound);
        for (w, &x) in self.levels[0].iter().enumerate() {
            let mut x = x;
            while x != 0 {
                s.insert((w * 64) as u32 + x.trailing_zeros());
                x &= x - 1;
            }
        }
        s
    }

    /// The largest time in the set.
    #[inline]
    pub fn max(&self) -> Option<u32> {
        let mut i = 0usize;
        for level in self.levels.iter().rev() {
            let x = level[i];
            if x == 0 {
                return None; // only the top word can be empty
            }
            i = i * 64 + 63 - x.leading_zeros() as usize;
        }
        Some(i as u32)
    }

    /// Asks for the bitmap word of `t` ahead ([`crate::hint::prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, t: u32) {
        crate::hint::prefetch(&self.levels[0], t as usize / 64);
    }
}

/// Where OPT learns the future from.
#[derive(Debug)]
pub enum Foresight {
    /// A pre-pass over the recorded stream ([`Opt`]).
    PrePass(std::sync::Arc<Future>),
    /// The trace's own next-access times, checked as the stream goes
    /// ([`super::OptFromTrace`]); `references` bounds them.
    FromTrace { references: u64 },
}

/// The victim [`ResidentKeys::take_victim`] took out.
pub(crate) enum Victim {
    /// A page never used again, by id.
    Never(PageId),
    /// The latest key: whose page it is, the caller knows.
    Latest(u32),
}

/// OPT's resident pages by key, whoever gives the keys: the keys of the pages used
/// again, the pages never used again by id (evicted first, the largest id first), and
/// the largest key, kept up to date.
#[derive(Debug)]
pub(crate) struct ResidentKeys {
    /// The keys of the resident pages that are used again.
    times: TimeSet,
    /// The resident pages that are never used again, by id.
    never: TimeSet,
    /// The largest time in `times` (0: none): the next victim unless a page never used
    /// again is resident.
    top: u32,
}

impl ResidentKeys {
    /// For keys below `bound`.
    pub fn new(bound: usize) -> Self {
        ResidentKeys { times: TimeSet::new(bound), never: TimeSet::new(1), top: 0 }
    }

    /// Makes room for page ids below `pages`.
    pub fn reserve_pages(&mut self, pages: usize) {
        if pages > self.never.bound() {
            self.never = self.never.grown(pages);
        }
    }

    /// Adds a resident page with key `k`; true when `k` is the new largest key.
    #[inline]
    pub fn insert(&mut self, page: PageId, k: u32) -> bool {
        if k == NEVER {
            self.never.insert(page);
            false
        } else {
            self.times.insert(k);
            let top = k > self.top;
            if top {
                self.top = k;
            }
            top
        }
    }

    /// Takes out a resident page with key `k`.
    #[inline]
    pub fn remove(&mut self, page: PageId, k: u32) {
        if k == NEVER {
            self.never.remove(page);
        } else {
            self.times.remove(k);
            if k == self.top {
                self.top = self.times.max().unwrap_or(0);
            }
        }
    }

    /// Asks for the word of key `k` ahead.
    #[inline(always)]
    pub fn prefetch(&self, k: u32) {
        self.times.prefetch(k);
    }

    /// The largest key (0: none).
    #[inline]
    pub fn top(&self) -> u32 {
        self.top
    }

    /// Takes out the next victim; None when no page is resident.
    #[inline]
    pub fn take_victim(&mut self) -> Option<Victim> {
        if let Some(page) = self.never.max() {
            self.never.remove(page);
            return Some(Victim::Never(page));
        }
        // the set's largest time, kept up to date (no chain of loads down the levels)
        let k = self.top;
        if k == 0 {
            return None;
        }
        debug_assert_eq!(Some(k), self.times.max());
        self.times.remove(k);
        self.top = self.times.max().unwrap_or(0);
        Some(Victim::Latest(k))
    }
}

#[derive(Debug)]
pub struct Opt {
    future: std::sync::Arc<Future>,
    keys: ResidentKeys,
    key: Vec<u32>,
}

impl Opt {
    /// For the stream whose future is `future`.
    pub fn new(future: std::sync::Arc<Future>) -> Self {
        let keys = ResidentKeys::new(future.next.len());
        Opt { future, keys, key: Vec::new() }
    }

    #[inline]
    fn push(&mut self, page: PageId, time: u64) {
        let k = self.future.next[time as usize];
        self.key[page as usize] = k;
        // below its bound: `reserve_pages` grows the pages never used again with `key`
        if self.keys.insert(page, k) {
            // the next victim unless a later key comes first: its id is read then, a
            // miss in the stream's ids that was most of an eviction's time
            crate::hint::prefetch(&self.future.ids, k as usize);
        }
    }

    /// Takes the page's key out of the set (it is resident).
    #[inline]
    fn forget(&mut self, page: PageId) {
        let k = self.key[page as usize];
        if k != NOT_RESIDENT {
            self.keys.remove(page, k);
        }
    }
}

impl ReplacementPolicy for Opt {
    fn name(&self) -> &'static str {
        "opt"
    }
    fn reserve_pages(&mut self, pages: usize) {
        if pages > self.key.len() {
            self.key.resize(pages, NOT_RESIDENT);
            self.keys.reserve_pages(pages);
        }
    }
    #[inline]
    fn on_hit(&mut self, page: PageId, time: u64) {
        self.forget(page);
        self.push(page, time);
    }
    #[inline]
    fn on_repeat(&mut self, _page: PageId, _time: u64, _n: u32) {
        // the next use after a record is the next record of the page: unchanged
    }
    #[inline]
    fn on_insert(&mut self, page: PageId, time: u64) {
        self.push(page, time);
    }
    fn select_victim(&mut self, _time: u64) -> PageId {
        let page = match self.keys.take_victim().expect("select_victim with no resident page") {
            Victim::Never(page) => page,
            Victim::Latest(k) => {
                let page = self.future.ids[k as usize];
                debug_assert_eq!(self.key[page as usize], k);
                crate::hint::prefetch(&self.future.ids, self.keys.top() as usize);
                page
            }
        };
        self.key[page as usize] = NOT_RESIDENT;
        page
    }
    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        crate::hint::prefetch(&self.key, page as usize);
    }
    fn on_remove(&mut self, page: PageId) {
        self.forget(page);
        self.key[page as usize] = NOT_RESIDENT;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_set_gives_its_largest_time() {
        let mut s = TimeSet::new(300_000);
        assert_eq!(s.max(), None);
        for t in [5, 70_000, 299_999, 4_096, 64] {
            s.insert(t);
        }
        assert_eq!(s.max(), Some(299_999));
        s.remove(299_999);
        assert_eq!(s.max(), Some(70_000));
        s.remove(70_000);
        s.remove(4_096);
        assert_eq!(s.max(), Some(64));
        s.remove(64);
        s.remove(5);
        assert_eq!(s.max(), None);
        assert_eq!(TimeSet::new(1).levels.len(), 1);
    }

    #[test]
    fn a_grown_time_set_keeps_its_elements() {
        let mut s = TimeSet::new(100);
        for t in [3, 64, 99] {
            s.insert(t);
        }
        let mut g = s.grown(100_000);
        assert_eq!(g.max(), Some(99));
        g.insert(70_000);
        assert_eq!(g.max(), Some(70_000));
        for t in [70_000, 99, 64] {
            g.remove(t);
        }
        assert_eq!(g.max(), Some(3));
    }

    /// Pages never used again go first, the largest id first; one that left memory (a
    /// free) is not a victim, and a page used again waits until they are gone.
    #[test]
    fn never_used_again_pages_are_evicted_largest_id_first() {
        // page 4 is used again at record 5; pages 0..4 are not
        let ids = std::sync::Arc::new(vec![0, 4, 1, 2, 3, 4]);
        let mut opt = Opt::new(std::sync::Arc::new(Future::new(ids, &[], 5)));
        opt.reserve_pages(1);
        opt.on_insert(0, 0);
        // the set of pages never used again grows with the pages, page 0 in it
        opt.reserve_pages(5);
        for (t, page) in [(1, 4), (2, 1), (3, 2), (4, 3)] {
            opt.on_insert(page, t);
        }
        opt.on_remove(3);
        assert_eq!([opt.select_victim(5), opt.select_victim(5), opt.select_victim(5)], [2, 1, 0]);
        assert_eq!(opt.select_victim(5), 4);
    }

    #[test]
    fn next_use_of_a_small_stream() {
        assert_eq!(next_use_times(&[0, 1, 0, 2, 1, 0], &[], 3), vec![2, 4, 5, NEVER, NEVER, NEVER]);
        // a free of page 0 at 2: the touch at 0 is its last use; the one at 3 starts anew
        use AccessKind::{Free, Read};
        assert_eq!(
            next_use_times(&[0, 1, 0, 0, 1, 0], &[Read, Read, Free, Read, Read, Read], 2),
            vec![NEVER, 4, NEVER, 5, NEVER, NEVER]
        );
    }
}
