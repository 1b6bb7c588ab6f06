//! FIFO: evict the page that was loaded longest ago; hits change nothing.

use super::{PageList, ReplacementPolicy};
use crate::trace::PageId;

#[derive(Debug, Default)]
pub struct Fifo {
    queue: PageList,
}

impl Fifo {
    pub fn new() -> Self {
        Self::default()
    }
}

impl ReplacementPolicy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }
    fn reserve_pages(&mut self, pages: usize) {
        self.queue.reserve_pages(pages);
    }
    #[inline]
    fn on_hit(&mut self, _page: PageId, _time: u64) {}
    #[inline]
    fn on_repeat(&mut self, _page: PageId, _time: u64, _n: u32) {}
    #[inline]
    fn on_insert(&mut self, page: PageId, _time: u64) {
        self.queue.push_front(page);
    }
    #[inline]
    fn select_victim(&mut self, _time: u64) -> PageId {
        self.queue.pop_back().expect("select_victim with no resident page")
    }
    fn on_remove(&mut self, page: PageId) {
        self.queue.unlink(page);
    }
}
