//! The LRU list of the Dead-List policies (predictive-replacement.txt section 5: "the
//! system defaults to the LRU replacement algorithm"), which also answers, for any page,
//! whether an exact LRU of the same memory would hold it now: the *shadow* LRU against
//! which a Dead-List eviction is judged (was the page dead, or did the prediction cut a
//! live page short?).
//!
//! One list holds, most recent first, the resident pages and the *ghosts*: pages that
//! left memory but are still among the `frames` most recently referenced distinct
//! pages. Those `frames` first entries are exactly what LRU with `frames` frames holds
//! (Mattson: a page is in an LRU memory of size c iff fewer than c distinct other pages
//! were referenced since its last reference); a marker, the boundary, is the last of
//! them. A page that falls past the boundary leaves the shadow; a ghost doing so leaves
//! the list. The resident pages stay in recency order, so the least recent resident page
//! (the LRU victim) is the same as in a list of resident pages alone: the policy's
//! victims do not change. Every operation is O(1) (the victim search skips ghosts at the
//! tail, which exist only while fewer than `frames` pages are resident).

use super::PageList;
use crate::trace::PageId;

const NIL: u32 = u32::MAX;
/// In the list (resident, or a ghost).
const LISTED: u8 = 1;
/// In memory.
const RESIDENT: u8 = 2;
/// Among the `frames` most recently referenced pages: an exact LRU holds it.
const SHADOW: u8 = 4;

#[derive(Debug)]
pub struct ShadowedLru {
    list: PageList,
    flags: Vec<u8>,
    frames: usize,
    /// Pages in the shadow: min(distinct pages referenced, frames).
    shadow_len: usize,
    /// The last page of the shadow (NIL while it is empty).
    boundary: u32,
    resident: usize,
}

impl ShadowedLru {
    /// For a memory of `frames` frames (at least one).
    pub fn new(frames: u32) -> Self {
        ShadowedLru { list: PageList::default(), flags: Vec::new(), frames: frames.max(1) as usize, shadow_len: 0, boundary: NIL, resident: 0 }
    }

    pub fn reserve_pages(&mut self, pages: usize) {
        self.list.reserve_pages(pages);
        if pages > self.flags.len() {
            self.flags.resize(pages, 0);
        }
    }

    /// Resident pages.
    pub fn len(&self) -> usize {
        self.resident
    }

    pub fn is_empty(&self) -> bool {
        self.resident == 0
    }

    pub fn is_resident(&self, page: PageId) -> bool {
        self.flags[page as usize] & RESIDENT != 0
    }

    /// True when an exact LRU with the same memory holds `page` now (before the
    /// reference being served is [`touch`](Self::touch)ed).
    #[inline]
    pub fn lru_holds(&self, page: PageId) -> bool {
        self.flags[page as usize] & SHADOW != 0
    }

    /// A reference to `page` (resident, or faulting and about to be loaded): it becomes
    /// the most recent page. Touching the most recent page again changes nothing.
    #[inline]
    pub fn touch(&mut self, page: PageId) {
        let f = self.flags[page as usize];
        if f & SHADOW != 0 {
            if page == self.boundary {
                // the entries before it shift down by one: the one just before is last now
                if let Some(before) = self.list.prev_of(page) {
                    self.boundary = before;
                }
            }
            self.list.move_to_front(page);
            return;
        }
        self.join_shadow(page, f);
    }

    /// `page`, outside the shadow, is referenced: it enters at the front and, if the
    /// shadow is full, pushes its last page out.
    #[cold]
    fn join_shadow(&mut self, page: PageId, f: u8) {
        if f & LISTED != 0 {
            // a resident page past LRU's reach (ghosts are never past the boundary)
            self.list.unlink(page);
        }
        self.list.push_front(page);
        self.flags[page as usize] = f | LISTED | SHADOW;
        if self.shadow_len < self.frames {
            if self.shadow_len == 0 {
                self.boundary = page;
            }
            self.shadow_len += 1;
            return;
        }
        let out = self.boundary;
        self.boundary = self.list.prev_of(out).expect("the page just pushed is before the boundary");
        let g = &mut self.flags[out as usize];
        *g &= !SHADOW;
        if *g & RESIDENT == 0 {
            *g = 0;
            self.list.unlink(out);
        }
    }

    /// `page`, already touched, is in memory now.
    #[inline]
    pub fn set_resident(&mut self, page: PageId) {
        let f = &mut self.flags[page as usize];
        debug_assert!(*f & LISTED != 0 && *f & RESIDENT == 0);
        *f |= RESIDENT;
        self.resident += 1;
    }

    /// `page` leaves memory: it stays as a ghost while LRU would still hold it.
    pub fn leave(&mut self, page: PageId) {
        let f = &mut self.flags[page as usize];
        if *f & RESIDENT == 0 {
            return;
        }
        self.resident -= 1;
        *f &= !RESIDENT;
        if *f & SHADOW == 0 {
            *f = 0;
            self.list.unlink(page);
        }
    }

    /// The least recently used resident page, which leaves memory.
    pub fn pop_lru(&mut self) -> Option<PageId> {
        let mut at = self.list.tail();
        while let Some(p) = at {
            if self.is_resident(p) {
                self.leave(p);
                return Some(p);
            }
            at = self.list.prev_of(p);
        }
        None
    }

    /// Brings the page's entries into cache ahead of use.
    #[inline(always)]
    pub fn prefetch(&self, page: PageId) {
        self.list.prefetch(page);
        crate::hint::prefetch(&self.flags, page as usize);
    }

    /// Resident pages, most recent first.
    pub fn iter(&self) -> impl Iterator<Item = PageId> + '_ {
        self.list.iter().filter(|&p| self.is_resident(p))
    }

    /// Pages of the shadow, most recent first (for tests).
    #[cfg(test)]
    fn shadow(&self) -> Vec<PageId> {
        self.list.iter().take_while(|&p| self.lru_holds(p)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A naive exact LRU memory: the `frames` most recently referenced distinct pages.
    fn naive_shadow(history: &[PageId], frames: usize) -> Vec<PageId> {
        let mut out: Vec<PageId> = Vec::new();
        for &p in history.iter().rev() {
            if !out.contains(&p) {
                out.push(p);
                if out.len() == frames {
                    break;
                }
            }
        }
        out
    }

    fn stream(n: usize, range: u32, seed: u64) -> Vec<PageId> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x >> 33) % range as u64) as u32
            })
            .collect()
    }

    /// The shadow is exactly the `frames` most recent distinct pages after every
    /// reference, whatever pages leave memory early (a random early eviction here), and
    /// the resident pages keep their recency order with the victim the least recent.
    #[test]
    fn shadow_is_exact_lru_and_victims_are_lru_among_residents() {
        for (frames, range, seed) in [(1usize, 5u32, 1u64), (2, 6, 2), (7, 20, 3), (30, 60, 4), (30, 31, 5)] {
            let refs = stream(4000, range, seed);
            let mut s = ShadowedLru::new(frames as u32);
            s.reserve_pages(range as usize);
            let mut resident: Vec<PageId> = Vec::new(); // most recent first
            let mut x = seed;
            for (t, &p) in refs.iter().enumerate() {
                assert_eq!(s.lru_holds(p), naive_shadow(&refs[..t], frames).contains(&p), "frames {frames} t {t}");
                if let Some(i) = resident.iter().position(|&q| q == p) {
                    resident.remove(i);
                    s.touch(p);
                } else {
                    s.touch(p);
                    if resident.len() == frames {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        if (x >> 40) % 3 == 0 {
                            // an early eviction, as the Dead-List's
                            let v = resident.remove(((x >> 20) % frames as u64) as usize);
                            s.leave(v);
                        } else {
                            assert_eq!(s.pop_lru(), resident.pop());
                        }
                    }
                    s.set_resident(p);
                }
                resident.insert(0, p);
                assert_eq!(s.shadow(), naive_shadow(&refs[..=t], frames));
                assert_eq!(s.iter().collect::<Vec<_>>(), resident);
                assert_eq!(s.len(), resident.len());
            }
        }
    }

    /// Ghosts: a page evicted early stays in the shadow until `frames` other pages pass.
    #[test]
    fn an_early_eviction_is_held_by_lru_until_frames_pages_pass() {
        let mut s = ShadowedLru::new(3);
        s.reserve_pages(8);
        for p in [0, 1, 2] {
            s.touch(p);
            s.set_resident(p);
        }
        // 3 faults; 2 (the most recent) leaves early
        s.touch(3);
        s.leave(2);
        s.set_resident(3);
        assert!(s.lru_holds(2) && !s.is_resident(2) && !s.lru_holds(0));
        s.touch(4); // 2 is the third most recent: still held; 0 is LRU's victim
        assert_eq!(s.pop_lru(), Some(0));
        s.set_resident(4);
        assert!(s.lru_holds(2));
        s.touch(5);
        assert!(!s.lru_holds(2), "three other pages since its last reference");
        assert_eq!(s.pop_lru(), Some(1));
        s.set_resident(5);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![5, 4, 3]);
    }
}
