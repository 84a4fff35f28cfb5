//! render stage (see docs/ARCHITECTURE.md).
