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
    /// The output buffer does not match the region.
    #[error("output buffer has {got} samples but the region needs {expected}")]
    BufferSize {
        /// Samples needed.
        expected: usize,
        /// Samples given.
        got: usize,
    },
}
