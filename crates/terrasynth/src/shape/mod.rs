//! shape stage (see docs/ARCHITECTURE.md).
