//! Recipes: plain serde data describing a whole pipeline ([`Recipe`]), validated once into a
//! runtime [`Pipeline`]; the [`registry()`] of every step with its
//! [`ParamSpec`](crate::step::ParamSpec)s; built-in
//! [`presets`]; [`project`]: a recipe plus hand edits (strokes, river sources, erosion runs),
//! the `.tsproj` file the editor saves and `terrasynth generate --project` runs; [`mask`]: a
//! step limited to a height range, a slope range or a painted mask (`[steps.mask]`).
//!
//! ```
//! use terrasynth::recipe::{Pipeline, PipelineProgress, Recipe, registry};
//! let recipe = Recipe::from_toml_str("width = 33\nheight = 33\nseed = 1\n").unwrap();
//! let pipeline = Pipeline::new(recipe, &registry()).unwrap();
//! let out = pipeline.run(&PipelineProgress::new()).unwrap();
//! assert_eq!(out.terrain.height.width(), 33);
//! ```

pub mod eval;
pub mod mask;
pub mod model;
pub mod observe;
pub mod pipeline;
pub mod presets;
pub mod project;
pub mod registry;
pub mod world;
pub mod world_edits;

pub use mask::{MaskStroke, PaintedMask, StepMask};
pub use model::{Exports, PaletteSpec, PaletteStop, Recipe, StepEntry, WorldSpec};
pub use observe::{ErosionLog, ErosionRecorder, RunObserver, StepEvent, StepScore, TracePoint};
pub use pipeline::{Pipeline, PipelineProgress, RunOutput, StepTiming, find_step, world_frame};
pub use presets::{Preset, preset, presets};
pub use registry::registry;
pub use world::{World, chunk_origin};
pub use world_edits::{EditedWindow, WorldEdit, WorldEdits, edited_window};
