//! Mapping of sparse (process, page) pairs to dense ids, once, at load time, so that the
//! hot path indexes arrays instead of hashing (DESIGN.md, "References and traces").

use rustc_hash::FxHashMap;

use super::PageId;

/// Assigns dense ids in first-touch order. One hash lookup per *record* (not per
/// reference), and a one-entry cache in front of it for runs of the same page.
#[derive(Debug, Default)]
pub struct Densifier {
    ids: FxHashMap<(u32, u64), PageId>,
    last: Option<((u32, u64), PageId)>,
}

impl Densifier {
    pub fn new() -> Self {
        Self::default()
    }

    /// Dense id of (pid, page), assigning the next id on first sight.
    #[inline]
    pub fn id(&mut self, pid: u32, page: u64) -> PageId {
        if let Some((key, id)) = self.last {
            if key == (pid, page) {
                return id;
            }
        }
        let next = self.ids.len() as PageId;
        let id = *self.ids.entry((pid, page)).or_insert(next);
        self.last = Some(((pid, page), id));
        id
    }

    /// The id of (pid, page) if it has one (no id is assigned).
    pub fn get(&self, pid: u32, page: u64) -> Option<PageId> {
        self.ids.get(&(pid, page)).copied()
    }

    /// Number of ids assigned so far.
    pub fn len(&self) -> u32 {
        self.ids.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}
