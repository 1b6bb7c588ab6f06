//! CLOCK-Pro (Jiang, Chen and Zhang, "CLOCK-Pro: An Effective Improvement of the CLOCK
//! Replacement", USENIX ATC 2005, section 4), on the clock of the authors' simulator
//! (`clock-pro.c`, Song Jiang 2005, as distributed with Caffeine's simulator).
//!
//! LIRS's idea on CLOCK's hit path: a page is *hot* when its reuse distance is small,
//! *cold* otherwise; a cold page brought in is given a *test period*, and a reference
//! inside the test period proves a small reuse distance and makes it hot. One circular
//! list (the clock) holds the hot pages, the resident cold pages and the non-resident
//! cold pages in their test period (metadata only); each resident page has a reference
//! bit. A hit only sets the bit. With m frames, m_c is the target number of resident cold
//! pages and m - m_c the bound on hot pages; at most m non-resident pages are kept.
//!
//! # The clock
//!
//! The clock is a circular doubly linked list over dense ids (`fwd`, `back`); the three
//! hands turn the same way (`fwd`). The *list head* is a place on the circle: a page is
//! placed just after the head (in the hands' direction) and becomes the head, so the
//! pages placed last are the last a hand coming round reaches. A hand moving past a hot
//! page moves that page to the list head; moving past a cold page leaves it in place
//! (section 4.2, and `clock-pro.c`'s `run_HAND_hot`). A second ring (`cfwd`, `cback`)
//! links the resident cold pages in clock order, so that HAND_cold reaches the next
//! resident cold page in O(1) where the program steps over the hot pages between them
//! (about 19 of them per cold page at the default 5%); `cold_last` is the resident cold
//! page nearest behind the list head, after which a cold page placed at the head goes on
//! that ring. The tests check the ring against the clock after every reference.
//!
//! # Rules (the program's, with the paper's adaptation as a switch)
//!
//! * Start: the first `m - m_c` pages missed are hot, the next `m_c` cold in their test
//!   period (the program fills the clock this way; an all-cold start adapting m_c up from
//!   1 makes CLOCK-Pro behave as LRU on any loop longer than about twice memory).
//! * Hit: set the bit.
//! * Miss with memory full: HAND_cold evicts first. Then the page is a *re-reference* if
//!   it is still in the clock (a non-resident page in its test period: the hands moved by
//!   the eviction may have ended its test and removed it). A re-reference becomes hot,
//!   after HAND_hot has made room; any other page enters cold, in a new test period. Both
//!   enter at the list head with the bit clear.
//! * HAND_cold, on the resident cold page under it:
//!   - bit clear, or not in its test period: evicted (the program evicts a referenced cold
//!     page out of its test period; with `retest=yes`, the paper's rule, such a page
//!     instead gets its bit cleared and a new test period at the list head, and the hand
//!     moves on). A page in its test period stays in the clock, non-resident, else it
//!     leaves the clock. The hand stops at the next resident cold page; then HAND_test
//!     runs if more than m pages are non-resident.
//!   - bit set in its test period: it is promoted to hot at the list head once HAND_hot has
//!     made room, and the hand moves on.
//! * Making room for a promotion: HAND_hot runs while the hot pages would exceed m - m_c
//!   (with a fixed m_c this is exactly once per promotion). A run: on a hot page with the
//!   bit set, clear it; with the bit clear, demote it (cold, not in test); either way the
//!   page moves to the list head. On a cold page it moves on. The run ends at the first hot
//!   page after a demotion. Whenever HAND_hot has just passed the page under HAND_test,
//!   HAND_test takes a step. If a run passes the page being promoted before demoting
//!   anything, that page has lost its test period on the way and is not promoted: a
//!   resident page stays cold (and is evicted next), a faulting one enters as a new cold
//!   page. Two cases the program leaves to an endless loop are ours to decide: a target
//!   taken out of the clock during the run by HAND_test's bound on non-resident pages
//!   counts as passed, and a run that has demoted the last hot page ends there.
//! * HAND_test, one step: on a cold page, end its test period and clear its bit; a
//!   non-resident page leaves the clock. Then, while more than m pages are non-resident,
//!   it goes on (ending the tests of the resident cold pages it passes) to the next
//!   non-resident page, which leaves the clock.
//!
//! # Parameters ([`ClockProParams`], `clock-pro:cold=PCT,cold_min=N,adapt=yes|no,retest=yes|no`)
//!
//! * `cold`, `cold_min`: m_c starts at `max(cold_min, floor(cold / 100 * m))`, within
//!   `1..=m - 1` (the program: `MIN_COLD_ALLOC_RATE` 5.0, `LOWEST_COLD_ALLOC` 2).
//! * `adapt`: m_c adapts as in the paper (section 4.3): +1 when a cold page in its test
//!   period is referenced (HAND_cold finds its bit set, or it faults while still in the
//!   clock), -1 when a test period ends without a reference (HAND_test ends it on a
//!   non-resident page, or on a resident one whose bit is clear); within `cold_min..=m - 1`.
//!   `no`: m_c stays (the program as distributed, `ADAPTIVE_COLD_ALLOC` off).
//! * `retest`: the paper's rule for a referenced cold page out of its test period (above).
//! * Presets: `clock-pro` is `cold=5,cold_min=2,adapt=yes,retest=yes` (the paper's adaptive
//!   version on the program's clock); `clock-pro:authors` is
//!   `cold=5,cold_min=2,adapt=no,retest=no`, the program, whose faults it equals at every
//!   size the program accepts (5 frames or more; docs/policies.md).
//!
//! # Decisions of this implementation
//!
//! * One frame: the page in it is the victim (no clock; the program refuses fewer than 5).
//! * The program asserts that HAND_cold, moving on from an evicted page, next meets a
//!   resident cold page, and that no hand or head is on a page that leaves the clock; the
//!   ring gives the next resident cold page, and a page leaving the clock from under the
//!   head hands the head to the page behind it (the circle keeps its order).
//! * `on_remove` (a page leaving memory for another reason) forgets the page: it leaves
//!   the clock, a hand on it moves on. A miss with a free frame left by it on a page still
//!   in the clock forgets that page's test period and places it as a new page. If
//!   reclaim comes with no resident cold page, HAND_hot first demotes one.
//!
//! # Cost
//!
//! A hit is one store. HAND_cold takes O(1) per page it passes (ring). HAND_hot's steps
//! over hot pages clear bits set by hits or demote (one per run); its steps over cold
//! pages are at most the clock's length per revolution, as are HAND_test's, and HAND_test
//! only walks when more than half of the clock is non-resident.

use super::ReplacementPolicy;
use crate::trace::PageId;

const NIL: u32 = u32::MAX;

// Flags per page.
/// In the clock.
const IN_CLOCK: u8 = 1;
/// Resident (else a non-resident cold page in its test period).
const RESIDENT: u8 = 2;
/// Hot (else cold).
const HOT: u8 = 4;
/// In its test period (cold pages only).
const TEST: u8 = 8;
/// The reference bit (resident pages only).
const REF: u8 = 16;

/// CLOCK-Pro's cold allocation and rules (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockProParams {
    /// Percent of memory for resident cold pages at the start, truncated.
    pub cold_percent: f64,
    /// Least m_c.
    pub cold_min: u32,
    /// m_c adapts (the paper, section 4.3) rather than staying fixed (the program).
    pub adaptive: bool,
    /// A referenced cold page out of its test period gets a new test period (the paper)
    /// rather than being evicted (the program).
    pub retest: bool,
}

impl ClockProParams {
    /// The paper's adaptive CLOCK-Pro on the program's clock (`clock-pro`).
    pub const DEFAULT: ClockProParams = ClockProParams { cold_percent: 5.0, cold_min: 2, adaptive: true, retest: true };
    /// The authors' `clock-pro.c` as distributed (`clock-pro:authors`).
    pub const AUTHORS: ClockProParams = ClockProParams { cold_percent: 5.0, cold_min: 2, adaptive: false, retest: false };

    /// The starting m_c for `m >= 2` frames, and its bounds.
    fn cold_target(&self, m: usize) -> (usize, usize, usize) {
        let share = (self.cold_percent / 100.0 * m as f64) as usize;
        let max = m - 1;
        let min = (self.cold_min as usize).clamp(1, max);
        (share.max(self.cold_min as usize).clamp(1, max), min, max)
    }
}

#[derive(Debug)]
pub struct ClockPro {
    /// m, the number of frames.
    m: usize,
    /// Target number of resident cold pages, and its bounds.
    m_c: usize,
    mc_min: usize,
    mc_max: usize,
    adaptive: bool,
    retest: bool,
    /// The clock, in the hands' direction and back.
    fwd: Vec<u32>,
    back: Vec<u32>,
    /// The list head: the page placed last (or, after it left, the one behind it).
    head: u32,
    hand_hot: u32,
    hand_cold: u32,
    hand_test: u32,
    /// The resident cold pages in clock order, a ring.
    cfwd: Vec<u32>,
    cback: Vec<u32>,
    /// The resident cold page nearest behind the list head.
    cold_last: u32,
    cold: usize,
    resident: usize,
    hot: usize,
    nonresident: usize,
    flags: Vec<u8>,
    /// `select_victim` ran for the miss in progress.
    evicted: bool,
    /// With one frame: the page in it.
    single: u32,
}

impl ClockPro {
    /// The default CLOCK-Pro ([`ClockProParams::DEFAULT`]) for `frames` pages.
    pub fn new(frames: u32) -> Self {
        Self::with_params(frames, ClockProParams::DEFAULT)
    }

    pub fn with_params(frames: u32, params: ClockProParams) -> Self {
        let m = frames.max(1) as usize;
        let (m_c, mc_min, mc_max) = if m >= 2 { params.cold_target(m) } else { (1, 1, 1) };
        ClockPro {
            m,
            m_c,
            mc_min,
            mc_max,
            adaptive: params.adaptive,
            retest: params.retest,
            fwd: Vec::new(),
            back: Vec::new(),
            head: NIL,
            hand_hot: NIL,
            hand_cold: NIL,
            hand_test: NIL,
            cfwd: Vec::new(),
            cback: Vec::new(),
            cold_last: NIL,
            cold: 0,
            resident: 0,
            hot: 0,
            nonresident: 0,
            flags: Vec::new(),
            evicted: false,
            single: NIL,
        }
    }

    #[inline]
    fn has(&self, page: u32, flag: u8) -> bool {
        self.flags[page as usize] & flag != 0
    }

    fn grow_mc(&mut self) {
        if self.adaptive {
            self.m_c = (self.m_c + 1).min(self.mc_max);
        }
    }

    fn shrink_mc(&mut self) {
        if self.adaptive && self.m_c > self.mc_min {
            self.m_c -= 1;
        }
    }

    // ------------------------------------------------------------- the clock

    /// Places `page` (not in the clock) just after the list head; it becomes the head.
    fn place(&mut self, page: u32) {
        let p = page as usize;
        if self.head == NIL {
            self.fwd[p] = page;
            self.back[p] = page;
            self.hand_hot = page;
            self.hand_test = page;
        } else {
            let h = self.head as usize;
            let after = self.fwd[h];
            self.fwd[p] = after;
            self.back[p] = self.head;
            self.back[after as usize] = page;
            self.fwd[h] = page;
        }
        self.head = page;
        self.flags[p] |= IN_CLOCK;
    }

    /// Takes `page` out of the clock (its flags other than `IN_CLOCK` are the caller's).
    /// A head on it passes to the page behind, HAND_hot or HAND_test on it to the next
    /// page (the program asserts that neither happens); HAND_cold is the caller's.
    fn unlink(&mut self, page: u32) {
        let p = page as usize;
        debug_assert!(page != self.hand_cold, "HAND_cold on page {page} leaving the clock");
        let (f, b) = (self.fwd[p], self.back[p]);
        if self.hand_hot == page {
            self.hand_hot = f;
        }
        if self.hand_test == page {
            self.hand_test = f;
        }
        if f == page {
            self.head = NIL;
        } else {
            self.fwd[b as usize] = f;
            self.back[f as usize] = b;
            if self.head == page {
                self.head = b;
            }
        }
        self.flags[p] &= !IN_CLOCK;
    }

    /// Puts `page`, just placed at the list head as a resident cold page, on the ring.
    fn ring_place(&mut self, page: u32) {
        let p = page as usize;
        if self.cold_last == NIL {
            self.cfwd[p] = page;
            self.cback[p] = page;
        } else {
            let l = self.cold_last as usize;
            let after = self.cfwd[l];
            self.cfwd[p] = after;
            self.cback[p] = self.cold_last;
            self.cback[after as usize] = page;
            self.cfwd[l] = page;
        }
        self.cold_last = page;
        self.cold += 1;
        if self.hand_cold == NIL {
            self.hand_cold = page;
        }
    }

    /// Takes `page` off the ring of resident cold pages; returns the next one in clock
    /// order (NIL when none is left).
    fn ring_unlink(&mut self, page: u32) -> u32 {
        let p = page as usize;
        let (f, b) = (self.cfwd[p], self.cback[p]);
        self.cold -= 1;
        if f == page {
            self.cold_last = NIL;
            return NIL;
        }
        self.cfwd[b as usize] = f;
        self.cback[f as usize] = b;
        if self.cold_last == page {
            self.cold_last = b;
        }
        f
    }

    // ------------------------------------------------------------- the hands

    /// One run of HAND_hot on behalf of `target` (a cold page in its test period about to
    /// be promoted, or NIL). Returns (HAND_hot passed `target`, a hot page was demoted).
    fn run_hot_hand(&mut self, target: u32) -> (bool, bool) {
        let (mut done, mut matched, mut demoted) = (false, false, false);
        loop {
            if target != NIL && !matched && !self.has(target, IN_CLOCK) {
                // HAND_test ended the target's test period and took it out of the clock
                // (the bound on non-resident pages): it is passed
                done = true;
                matched = true;
            }
            let h = self.hand_hot;
            let hot = self.has(h, HOT);
            if done && (hot || self.hot == 0) {
                return (matched, demoted);
            }
            if hot {
                if self.has(h, REF) {
                    self.flags[h as usize] &= !REF;
                } else {
                    self.flags[h as usize] &= !HOT;
                    self.hot -= 1;
                    done = true;
                    demoted = true;
                }
                if self.hand_test == h {
                    self.hand_test = self.fwd[h as usize];
                }
                self.hand_hot = self.fwd[h as usize];
                self.unlink(h);
                self.place(h);
                if !self.has(h, HOT) {
                    self.ring_place(h);
                }
            } else {
                if h == target {
                    done = true;
                    matched = true;
                }
                self.hand_hot = self.fwd[h as usize];
            }
            if self.back[self.hand_hot as usize] == self.hand_test {
                self.test_hand_step();
            }
        }
    }

    /// Ends the test period of cold page `page` under HAND_test (clearing its bit); m_c
    /// shrinks when it had no reference.
    fn end_test(&mut self, page: u32) {
        let f = self.flags[page as usize];
        if f & TEST != 0 && (f & RESIDENT == 0 || f & REF == 0) {
            self.shrink_mc();
        }
        self.flags[page as usize] &= !(TEST | REF);
    }

    /// A non-resident page just behind HAND_test leaves the clock.
    fn drop_nonresident(&mut self, page: u32) {
        self.unlink(page);
        self.flags[page as usize] = 0;
        self.nonresident -= 1;
    }

    /// One step of HAND_test, then the bound on non-resident pages.
    fn test_hand_step(&mut self) {
        let t = self.hand_test;
        if !self.has(t, HOT) {
            self.end_test(t);
            self.hand_test = self.fwd[t as usize];
            if !self.has(t, RESIDENT) {
                self.drop_nonresident(t);
            }
        } else {
            self.hand_test = self.fwd[t as usize];
        }
        self.bound_nonresident();
    }

    /// While more than m pages are non-resident, HAND_test goes on to the next
    /// non-resident page (ending the tests of the resident cold pages on the way) and
    /// removes it.
    fn bound_nonresident(&mut self) {
        if self.nonresident > self.m {
            while self.has(self.hand_test, RESIDENT) {
                let t = self.hand_test;
                if !self.has(t, HOT) {
                    self.end_test(t);
                }
                self.hand_test = self.fwd[t as usize];
            }
            let t = self.hand_test;
            self.end_test(t);
            self.hand_test = self.fwd[t as usize];
            self.drop_nonresident(t);
        }
    }

    /// HAND_hot makes room for promoting `target` (runs while the hot pages would exceed
    /// m - m_c). Returns whether `target` is promoted: not when a run passed it before any
    /// demotion.
    fn room_for_promotion(&mut self, target: u32) -> bool {
        let runs = (self.hot + 1).saturating_sub(self.m - self.m_c);
        let mut demoted = false;
        for _ in 0..runs {
            let (matched, d) = self.run_hot_hand(target);
            demoted |= d;
            if matched {
                return demoted;
            }
        }
        true
    }

    /// HAND_cold: evicts a resident cold page and returns it.
    fn run_cold_hand(&mut self) -> PageId {
        loop {
            if self.cold == 0 {
                // only when a caller reclaims below full memory: demote a hot page first
                self.run_hot_hand(NIL);
            }
            let c = self.hand_cold;
            debug_assert!(self.has(c, RESIDENT) && !self.has(c, HOT), "HAND_cold on page {c}");
            let f = self.flags[c as usize];
            if f & REF == 0 || f & TEST == 0 {
                if f & REF != 0 && self.retest {
                    // the paper: a referenced cold page out of its test period gets a new
                    // one at the list head; the hand moves on
                    self.hand_cold = self.ring_unlink(c);
                    self.unlink(c);
                    self.place_cold(c);
                    continue;
                }
                let next = self.ring_unlink(c);
                self.hand_cold = next;
                self.flags[c as usize] &= !(RESIDENT | REF);
                self.resident -= 1;
                if f & TEST != 0 {
                    self.nonresident += 1;
                } else {
                    self.unlink(c);
                    self.flags[c as usize] = 0;
                }
                self.bound_nonresident();
                return c;
            }
            // referenced in its test period
            self.grow_mc();
            if self.room_for_promotion(c) {
                self.hand_cold = self.ring_unlink(c);
                self.unlink(c);
                self.flags[c as usize] = IN_CLOCK | RESIDENT | HOT;
                self.place(c);
                self.hot += 1;
            }
        }
    }

    /// Places `page` at the list head as a resident cold page in a new test period.
    fn place_cold(&mut self, page: u32) {
        self.flags[page as usize] = RESIDENT | TEST;
        self.place(page);
        self.ring_place(page);
    }

    fn place_hot(&mut self, page: u32) {
        self.flags[page as usize] = RESIDENT | HOT;
        self.place(page);
        self.hot += 1;
    }

    /// Takes a page in the clock (HAND_cold not on it) out of it and forgets it.
    fn forget(&mut self, page: u32) {
        self.unlink(page);
        if self.head == NIL {
            self.hand_hot = NIL;
            self.hand_test = NIL;
        }
        self.flags[page as usize] = 0;
    }

    /// The pages under HAND_hot, HAND_cold and HAND_test, and the list head.
    #[cfg(test)]
    fn hands(&self) -> (u32, u32, u32, u32) {
        (self.hand_hot, self.hand_cold, self.hand_test, self.head)
    }

    /// The clock from the page after the list head round to the head (the order in which
    /// a hand starting at the seam meets the pages).
    #[cfg(test)]
    fn clock_order(&self) -> Vec<u32> {
        let mut out = Vec::new();
        if self.head == NIL {
            return out;
        }
        let mut p = self.fwd[self.head as usize];
        loop {
            out.push(p);
            if p == self.head {
                return out;
            }
            p = self.fwd[p as usize];
        }
    }
}

impl ReplacementPolicy for ClockPro {
    fn name(&self) -> &'static str {
        "clock-pro"
    }

    fn reserve_pages(&mut self, pages: usize) {
        if pages > self.flags.len() {
            for v in [&mut self.fwd, &mut self.back, &mut self.cfwd, &mut self.cback] {
                v.resize(pages, NIL);
            }
            self.flags.resize(pages, 0);
        }
    }

    #[inline]
    fn on_hit(&mut self, page: PageId, _time: u64) {
        self.flags[page as usize] |= REF;
    }

    fn select_victim(&mut self, _time: u64) -> PageId {
        if self.m == 1 {
            let v = std::mem::replace(&mut self.single, NIL);
            assert!(v != NIL, "select_victim with no resident page");
            self.resident -= 1;
            return v;
        }
        assert!(self.resident > 0, "select_victim with no resident page");
        self.evicted = true;
        self.run_cold_hand()
    }

    fn on_insert(&mut self, page: PageId, _time: u64) {
        if self.m == 1 {
            self.single = page;
            self.resident += 1;
            return;
        }
        let in_clock = self.has(page, IN_CLOCK);
        if !std::mem::take(&mut self.evicted) {
            // a free frame: the start (or after on_remove)
            if in_clock {
                self.forget(page);
                self.nonresident -= 1;
            }
            let free = self.m - self.resident;
            self.resident += 1;
            if free > self.m_c {
                self.place_hot(page);
            } else {
                self.place_cold(page);
            }
            return;
        }
        self.resident += 1;
        if in_clock {
            // still in its test period after the eviction: a re-reference
            self.grow_mc();
            if self.room_for_promotion(page) {
                if self.has(page, IN_CLOCK) {
                    if self.hand_test == page {
                        self.hand_test = self.fwd[page as usize];
                    }
                    self.unlink(page);
                    self.nonresident -= 1;
                }
                self.place_hot(page);
                return;
            }
            // HAND_hot passed it before demoting anything: its test ended, it left the clock
        }
        self.place_cold(page);
    }

    fn on_remove(&mut self, page: PageId) {
        if self.m == 1 {
            if self.single == page {
                self.single = NIL;
                self.resident -= 1;
            }
            return;
        }
        let f = self.flags[page as usize];
        if f & RESIDENT == 0 {
            return;
        }
        if f & HOT != 0 {
            self.hot -= 1;
        } else {
            let next = self.ring_unlink(page);
            if self.hand_cold == page {
                self.hand_cold = next;
            }
        }
        self.resident -= 1;
        self.forget(page);
    }

    #[inline(always)]
    fn prefetch(&self, page: PageId) {
        crate::hint::prefetch(&self.flags, page as usize);
    }
}

#[cfg(test)]
mod tests;
