//! The anonymous region the stream's pages live in: one reservation of address space
//! (MAP_NORESERVE, so nothing is committed until touched); the page with dense id `i`
//! starts at byte `i * page_size`.

use std::ffi::c_void;

use rustix::mm::{madvise, mmap_anonymous, munmap, Advice, MapFlags, ProtFlags};

/// Largest reservation tried first (address space only): 1 TiB.
const MAX_RESERVATION: usize = 1 << 40;
/// Size of a transparent huge page on the platforms pagelab runs on.
const HUGE_PAGE: usize = 2 << 20;
/// Smallest reservation accepted when the kernel refuses larger ones.
const MIN_RESERVATION: usize = 1 << 30;

#[derive(Debug, thiserror::Error)]
pub enum RegionError {
    #[error("cannot reserve {bytes} bytes of address space for the region: {source}")]
    Reserve { bytes: usize, source: std::io::Error },
    #[error("page {id} of the stream lies beyond the reserved region of {pages} pages")]
    Beyond { id: u64, pages: u64 },
}

pub struct Region {
    base: *mut u8,
    len: usize,
    page_size: usize,
    os_page: usize,
}

impl Region {
    /// Reserves address space for as many `page_size` pages as fit (at most 1 TiB).
    pub fn reserve(page_size: usize) -> Result<Region, RegionError> {
        let os_page = rustix::param::page_size();
        let mut len = MAX_RESERVATION;
        loop {
            // SAFETY: a fresh anonymous mapping at an address the kernel chooses.
            let r = unsafe {
                mmap_anonymous(std::ptr::null_mut(), len, ProtFlags::READ | ProtFlags::WRITE, MapFlags::PRIVATE | MapFlags::NORESERVE)
            };
            match r {
                Ok(p) => {
                    if page_size < HUGE_PAGE {
                        // the stream's pages are its unit of memory: no transparent huge
                        // page may fault in 512 of them at once (THP = always)
                        // SAFETY: advice on the mapping just made; an error only means
                        // a kernel without THP
                        let _ = unsafe { madvise(p, len, Advice::LinuxNoHugepage) };
                    }
                    return Ok(Region { base: p as *mut u8, len, page_size, os_page });
                }
                Err(e) if len > MIN_RESERVATION => {
                    let _ = e;
                    len /= 2;
                }
                Err(e) => return Err(RegionError::Reserve { bytes: len, source: e.into() }),
            }
        }
    }

    pub fn base_address(&self) -> usize {
        self.base as usize
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn pages(&self) -> u64 {
        (self.len / self.page_size) as u64
    }

    fn page_ptr(&self, id: u64) -> Result<*mut u8, RegionError> {
        if id >= self.pages() {
            return Err(RegionError::Beyond { id, pages: self.pages() });
        }
        // SAFETY: id * page_size < len, inside the mapping.
        Ok(unsafe { self.base.add(id as usize * self.page_size) })
    }

    /// Touches every OS page of page `id`, `times` times: a volatile read of one byte,
    /// or a volatile write of one byte (a plain store: a read before it would map the
    /// shared zero page first and make a first write two faults). Returns the byte sum
    /// of what was read, so the reads cannot be optimised away.
    pub fn touch(&self, id: u64, write: bool, times: u32) -> Result<u64, RegionError> {
        let page = self.page_ptr(id)?;
        let step = self.os_page.min(self.page_size);
        let mut sum = 0u64;
        for _ in 0..times {
            let mut off = 0;
            while off < self.page_size {
                // SAFETY: off < page_size, inside page `id` of the mapping.
                unsafe {
                    let p = page.add(off);
                    if write {
                        std::ptr::write_volatile(p, (id as u8).wrapping_add(1));
                    } else {
                        sum = sum.wrapping_add(std::ptr::read_volatile(p) as u64);
                    }
                }
                off += step;
            }
        }
        Ok(sum)
    }

    /// A free record: the page's contents are discarded (MADV_DONTNEED), so its next
    /// touch is a zero-fill minor fault, as in the simulator. With pages smaller than
    /// the OS page only whole OS pages inside the page can be dropped, i.e. none.
    pub fn free(&self, id: u64) -> Result<(), RegionError> {
        let page = self.page_ptr(id)?;
        if self.page_size < self.os_page {
            return Ok(());
        }
        // SAFETY: the whole page lies inside the mapping and is OS-page aligned
        // (page_size is a multiple of the OS page: both are powers of two).
        unsafe {
            madvise(page as *mut c_void, self.page_size, Advice::LinuxDontNeed)
                .map_err(|e| RegionError::Reserve { bytes: self.page_size, source: e.into() })?;
        }
        Ok(())
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the mapping made in reserve(), no references into it remain.
        unsafe {
            let _ = munmap(self.base as *mut c_void, self.len);
        }
    }
}
