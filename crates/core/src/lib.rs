//! pagelab-core: the paging engine. No Python, no CLI, no printing.
//!
//! Data flows one way: a [`trace::RefSource`] (a trace file or a built-in workload)
//! yields batches of references with dense page ids; [`replay`] drives replacement
//! policies from [`policy`] over them; [`analysis`] computes stack distances and
//! miss-ratio curves. See `DESIGN.md` at the repository root of the shared design.

pub mod analysis;
pub mod error;
pub mod hint;
pub mod numa;
pub mod policy;
pub mod replay;
pub mod source;
pub mod stream;
pub mod system;
pub mod trace;
pub mod workload;

pub use error::{Error, Result};

/// Version of the engine, recorded in results so that stored results name what made them.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");
