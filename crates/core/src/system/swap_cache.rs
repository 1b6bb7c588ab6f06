//! Linux 2.2.14's swap cache (mm/swap_state.c) and `shrink_mmap` (mm/filemap.c), the
//! clock over the page frames that frees it.
//!
//! A page `swap_out` unmaps does not leave memory: it stays in the swap cache, holding
//! its frame and its swap slot, written first if it was dirty (`add_to_swap_cache`,
//! `rw_swap_page`). A fault on it meanwhile finds it there (`lookup_swap_cache`, which
//! waits while the page is locked for its write) and maps it again without a disk read:
//! a minor fault. `shrink_mmap` walks the frames in physical order with a clock hand;
//! `priority` sets how far: `num_physpages >> priority` pages with a single user (an
//! unmapped page of the swap cache, or a mapped page not in it) are counted. Every frame
//! passed loses its `PG_referenced` bit; a locked page (I/O in flight) or a page with more
//! than one user (mapped and in the swap cache) is passed over; an unmapped swap-cache
//! page that was not referenced since the hand last passed is deleted from the swap cache
//! and its frame freed (a referenced one is kept while its process's page table still
//! points to the slot, `swap_count != 1`, which is always so for a live process here).
//! `PG_referenced` is set when `swap_out` finds a page young, and by every lookup of the
//! page in the swap cache (`find_page`).
//!
//! A page mapped from the swap cache keeps its slot until it is written: the write fault
//! deletes it from the swap cache and frees the slot (mm/memory.c `do_wp_page`,
//! mm/page_alloc.c `swap_in`), so its next page-out takes a new slot.
//!
//! Frames get numbers here only for the clock's order: a frame freed last is given out
//! first, as the buddy allocator's free lists do for single pages.

use super::machine::Machine;
use super::memory::*;

/// In the swap cache and not mapped: the page holds a frame, no page table maps it.
pub const UNMAPPED: u8 = 1;
/// `PG_referenced`.
pub const PG_REFERENCED: u8 = 2;
/// Its I/O in flight counts in `nr_async_pages`.
pub const ASYNC_IO: u8 = 4;

const NO_FRAME: u32 = u32::MAX;

#[derive(Debug, Default)]
pub struct SwapCache {
    /// Per page: UNMAPPED, PG_REFERENCED, ASYNC_IO.
    bits: Vec<u8>,
    /// Per page: the number of the frame it holds.
    frame_of: Vec<u32>,
    /// Per frame: the page in it (NO_GID when free).
    page_at: Vec<Gid>,
    /// Free frame numbers, the last freed on top.
    free: Vec<u32>,
    /// `shrink_mmap`'s clock hand (a frame number).
    hand: usize,
    /// Pages in the swap cache that no page table maps.
    pub unmapped: u64,
}

impl SwapCache {
    pub fn new(frames: u64) -> Self {
        let n = frames as usize;
        SwapCache { bits: Vec::new(), frame_of: Vec::new(), page_at: vec![NO_GID; n], free: (0..n as u32).rev().collect(), hand: 0, unmapped: 0 }
    }

    /// Per-page arrays cover `pages` pages.
    pub fn reserve(&mut self, pages: usize) {
        if pages > self.bits.len() {
            self.bits.resize(pages, 0);
            self.frame_of.resize(pages, NO_FRAME);
        }
    }

    #[inline]
    pub fn has(&self, gid: Gid, bit: u8) -> bool {
        self.bits[gid as usize] & bit != 0
    }

    #[inline]
    pub fn set(&mut self, gid: Gid, bit: u8) {
        self.bits[gid as usize] |= bit;
    }

    /// Clears `bit`; true when it was set.
    #[inline]
    pub fn clear(&mut self, gid: Gid, bit: u8) -> bool {
        let was = self.bits[gid as usize] & bit != 0;
        self.bits[gid as usize] &= !bit;
        was
    }

    /// `gid` takes a frame (the machine counted it out of the free frames).
    pub fn take_frame(&mut self, gid: Gid) {
        debug_assert_eq!(self.frame_of[gid as usize], NO_FRAME);
        let f = self.free.pop().expect("a frame number for every frame taken");
        self.frame_of[gid as usize] = f;
        self.page_at[f as usize] = gid;
    }

    /// `gid` gives its frame back; its page state here is cleared.
    pub fn release_frame(&mut self, gid: Gid) {
        let f = std::mem::replace(&mut self.frame_of[gid as usize], NO_FRAME);
        debug_assert_ne!(f, NO_FRAME);
        if f != NO_FRAME {
            self.page_at[f as usize] = NO_GID;
            self.free.push(f);
        }
        if self.bits[gid as usize] & UNMAPPED != 0 {
            self.unmapped -= 1;
        }
        self.bits[gid as usize] &= ASYNC_IO;
    }

    /// Whether `gid` holds a frame.
    pub fn holds_frame(&self, gid: Gid) -> bool {
        self.frame_of.get(gid as usize).is_some_and(|&f| f != NO_FRAME)
    }
}

impl Machine {
    pub(super) fn cache(&mut self) -> &mut SwapCache {
        self.linux22.as_mut().and_then(|l| l.cache.as_mut()).expect("the swap cache")
    }

    /// The Linux 2.2 swap cache is on.
    #[inline]
    pub(super) fn swap_cache_on(&self) -> bool {
        self.linux22.as_ref().is_some_and(|l| l.cache.is_some())
    }

    /// `set_bit(PG_referenced)`, where the swap cache keeps it.
    pub(super) fn set_page_referenced(&mut self, gid: Gid) {
        if self.swap_cache_on() {
            self.cache().set(gid, PG_REFERENCED);
        }
    }

    /// A page `swap_out` unmapped stays in the swap cache.
    pub(super) fn cache_unmapped(&mut self, gid: Gid) {
        let c = self.cache();
        c.set(gid, UNMAPPED);
        c.unmapped += 1;
    }

    /// A page leaves memory: its frame is free again (and a process waiting for one
    /// goes on).
    pub(super) fn release_frame22(&mut self, gid: Gid) {
        if self.swap_cache_on() {
            self.cache().release_frame(gid);
        }
        self.free_frame();
    }

    /// A page takes a frame counted out of the free frames.
    pub(super) fn take_frame22(&mut self, gid: Gid) {
        if self.swap_cache_on() {
            self.cache().take_frame(gid);
        }
    }

    /// `shrink_mmap(priority)`: frees one unmapped swap-cache page that was not referenced
    /// since the clock hand last passed it; false when the hand counted its
    /// `frames >> priority` single-user pages without finding one.
    pub(super) fn shrink_mmap(&mut self, priority: u32) -> bool {
        if !self.swap_cache_on() {
            return false;
        }
        let frames = self.pool.frames as usize;
        let mut count = (self.pool.frames >> priority) as i64;
        // the kernel's loop always finds single-user pages (the page cache, buffers);
        // here a memory of free frames and mapped swap-cache pages has none: two laps at most
        let mut steps = 2 * frames;
        loop {
            if steps == 0 || frames == 0 {
                return false;
            }
            steps -= 1;
            let c = self.cache();
            c.hand = if c.hand + 1 >= frames { 0 } else { c.hand + 1 };
            let gid = c.page_at[c.hand];
            if gid != NO_GID {
                let referenced = c.clear(gid, PG_REFERENCED);
                let unmapped = c.has(gid, UNMAPPED);
                let f = self.pages.flags[gid as usize];
                let locked = f & (PAGING_IN | WRITING) != 0;
                // one user: the swap cache alone, or a page table alone
                let single = unmapped || f & SWAP_VALID == 0;
                if !locked && single {
                    count -= 1;
                    if unmapped && !referenced {
                        self.delete_from_swap_cache(gid);
                        self.count22(|c| c.shrink_mmap_freed += 1);
                        return true;
                    }
                }
            }
            // `continue` in the kernel's do-while re-tests the count too
            if count <= 0 {
                return false;
            }
        }
    }

    /// `delete_from_swap_cache` of an unmapped page and the freeing of its frame: the page
    /// is now on swap only (its page table entry keeps the slot).
    fn delete_from_swap_cache(&mut self, gid: Gid) {
        self.pages.flags[gid as usize] &= !PREFETCHED;
        self.release_frame22(gid);
    }
}

impl Machine {
    /// A page-out write completed with the swap cache on: the page stays in the swap
    /// cache, clean and unmapped, until `shrink_mmap` frees it; a page whose process ended
    /// meanwhile gives its frame and slot back.
    pub(super) fn write_done_cached(&mut self, gid: Gid) {
        self.async_io_done(gid);
        let f = self.pages.flags[gid as usize];
        self.pool.writing -= 1;
        if f & TOUCHED == 0 {
            self.pages.flags[gid as usize] = 0;
            self.release_page_slot(gid);
            self.release_frame22(gid);
        } else {
            self.pages.flags[gid as usize] = (f & !WRITING) | SWAP_VALID;
            self.cache_unmapped(gid);
        }
        self.write_done22(gid);
    }

    /// Process `p` ended with the swap cache on: every frame and slot of its pages is
    /// given back, except the frames of pages still being read or written, which their
    /// completion gives back.
    pub(super) fn exit_pages_cached(&mut self, gids: &[Gid]) {
        for &gid in gids {
            if gid == NO_GID {
                continue;
            }
            let f = self.pages.flags[gid as usize];
            if f & (WRITING | PAGING_IN) != 0 {
                // the completion frees the frame (and the slot, for a write)
                self.pages.flags[gid as usize] = f & (WRITING | PAGING_IN);
                if f & PAGING_IN != 0 {
                    self.release_page_slot(gid);
                }
                continue;
            }
            if self.cache().holds_frame(gid) {
                self.release_frame22(gid);
            }
            self.release_page_slot(gid);
            self.pages.flags[gid as usize] = 0;
        }
    }
}
