//! Analyses of reference streams: LRU stack distances and the exact LRU fault curve.

mod stack_distance;

pub use stack_distance::{mrc, LruFaultCurve, StackDistances};
