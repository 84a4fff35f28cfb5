//! The real editor driven headless with egui_kittest (one test binary, so the large GUI test
//! executable is linked once).
//!
//! - `app`: generate, parameters, modes, strokes, rivers, projects, export, errors, erosion.
//! - `snapshots`: the window rendered with wgpu (software Vulkan on CI) compared with the PNGs
//!   in `tests/snapshots/` (thresholds in `kittest.toml`).
//! - `close_recovery`: the close prompt and the periodic recovery file.
//! - `masks`: the Mask section of a step and the Paint mask brush.
//! - `start_screen`: the start screen, the help panel per mode, the river modes and gallery.
//! - `recovery`: the recovery file brings the work back after a SIGKILL (issue 15).
//! - `world`: the world view: strokes across chunk borders, save and reopen, far zoom.

mod app;
mod close_recovery;
mod common;
mod controls;
mod edits;
mod fields;
mod masks;
mod project;
mod recovery;
mod snapshots;
mod start_screen;
mod world;
