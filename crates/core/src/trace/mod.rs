//! Reference model, trace formats (read + write) and converters.
//!
//! Public surface used by the rest of the engine and the bindings:
//! [`TraceFormat`], [`open_trace`], [`trace_info`], [`convert`], [`capture_lackey`],
//! [`check_page_size`]. Each format lives in its own file.

mod block_crc;
mod densify;
mod input;
mod lackey;
mod oracle;
mod pagelab_binary;
mod range;
mod reference;
mod text;
mod vec_source;
mod writer;
#[cfg(test)]
mod format_tests;

pub mod format;
pub mod info;
pub mod convert;
pub mod capture;

pub use densify::Densifier;
pub use reference::*;
pub use vec_source::VecSource;
pub use range::RecordRange;

pub use capture::{capture_lackey, CaptureStats};
pub use convert::convert;
pub use format::{check_page_size, open_trace, TraceFormat};
pub use info::{trace_info, ProcessInfo, TraceInfo};

/// A progress hook: called with the number of records processed so far (at least once
/// per batch, counts restart from 0 for each pass); returning `false` asks the caller to
/// stop, which it does by returning [`crate::Error::Interrupted`].
pub type Progress<'a> = &'a mut dyn FnMut(u64) -> bool;
