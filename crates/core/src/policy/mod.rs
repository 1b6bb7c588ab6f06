//! Replacement policies: one trait, one file per policy.
//!
//! A policy decides victims; it never does I/O. Per-page metadata lives in dense arrays
//! indexed by [`PageId`] (no hash map on the hit path). The same policy objects serve
//! replay and, later, the timed system, where reclaim asks the policy for victims and
//! the memory manager applies mechanism rules around it.

use crate::trace::PageId;

/// The replacement-policy interface. The caller owns residency: it calls `on_hit` for a
/// resident page, `on_insert` after loading a page, and `select_victim` when a frame is
/// needed (the victim is removed from the policy's structures by that call).
/// `time` is the index of the current record in the stream (policies that need the
/// future, like OPT, use it to look up their pre-pass).
pub trait ReplacementPolicy: Send {
    fn name(&self) -> &'static str;
    /// Make per-page arrays cover ids `0..pages`.
    fn reserve_pages(&mut self, pages: usize);
    fn on_hit(&mut self, page: PageId, time: u64);
    fn on_insert(&mut self, page: PageId, time: u64);
    /// Choose and remove a victim among the resident pages. Called only when at least
    /// one page is resident.
    fn select_victim(&mut self, time: u64) -> PageId;
    /// A resident page leaves memory for another reason (freed, migrated, evicted by a
    /// mechanism rule); forget it.
    fn on_remove(&mut self, page: PageId);
}
