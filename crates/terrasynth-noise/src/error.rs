use thiserror::Error;

/// Everything that can go wrong when building or evaluating a noise.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum NoiseError {
    /// A parameter is outside its allowed range, or is NaN/infinite.
    #[error("invalid noise parameter `{name}` = {value}: allowed {allowed}")]
    InvalidParameter {
        /// Parameter name as written in a noise spec.
        name: &'static str,
        /// The value given, formatted.
        value: String,
        /// The allowed range or set, in words.
        allowed: String,
    },
    /// A noise spec could not be parsed (bad syntax, unknown key, wrong type).
    #[error("bad noise spec: {message}")]
    Parse {
        /// What the parser reported, on one line.
        message: String,
    },
    /// The operation is not available for this noise (e.g. a 3D sample of a 2D-only kind).
    #[error("unsupported: {what}")]
    Unsupported {
        /// What was asked and why it cannot be done.
        what: String,
    },
    /// The output buffer does not match the region.
    #[error("output buffer has {got} samples but the region needs {expected}")]
    BufferSize {
        /// Samples needed.
        expected: usize,
        /// Samples given.
        got: usize,
    },
}

impl NoiseError {
    /// An [`NoiseError::InvalidParameter`] for `name` = `value`, allowed `allowed`.
    pub(crate) fn invalid(
        name: &'static str,
        value: impl std::fmt::Display,
        allowed: impl Into<String>,
    ) -> Self {
        Self::InvalidParameter { name, value: value.to_string(), allowed: allowed.into() }
    }
}
