//! shape stage (see docs/ARCHITECTURE.md).

pub mod brush;
