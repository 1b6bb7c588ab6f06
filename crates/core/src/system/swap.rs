//! Swap space: a slot allocator that can fragment.
//!
//! DESIGN.md "Timed system simulation": "swap device: slot allocator, page-out
//! clustering, ...". Where clusters land on swap decides both how many disk writes a
//! page-out needs and whether read-around finds neighbours: mclustering-pageout.txt
//! Sect. 2 ("BSD VM attempts to allocate a contiguous free space large enough to contain
//! pages of a cluster on swap", else smaller free spaces) and Sect. 4 (serious swap
//! fragmentation defeats multiple-cluster transfers). So the allocator must be able to
//! fail to find a contiguous run even when enough slots are free in total.
//!
//! One bit per slot in a `Vec<u64>` (set = used); scans skip whole words that are all
//! used or all free, so allocation stays fast with millions of slots. The padding bits
//! past the last slot are kept set, so no free run ever extends past the end.

/// Swap-slot allocator: first-fit from a rotating cursor (next-fit), as in Linux 2.2's
/// `scan_swap_map` (`cluster_next`) and the BSD swap map; mclustering-pageout.txt Sect. 2.
#[derive(Debug, Clone)]
pub struct SwapSpace {
    /// One bit per slot, set = used; padding bits past `slots` are set.
    words: Vec<u64>,
    slots: u64,
    used: u64,
    /// Where the next search starts (just after the previous allocation).
    cursor: u64,
}

const BITS: u64 = 64;

impl SwapSpace {
    /// An empty swap area of `slots` slots, cursor at slot 0.
    pub fn new(slots: u64) -> SwapSpace {
        Self::try_new(slots).expect("memory for the swap map")
    }

    /// [`SwapSpace::new`], with an error naming `system.swap_slots` when the map's
    /// memory cannot be had.
    pub fn try_new(slots: u64) -> crate::Result<SwapSpace> {
        let n_words = slots.div_ceil(BITS);
        let mut words = crate::error::try_filled_vec("system.swap_slots", n_words, 0u64)?;
        let tail = slots % BITS;
        if tail != 0 {
            words[n_words as usize - 1] = !0u64 << tail; // padding past the last slot counts as used
        }
        Ok(SwapSpace { words, slots, used: 0, cursor: 0 })
    }

    /// Total number of slots.
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// Number of slots in use.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// A contiguous run of `pages` free slots, searched first-fit from a rotating
    /// cursor (the next-fit scan of Linux 2.2's scan_swap_map / BSD's swap map); None if no such run exists.
    ///
    /// The search covers runs starting at the cursor up to the end, then runs starting
    /// from slot 0 up to the cursor; a run never wraps around the end. On success the
    /// slots are marked used and the cursor moves just past the run. `pages == 0` gives None.
    pub fn allocate(&mut self, pages: u32) -> Option<u64> {
        if pages == 0 {
            return None;
        }
        let len = pages as u64;
        let start = self.find_run(self.cursor, self.slots, len).or_else(|| self.find_run(0, self.cursor, len))?;
        self.set_range(start, len);
        self.used += len;
        self.cursor = if start + len >= self.slots { 0 } else { start + len };
        Some(start)
    }

    /// One free slot anywhere (next-fit), None when full.
    pub fn allocate_one(&mut self) -> Option<u64> {
        self.allocate(1)
    }

    /// Frees `pages` slots starting at `slot`. Freeing a free slot is a logic error
    /// (debug_assert); in release builds such a slot is left free and not counted twice.
    /// Panics if the range goes past the end of the swap area.
    pub fn free(&mut self, slot: u64, pages: u32) {
        let end = slot + pages as u64;
        assert!(end <= self.slots, "freeing swap slots {slot}..{end} past the end ({})", self.slots);
        let mut pos = slot;
        while pos < end {
            let w = (pos / BITS) as usize;
            let lo = pos % BITS;
            let n = (end - pos).min(BITS - lo);
            let mask = Self::mask(lo, n);
            let was_used = self.words[w] & mask;
            debug_assert_eq!(was_used, mask, "freeing free swap slot(s) in {slot}..{end}");
            self.used -= was_used.count_ones() as u64;
            self.words[w] &= !mask;
            pos += n;
        }
    }

    /// Marks one free slot as used (pre-fragmentation of the swap area).
    pub fn occupy(&mut self, slot: u64) {
        assert!(slot < self.slots, "slot {slot} past the end ({})", self.slots);
        let bit = 1u64 << (slot % BITS);
        let w = &mut self.words[(slot / BITS) as usize];
        if *w & bit == 0 {
            *w |= bit;
            self.used += 1;
        }
    }

    /// True if `slot` is allocated (false for slots past the end).
    pub fn is_used(&self, slot: u64) -> bool {
        slot < self.slots && self.words[(slot / BITS) as usize] >> (slot % BITS) & 1 == 1
    }

    /// Length of the largest free run (for fragmentation reports).
    pub fn largest_free_run(&self) -> u64 {
        let mut best = 0;
        let mut pos = 0;
        while let Some(start) = self.next_free(pos) {
            let end = self.next_used(start, self.slots);
            best = best.max(end - start);
            pos = end;
        }
        best
    }

    /// Bits `lo .. lo + n` of a word (n in 1..=64, lo + n <= 64).
    fn mask(lo: u64, n: u64) -> u64 {
        (if n == BITS { !0u64 } else { (1u64 << n) - 1 }) << lo
    }

    fn set_range(&mut self, start: u64, len: u64) {
        let end = start + len;
        let mut pos = start;
        while pos < end {
            let lo = pos % BITS;
            let n = (end - pos).min(BITS - lo);
            self.words[(pos / BITS) as usize] |= Self::mask(lo, n);
            pos += n;
        }
    }

    /// First free slot at or after `pos`, skipping all-used words.
    fn next_free(&self, pos: u64) -> Option<u64> {
        if pos >= self.slots {
            return None;
        }
        let mut w = (pos / BITS) as usize;
        let mut bits = !self.words[w] & (!0u64 << (pos % BITS));
        loop {
            if bits != 0 {
                // Padding bits are set, so a clear bit is always a real slot.
                return Some(w as u64 * BITS + bits.trailing_zeros() as u64);
            }
            w += 1;
            if w == self.words.len() {
                return None;
            }
            bits = !self.words[w];
        }
    }

    /// First used slot at or after `pos` and before `limit`, else `limit`; skips all-free words.
    fn next_used(&self, pos: u64, limit: u64) -> u64 {
        if pos >= limit {
            return limit;
        }
        let mut w = (pos / BITS) as usize;
        let mut bits = self.words[w] & (!0u64 << (pos % BITS));
        loop {
            if bits != 0 {
                return (w as u64 * BITS + bits.trailing_zeros() as u64).min(limit);
            }
            w += 1;
            if w as u64 * BITS >= limit || w == self.words.len() {
                return limit;
            }
            bits = self.words[w];
        }
    }

    /// First start `s` with `from <= s < start_limit` of `len` free slots.
    fn find_run(&self, from: u64, start_limit: u64, len: u64) -> Option<u64> {
        let mut pos = from;
        loop {
            let start = self.next_free(pos)?;
            if start >= start_limit || start + len > self.slots {
                return None;
            }
            let end = self.next_used(start, start + len);
            if end - start >= len {
                return Some(start);
            }
            pos = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: is `start..start+len` all free, checked slot by slot.
    fn all_free(s: &SwapSpace, start: u64, len: u64) -> bool {
        (start..start + len).all(|i| !s.is_used(i))
    }

    #[test]
    fn allocates_contiguous_runs_in_order() {
        let mut s = SwapSpace::new(200);
        assert_eq!((s.slots(), s.used(), s.largest_free_run()), (200, 0, 200));
        assert_eq!(s.allocate(16), Some(0));
        assert_eq!(s.allocate(60), Some(16)); // crosses the word boundary at 64
        assert_eq!(s.allocate(100), Some(76)); // spans words 1..3
        assert_eq!(s.used(), 176);
        assert!((0..176).all(|i| s.is_used(i)));
        assert!(all_free(&s, 176, 24));
        assert!(!s.is_used(200) && !s.is_used(u64::MAX));
        assert_eq!(s.allocate(25), None); // only 24 left
        assert_eq!(s.allocate(24), Some(176));
        assert_eq!(s.used(), 200);
        assert_eq!(s.largest_free_run(), 0);
        assert_eq!(s.allocate(0), None);
    }

    #[test]
    fn fragmentation_places_a_large_run_after_the_holes() {
        let mut s = SwapSpace::new(100);
        let runs: Vec<u64> = (0..10).map(|_| s.allocate(8).unwrap()).collect();
        assert_eq!(runs, (0..10).map(|i| i * 8).collect::<Vec<_>>());
        for &r in runs.iter().step_by(2) {
            s.free(r, 8); // holes of 8 at 0, 16, 32, 48, 64
        }
        assert_eq!(s.used(), 40);
        assert_eq!(s.largest_free_run(), 20); // the tail 80..100
        // 60 slots are free but the largest hole is 8: a run of 12 goes after the holes.
        assert_eq!(s.allocate(12), Some(80));
        assert_eq!(s.largest_free_run(), 8);
        assert_eq!(s.allocate(9), None); // no run of 9 anywhere, though 48 slots are free
        assert_eq!(s.used(), 52);
        // Next-fit: from the cursor (92), then wrapping to the first hole.
        assert_eq!(s.allocate(8), Some(92));
        assert_eq!(s.allocate(8), Some(0));
        assert_eq!(s.allocate(4), Some(16));
        assert_eq!(s.allocate(8), Some(32)); // the rest of hole 16..24 is too small
    }

    #[test]
    fn allocate_one_fills_holes_then_full_returns_none() {
        let mut s = SwapSpace::new(100);
        for _ in 0..10 {
            s.allocate(10).unwrap();
        }
        assert_eq!(s.allocate_one(), None);
        s.free(30, 10);
        s.free(75, 2);
        s.free(5, 1);
        assert_eq!(s.used(), 87);
        assert_eq!(s.largest_free_run(), 10);
        // The cursor wrapped to 0: holes are filled in slot order, one slot at a time.
        let mut got: Vec<u64> = std::iter::from_fn(|| s.allocate_one()).collect();
        assert_eq!(got.len(), 13);
        let mut want: Vec<u64> = std::iter::once(5).chain(30..40).chain(75..77).collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
        assert_eq!((s.used(), s.largest_free_run()), (100, 0));
        assert_eq!(s.allocate(1), None);
        assert_eq!(s.allocate(3), None);
    }

    #[test]
    fn next_fit_wraps_to_the_start() {
        let mut s = SwapSpace::new(64);
        assert_eq!(s.allocate(40), Some(0));
        s.free(0, 10);
        // From the cursor (40): 24 free slots at the end come first.
        assert_eq!(s.allocate_one(), Some(40));
        assert_eq!(s.allocate(23), Some(41));
        // Cursor wrapped to 0.
        assert_eq!(s.allocate_one(), Some(0));
        assert_eq!(s.allocate(10), None);
        assert_eq!(s.allocate(9), Some(1));
        assert_eq!(s.used(), 64);
    }

    #[test]
    fn largest_free_run_across_words() {
        let mut s = SwapSpace::new(1000);
        assert_eq!(s.largest_free_run(), 1000);
        assert_eq!(s.allocate(1000), Some(0));
        s.free(60, 300); // 60..360 spans words 0..5
        s.free(500, 7);
        s.free(999, 1);
        assert_eq!(s.largest_free_run(), 300);
        assert_eq!(s.used(), 1000 - 308);
        assert!(all_free(&s, 60, 300) && s.is_used(59) && s.is_used(360));
        assert_eq!(s.allocate(301), None);
        assert_eq!(s.allocate(300), Some(60));
        assert_eq!(s.largest_free_run(), 7);
        assert_eq!(s.allocate(2), Some(500));
        assert_eq!(s.largest_free_run(), 5);
    }

    #[test]
    fn millions_of_slots() {
        let n = 4_000_000;
        let mut s = SwapSpace::new(n);
        for i in 0..n / 16 {
            assert_eq!(s.allocate(16), Some(i * 16));
        }
        assert_eq!(s.used(), n);
        s.free(n - 5, 5);
        s.free(123_457, 3);
        assert_eq!(s.allocate(4), Some(n - 5)); // cursor wrapped to 0; the hole at 123_457 is too small
        assert_eq!(s.allocate(3), Some(123_457));
        assert_eq!(s.allocate_one(), Some(n - 1));
        assert_eq!(s.allocate_one(), None);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "freeing free swap slot")]
    fn double_free_is_caught_in_debug() {
        let mut s = SwapSpace::new(10);
        s.allocate(2).unwrap();
        s.free(0, 2);
        s.free(1, 1);
    }

    #[test]
    fn double_free_does_not_corrupt_the_count_in_release() {
        if cfg!(debug_assertions) {
            return;
        }
        let mut s = SwapSpace::new(10);
        s.allocate(4).unwrap();
        s.free(0, 2);
        s.free(0, 3);
        assert_eq!(s.used(), 1);
        assert!(s.is_used(3) && !s.is_used(2));
    }
}
