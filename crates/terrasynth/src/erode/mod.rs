//! erode stage (see docs/ARCHITECTURE.md).
