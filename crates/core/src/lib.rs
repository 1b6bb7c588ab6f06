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

/// The revision of the engine's results. Raise it with every change that alters any
/// result of an unchanged configuration (a model rule's default, a workload's stream, a
/// cost): it is part of [`ENGINE_VERSION`], which keys every stored sweep point, so that a
/// results store never serves a point that this engine would compute otherwise.
/// tests/test_results_revision.py pins a digest of a set of small runs to it and fails
/// when the results change and the revision does not.
macro_rules! results_revision {
    () => {
        "7"
    };
}
pub const RESULTS_REVISION: &str = results_revision!();

/// Version of the engine, recorded in results so that stored results name what made them:
/// the package version and the results revision.
pub const ENGINE_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+r", results_revision!());
