//! DP-Approx (predictive-replacement.txt section 5.2): the lifetime predicted from what
//! an operating system sees, page faults and evictions only. A page's L + D (from its
//! fault to its eviction, in faults) is averaged exponentially:
//! L_pred(t+1) = a * (L+D)_measured(t) + (1 - a) * L_pred(t), a = 0.5 by default; the
//! first measurement is the first prediction.
//!
//! Decided here: L + D is the fault counter at the eviction minus its value at the
//! page's fault (both OS events). Section 5.2's text reads the counter at the page's
//! next fault instead, which would add the window W the page spent out of memory; the
//! definition of L + D (section 1) and the statement that only "L + D" is measured
//! (section 1) are followed. Predictions are rounded to whole faults.

use super::predictive::{LifetimePredictor, Residency, NO_STATE};

/// A page's state word is its running prediction (the bits of an f64), NO_STATE before
/// its first measurement.
#[derive(Debug)]
pub struct DpApprox {
    a: f64,
}

impl DpApprox {
    pub fn new(a: f64) -> Self {
        DpApprox { a }
    }
}

impl LifetimePredictor for DpApprox {
    fn name(&self) -> &'static str {
        "dp-approx"
    }
    fn predict(&mut self, state: &mut u64, last: Option<Residency>) -> Option<u64> {
        let measured = last?.resident as f64;
        let e = if *state == NO_STATE { measured } else { self.a * measured + (1.0 - self.a) * f64::from_bits(*state) };
        *state = e.to_bits();
        Some(e.round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Ending;

    #[test]
    fn exponential_average_of_residencies() {
        let mut p = DpApprox::new(0.5);
        let (mut a, mut b) = (NO_STATE, NO_STATE);
        let r = |resident| Some(Residency { lifetime: 0, resident, ending: Ending::Replaced });
        assert_eq!(p.predict(&mut a, None), None);
        assert_eq!(a, NO_STATE);
        assert_eq!(p.predict(&mut a, r(100)), Some(100));
        assert_eq!(p.predict(&mut a, r(50)), Some(75));
        assert_eq!(p.predict(&mut a, r(75)), Some(75));
        assert_eq!(p.predict(&mut b, r(8)), Some(8), "per page");
        let mut q = DpApprox::new(1.0);
        let mut c = NO_STATE;
        q.predict(&mut c, r(100));
        assert_eq!(q.predict(&mut c, r(3)), Some(3), "a = 1 keeps the last measurement");
        // the hardware lifetime is not used: only what the OS sees
        let mut s = DpApprox::new(0.25);
        let mut d = NO_STATE;
        assert_eq!(s.predict(&mut d, Some(Residency { lifetime: 999, resident: 40, ending: Ending::Replaced })), Some(40));
        assert_eq!(s.predict(&mut d, r(0)), Some(30));
    }
}
