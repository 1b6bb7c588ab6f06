//! Last-static-k (predictive-replacement.txt section 5.1): the next lifetime of a page
//! is its last one plus a constant, L(i+1) = L(i) + k, measured in faults to other
//! pages with hardware-style counters. k = 0 is the plain last-value predictor; the
//! paper tries k in {-10, -5, 0, 5, 10}. A page's first fault has no last lifetime and
//! gets no prediction; a negative prediction is taken as 0 (dead at the next fault).

use super::predictive::{LifetimePredictor, Residency};

#[derive(Debug)]
pub struct LastStatic {
    k: i64,
}

impl LastStatic {
    pub fn new(k: i64) -> Self {
        LastStatic { k }
    }
}

impl LifetimePredictor for LastStatic {
    fn name(&self) -> &'static str {
        "last-static"
    }
    fn predict(&mut self, _state: &mut u64, last: Option<Residency>) -> Option<u64> {
        last.map(|r| r.lifetime.saturating_add_signed(self.k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Ending;

    #[test]
    fn last_value_plus_k_floored_at_zero() {
        let r = |lifetime| Some(Residency { lifetime, resident: lifetime + 7, ending: Ending::Replaced });
        assert_eq!(LastStatic::new(0).predict(&mut 0, None), None);
        assert_eq!(LastStatic::new(0).predict(&mut 0, r(40)), Some(40));
        assert_eq!(LastStatic::new(5).predict(&mut 0, r(40)), Some(45));
        assert_eq!(LastStatic::new(-10).predict(&mut 0, r(40)), Some(30));
        assert_eq!(LastStatic::new(-10).predict(&mut 0, r(4)), Some(0));
    }
}
