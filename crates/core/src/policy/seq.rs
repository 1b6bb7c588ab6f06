//! SEQ (Glass and Cao, "Adaptive Page Replacement Based on Memory Reference Behavior",
//! SIGMETRICS 1997). LRU, except when long runs of page faults to consecutive virtual
//! addresses are detected: then it replaces pages MRU-like behind the most active such
//! run, so that a loop slightly larger than memory keeps most of its pages instead of
//! faulting on all of them.
//!
//! Addresses. Sequences are detected on virtual page numbers, as in the paper: the
//! caller gives the virtual page of every missing page through
//! [`ReplacementPolicy::on_miss_vpage`] ([`ReplacementPolicy::wants_vpages`] is true).
//! Dense ids are *not* addresses: they are assigned in first-touch order, so any run of
//! first touches would look sequential. A fault whose virtual page is not given (a
//! caller that does not pass them) is not recorded, unless the page was in a sequence
//! before (its virtual page is then known): such pages take part in LRU only. The
//! virtual page carries no process id: in a multi-process trace, faults of different
//! processes at consecutive virtual pages may form one sequence, and a candidate at an
//! address is any resident page that was in a sequence at that address.
//!
//! The rule implemented, with the paper's parameters: a table of `T = 200` sequences,
//! `L = 20` (a sequence longer than L pages is "long"), `N = 5` (long sequences are
//! ranked by their N-th most recent fault), `M = 20` (a victim keeps at least M pages
//! from its sequence's last page):
//! - Sequences are runs of *faults* (hits never touch them): each has a first and a last
//!   virtual page, a direction (up, down, or none while it has one page), a length (its
//!   number of faults, always `|last - first| + 1`) and the times of its `N` most recent
//!   faults.
//! - A fault on virtual page `x` (recorded in `on_insert`, i.e. after the victim for it
//!   has been chosen, as in the paper where replacement precedes the loading) extends a
//!   sequence whose last page is `x - 1` and that goes up (or has one page), or whose
//!   last page is `x + 1` and that goes down (or has one page); if both exist, the one
//!   whose last fault is more recent. Otherwise `x` starts a new sequence; when the table
//!   holds `T` sequences, the least recently extended (or started) one is dropped first.
//! - Victim: among the sequences longer than `L`, in decreasing order of the time of
//!   their `N`-th most recent fault (the sequences faulting fastest right now first;
//!   with `N <= L` every long sequence has `N` faults), the first one with a resident
//!   page in its range at least `M` pages from its last page gives the victim: the
//!   nearest such page to the last page, i.e. scanning from `last - M` back towards
//!   `first` (from `last + M` up for a downward sequence). MRU-like: the most recently
//!   faulted page outside the `M` newest ones. If no sequence gives one, the LRU page.
//!
//! Decisions the paper leaves open (or that the trait forces):
//! - "Most recent" ordering: long sequences are ranked by their `N`-th most recent
//!   fault, not the last one (one lucky extension of an old sequence does not make it
//!   the target); `with_params(.., nth = 1, ..)` gives "last fault most recent". Ties go
//!   to the lower table slot.
//! - Residency by address range: a candidate is any resident page of the range, also
//!   one that was faulted in again later (possibly as part of another sequence). This is
//!   what keeps a loop stable: the pages refaulted on each pass stay candidates.
//! - No splitting or merging: a fault inside an old sequence's range neither splits nor
//!   truncates it, and adjacent sequences are not merged. Stale sequences expire only by
//!   falling off the table (`T` sequences started or extended since their last fault).
//!   A stale long sequence is chosen only while no long sequence has faulted more
//!   recently. When two sequences end on the same page, the newer one is the one a
//!   fault next to that page can extend.
//! - Hits do not affect sequences; a hit only moves the page in the LRU order, exactly
//!   as in LRU. Without a sequence longer than `L`, SEQ *is* LRU (same victims).
//! - `frames` does not enter the rule; it is taken for the common constructor shape.
//!
//! Cost. A hit is LRU's O(1) on flat arrays (no hash map, no tree). A miss with no
//! sequence longer than `L` (the common case on a workload without scans, like the
//! Zipf benchmark) is O(1): the sequences' last pages are in a small open-addressing
//! map (at most `T` entries, a few cache lines), residency is a bit set. A page that
//! joins a sequence of two or more pages is *entered* (once): while resident it is in an
//! ordered set by virtual page, where the victim choice finds the candidate of a
//! sequence in O(log n) (the resident entered page nearest `last - M` in its range);
//! pages faulted at random addresses are never entered. The long sequences are on two
//! lists: active, and exhausted (no resident page among the candidates, with that
//! range), so a sequence found empty is not searched again until it grows or a page
//! enters its candidate range. The victim choice picks the active sequence with the
//! latest N-th fault, O(T) per sequence tried; the miss of an entered page is
//! O(log n + T).

use std::collections::BTreeSet;

use super::{PageList, ReplacementPolicy};
use crate::trace::PageId;

const NIL: u32 = u32::MAX;
/// No virtual page known for a dense id.
const NO_VPAGE: u64 = u64::MAX;
const NONE_DIR: i8 = 0;
const UP: i8 = 1;
const DOWN: i8 = -1;
/// Which list of long slots a slot is on.
const NOT_LONG: u8 = 0;
const ACTIVE: u8 = 1;
const EXHAUSTED: u8 = 2;

/// The paper's parameters: sequences tracked (T)...
const SEQ_TABLE: usize = 200;
/// ... the length above which a sequence is long (L)...
const SEQ_L: u64 = 20;
/// ... the fault rank that orders the long sequences (N)...
const SEQ_N: usize = 5;
/// ... and the distance a victim keeps from its sequence's last page (M).
const SEQ_M: u64 = 20;

/// A small map from a sequence's last virtual page to its slot: open addressing with
/// linear probing and backward-shift deletion, at most a quarter full (`T` entries at
/// most), a few cache lines per operation, no allocation after creation.
#[derive(Debug)]
struct EndMap {
    keys: Vec<u64>,
    /// NIL marks an empty cell.
    vals: Vec<u32>,
    shift: u32,
}

impl EndMap {
    fn new(entries: usize) -> Self {
        let cells = (entries * 4).next_power_of_two().max(8);
        EndMap { keys: vec![0; cells], vals: vec![NIL; cells], shift: 64 - cells.trailing_zeros() }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn get(&self, key: u64) -> Option<u32> {
        let mask = self.vals.len() - 1;
        let mut i = self.home(key);
        loop {
            let v = self.vals[i];
            if v == NIL {
                return None;
            }
            if self.keys[i] == key {
                return Some(v);
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn insert(&mut self, key: u64, val: u32) {
        let mask = self.vals.len() - 1;
        let mut i = self.home(key);
        while self.vals[i] != NIL && self.keys[i] != key {
            i = (i + 1) & mask;
        }
        self.keys[i] = key;
        self.vals[i] = val;
    }

    /// Removes `key` if it maps to `val`.
    #[inline]
    fn remove_if(&mut self, key: u64, val: u32) {
        let mask = self.vals.len() - 1;
        let mut i = self.home(key);
        loop {
            let v = self.vals[i];
            if v == NIL {
                return;
            }
            if self.keys[i] == key {
                if v != val {
                    return;
                }
                break;
            }
            i = (i + 1) & mask;
        }
        // backward shift: move up every later entry of the run that may sit at `i`
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            if self.vals[j] == NIL {
                break;
            }
            let home = self.home(self.keys[j]);
            // the entry at j may move to i unless its home lies cyclically in (i, j]
            let stays = if i <= j { i < home && home <= j } else { i < home || home <= j };
            if !stays {
                self.keys[i] = self.keys[j];
                self.vals[i] = self.vals[j];
                i = j;
            }
        }
        self.vals[i] = NIL;
    }
}

#[derive(Debug)]
pub struct Seq {
    /// Table size `T`, `L`, `N`, `M`.
    max_seqs: usize,
    long_len: u64,
    nth: usize,
    distance: u64,
    /// All resident pages by recency (the fallback).
    lru: PageList,
    /// Per dense id, bit sets (small enough to stay in cache): resident, and entered
    /// (the page has been part of a sequence of two or more pages: its address is one a
    /// victim search may look at).
    resident: Vec<u64>,
    entered: Vec<u64>,
    /// Per dense id, its virtual page once entered.
    vpage_of: Vec<u64>,
    /// The resident entered pages by (virtual page, dense id): where victim searches
    /// look.
    members: BTreeSet<(u64, PageId)>,
    /// The missing page and its virtual page, from `on_miss_vpage` until `on_insert`.
    pending: Option<(PageId, u64)>,
    /// Last virtual page of a sequence -> its slot (the newest sequence ending there).
    ends: EndMap,
    /// Per sequence slot; `first_id` is the dense id of its first page.
    first: Vec<u64>,
    first_id: Vec<PageId>,
    last: Vec<u64>,
    dir: Vec<i8>,
    len: Vec<u64>,
    /// `nth` fault times (time + 1; 0 = none) per slot, a ring; `ring_at` is the newest.
    times: Vec<u64>,
    ring_at: Vec<u32>,
    /// Per slot, the time (+1) of its N-th most recent fault: its rank among the long.
    rank: Vec<u64>,
    /// The long slots (longer than L) in two lists: `active`, and `exhausted`, those
    /// known to hold no resident page among their candidates (the addresses at least M
    /// from the last page), with that candidate range; an exhausted slot becomes active
    /// again when its sequence grows or a page among its candidates becomes resident.
    active: Vec<u32>,
    exhausted: Vec<(u64, u64, u32)>,
    /// Per slot: which list it is on (NOT_LONG, ACTIVE, EXHAUSTED) and where.
    list_of: Vec<u8>,
    list_pos: Vec<u32>,
    /// Slots in use, by recency of their last fault (head = most recent).
    slots: PageList,
    /// Victims chosen by the sequence rule (the others are LRU's).
    sequence_victims: u64,
}

#[inline]
fn bit(set: &[u64], id: PageId) -> bool {
    (set[id as usize >> 6] >> (id & 63)) & 1 != 0
}

#[inline]
fn set_bit(set: &mut [u64], id: PageId, on: bool) {
    let (w, b) = (id as usize >> 6, 1u64 << (id & 63));
    if on {
        set[w] |= b;
    } else {
        set[w] &= !b;
    }
}

impl Seq {
    /// SEQ with the paper's parameters: 200 sequences, L = 20, N = 5, M = 20.
    pub fn new(frames: u32) -> Self {
        Self::with_params(frames, SEQ_TABLE, SEQ_L, SEQ_N, SEQ_M)
    }

    /// SEQ with `max_seqs` tracked sequences (at least 1), the length threshold
    /// `long_len` (L), the fault rank `nth` that orders long sequences (N, at least 1)
    /// and the distance `distance` (M) a victim keeps from its sequence's last page.
    pub fn with_params(_frames: u32, max_seqs: usize, long_len: u64, nth: usize, distance: u64) -> Self {
        let (max_seqs, nth) = (max_seqs.max(1), nth.max(1));
        let mut slots = PageList::default();
        slots.reserve_pages(max_seqs);
        Seq {
            max_seqs,
            long_len,
            nth,
            distance,
            lru: PageList::default(),
            resident: Vec::new(),
            entered: Vec::new(),
            vpage_of: Vec::new(),
            members: BTreeSet::new(),
            pending: None,
            ends: EndMap::new(max_seqs),
            first: Vec::with_capacity(max_seqs),
            first_id: Vec::with_capacity(max_seqs),
            last: Vec::with_capacity(max_seqs),
            dir: Vec::with_capacity(max_seqs),
            len: Vec::with_capacity(max_seqs),
            times: Vec::with_capacity(max_seqs * nth),
            ring_at: Vec::with_capacity(max_seqs),
            rank: Vec::with_capacity(max_seqs),
            active: Vec::with_capacity(max_seqs),
            exhausted: Vec::with_capacity(max_seqs),
            list_of: Vec::with_capacity(max_seqs),
            list_pos: Vec::with_capacity(max_seqs),
            slots,
            sequence_victims: 0,
        }
    }

    fn push_time(&mut self, s: usize, time: u64) {
        let at = (self.ring_at[s] as usize + 1) % self.nth;
        self.ring_at[s] = at as u32;
        self.times[s * self.nth + at] = time + 1;
        self.rank[s] = self.nth_time(s, self.nth);
    }

    /// The time (+1) of slot `s`'s `k`-th most recent fault (`1 <= k <= N`); 0 if it
    /// has fewer faults.
    fn nth_time(&self, s: usize, k: usize) -> u64 {
        let at = (self.ring_at[s] as usize + self.nth - (k - 1)) % self.nth;
        self.times[s * self.nth + at]
    }

    /// Slot `s`'s candidates: the addresses of its range at least M from its last page,
    /// as an inclusive range, if any.
    fn candidates(&self, s: usize) -> Option<(u64, u64)> {
        let (first, last) = (self.first[s], self.last[s]);
        if self.dir[s] == DOWN {
            last.checked_add(self.distance).filter(|&lo| lo <= first).map(|lo| (lo, first))
        } else {
            last.checked_sub(self.distance).filter(|&hi| hi >= first).map(|hi| (first, hi))
        }
    }

    /// Takes slot `s` off its list of long slots.
    fn unlist(&mut self, s: u32) {
        let i = self.list_pos[s as usize] as usize;
        match self.list_of[s as usize] {
            ACTIVE => {
                self.active.swap_remove(i);
                if let Some(&moved) = self.active.get(i) {
                    self.list_pos[moved as usize] = i as u32;
                }
            }
            EXHAUSTED => {
                self.exhausted.swap_remove(i);
                if let Some(&(_, _, moved)) = self.exhausted.get(i) {
                    self.list_pos[moved as usize] = i as u32;
                }
            }
            _ => return,
        }
        self.list_of[s as usize] = NOT_LONG;
    }

    /// Puts long slot `s` on the active list.
    fn activate(&mut self, s: u32) {
        self.unlist(s);
        self.list_of[s as usize] = ACTIVE;
        self.list_pos[s as usize] = self.active.len() as u32;
        self.active.push(s);
    }

    /// Puts active slot `s`, which has no candidate, on the exhausted list.
    fn exhaust(&mut self, s: u32) {
        self.unlist(s);
        let (lo, hi) = self.candidates(s as usize).unwrap_or((1, 0));
        self.list_of[s as usize] = EXHAUSTED;
        self.list_pos[s as usize] = self.exhausted.len() as u32;
        self.exhausted.push((lo, hi, s));
    }

    /// A resident page `id` at virtual page `x` becomes visible to the victim search;
    /// the exhausted sequences that have `x` among their candidates are no longer.
    fn add_member(&mut self, x: u64, id: PageId) {
        self.members.insert((x, id));
        let mut i = 0;
        while i < self.exhausted.len() {
            let (lo, hi, s) = self.exhausted[i];
            if lo <= x && x <= hi {
                // swaps the last entry into i
                self.activate(s);
            } else {
                i += 1;
            }
        }
    }

    /// Page `id` at virtual page `x` joins a sequence of two or more pages (once).
    fn enter(&mut self, x: u64, id: PageId) {
        if !bit(&self.entered, id) {
            set_bit(&mut self.entered, id, true);
            self.vpage_of[id as usize] = x;
            if bit(&self.resident, id) {
                self.add_member(x, id);
            }
        }
    }

    /// Forgets that slot `s` ends at its last page (if the map still says so).
    fn unmap_end(&mut self, s: u32) {
        self.ends.remove_if(self.last[s as usize], s);
    }

    /// Takes a new slot, or empties the least recently extended one.
    fn new_slot(&mut self) -> u32 {
        if self.first.len() < self.max_seqs {
            self.first.push(0);
            self.first_id.push(NIL);
            self.last.push(0);
            self.dir.push(NONE_DIR);
            self.len.push(0);
            self.times.extend(std::iter::repeat_n(0, self.nth));
            self.ring_at.push(0);
            self.rank.push(0);
            self.list_of.push(NOT_LONG);
            self.list_pos.push(0);
            return (self.first.len() - 1) as u32;
        }
        let s = self.slots.tail().expect("a full table has a least recent slot");
        self.unmap_end(s);
        self.unlist(s);
        self.slots.unlink(s);
        s
    }

    /// Records a fault on page `page` at virtual page `x` at `time` (see the module docs).
    fn record_fault(&mut self, x: u64, page: PageId, time: u64) {
        let below = x.checked_sub(1).and_then(|b| self.ends.get(b)).filter(|&s| self.dir[s as usize] != DOWN);
        let above = x.checked_add(1).and_then(|a| self.ends.get(a)).filter(|&s| self.dir[s as usize] != UP);
        let extend = match (below, above) {
            (Some(b), Some(a)) => Some(if self.nth_time(a as usize, 1) > self.nth_time(b as usize, 1) { a } else { b }),
            (b, a) => b.or(a),
        };
        let s = match extend {
            Some(s) => {
                let si = s as usize;
                if self.len[si] == 1 {
                    // a sequence of two: its pages become addresses a victim search may
                    // look at
                    self.enter(self.first[si], self.first_id[si]);
                }
                self.enter(x, page);
                self.unmap_end(s);
                self.dir[si] = if x > self.last[si] { UP } else { DOWN };
                self.last[si] = x;
                self.len[si] += 1;
                if self.len[si] > self.long_len {
                    // long, with one more candidate
                    self.activate(s);
                }
                self.slots.move_to_front(s);
                s
            }
            None => {
                let s = self.new_slot();
                let si = s as usize;
                self.first[si] = x;
                self.first_id[si] = page;
                self.last[si] = x;
                self.dir[si] = NONE_DIR;
                self.len[si] = 1;
                if self.long_len == 0 {
                    // (parameters other than the paper's) a sequence of one page is long
                    self.enter(x, page);
                    self.activate(s);
                }
                self.times[si * self.nth..(si + 1) * self.nth].fill(0);
                self.ring_at[si] = 0;
                self.slots.push_front(s);
                s
            }
        };
        self.push_time(s as usize, time);
        self.ends.insert(x, s);
    }

    /// The resident page among slot `s`'s candidates nearest its last page.
    fn victim_in(&self, s: usize) -> Option<PageId> {
        let (lo, hi) = self.candidates(s)?;
        let mut range = self.members.range((lo, 0)..=(hi, PageId::MAX));
        let found = if self.dir[s] == DOWN { range.next() } else { range.next_back() };
        found.map(|&(_, id)| id)
    }

    /// The victim by the sequence rule, if a long sequence gives one: the long sequences
    /// in decreasing N-th fault time (ties: lower slot), the first with a candidate.
    fn sequence_victim(&mut self) -> Option<PageId> {
        loop {
            let mut best: Option<(u64, u32)> = None;
            for &s in &self.active {
                let r = self.rank[s as usize];
                if best.is_none_or(|(br, bs)| r > br || (r == br && s < bs)) {
                    best = Some((r, s));
                }
            }
            let (_, s) = best?;
            match self.victim_in(s as usize) {
                Some(v) => return Some(v),
                None => self.exhaust(s),
            }
        }
    }

    /// Structural checks for the tests; returns (resident pages, sequences). `full` adds
    /// the check that every address of a sequence was entered (O(pages)).
    #[cfg(test)]
    fn check(&self, full: bool) -> (usize, usize) {
        let mut long = 0;
        let entered: std::collections::HashSet<u64> = if full {
            (0..self.vpage_of.len() as PageId).filter(|&p| bit(&self.entered, p)).map(|p| self.vpage_of[p as usize]).collect()
        } else {
            Default::default()
        };
        for s in 0..self.first.len() {
            let len = self.len[s];
            assert_eq!(len, self.first[s].abs_diff(self.last[s]) + 1, "length of sequence {s}");
            assert!(len == 1 || self.dir[s] != NONE_DIR);
            if self.dir[s] != NONE_DIR {
                assert_eq!(self.dir[s] == UP, self.last[s] > self.first[s]);
            }
            assert_eq!(self.rank[s], self.nth_time(s, self.nth));
            let i = self.list_pos[s] as usize;
            match self.list_of[s] {
                ACTIVE => assert_eq!(self.active[i], s as u32),
                EXHAUSTED => {
                    let (lo, hi, e) = self.exhausted[i];
                    assert_eq!(e, s as u32);
                    assert_eq!(self.candidates(s).unwrap_or((1, 0)), (lo, hi), "candidates of exhausted {s}");
                    assert_eq!(self.victim_in(s), None, "exhausted sequence {s} has a candidate");
                }
                _ => assert!(len <= self.long_len, "long slot {s} on no list"),
            }
            if len > self.long_len {
                long += 1;
            }
            if full && (len >= 2 || self.long_len == 0) {
                let (lo, hi) = (self.first[s].min(self.last[s]), self.first[s].max(self.last[s]));
                assert!((lo..=hi).all(|x| entered.contains(&x)), "the addresses of sequence {s} are entered");
            }
        }
        assert_eq!(long, self.active.len() + self.exhausted.len());
        let mut entries = 0;
        for (&x, &s) in self.ends.keys.iter().zip(&self.ends.vals) {
            if s != NIL {
                assert_eq!(self.last[s as usize], x, "ends[{x}]");
                assert_eq!(self.ends.get(x), Some(s), "ends[{x}] reachable");
                entries += 1;
            }
        }
        assert!(entries <= self.first.len());
        assert_eq!(self.slots.len(), self.first.len());
        assert!(self.first.len() <= self.max_seqs);
        let resident: usize = self.resident.iter().map(|w| w.count_ones() as usize).sum();
        assert_eq!(resident, self.lru.len());
        assert!(self.lru.iter().all(|p| bit(&self.resident, p)));
        let members: BTreeSet<(u64, PageId)> =
            self.lru.iter().filter(|&p| bit(&self.entered, p)).map(|p| (self.vpage_of[p as usize], p)).collect();
        assert_eq!(members, self.members, "members are the resident entered pages");
        (resident, self.first.len())
    }
}

impl ReplacementPolicy for Seq {
    fn name(&self) -> &'static str {
        "seq"
    }

    fn reserve_pages(&mut self, pages: usize) {
        self.lru.reserve_pages(pages);
        if pages > self.vpage_of.len() {
            self.resident.resize(pages.div_ceil(64), 0);
            self.entered.resize(pages.div_ceil(64), 0);
            self.vpage_of.resize(pages, NO_VPAGE);
        }
    }

    #[inline]
    fn on_hit(&mut self, page: PageId, _time: u64) {
        self.lru.move_to_front(page);
    }

    #[inline(always)]
    fn wants_vpages(&self) -> bool {
        true
    }

    /// Notes the missing page's virtual page for `on_insert`.
    #[inline]
    fn on_miss_vpage(&mut self, page: PageId, vpage: u64) {
        self.pending = Some((page, vpage));
    }

    fn on_insert(&mut self, page: PageId, time: u64) {
        self.lru.push_front(page);
        set_bit(&mut self.resident, page, true);
        let entered = bit(&self.entered, page);
        // without its virtual page from the caller, the one it had in a sequence, if any
        let vpage = match self.pending.take() {
            Some((q, v)) if q == page && v != NO_VPAGE => v,
            _ if entered => self.vpage_of[page as usize],
            _ => return,
        };
        if entered {
            self.add_member(self.vpage_of[page as usize], page);
        }
        self.record_fault(vpage, page, time);
    }

    fn select_victim(&mut self, _time: u64) -> PageId {
        let victim = if self.active.is_empty() { None } else { self.sequence_victim() };
        let victim = match victim {
            Some(v) => {
                self.sequence_victims += 1;
                v
            }
            None => self.lru.tail().expect("select_victim with no resident page"),
        };
        self.on_remove(victim);
        victim
    }

    fn on_remove(&mut self, page: PageId) {
        self.lru.unlink(page);
        set_bit(&mut self.resident, page, false);
        if bit(&self.entered, page) {
            self.members.remove(&(self.vpage_of[page as usize], page));
        }
    }

    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        self.lru.prefetch(page);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("sequence_victims", self.sequence_victims)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing::drive;
    use crate::policy::Lru;
    use crate::replay::{PoolSimulation, Simulate};
    use crate::trace::AccessKind;
    use rand::{Rng, SeedableRng};
    use std::collections::HashMap;

    /// Dense ids in first-touch order, as the trace readers assign them.
    fn densify(vpages: &[u64]) -> Vec<PageId> {
        let mut ids = HashMap::new();
        vpages
            .iter()
            .map(|&v| {
                let next = ids.len() as PageId;
                *ids.entry(v).or_insert(next)
            })
            .collect()
    }

    /// The replay's protocol on `c` frames with virtual pages (like `testing::drive`,
    /// plus `on_miss_vpage`); `check(seq, t, resident, faulted)` after every reference.
    /// Returns the faults and the victims' virtual pages in order.
    fn drive_vp(seq: &mut Seq, c: usize, vpages: &[u64], mut check: impl FnMut(&Seq, usize, usize, bool)) -> (u64, Vec<u64>) {
        let ids = densify(vpages);
        let pages = *ids.iter().max().unwrap() as usize + 1;
        let mut vpage_of = vec![0u64; pages];
        seq.reserve_pages(pages);
        let mut resident = vec![false; pages];
        let (mut count, mut faults, mut victims) = (0, 0, Vec::new());
        for (t, (&x, &v)) in ids.iter().zip(vpages).enumerate() {
            vpage_of[x as usize] = v;
            let faulted = !resident[x as usize];
            if faulted {
                faults += 1;
                seq.on_miss_vpage(x, v);
                seq.on_miss(x, t as u64);
                if count == c {
                    let victim = seq.select_victim(t as u64);
                    assert!(resident[victim as usize] && victim != x, "victim {victim} for {x} at {t}");
                    resident[victim as usize] = false;
                    victims.push(vpage_of[victim as usize]);
                } else {
                    count += 1;
                }
                seq.on_insert(x, t as u64);
                resident[x as usize] = true;
            } else {
                seq.on_hit(x, t as u64);
            }
            check(seq, t, count, faulted);
        }
        (faults, victims)
    }

    /// [`drive_vp`] with the structural checks after every reference.
    fn checked(seq: &mut Seq, c: usize, vpages: &[u64]) -> (u64, Vec<u64>) {
        drive_vp(seq, c, vpages, |seq, t, count, _| {
            let (resident, seqs) = seq.check(t % 64 == 0 || t + 1 == vpages.len());
            assert_eq!(resident, count, "resident pages at {t}");
            assert!(seqs <= seq.max_seqs);
        })
    }

    /// LRU on the same stream: faults and the victims' virtual pages.
    fn lru(c: usize, vpages: &[u64]) -> (u64, Vec<u64>) {
        let ids = densify(vpages);
        let mut vpage_of = HashMap::new();
        for (&x, &v) in ids.iter().zip(vpages) {
            vpage_of.insert(x, v);
        }
        let (faults, victims) = drive(&mut Lru::new(), c, &ids, |_, _, _| {});
        (faults, victims.iter().map(|x| vpage_of[x]).collect())
    }

    /// The stream through the replay's `PoolSimulation`, virtual pages given.
    fn simulate(c: u32, vpages: &[u64]) -> crate::replay::ReplayResult {
        let ids = densify(vpages);
        let pages = *ids.iter().max().unwrap() as usize + 1;
        let kinds = vec![AccessKind::Read; ids.len()];
        let mut sim = PoolSimulation::new(Seq::new(c), c);
        let half = ids.len() / 2;
        sim.run(&ids[..half], &kinds[..half], &vpages[..half], &[], pages, 0);
        sim.run(&ids[half..], &kinds[half..], &vpages[half..], &[], pages, half as u64);
        sim.result(ids.len() as u64, ids.len() as u64, pages as u64)
    }

    /// A loop over m + 1 consecutive virtual pages on m frames: LRU faults on every
    /// reference. SEQ sees the first pass as one sequence S = 0..=m; its victim at the
    /// fault on m is m - 1 - M. From then on, each pass faults on the two pages around
    /// m - M: the fault on one evicts the other (the highest resident page of S at most
    /// `last(S) - M = m - M`), 2 faults a pass. Each pass also starts a new sequence (the
    /// refaults are not adjacent to any sequence's last page in the right direction), so
    /// S falls off the table after T = 200 passes; until the refaults form a sequence
    /// longer than L again, LRU evicts the next page of the loop, which costs at most
    /// L + 2 faults in that pass.
    #[test]
    fn a_loop_one_page_larger_than_memory_faults_rarely() {
        let m = 100usize;
        let passes = 450;
        // at a high address, to be sure nothing depends on small numbers
        let base = 1u64 << 40;
        let stream: Vec<u64> = (0..passes).flat_map(|_| base..=base + m as u64).collect();
        assert_eq!(lru(m, &stream).0, stream.len() as u64, "LRU faults on every reference");
        let mut per_pass = vec![0u64; passes];
        let mut seq = Seq::new(m as u32);
        let (faults, _) = drive_vp(&mut seq, m, &stream, |seq, t, count, faulted| {
            let (resident, _) = seq.check(t % 64 == 0);
            assert_eq!(resident, count);
            per_pass[t / (m + 1)] += faulted as u64;
        });
        assert_eq!(per_pass[0], m as u64 + 1);
        let expiries = passes as u64 / 200 + 1;
        let bad = per_pass[1..].iter().filter(|&&f| f > 2).count() as u64;
        assert!(per_pass[1..].iter().all(|&f| f <= 22), "{per_pass:?}");
        assert!(bad <= expiries, "{bad} passes with more than 2 faults: {per_pass:?}");
        assert!(per_pass[1..200].iter().all(|&f| f == 2), "2 faults a pass before S expires: {per_pass:?}");
        assert!(faults <= m as u64 + 1 + 2 * (passes as u64 - 1) + 22 * expiries, "SEQ {faults}");
        let r = simulate(m as u32, &stream);
        assert_eq!(r.faults, faults, "the replay's pool simulation agrees");
        assert!(r.counters[0].1 > 0, "{:?}", r.counters);
    }

    /// Loops 5% to 50% larger than memory: LRU faults on every reference; SEQ, after the
    /// first pass, on about the pages that do not fit (no more than `extra + 1` a pass,
    /// close to OPT), through the replay's pool simulation too.
    #[test]
    fn loops_slightly_larger_than_memory_fault_far_less_than_lru() {
        let m = 200u32;
        let passes = 60u64;
        for extra in [10u64, 30, 60, 100] {
            let n = m as u64 + extra;
            let stream: Vec<u64> = (0..passes).flat_map(|_| 5000..5000 + n).collect();
            let (lru_faults, _) = lru(m as usize, &stream);
            assert_eq!(lru_faults, stream.len() as u64);
            let r = simulate(m, &stream);
            let (faults, _) = checked(&mut Seq::new(m), m as usize, &stream);
            assert_eq!(r.faults, faults);
            assert!(faults <= n + (passes - 1) * (extra + 1), "loop of {n} pages: SEQ {faults}, LRU {lru_faults}");
            assert!(faults * 2 < lru_faults, "loop of {n} pages: SEQ {faults}, LRU {lru_faults}");
        }
    }

    /// The victim of a long scan is the page M behind its last fault (MRU-like), not the
    /// LRU page, in both directions; a short scan (length <= L) leaves LRU in charge.
    #[test]
    fn a_long_scan_evicts_m_pages_behind_its_head() {
        let c = 30;
        let up: Vec<u64> = (100..131).collect();
        // at the fault on 130 the sequence 100..=129 has 30 > L pages; 129 - 20 = 109
        assert_eq!(checked(&mut Seq::new(c as u32), c, &up).1, vec![109]);
        let down: Vec<u64> = (100..131).rev().collect();
        // going down: at the fault on 100 the sequence is 130 down to 101; 101 + 20
        assert_eq!(checked(&mut Seq::new(c as u32), c, &down).1, vec![121]);
        let c = 15;
        let short: Vec<u64> = (100..116).collect();
        assert_eq!(checked(&mut Seq::new(c as u32), c, &short).1, vec![100], "15 <= L: LRU");
    }

    /// Random references over a range: no sequence grows longer than L, and SEQ makes
    /// exactly LRU's faults, with the same victims.
    #[test]
    fn without_long_sequences_victims_equal_lru() {
        for (c, pages, seed) in [(1usize, 5u64, 1u64), (8, 40, 2), (50, 400, 3), (200, 1000, 4)] {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let stream: Vec<u64> = (0..30_000).map(|_| rng.gen_range(0..pages)).collect();
            let mut seq = Seq::new(c as u32);
            let mut longest = 0;
            let (faults, victims) = drive_vp(&mut seq, c, &stream, |seq, _, _, _| {
                longest = longest.max(seq.len.iter().copied().max().unwrap_or(0));
            });
            assert!(longest <= seq.long_len, "a sequence of {longest} pages formed (c {c})");
            assert!(longest >= 2, "sequences were detected at all");
            assert_eq!(seq.sequence_victims, 0);
            let (lru_faults, lru_victims) = lru(c, &stream);
            assert_eq!(faults, lru_faults, "c {c}, pages {pages}");
            assert_eq!(victims, lru_victims);
        }
    }

    /// The old flaw: dense ids come in first-touch order, so a first pass over pages at
    /// scattered virtual addresses gets consecutive ids. Looping over such pages on too
    /// few frames, SEQ must see no sequence (every fault starts its own) and behave
    /// exactly as LRU; the same loop over consecutive addresses is a sequence and SEQ
    /// beats LRU on it.
    #[test]
    fn first_touches_of_scattered_addresses_are_not_a_sequence() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut addresses: Vec<u64> = Vec::new();
        while addresses.len() < 300 {
            let a = rng.gen_range(0..1u64 << 36);
            if addresses.iter().all(|&b| a.abs_diff(b) > 1) {
                addresses.push(a);
            }
        }
        let c = 250;
        let stream: Vec<u64> = (0..20).flat_map(|_| addresses.iter().copied()).collect();
        assert_eq!(densify(&stream)[..300], (0..300).collect::<Vec<PageId>>()[..], "consecutive dense ids");
        let mut seq = Seq::new(c as u32);
        let (faults, victims) = drive_vp(&mut seq, c, &stream, |seq, _, _, _| {
            assert!(seq.len.iter().all(|&l| l == 1), "a sequence formed");
            assert!(seq.active.is_empty() && seq.exhausted.is_empty());
        });
        let (lru_faults, lru_victims) = lru(c, &stream);
        assert_eq!(lru_faults, stream.len() as u64);
        assert_eq!((faults, victims), (lru_faults, lru_victims));
        assert_eq!(seq.sequence_victims, 0);
        let r = simulate(c as u32, &stream);
        assert_eq!(r.faults, lru_faults);
        assert_eq!(r.counters, vec![("sequence_victims".to_string(), 0)]);
        // the same loop at consecutive addresses
        let consecutive: Vec<u64> = (0..20).flat_map(|_| 1000..1300u64).collect();
        let r = simulate(c as u32, &consecutive);
        assert!(r.faults * 3 < lru_faults, "SEQ {} on consecutive addresses", r.faults);
    }

    /// The end map against a `HashMap` under random inserts and removals of clustered
    /// keys (long probe runs, wrap-around at the table's end).
    #[test]
    fn end_map_matches_a_hash_map() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(2);
        let mut map = EndMap::new(16);
        let mut reference: HashMap<u64, u32> = HashMap::new();
        for _ in 0..200_000 {
            let key = rng.gen_range(0..40u64) * if rng.gen_bool(0.5) { 1 } else { 1 << 50 };
            if reference.len() < 16 && rng.gen_bool(0.5) {
                let val = rng.gen_range(0..4u32);
                map.insert(key, val);
                reference.insert(key, val);
            } else {
                let val = rng.gen_range(0..4u32);
                map.remove_if(key, val);
                if reference.get(&key) == Some(&val) {
                    reference.remove(&key);
                }
            }
            for k in 0..40u64 {
                for key in [k, k << 50] {
                    assert_eq!(map.get(key), reference.get(&key).copied(), "key {key}");
                }
            }
        }
    }

    /// A caller that gives no virtual pages gets LRU (no page is in a sequence).
    #[test]
    fn without_virtual_pages_it_is_lru() {
        let stream: Vec<PageId> = (0..20).flat_map(|_| 0..60).collect();
        let (faults, victims) = drive(&mut Seq::new(50), 50, &stream, |_, _, _| {});
        let (lru_faults, lru_victims) = drive(&mut Lru::new(), 50, &stream, |_, _, _| {});
        assert_eq!((faults, victims), (lru_faults, lru_victims));
    }

    /// Streams mixing long runs (both directions) and random pages: residency, the skip
    /// intervals, the end map and the table bound hold after every reference; the driver
    /// checks that every victim is resident. A small table exercises the dropping of
    /// sequences; other parameters than the paper's exercise the corner cases.
    #[test]
    fn invariants_hold_on_mixed_streams() {
        for (c, pages, max_seqs, seed) in [(4usize, 60u64, 3usize, 1u64), (30, 300, 8, 2), (100, 2000, 200, 3), (64, 500, 1, 4)] {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let mut stream: Vec<u64> = Vec::new();
            while stream.len() < 30_000 {
                if rng.gen_bool(0.3) {
                    let len = rng.gen_range(5..80u64);
                    let start = rng.gen_range(0..pages);
                    let up = rng.gen_bool(0.6);
                    for i in 0..len {
                        let x = if up { start + i } else { start.wrapping_sub(i) };
                        if x < pages {
                            stream.push(x);
                        }
                    }
                } else {
                    stream.push(rng.gen_range(0..pages));
                }
            }
            // the paper's parameters, then L < M with N > L, then L = M = 0
            for (l, n, m) in [(20, 5, 20), (3, 5, 10), (0, 1, 0)] {
                let mut seq = Seq::with_params(c as u32, max_seqs, l, n, m);
                let (faults, victims) = checked(&mut seq, c, &stream);
                assert!(faults > 0 && !victims.is_empty());
                assert!(seq.first.len() <= max_seqs);
                assert!(seq.sequence_victims > 0, "the runs formed long sequences (c {c}, L {l})");
            }
        }
    }

    /// Two processes on the same virtual pages (distinct dense ids, shared addresses):
    /// victims stay resident and the skip intervals hold no resident page.
    #[test]
    fn shared_virtual_pages_of_two_processes() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
        let pages = 400u64;
        // (process, virtual page); dense ids per pair, as the trace readers assign them
        let mut refs: Vec<(u64, u64)> = Vec::new();
        while refs.len() < 20_000 {
            let pid = rng.gen_range(0..2u64);
            let start = rng.gen_range(0..pages);
            for i in 0..rng.gen_range(1..60u64) {
                refs.push((pid, (start + i) % pages));
            }
        }
        let mut ids = HashMap::new();
        let dense: Vec<PageId> = refs
            .iter()
            .map(|&k| {
                let next = ids.len() as PageId;
                *ids.entry(k).or_insert(next)
            })
            .collect();
        let c = 50;
        let mut seq = Seq::new(c);
        seq.reserve_pages(ids.len());
        let mut resident = vec![false; ids.len()];
        let mut count = 0;
        for (t, (&x, &(_, v))) in dense.iter().zip(&refs).enumerate() {
            if resident[x as usize] {
                seq.on_hit(x, t as u64);
            } else {
                seq.on_miss_vpage(x, v);
                seq.on_miss(x, t as u64);
                if count == c {
                    let victim = seq.select_victim(t as u64);
                    assert!(resident[victim as usize] && victim != x);
                    resident[victim as usize] = false;
                } else {
                    count += 1;
                }
                seq.on_insert(x, t as u64);
                resident[x as usize] = true;
            }
            assert_eq!(seq.check(t % 64 == 0).0, count as usize);
        }
        assert!(seq.sequence_victims > 0);
    }
}
