//! Typed errors. Every variant displays as one line that names the file (or input),
//! the position and what was expected, so the CLI can show it verbatim.

use std::path::PathBuf;

/// Where in an input a problem was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Position {
    /// Byte offset into a binary file (after decompression for compressed bodies).
    Byte(u64),
    /// 1-based line number of a text file.
    Line(u64),
    /// 0-based record index of a binary trace.
    Record(u64),
    /// No meaningful position (e.g. the file could not be opened).
    None,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Position::Byte(b) => write!(f, "byte {b}"),
            Position::Line(l) => write!(f, "line {l}"),
            Position::Record(r) => write!(f, "record {r}"),
            Position::None => Ok(()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed input data: `file: position: expected ...`.
    #[error("{}{}: {message}", file.display(), position_suffix(position))]
    Format { file: PathBuf, position: Position, message: String },

    /// Operating-system I/O failure on a named file.
    #[error("{}: {source}", file.display())]
    Io { file: PathBuf, #[source] source: std::io::Error },

    /// A bad parameter or configuration value: `what: message`.
    #[error("{what}: {message}")]
    Invalid { what: String, message: String },

    /// Memory for a structure sized by a user value could not be had:
    /// `what: cannot allocate ...`.
    #[error("{what}: cannot allocate {bytes} bytes for {count} entries (not enough memory)")]
    Allocation { what: String, count: u64, bytes: u64 },

    /// The caller asked to stop (e.g. Ctrl-C seen by a progress callback).
    #[error("interrupted")]
    Interrupted,
}

fn position_suffix(p: &Position) -> String {
    match p {
        Position::None => String::new(),
        other => format!(": {other}"),
    }
}

impl Error {
    pub fn format(file: impl Into<PathBuf>, position: Position, message: impl Into<String>) -> Self {
        Error::Format { file: file.into(), position, message: message.into() }
    }
    pub fn io(file: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { file: file.into(), source }
    }
    pub fn invalid(what: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid { what: what.into(), message: message.into() }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// A vector of `n` copies of `value`, allocated fallibly: an allocation the machine
/// cannot give is an [`Error::Allocation`] naming `what` (the configuration key that
/// sized it), not an abort.
pub fn try_filled_vec<T: Clone>(what: &str, n: u64, value: T) -> Result<Vec<T>> {
    let fail = || Error::Allocation { what: what.to_string(), count: n, bytes: n.saturating_mul(std::mem::size_of::<T>() as u64) };
    let len = usize::try_from(n).map_err(|_| fail())?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| fail())?;
    v.resize(len, value);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_allocation_is_an_error_naming_the_key() {
        let e = try_filled_vec("system.swap_slots", u64::MAX / 2, 0u32).unwrap_err();
        assert!(matches!(e, Error::Allocation { .. }));
        assert!(e.to_string().starts_with("system.swap_slots: cannot allocate"), "{e}");
        assert_eq!(try_filled_vec("x", 3, 7u8).unwrap(), vec![7, 7, 7]);
    }
}
