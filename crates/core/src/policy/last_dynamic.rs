//! Last-dynamic (predictive-replacement.txt section 5.1): a last-value predictor that
//! predicts only while it has been right. Each page has a state, Sinit, Stransient or
//! Spred; at a fault, with Ldiff the difference of the page's last two lifetimes (in
//! faults to other pages):
//! - Sinit: |Ldiff| <= LVthresh moves to Stransient; no prediction.
//! - Stransient: |Ldiff| <= LVthresh moves to Spred and predicts L(i) + Ldiff;
//!   otherwise back to Sinit, no prediction.
//! - Spred: |Ldiff| <= LVthresh predicts L(i) + Ldiff; otherwise back to Stransient, no
//!   prediction.
//! A residency the Dead-List cut short at its predicted death (its page evicted there)
//! counts as Ldiff > LVthresh: its lifetime is known only up to the eviction, so it
//! cannot confirm the prediction, and taken as a measurement it would confirm any
//! prediction of L = 0 forever (the page, evicted at the next fault, shows L = 0 again).
//! Prediction is thus disabled for the residency after a predicted one, whose lifetime is
//! measured under LRU and checks the prediction.
//! Left open by the paper and decided here: Ldiff is signed, L(i) - L(i-1), compared by
//! its magnitude and added as it is (the prediction extrapolates the trend, floored at
//! 0); a page needs two measured lifetimes (its third fault) before Ldiff exists, and
//! stays in Sinit until then.

use super::predictive::{LifetimePredictor, Residency, NO_STATE};

const S_INIT: u64 = 0;
const S_TRANSIENT: u64 = 1;
const S_PRED: u64 = 2;
/// A page's state word: its last lifetime above two bits of state (a lifetime is
/// saturated at 2^62 - 1 faults).
const STATE_BITS: u32 = 2;
const MAX_LIFETIME: u64 = (1 << 62) - 1;

#[derive(Debug)]
pub struct LastDynamic {
    threshold: u64,
}

impl LastDynamic {
    pub fn new(threshold: u64) -> Self {
        LastDynamic { threshold }
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
        let close = diff.unsigned_abs() <= self.threshold && !last.cut_short;
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

    /// Feeds one page's lifetimes; returns the predictions (the first fault's included).
    fn feed(p: &mut LastDynamic, word: &mut u64, lifetimes: &[u64]) -> Vec<Option<u64>> {
        let mut out = vec![p.predict(word, None)];
        out.extend(lifetimes.iter().map(|&l| p.predict(word, Some(Residency { lifetime: l, resident: l, cut_short: false }))));
        out
    }

    #[test]
    fn a_residency_cut_short_by_the_prediction_confirms_nothing() {
        let mut p = LastDynamic::new(5);
        let mut w = NO_STATE;
        assert_eq!(feed(&mut p, &mut w, &[0, 0, 0]), vec![None, None, None, Some(0)]);
        // the predicted residency was ended by the Dead-List: L = 0 seen, but no prediction
        let cut = |l| Some(Residency { lifetime: l, resident: l, cut_short: true });
        assert_eq!(p.predict(&mut w, cut(0)), None);
        // measured under LRU next: close to the last value, prediction again
        assert_eq!(p.predict(&mut w, Some(Residency { lifetime: 2, resident: 9, cut_short: false })), Some(4));
    }

    #[test]
    fn predicts_only_after_two_close_differences() {
        let mut p = LastDynamic::new(5);
        // lifetimes 10, 12, 14, 16: diffs 2, 2, 2 -> transient, pred (16), pred (18)
        assert_eq!(feed(&mut p, &mut NO_STATE.clone(), &[10, 12, 14, 16]), vec![None, None, None, Some(16), Some(18)]);
    }

    #[test]
    fn a_jump_disables_prediction_by_one_state() {
        let mut p = LastDynamic::new(5);
        // to Spred (diffs 0, 0), jump (diff 90): Stransient, no prediction; close again: Spred
        let out = feed(&mut p, &mut NO_STATE.clone(), &[10, 10, 10, 100, 101]);
        assert_eq!(out, vec![None, None, None, Some(10), None, Some(102)]);
        // from Stransient a jump goes back to Sinit: two close diffs needed again
        let mut p = LastDynamic::new(5);
        let out = feed(&mut p, &mut NO_STATE.clone(), &[10, 10, 50, 51, 52, 53]);
        assert_eq!(out, vec![None, None, None, None, None, Some(53), Some(54)]);
    }

    #[test]
    fn falling_lifetimes_extrapolate_down_to_zero() {
        let mut p = LastDynamic::new(10);
        assert_eq!(feed(&mut p, &mut NO_STATE.clone(), &[20, 12, 4]), vec![None, None, None, Some(0)]);
    }

    #[test]
    fn threshold_zero_needs_equal_lifetimes() {
        let mut p = LastDynamic::new(0);
        assert_eq!(feed(&mut p, &mut NO_STATE.clone(), &[7, 8, 9, 9, 9]), vec![None, None, None, None, None, Some(9)]);
    }
}
