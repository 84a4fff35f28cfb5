//! terrasynth editor: a desktop GUI (eframe/egui) over the terrasynth library.
//!
//! - [`editor::Editor`]: the model, with no egui types: the [`document::Document`] (recipe +
//!   edits), the [`settings::ViewSettings`], undo/redo, generation requests, jobs, map and
//!   water versions, project files and the recovery file. Unit-tested without a window.
//! - [`panels`]: small views over the model, one per panel (`ui(&mut self, ui, &mut Editor)`):
//!   top bar, recipe, steps, brush, erosion, 2D map, 3D view, status bar, help, dialogs.
//! - [`app::TerrainApp`]: the window: lays the panels out around the model.
//! - [`limits`]: the widgets' ranges, from the library's `ParamSpec`s and brush limits.
//! - [`settings`]: persistent view settings and start-up options (serde, no egui types).
//! - [`document`]: the edit list replayed on the recipe's output, and the versioned project
//!   file (`.tsproj`, JSON).
//! - [`worker`]: background jobs (preview then full generation, erosion, water, export).
//! - [`maprender`]: 2D view colours per cell (the library's palette and hillshade);
//!   [`view3d`]: camera, LOD mesh, software rasteriser; [`view3d_gpu`]: the wgpu renderer of
//!   the 3D view.
//! - [`mask_paint`]: the Paint mask brush and the mask overlay (step masks).
//! - [`water`]: lakes, rivers from sources, flow accumulation; [`export`]: output files.
//! - [`mod@bench`]: the `--bench-ui` measurements.
//! - [`world_view`]: `--world PRESET`, an endless world panned and zoomed without edges, made
//!   chunk by chunk on worker threads.

pub mod app;
pub mod bench;
pub mod document;
pub mod editor;
pub mod export;
pub mod limits;
pub mod maprender;
pub mod mask_paint;
pub mod panels;
pub mod settings;
pub mod start;
pub mod view3d;
pub mod view3d_gpu;
pub mod water;
pub mod worker;
pub mod world_view;

pub use app::{AppOptions, TerrainApp, ViewSettings};
pub use editor::Editor;
