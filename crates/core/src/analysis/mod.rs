//! Analyses of reference streams: LRU stack distances and the exact LRU fault curve.

mod fault_parameters;
mod opt_stack_distance;
mod stack_distance;

pub use fault_parameters::{fault_parameters, FaultParameters, Parameter, Unit, FINISHED, MISSING, REFAULTED};
pub use opt_stack_distance::{opt_mrc, OptStackDistances};
pub use stack_distance::{mrc, LruFaultCurve, StackDistances};
