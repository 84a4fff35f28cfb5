//! hydro stage (see docs/ARCHITECTURE.md).
