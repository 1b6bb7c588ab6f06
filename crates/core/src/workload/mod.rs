//! Built-in workload generators: deterministic for a seed, sizes as parameters.
//!
//! Each workload emits the references its index arithmetic implies (DESIGN.md,
//! "Workload generators"): arrays of 8-byte elements, row-major, each array on its own
//! page-aligned base in one address space ([`layout`]); every element access is cut into
//! a page, consecutive accesses with the same (page, kind) fold into one record, and
//! records get dense ids in first-touch order ([`emitter`]). Single process, pid 0.
//! Generators stream on a background thread ([`stream`]); nothing materialises the whole
//! reference string. One file per workload; random ones use `Pcg64::seed_from_u64(seed)`.

use crate::trace::{check_page_size, RefSource};
use crate::{Error, Result};

mod alias;
mod emitter;
mod layout;
pub(crate) mod params;
mod stream;

mod bit_r;
mod bitrev;
mod growing_table;
mod jacobi;
mod lu;
mod matmul;
mod mergesort;
mod npb_bt;
mod npb_cg;
mod npb_ft;
mod npb_is;
mod npb_lu;
mod npb_mg;
mod npb_sp;
mod phases;
mod scan;
mod shrinking_loop;
mod sor;
mod spec_apsi;
mod spec_gzip;
mod spec_gzip_once;
mod spec_mcf;
mod spec_swim;
mod spec_wupwise;
mod spikes;
mod spmv;
mod uniform;
mod zipf;

#[cfg(test)]
mod tests;

use params::Params;
use stream::{Plan, WorkloadSource};

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

/// A registry entry: what `list()` shows and how to plan a run.
struct Workload {
    name: &'static str,
    summary: &'static str,
    params: &'static [ParamInfo],
    /// Validates parameters (already checked for unknown names) and builds the generator.
    plan: fn(&Params, u64, u64) -> Result<Plan>,
}

const fn param(name: &'static str, default: &'static str, help: &'static str) -> ParamInfo {
    ParamInfo { name, default, help }
}

macro_rules! workload {
    ($module:ident, $name:literal) => {
        Workload { name: $name, summary: $module::SUMMARY, params: $module::PARAMS, plan: $module::plan }
    };
}

const WORKLOADS: &[Workload] = &[
    workload!(lu, "lu"),
    workload!(sor, "sor"),
    workload!(matmul, "matmul"),
    workload!(mergesort, "mergesort"),
    workload!(bitrev, "bitrev"),
    workload!(bit_r, "bit-r"),
    workload!(jacobi, "jacobi"),
    workload!(spmv, "spmv"),
    workload!(shrinking_loop, "shrinking-loop"),
    workload!(scan, "scan"),
    workload!(uniform, "uniform"),
    workload!(zipf, "zipf"),
    workload!(phases, "phases"),
    workload!(growing_table, "growing-table"),
    workload!(spikes, "spikes"),
    workload!(npb_lu, "npb-lu"),
    workload!(npb_sp, "npb-sp"),
    workload!(npb_cg, "npb-cg"),
    workload!(npb_is, "npb-is"),
    workload!(npb_mg, "npb-mg"),
    workload!(npb_ft, "npb-ft"),
    workload!(npb_bt, "npb-bt"),
    workload!(spec_gzip, "spec-gzip"),
    workload!(spec_mcf, "spec-mcf"),
    workload!(spec_swim, "spec-swim"),
    workload!(spec_wupwise, "spec-wupwise"),
    workload!(spec_apsi, "spec-apsi"),
];

/// The built-in workloads, in listing order.
pub fn list() -> Vec<WorkloadInfo> {
    WORKLOADS
        .iter()
        .map(|w| WorkloadInfo { name: w.name, summary: w.summary, params: w.params.to_vec() })
        .collect()
}

/// The registry entry named `name` (trimmed); an unknown name is an error listing the
/// known ones. Shared by the paging workloads and the NUMA ones.
pub(crate) fn find<'a, T>(entries: &'a [T], name: &str, name_of: fn(&T) -> &'static str) -> Result<&'a T> {
    entries.iter().find(|e| name_of(e) == name.trim()).ok_or_else(|| {
        let names: Vec<&str> = entries.iter().map(name_of).collect();
        Error::invalid("workload", format!("unknown workload '{name}' (expected one of: {})", names.join(", ")))
    })
}

/// Opens a workload as a reference stream. Unknown names, unknown parameters and bad
/// values are [`crate::Error::Invalid`] errors naming the workload and the parameter.
pub fn open_workload(name: &str, params: &[(String, String)], page_size: u64, seed: u64) -> Result<Box<dyn RefSource>> {
    let w = find(WORKLOADS, name, |w| w.name)?;
    let params = Params::new(w.name, w.params, params)?;
    check_page_size(page_size)?;
    let plan = (w.plan)(&params, page_size, seed)?;
    Ok(Box::new(WorkloadSource::spawn(w.name, page_size, plan)?))
}
