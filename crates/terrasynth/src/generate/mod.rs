//! generate stage (see docs/ARCHITECTURE.md).
