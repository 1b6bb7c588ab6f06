//! Analyses of reference streams: LRU stack distances and the exact LRU fault curve.

mod fault_parameters;
mod stack_distance;

pub use fault_parameters::{fault_parameters, FaultParameters, Parameter, Unit, FINISHED, MISSING, REFAULTED};
pub use stack_distance::{mrc, LruFaultCurve, StackDistances};
