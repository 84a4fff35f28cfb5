//! The real editor driven headless with egui_kittest (one test binary, so the large GUI test
//! executable is linked once).
//!
//! - `app`: generate, parameters, modes, strokes, rivers, projects, export, errors, erosion.

mod app;
mod common;
