//! The fault parameters of predictive-replacement.txt (section 1, Figure 1; section 4's
//! characterisation, figures 2-12): for a page `p` between its i-th and (i+1)-th fault
//! under a replacement policy at a fixed memory size,
//!
//! - L, lifetime: from the fault (first access of the residency) to the last access
//!   before the page is replaced;
//! - D, dead time: from that last access to the replacement;
//! - W, window: from the replacement to the next fault of `p`;
//! - R, reuse: from the last access to the next fault (R = D + W);
//! - F, fault distance: between the two faults (F = L + D + W).
//!
//! Each is measured in two units, as section 4 does and as section 5.1's counters make
//! possible (G1 counts references, G2 faults; per page, C1..C4 hold the G1 and G2 stamps
//! of its last access and of its last fault):
//!
//! - **references**: memory references, each one counted (G1). The trace formats fold
//!   consecutive references by one process to one page into one record with a repeat
//!   count; a record of repeat r is r references, the first of them the one that may
//!   fault and the last the page's last access, so a trace with its repeats written out
//!   (one record per reference) gives the same distances as the folded one;
//! - **faults to other pages**: differences of the global fault counter G2, not counting
//!   the page's own faults.
//!
//! The analysis replays the stream under the policy exactly as [`crate::replay`] does
//! (same calls in the same order, so the same victims and the same fault count) and
//! records one row per residency.

use std::sync::Arc;

use crate::hint::{prefetch, PREFETCH_DISTANCE};
use crate::policy::{build, Foresight, Future, PolicyKind};
use crate::replay::record;
use crate::stream::for_each_batch;
use crate::trace::{AccessKind, PageId, Progress, RefSource};
use crate::{Error, Result};

/// `flags` bit: the residency ended by an eviction (otherwise the page was still
/// resident at the end of the stream, and L and D run up to the end only).
pub const FINISHED: u64 = 1;
/// `flags` bit: the page faulted again after this residency (W, R, F are defined).
pub const REFAULTED: u64 = 2;
/// `flags` bit: the residency ended when the program gave the page back (a free record):
/// not an eviction, so not [`FINISHED`]; L and D run up to the free.
pub const FREED: u64 = 4;
/// Value of a column entry that is not defined for its row (no next fault; or a
/// parameter that does not exist for the residency, see [`FaultParameters::column`]).
pub const MISSING: u64 = u64::MAX;

/// The unit of a distance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Memory references (a record counts its repeats): the G1 counter.
    References,
    /// Page faults to other pages: the G2 counter, the page's own faults left out.
    Faults,
}

/// One of Figure 1's fault parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parameter {
    /// Lifetime: fault to last access.
    L,
    /// Dead time: last access to eviction.
    D,
    /// Window: eviction to next fault.
    W,
    /// Reuse: last access to next fault.
    R,
    /// Fault distance: fault to next fault.
    F,
}

impl Parameter {
    pub const ALL: [Parameter; 5] = [Parameter::L, Parameter::D, Parameter::W, Parameter::R, Parameter::F];

    pub fn name(self) -> &'static str {
        match self {
            Parameter::L => "L",
            Parameter::D => "D",
            Parameter::W => "W",
            Parameter::R => "R",
            Parameter::F => "F",
        }
    }
}

/// One row per residency (a page's stay in memory from a fault to its eviction, or to
/// the end of the stream), in the order of the faults that began them, as columns.
///
/// Stamps: a `*_record` column is a record index (where in the stream); a `*_ref` column
/// a reference index (G1: the references before it, each record counting its repeats;
/// a fault, an eviction and a next fault stand at the first reference of their record,
/// a last access at the last); a `*_faults` column is the number of faults counted up to
/// and including that record (G2 after the record). So a residency's `fault_faults`
/// counts its own fault, and `evict_faults` counts the fault (of another page) whose
/// victim it was. A residency still open at the end has `evict_record` = `records`,
/// `evict_ref` = `references` and `evict_faults` = `faults` (the end of the stream) and
/// no [`FINISHED`] flag; one whose page never faults again has [`MISSING`] next-fault
/// stamps and no [`REFAULTED`] flag.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FaultParameters {
    /// The policy's label and the memory size.
    pub policy: String,
    pub frames: u64,
    /// Records (page touches) in the stream.
    pub records: u64,
    /// References (records times their repeat counts; a free record counts none).
    pub references: u64,
    /// Faults, compulsory ones included (= rows).
    pub faults: u64,
    pub compulsory_faults: u64,
    pub distinct_pages: u64,
    /// Dense page id (the source's numbering of (process, page)).
    pub page: Vec<u64>,
    pub pid: Vec<u64>,
    /// Virtual page number.
    pub vpage: Vec<u64>,
    pub fault_record: Vec<u64>,
    pub fault_ref: Vec<u64>,
    pub fault_faults: Vec<u64>,
    /// Last access of the residency (its fault if it was touched once).
    pub last_record: Vec<u64>,
    pub last_ref: Vec<u64>,
    pub last_faults: Vec<u64>,
    /// The eviction, or the end of the stream for an unfinished residency.
    pub evict_record: Vec<u64>,
    pub evict_ref: Vec<u64>,
    pub evict_faults: Vec<u64>,
    /// The page's next fault, or [`MISSING`].
    pub next_fault_record: Vec<u64>,
    pub next_fault_ref: Vec<u64>,
    pub next_fault_faults: Vec<u64>,
    /// [`FINISHED`] | [`REFAULTED`] | [`FREED`].
    pub flags: Vec<u64>,
}

impl FaultParameters {
    /// Residencies (rows).
    pub fn len(&self) -> usize {
        self.page.len()
    }

    pub fn is_empty(&self) -> bool {
        self.page.is_empty()
    }

    pub fn finished(&self, row: usize) -> bool {
        self.flags[row] & FINISHED != 0
    }

    pub fn refaulted(&self, row: usize) -> bool {
        self.flags[row] & REFAULTED != 0
    }

    /// The parameter of residency `row` in `unit`; `None` for W, R and F when the page
    /// never faulted again. L and D of an unfinished residency run to the end of the
    /// stream.
    ///
    /// In references: L = last - fault, D = evict - last, W = next - evict, R = next -
    /// last, F = next - fault (reference indices). In faults to other pages, the same
    /// differences of G2 stamps, less one where the interval ends at the page's own next
    /// fault (W, R, F): faults strictly between the two faults for F, the evicting fault
    /// included in D.
    pub fn get(&self, row: usize, parameter: Parameter, unit: Unit) -> Option<u64> {
        let (fault, last, evict, next) = match unit {
            Unit::References => (self.fault_ref[row], self.last_ref[row], self.evict_ref[row], self.next_fault_ref[row]),
            Unit::Faults => {
                (self.fault_faults[row], self.last_faults[row], self.evict_faults[row], self.next_fault_faults[row])
            }
        };
        // the page's own next fault is in its G2 stamp, not a fault to another page
        let own = match unit {
            Unit::References => 0,
            Unit::Faults => 1,
        };
        let refaulted = self.refaulted(row);
        match parameter {
            Parameter::L => Some(last - fault),
            Parameter::D => Some(evict - last),
            Parameter::W => refaulted.then(|| next - evict - own),
            Parameter::R => refaulted.then(|| next - last - own),
            Parameter::F => refaulted.then(|| next - fault - own),
        }
    }

    /// The parameter of every residency in `unit`, [`MISSING`] where undefined.
    pub fn column(&self, parameter: Parameter, unit: Unit) -> Vec<u64> {
        (0..self.len()).map(|row| self.get(row, parameter, unit).unwrap_or(MISSING)).collect()
    }

    fn open_row(&mut self, page: PageId, pid: u32, vpage: u64, at: Stamp) -> u64 {
        let row = self.page.len() as u64;
        self.page.push(page as u64);
        self.pid.push(pid as u64);
        self.vpage.push(vpage);
        self.fault_record.push(at.record);
        self.fault_ref.push(at.reference);
        self.fault_faults.push(at.faults);
        self.last_record.push(at.record);
        self.last_ref.push(at.reference);
        self.last_faults.push(at.faults);
        self.evict_record.push(MISSING);
        self.evict_ref.push(MISSING);
        self.evict_faults.push(MISSING);
        self.next_fault_record.push(MISSING);
        self.next_fault_ref.push(MISSING);
        self.next_fault_faults.push(MISSING);
        self.flags.push(0);
        row
    }
}

/// No residency yet.
const NO_ROW: u64 = u64::MAX;

/// A point of the stream in the three counts: record index, reference index (G1) and
/// faults so far (G2).
#[derive(Debug, Clone, Copy, Default)]
struct Stamp {
    record: u64,
    reference: u64,
    faults: u64,
}

/// Per page: its latest residency's row and the stamps of its latest access (the C1,
/// C2 counters of section 5.1; the row holds C3, C4). One 40-byte entry, one cache
/// line touched per reference.
#[derive(Debug, Clone, Copy)]
struct PageState {
    row: u64,
    last: Stamp,
    resident: bool,
}

const UNSEEN: PageState = PageState { row: NO_ROW, last: Stamp { record: 0, reference: 0, faults: 0 }, resident: false };

/// The residencies of the stream that `open` yields under `policy` on `frames` frames,
/// with the same victims as [`crate::replay::replay`]. For OPT the stream is read twice:
/// once for the next-use times (4 bytes per record, as the replay's pre-pass), once for
/// the analysis. Variable-size policies (Working Set, PFF) are rejected: the parameters
/// are defined for a fixed memory size.
///
/// Memory: 8 bytes x 16 columns per residency (fault), 40 bytes per page.
pub fn fault_parameters(
    open: &dyn Fn() -> Result<Box<dyn RefSource>>,
    policy: PolicyKind,
    frames: u32,
    seed: u64,
    progress: Progress,
) -> Result<FaultParameters> {
    if policy.variable_size() {
        return Err(Error::invalid(
            "policy",
            format!("'{}' sets its own memory size; the fault parameters need a fixed-size policy", policy.label()),
        ));
    }
    if frames == 0 || frames == u32::MAX {
        return Err(Error::invalid("frames", format!("expected a memory size from 1 to {} frames, got {frames}", u32::MAX - 1)));
    }
    let next_use = if policy.needs_future() { Some(Foresight::PrePass(Arc::new(future_pass(open, &mut *progress)?))) } else { None };
    let mut replacement = build(policy, frames, seed, next_use.as_ref());
    let mut out = FaultParameters { policy: policy.label(), frames: frames as u64, ..Default::default() };
    let mut pages: Vec<PageState> = Vec::new();
    let wants_vpages = replacement.wants_vpages();
    let (mut time, mut faults, mut compulsory, mut references, mut resident) = (0u64, 0u64, 0u64, 0u64, 0u32);
    let mut src = open()?;
    for_each_batch(src.as_mut(), progress, |batch, distinct| {
        if distinct > pages.len() {
            let grow = distinct.max(pages.len() * 3 / 2);
            pages.resize(grow, UNSEEN);
            replacement.reserve_pages(grow);
        }
        let ids = &batch.id;
        for (i, &id) in ids.iter().enumerate() {
            if let Some(&ahead) = ids.get(i + PREFETCH_DISTANCE) {
                prefetch(&pages, ahead as usize);
                replacement.prefetch(ahead);
            }
            let t = time + i as u64;
            let st = pages[id as usize];
            if batch.kind[i] == AccessKind::Free {
                // as replay: a resident page leaves without a fault, its residency ends
                // here (it is not refaulted), and its next touch is compulsory; a free is
                // no reference
                if st.resident {
                    replacement.on_remove(id);
                    end(&mut out, &mut pages, id, Stamp { record: t, reference: references, faults }, FREED)?;
                    resident -= 1;
                }
                pages[id as usize] = UNSEEN;
                continue;
            }
            // the record's first reference (the one that may fault)
            let first = references;
            if st.resident {
                replacement.on_hit(id, t);
            } else {
                faults += 1;
                let at = Stamp { record: t, reference: first, faults };
                if st.row == NO_ROW {
                    compulsory += 1;
                } else {
                    // the previous residency ended in an eviction; this is its next fault
                    let prev = st.row as usize;
                    out.next_fault_record[prev] = t;
                    out.next_fault_ref[prev] = first;
                    out.next_fault_faults[prev] = faults;
                    out.flags[prev] |= REFAULTED;
                }
                if wants_vpages {
                    replacement.on_miss_vpage(id, batch.page[i]);
                }
                replacement.on_miss(id, t);
                if resident == frames {
                    let victim = replacement.select_victim(t);
                    end(&mut out, &mut pages, victim, at, FINISHED)?;
                } else {
                    resident += 1;
                }
                replacement.on_insert(id, t);
                let row = out.open_row(id, batch.pid[i], batch.page[i], at);
                pages[id as usize].row = row;
                pages[id as usize].resident = true;
            }
            // a record of repeat r is r references: the last one is the page's last access
            references += batch.repeat[i] as u64;
            pages[id as usize].last = Stamp { record: t, reference: references - 1, faults };
        }
        time += ids.len() as u64;
        Ok(())
    })?;
    // residencies still open at the end: L and D up to the end, not finished
    for page in pages.iter().filter(|p| p.resident) {
        let row = page.row as usize;
        out.last_record[row] = page.last.record;
        out.last_ref[row] = page.last.reference;
        out.last_faults[row] = page.last.faults;
        out.evict_record[row] = time;
        out.evict_ref[row] = references;
        out.evict_faults[row] = faults;
    }
    out.records = time;
    out.references = references;
    out.faults = faults;
    out.compulsory_faults = compulsory;
    out.distinct_pages = src.distinct_pages() as u64;
    Ok(out)
}

/// Closes the residency of `victim`, evicted `at` (the record, its first reference and
/// the fault count of the fault that evicted it; `how` [`FINISHED`]), or given back then
/// by a free (`how` [`FREED`]).
fn end(out: &mut FaultParameters, pages: &mut [PageState], victim: PageId, at: Stamp, how: u64) -> Result<()> {
    let page = pages.get_mut(victim as usize).filter(|p| p.resident).ok_or_else(|| {
        Error::invalid("policy", format!("{} chose page {victim} as a victim at record {}, but it is not resident", out.policy, at.record))
    })?;
    page.resident = false;
    let row = page.row as usize;
    out.last_record[row] = page.last.record;
    out.last_ref[row] = page.last.reference;
    out.last_faults[row] = page.last.faults;
    out.evict_record[row] = at.record;
    out.evict_ref[row] = at.reference;
    out.evict_faults[row] = at.faults;
    out.flags[row] |= how;
    Ok(())
}

/// OPT's pre-pass: the next-use time of every record, as the replay computes them.
fn future_pass(open: &dyn Fn() -> Result<Box<dyn RefSource>>, progress: Progress) -> Result<Future> {
    let mut src = open()?;
    let rec = record(src.as_mut(), false, false, progress)?;
    Ok(Future::new(rec.ids, &rec.kinds, rec.distinct_pages))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{replay, ReplayConfig};
    use crate::trace::VecSource;

    fn analyse(pages: &[u64], policy: PolicyKind, frames: u32) -> FaultParameters {
        let pages = pages.to_vec();
        let open = move || Ok(Box::new(VecSource::from_pages(&pages)) as Box<dyn RefSource>);
        fault_parameters(&open, policy, frames, 7, &mut |_| true).unwrap()
    }

    fn replay_faults(pages: &[u64], policy: PolicyKind, frames: u32) -> u64 {
        let pages = pages.to_vec();
        let open = move || Ok(Box::new(VecSource::from_pages(&pages)) as Box<dyn RefSource>);
        let cfg = ReplayConfig { policies: vec![policy], frames: vec![frames as u64], seed: 7, repeats: Default::default() };
        replay(&open, &cfg, &mut |_| true).unwrap()[0].faults
    }

    fn random_pages(n: usize, range: u64, seed: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // skewed, so that pages have several residencies of varied lengths
                let r = (x >> 33) % range;
                100 + r * r / range
            })
            .collect()
    }

    /// Pages A=10, B=20, C=30 on 2 frames under LRU, traced by hand:
    ///
    /// ```text
    /// record  0  1  2  3  4  5  6  7
    /// page    A  B  A  C  A  B  C  A
    /// fault   1  2  -  3  -  4  5  6     (G2 after the record)
    /// evicts           B     C  A  B
    /// ```
    #[test]
    fn fault_parameters_hand_traced_lru() {
        const A: u64 = 10;
        const B: u64 = 20;
        const C: u64 = 30;
        let fp = analyse(&[A, B, A, C, A, B, C, A], PolicyKind::Lru, 2);
        assert_eq!((fp.records, fp.faults, fp.compulsory_faults, fp.distinct_pages), (8, 6, 3, 3));
        assert_eq!(fp.vpage, vec![A, B, C, B, C, A]);
        assert_eq!(fp.fault_record, vec![0, 1, 3, 5, 6, 7]);
        assert_eq!(fp.fault_faults, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(fp.last_record, vec![4, 1, 3, 5, 6, 7]);
        assert_eq!(fp.evict_record, vec![6, 3, 5, 7, 8, 8]);
        assert_eq!(fp.evict_faults, vec![5, 3, 4, 6, 6, 6]);
        assert_eq!(fp.flags, vec![3, 3, 3, 1, 0, 0]);
        let m = None;
        // (L, D, W, R, F) per residency
        let refs: Vec<[Option<u64>; 5]> = vec![
            [Some(4), Some(2), Some(1), Some(3), Some(7)], // A: 0..4, out at 6, back at 7
            [Some(0), Some(2), Some(2), Some(4), Some(4)], // B: 1, out at 3, back at 5
            [Some(0), Some(2), Some(1), Some(3), Some(3)], // C: 3, out at 5, back at 6
            [Some(0), Some(2), m, m, m],                   // B: 5, out at 7, never back
            [Some(0), Some(2), m, m, m],                   // C: 6, resident at the end (8)
            [Some(0), Some(1), m, m, m],                   // A: 7, resident at the end
        ];
        let faults: Vec<[Option<u64>; 5]> = vec![
            // A: B, C fault while it lives; B, C (the evictor) while dead; none in its window
            [Some(2), Some(2), Some(0), Some(2), Some(4)],
            [Some(0), Some(1), Some(0), Some(1), Some(1)], // B: C evicts it; A only hits until B returns
            [Some(0), Some(1), Some(0), Some(1), Some(1)], // C: B evicts it
            [Some(0), Some(2), m, m, m],                   // B: C, then A (the evictor)
            [Some(0), Some(1), m, m, m],                   // C: A faults after it
            [Some(0), Some(0), m, m, m],
        ];
        for row in 0..fp.len() {
            for (k, &p) in Parameter::ALL.iter().enumerate() {
                assert_eq!(fp.get(row, p, Unit::References), refs[row][k], "row {row} {} refs", p.name());
                assert_eq!(fp.get(row, p, Unit::Faults), faults[row][k], "row {row} {} faults", p.name());
            }
        }
        assert_eq!(fp.column(Parameter::W, Unit::Faults), vec![0, 0, 0, MISSING, MISSING, MISSING]);
    }

    /// A record of repeat r is r references: the same references written out one per
    /// record (an unfolded trace) give the same distances, in both units, as the folded
    /// trace, and A's first residency by hand (2 frames, LRU):
    ///
    /// ```text
    /// reference 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14
    /// page      A A A B A A C C C C A  B  B  C  A
    /// fault     *     *     *          *     *  *
    /// evicts                B          C     A  B
    /// ```
    /// A: fault at 0, last access at 10, evicted at 13, back at 14: L 10, D 3, W 1, R 4,
    /// F 14 (counting records of the folded trace, L would be 4).
    #[test]
    fn references_count_repeats_and_an_unfolded_trace_equals_the_folded_one() {
        use crate::trace::{AccessKind, Reference};
        let folded: Vec<(u64, u32)> = vec![(10, 3), (20, 1), (10, 2), (30, 4), (10, 1), (20, 2), (30, 1), (10, 1)];
        let record = |page, repeat| Reference { pid: 0, page, kind: AccessKind::Read, repeat, gap: 0 };
        let run = |records: Vec<Reference>| {
            let open = move || Ok(Box::new(VecSource::new("t", 4096, records.clone())) as Box<dyn RefSource>);
            fault_parameters(&open, PolicyKind::Lru, 2, 0, &mut |_| true).unwrap()
        };
        let a = run(folded.iter().map(|&(p, r)| record(p, r)).collect());
        let b = run(folded.iter().flat_map(|&(p, r)| (0..r).map(move |_| record(p, 1))).collect());
        assert_eq!((a.records, b.records), (8, 15));
        assert_eq!((a.references, b.references), (15, 15));
        assert_eq!((a.faults, a.len()), (b.faults, b.len()));
        for unit in [Unit::References, Unit::Faults] {
            for p in Parameter::ALL {
                assert_eq!(a.column(p, unit), b.column(p, unit), "{} in {unit:?}", p.name());
            }
        }
        let first_a: Vec<Option<u64>> = Parameter::ALL.iter().map(|&p| a.get(0, p, Unit::References)).collect();
        assert_eq!(first_a, vec![Some(10), Some(3), Some(1), Some(4), Some(14)]);
        assert_eq!((a.fault_ref[0], a.last_ref[0], a.evict_ref[0], a.next_fault_ref[0]), (0, 10, 13, 14));
        assert_eq!(a.last_record[0] - a.fault_record[0], 4);
    }

    /// A free ends a residency without an eviction: FREED, not FINISHED (the figures of
    /// replaced pages leave it out), L and D up to the free, no W, R, F; the page's next
    /// touch is compulsory.
    #[test]
    fn a_free_ends_a_residency_without_an_eviction() {
        use crate::trace::{AccessKind, Reference};
        let r = |page, kind| Reference { pid: 0, page, kind, repeat: 1, gap: 0 };
        let records = vec![r(10, AccessKind::Read), r(20, AccessKind::Read), r(10, AccessKind::Read), r(10, AccessKind::Free), r(30, AccessKind::Read), r(10, AccessKind::Read)];
        let open = move || Ok(Box::new(VecSource::new("t", 4096, records.clone())) as Box<dyn RefSource>);
        let fp = fault_parameters(&open, PolicyKind::Lru, 2, 0, &mut |_| true).unwrap();
        assert_eq!((fp.faults, fp.compulsory_faults, fp.references), (4, 4, 5));
        assert_eq!(fp.vpage, vec![10, 20, 30, 10]);
        assert_eq!(fp.flags, vec![FREED, FINISHED, 0, 0]); // 20 is LRU's victim when 10 comes back
        // 10: fault at reference 0, last access 2, freed before reference 3
        assert_eq!((fp.get(0, Parameter::L, Unit::References), fp.get(0, Parameter::D, Unit::References)), (Some(2), Some(1)));
        assert_eq!(fp.get(0, Parameter::W, Unit::References), None);
    }

    fn check_identities(fp: &FaultParameters) {
        for row in 0..fp.len() {
            for unit in [Unit::References, Unit::Faults] {
                let get = |p| fp.get(row, p, unit);
                let (l, d) = (get(Parameter::L).unwrap(), get(Parameter::D).unwrap());
                match (get(Parameter::W), get(Parameter::R), get(Parameter::F)) {
                    (Some(w), Some(r), Some(f)) => {
                        assert!(fp.finished(row));
                        assert_eq!(r, d + w, "R = D + W, row {row}");
                        assert_eq!(f, l + d + w, "F = L + D + W, row {row}");
                    }
                    (None, None, None) => {}
                    other => panic!("W, R, F defined together or not at all: {other:?}"),
                }
                if fp.finished(row) {
                    // an eviction comes after the last access, by the evicting fault
                    assert!(d >= 1, "row {row}: D = {d} in {unit:?}");
                }
            }
        }
    }

    #[test]
    fn fault_parameters_identities_on_random_streams() {
        for (seed, range, frames) in [(1u64, 50u64, 10u32), (2, 300, 64), (3, 1000, 100), (4, 60, 19)] {
            let pages = random_pages(40_000, range, seed);
            for policy in [PolicyKind::Lru, PolicyKind::CLOCK] {
                let fp = analyse(&pages, policy, frames);
                assert_eq!(fp.faults, replay_faults(&pages, policy, frames), "{policy:?} seed {seed}");
                assert_eq!(fp.len() as u64, fp.faults);
                check_identities(&fp);
                // the rows of a page chain: each next fault is the page's next residency
                let mut next_row = std::collections::HashMap::new();
                for row in (0..fp.len()).rev() {
                    match next_row.insert(fp.page[row], row) {
                        Some(later) => {
                            assert!(fp.refaulted(row));
                            assert_eq!(fp.next_fault_record[row], fp.fault_record[later]);
                            assert_eq!(fp.next_fault_ref[row], fp.fault_ref[later]);
                            assert_eq!(fp.next_fault_faults[row], fp.fault_faults[later]);
                        }
                        None => assert!(!fp.refaulted(row)),
                    }
                }
                // at the end every frame is full (more pages than frames) and open
                let open = (0..fp.len()).filter(|&r| !fp.finished(r)).count();
                assert_eq!(open as u32, frames.min(fp.distinct_pages as u32));
            }
        }
    }

    #[test]
    fn fault_parameters_fault_counts_equal_replay_for_every_fixed_size_policy() {
        let pages = random_pages(30_000, 400, 9);
        for policy in PolicyKind::ALL.into_iter().filter(|p| !p.variable_size()) {
            for frames in [1u32, 37, 150] {
                let fp = analyse(&pages, policy, frames);
                assert_eq!(fp.faults, replay_faults(&pages, policy, frames), "{} at {frames}", policy.label());
                check_identities(&fp);
            }
        }
    }

    #[test]
    fn fault_parameters_of_a_loop_larger_than_lru_memory() {
        // a loop of n + 1 pages on n frames: every reference faults, L = 0, and each page
        // is evicted n references after its fault, by the n-th fault after its own
        let n = 8u64;
        let pages: Vec<u64> = (0..10 * (n + 1)).map(|i| i % (n + 1)).collect();
        let fp = analyse(&pages, PolicyKind::Lru, n as u32);
        assert_eq!(fp.faults, pages.len() as u64);
        for row in (0..fp.len()).filter(|&r| fp.finished(r)) {
            assert_eq!(fp.get(row, Parameter::L, Unit::References), Some(0));
            assert_eq!(fp.get(row, Parameter::D, Unit::References), Some(n));
            assert_eq!(fp.get(row, Parameter::D, Unit::Faults), Some(n));
            if fp.refaulted(row) {
                assert_eq!(fp.get(row, Parameter::W, Unit::References), Some(1));
                assert_eq!(fp.get(row, Parameter::W, Unit::Faults), Some(0));
                assert_eq!(fp.get(row, Parameter::F, Unit::Faults), Some(n));
            }
        }
    }

    #[test]
    fn fault_parameters_rejects_variable_size_policies_and_zero_frames() {
        let open = || Ok(Box::new(VecSource::from_pages(&[1, 2, 3])) as Box<dyn RefSource>);
        for policy in [PolicyKind::WorkingSet { tau: 100 }, PolicyKind::Pff { interval: 10 }] {
            let err = fault_parameters(&open, policy, 10, 0, &mut |_| true).unwrap_err().to_string();
            assert!(err.starts_with("policy:") && err.contains("fixed-size") && !err.contains('\n'), "{err}");
        }
        let err = fault_parameters(&open, PolicyKind::Lru, 0, 0, &mut |_| true).unwrap_err().to_string();
        assert!(err.starts_with("frames:"), "{err}");
    }

    #[test]
    fn fault_parameters_of_an_empty_stream() {
        let fp = analyse(&[], PolicyKind::Opt, 4);
        assert_eq!((fp.records, fp.faults, fp.len()), (0, 0, 0));
    }
}
