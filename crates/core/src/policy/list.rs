//! An intrusive doubly-linked list over dense page ids: two `u32` arrays, O(1) unlink
//! and push, no allocation per page. LRU and FIFO are orderings of this list.

use crate::trace::PageId;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub struct PageList {
    prev: Vec<u32>,
    next: Vec<u32>,
    head: u32,
    tail: u32,
    len: usize,
}

impl Default for PageList {
    fn default() -> Self {
        PageList { prev: Vec::new(), next: Vec::new(), head: NIL, tail: NIL, len: 0 }
    }
}

impl PageList {
    pub fn reserve_pages(&mut self, pages: usize) {
        if pages > self.prev.len() {
            self.prev.resize(pages, NIL);
            self.next.resize(pages, NIL);
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The most recently pushed page.
    pub fn head(&self) -> Option<PageId> {
        (self.head != NIL).then_some(self.head)
    }

    /// The least recently pushed page.
    pub fn tail(&self) -> Option<PageId> {
        (self.tail != NIL).then_some(self.tail)
    }

    /// The page after `page` towards the tail.
    pub fn next_of(&self, page: PageId) -> Option<PageId> {
        let n = self.next[page as usize];
        (n != NIL).then_some(n)
    }

    #[inline]
    pub fn push_front(&mut self, page: PageId) {
        let p = page as usize;
        self.prev[p] = NIL;
        self.next[p] = self.head;
        if self.head != NIL {
            self.prev[self.head as usize] = page;
        } else {
            self.tail = page;
        }
        self.head = page;
        self.len += 1;
    }

    #[inline]
    pub fn unlink(&mut self, page: PageId) {
        let p = page as usize;
        let (pv, nx) = (self.prev[p], self.next[p]);
        if pv != NIL {
            self.next[pv as usize] = nx;
        } else {
            self.head = nx;
        }
        if nx != NIL {
            self.prev[nx as usize] = pv;
        } else {
            self.tail = pv;
        }
        self.len -= 1;
    }

    /// Moves a page already in the list to the front.
    #[inline]
    pub fn move_to_front(&mut self, page: PageId) {
        if self.head != page {
            self.unlink(page);
            self.push_front(page);
        }
    }

    pub fn pop_back(&mut self) -> Option<PageId> {
        let t = self.tail()?;
        self.unlink(t);
        Some(t)
    }

    /// The page before `page` towards the head.
    pub fn prev_of(&self, page: PageId) -> Option<PageId> {
        let p = self.prev[page as usize];
        (p != NIL).then_some(p)
    }

    /// Brings the page's links into cache ahead of use.
    #[inline(always)]
    pub fn prefetch(&self, page: PageId) {
        crate::hint::prefetch(&self.prev, page as usize);
        crate::hint::prefetch(&self.next, page as usize);
    }

    /// Pages from head (most recent) to tail.
    pub fn iter(&self) -> impl Iterator<Item = PageId> + '_ {
        std::iter::successors(self.head(), move |&p| self.next_of(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_move_unlink_keep_order() {
        let mut l = PageList::default();
        l.reserve_pages(5);
        for p in 0..5 {
            l.push_front(p);
        }
        assert_eq!(l.iter().collect::<Vec<_>>(), vec![4, 3, 2, 1, 0]);
        l.move_to_front(1);
        l.unlink(3);
        assert_eq!(l.iter().collect::<Vec<_>>(), vec![1, 4, 2, 0]);
        assert_eq!(l.pop_back(), Some(0));
        assert_eq!(l.tail(), Some(2));
        assert_eq!(l.len(), 3);
        l.unlink(1);
        l.unlink(4);
        l.unlink(2);
        assert!(l.is_empty() && l.head().is_none() && l.tail().is_none());
    }
}
