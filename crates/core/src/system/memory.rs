//! Page state of every process page and the free-frame pool.
//!
//! Pages get a global id (`Gid`) at first touch; all per-page state lives in flat arrays
//! indexed by it. The frame pool counts free frames, frames held by page-out writes in
//! flight, and carries the watermarks (Linux 2.2 rule, see [`super::config::Watermarks`]).

use super::config::Watermarks;

pub type Gid = u32;
pub const NO_GID: Gid = u32::MAX;
pub const NO_SLOT: u32 = u32::MAX;

/// In memory, mapped.
pub const RESIDENT: u8 = 1;
/// Written since it was loaded or last written out.
pub const DIRTY: u8 = 2;
/// The referenced bit the hardware sets on access; reclaim clears it.
pub const REFERENCED: u8 = 4;
/// The swap slot holds the page's current contents.
pub const SWAP_VALID: u8 = 8;
/// A page-in read is in flight (its frame is allocated).
pub const PAGING_IN: u8 = 16;
/// A page-out write is in flight (its frame is held until it completes).
pub const WRITING: u8 = 32;
/// Touched at least once and not freed: counts in MAD.
pub const TOUCHED: u8 = 64;
/// Brought in by read-around and not referenced since.
pub const PREFETCHED: u8 = 128;

#[derive(Debug, Default)]
pub struct PageTable {
    pub owner: Vec<u16>,
    /// The page's dense id within its process (first-touch order).
    pub local: Vec<u32>,
    /// Virtual page number (in the process's address space): clustering and read-around
    /// need adjacency in virtual space.
    pub vpage: Vec<u64>,
    pub flags: Vec<u8>,
    pub slot: Vec<u32>,
    /// Sample interval of the last reference, plus one (0 = never): NAP and space-time.
    pub stamp: Vec<u32>,
}

impl PageTable {
    pub fn add(&mut self, owner: u16, local: u32, vpage: u64) -> Gid {
        let gid = self.owner.len() as Gid;
        self.owner.push(owner);
        self.local.push(local);
        self.vpage.push(vpage);
        self.flags.push(0);
        self.slot.push(NO_SLOT);
        self.stamp.push(0);
        gid
    }

    pub fn len(&self) -> usize {
        self.owner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.owner.is_empty()
    }

    #[inline]
    pub fn has(&self, gid: Gid, flag: u8) -> bool {
        self.flags[gid as usize] & flag != 0
    }
}

#[derive(Debug)]
pub struct FramePool {
    pub frames: u64,
    pub free: u64,
    /// Frames whose pages are being written out: free once the write completes.
    pub writing: u64,
    pub watermarks: Watermarks,
}

impl FramePool {
    pub fn new(frames: u64, watermarks: Watermarks) -> Self {
        FramePool { frames, free: frames, writing: 0, watermarks }
    }

    /// Below the low watermark: time to wake kswapd.
    pub fn below_low(&self) -> bool {
        self.free < self.watermarks.low
    }

    /// kswapd's goal: free frames, counting those on their way, up to the high watermark.
    pub fn kswapd_done(&self) -> bool {
        self.free + self.writing >= self.watermarks.high
    }
}
