//! Built-in workload generators.
