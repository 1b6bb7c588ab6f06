//! The machine's side of the swap disk's request queue: every request is submitted with
//! the events that must happen when it completes (pages arriving, frames freed by a
//! write, background writing's next turn), and the write bound's part
//! ([`super::async_writes`]).
//!
//! With the FIFO queue the completion time is known at submission and the events are
//! pushed at once, exactly as the engine did before issue 15. With an elevator the
//! disk may reorder and merge queued requests, so the events wait in a slab entry named
//! by the request's tag until the disk reports the request done ([`Event::DiskDone`]);
//! a plugged queue (Linux 2.2) is unplugged at the end of the current instant
//! ([`Event::DiskUnplug`]), after the instant's other submissions have joined it: the
//! kernel runs its disk task queue when a process waits for I/O, which in this machine
//! is the instant it blocks.

use super::disk::{DiskStats, Enqueued, IoKind};
use super::events::Event;
use super::machine::Machine;

/// What one submitted request does when it completes.
#[derive(Debug, Default)]
pub(super) struct IoEntry {
    /// Pushed at the completion, in this order (elevator only; FIFO pushes them at once).
    pub events: Vec<Event>,
    /// Units of the asynchronous write bound it holds (pages or requests).
    pub async_units: u64,
    /// A synchronous page-out write: its writer waits for it.
    pub sync: bool,
}

/// Completion records of requests in flight, by tag; freed tags are reused.
#[derive(Debug, Default)]
pub(super) struct IoSlab {
    entries: Vec<IoEntry>,
    free: Vec<u32>,
}

impl IoSlab {
    fn insert(&mut self, entry: IoEntry) -> u32 {
        match self.free.pop() {
            Some(tag) => {
                self.entries[tag as usize] = entry;
                tag
            }
            None => {
                self.entries.push(entry);
                (self.entries.len() - 1) as u32
            }
        }
    }

    /// Takes the record of `tag` out and frees the tag.
    pub fn remove(&mut self, tag: u32) -> IoEntry {
        self.free.push(tag);
        std::mem::take(&mut self.entries[tag as usize])
    }

    fn entry(&mut self, tag: u32) -> &mut IoEntry {
        &mut self.entries[tag as usize]
    }
}

impl Machine {
    /// Submits a request of `pages` pages at `slot`; `events` happen when it completes.
    pub(super) fn io(&mut self, kind: IoKind, slot: u64, pages: u32, events: Vec<Event>) {
        self.io_held(kind, slot, pages, events, 0, false);
    }

    /// [`Machine::io`] for a page-out write holding `async_units` of the asynchronous
    /// write bound, or written synchronously (`sync`). Returns the request's tag when
    /// its completion must be reported ([`Event::IoDone`]).
    pub(super) fn io_held(&mut self, kind: IoKind, slot: u64, pages: u32, events: Vec<Event>, async_units: u64, sync: bool) -> Option<u32> {
        let reported = async_units > 0 || sync;
        if !self.disk.is_elevator() {
            let done = self.disk.submit(self.now, kind, slot, pages);
            for e in events {
                self.events.push(done, e);
            }
            if !reported {
                return None;
            }
            let tag = self.io_slab.insert(IoEntry { events: Vec::new(), async_units, sync });
            self.events.push(done, Event::IoDone(tag));
            return Some(tag);
        }
        let tag = self.io_slab.insert(IoEntry { events, async_units, sync });
        match self.disk.enqueue(self.now, kind, slot, pages, tag) {
            Enqueued::Started(done) => self.events.push(done, Event::DiskDone),
            Enqueued::Plugged => self.events.push(self.now, Event::DiskUnplug),
            Enqueued::Queued => {}
        }
        Some(tag)
    }

    /// [`Event::DiskUnplug`]: the plugged queue's first request starts.
    pub(super) fn on_disk_unplug(&mut self) {
        if let Some(done) = self.disk.unplug(self.now) {
            self.events.push(done, Event::DiskDone);
        }
    }

    /// [`Event::DiskDone`]: the request being served completed; the next one starts, and
    /// every submission merged into the finished one has its events now.
    pub(super) fn on_disk_done(&mut self) {
        let (tags, next) = self.disk.complete(self.now);
        if let Some(done) = next {
            self.events.push(done, Event::DiskDone);
        }
        for tag in tags {
            let entry = self.io_slab.entry(tag);
            let events = std::mem::take(&mut entry.events);
            let reported = entry.async_units > 0 || entry.sync;
            for e in events {
                self.events.push(self.now, e);
            }
            if reported {
                // after the pages' own events, so that frames are free when writers wake
                self.events.push(self.now, Event::IoDone(tag));
            } else {
                self.io_slab.remove(tag);
            }
        }
    }
}

impl Machine {
    /// The result's `disk_counters`: submissions the elevator merged into a queued
    /// request, times a writer waited on the write bound, and the most units of the
    /// bound (pages under Linux 2.2's rule, requests under FreeBSD 8.2's; 0 unbounded)
    /// in flight at once.
    pub(super) fn disk_counters(&self, stats: &DiskStats) -> Vec<(String, u64)> {
        [("disk_merged", stats.merged), ("write_waits", self.async_writes.waits), ("write_peak", self.async_writes.peak)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }
}
