//! Last-dynamic (predictive-replacement.txt section 5.1): a last-value predictor that
//! predicts only while it has been right. Each page has a state, Sinit, Stransient or
//! Spred; at a fault, with Ldiff the difference of the page's last two lifetimes (in
//! faults to other pages):
//! - Sinit: |Ldiff| <= LVthresh moves to Stransient; no prediction.
//! - Stransient: |Ldiff| <= LVthresh moves to Spred and predicts L(i) + Ldiff;
//!   otherwise back to Sinit, no prediction.
//! - Spred: |Ldiff| <= LVthresh predicts L(i) + Ldiff; otherwise back to Stransient, no
//!   prediction.
//!
//! How the paper's predictor learns that it was wrong: only through Ldiff. Section 5.1
//! measures L "at the time of a page-fault (miss)" (L = C2 - C4, whatever ended the
//! residency), and the states move on "the difference (Ldiff) between the last two
//! observed lifetime distances"; it has no other signal. That is the default rule,
//! [`LastDynamicRule::Paper`]: a residency the Dead-List ended is measured like any other.
//! Two other rules, not the paper's, are offered (`last-dynamic:T,RULE`):
//! - [`LastDynamicRule::Censored`]: a residency the Dead-List cut short (the page came
//!   back while an exact LRU of the same memory would still hold it, see predictive.rs)
//!   is a failed prediction, as if Ldiff > LVthresh: its measured L is only a lower bound
//!   of its lifetime (a censored observation) and cannot confirm the prediction. A
//!   residency the Dead-List ended on a dead page is measured like any other.
//! - [`LastDynamicRule::EndedFails`] (pagelab 0.1's rule): every residency the Dead-List
//!   ended counts as a failed prediction, dead page or not. It caps the Dead-List's share
//!   of the victims near half: each predicted residency disables prediction for the next.
//!
//! Left open by the paper and decided here: Ldiff is signed, L(i) - L(i-1), compared by
//! its magnitude and added as it is (the prediction extrapolates the trend, floored at
//! 0); a page needs two measured lifetimes (its third fault) before Ldiff exists, and
//! stays in Sinit until then.

use super::predictive::{Ending, LifetimePredictor, Residency, NO_STATE};

const S_INIT: u64 = 0;
const S_TRANSIENT: u64 = 1;
const S_PRED: u64 = 2;
/// A page's state word: its last lifetime above two bits of state (a lifetime is
/// saturated at 2^62 - 1 faults).
const STATE_BITS: u32 = 2;
const MAX_LIFETIME: u64 = (1 << 62) - 1;

/// What a residency ended by the Dead-List tells Last-dynamic (see the module's doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LastDynamicRule {
    /// Section 5.1: only Ldiff of the measured lifetimes; no exception.
    #[default]
    Paper,
    /// A residency cut short (back while LRU would hold it) is a failed prediction.
    Censored,
    /// Every residency the Dead-List ended is a failed prediction (pagelab 0.1).
    EndedFails,
}

impl LastDynamicRule {
    pub const ALL: [LastDynamicRule; 3] = [LastDynamicRule::Paper, LastDynamicRule::Censored, LastDynamicRule::EndedFails];

    pub fn name(self) -> &'static str {
        match self {
            LastDynamicRule::Paper => "paper",
            LastDynamicRule::Censored => "censored",
            LastDynamicRule::EndedFails => "ended-fails",
        }
    }

    pub fn from_name(name: &str) -> Option<LastDynamicRule> {
        LastDynamicRule::ALL.into_iter().find(|r| r.name() == name)
    }

    /// True when the residency counts as a failed prediction whatever Ldiff is.
    fn fails(self, ending: Ending) -> bool {
        match self {
            LastDynamicRule::Paper => false,
            LastDynamicRule::Censored => ending == Ending::CutShort,
            LastDynamicRule::EndedFails => ending != Ending::Replaced,
        }
    }
}

#[derive(Debug)]
pub struct LastDynamic {
    threshold: u64,
    rule: LastDynamicRule,
}

impl LastDynamic {
    pub fn new(threshold: u64, rule: LastDynamicRule) -> Self {
        LastDynamic { threshold, rule }
    }
}

impl LifetimePredictor for LastDynamic {
    fn name(&self) -> &'static str {
        "last-dynamic"
    }
    fn predict(&mut self, word: &mut u64, last: Option<Residency>) -> Option<u64> {
        let last = last?;
        let lifetime = last.lifetime.min(MAX_LIFETIME);
        let (before, state) = (*word >> STATE_BITS, *word & ((1 << STATE_BITS) - 1));
        if *word == NO_STATE {
            *word = lifetime << STATE_BITS | S_INIT;
            return None;
        }
        let diff = lifetime as i64 - before as i64;
        let close = diff.unsigned_abs() <= self.threshold && !self.rule.fails(last.ending);
        let (state, predict) = match (state, close) {
            (S_INIT, true) => (S_TRANSIENT, false),
            (S_INIT, false) => (S_INIT, false),
            (S_TRANSIENT, true) => (S_PRED, true),
            (S_TRANSIENT, false) => (S_INIT, false),
            (_, true) => (S_PRED, true),
            (_, false) => (S_TRANSIENT, false),
        };
        *word = lifetime << STATE_BITS | state;
        predict.then(|| lifetime.saturating_add_signed(diff))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(lifetime: u64, ending: Ending) -> Option<Residency> {
        Some(Residency { lifetime, resident: lifetime, ending })
    }

    /// Feeds one page's lifetimes; returns the predictions (the first fault's included).
    fn feed(p: &mut LastDynamic, word: &mut u64, lifetimes: &[u64]) -> Vec<Option<u64>> {
        let mut out = vec![p.predict(word, None)];
        out.extend(lifetimes.iter().map(|&l| p.predict(word, measured(l, Ending::Replaced))));
        out
    }

    /// Section 5.1: the paper's predictor sees only the measured lifetimes. A residency
    /// the Dead-List ended at L = 0 confirms a prediction of 0 (Ldiff = 0), cut short or not.
    #[test]
    fn the_paper_rule_measures_every_residency_alike() {
        let mut p = LastDynamic::new(5, LastDynamicRule::Paper);
        let mut w = NO_STATE;
        assert_eq!(feed(&mut p, &mut w, &[0, 0, 0]), vec![None, None, None, Some(0)]);
        assert_eq!(p.predict(&mut w, measured(0, Ending::Dead)), Some(0));
        assert_eq!(p.predict(&mut w, measured(0, Ending::CutShort)), Some(0));
        assert_eq!(p.predict(&mut w, measured(90, Ending::CutShort)), None, "Ldiff 90: back to Stransient");
    }

    /// The censored rule: a residency cut short is a failed prediction; one that ended on
    /// a dead page is measured like any other.
    #[test]
    fn the_censored_rule_fails_only_residencies_cut_short() {
        let mut p = LastDynamic::new(5, LastDynamicRule::Censored);
        let mut w = NO_STATE;
        assert_eq!(feed(&mut p, &mut w, &[0, 0, 0]), vec![None, None, None, Some(0)]);
        assert_eq!(p.predict(&mut w, measured(0, Ending::Dead)), Some(0));
        assert_eq!(p.predict(&mut w, measured(0, Ending::CutShort)), None, "Spred -> Stransient");
        assert_eq!(p.predict(&mut w, measured(2, Ending::Replaced)), Some(4));
    }

    /// pagelab 0.1's rule: every residency the Dead-List ended confirms nothing.
    #[test]
    fn the_ended_fails_rule_fails_every_dead_list_eviction() {
        let mut p = LastDynamic::new(5, LastDynamicRule::EndedFails);
        let mut w = NO_STATE;
        assert_eq!(feed(&mut p, &mut w, &[0, 0, 0]), vec![None, None, None, Some(0)]);
        assert_eq!(p.predict(&mut w, measured(0, Ending::Dead)), None);
        // measured under LRU next: close to the last value, prediction again
        assert_eq!(p.predict(&mut w, Some(Residency { lifetime: 2, resident: 9, ending: Ending::Replaced })), Some(4));
        assert_eq!(p.predict(&mut w, measured(4, Ending::CutShort)), None);
    }

    #[test]
    fn rules_by_name() {
        for r in LastDynamicRule::ALL {
            assert_eq!(LastDynamicRule::from_name(r.name()), Some(r));
        }
        assert_eq!(LastDynamicRule::from_name("nosuch"), None);
        assert_eq!(LastDynamicRule::default(), LastDynamicRule::Paper);
    }

    #[test]
    fn predicts_only_after_two_close_differences() {
        let mut p = LastDynamic::new(5, LastDynamicRule::Paper);
        // lifetimes 10, 12, 14, 16: diffs 2, 2, 2 -> transient, pred (16), pred (18)
        assert_eq!(feed(&mut p, &mut NO_STATE.clone(), &[10, 12, 14, 16]), vec![None, None, None, Some(16), Some(18)]);
    }

    #[test]
    fn a_jump_disables_prediction_by_one_state() {
        let mut p = LastDynamic::new(5, LastDynamicRule::Paper);
        // to Spred (diffs 0, 0), jump (diff 90): Stransient, no prediction; close again: Spred
        let out = feed(&mut p, &mut NO_STATE.clone(), &[10, 10, 10, 100, 101]);
        assert_eq!(out, vec![None, None, None, Some(10), None, Some(102)]);
        // from Stransient a jump goes back to Sinit: two close diffs needed again
        let mut p = LastDynamic::new(5, LastDynamicRule::Paper);
        let out = feed(&mut p, &mut NO_STATE.clone(), &[10, 10, 50, 51, 52, 53]);
        assert_eq!(out, vec![None, None, None, None, None, Some(53), Some(54)]);
    }

    #[test]
    fn falling_lifetimes_extrapolate_down_to_zero() {
        let mut p = LastDynamic::new(10, LastDynamicRule::Paper);
        assert_eq!(feed(&mut p, &mut NO_STATE.clone(), &[20, 12, 4]), vec![None, None, None, Some(0)]);
    }

    #[test]
    fn threshold_zero_needs_equal_lifetimes() {
        let mut p = LastDynamic::new(0, LastDynamicRule::Paper);
        assert_eq!(feed(&mut p, &mut NO_STATE.clone(), &[7, 8, 9, 9, 9]), vec![None, None, None, None, None, Some(9)]);
    }
}
