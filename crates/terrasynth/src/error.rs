use std::path::PathBuf;

use thiserror::Error;

/// Result alias for the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every error the library returns, sorted by cause.
#[derive(Debug, Error)]
pub enum Error {
    /// A parameter is outside its allowed range, or is NaN/infinite.
    #[error("invalid parameter `{name}` = {value}: allowed {allowed}")]
    InvalidParameter {
        /// Parameter name as a user writes it.
        name: String,
        /// The value given, formatted.
        value: String,
        /// The allowed range or set, in words.
        allowed: String,
    },
    /// A grid size that is zero, absurd, or whose buffers would not fit in memory.
    #[error("invalid size {width}x{height}: {reason}")]
    InvalidSize {
        /// Requested width in cells.
        width: usize,
        /// Requested height in cells.
        height: usize,
        /// Why it is refused, with the allowed range.
        reason: String,
    },
    /// Two grids that must have the same size do not.
    #[error("size mismatch: {what} is {got_w}x{got_h} but {expected_w}x{expected_h} is needed")]
    SizeMismatch {
        /// What was mismatched.
        what: String,
        /// Expected width.
        expected_w: usize,
        /// Expected height.
        expected_h: usize,
        /// Actual width.
        got_w: usize,
        /// Actual height.
        got_h: usize,
    },
    /// A noise could not be built.
    #[error(transparent)]
    Noise(#[from] terrasynth_noise::NoiseError),
    /// A recipe is malformed or invalid; the message lists every problem.
    #[error("invalid recipe: {0}")]
    Recipe(String),
    /// A file could not be decoded: corrupt, truncated, or of the wrong kind.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// An I/O error on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The job was cancelled through its [`crate::Progress`].
    #[error("cancelled")]
    Cancelled,
}

impl Error {
    /// Shorthand for [`Error::InvalidParameter`].
    pub fn param(name: impl Into<String>, value: impl std::fmt::Display, allowed: impl Into<String>) -> Self {
        Error::InvalidParameter { name: name.into(), value: value.to_string(), allowed: allowed.into() }
    }
}
