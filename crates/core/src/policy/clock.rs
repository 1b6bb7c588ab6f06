//! CLOCK (second chance): frames in a circle, a reference bit per page, a hand. The
//! victim is the first page under the hand whose bit is clear; set bits met on the way
//! are cleared (Corbató 1968). A page takes the victim's slot just behind the hand, so
//! it is examined last.
//!
//! The bit of a page entering memory is a parameter (`clock:bit=set|clear`). By default
//! it is set, as the hardware sets it on the access that faulted the page in; libCacheSim
//! (`Clock.c`, `n-bit-counter=1`: FIFO with reinsertion, an object inserted with
//! frequency 0) clears it, and `clock:bit=clear` (the preset `clock:libcachesim`) gives
//! its faults: its queue's tail is the page under the hand and a reinsertion at the head
//! is the hand moving past a page whose bit it clears.

use super::ReplacementPolicy;
use crate::trace::PageId;

const EMPTY: u32 = u32::MAX;

#[derive(Debug)]
pub struct Clock {
    /// The reference bit of a page entering memory.
    insert_bit: bool,
    /// Page in each slot of the circle, EMPTY for a free slot.
    slots: Vec<u32>,
    /// Slot of each resident page.
    slot_of: Vec<u32>,
    referenced: Vec<bool>,
    free_slots: Vec<u32>,
    hand: usize,
}

impl Default for Clock {
    fn default() -> Self {
        Self::with_insert_bit(true)
    }
}

impl Clock {
    /// CLOCK with the bit set on insertion.
    pub fn new() -> Self {
        Self::default()
    }

    /// CLOCK whose entering pages get reference bit `insert_bit`.
    pub fn with_insert_bit(insert_bit: bool) -> Self {
        Clock { insert_bit, slots: Vec::new(), slot_of: Vec::new(), referenced: Vec::new(), free_slots: Vec::new(), hand: 0 }
    }
}

impl ReplacementPolicy for Clock {
    fn name(&self) -> &'static str {
        "clock"
    }
    fn reserve_pages(&mut self, pages: usize) {
        if pages > self.slot_of.len() {
            self.slot_of.resize(pages, EMPTY);
            self.referenced.resize(pages, false);
        }
    }
    #[inline]
    fn on_hit(&mut self, page: PageId, _time: u64) {
        self.referenced[page as usize] = true;
    }
    #[inline]
    fn on_repeat(&mut self, page: PageId, time: u64, _n: u32) {
        // one hit sets the bit; more change nothing
        self.on_hit(page, time);
    }
    #[inline]
    fn on_insert(&mut self, page: PageId, _time: u64) {
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.slots.push(EMPTY);
                (self.slots.len() - 1) as u32
            }
        };
        self.slots[slot as usize] = page;
        self.slot_of[page as usize] = slot;
        self.referenced[page as usize] = self.insert_bit;
    }
    fn select_victim(&mut self, _time: u64) -> PageId {
        let n = self.slots.len();
        loop {
            let slot = self.hand;
            self.hand += 1;
            if self.hand == n {
                self.hand = 0;
            }
            let page = self.slots[slot];
            if page == EMPTY {
                continue;
            }
            let bit = &mut self.referenced[page as usize];
            if *bit {
                *bit = false;
            } else {
                self.slots[slot] = EMPTY;
                self.slot_of[page as usize] = EMPTY;
                self.free_slots.push(slot as u32);
                return page;
            }
        }
    }
    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        crate::hint::prefetch(&self.referenced, page as usize);
    }
    fn on_remove(&mut self, page: PageId) {
        let slot = self.slot_of[page as usize];
        self.slots[slot as usize] = EMPTY;
        self.slot_of[page as usize] = EMPTY;
        self.free_slots.push(slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_chance_spares_a_referenced_page() {
        let mut c = Clock::new();
        c.reserve_pages(4);
        for p in 0..3 {
            c.on_insert(p, 0);
        }
        // all bits set: a full sweep clears them and takes slot 0 (page 0)
        assert_eq!(c.select_victim(0), 0);
        c.on_insert(3, 0); // into slot 0, bit set; hand at slot 1
        c.on_hit(1, 0); // page 1 gets a second chance
        assert_eq!(c.select_victim(0), 2);
    }

    /// The bit on insertion, 2 frames, 1 2 1 3 2. Set (pagelab): 1 and 2 enter with their
    /// bits set, the hit on 1 changes nothing; 3's fault sweeps both bits clear and evicts 1
    /// (the hand's first slot), 3 enters there, and 2 hits: 3 faults. Clear (libCacheSim:
    /// FIFO with reinsertion, frequency 0 on insertion): the hit sets 1's bit; 3's fault
    /// spares 1 (clearing its bit) and evicts 2, and 2's fault then evicts 1: 4 faults,
    /// victims 2 and 1. libCacheSim 0.3.5's `Clock(2)` gives 4.
    #[test]
    fn the_bit_on_insertion() {
        let stream = [1, 2, 1, 3, 2];
        assert_eq!(crate::policy::testing::drive(&mut Clock::new(), 2, &stream, |_, _, _| {}), (3, vec![1]));
        assert_eq!(crate::policy::testing::drive(&mut Clock::with_insert_bit(false), 2, &stream, |_, _, _| {}), (4, vec![2, 1]));
    }
}
