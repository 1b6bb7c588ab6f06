//! The pagelab binary reader on zstd streams: the input, compressed as a whole-file zstd
//! stream (so that every input is valid zstd and the fuzzer controls what the reader
//! decompresses: the header, a raw or compressed body, the trailer), and the input as
//! it is (a compressed-body .plt or any zstd frame).
#![no_main]
use libfuzzer_sys::fuzz_target;
use pagelab_core::trace::TraceFormat;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    if let Ok(z) = zstd::encode_all(rest, 1) {
        common::read_all("x.plt.zst", &z, Some(TraceFormat::Pagelab), common::page_size(selector));
    }
    common::read_all("y.plt.zst", rest, None, common::page_size(selector));
});
