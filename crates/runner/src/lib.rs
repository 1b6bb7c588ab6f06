//! pagelab-runner: the kernel backend's native runner. It performs a reference stream
//! (a built-in workload or a trace, read by pagelab-core's own readers, so the kernel
//! sees the simulator's references in the simulator's order) on real memory: an
//! anonymous region with one page of the configured size per distinct page of the
//! stream, each record a read or a write of its page, `repeat` times, then the
//! configured CPU time per reference spent spinning. docs/kernel-backend.md.

pub mod perform;
pub mod probe_disk;
pub mod probe_faults;
pub mod region;
pub mod self_stats;
pub mod spin;
pub mod wire;

pub use perform::{perform, Records, RunReport, RunnerOptions};
