//! The timed system's configuration parser (the JSON the Python front hands over) and its
//! validation, on arbitrary text. Errors are fine; a panic is a bug.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pagelab_core::numa::NumaConfig;
use pagelab_core::system::SystemConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(cfg) = SystemConfig::from_json(text) {
        // what the run computes from a valid configuration before it starts
        let _ = cfg.max_samples();
        let _ = cfg.watermarks();
        for (i, p) in cfg.processes.iter().enumerate() {
            let _ = p.source(cfg.system.page_size, cfg.system.seed, i);
        }
    }
    let _ = NumaConfig::from_json(text);
});
