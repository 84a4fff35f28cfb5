//! terrasynth: procedural terrain generation.
//!
//! The modules are layers; each imports only from its own layer or lower ones (bottom to top):
//! 1. [`grid`] (with neighbourhoods and boundaries), [`progress`], the error type, [`memory`];
//! 2. [`step`]: the core every stage builds on (`Terrain`, `Step`, `ParamSpec`, `Params`);
//! 3. [`generate`]; 4. [`shape`]; 5. [`hydro`]; 6. [`erode`] (stream power routes with
//!    [`hydro`]); 7. [`analyze`]; 8. [`render`]; 9. [`io`];
//! 10. [`recipe`]: the [`Recipe`] model, the [`Pipeline`], the registry of every step, presets.
//!
//! `docs/ARCHITECTURE.md` holds the table and `tests/layers.rs` enforces it. Every stage works
//! on a [`Heightmap`] (a [`Grid<f32>`]).
//!
//! ```
//! use terrasynth::Heightmap;
//! let mut map = Heightmap::new(4, 3, 1.0).unwrap();
//! map[(1, 2)] = 5.0;
//! assert_eq!(map.min_max(), Some((0.0, 5.0)));
//! ```

pub mod analyze;
pub mod erode;
mod error;
/// Writing a terrain's files needs every file format: the module is absent from builds without
/// the default features `png`, `exr`, `tiff` and `gltf` (a library user who only generates
/// heights in memory may drop them).
#[cfg(all(feature = "png", feature = "exr", feature = "tiff", feature = "gltf"))]
pub mod export;
pub mod generate;
pub mod grid;
pub mod hydro;
pub mod io;
pub mod memory;
pub mod progress;
pub mod recipe;
pub mod render;
pub mod shape;
pub mod step;

pub use error::{Error, Problem, Result, join_problems};
pub use grid::{Grid, Heightmap};
pub use progress::Progress;
pub use recipe::{Pipeline, Recipe, World};
pub use terrasynth_noise as noise;
