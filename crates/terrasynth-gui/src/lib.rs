//! terrasynth editor: a desktop GUI (eframe/egui) over the terrasynth library.
//!
//! - [`app::TerrainApp`]: the application. Persistent state is a [`document::Document`]
//!   (recipe + edits) and [`app::ViewSettings`]; runtime resources (terrain, textures, worker,
//!   undo stacks) are rebuilt from them.
//! - [`document`]: the edit list replayed on the recipe's output, and the versioned project
//!   file (`.tsproj`, JSON).
//! - [`worker`]: background jobs (preview then full generation, erosion, water, export).
//! - [`maprender`]: 2D view colours per cell; [`view3d`]: camera, LOD mesh, software fallback;
//!   [`view3d_gpu`]: the wgpu renderer of the 3D view.
//! - [`water`]: lakes, rivers from sources, flow accumulation; [`export`]: output files.
//! - [`mod@bench`]: the `--bench-ui` measurements.

pub mod app;
pub mod bench;
pub mod document;
pub mod export;
pub mod maprender;
pub mod view3d;
pub mod view3d_gpu;
pub mod water;
pub mod worker;

pub use app::{AppOptions, TerrainApp, ViewSettings};
