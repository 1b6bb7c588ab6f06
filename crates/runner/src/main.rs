//! `pagelab-runner --process JSON [--page-size N] [--seed N] [--cpu-ns-per-ref F]
//! [--cpu-ns-per-instruction F] [--progress-ms N] [--check]`: performs one process's reference
//! stream for real and prints a JSON report on stdout (progress lines, JSON, on
//! stderr). JSON is a `[[process]]` table of a system configuration in the engine's
//! structure (workload + params + seed, or trace + format; cpu_ns_per_ref and use_gaps
//! override the flags). Errors: one line on stderr, exit status 2 for a usage mistake,
//! 1 for a failed run. `--check` only validates the table and opens its stream.
//!
//! Split in two (the kernel backend's way, so that the run's memory cgroup holds the
//! stream's pages and not the generator's buffers): `--emit` generates the stream and
//! writes its records to stdout (wire.rs), `--touch` reads them from stdin and performs
//! them; both take the same --process table.
//!
//! `pagelab-runner --probe-disk DIR [--probe-mb N] [--probe-reads N]` and
//! `pagelab-runner --probe-faults PAGES` measure the device under DIR and the kernel's
//! fault costs instead (the calibration, docs/kernel-backend.md) and print them as JSON.

use std::process::ExitCode;

use pagelab_core::system::config::ProcessConfig;
use pagelab_runner::{perform, Records, RunnerOptions};

const USAGE: &str = "usage: pagelab-runner --process JSON [--page-size N] [--seed N] [--cpu-ns-per-ref F] \
                     [--cpu-ns-per-instruction F] [--progress-ms N] [--emit | --touch] [--check]\n       \
                     pagelab-runner --probe-disk DIR [--probe-mb N] [--probe-reads N]\n       \
                     pagelab-runner --probe-faults PAGES";

struct Args {
    process: String,
    page_size: u64,
    seed: u64,
    cpu_ns_per_ref: f64,
    cpu_ns_per_instruction: f64,
    progress_ms: u64,
    /// Only check the process table and open its stream, perform nothing.
    check: bool,
    /// Only generate the stream, as records on stdout.
    emit: bool,
    /// Perform the records read from stdin (another runner's --emit).
    touch: bool,
    probe_disk: Option<String>,
    probe_mb: u64,
    probe_reads: u64,
    probe_faults: Option<u64>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        process: String::new(),
        page_size: 4096,
        seed: 0,
        cpu_ns_per_ref: 20.0,
        cpu_ns_per_instruction: 1.0,
        progress_ms: 0,
        check: false,
        emit: false,
        touch: false,
        probe_disk: None,
        probe_mb: 256,
        probe_reads: 2000,
        probe_faults: None,
    };
    let mut it = std::env::args().skip(1);
    let mut seen_process = false;
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        if flag == "--check" {
            a.check = true;
            continue;
        }
        if flag == "--emit" || flag == "--touch" {
            if (flag == "--emit" && a.touch) || (flag == "--touch" && a.emit) {
                return Err("--emit and --touch: give one (each is half of a run)".into());
            }
            a.emit |= flag == "--emit";
            a.touch |= flag == "--touch";
            continue;
        }

        let value = it.next().ok_or_else(|| format!("{flag}: expected a value after it"))?;
        let num = |what: &str| -> Result<u64, String> {
            value.parse::<u64>().map_err(|_| format!("{what}: expected a whole number >= 0, got '{value}'"))
        };
        let real = |what: &str| -> Result<f64, String> {
            match value.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                _ => Err(format!("{what}: expected a number >= 0, got '{value}'")),
            }
        };
        match flag.as_str() {
            "--process" => {
                a.process = value.clone();
                seen_process = true;
            }
            "--page-size" => a.page_size = num("--page-size")?,
            "--seed" => a.seed = num("--seed")?,
            "--cpu-ns-per-ref" => a.cpu_ns_per_ref = real("--cpu-ns-per-ref")?,
            "--cpu-ns-per-instruction" => a.cpu_ns_per_instruction = real("--cpu-ns-per-instruction")?,
            "--progress-ms" => a.progress_ms = num("--progress-ms")?,
            "--probe-disk" => a.probe_disk = Some(value.clone()),
            "--probe-mb" => a.probe_mb = num("--probe-mb")?,
            "--probe-reads" => a.probe_reads = num("--probe-reads")?,
            "--probe-faults" => a.probe_faults = Some(num("--probe-faults")?),
            other => return Err(format!("unknown option '{other}'")),
        }
    }
    if a.probe_disk.is_some() || a.probe_faults.is_some() {
        if seen_process {
            return Err("--process: a probe runs no stream (give --process or a probe, not both)".into());
        }
        return Ok(a);
    }
    if !seen_process {
        return Err("--process: missing (a [[process]] table as JSON)".into());
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(msg) if msg.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("pagelab-runner: error: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Some(dir) = &args.probe_disk {
        return print_probe(pagelab_runner::probe_disk::probe_disk(std::path::Path::new(dir), args.probe_mb, args.probe_reads as usize).map_err(|e| e.to_string()));
    }
    if let Some(pages) = args.probe_faults {
        return print_probe(pagelab_runner::probe_faults::probe_faults(pages));
    }
    let process: ProcessConfig = match serde_json::from_str(&args.process) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("pagelab-runner: error: --process: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = pagelab_core::trace::check_page_size(args.page_size) {
        eprintln!("pagelab-runner: error: --page-size: {e}");
        return ExitCode::from(2);
    }
    let spec = match process.source(args.page_size, args.seed, 0) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("pagelab-runner: error: {}: {e}", process.name);
            return ExitCode::from(2);
        }
    };
    if args.emit {
        return emit(&spec, &process.name);
    }
    if args.check {
        return match spec.open() {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("pagelab-runner: error: {}: {e}", process.name);
                ExitCode::from(2)
            }
        };
    }
    let opts = RunnerOptions {
        page_size: args.page_size,
        cpu_ns_per_ref: process.cpu_ns_per_ref.unwrap_or(args.cpu_ns_per_ref),
        cpu_ns_per_instruction: args.cpu_ns_per_instruction,
        use_gaps: process.use_gaps,
        progress_ms: args.progress_ms,
    };
    let records = if args.touch { Records::Wire(Box::new(std::io::stdin().lock())) } else { Records::Stream(&spec) };
    match perform(records, &opts, &mut std::io::stderr()) {
        Ok(report) => {
            println!("{}", serde_json::to_string(&report).expect("a plain struct"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pagelab-runner: error: {}: {e}", process.name);
            ExitCode::FAILURE
        }
    }
}

/// A probe's result as one JSON line, or its error as one line (exit status 1).
fn print_probe<T: serde::Serialize>(result: Result<T, String>) -> ExitCode {
    match result {
        Ok(r) => {
            println!("{}", serde_json::to_string(&r).expect("a plain struct"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pagelab-runner: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--emit`: the stream's records on stdout. A reader that went away (the performer
/// ended) ends the emitter quietly: the performer's own exit says what happened.
fn emit(spec: &pagelab_core::source::SourceSpec, name: &str) -> ExitCode {
    use std::io::Write;

    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("pagelab-runner: error: {name}: {e}");
        ExitCode::FAILURE
    };
    let mut src = match spec.open() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut b = pagelab_core::trace::RefBatch::with_capacity(pagelab_core::trace::BATCH_RECORDS);
    loop {
        match src.next_batch(&mut b) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return fail(&e),
        }
        if let Err(e) = pagelab_runner::wire::write_batch(&mut out, &b) {
            return if e.kind() == std::io::ErrorKind::BrokenPipe { ExitCode::SUCCESS } else { fail(&e) };
        }
    }
    match out.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => fail(&e),
        _ => ExitCode::SUCCESS,
    }
}
