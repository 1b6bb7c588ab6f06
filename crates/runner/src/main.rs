//! `pagelab-runner --process JSON [--page-size N] [--seed N] [--cpu-ns-per-ref F]
//! [--cpu-ns-per-instruction F] [--progress-ms N] [--check]`: performs one process's reference
//! stream for real and prints a JSON report on stdout (progress lines, JSON, on
//! stderr). JSON is a `[[process]]` table of a system configuration in the engine's
//! structure (workload + params + seed, or trace + format; cpu_ns_per_ref and use_gaps
//! override the flags). Errors: one line on stderr, exit status 2 for a usage mistake,
//! 1 for a failed run. `--check` only validates the table and opens its stream.

use std::process::ExitCode;

use pagelab_core::system::config::ProcessConfig;
use pagelab_runner::{perform, RunnerOptions};

const USAGE: &str = "usage: pagelab-runner --process JSON [--page-size N] [--seed N] [--cpu-ns-per-ref F] \
                     [--cpu-ns-per-instruction F] [--progress-ms N] [--check]";

struct Args {
    process: String,
    page_size: u64,
    seed: u64,
    cpu_ns_per_ref: f64,
    cpu_ns_per_instruction: f64,
    progress_ms: u64,
    /// Only check the process table and open its stream, perform nothing.
    check: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args { process: String::new(), page_size: 4096, seed: 0, cpu_ns_per_ref: 20.0, cpu_ns_per_instruction: 1.0, progress_ms: 0, check: false };
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
            other => return Err(format!("unknown option '{other}'")),
        }
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
    match perform(&spec, &opts, &mut std::io::stderr()) {
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
