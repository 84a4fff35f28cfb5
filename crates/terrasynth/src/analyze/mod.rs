//! analyze stage (see docs/ARCHITECTURE.md).
