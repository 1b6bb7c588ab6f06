//! Fast single-pool replay.
