//! Reference model, trace formats (read + write) and converters.

mod densify;
mod reference;
mod vec_source;

pub use densify::Densifier;
pub use reference::*;
pub use vec_source::VecSource;
