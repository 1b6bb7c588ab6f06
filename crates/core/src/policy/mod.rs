//! Replacement policies: one trait, one file per policy.
//!
//! A policy decides victims; it never does I/O. Per-page metadata lives in dense arrays
//! indexed by [`PageId`] (no hash map on the hit path). The same policy objects serve
//! replay and, later, the timed system, where reclaim asks the policy for victims and
//! the memory manager applies mechanism rules around it.

mod arc;
mod car;
mod clock;
mod clock_pro;
mod eelru;
mod fifo;
mod lfu;
mod lirs;
mod list;
mod lru;
mod mru;
mod opt;
mod random;
#[cfg(test)]
mod testing;
mod two_q;

pub use arc::ArcCache;
pub use car::Car;
pub use clock::Clock;
pub use clock_pro::ClockPro;
pub use eelru::Eelru;
pub use fifo::Fifo;
pub use list::PageList;
pub use lfu::Lfu;
pub use lirs::Lirs;
pub use lru::Lru;
pub use mru::Mru;
pub use opt::{next_use_times, Opt, NEVER};
pub use random::RandomPolicy;
pub use two_q::TwoQ;

use crate::trace::PageId;
use crate::{Error, Result};

/// The replacement-policy interface. The caller owns residency: it calls `on_hit` for a
/// resident page; on a miss `on_miss`, then `select_victim` when a frame is needed (the
/// victim is removed from the policy's structures by that call), then `on_insert` after
/// loading the page.
/// `time` is the index of the current record in the stream (policies that need the
/// future, like OPT, use it to look up their pre-pass).
pub trait ReplacementPolicy: Send {
    fn name(&self) -> &'static str;
    /// Make per-page arrays cover ids `0..pages`.
    fn reserve_pages(&mut self, pages: usize);
    fn on_hit(&mut self, page: PageId, time: u64);
    /// A miss on `page`, before a victim is chosen for it (policies whose choice depends
    /// on the missing page, like ARC, prepare here).
    #[inline(always)]
    fn on_miss(&mut self, _page: PageId, _time: u64) {}
    fn on_insert(&mut self, page: PageId, time: u64);
    /// Choose and remove a victim among the resident pages. Called only when at least
    /// one page is resident.
    fn select_victim(&mut self, time: u64) -> PageId;
    /// A resident page leaves memory for another reason (freed, migrated, evicted by a
    /// mechanism rule); forget it.
    fn on_remove(&mut self, page: PageId);
    /// A hint that `page` will be referenced soon: policies whose per-page entries are
    /// touched on every reference prefetch them (see [`crate::hint`]).
    #[inline(always)]
    fn prefetch(&self, _page: PageId) {}
}

/// The policies a user can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    Lru,
    Fifo,
    Clock,
    Random,
    Opt,
    Arc,
    Mru,
    Lirs,
    TwoQ,
    Lfu,
    Car,
    ClockPro,
    Eelru,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 13] = [
        PolicyKind::Lru,
        PolicyKind::Fifo,
        PolicyKind::Clock,
        PolicyKind::Random,
        PolicyKind::Opt,
        PolicyKind::Arc,
        PolicyKind::Mru,
        PolicyKind::Lirs,
        PolicyKind::TwoQ,
        PolicyKind::Lfu,
        PolicyKind::Car,
        PolicyKind::ClockPro,
        PolicyKind::Eelru,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Lru => "lru",
            PolicyKind::Fifo => "fifo",
            PolicyKind::Clock => "clock",
            PolicyKind::Random => "random",
            PolicyKind::Opt => "opt",
            PolicyKind::Arc => "arc",
            PolicyKind::Mru => "mru",
            PolicyKind::Lirs => "lirs",
            PolicyKind::TwoQ => "2q",
            PolicyKind::Lfu => "lfu",
            PolicyKind::Car => "car",
            PolicyKind::ClockPro => "clock-pro",
            PolicyKind::Eelru => "eelru",
        }
    }

    /// Case-insensitive; an unknown name is an error listing the known ones.
    pub fn from_name(name: &str) -> Result<PolicyKind> {
        let lower = name.trim().to_ascii_lowercase();
        PolicyKind::ALL.iter().copied().find(|p| p.name() == lower).ok_or_else(|| {
            let known: Vec<&str> = PolicyKind::ALL.iter().map(|p| p.name()).collect();
            Error::invalid("policy", format!("unknown policy '{name}' (expected one of: {})", known.join(", ")))
        })
    }

    /// True for policies that need the whole future of the stream (a pre-pass).
    pub fn needs_future(self) -> bool {
        self == PolicyKind::Opt
    }
}
