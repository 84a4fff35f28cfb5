//! The fuzz entry functions (see `entries.rs`), as a library for the targets.
pub mod entries;
pub use entries::*;
