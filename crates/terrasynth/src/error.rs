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
    /// A terrain that cannot be exported (empty, or with non-finite heights or sea level).
    #[error("{reason}")]
    InvalidTerrain {
        /// What is wrong, in words.
        reason: String,
    },
    /// A `mesh.glb` would be over glTF's 4 GiB limit (checked before anything is written).
    #[error(
        "mesh.glb of a {width}x{height} map at lod {lod} would be {gib:.2} GiB, over the 4 GiB limit of GLB: \
         use --lod {min_lod} or more (or exports.lod), or set exports.glb = false"
    )]
    GlbTooLarge {
        /// Map width in cells.
        width: usize,
        /// Map height in cells.
        height: usize,
        /// The mesh LOD asked for.
        lod: u32,
        /// The GLB's size in GiB.
        gib: f64,
        /// The smallest LOD whose GLB fits.
        min_lod: u32,
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
