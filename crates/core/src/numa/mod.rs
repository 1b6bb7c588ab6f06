//! A local/remote (NUMA) multiprocessor with page migration daemons
//! (numa-page-migration.txt): main memory is the union of the nodes' local memories, no
//! swap; one parallel computation runs one process per node over a shared paged address
//! space; migration daemons move pages toward the node that uses them.

pub mod config;
pub mod daemon;
pub mod machine;
pub mod memory;
pub mod pages;
pub mod stream;
pub mod workloads;

pub use config::NumaConfig;
pub use machine::{run_numa, run_numa_traced, MigrationEvent, MigrationTrace, NumaResult};

#[cfg(test)]
mod pingpong_tests;
#[cfg(test)]
mod tests;
