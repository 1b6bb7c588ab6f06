//! The event queue of the discrete-event simulation: earliest time first, ties broken
//! by insertion order so that runs are deterministic.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::memory::Gid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// A process arrives.
    Start(u16),
    /// A page-in read completed.
    PageIn(u16, Gid),
    /// A page brought in by read-around arrived.
    Prefetched(Gid),
    /// A page brought in by adaptive page-in arrived (gang-adaptive-paging.txt 3.3).
    AdaptiveIn(Gid),
    /// A page-out write completed.
    WriteDone(Gid),
    /// kswapd wakes (free frames fell below the low watermark).
    Kswapd,
    /// kswapd's periodic wake-up (Linux 2.2: it sleeps with a one-second timeout).
    KswapdTimer,
    /// Time-series sample (and periodic token checks).
    Sample,
    /// Load-control measurement.
    LoadControl,
    /// Every process of a barrier has arrived: this one goes on (gang runs).
    BarrierRelease(u16),
    /// The gang scheduler's quantum ends (stale when its generation has moved on).
    Switch(u32),
    /// Background writing may issue its next write (gang-adaptive-paging.txt 3.4).
    BackgroundWrite(u32),
    /// The FreeBSD page daemon wakes (freebsd.rs): its sleep's generation (older ones
    /// are stale), and whether it slept with `vm_pages_needed` set (work) or for its
    /// statistics interval (a timer).
    PageDaemon(u32, bool),
    /// The plugged request queue starts (Linux 2.2 `unplug_device`; disk_io.rs).
    DiskUnplug,
    /// The request the disk was serving completed (elevator queues; disk_io.rs).
    DiskDone,
    /// A page-out write held by the write bound completed (async_writes.rs).
    IoDone(u32),
}

impl Event {
    /// Periodic events that recur as long as the run lasts; they alone do not make
    /// progress (a run waiting only on them is stuck).
    pub fn is_timer(self) -> bool {
        matches!(self, Event::Sample | Event::KswapdTimer | Event::LoadControl | Event::BackgroundWrite(_) | Event::PageDaemon(_, false))
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(u64, u64, Event)>>,
    seq: u64,
    /// Pending events that are not timers (disk completions, starts, kswapd runs).
    work: usize,
}

impl EventQueue {
    pub fn push(&mut self, time: u64, event: Event) {
        self.seq += 1;
        self.work += !event.is_timer() as usize;
        self.heap.push(Reverse((time, self.seq, event)));
    }

    /// Time of the earliest event, if any.
    pub fn next_time(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Removes and returns the earliest event if it is due at or before `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<(u64, Event)> {
        match self.heap.peek() {
            Some(Reverse((t, _, _))) if *t <= now => self.heap.pop().map(|Reverse((t, _, e))| {
                self.work -= !e.is_timer() as usize;
                (t, e)
            }),
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// True while an event other than a timer is pending.
    pub fn has_work(&self) -> bool {
        self.work > 0
    }
}
