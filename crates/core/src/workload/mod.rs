//! Built-in workload generators: deterministic for a seed, sizes as parameters.

use crate::trace::RefSource;
use crate::Result;

/// One parameter of a workload, for `workload list` and validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    pub name: &'static str,
    pub default: &'static str,
    pub help: &'static str,
}

/// A workload's name, one-line summary and parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: Vec<ParamInfo>,
}

/// The built-in workloads, in listing order.
pub fn list() -> Vec<WorkloadInfo> {
    todo!("workloads helper")
}

/// Opens a workload as a reference stream. Unknown names, unknown parameters and bad
/// values are [`crate::Error::Invalid`] errors naming the workload and the parameter.
pub fn open_workload(name: &str, params: &[(String, String)], page_size: u64, seed: u64) -> Result<Box<dyn RefSource>> {
    let _ = (name, params, page_size, seed);
    todo!("workloads helper")
}
