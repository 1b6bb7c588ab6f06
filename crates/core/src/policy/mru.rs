//! MRU: evict the most recently used page. The right choice for a loop larger than
//! memory, where the page just used is the one needed last (predictive-replacement.txt
//! lists it among the policies to compare). The same intrusive list as LRU, victim
//! taken from the other end.

use super::{PageList, ReplacementPolicy};
use crate::trace::PageId;

#[derive(Debug, Default)]
pub struct Mru {
    order: PageList,
}

impl Mru {
    pub fn new() -> Self {
        Self::default()
    }
}

impl ReplacementPolicy for Mru {
    fn name(&self) -> &'static str {
        "mru"
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
    fn select_victim(&mut self, _time: u64) -> PageId {
        let victim = self.order.head().expect("select_victim with no resident page");
        self.order.unlink(victim);
        victim
    }
    fn on_remove(&mut self, page: PageId) {
        self.order.unlink(page);
    }
    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        self.order.prefetch(page);
    }
}
