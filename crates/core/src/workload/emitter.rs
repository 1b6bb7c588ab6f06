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
        self.page = page;
        self.key = key;
        self.kind = kind;
        self.repeat = 1;
        Ok(())
    }

    #[inline]
    fn push_pending(&mut self) {
        let id = self.ids.id(self.key);
        let b = &mut self.batch;
        b.id.push(id);
        b.pid.push(0);
        b.page.push(self.page);
        b.kind.push(self.kind);
        b.repeat.push(self.repeat);
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
