//! The swap token (token-ordered-lru.txt sections 5.2 and 5.3), and the later Linux
//! 2.6.20 swap token (mm/thrash.c) as a second policy to compare.
//!
//! The token protects one process's pages from reclaim so that it can establish its
//! working set while the others page: reclaim skips the holder's pages ([`Token::protected`]).
//! The section 5.3 limits are scaled to the run by [`super::token_defaults`].

use super::config::{TokenConfig, TokenPolicyKind, TokenProtect};
use super::token_defaults::TokenLimits;

/// What happened to the token, for the result's event list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenEvent {
    pub t_ns: u64,
    pub event: &'static str,
    pub process: u16,
}

pub struct Token {
    cfg: TokenConfig,
    limits: TokenLimits,
    holder: Option<u16>,
    grabbed_at: u64,
    /// Section 5.3: a process marked token-unsuitable may not take the token until then.
    unsuitable_until: Vec<u64>,
    /// Exception-handler pages taken from the holder in the current window.
    self_takes: u64,
    self_take_window_start: u64,
    /// Linux 2.6.20: global fault counter and per-process priority state.
    global_faults: u64,
    priority: Vec<i64>,
    faultstamp: Vec<u64>,
    last_interval: Vec<u64>,
    pub events: Vec<TokenEvent>,
}

impl Token {
    /// A token enforcing `limits` (token_defaults.rs resolves them from the configuration).
    pub fn new(cfg: TokenConfig, limits: TokenLimits, processes: usize) -> Self {
        Token {
            cfg,
            limits,
            holder: None,
            grabbed_at: 0,
            unsuitable_until: vec![0; processes],
            self_takes: 0,
            self_take_window_start: 0,
            global_faults: 0,
            priority: vec![0; processes],
            faultstamp: vec![0; processes],
            last_interval: vec![0; processes],
            events: Vec::new(),
        }
    }

    pub fn enabled(&self) -> bool {
        self.cfg.policy != TokenPolicyKind::None
    }

    pub fn holder(&self) -> Option<u16> {
        self.holder
    }

    /// The limits in force.
    pub fn limits(&self) -> TokenLimits {
        self.limits
    }

    /// Sets the limits (once the dedicated run times are known).
    pub fn set_limits(&mut self, limits: TokenLimits) {
        self.limits = limits;
    }

    /// The process whose pages reclaim must spare now, if any, when `reclaiming` (None:
    /// kswapd) reclaims. Paper (section 5.2): the holder, but only while it has unresolved
    /// faults (`swapping[holder]`), its own reclaim included. Linux 2.6.20 with
    /// `protect = "in_fault"` (mm/rmap.c `page_referenced_one`): the holder while it is
    /// inside a page fault (`in_fault`), unless it is the one reclaiming; with
    /// `protect = "always"`: the holder, always.
    #[inline]
    pub fn protected(&self, swapping: impl Fn(u16) -> bool, in_fault: impl Fn(u16) -> bool, reclaiming: Option<u16>) -> Option<u16> {
        let h = self.holder?;
        match self.cfg.policy {
            TokenPolicyKind::None => None,
            TokenPolicyKind::Paper => swapping(h).then_some(h),
            TokenPolicyKind::Linux2620 => match self.cfg.protect {
                TokenProtect::Always => Some(h),
                TokenProtect::InFault => (in_fault(h) && reclaiming != Some(h)).then_some(h),
            },
        }
    }

    /// Linux 2.6.20 protects by pretending the holder's pages were referenced (no
    /// exception handler takes them); the paper's token skips the holder and falls back
    /// on it when nothing else can go.
    pub fn pretends_referenced(&self) -> bool {
        self.cfg.policy == TokenPolicyKind::Linux2620
    }

    /// Reclaim reached priority 0: Linux 2.6.20 takes the token away (mm/vmscan.c
    /// `if (!priority) disable_swap_token()`, with `disable_swap_token` =
    /// `put_swap_token(swap_token_mm)`, which leaves it free). Returns the release.
    pub fn on_priority_zero(&mut self, now: u64) -> Option<(u16, u64)> {
        if self.cfg.policy != TokenPolicyKind::Linux2620 || !self.cfg.disable_at_priority_zero {
            return None;
        }
        self.release(now, "disable")
    }

    /// A fault on a page still in the swap cache (no disk read): the paper's program asks
    /// for the token "before invoking do_swap_page()" (section 5.2), which handles these
    /// faults too; Linux 2.6.20's `do_swap_page` calls `grab_swap_token` only when the
    /// page is not in the swap cache.
    pub fn on_swap_cache_fault(&mut self, p: u16, now: u64, short: bool, has_priority: impl Fn(u16) -> bool) -> (bool, Option<(u16, u64)>) {
        if self.cfg.policy != TokenPolicyKind::Paper {
            return (false, None);
        }
        self.on_major_fault(p, now, short, has_priority)
    }

    fn grab(&mut self, p: u16, now: u64, event: &'static str) -> bool {
        self.holder = Some(p);
        self.grabbed_at = now;
        self.self_takes = 0;
        self.self_take_window_start = now;
        self.events.push(TokenEvent { t_ns: now, event, process: p });
        true
    }

    fn release(&mut self, now: u64, event: &'static str) -> Option<(u16, u64)> {
        let h = self.holder.take()?;
        self.events.push(TokenEvent { t_ns: now, event, process: h });
        Some((h, now - self.grabbed_at))
    }

    fn mark_unsuitable(&mut self, p: u16, now: u64) {
        self.unsuitable_until[p as usize] = now.saturating_add(self.limits.unsuitable_ns);
    }

    /// A major fault of `p`, before its page-in. `short`: memory is short (the token is
    /// only wanted then, section 5.2). `has_priority`: others are blocked on the process
    /// (section 5.3). Returns (newly grabbed, the previous holder and how long it held).
    pub fn on_major_fault(&mut self, p: u16, now: u64, short: bool, has_priority: impl Fn(u16) -> bool) -> (bool, Option<(u16, u64)>) {
        match self.cfg.policy {
            TokenPolicyKind::None => (false, None),
            TokenPolicyKind::Paper => {
                if !short || self.holder == Some(p) || now < self.unsuitable_until[p as usize] {
                    return (false, None);
                }
                match self.holder {
                    None => (self.grab(p, now, "grab"), None),
                    Some(h) if has_priority(p) && !has_priority(h) => {
                        let prev = self.release(now, "handover");
                        (self.grab(p, now, "grab"), prev)
                    }
                    Some(_) => (false, None),
                }
            }
            TokenPolicyKind::Linux2620 => self.linux2620_fault(p, now),
        }
    }

    /// Linux 2.6.20 grab_swap_token(): a global fault counter; a faulting process's
    /// priority rises by one when its fault interval shrank, else falls by one; it takes
    /// the token (priority + 2) when the token is free or its priority exceeds the
    /// holder's; the holder's own faults add 2.
    fn linux2620_fault(&mut self, p: u16, now: u64) -> (bool, Option<(u16, u64)>) {
        let i = p as usize;
        self.global_faults += 1;
        let interval = self.global_faults - self.faultstamp[i];
        let mut result = (false, None);
        match self.holder {
            None => {
                self.priority[i] += 2;
                result = (self.grab(p, now, "grab"), None);
            }
            Some(h) if h == p => self.priority[i] += 2,
            Some(h) => {
                if interval < self.last_interval[i] {
                    self.priority[i] += 1;
                } else if self.priority[i] > 0 {
                    self.priority[i] -= 1;
                }
                if self.priority[i] > self.priority[h as usize] {
                    self.priority[i] += 2;
                    let prev = self.release(now, "handover");
                    result = (self.grab(p, now, "grab"), prev);
                }
            }
        }
        self.faultstamp[i] = self.global_faults;
        self.last_interval[i] = interval;
        result
    }

    /// Reclaim had to take a page from the holder itself (the exception handler).
    /// Section 5.3: a holder that does so more than `self_take_limit` times within a
    /// window returns the token and is marked token-unsuitable. Returns the release.
    pub fn on_self_take(&mut self, now: u64) -> Option<(u16, u64)> {
        if self.cfg.policy != TokenPolicyKind::Paper {
            return None;
        }
        let h = self.holder?;
        if now - self.self_take_window_start > self.limits.window_ns {
            self.self_take_window_start = now;
            self.self_takes = 0;
        }
        self.self_takes += 1;
        if self.self_takes > self.limits.self_take_limit {
            self.mark_unsuitable(h, now);
            return self.release(now, "abuse");
        }
        None
    }

    /// Periodic checks (section 5.3): a holder past the holding-time threshold returns
    /// the token and is marked token-unsuitable.
    pub fn tick(&mut self, now: u64) -> Option<(u16, u64)> {
        if self.cfg.policy != TokenPolicyKind::Paper {
            return None;
        }
        let h = self.holder?;
        if now - self.grabbed_at >= self.limits.hold_ns {
            self.mark_unsuitable(h, now);
            return self.release(now, "timeout");
        }
        None
    }

    /// The holder exits (Linux put_swap_token on exit; the paper's token is released too).
    pub fn on_exit(&mut self, p: u16, now: u64) -> Option<(u16, u64)> {
        if self.holder == Some(p) {
            self.release(now, "release")
        } else {
            None
        }
    }

    pub fn is_unsuitable(&self, p: u16, now: u64) -> bool {
        now < self.unsuitable_until[p as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(cfg: &TokenConfig) -> TokenLimits {
        crate::system::token_defaults::token_limits(cfg, None, &Default::default(), 4096)
    }

    fn token(cfg: TokenConfig, processes: usize) -> Token {
        let l = limits(&cfg);
        Token::new(cfg, l, processes)
    }

    fn paper() -> Token {
        let cfg = TokenConfig { policy: TokenPolicyKind::Paper, hold_limit_s: Some(10.0), unsuitable_s: Some(5.0), self_take_limit: Some(3), self_take_window_s: 1.0, ..Default::default() };
        token(cfg, 3)
    }

    #[test]
    fn grab_only_when_short_and_free() {
        let mut t = paper();
        assert_eq!(t.on_major_fault(0, 1, false, |_| false), (false, None));
        assert_eq!(t.holder(), None);
        assert!(t.on_major_fault(0, 2, true, |_| false).0);
        assert!(!t.on_major_fault(1, 3, true, |_| false).0);
        assert_eq!(t.holder(), Some(0));
    }

    #[test]
    fn protection_needs_swapping_status_in_the_paper_policy() {
        let mut t = paper();
        t.on_major_fault(1, 0, true, |_| false);
        assert_eq!(t.protected(|_| true, |_| false, None), Some(1));
        assert_eq!(t.protected(|_| false, |_| true, None), None);
        // the paper's holder is skipped in its own reclaim too
        assert_eq!(t.protected(|_| true, |_| false, Some(1)), Some(1));
        let mut l = token(TokenConfig { policy: TokenPolicyKind::Linux2620, protect: TokenProtect::Always, ..Default::default() }, 2);
        l.on_major_fault(1, 0, true, |_| false);
        assert_eq!(l.protected(|_| false, |_| false, Some(1)), Some(1));
    }

    /// Linux 2.6.20 mm/rmap.c page_referenced_one: the holder's pages count as referenced
    /// only while its mmap_sem is held (it is inside a page fault) and only for another
    /// reclaimer (mm != current->mm).
    #[test]
    fn linux2620_protects_the_holder_only_inside_its_faults() {
        let mut l = token(TokenConfig { policy: TokenPolicyKind::Linux2620, ..Default::default() }, 2);
        l.on_major_fault(1, 0, true, |_| false);
        assert_eq!(l.protected(|_| true, |_| false, None), None, "running: not protected");
        assert_eq!(l.protected(|_| false, |p| p == 1, None), Some(1), "in a fault: protected from kswapd");
        assert_eq!(l.protected(|_| false, |p| p == 1, Some(0)), Some(1), "... and from another process's reclaim");
        assert_eq!(l.protected(|_| false, |p| p == 1, Some(1)), None, "not from its own reclaim");
        assert!(l.pretends_referenced());
    }

    /// Linux 2.6.20 mm/vmscan.c: reclaim at priority 0 disables the token; the paper's
    /// token and a run with disable_at_priority_zero = false keep it.
    #[test]
    fn priority_zero_disables_only_the_linux2620_token() {
        let mut l = token(TokenConfig { policy: TokenPolicyKind::Linux2620, ..Default::default() }, 2);
        l.on_major_fault(1, 0, true, |_| false);
        assert_eq!(l.on_priority_zero(5), Some((1, 5)));
        assert_eq!(l.holder(), None);
        assert_eq!(l.events.last().unwrap().event, "disable");
        // free again: the next fault takes it
        assert!(l.on_major_fault(0, 6, true, |_| false).0);
        let mut keep = token(TokenConfig { policy: TokenPolicyKind::Linux2620, disable_at_priority_zero: false, ..Default::default() }, 2);
        keep.on_major_fault(1, 0, true, |_| false);
        assert_eq!(keep.on_priority_zero(5), None);
        let mut p = paper();
        p.on_major_fault(1, 0, true, |_| false);
        assert_eq!(p.on_priority_zero(5), None);
        assert_eq!(p.holder(), Some(1));
    }

    #[test]
    fn abuse_returns_the_token_and_marks_unsuitable() {
        let mut t = paper();
        t.on_major_fault(0, 0, true, |_| false);
        for _ in 0..3 {
            assert_eq!(t.on_self_take(100), None);
        }
        assert_eq!(t.on_self_take(200), Some((0, 200)));
        assert_eq!(t.holder(), None);
        assert!(t.is_unsuitable(0, 1_000));
        assert!(!t.on_major_fault(0, 1_000, true, |_| false).0);
        // the mark expires after unsuitable_s
        assert!(t.on_major_fault(0, 200 + 5_000_000_000, true, |_| false).0);
    }

    #[test]
    fn self_takes_spread_over_windows_are_no_abuse() {
        let mut t = paper();
        t.on_major_fault(0, 0, true, |_| false);
        for k in 0..20u64 {
            assert_eq!(t.on_self_take(k * 600_000_000), None, "take {k}");
        }
        assert_eq!(t.holder(), Some(0));
    }

    #[test]
    fn timeout_after_the_holding_limit() {
        let mut t = paper();
        t.on_major_fault(2, 1, true, |_| false);
        assert_eq!(t.tick(5_000_000_000), None);
        assert_eq!(t.tick(10_000_000_001), Some((2, 10_000_000_000)));
        assert!(t.is_unsuitable(2, 10_000_000_002));
        assert!(t.on_major_fault(1, 10_000_000_003, true, |_| false).0);
    }

    #[test]
    fn priority_process_takes_precedence() {
        let mut t = paper();
        t.on_major_fault(0, 0, true, |_| false);
        let prio = |p: u16| p == 1;
        let (grabbed, prev) = t.on_major_fault(1, 7, true, prio);
        assert!(grabbed);
        assert_eq!(prev, Some((0, 7)));
        assert_eq!(t.holder(), Some(1));
        // a non-priority process cannot take it back
        assert!(!t.on_major_fault(0, 8, true, prio).0);
    }

    /// Linux 2.6.20 grab_swap_token(): the global fault counter, +2 on grab and on the
    /// holder's own faults, +1 for a shrinking fault interval, -1 otherwise (not below
    /// 0), hand-over when the caller's priority exceeds the holder's.
    #[test]
    fn linux2620_priorities_and_handover() {
        let mut t = token(TokenConfig { policy: TokenPolicyKind::Linux2620, ..Default::default() }, 2);
        assert!(t.on_major_fault(0, 0, true, |_| false).0); // free token: p0 grabs, prio 2
        assert_eq!(t.priority[0], 2);
        t.on_major_fault(0, 1, true, |_| false); // the holder's own fault: +2
        assert_eq!(t.priority[0], 4);
        // p1: first fault, interval 3 (global faults 3 - stamp 0) vs last 0: not shorter
        t.on_major_fault(1, 2, true, |_| false);
        assert_eq!(t.priority[1], 0);
        t.priority[0] = 1; // let the holder's priority be low
        // p1 again: interval 1 < 3: +1 -> 1, not above the holder's 1
        t.on_major_fault(1, 3, true, |_| false);
        assert_eq!((t.priority[1], t.holder()), (1, Some(0)));
        // p0 faults (holder, +2 -> 3), then p1 twice: intervals 2 (longer: -1 -> 0), 1 (+1 -> 1)
        t.on_major_fault(0, 4, true, |_| false);
        t.on_major_fault(1, 5, true, |_| false);
        assert_eq!(t.priority[1], 0);
        t.priority[0] = 0;
        t.on_major_fault(1, 6, true, |_| false); // interval 1 < 2: +1 -> 1 > 0: hand-over, +2
        assert_eq!(t.holder(), Some(1));
        assert_eq!(t.priority[1], 3);
        assert_eq!(t.events.iter().map(|e| e.event).collect::<Vec<_>>(), vec!["grab", "handover", "grab"]);
        // no holding-time limit and no abuse detection in this policy
        assert_eq!(t.tick(1 << 60), None);
        assert_eq!(t.on_self_take(7), None);
    }
}
