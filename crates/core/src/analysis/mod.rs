//! Stack distances and miss-ratio curves.
