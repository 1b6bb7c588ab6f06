//! PyO3 bindings of the engine as `pagelab._core`. Thin by design (DESIGN.md): convert
//! arguments, release the GIL around engine calls, turn engine errors into
//! `pagelab.PagelabError` with the engine's one-line message. No logic lives here.

use std::path::PathBuf;
use std::sync::Mutex;

use pagelab_core::analysis::mrc as engine_mrc;
use pagelab_core::analysis::{fault_parameters as engine_fault_parameters, Parameter, Unit};
use pagelab_core::policy::{PolicyKind, Repeats};
use pagelab_core::replay::{replay as engine_replay, ReplayConfig};
use pagelab_core::source::SourceSpec;
use pagelab_core::trace::{self, RefBatch, RefSource, TraceFormat};
use pagelab_core::{workload, Error};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(_core, PagelabError, PyException, "A user-facing pagelab error: one line naming the input, the position and what was expected.");

fn to_py(err: Error) -> PyErr {
    match err {
        Error::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
        other => PagelabError::new_err(other.to_string()),
    }
}

/// Builds a progress hook for the engine: calls `callback(records_done)` with the GIL
/// held and stops the run on Ctrl-C (a pending KeyboardInterrupt) or a callback error.
fn progress_hook(callback: Option<PyObject>) -> impl FnMut(u64) -> bool {
    move |done: u64| {
        Python::with_gil(|py| {
            if py.check_signals().is_err() {
                return false;
            }
            match &callback {
                Some(cb) => cb.call1(py, (done,)).is_ok(),
                None => true,
            }
        })
    }
}

/// Parses a source description: {"trace": path, "format": str|None, "page_size": int|None}
/// or {"workload": name, "params": {k: v}, "page_size": int, "seed": int}.
fn source_spec(source: &Bound<'_, PyDict>) -> PyResult<SourceSpec> {
    let get = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        Ok(source.get_item(key)?.filter(|v| !v.is_none()))
    };
    let page_size: Option<u64> = get("page_size")?.map(|v| v.extract()).transpose()?;
    if let Some(path) = get("trace")? {
        let path: PathBuf = path.extract()?;
        let format = match get("format")? {
            Some(f) => Some(TraceFormat::from_name(&f.extract::<String>()?).map_err(to_py)?),
            None => None,
        };
        return Ok(SourceSpec::Trace { path, format, page_size });
    }
    if let Some(name) = get("workload")? {
        let mut params = Vec::new();
        if let Some(p) = get("params")? {
            for (k, v) in p.downcast::<PyDict>()?.iter() {
                params.push((k.str()?.to_string(), v.str()?.to_string()));
            }
        }
        let seed: u64 = get("seed")?.map(|v| v.extract()).transpose()?.unwrap_or(0);
        return Ok(SourceSpec::Workload {
            name: name.extract()?,
            params,
            page_size: page_size.unwrap_or(4096),
            seed,
        });
    }
    Err(PagelabError::new_err("source: expected a 'trace' path or a 'workload' name"))
}

/// The built-in workloads: [{"name", "summary", "params": [{"name", "default", "help"}]}].
#[pyfunction]
fn workloads(py: Python<'_>) -> PyResult<PyObject> {
    workload_list(py, workload::list())
}

/// A workload listing as Python dicts.
fn workload_list(py: Python<'_>, list: Vec<workload::WorkloadInfo>) -> PyResult<PyObject> {
    let out = PyList::empty(py);
    for w in list {
        let d = PyDict::new(py);
        d.set_item("name", w.name)?;
        d.set_item("summary", w.summary)?;
        let params = PyList::empty(py);
        for p in &w.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("default", p.default)?;
            pd.set_item("help", p.help)?;
            params.append(pd)?;
        }
        d.set_item("params", params)?;
        out.append(d)?;
    }
    Ok(out.into())
}

/// Names of the trace formats, for help texts.
#[pyfunction]
fn trace_formats() -> Vec<&'static str> {
    TraceFormat::ALL.iter().map(|f| f.name()).collect()
}

/// Names of the replacement policies.
#[pyfunction]
fn policies() -> Vec<&'static str> {
    PolicyKind::ALL.iter().map(|p| p.name()).collect()
}

#[pyfunction]
#[pyo3(signature = (source, progress=None))]
fn trace_info(py: Python<'_>, source: &Bound<'_, PyDict>, progress: Option<PyObject>) -> PyResult<PyObject> {
    let spec = source_spec(source)?;
    let mut hook = progress_hook(progress);
    let info = py
        .allow_threads(|| {
            let mut src = spec.open()?;
            trace::trace_info(src.as_mut(), &mut hook)
        })
        .map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("name", &info.name)?;
    d.set_item("page_size", info.page_size)?;
    d.set_item("records", info.records)?;
    d.set_item("references", info.references)?;
    d.set_item("distinct_pages", info.distinct_pages)?;
    d.set_item("footprint_bytes", info.footprint_bytes)?;
    d.set_item("reads", info.reads)?;
    d.set_item("writes", info.writes)?;
    d.set_item("instructions", info.instructions)?;
    d.set_item("frees", info.frees)?;
    let procs = PyList::empty(py);
    for p in &info.processes {
        let pd = PyDict::new(py);
        pd.set_item("pid", p.pid)?;
        pd.set_item("name", &p.name)?;
        pd.set_item("references", p.references)?;
        pd.set_item("distinct_pages", p.distinct_pages)?;
        procs.append(pd)?;
    }
    d.set_item("processes", procs)?;
    Ok(d.into())
}

/// With `records = (first, end)`, only the source's records first..end are written (ids
/// assigned again from 0): a part of a trace.
#[pyfunction]
#[pyo3(signature = (source, out, format, compress=false, progress=None, records=None))]
fn convert(
    py: Python<'_>,
    source: &Bound<'_, PyDict>,
    out: PathBuf,
    format: &str,
    compress: bool,
    progress: Option<PyObject>,
    records: Option<(u64, u64)>,
) -> PyResult<u64> {
    let spec = source_spec(source)?;
    let format = TraceFormat::from_name(format).map_err(to_py)?;
    let mut hook = progress_hook(progress);
    py.allow_threads(|| {
        let mut src = spec.open()?;
        if let Some((first, end)) = records {
            src = Box::new(trace::RecordRange::new(src, first, end)?);
        }
        trace::convert(src.as_mut(), &out, format, compress, &mut hook)
    })
    .map_err(to_py)
}

/// Reads Valgrind lackey output from the file descriptor `fd` (a pipe from a running
/// valgrind; this function takes ownership and closes it) and writes a pagelab trace;
/// with `data_only`, without the instruction fetches.
#[pyfunction]
#[pyo3(signature = (fd, input_name, out, page_size, compress=false, progress=None, data_only=false))]
#[allow(clippy::too_many_arguments)]
fn capture_lackey_fd(
    py: Python<'_>,
    fd: i32,
    input_name: String,
    out: PathBuf,
    page_size: u64,
    compress: bool,
    progress: Option<PyObject>,
    data_only: bool,
) -> PyResult<PyObject> {
    use std::os::fd::FromRawFd;
    // SAFETY: the caller hands over an open descriptor it no longer uses.
    let file = unsafe { std::fs::File::from_raw_fd(fd) };
    let mut hook = progress_hook(progress);
    let stats = py
        .allow_threads(|| trace::capture_lackey(file, &input_name, &out, page_size, compress, data_only, &mut hook))
        .map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("lines", stats.lines)?;
    d.set_item("references", stats.references)?;
    d.set_item("records", stats.records)?;
    d.set_item("distinct_pages", stats.distinct_pages)?;
    Ok(d.into())
}

#[pyfunction]
#[pyo3(signature = (source, policies, frames, seed=0, progress=None, repeats="fold"))]
fn replay(
    py: Python<'_>,
    source: &Bound<'_, PyDict>,
    policies: Vec<String>,
    frames: Vec<u64>,
    seed: u64,
    progress: Option<PyObject>,
    repeats: &str,
) -> PyResult<PyObject> {
    let repeats = Repeats::from_name(repeats).map_err(to_py)?;
    let spec = source_spec(source)?;
    let policies = policies
        .iter()
        .map(|p| PolicyKind::from_name(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(to_py)?;
    let cfg = ReplayConfig { policies, frames, seed, repeats };
    let mut hook = progress_hook(progress);
    let results = py
        .allow_threads(|| engine_replay(&|| spec.open(), &cfg, &mut hook))
        .map_err(to_py)?;
    let out = PyList::empty(py);
    for r in &results {
        let d = PyDict::new(py);
        d.set_item("policy", &r.policy)?;
        d.set_item("frames", r.frames)?;
        d.set_item("records", r.records)?;
        d.set_item("references", r.references)?;
        d.set_item("faults", r.faults)?;
        d.set_item("compulsory_faults", r.compulsory_faults)?;
        d.set_item("fault_ratio", r.fault_ratio())?;
        d.set_item("dirty_evictions", r.dirty_evictions)?;
        d.set_item("distinct_pages", r.distinct_pages)?;
        d.set_item("mean_resident", r.mean_resident)?;
        let counters = PyDict::new(py);
        for (name, count) in &r.counters {
            counters.set_item(name, count)?;
        }
        d.set_item("counters", counters)?;
        out.append(d)?;
    }
    Ok(out.into())
}

/// How many times `replay` reads the stream for these policies: 2 when one of them
/// needs the future (OPT's recording pass, then the replay), else 1. Progress bars use
/// it for their total.
#[pyfunction]
fn replay_passes(policies: Vec<String>) -> PyResult<u32> {
    let mut passes = 1;
    for p in &policies {
        if PolicyKind::from_name(p).map_err(to_py)?.needs_future() {
            passes = 2;
        }
    }
    Ok(passes)
}

/// The exact fault curve of LRU or OPT (`policy`, both stack algorithms): {"faults":
/// bytes of little-endian u64, faults with 1, 2, ... distinct_pages frames, ...}.
#[pyfunction]
#[pyo3(signature = (source, progress=None, policy="lru"))]
fn mrc(py: Python<'_>, source: &Bound<'_, PyDict>, progress: Option<PyObject>, policy: &str) -> PyResult<PyObject> {
    let spec = source_spec(source)?;
    let kind = PolicyKind::from_name(policy).map_err(to_py)?;
    if !matches!(kind, PolicyKind::Lru | PolicyKind::Opt) {
        return Err(PagelabError::new_err(format!(
            "policy: the one-pass curve is for the stack algorithms lru and opt, got '{policy}'"
        )));
    }
    let mut hook = progress_hook(progress);
    let curve = py
        .allow_threads(|| {
            let mut src = spec.open()?;
            match kind {
                PolicyKind::Opt => pagelab_core::analysis::opt_mrc(src.as_mut(), &mut hook),
                _ => engine_mrc(src.as_mut(), &mut hook),
            }
        })
        .map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("records", curve.records)?;
    d.set_item("references", curve.references)?;
    d.set_item("distinct_pages", curve.distinct_pages)?;
    d.set_item("compulsory_faults", curve.compulsory_faults)?;
    // little-endian u64 bytes for numpy.frombuffer: a list of 600k Python ints is slow
    let bytes: Vec<u8> = curve.faults.iter().flat_map(|f| f.to_le_bytes()).collect();
    d.set_item("faults", PyBytes::new(py, &bytes))?;
    Ok(d.into())
}

/// The fault parameters of every residency of `source` under `policy` on `frames` frames
/// (predictive-replacement.txt Figure 1): {"policy", "frames", "records", "references",
/// "faults", "compulsory_faults", "distinct_pages", "columns": {name: bytes of
/// little-endian u64}}. Columns: the engine's stamps (page, pid, vpage, fault_record,
/// fault_ref, fault_faults, last_record, last_ref, last_faults, evict_record, evict_ref,
/// evict_faults, next_fault_record, next_fault_ref, next_fault_faults, flags) and the
/// parameters L_refs ... F_faults, u64::MAX where undefined.
#[pyfunction]
#[pyo3(signature = (source, policy, frames, seed=0, progress=None))]
fn fault_parameters(
    py: Python<'_>,
    source: &Bound<'_, PyDict>,
    policy: &str,
    frames: u64,
    seed: u64,
    progress: Option<PyObject>,
) -> PyResult<PyObject> {
    let spec = source_spec(source)?;
    let policy = PolicyKind::from_name(policy).map_err(to_py)?;
    if frames == 0 || frames >= u32::MAX as u64 {
        return Err(to_py(Error::invalid("frames", format!("expected a memory size from 1 to {} frames, got {frames}", u32::MAX - 1))));
    }
    let mut hook = progress_hook(progress);
    let mut fp = py
        .allow_threads(|| engine_fault_parameters(&|| spec.open(), policy, frames as u32, seed, &mut hook))
        .map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("policy", &fp.policy)?;
    d.set_item("frames", fp.frames)?;
    d.set_item("records", fp.records)?;
    d.set_item("references", fp.references)?;
    d.set_item("faults", fp.faults)?;
    d.set_item("compulsory_faults", fp.compulsory_faults)?;
    d.set_item("distinct_pages", fp.distinct_pages)?;
    let columns = PyDict::new(py);
    // little-endian u64 bytes for numpy.frombuffer
    let le = |v: &[u64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    for (unit, suffix) in [(Unit::References, "refs"), (Unit::Faults, "faults")] {
        for p in Parameter::ALL {
            columns.set_item(format!("{}_{suffix}", p.name()), PyBytes::new(py, &le(&fp.column(p, unit))))?;
        }
    }
    // then the stamps, each freed once copied (a run may have millions of residencies)
    for (name, col) in [
        ("page", &mut fp.page),
        ("pid", &mut fp.pid),
        ("vpage", &mut fp.vpage),
        ("fault_record", &mut fp.fault_record),
        ("fault_ref", &mut fp.fault_ref),
        ("fault_faults", &mut fp.fault_faults),
        ("last_record", &mut fp.last_record),
        ("last_ref", &mut fp.last_ref),
        ("last_faults", &mut fp.last_faults),
        ("evict_record", &mut fp.evict_record),
        ("evict_ref", &mut fp.evict_ref),
        ("evict_faults", &mut fp.evict_faults),
        ("next_fault_record", &mut fp.next_fault_record),
        ("next_fault_ref", &mut fp.next_fault_ref),
        ("next_fault_faults", &mut fp.next_fault_faults),
        ("flags", &mut fp.flags),
    ] {
        columns.set_item(name, PyBytes::new(py, &le(&std::mem::take(col))))?;
    }
    d.set_item("columns", columns)?;
    Ok(d.into())
}

/// Runs the timed system described by `config_json` (the TOML structure as JSON, with
/// `processes` for `[[process]]`); `progress(simulated_ms)` is called at every sample.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None))]
fn run_system(py: Python<'_>, config_json: &str, progress: Option<PyObject>) -> PyResult<PyObject> {
    use pagelab_core::system::{self, SystemConfig};
    let cfg = SystemConfig::from_json(config_json).map_err(to_py)?;
    let mut hook = progress_hook(progress);
    let r = py.allow_threads(|| system::run_system(&cfg, &mut hook)).map_err(to_py)?;
    Ok(system_result_dict(py, &r)?.into())
}

/// The kernel backend's controllers' settings (docs/kernel.md): the configuration checked
/// as the simulator checks it, and its `[token]`, `[load_control]` and `[gang]` tables
/// with every default filled in, as JSON. With `dedicated_ns` (the processes' runs alone)
/// also the token's section 5.3 limits resolved as the simulator resolves them
/// (token_defaults.rs), for the configured disk.
#[pyfunction]
#[pyo3(signature = (config_json, dedicated_ns=None))]
fn kernel_controls(config_json: &str, dedicated_ns: Option<Vec<u64>>) -> PyResult<String> {
    use pagelab_core::system::{token_defaults::token_limits, SystemConfig};
    let cfg = SystemConfig::from_json(config_json).map_err(to_py)?;
    cfg.validate().map_err(to_py)?;
    let mut out = serde_json::json!({"token": cfg.token, "load_control": cfg.load_control, "gang": cfg.gang});
    if let Some(d) = dedicated_ns {
        let l = token_limits(&cfg.token, Some(&d), &cfg.disk.model, cfg.system.page_size);
        out["token_limits"] = serde_json::json!({"hold_ns": l.hold_ns, "unsuitable_ns": l.unsuitable_ns,
            "self_take_limit": l.self_take_limit, "window_ns": l.window_ns});
    }
    Ok(out.to_string())
}

/// The dict of one machine's results (a `run_system` run or one node of a gang run).
fn system_result_dict<'py>(py: Python<'py>, r: &pagelab_core::system::SystemResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("engine_version", pagelab_core::ENGINE_VERSION)?;
    d.set_item("end_ns", r.end_ns)?;
    d.set_item("cpu_busy_ns", r.cpu_busy_ns)?;
    d.set_item("disk_busy_ns", r.disk_busy_ns)?;
    d.set_item("disk_reads", r.disk_reads)?;
    d.set_item("disk_writes", r.disk_writes)?;
    d.set_item("pages_read", r.pages_read)?;
    d.set_item("pages_written", r.pages_written)?;
    d.set_item("write_sizes", r.write_sizes.clone())?;
    d.set_item("read_sizes", r.read_sizes.clone())?;
    d.set_item("prefetched", r.prefetched)?;
    d.set_item("prefetch_hits", r.prefetch_hits)?;
    // the series' interval at the end of the run: system.sample_ms, doubled each time
    // the series were full and merged in pairs (docs/system-config.md)
    d.set_item("sample_ns", r.sample_ns)?;
    let counters = PyDict::new(py);
    for (name, count) in &r.reclaim_counters {
        counters.set_item(name, count)?;
    }
    d.set_item("reclaim_counters", counters)?;
    let disk_counters = PyDict::new(py);
    for (name, count) in &r.disk_counters {
        disk_counters.set_item(name, count)?;
    }
    d.set_item("disk_counters", disk_counters)?;
    let procs = PyList::empty(py);
    let series = PyList::empty(py);
    let space_time = PyList::empty(py);
    for p in &r.processes {
        let pd = PyDict::new(py);
        pd.set_item("name", &p.name)?;
        pd.set_item("start_ns", p.start_ns)?;
        pd.set_item("end_ns", p.end_ns)?;
        pd.set_item("runtime_ns", p.runtime_ns())?;
        pd.set_item("dedicated_ns", p.dedicated_ns)?;
        pd.set_item("slowdown", p.slowdown())?;
        pd.set_item("references", p.counters.references)?;
        pd.set_item("records", p.counters.records)?;
        pd.set_item("major_faults", p.counters.major_faults)?;
        pd.set_item("minor_faults", p.counters.minor_faults)?;
        pd.set_item("pages_freed", p.counters.pages_freed)?;
        pd.set_item("page_ins", p.counters.page_ins)?;
        pd.set_item("page_outs", p.counters.page_outs)?;
        pd.set_item("token_grabs", p.counters.token_grabs)?;
        pd.set_item("token_held_ns", p.counters.token_held_ns)?;
        pd.set_item("suspended_ns", p.counters.suspended_ns)?;
        procs.append(pd)?;
        let sd = PyDict::new(py);
        sd.set_item("process", &p.name)?;
        sd.set_item("t_s", r.series.t_s.clone())?;
        sd.set_item("mad", p.series.mad.clone())?;
        sd.set_item("rss", p.series.rss.clone())?;
        sd.set_item("nap", p.series.nap.clone())?;
        sd.set_item("npf", p.series.npf.clone())?;
        series.append(sd)?;
        if let Some(st) = &p.space_time {
            let std = PyDict::new(py);
            std.set_item("process", &p.name)?;
            std.set_item("t_s", r.series.t_s.clone())?;
            std.set_item("pages_per_bucket", st.pages_per_bucket)?;
            std.set_item("visited", st.visited.clone())?;
            std.set_item("resident", st.resident.clone())?;
            std.set_item("swapped", st.swapped.clone())?;
            space_time.append(std)?;
        }
    }
    d.set_item("processes", procs)?;
    d.set_item("series", series)?;
    let ss = PyDict::new(py);
    ss.set_item("t_s", r.series.t_s.clone())?;
    ss.set_item("free", r.series.free.clone())?;
    ss.set_item("cpu_util", r.series.cpu_util.clone())?;
    ss.set_item("disk_util", r.series.disk_util.clone())?;
    ss.set_item("pages_in", r.series.pages_in.clone())?;
    ss.set_item("pages_out", r.series.pages_out.clone())?;
    d.set_item("system_series", ss)?;
    let events = PyList::empty(py);
    for e in &r.token_events {
        let ed = PyDict::new(py);
        ed.set_item("t_ns", e.t_ns)?;
        ed.set_item("event", e.event)?;
        ed.set_item("process", &e.process)?;
        events.append(ed)?;
    }
    d.set_item("token_events", events)?;
    if !space_time.is_empty() {
        d.set_item("space_time", space_time)?;
    }
    Ok(d)
}

/// Runs a gang configuration (a `[gang]` section: jobs over nodes, gang-adaptive-paging.txt)
/// and returns the jobs' completion times, the switches and each node's results.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None))]
fn run_gang(py: Python<'_>, config_json: &str, progress: Option<PyObject>) -> PyResult<PyObject> {
    use pagelab_core::system::{self, SystemConfig};
    let cfg = SystemConfig::from_json(config_json).map_err(to_py)?;
    let mut hook = progress_hook(progress);
    let r = py.allow_threads(|| system::run_gang(&cfg, &mut hook)).map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("engine_version", pagelab_core::ENGINE_VERSION)?;
    d.set_item("end_ns", r.end_ns)?;
    let jobs = PyList::empty(py);
    for j in &r.jobs {
        let jd = PyDict::new(py);
        jd.set_item("name", &j.name)?;
        jd.set_item("end_ns", j.end_ns)?;
        jd.set_item("dedicated_ns", j.dedicated_ns)?;
        jobs.append(jd)?;
    }
    d.set_item("jobs", jobs)?;
    let switches = PyList::empty(py);
    for s in &r.switches {
        let sd = PyDict::new(py);
        sd.set_item("t_ns", s.t_ns)?;
        sd.set_item("from", s.from.map(|f| r.jobs[f as usize].name.clone()))?;
        sd.set_item("to", &r.jobs[s.to as usize].name)?;
        switches.append(sd)?;
    }
    d.set_item("switches", switches)?;
    let nodes = PyList::empty(py);
    for (n, st) in r.nodes.iter().zip(&r.stats) {
        let nd = system_result_dict(py, n)?;
        let gs = PyDict::new(py);
        gs.set_item("switches", st.switches)?;
        gs.set_item("so_pages", st.so_pages)?;
        gs.set_item("ao_pages", st.ao_pages)?;
        gs.set_item("ao_written", st.ao_written)?;
        gs.set_item("ai_pages", st.ai_pages)?;
        gs.set_item("ai_reads", st.ai_reads)?;
        gs.set_item("bg_pages", st.bg_pages)?;
        gs.set_item("exchanged_pages", st.exchanged_pages)?;
        gs.set_item("ghost_pages", st.ghost_pages)?;
        gs.set_item("footprint_pages", st.footprint_pages)?;
        nd.set_item("gang", gs)?;
        nodes.append(nd)?;
    }
    d.set_item("nodes", nodes)?;
    Ok(d.into())
}

/// Runs a NUMA configuration (numa-page-migration.txt: one process per node, migration
/// daemons) given as JSON; `progress(references done)`.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None))]
fn run_numa(py: Python<'_>, config_json: &str, progress: Option<PyObject>) -> PyResult<PyObject> {
    use pagelab_core::numa::{self, NumaConfig};
    let cfg = NumaConfig::from_json(config_json).map_err(to_py)?;
    let mut hook = progress_hook(progress);
    let r = py.allow_threads(|| numa::run_numa(&cfg, &mut hook)).map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("engine_version", pagelab_core::ENGINE_VERSION)?;
    d.set_item("workload", &r.workload)?;
    d.set_item("pages", r.pages)?;
    d.set_item("end_ns", r.end_ns.clone())?;
    d.set_item("mean_ns", r.mean_ns())?;
    d.set_item("max_ns", r.max_ns())?;
    d.set_item("local_refs", r.local_refs)?;
    d.set_item("remote_refs", r.remote_refs)?;
    d.set_item("lock_wait_ns", r.lock_wait_ns)?;
    d.set_item("migrations", r.migrations())?;
    d.set_item("foresight_migrations", r.foresight_migrations)?;
    d.set_item("pingpongs", r.pingpongs)?;
    d.set_item("pingpong_pages", r.pingpong_pages)?;
    d.set_item("max_page_pingpongs", r.max_page_pingpongs)?;
    d.set_item("memory_wait_ns", r.memory_wait_ns)?;
    let daemons = PyList::empty(py);
    for s in &r.daemons {
        let dd = PyDict::new(py);
        dd.set_item("passes", s.passes)?;
        dd.set_item("examined", s.examined)?;
        dd.set_item("migrations", s.migrations)?;
        dd.set_item("lock_wait_ns", s.lock_wait_ns)?;
        dd.set_item("memory_wait_ns", s.memory_wait_ns)?;
        daemons.append(dd)?;
    }
    d.set_item("daemons", daemons)?;
    Ok(d.into())
}

/// The NUMA workloads: name, summary, parameters.
#[pyfunction]
fn numa_workloads(py: Python<'_>) -> PyResult<PyObject> {
    workload_list(py, pagelab_core::numa::workloads::list())
}

/// A streaming reader over a source, for `pagelab.Trace` iteration in Python.
#[pyclass(module = "pagelab._core")]
struct SourceReader {
    /// A Mutex makes the reader Sync, as PyO3 requires of a class that Python threads
    /// may share; iteration is sequential anyway.
    inner: Mutex<(Box<dyn RefSource>, RefBatch)>,
}

#[pymethods]
impl SourceReader {
    #[new]
    fn new(py: Python<'_>, source: &Bound<'_, PyDict>) -> PyResult<Self> {
        let spec = source_spec(source)?;
        let source = py.allow_threads(|| spec.open()).map_err(to_py)?;
        Ok(SourceReader { inner: Mutex::new((source, RefBatch::default())) })
    }

    /// Meta data: {"name", "page_size", "records" (or None), "processes": [(pid, name)]}.
    fn meta(&self, py: Python<'_>) -> PyResult<PyObject> {
        let guard = self.inner.lock().map_err(|_| PagelabError::new_err("reader poisoned"))?;
        let m = guard.0.meta();
        let d = PyDict::new(py);
        d.set_item("name", &m.name)?;
        d.set_item("page_size", m.page_size)?;
        d.set_item("records", m.records)?;
        d.set_item("processes", m.processes.clone())?;
        Ok(d.into())
    }

    /// The next batch as a dict of little-endian byte strings (id u32, pid u32, page u64,
    /// kind code u8, repeat u32, gap u32) for numpy.frombuffer, or None at the end.
    fn next_batch(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        let mut guard = self.inner.lock().map_err(|_| PagelabError::new_err("reader poisoned"))?;
        let (source, batch) = &mut *guard;
        let n = py.allow_threads(|| source.next_batch(batch)).map_err(to_py)?;
        if n == 0 {
            return Ok(None);
        }
        fn le<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
            v.iter().flat_map(|&x| f(x)).collect()
        }
        let b = &*batch;
        let d = PyDict::new(py);
        d.set_item("id", PyBytes::new(py, &le(&b.id, u32::to_le_bytes)))?;
        d.set_item("pid", PyBytes::new(py, &le(&b.pid, u32::to_le_bytes)))?;
        d.set_item("page", PyBytes::new(py, &le(&b.page, u64::to_le_bytes)))?;
        d.set_item("kind", PyBytes::new(py, &b.kind.iter().map(|k| *k as u8).collect::<Vec<u8>>()))?;
        d.set_item("repeat", PyBytes::new(py, &le(&b.repeat, u32::to_le_bytes)))?;
        d.set_item("gap", PyBytes::new(py, &le(&b.gap, u32::to_le_bytes)))?;
        Ok(Some(d.into()))
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PagelabError", m.py().get_type::<PagelabError>())?;
    m.add("ENGINE_VERSION", pagelab_core::ENGINE_VERSION)?;
    m.add("RESULTS_REVISION", pagelab_core::RESULTS_REVISION)?;
    m.add("GIT_COMMIT", env!("PAGELAB_GIT_COMMIT"))?;
    m.add_function(wrap_pyfunction!(workloads, m)?)?;
    m.add_function(wrap_pyfunction!(trace_formats, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(capture_lackey_fd, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(replay_passes, m)?)?;
    m.add_function(wrap_pyfunction!(mrc, m)?)?;
    m.add_function(wrap_pyfunction!(fault_parameters, m)?)?;
    m.add_function(wrap_pyfunction!(run_system, m)?)?;
    m.add_function(wrap_pyfunction!(run_gang, m)?)?;
    m.add_function(wrap_pyfunction!(run_numa, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_controls, m)?)?;
    m.add_function(wrap_pyfunction!(numa_workloads, m)?)?;
    m.add_class::<SourceReader>()?;
    Ok(())
}
