//! The generators' output end: element accesses in, folded and densified batches out.
//!
//! A generator is plain nested loops calling [`Emitter::read`] / [`Emitter::write`] with
//! byte addresses (or [`Emitter::touch`] with page numbers). The emitter cuts addresses
//! into pages, folds consecutive accesses with the same (page, kind) into one record with
//! a repeat count (across batch boundaries too), assigns dense ids in first-touch order
//! and hands full batches to the consumer. When the consumer has gone away every call
//! returns `Err(Stopped)`, so a generator written with `?` unwinds at once.

use std::sync::mpsc::{Receiver, SyncSender};

use crate::trace::{AccessKind, Densifier, PageId, RefBatch, BATCH_RECORDS};

/// The consumer went away: the generator should return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stopped;

/// What generator code returns; `?` on every emit propagates a stop.
pub(crate) type Flow = std::result::Result<(), Stopped>;

/// One full batch and the number of dense ids assigned up to its last record.
pub(crate) struct Chunk {
    pub batch: RefBatch,
    pub distinct: u32,
}

/// Most pages for which ids live in a flat table (4 bytes a page); beyond it, a hash map.
const FLAT_TABLE_PAGES: u64 = 1 << 24;
const UNSEEN: PageId = PageId::MAX;

/// Dense ids in first-touch order. Workloads know the pages they can touch
/// (`0..span_pages`), so for all but huge spans the id is one array lookup instead of a
/// hash lookup; the ids are the same as [`Densifier`]'s.
pub(crate) enum PageIds {
    Flat { ids: Vec<PageId>, next: PageId },
    Hashed(Densifier),
}

impl PageIds {
    pub fn for_span(span_pages: u64) -> Self {
        if span_pages <= FLAT_TABLE_PAGES {
            PageIds::Flat { ids: vec![UNSEEN; span_pages as usize], next: 0 }
        } else {
            PageIds::Hashed(Densifier::new())
        }
    }

    /// Id of the page stored under `key` (see [`Emitter::touch_keyed`]).
    #[inline]
    pub fn id(&mut self, key: u64) -> PageId {
        match self {
            PageIds::Flat { ids, next } => {
                let slot = &mut ids[key as usize];
                if *slot == UNSEEN {
                    *slot = *next;
                    *next += 1;
                }
                *slot
            }
            PageIds::Hashed(d) => d.id(0, key),
        }
    }

    /// Hints that `page`'s id will be looked up soon (random-page workloads prefetch a
    /// block of draws ahead so the table's cache misses overlap).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        if let PageIds::Flat { ids, .. } = self {
            if let Some(slot) = ids.get(key as usize) {
                prefetch(slot);
            }
        }
    }

    pub fn len(&self) -> u32 {
        match self {
            PageIds::Flat { next, .. } => *next,
            PageIds::Hashed(d) => d.len(),
        }
    }

    /// True when the page stored under `key` has an id (was touched).
    fn has(&self, key: u64) -> bool {
        match self {
            PageIds::Flat { ids, .. } => ids.get(key as usize).is_some_and(|&id| id != UNSEEN),
            PageIds::Hashed(d) => d.get(0, key).is_some(),
        }
    }
}

/// Pages freed and not touched since (made at the first free).
enum Freed {
    Bits(Vec<u64>),
    Hashed(rustc_hash::FxHashSet<u64>),
}

impl Freed {
    fn new(span_pages: u64) -> Self {
        if span_pages <= FLAT_TABLE_PAGES {
            Freed::Bits(vec![0; span_pages.div_ceil(64) as usize])
        } else {
            Freed::Hashed(Default::default())
        }
    }

    fn contains(&self, page: u64) -> bool {
        match self {
            Freed::Bits(b) => b.get((page / 64) as usize).is_some_and(|w| w >> (page % 64) & 1 != 0),
            Freed::Hashed(s) => s.contains(&page),
        }
    }

    fn insert(&mut self, page: u64) {
        match self {
            Freed::Bits(b) => b[(page / 64) as usize] |= 1 << (page % 64),
            Freed::Hashed(s) => {
                s.insert(page);
            }
        }
    }

    #[inline]
    fn remove(&mut self, page: u64) {
        match self {
            Freed::Bits(b) => {
                if let Some(w) = b.get_mut((page / 64) as usize) {
                    *w &= !(1 << (page % 64));
                }
            }
            Freed::Hashed(s) => {
                s.remove(&page);
            }
        }
    }
}

/// Folds accesses into records and ships full batches (single process, pid 0).
pub(crate) struct Emitter {
    shift: u32,
    /// The record being folded; `repeat == 0` means none yet.
    page: u64,
    /// Its id-table key: the page itself, or another bijective image of it.
    key: u64,
    kind: AccessKind,
    repeat: u32,
    ids: PageIds,
    span_pages: u64,
    /// Pages freed since their last touch, once the program frees one.
    freed: Option<Freed>,
    batch: RefBatch,
    out: SyncSender<Chunk>,
    recycled: Receiver<RefBatch>,
}

impl Emitter {
    pub fn new(page_size: u64, span_pages: u64, out: SyncSender<Chunk>, recycled: Receiver<RefBatch>) -> Self {
        debug_assert!(page_size.is_power_of_two());
        Emitter {
            shift: page_size.trailing_zeros(),
            page: u64::MAX,
            key: 0,
            kind: AccessKind::Read,
            repeat: 0,
            ids: PageIds::for_span(span_pages),
            span_pages,
            freed: None,
            batch: RefBatch::with_capacity(BATCH_RECORDS),
            out,
            recycled,
        }
    }

    /// A read of the 8-byte element at byte address `addr`.
    #[inline(always)]
    pub fn read(&mut self, addr: u64) -> Flow {
        self.touch(addr >> self.shift, AccessKind::Read)
    }

    /// A write of the 8-byte element at byte address `addr`.
    #[inline(always)]
    pub fn write(&mut self, addr: u64) -> Flow {
        self.touch(addr >> self.shift, AccessKind::Write)
    }

    /// One reference of `kind` to page number `page`.
    #[inline(always)]
    pub fn touch(&mut self, page: u64, kind: AccessKind) -> Flow {
        self.touch_keyed(page, page, kind)
    }

    /// [`Emitter::touch`] with the page's id kept under `key` instead of under `page`.
    /// `key` must be a bijective image of `page` below the span (e.g. zipf's rank, so
    /// that the ids of hot pages share cache lines). Ids are the same either way.
    #[inline(always)]
    pub fn touch_keyed(&mut self, page: u64, key: u64, kind: AccessKind) -> Flow {
        if page == self.page && kind == self.kind && self.repeat != u32::MAX {
            self.repeat += 1;
            Ok(())
        } else {
            self.start(page, key, kind)
        }
    }

    /// The program gives page number `page` back (munmap, a heap shrinking): a free
    /// record ([`AccessKind::Free`], repeat 0). It is never folded: the record before it
    /// is closed, and the next touch of the page starts a new record. A page not touched
    /// since it was last freed, or never, holds nothing to give back: no record (so a
    /// program may free a whole region of which it used a part).
    pub fn free(&mut self, page: u64) -> Flow {
        if self.repeat != 0 {
            self.push_pending();
            if self.batch.len() >= BATCH_RECORDS {
                self.ship()?;
            }
            self.repeat = 0;
            self.page = u64::MAX;
        }
        let span = self.span_pages;
        let freed = self.freed.get_or_insert_with(|| Freed::new(span));
        if !self.ids.has(page) || freed.contains(page) {
            return Ok(());
        }
        freed.insert(page);
        self.page = page;
        self.key = page;
        self.kind = AccessKind::Free;
        self.repeat = 0;
        self.push_record(0);
        // nothing pending: the next touch, of this page or another, opens a record
        self.page = u64::MAX;
        if self.batch.len() >= BATCH_RECORDS {
            self.ship()?;
        }
        Ok(())
    }

    /// Frees every page of `pages` in order (see [`Emitter::free`]).
    pub fn free_pages(&mut self, pages: std::ops::Range<u64>) -> Flow {
        for page in pages {
            self.free(page)?;
        }
        Ok(())
    }

    /// See [`PageIds::prefetch`]; `key` as in [`Emitter::touch_keyed`].
    #[inline(always)]
    pub fn prefetch_key(&self, key: u64) {
        self.ids.prefetch(key);
    }

    /// Closes the pending record and opens a new one.
    #[inline]
    fn start(&mut self, page: u64, key: u64, kind: AccessKind) -> Flow {
        if self.repeat != 0 {
            self.push_pending();
            if self.batch.len() >= BATCH_RECORDS {
                self.ship()?;
            }
        }
        if let Some(freed) = &mut self.freed {
            freed.remove(page);
        }
        self.page = page;
        self.key = key;
        self.kind = kind;
        self.repeat = 1;
        Ok(())
    }

    #[inline]
    fn push_pending(&mut self) {
        self.push_record(self.repeat);
    }

    #[inline]
    fn push_record(&mut self, repeat: u32) {
        let id = self.ids.id(self.key);
        let b = &mut self.batch;
        b.id.push(id);
        b.pid.push(0);
        b.page.push(self.page);
        b.kind.push(self.kind);
        b.repeat.push(repeat);
        b.gap.push(0);
    }

    /// Sends the current batch and starts a new one (a recycled one when available).
    #[cold]
    fn ship(&mut self) -> Flow {
        let mut next = self.recycled.try_recv().unwrap_or_default();
        next.clear();
        reserve(&mut next);
        let full = std::mem::replace(&mut self.batch, next);
        self.out.send(Chunk { batch: full, distinct: self.ids.len() }).map_err(|_| Stopped)
    }

    /// Flushes the pending record and the last partial batch.
    pub fn finish(mut self) -> Flow {
        if self.repeat != 0 {
            self.push_pending();
            self.repeat = 0;
        }
        if !self.batch.is_empty() {
            self.ship()?;
        }
        Ok(())
    }
}

/// A read prefetch of the cache line holding `value` (a no-op off x86-64).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, even for invalid addresses, and
    // `value` is a valid reference anyway. SSE is part of the x86-64 baseline.
    #[allow(unused_unsafe)]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(value as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

fn reserve(b: &mut RefBatch) {
    let n = BATCH_RECORDS;
    b.id.reserve(n);
    b.pid.reserve(n);
    b.page.reserve(n);
    b.kind.reserve(n);
    b.repeat.reserve(n);
    b.gap.reserve(n);
}
