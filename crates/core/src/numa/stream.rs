//! What a NUMA workload gives the machine: one stream of operations per processor over
//! a shared address space in bytes, and the node each byte lives on at the start.
//!
//! Streams are advanced by the machine in simulated-time order (always the processor
//! furthest behind), so workloads whose processors share work at run time (two
//! processors taking rows from the two ends of a block) may keep that shared state in
//! atomics and read it as they go: the order of `next` calls is the order of simulated
//! time.

/// One step of a processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `count` successive references to the shared byte at `addr` (each one address
    /// translation: a repeat reference of numa-page-migration.txt section 4.2 counts).
    Ref { addr: u64, count: u32 },
    /// Wait until every processor has reached its matching barrier.
    Barrier,
}

/// A processor's operations, in program order.
pub type ProcStream = Box<dyn Iterator<Item = Op> + Send>;

/// A workload ready to run on `streams.len()` processors.
pub struct NumaWorkload {
    pub name: String,
    /// Size of the shared address space in bytes (addresses are `0..bytes`).
    pub bytes: u64,
    /// One stream per processor; processor i runs on node i.
    pub streams: Vec<ProcStream>,
    /// The node whose memory holds the byte at an address at the start (the workload's
    /// placement rule: its partitioning). A page starts on the node of its first byte.
    pub home: Box<dyn Fn(u64) -> u16 + Send + Sync>,
    /// The workload's private work after each operation's first reference and after
    /// each repeat reference, in ns: what `numa.private_ns` and
    /// `numa.repeat_private_ns` take when absent, calibrated from the paper's
    /// no-migration row (each workload's `PRIVATE` documents its source).
    pub private: PrivateWork,
}

/// Private work (numa-page-migration.txt section 4: code and private data, local and
/// outside the page tables), calibrated per workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrivateWork {
    /// After each shared operation's first reference.
    pub first_ns: f64,
    /// After each repeat reference.
    pub repeat_ns: f64,
}
