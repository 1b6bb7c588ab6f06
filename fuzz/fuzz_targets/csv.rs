//! The csv reader on arbitrary bytes (first byte: the page size to read at).
#![no_main]
use libfuzzer_sys::fuzz_target;
use pagelab_core::trace::TraceFormat;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    common::read_all("x.csv", rest, Some(TraceFormat::Csv), common::page_size(selector));
    // detection too, by content and name
    common::read_all("x.csv", rest, None, None);
});
