//! The reference model shared by every source and consumer.
//!
//! A record is one *page touch*: consecutive references by the same process to the same
//! page with the same kind fold into one record with a repeat count (DESIGN.md,
//! "References and traces"). Replacement decisions happen once per record; the repeats
//! are hits by construction and are counted as references.

/// Dense page id: an index into per-page arrays, assigned in first-touch order per source.
/// Distinct (process, page) pairs get distinct ids.
pub type PageId = u32;

/// What a reference did to its page.
///
/// [`AccessKind::Free`] is not a reference but an event: the process gave the page back
/// (munmap, or a heap shrinking with brk), so its contents are gone. A free record has
/// `repeat` 0 (it stands for no reference) and is never folded with a reference. What
/// each consumer does with it: the timed system drops the page without writing it back
/// and frees its swap slot, and the next touch is a zero-fill minor fault; replay and
/// the LRU curve take the page out of memory without a fault and count its next touch
/// as a compulsory fault (docs/trace-format.md, "Free records").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum AccessKind {
    Read = 0,
    Write = 1,
    Instruction = 2,
    Free = 3,
}

impl AccessKind {
    pub fn from_code(code: u8) -> Option<AccessKind> {
        match code {
            0 => Some(AccessKind::Read),
            1 => Some(AccessKind::Write),
            2 => Some(AccessKind::Instruction),
            3 => Some(AccessKind::Free),
            _ => None,
        }
    }
    pub fn is_write(self) -> bool {
        self == AccessKind::Write
    }
    pub fn is_free(self) -> bool {
        self == AccessKind::Free
    }
    pub fn letter(self) -> char {
        match self {
            AccessKind::Read => 'R',
            AccessKind::Write => 'W',
            AccessKind::Instruction => 'I',
            AccessKind::Free => 'F',
        }
    }
}

/// True when some record of `kinds` is a free: consumers whose per-record loop would
/// otherwise test every kind look once per batch (a branch-free pass over bytes) and
/// take the loop that handles frees only for the batches that have one.
#[inline]
pub fn has_frees(kinds: &[AccessKind]) -> bool {
    kinds.iter().fold(false, |any, &k| any | (k == AccessKind::Free))
}

/// One record as an owned value (convenient for tests and slow paths; the hot path uses
/// [`RefBatch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reference {
    /// Process id as given by the source (not an index).
    pub pid: u32,
    /// Page number in units of the source's page size (sparse, up to 64 bits).
    pub page: u64,
    pub kind: AccessKind,
    /// Number of references this record stands for (>= 1; 0 for a free, which stands
    /// for none).
    pub repeat: u32,
    /// Instructions executed since the previous record of the same process (0 = unknown).
    pub gap: u32,
}

/// A batch of records in structure-of-arrays form, with the dense id of each page.
/// Sources fill it; consumers read it. All vectors have the same length.
#[derive(Debug, Default, Clone)]
pub struct RefBatch {
    pub id: Vec<PageId>,
    pub pid: Vec<u32>,
    pub page: Vec<u64>,
    pub kind: Vec<AccessKind>,
    pub repeat: Vec<u32>,
    pub gap: Vec<u32>,
    /// Empty, unless the source was asked for the trace's own next-access times
    /// ([`RefSource::give_next_access`]): then, for each record, the time its trace gives
    /// for the next reference after the record's last one, as the trace writes it.
    pub next_access: Vec<u64>,
    /// Empty, unless the replay checked `next_access` ([`crate::policy::TraceFuture`]):
    /// then, for each record, OPT's key of its page before the record and after it.
    pub next_keys: Vec<(u32, u32)>,
}

/// Records per batch that sources aim for: large enough to amortise dispatch, small
/// enough to stay in cache.
pub const BATCH_RECORDS: usize = 1 << 16;

impl RefBatch {
    pub fn with_capacity(n: usize) -> Self {
        RefBatch {
            id: Vec::with_capacity(n),
            pid: Vec::with_capacity(n),
            page: Vec::with_capacity(n),
            kind: Vec::with_capacity(n),
            repeat: Vec::with_capacity(n),
            gap: Vec::with_capacity(n),
            next_access: Vec::new(),
            next_keys: Vec::new(),
        }
    }
    pub fn len(&self) -> usize {
        self.id.len()
    }
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }
    pub fn clear(&mut self) {
        self.id.clear();
        self.pid.clear();
        self.page.clear();
        self.kind.clear();
        self.repeat.clear();
        self.gap.clear();
        self.next_access.clear();
        self.next_keys.clear();
    }
    #[inline(always)]
    pub fn push(&mut self, id: PageId, r: &Reference) {
        self.id.push(id);
        self.pid.push(r.pid);
        self.page.push(r.page);
        self.kind.push(r.kind);
        self.repeat.push(r.repeat);
        self.gap.push(r.gap);
    }
    pub fn get(&self, i: usize) -> Reference {
        Reference {
            pid: self.pid[i],
            page: self.page[i],
            kind: self.kind[i],
            repeat: self.repeat[i],
            gap: self.gap[i],
        }
    }
}

/// The most references a source gives next-access times for
/// ([`RefSource::give_next_access`]): its times, up to the count (counted from 1), then
/// fit in 32 bits with a value to spare, as replay keeps them.
pub const MOST_TIMED_REFERENCES: u64 = u32::MAX as u64 - 2;

/// Facts about a source known before (or while) reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceMeta {
    /// Human-readable name: a file path or `workload:NAME`.
    pub name: String,
    /// Bytes per page of the page numbers this source yields.
    pub page_size: u64,
    /// Process ids with optional names, in order of first appearance if unknown upfront.
    pub processes: Vec<(u32, String)>,
    /// Number of records if known before reading (binary traces, workloads), else None.
    pub records: Option<u64>,
}

/// A stream of references. Readers stream: nothing requires a whole trace in memory.
/// Dense ids are assigned by the source in first-touch order, starting at 0.
pub trait RefSource: Send {
    fn meta(&self) -> &SourceMeta;
    /// Clears `batch` and fills it with up to [`BATCH_RECORDS`] records.
    /// Returns the number of records read; 0 means the end of the stream.
    fn next_batch(&mut self, batch: &mut RefBatch) -> crate::Result<usize>;
    /// Number of dense ids assigned so far (= distinct pages seen so far).
    fn distinct_pages(&self) -> u32;
    /// Hands over the source's assignment of dense ids, so that the caller runs it on a
    /// thread of its own ([`crate::stream::for_each_batch`] does, as a stage between
    /// reading and consuming): the batches then come with their ids unset, and
    /// `distinct_pages` counts nothing, until `attach_ids` gives it back. None for a
    /// source that assigns no ids this way.
    fn detach_ids(&mut self) -> Option<super::Densifier> {
        None
    }
    /// Gives back what `detach_ids` took, with the ids assigned since.
    fn attach_ids(&mut self, _ids: super::Densifier) {}
    /// Asks the source, before its first batch, to fill each batch's `next_access` from
    /// the next-access times its own records hold; returns the number of references in
    /// the stream, which bounds those times. None (and no column) when it has no such
    /// times (every format but oracleGeneral), when they would not be a page's times
    /// (objects read as pages of another size), or when the count is not known before
    /// reading (a compressed file). The times are the file's claims: the caller checks
    /// them.
    fn give_next_access(&mut self) -> Option<u64> {
        None
    }
}
