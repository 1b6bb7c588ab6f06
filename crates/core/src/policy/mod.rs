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
mod dead_list;
mod dp_approx;
mod fifo;
mod last_dynamic;
mod last_static;
mod lfu;
mod lirs;
mod list;
mod lru;
mod mru;
mod opt;
mod opt_from_trace;
mod params;
mod pff;
mod predictive;
mod random;
mod seq;
mod shadow_lru;
#[cfg(test)]
pub(crate) mod testing;
mod two_q;
mod working_set;

pub use arc::ArcCache;
pub use car::Car;
pub use clock::Clock;
pub use clock_pro::{ClockPro, ClockProParams};
pub use eelru::Eelru;
pub use fifo::Fifo;
pub use list::{PageList, PageLists};
pub use lfu::Lfu;
pub use lirs::{Lirs, LirsParams};
pub use lru::Lru;
pub use mru::Mru;
pub use opt::{next_use_times, Foresight, Future, Opt, TimeSet, NEVER};
pub use opt_from_trace::{OptFromTrace, TraceFuture};
pub use random::RandomPolicy;
pub use two_q::TwoQ;
pub use working_set::WorkingSet;
pub use pff::Pff;
pub use seq::Seq;
pub use dead_list::DeadList;
pub use predictive::{Ending, LifetimePredictor, Predictive, Residency, NO_STATE};
pub use shadow_lru::ShadowedLru;
pub use last_static::LastStatic;
pub use last_dynamic::{LastDynamic, LastDynamicRule};
pub use dp_approx::DpApprox;

use crate::trace::PageId;
use crate::{Error, Result};
use params::ParamList;

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
    /// `n` more references to `page` right after the one just handled (a record's
    /// repeats), when the replay shows them to the policy ([`Repeats::Hits`]): by
    /// default `n` hits. Policies for which a hit just after a reference to the same page
    /// changes nothing, or whose count of them is one addition, say so faster.
    fn on_repeat(&mut self, page: PageId, time: u64, n: u32) {
        for _ in 0..n {
            self.on_hit(page, time);
        }
    }
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
    /// True for policies that want the virtual page number of a missing page
    /// ([`PolicyKind::needs_vpages`]); the caller then calls `on_miss_vpage` before
    /// `on_miss`.
    #[inline(always)]
    fn wants_vpages(&self) -> bool {
        false
    }
    #[inline(always)]
    fn on_miss_vpage(&mut self, _page: PageId, _vpage: u64) {}
    /// True for variable-size policies (Working Set, PFF): they are never asked for a
    /// victim; instead, after every reference, the caller drains `release` of the pages
    /// that leave memory by the policy's own rule.
    #[inline(always)]
    fn variable_size(&self) -> bool {
        false
    }
    /// The next page that leaves memory at `time` by the policy's rule, if any (called
    /// after the reference at `time` was handled; the page is forgotten by this call).
    #[inline(always)]
    fn release(&mut self, _time: u64) -> Option<PageId> {
        None
    }
    /// Policy-specific counts for the results (for example predictions made and how
    /// many were too short), as (name, count) pairs; none by default.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// OPT's keys for the records of the next batch, from the trace's checked
    /// next-access times (the batch's `next_keys`, [`TraceFuture`]), and the index of
    /// its first record, before the batch is replayed; only a policy that takes its
    /// future from the trace ([`OptFromTrace`]) reads them.
    fn tell(&mut self, _next_keys: &[(u32, u32)], _time: u64) {}
    /// True when a batch came without the keys it needed (a time proved wrong): the
    /// replay's results are then void, and it is run again without them.
    fn told_wrong(&self) -> bool {
        false
    }
}

/// Evaluates `$body` with `$p` bound to a new policy of kind `$kind` for `$frames`
/// frames, each arm with its concrete type (static dispatch inside `$body`). OPT takes
/// the stream's future from `$next_use` (`Option<&Foresight>`), which must be given for
/// it: a pre-pass's ([`Opt`]) or the trace's own times ([`OptFromTrace`]).
#[macro_export]
macro_rules! with_policy {
    ($kind:expr, $frames:expr, $seed:expr, $next_use:expr, |$p:ident| $body:expr) => {{
        use $crate::policy::*;
        let frames: u32 = $frames;
        match $kind {
            PolicyKind::Lru => { let $p = Lru::new(); $body }
            PolicyKind::Fifo => { let $p = Fifo::new(); $body }
            PolicyKind::Clock { referenced } => { let $p = Clock::with_insert_bit(referenced); $body }
            PolicyKind::Random => { let $p = RandomPolicy::new($seed); $body }
            PolicyKind::Arc { fractional_p } => { let $p = ArcCache::with_p(frames, fractional_p); $body }
            PolicyKind::Mru => { let $p = Mru::new(); $body }
            PolicyKind::Lirs(params) => { let $p = Lirs::with_params(frames, params); $body }
            PolicyKind::TwoQ => { let $p = TwoQ::new(frames); $body }
            PolicyKind::Lfu => { let $p = Lfu::new(); $body }
            PolicyKind::Car => { let $p = Car::new(frames); $body }
            PolicyKind::ClockPro(params) => { let $p = ClockPro::with_params(frames, params); $body }
            PolicyKind::Eelru => { let $p = Eelru::new(frames); $body }
            PolicyKind::Seq => { let $p = Seq::new(frames); $body }
            PolicyKind::WorkingSet { tau } => { let $p = WorkingSet::new(tau); $body }
            PolicyKind::Pff { interval } => { let $p = Pff::new(interval); $body }
            PolicyKind::LastStatic { k } => { let $p = Predictive::new(LastStatic::new(k), frames); $body }
            PolicyKind::LastDynamic { threshold, rule } => { let $p = Predictive::new(LastDynamic::new(threshold, rule), frames); $body }
            PolicyKind::DpApprox { a } => { let $p = Predictive::new(DpApprox::new(a), frames); $body }
            PolicyKind::Opt => {
                let next: Option<&Foresight> = $next_use;
                match next.expect("OPT needs its future") {
                    Foresight::PrePass(future) => { let $p = Opt::new(future.clone()); $body }
                    &Foresight::FromTrace { references } => { let $p = OptFromTrace::new(references); $body }
                }
            }
        }
    }};
}

/// A new policy of `kind` behind a trait object, for callers that are not per-reference
/// hot loops (analyses, the timed system's reclaim).
pub fn build(kind: PolicyKind, frames: u32, seed: u64, next_use: Option<&Foresight>) -> Box<dyn ReplacementPolicy> {
    crate::with_policy!(kind, frames, seed, next_use, |p| Box::new(p) as Box<dyn ReplacementPolicy>)
}

/// The policies a user can name. Some take a parameter, written `name:value` (for
/// example `last-static:-5`, `dp-approx:0.3`, `last-dynamic:60,censored`); some take
/// named parameters or a preset, `name:key=value,key=value` or `name:preset`
/// (`lirs:hir=2,hir_min=2`, `clock-pro:authors`); without one they take their default
/// (docs/policies.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PolicyKind {
    Lru,
    Fifo,
    /// CLOCK; `referenced`: a page enters with its reference bit set (pagelab) or clear
    /// (libCacheSim).
    Clock { referenced: bool },
    Random,
    Opt,
    /// ARC; `fractional_p`: the target size p is a real number (libCacheSim) or a whole
    /// number (pagelab).
    Arc { fractional_p: bool },
    Mru,
    Lirs(LirsParams),
    TwoQ,
    Lfu,
    Car,
    ClockPro(ClockProParams),
    Eelru,
    Seq,
    /// Working Set with window `tau` references (variable size).
    WorkingSet { tau: u64 },
    /// Page-Fault Frequency with critical inter-fault interval `interval` references
    /// (variable size).
    Pff { interval: u64 },
    /// Dead-List with the Last-static-k predictor (predictive-replacement.txt section 5.1).
    LastStatic { k: i64 },
    /// Dead-List with the Last-dynamic predictor, threshold LVthresh (section 5.1), and
    /// what a residency the Dead-List ended tells it (`rule`; the paper's by default).
    LastDynamic { threshold: u64, rule: LastDynamicRule },
    /// Dead-List with DP-Approx, exponential averaging of L+D with weight `a` (section 5.2).
    DpApprox { a: f64 },
}

/// What a policy sees of a run of references to one page (a record and its repeats).
///
/// pagelab folds a run into one record. By default the policy sees one reference, as a
/// kernel does: the hardware sets the page's reference bit on the first access and the
/// others leave no trace. The cache simulators and the policies' authors' programs read
/// one request a line, and each request after the first is a hit: on it CLOCK with
/// the bit clear on insertion sets the bit, ARC moves the page from T1 to T2, LIRS makes
/// a HIR page LIR, LFU counts it. `Hits` shows the policy those hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Repeats {
    #[default]
    Fold,
    Hits,
}

impl Repeats {
    pub fn name(self) -> &'static str {
        match self {
            Repeats::Fold => "fold",
            Repeats::Hits => "hits",
        }
    }

    pub fn from_name(text: &str) -> Result<Repeats> {
        match text.trim().to_ascii_lowercase().as_str() {
            "fold" => Ok(Repeats::Fold),
            "hits" => Ok(Repeats::Hits),
            _ => Err(Error::invalid("repeats", format!("expected 'fold' or 'hits', got '{}'", text.trim()))),
        }
    }
}

/// Defaults of the parameterised policies.
pub const DEFAULT_WS_TAU: u64 = 10_000;
pub const DEFAULT_PFF_INTERVAL: u64 = 1_000;
pub const DEFAULT_LAST_STATIC_K: i64 = 0;
/// Table 2's median threshold (and its most common: SP, LU, APSI).
pub const DEFAULT_LAST_DYNAMIC_THRESHOLD: u64 = 60;
/// Section 5.2: "we fix the value of the parameter a as 0.5".
pub const DEFAULT_DP_APPROX_A: f64 = 0.5;

impl PolicyKind {
    /// CLOCK as pagelab defaults it (the reference bit set on insertion).
    pub const CLOCK: PolicyKind = PolicyKind::Clock { referenced: true };
    /// ARC as pagelab defaults it (a whole-number target p).
    pub const ARC: PolicyKind = PolicyKind::Arc { fractional_p: false };

    /// Every policy, the parameterised ones at their defaults.
    pub const ALL: [PolicyKind; 19] = [
        PolicyKind::Lru,
        PolicyKind::Fifo,
        PolicyKind::CLOCK,
        PolicyKind::Random,
        PolicyKind::Opt,
        PolicyKind::ARC,
        PolicyKind::Mru,
        PolicyKind::Lirs(LirsParams::DEFAULT),
        PolicyKind::TwoQ,
        PolicyKind::Lfu,
        PolicyKind::Car,
        PolicyKind::ClockPro(ClockProParams::DEFAULT),
        PolicyKind::Eelru,
        PolicyKind::Seq,
        PolicyKind::WorkingSet { tau: DEFAULT_WS_TAU },
        PolicyKind::Pff { interval: DEFAULT_PFF_INTERVAL },
        PolicyKind::LastStatic { k: DEFAULT_LAST_STATIC_K },
        PolicyKind::LastDynamic { threshold: DEFAULT_LAST_DYNAMIC_THRESHOLD, rule: LastDynamicRule::Paper },
        PolicyKind::DpApprox { a: DEFAULT_DP_APPROX_A },
    ];

    /// The policy's name, without its parameter.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Lru => "lru",
            PolicyKind::Fifo => "fifo",
            PolicyKind::Clock { .. } => "clock",
            PolicyKind::Random => "random",
            PolicyKind::Opt => "opt",
            PolicyKind::Arc { .. } => "arc",
            PolicyKind::Mru => "mru",
            PolicyKind::Lirs(_) => "lirs",
            PolicyKind::TwoQ => "2q",
            PolicyKind::Lfu => "lfu",
            PolicyKind::Car => "car",
            PolicyKind::ClockPro(_) => "clock-pro",
            PolicyKind::Eelru => "eelru",
            PolicyKind::Seq => "seq",
            PolicyKind::WorkingSet { .. } => "ws",
            PolicyKind::Pff { .. } => "pff",
            PolicyKind::LastStatic { .. } => "last-static",
            PolicyKind::LastDynamic { .. } => "last-dynamic",
            PolicyKind::DpApprox { .. } => "dp-approx",
        }
    }

    /// The name with the parameter, as [`PolicyKind::from_name`] reads it back.
    pub fn label(self) -> String {
        match self {
            PolicyKind::WorkingSet { tau } => format!("ws:{tau}"),
            PolicyKind::Pff { interval } => format!("pff:{interval}"),
            PolicyKind::LastStatic { k } => format!("last-static:{k}"),
            PolicyKind::LastDynamic { threshold, rule: LastDynamicRule::Paper } => format!("last-dynamic:{threshold}"),
            PolicyKind::LastDynamic { threshold, rule } => format!("last-dynamic:{threshold},{}", rule.name()),
            PolicyKind::DpApprox { a } => format!("dp-approx:{a}"),
            PolicyKind::Clock { referenced: false } => "clock:libcachesim".to_string(),
            PolicyKind::Arc { fractional_p: true } => "arc:libcachesim".to_string(),
            PolicyKind::Lirs(p) if p == LirsParams::AUTHORS => "lirs:authors".to_string(),
            PolicyKind::Lirs(p) if p != LirsParams::DEFAULT => format!(
                "lirs:hir={},hir_min={},stack={},ghosts={}",
                p.hir_percent,
                p.hir_min,
                params::bound_text(p.stack),
                params::bound_text(p.ghosts)
            ),
            PolicyKind::ClockPro(p) if p == ClockProParams::AUTHORS => "clock-pro:authors".to_string(),
            PolicyKind::ClockPro(p) if p != ClockProParams::DEFAULT => format!(
                "clock-pro:cold={},cold_min={},adapt={},retest={}",
                p.cold_percent,
                p.cold_min,
                if p.adaptive { "yes" } else { "no" },
                if p.retest { "yes" } else { "no" }
            ),
            other => other.name().to_string(),
        }
    }

    /// Case-insensitive `name`, `name:parameter`, `name:key=value,...` or `name:preset`;
    /// an unknown name is an error listing the known ones, a bad parameter one naming
    /// the policy and the parameter and saying what it expects.
    pub fn from_name(text: &str) -> Result<PolicyKind> {
        let lower = text.trim().to_ascii_lowercase();
        let (name, param) = match lower.split_once(':') {
            Some((n, p)) => (n.trim(), Some(p.trim())),
            None => (lower.as_str(), None),
        };
        let text = text.trim();
        let kind = PolicyKind::ALL.iter().copied().find(|p| p.name() == name).ok_or_else(|| {
            let known: Vec<&str> = PolicyKind::ALL.iter().map(|p| p.name()).collect();
            Error::invalid("policy", format!("unknown policy '{text}' (expected one of: {})", known.join(", ")))
        })?;
        let Some(param) = param else { return Ok(kind) };
        let bad = |what: &str| Error::invalid("policy", format!("'{text}': expected {what} after '{name}:'"));
        let whole = |p: &str| p.parse::<u64>().ok().filter(|&v| v > 0);
        Ok(match kind {
            PolicyKind::WorkingSet { .. } => PolicyKind::WorkingSet { tau: whole(param).ok_or_else(|| bad("a window of 1 or more references"))? },
            PolicyKind::Pff { .. } => PolicyKind::Pff { interval: whole(param).ok_or_else(|| bad("an interval of 1 or more references"))? },
            PolicyKind::LastStatic { .. } => PolicyKind::LastStatic { k: param.parse().map_err(|_| bad("a whole number k (faults), e.g. -5"))? },
            PolicyKind::LastDynamic { .. } => {
                let what = "a threshold of 0 or more faults, then optionally a rule (,paper ,censored or ,ended-fails)";
                let (threshold, rule) = match param.split_once(',') {
                    Some((t, r)) => (t.trim(), LastDynamicRule::from_name(r.trim()).ok_or_else(|| bad(what))?),
                    None => (param, LastDynamicRule::Paper),
                };
                PolicyKind::LastDynamic { threshold: threshold.parse().map_err(|_| bad(what))?, rule }
            }
            PolicyKind::DpApprox { .. } => {
                let a: f64 = param.parse().map_err(|_| bad("a weight a with 0 < a <= 1"))?;
                if !(a > 0.0 && a <= 1.0) {
                    return Err(bad("a weight a with 0 < a <= 1"));
                }
                PolicyKind::DpApprox { a }
            }
            PolicyKind::Clock { .. } => match param {
                "libcachesim" => PolicyKind::Clock { referenced: false },
                _ => {
                    let p = ParamList::parse(text, "clock", param, &["bit"])?;
                    PolicyKind::Clock { referenced: p.switch("bit", true, ("set", "clear"))? }
                }
            },
            PolicyKind::Arc { .. } => match param {
                "libcachesim" => PolicyKind::Arc { fractional_p: true },
                _ => {
                    let p = ParamList::parse(text, "arc", param, &["p"])?;
                    PolicyKind::Arc { fractional_p: p.switch("p", false, ("float", "int"))? }
                }
            },
            PolicyKind::Lirs(_) => match param {
                "authors" => PolicyKind::Lirs(LirsParams::AUTHORS),
                _ => {
                    let p = ParamList::parse(text, "lirs", param, &["hir", "hir_min", "stack", "ghosts"])?;
                    let d = LirsParams::DEFAULT;
                    PolicyKind::Lirs(LirsParams {
                        hir_percent: p.real("hir", d.hir_percent, 0.0, 100.0, true, "a percentage of memory from 0 up to 100")?,
                        hir_min: p.whole("hir_min", d.hir_min, 1, u32::MAX, "a whole number of frames, 1 or more")?,
                        stack: p.bound("stack", d.stack, 1.0, "a multiple of memory of 1 or more, or none")?,
                        ghosts: p.bound("ghosts", d.ghosts, 0.0, "a multiple of memory of 0 or more, or none")?,
                    })
                }
            },
            PolicyKind::ClockPro(_) => match param {
                "authors" => PolicyKind::ClockPro(ClockProParams::AUTHORS),
                _ => {
                    let p = ParamList::parse(text, "clock-pro", param, &["cold", "cold_min", "adapt", "retest"])?;
                    let d = ClockProParams::DEFAULT;
                    PolicyKind::ClockPro(ClockProParams {
                        cold_percent: p.real("cold", d.cold_percent, 0.0, 100.0, true, "a percentage of memory from 0 up to 100")?,
                        cold_min: p.whole("cold_min", d.cold_min, 1, u32::MAX, "a whole number of frames, 1 or more")?,
                        adaptive: p.switch("adapt", d.adaptive, ("yes", "no"))?,
                        retest: p.switch("retest", d.retest, ("yes", "no"))?,
                    })
                }
            },
            _ => return Err(Error::invalid("policy", format!("'{text}': policy '{name}' takes no parameter"))),
        })
    }

    /// True for the presets named after a reference program (`clock:libcachesim`,
    /// `arc:libcachesim`, `lirs:authors`, `clock-pro:authors`): they equal the program,
    /// which sees every request, so they are shown a record's repeats as hits whatever
    /// the replay's [`Repeats`].
    pub fn is_reference_preset(self) -> bool {
        match self {
            PolicyKind::Clock { referenced } => !referenced,
            PolicyKind::Arc { fractional_p } => fractional_p,
            PolicyKind::Lirs(p) => p == LirsParams::AUTHORS,
            PolicyKind::ClockPro(p) => p == ClockProParams::AUTHORS,
            _ => false,
        }
    }

    /// What the policy sees of a record's repeats in a replay asked for `repeats`.
    pub fn repeats(self, repeats: Repeats) -> Repeats {
        if self.is_reference_preset() {
            Repeats::Hits
        } else {
            repeats
        }
    }

    /// True for policies that need the whole future of the stream (a pre-pass).
    pub fn needs_future(self) -> bool {
        self == PolicyKind::Opt
    }

    /// True for policies that decide their own memory size (Working Set, PFF): the
    /// replay runs them once, whatever memory sizes are asked for.
    pub fn variable_size(self) -> bool {
        matches!(self, PolicyKind::WorkingSet { .. } | PolicyKind::Pff { .. })
    }

    /// True for policies that need the virtual page numbers, not only dense ids (SEQ
    /// detects runs of faults to consecutive addresses).
    pub fn needs_vpages(self) -> bool {
        self == PolicyKind::Seq
    }
}
