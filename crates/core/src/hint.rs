//! Memory hints for the hot loops. The per-page arrays of a million-page trace do not
//! fit in cache, but a batch tells us which entries the next records will touch, so a
//! loop can ask for them a few records ahead and overlap the misses.

/// How many records ahead the hot loops prefetch.
pub const PREFETCH_DISTANCE: usize = 16;

/// Asks the CPU to bring `slice[index]` into cache; does nothing when out of range or on
/// targets without a prefetch instruction.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    if index < slice.len() {
        // SAFETY: the pointer is in bounds; prefetch never faults and has no effect on
        // program semantics.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch(slice.as_ptr().add(index) as *const i8, _MM_HINT_T0);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, index);
}

/// Bytes of a transparent huge page on x86-64 and most other Linux targets.
const HUGE_PAGE: usize = 2 << 20;

/// `vec![value; n]`, with the kernel asked (`madvise(MADV_HUGEPAGE)`) to back the
/// array's whole 2 MiB pages with huge pages before it is first written. For a table
/// that is probed at random and is far larger than what the TLB covers in 4 KiB pages
/// (the densifier's, 16 MiB for 762,567 pages): each probe then costs a cache miss but no
/// page walk. Machines whose transparent huge pages are `madvise` (Debian's default) give
/// them only when asked; the advice is a hint, and a refusal changes nothing but speed.
pub fn filled_huge<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    let bytes = n * std::mem::size_of::<T>();
    #[cfg(target_os = "linux")]
    if bytes >= 2 * HUGE_PAGE {
        let start = v.as_mut_ptr() as usize;
        let (lo, hi) = (start.next_multiple_of(HUGE_PAGE), (start + bytes) / HUGE_PAGE * HUGE_PAGE);
        if hi > lo {
            // SAFETY: [lo, hi) lies within the vector's allocation, which nothing has
            // touched yet; MADV_HUGEPAGE changes how the pages are backed, not their
            // contents or the mapping.
            let _ = unsafe { rustix::mm::madvise(lo as *mut _, hi - lo, rustix::mm::Advice::LinuxHugepage) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
    v.resize(n, value);
    v
}
