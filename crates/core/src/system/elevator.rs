//! The kernels' request queues in front of the swap disk: the order in which queued
//! requests reach the drive, and which of them are merged into one request.
//!
//! Two kernels, read from their source:
//!
//! - **Linux 2.2** (`drivers/block/ll_rw_blk.c`, `make_request`, `add_request`,
//!   `attempt_merge`; `include/linux/blk.h` `IN_ORDER`; `include/linux/blkdev.h`
//!   `MAX_SECTORS`; read in the 2.2.1 tree, whose request queue 2.2.14 kept). A new
//!   buffer is first offered to the queued requests, in queue order: one of the same
//!   direction whose last sector is just before it takes it at its end (a back merge,
//!   after which `attempt_merge` joins the request with the next one if they now touch),
//!   one whose first sector is just after it takes it at its front; a merged request
//!   holds at most `MAX_SECTORS` = 244 sectors (the IDE default of 2.2's `ide-probe.c`),
//!   30 pages of 4 KiB. The request the drive is serving is never merged into (IDE keeps
//!   it at the head of the queue: "we need to jump over the first entry, as that entry
//!   may be busy being processed"). Otherwise `add_request` inserts a new request by
//!   `IN_ORDER` (device, then sector; 2.2 no longer puts reads before writes) into a
//!   one-way elevator that starts at the queue's head: after the first request it finds
//!   with the new one between it and its successor, or at the point where the order
//!   wraps round; at the end if there is none. A device whose queue is empty is
//!   *plugged* (`plug_device`): requests gather until the disk task queue runs
//!   (`unplug_device`, from `tq_disk`, when somebody waits for I/O), so that a burst of
//!   requests is merged and sorted before the first one starts.
//! - **FreeBSD 8.2** with the `ata(4)` driver of its GENERIC kernel
//!   (`sys/dev/ata/ata-queue.c`, `ata_queue_request`, `ata_sort_queue`, `ata_start`;
//!   `ata-disk.c` `ad_strategy` marks every disk request `ATA_R_ORDERED`). No merging:
//!   every swap pager buffer is one request. `ata_sort_queue` inserts a request in a
//!   one-way elevator anchored at the first *queued* request (the running one has left
//!   the queue): a request past that one goes before the point where the order wraps,
//!   one before it after that point, each in sector order; `ata_start` starts the first
//!   queued request as soon as the channel is idle (no plugging). (The CAM `ada(4)`
//!   driver sorts with `bioq_disksort`, also a one-way elevator without merging.)
//!
//! `Fifo`: the engine's queue before issue 15, in submission order with nothing merged.

use super::disk::IoKind;

/// How the queue in front of the disk orders and merges requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discipline {
    /// Submission order, nothing merged (the engine before issue 15).
    Fifo,
    /// Linux 2.2 `make_request` / `add_request`: merging (up to `max_pages` per request),
    /// a one-way elevator anchored at the request being served, plugging.
    Linux22 { max_pages: u32 },
    /// FreeBSD 8.2 `ata_sort_queue`: a one-way elevator anchored at the first queued
    /// request, no merging, no plugging.
    Freebsd82,
}

impl Discipline {
    /// Linux 2.2's largest merged request: `MAX_SECTORS` (244) sectors of 512 bytes,
    /// in whole pages (a swap page is one buffer of a page): 30 pages of 4 KiB.
    pub fn linux22(page_size: u64) -> Discipline {
        const MAX_SECTORS: u64 = 244;
        Discipline::Linux22 { max_pages: ((MAX_SECTORS * 512) / page_size).max(1) as u32 }
    }
}

/// One request waiting in the queue (or being served): its direction, first slot and
/// length, when its oldest part was submitted, and the tags of the submissions merged
/// into it (the machine's completion records, in slot order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub kind: IoKind,
    pub slot: u64,
    pub pages: u32,
    pub submitted: u64,
    pub tags: Vec<u32>,
}

impl Request {
    fn end(&self) -> u64 {
        self.slot + self.pages as u64
    }
}

/// The queued requests, in the order the drive will be given them.
#[derive(Debug, Clone, Default)]
pub struct RequestQueue {
    pub queued: Vec<Request>,
}

impl RequestQueue {
    pub fn is_empty(&self) -> bool {
        self.queued.is_empty()
    }

    /// The next request to serve, removed from the queue.
    pub fn pop_front(&mut self) -> Option<Request> {
        if self.queued.is_empty() {
            None
        } else {
            Some(self.queued.remove(0))
        }
    }

    /// Adds a request; `serving`: the first slot of the request the drive is serving,
    /// if any (Linux's elevator is anchored at it). Returns true when the request was
    /// merged into a queued one.
    pub fn add(&mut self, discipline: Discipline, req: Request, serving: Option<u64>) -> bool {
        match discipline {
            Discipline::Fifo => {
                self.queued.push(req);
                false
            }
            Discipline::Linux22 { max_pages } => {
                if self.merge_linux22(&req, max_pages) {
                    return true;
                }
                let at = linux22_position(serving, &self.queued, req.slot);
                self.queued.insert(at, req);
                false
            }
            Discipline::Freebsd82 => {
                let at = freebsd82_position(&self.queued, req.slot);
                self.queued.insert(at, req);
                false
            }
        }
    }

    /// `make_request`'s coalescing loop: the first queued request of the same direction
    /// that ends where `req` starts takes it at its end (then `attempt_merge` with its
    /// successor), or that starts where `req` ends takes it at its front; neither may
    /// grow past `max_pages`.
    fn merge_linux22(&mut self, req: &Request, max_pages: u32) -> bool {
        for i in 0..self.queued.len() {
            let q = &mut self.queued[i];
            if q.kind != req.kind || q.pages + req.pages > max_pages {
                continue;
            }
            if q.end() == req.slot {
                q.pages += req.pages;
                q.tags.extend_from_slice(&req.tags);
                q.submitted = q.submitted.min(req.submitted);
                self.attempt_merge(i, max_pages);
                return true;
            }
            if req.end() == q.slot {
                q.slot = req.slot;
                q.pages += req.pages;
                let mut tags = req.tags.clone();
                tags.extend_from_slice(&q.tags);
                q.tags = tags;
                q.submitted = q.submitted.min(req.submitted);
                return true;
            }
        }
        false
    }

    /// `attempt_merge`: request `i` swallows its successor in the queue when they touch,
    /// go the same way and fit in `max_pages` together.
    fn attempt_merge(&mut self, i: usize, max_pages: u32) {
        let Some(next) = self.queued.get(i + 1) else { return };
        let q = &self.queued[i];
        if q.end() != next.slot || q.kind != next.kind || q.pages + next.pages > max_pages {
            return;
        }
        let next = self.queued.remove(i + 1);
        let q = &mut self.queued[i];
        q.pages += next.pages;
        q.tags.extend_from_slice(&next.tags);
        q.submitted = q.submitted.min(next.submitted);
    }
}

/// Where Linux 2.2's `add_request` puts a request for `slot`: the list is the request
/// being served (if any) followed by the queue; walking its neighbouring pairs from the
/// head, the new request goes after the first one it follows in ascending order with
/// its successor after it, or at a wrap (a pair in descending order) if it is after the
/// first or before the second; at the end if no pair takes it. Never before the head.
/// Returns the index in `queued`.
fn linux22_position(serving: Option<u64>, queued: &[Request], slot: u64) -> usize {
    let at = |i: usize| -> u64 {
        match serving {
            Some(s) if i == 0 => s,
            Some(_) => queued[i - 1].slot,
            None => queued[i].slot,
        }
    };
    let len = queued.len() + serving.is_some() as usize;
    // the list index after which the request goes, converted to a queue index
    let to_queue = |after: usize| if serving.is_some() { after } else { after + 1 };
    if len == 0 {
        return 0;
    }
    for i in 0..len - 1 {
        let (tmp, next) = (at(i), at(i + 1));
        let after_current = tmp < slot;
        let before_next = slot < next;
        let ascending = tmp < next;
        if (!ascending && (after_current || before_next)) || (ascending && after_current && before_next) {
            return to_queue(i);
        }
    }
    queued.len()
}

/// Where FreeBSD 8.2's `ata_sort_queue` puts a request for `slot`: anchored at the first
/// queued request; below it, into the run after the wrap point in order; otherwise into
/// the first run, before the wrap point, in order. Always after the first queued request.
fn freebsd82_position(queued: &[Request], slot: u64) -> usize {
    if queued.is_empty() {
        return 0;
    }
    let lba = |i: usize| queued[i].slot;
    let mut this = 0;
    if slot < lba(0) {
        while this + 1 < queued.len() {
            let next = this + 1;
            if lba(next) < lba(this) {
                // the wrap point: sort into the run after it
                let mut n = next;
                loop {
                    if slot < lba(n) {
                        break;
                    }
                    this = n;
                    if this + 1 >= queued.len() {
                        break;
                    }
                    n = this + 1;
                }
                break;
            }
            this = next;
        }
    } else {
        while this + 1 < queued.len() {
            let next = this + 1;
            if lba(next) < lba(this) || slot < lba(next) {
                break;
            }
            this = next;
        }
    }
    this + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(kind: IoKind, slot: u64, pages: u32, tag: u32) -> Request {
        Request { kind, slot, pages, submitted: 0, tags: vec![tag] }
    }
    fn slots(q: &RequestQueue) -> Vec<(u64, u32)> {
        q.queued.iter().map(|r| (r.slot, r.pages)).collect()
    }
    const LINUX: Discipline = Discipline::Linux22 { max_pages: 30 };
    use IoKind::{Read, Write};

    /// make_request: two adjacent queued writes become one request (back and front), two
    /// that do not touch stay two; reads and writes never merge.
    #[test]
    fn linux22_merges_adjacent_requests_only() {
        let mut q = RequestQueue::default();
        assert!(!q.add(LINUX, req(Write, 100, 1, 0), None));
        assert!(q.add(LINUX, req(Write, 101, 1, 1), None), "back merge");
        assert!(q.add(LINUX, req(Write, 99, 1, 2), None), "front merge");
        assert_eq!(slots(&q), vec![(99, 3)]);
        assert_eq!(q.queued[0].tags, vec![2, 0, 1], "tags in slot order");
        assert!(!q.add(LINUX, req(Write, 103, 1, 3), None), "one slot apart");
        assert!(!q.add(LINUX, req(Read, 102, 1, 4), None), "another direction");
        assert_eq!(q.queued.len(), 3);
        // filling the gap joins three requests through attempt_merge
        let mut q = RequestQueue::default();
        q.add(LINUX, req(Write, 10, 2, 0), None);
        q.add(LINUX, req(Write, 13, 2, 1), None);
        assert_eq!(q.queued.len(), 2);
        assert!(q.add(LINUX, req(Write, 12, 1, 2), None));
        assert_eq!(slots(&q), vec![(10, 5)]);
        assert_eq!(q.queued[0].tags, vec![0, 2, 1]);
    }

    /// MAX_SECTORS bounds a merged request: 30 pages of 4 KiB (244 sectors).
    #[test]
    fn linux22_merged_requests_are_bounded() {
        assert_eq!(Discipline::linux22(4096), Discipline::Linux22 { max_pages: 30 });
        assert_eq!(Discipline::linux22(1 << 20), Discipline::Linux22 { max_pages: 1 });
        let mut q = RequestQueue::default();
        for s in 0..31 {
            q.add(LINUX, req(Write, s, 1, s as u32), None);
        }
        assert_eq!(slots(&q), vec![(0, 30), (30, 1)]);
    }

    /// FreeBSD 8.2's ata(4) queue and the FIFO queue merge nothing.
    #[test]
    fn freebsd82_and_fifo_never_merge() {
        for d in [Discipline::Freebsd82, Discipline::Fifo] {
            let mut q = RequestQueue::default();
            q.add(d, req(Write, 100, 1, 0), None);
            assert!(!q.add(d, req(Write, 101, 1, 1), None));
            assert_eq!(q.queued.len(), 2);
        }
    }

    /// The one-way elevators: Linux anchored at the request being served, FreeBSD at the
    /// first queued one; both serve upward from the anchor and wrap once.
    #[test]
    fn elevators_sort_one_way_from_their_anchor() {
        // Linux, head being served at 50: 70, 20, 60, 90, 10, 55 arrive
        let mut q = RequestQueue::default();
        for (i, s) in [70u64, 20, 60, 90, 10, 55].into_iter().enumerate() {
            q.add(LINUX, req(Write, s * 10, 1, i as u32), Some(500));
        }
        assert_eq!(q.queued.iter().map(|r| r.slot / 10).collect::<Vec<_>>(), vec![55, 60, 70, 90, 10, 20]);
        // Linux, plugged (nothing served): the first request is the head
        let mut q = RequestQueue::default();
        for (i, s) in [50u64, 70, 20, 60].into_iter().enumerate() {
            q.add(LINUX, req(Write, s * 10, 1, i as u32), None);
        }
        assert_eq!(q.queued.iter().map(|r| r.slot / 10).collect::<Vec<_>>(), vec![50, 60, 70, 20]);
        // FreeBSD: anchored at the first queued request, whatever is being served
        let mut q = RequestQueue::default();
        for (i, s) in [50u64, 70, 20, 60, 90, 10, 55].into_iter().enumerate() {
            q.add(Discipline::Freebsd82, req(Write, s * 10, 1, i as u32), Some(0));
        }
        assert_eq!(q.queued.iter().map(|r| r.slot / 10).collect::<Vec<_>>(), vec![50, 55, 60, 70, 90, 10, 20]);
        // FIFO keeps submission order
        let mut q = RequestQueue::default();
        for (i, s) in [50u64, 70, 20].into_iter().enumerate() {
            q.add(Discipline::Fifo, req(Write, s, 1, i as u32), Some(0));
        }
        assert_eq!(q.queued.iter().map(|r| r.slot).collect::<Vec<_>>(), vec![50, 70, 20]);
    }
}
