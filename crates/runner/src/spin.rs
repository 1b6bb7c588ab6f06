//! Spending the configured CPU time per reference: the debt accumulates per record and
//! is paid in slices of at least SLICE_NS by spinning until the thread's CPU clock has
//! advanced by the debt, so the time is CPU time actually consumed (under contention
//! the spin takes longer in wall time, as the simulated process's computing would).

use rustix::time::{clock_gettime, ClockId};

/// Debt paid at once: reading the thread CPU clock costs a system call, so paying per
/// record would add its cost to every reference.
const SLICE_NS: f64 = 50_000.0;

pub fn thread_cpu_ns() -> u64 {
    let t = clock_gettime(ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

pub fn process_cpu_ns() -> u64 {
    let t = clock_gettime(ClockId::ProcessCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

pub fn monotonic_ns() -> u64 {
    let t = clock_gettime(ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[derive(Default)]
pub struct CpuSpinner {
    debt_ns: f64,
    /// CPU time spent spinning so far.
    pub spun_ns: u64,
}

impl CpuSpinner {
    pub fn add(&mut self, ns: f64) {
        self.debt_ns += ns;
        if self.debt_ns >= SLICE_NS {
            self.pay();
        }
    }

    /// Spins off the whole debt now.
    pub fn pay(&mut self) {
        if self.debt_ns < 1.0 {
            return;
        }
        let start = thread_cpu_ns();
        let target = start + self.debt_ns as u64;
        let mut now = start;
        while now < target {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
            now = thread_cpu_ns();
        }
        self.spun_ns += now - start;
        // what was spun beyond the debt is credited to the next slice
        self.debt_ns -= (now - start) as f64;
    }
}
