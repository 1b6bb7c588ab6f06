//! Load control, the classic answer to thrashing (token-ordered-lru.txt section 2.3,
//! Denning 1980): while the system's major-fault rate stays above a threshold, suspend
//! the process with the largest resident set; resume the longest-suspended one when the
//! rate falls below a lower threshold. A suspended process does not run, so its pages
//! age and go to the others.

use super::config::LoadControlConfig;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadAction {
    Suspend(u16),
    Resume(u16),
}

pub struct LoadControl {
    cfg: LoadControlConfig,
    faults_at_last_tick: u64,
    /// Suspended processes, oldest first.
    suspended: Vec<u16>,
}

impl LoadControl {
    pub fn new(cfg: LoadControlConfig) -> Self {
        LoadControl { cfg, faults_at_last_tick: 0, suspended: Vec::new() }
    }

    pub fn enabled(&self) -> bool {
        self.cfg.enabled
    }

    pub fn window_ns(&self) -> u64 {
        (self.cfg.window_s * 1e9).round().max(1.0) as u64
    }

    /// One measurement: `total_major_faults` so far; `candidates` are the processes that
    /// could be suspended (live, not suspended) with their resident sets.
    pub fn tick(&mut self, total_major_faults: u64, candidates: &[(u16, u64)]) -> Option<LoadAction> {
        let faults = total_major_faults - self.faults_at_last_tick;
        self.faults_at_last_tick = total_major_faults;
        let rate = faults as f64 / self.cfg.window_s;
        if rate > self.cfg.high_faults_per_s && candidates.len() > 1 {
            let &(p, _) = candidates.iter().max_by_key(|&&(p, rss)| (rss, std::cmp::Reverse(p)))?;
            self.suspended.push(p);
            return Some(LoadAction::Suspend(p));
        }
        if rate < self.cfg.low_faults_per_s && !self.suspended.is_empty() {
            return Some(LoadAction::Resume(self.suspended.remove(0)));
        }
        None
    }

    /// A process ended or must be resumed because nothing else can run.
    pub fn forget(&mut self, p: u16) {
        self.suspended.retain(|&q| q != p);
    }

    /// The longest-suspended process, resumed when no other process is left to run.
    pub fn resume_oldest(&mut self) -> Option<u16> {
        (!self.suspended.is_empty()).then(|| self.suspended.remove(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lc() -> LoadControl {
        LoadControl::new(LoadControlConfig { enabled: true, high_faults_per_s: 100.0, low_faults_per_s: 10.0, window_s: 1.0 })
    }

    #[test]
    fn suspends_the_largest_and_resumes_when_calm() {
        let mut l = lc();
        assert_eq!(l.tick(50, &[(0, 10), (1, 20)]), None);
        assert_eq!(l.tick(500, &[(0, 10), (1, 20)]), Some(LoadAction::Suspend(1)));
        // still high, but only one candidate left: never suspend the last one
        assert_eq!(l.tick(1000, &[(0, 30)]), None);
        assert_eq!(l.tick(1005, &[(0, 30)]), Some(LoadAction::Resume(1)));
        assert_eq!(l.tick(1006, &[(0, 30), (1, 0)]), None);
    }
}
