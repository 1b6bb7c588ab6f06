//! The nodes' memory modules as servers (numa-page-migration.txt sections 1.1 and 5.3:
//! "contention (lock, memory, and network)"): on the BBN Butterfly every word that a
//! processor, a remote processor through the switch, or a daemon reads or writes in a
//! node's memory is served by that node's memory module (and its switch port), one word
//! at a time. Each module is a deterministic first-come-first-served server that is busy
//! `word_ns` per word.
//!
//! Requests reach a module in simulated-time order, because the machine runs the actor
//! furthest behind first and every request is made at the time of the step that makes it:
//! a processor's shared reference asks the page's module for one word when it is issued;
//! a daemon's examination asks the entry copy's module for four words (lock, read, write
//! back, unlock: the derivation of `examine_ns`). Transfers that spread over time (a
//! migration's page copy: each word read at the source and written at the destination;
//! the entry updates on every node) are *streams*: `words` requests at `from`,
//! `from + period`, ..., entered into the queue lazily when a later request reaches the
//! module (or at their own times, whichever is first in the queue), so they interleave
//! with the processors' references word by word. A stream's own progress is not slowed
//! by the queue (the migration's duration stays its fixed cost): the module time it takes
//! is what the others wait for.
//!
//! Flat arrays indexed by node; a module's streams are a short list (at most a few
//! migrations in flight per node).

/// Words of one examination or update of an entry copy: lock, read, write back, unlock
/// (the derivation of the default `examine_ns` and `pte_update_ns`).
pub const ENTRY_WORDS: u64 = 4;

/// What a migration costs: copying the page (`words` 4-byte words in `copy_ns`), then
/// updating each node's copy of its entry (`pte_ns` each); `hold_ns`, the hold of every
/// copy of the page's entry, is the copy and every update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MigrationCost {
    pub copy_ns: u64,
    pub pte_ns: u64,
    pub words: u64,
    pub hold_ns: u64,
}

impl MigrationCost {
    pub fn new(copy_ns_per_byte: f64, pte_update_ns: f64, page_size: u64, nodes: usize) -> MigrationCost {
        MigrationCost {
            copy_ns: (copy_ns_per_byte * page_size as f64).round() as u64,
            pte_ns: pte_update_ns.round() as u64,
            words: (page_size / 4).max(1),
            hold_ns: (copy_ns_per_byte * page_size as f64 + pte_update_ns * nodes as f64).round() as u64,
        }
    }
}

/// A transfer of `left` words to one module, one word every `period` ns from `next`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stream {
    next: u64,
    period: u64,
    left: u64,
}

pub struct Memory {
    word_ns: u64,
    /// Each module's end of service of the last word it accepted.
    busy_until: Vec<u64>,
    streams: Vec<Vec<Stream>>,
}

impl Memory {
    pub fn new(nodes: usize, word_ns: u64) -> Memory {
        Memory { word_ns, busy_until: vec![0; nodes], streams: vec![Vec::new(); nodes] }
    }

    /// Serves every stream word of `node` requested at or before `at`, in time order.
    fn drain(&mut self, node: usize, at: u64) {
        let streams = &mut self.streams[node];
        if streams.is_empty() {
            return;
        }
        let busy = &mut self.busy_until[node];
        loop {
            // the earliest pending word at or before `at` (ties: the stream entered first)
            let mut first = usize::MAX;
            let mut when = u64::MAX;
            for (i, s) in streams.iter().enumerate() {
                if s.next <= at && s.next < when {
                    when = s.next;
                    first = i;
                }
            }
            if first == usize::MAX {
                break;
            }
            *busy = (*busy).max(when).saturating_add(self.word_ns);
            let s = &mut streams[first];
            s.left -= 1;
            s.next = s.next.saturating_add(s.period);
            if s.left == 0 {
                streams.swap_remove(first);
            }
        }
    }

    /// `words` words asked of `node`'s module at `at`, served together after every word
    /// asked before; returns the wait before service starts (0 when the module is idle).
    #[inline]
    pub fn request(&mut self, node: usize, at: u64, words: u64) -> u64 {
        self.drain(node, at);
        let busy = &mut self.busy_until[node];
        let start = (*busy).max(at);
        *busy = start.saturating_add(words.saturating_mul(self.word_ns));
        start - at
    }

    /// `words` words to `node`'s module, one every `period` ns from `from`.
    pub fn stream(&mut self, node: usize, from: u64, period: u64, words: u64) {
        if words > 0 && self.word_ns > 0 {
            self.streams[node].push(Stream { next: from, period, left: words });
        }
    }

    /// The module time of a migration whose hold of the page's entries starts at
    /// `start`: the copy's words read from `src` and written to `dst`, one word every
    /// `cost.copy_ns / words`; then each node's entry copy updated (four words: lock,
    /// write, write, unlock) in node order, `cost.pte_ns` each.
    pub fn migration(&mut self, src: usize, dst: usize, start: u64, cost: &MigrationCost) {
        let period = cost.copy_ns / cost.words.max(1);
        self.stream(src, start, period, cost.words);
        self.stream(dst, start, period, cost.words);
        let updates = start.saturating_add(cost.copy_ns);
        for node in 0..self.busy_until.len() {
            self.stream(node, updates.saturating_add(node as u64 * cost.pte_ns), cost.pte_ns / 4, ENTRY_WORDS);
        }
    }

    /// The module's end of service of the words it has accepted (streams up to `at`).
    pub fn busy_until(&mut self, node: usize, at: u64) -> u64 {
        self.drain(node, at);
        self.busy_until[node]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_queue_first_come_first_served() {
        let mut m = Memory::new(2, 100);
        assert_eq!(m.request(0, 1000, 1), 0);
        assert_eq!(m.request(0, 1050, 1), 50, "waits for the word in service");
        assert_eq!(m.request(0, 1050, 4), 150, "and behind the one queued before it");
        assert_eq!(m.request(1, 1050, 1), 0, "another module is free");
        assert_eq!(m.busy_until(0, 0), 1600);
        assert_eq!(m.request(0, 5000, 1), 0, "an idle module serves at once");
    }

    #[test]
    fn streams_interleave_word_by_word() {
        // a copy of 4 words, one every 1000 ns from 0, each 100 ns of service
        let mut m = Memory::new(1, 100);
        m.stream(0, 0, 1000, 4);
        // a reference between two words finds the module free
        assert_eq!(m.request(0, 1500, 1), 0);
        // one at the same time as a word waits for it (the stream's word came first)
        assert_eq!(m.request(0, 2000, 1), 100);
        // after the stream every word is served: 4 stream words and 2 requests
        assert_eq!(m.busy_until(0, 10_000), 3100);
        assert!(m.streams[0].is_empty());
    }

    #[test]
    fn two_streams_are_served_in_time_order() {
        let mut m = Memory::new(1, 10);
        m.stream(0, 5, 100, 2); // words at 5, 105
        m.stream(0, 0, 100, 2); // words at 0, 100
        // at 103: words at 0, 5, 100 are served (0-10, 10-20, 100-110)
        assert_eq!(m.request(0, 103, 1), 7);
        assert_eq!(m.busy_until(0, 103), 120);
        assert_eq!(m.busy_until(0, 1000), 130, "the word at 105 after the request");
    }
}
