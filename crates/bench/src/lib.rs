//! Benchmarks only: see benches/. (A library target so that cargo accepts the crate.)
