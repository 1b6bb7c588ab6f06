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
