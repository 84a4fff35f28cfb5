//! io stage (see docs/ARCHITECTURE.md).
