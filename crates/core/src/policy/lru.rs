//! Exact LRU: evict the page whose last reference is oldest. A hit moves the page to the
//! head of an intrusive list; the victim is the tail. O(1) per reference.

use super::{PageList, ReplacementPolicy};
use crate::trace::PageId;

#[derive(Debug, Default)]
pub struct Lru {
    order: PageList,
}

impl Lru {
    pub fn new() -> Self {
        Self::default()
    }
}

impl ReplacementPolicy for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }
    fn reserve_pages(&mut self, pages: usize) {
        self.order.reserve_pages(pages);
    }
    #[inline]
    fn on_hit(&mut self, page: PageId, _time: u64) {
        self.order.move_to_front(page);
    }
    #[inline]
    fn on_repeat(&mut self, _page: PageId, _time: u64, _n: u32) {
        // the page is already at the front
    }
    #[inline]
    fn on_insert(&mut self, page: PageId, _time: u64) {
        self.order.push_front(page);
    }
    #[inline]
    fn select_victim(&mut self, _time: u64) -> PageId {
        self.order.pop_back().expect("select_victim with no resident page")
    }
    fn on_remove(&mut self, page: PageId) {
        self.order.unlink(page);
    }
    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        self.order.prefetch(page);
    }
}
