//! terrasynth: procedural terrain generation.
//!
//! Data flows one way: [`recipe`] → [`generate`] → [`shape`] → [`erode`] → [`hydro`] →
//! [`analyze`] / [`render`] → [`io`]. Every stage works on a [`Heightmap`] (a [`Grid<f32>`]).
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
pub mod generate;
pub mod grid;
pub mod hydro;
pub mod io;
pub mod progress;
pub mod recipe;
pub mod render;
pub mod shape;
pub mod step;

pub use error::{Error, Result};
pub use grid::{Grid, Heightmap};
pub use progress::Progress;
pub use recipe::{Pipeline, Recipe};
pub use terrasynth_noise as noise;
