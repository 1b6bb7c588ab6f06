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
