//! An intrusive doubly-linked list over dense page ids: one array of (prev, next) `u32`
//! pairs, O(1) unlink and push, no allocation per page. LRU and FIFO are orderings of
//! this list. A page's two links share a cache line: in two arrays, touching a page
//! missed twice (a FIFO replay of the 10 M-reference benchmark: 20% of it in `pop_back`).

use crate::trace::PageId;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Link {
    prev: u32,
    next: u32,
}

const UNLINKED: Link = Link { prev: NIL, next: NIL };

#[derive(Debug, Clone)]
pub struct PageList {
    links: Vec<Link>,
    head: u32,
    tail: u32,
    len: usize,
}

impl Default for PageList {
    fn default() -> Self {
        PageList { links: Vec::new(), head: NIL, tail: NIL, len: 0 }
    }
}

impl PageList {
    pub fn reserve_pages(&mut self, pages: usize) {
        if pages > self.links.len() {
            self.links.resize(pages, UNLINKED);
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
        let n = self.links[page as usize].next;
        (n != NIL).then_some(n)
    }

    #[inline]
    pub fn push_front(&mut self, page: PageId) {
        self.links[page as usize] = Link { prev: NIL, next: self.head };
        if self.head != NIL {
            self.links[self.head as usize].prev = page;
        } else {
            self.tail = page;
        }
        self.head = page;
        self.len += 1;
    }

    #[inline]
    pub fn unlink(&mut self, page: PageId) {
        let Link { prev: pv, next: nx } = self.links[page as usize];
        if pv != NIL {
            self.links[pv as usize].next = nx;
        } else {
            self.head = nx;
        }
        if nx != NIL {
            self.links[nx as usize].prev = pv;
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
        let p = self.links[page as usize].prev;
        (p != NIL).then_some(p)
    }

    /// Brings the page's links into cache ahead of use.
    #[inline(always)]
    pub fn prefetch(&self, page: PageId) {
        crate::hint::prefetch(&self.links, page as usize);
    }

    /// Pages from head (most recent) to tail.
    pub fn iter(&self) -> impl Iterator<Item = PageId> + '_ {
        std::iter::successors(self.head(), move |&p| self.next_of(p))
    }
}

/// `N` intrusive lists over the same pages, a page on at most one at a time, with one
/// link array for all of them: the page's links and the number of its list (1..=N; 0
/// for none) in one entry. A policy whose pages move between lists (ARC's four) then
/// touches a page's entry once per move, where a `PageList` each touched one entry per
/// list, and a list-of-page array besides.
#[derive(Debug, Clone)]
pub struct PageLists<const N: usize> {
    links: Vec<TaggedLink>,
    /// (head, tail, len) of list l at index l - 1.
    ends: [(u32, u32, usize); N],
}

#[derive(Debug, Clone, Copy)]
struct TaggedLink {
    prev: u32,
    next: u32,
    list: u8,
}

const UNLISTED: TaggedLink = TaggedLink { prev: NIL, next: NIL, list: 0 };

impl<const N: usize> Default for PageLists<N> {
    fn default() -> Self {
        PageLists { links: Vec::new(), ends: [(NIL, NIL, 0); N] }
    }
}

impl<const N: usize> PageLists<N> {
    pub fn reserve_pages(&mut self, pages: usize) {
        if pages > self.links.len() {
            self.links.resize(pages, UNLISTED);
        }
    }

    /// The list the page is on (1..=N), or 0.
    #[inline]
    pub fn list_of(&self, page: PageId) -> u8 {
        self.links[page as usize].list
    }

    pub fn len(&self, list: u8) -> usize {
        self.ends[list as usize - 1].2
    }

    pub fn is_empty(&self, list: u8) -> bool {
        self.len(list) == 0
    }

    /// The least recently pushed page of `list`.
    pub fn tail(&self, list: u8) -> Option<PageId> {
        let t = self.ends[list as usize - 1].1;
        (t != NIL).then_some(t)
    }

    /// Takes the least recently pushed page off `list`.
    pub fn pop_back(&mut self, list: u8) -> Option<PageId> {
        let t = self.tail(list)?;
        self.remove(t);
        Some(t)
    }

    /// Puts a page that is on no list at the front of `list`.
    #[inline]
    pub fn push_front(&mut self, list: u8, page: PageId) {
        debug_assert!(self.links[page as usize].list == 0, "page {page} is on a list");
        let (head, tail, len) = &mut self.ends[list as usize - 1];
        self.links[page as usize] = TaggedLink { prev: NIL, next: *head, list };
        if *head != NIL {
            self.links[*head as usize].prev = page;
        } else {
            *tail = page;
        }
        *head = page;
        *len += 1;
    }

    /// Takes the page off its list, if it is on one.
    #[inline]
    pub fn remove(&mut self, page: PageId) {
        let TaggedLink { prev, next, list } = self.links[page as usize];
        if list == 0 {
            return;
        }
        let (head, tail, len) = &mut self.ends[list as usize - 1];
        if prev != NIL {
            self.links[prev as usize].next = next;
        } else {
            *head = next;
        }
        if next != NIL {
            self.links[next as usize].prev = prev;
        } else {
            *tail = prev;
        }
        *len -= 1;
        self.links[page as usize] = UNLISTED;
    }

    /// Brings the page's entry into cache ahead of use.
    #[inline(always)]
    pub fn prefetch(&self, page: PageId) {
        crate::hint::prefetch(&self.links, page as usize);
    }

    /// Pages of `list` from head (most recent) to tail.
    pub fn iter(&self, list: u8) -> impl Iterator<Item = PageId> + '_ {
        let head = self.ends[list as usize - 1].0;
        std::iter::successors((head != NIL).then_some(head), move |&p| {
            let n = self.links[p as usize].next;
            (n != NIL).then_some(n)
        })
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

    #[test]
    fn pages_move_between_lists_of_one_set() {
        let mut s = PageLists::<2>::default();
        s.reserve_pages(6);
        for p in 0..4 {
            s.push_front(1, p);
        }
        s.remove(1);
        s.push_front(2, 1);
        s.remove(3);
        s.push_front(2, 3);
        assert_eq!(s.iter(1).collect::<Vec<_>>(), vec![2, 0]);
        assert_eq!(s.iter(2).collect::<Vec<_>>(), vec![3, 1]);
        assert_eq!((s.list_of(1), s.list_of(2), s.list_of(5)), (2, 1, 0));
        assert_eq!((s.len(1), s.len(2), s.tail(1), s.tail(2)), (2, 2, Some(0), Some(1)));
        s.remove(5); // on no list: nothing
        s.remove(0);
        s.remove(2);
        assert!(s.is_empty(1) && s.tail(1).is_none() && s.len(2) == 2);
    }
}
