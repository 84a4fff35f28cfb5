//! Shaping steps: they reshape an existing terrain.
//!
//! | step | type | source |
//! |---|---|---|
//! | `perturb` | [`Perturb`] | seed 001 §3.2 |
//! | `spectral-overlay` | [`SpectralOverlay`] | seed 001 §3.1 |
//! | `falloff` | [`Falloff`] | seed 003 |
//! | `island` | [`Island`] | seed 004 §8 |
//! | `archipelago` | [`Archipelago`] | seed 004 §8 (several centres) |
//! | `voronoi-regions` | [`VoronoiRegions`] | seed 001 §3.3.3 |
//! | `normalize`, `clamp`, `scale`, `terrace` | [`Normalize`], [`Clamp`], [`Scale`], [`Terrace`] | standard |
//! | `blend` | [`Blend`] | Olsen 2004 combination |
//! | `sea-level` | [`SeaLevel`] | seeds 003, 004 §7 |
//!
//! Steps that multiply a weight into the terrain (fall-off, island, regions) do it relative to
//! the map's minimum, `h' = lo + (h − lo) · w`, so a weight of 0 means "lowest height" whatever
//! the generator's units. The terraforming brushes live in [`brush`].
//!
//! ```
//! use terrasynth::shape::Terrace;
//! let mut map = terrasynth::Heightmap::from_fn(5, 1, 1.0, |x, _| x as f32 / 4.0).unwrap();
//! Terrace::new(2, 0.99).unwrap().apply(&mut map);
//! assert_eq!(map.as_slice()[0], 0.0);
//! assert!(map.as_slice()[1] < 0.01); // flat tread at the band's lower level
//! ```

pub mod brush;

mod basic;
mod blend;
mod falloff;
mod regions;
mod retouch;
mod world;

pub use basic::{Clamp, Normalize, Scale, SeaLevel, SeaMode, Terrace};
pub use blend::{BLEND_SOURCES, Blend, BlendMask, BlendMode};
pub use falloff::{Archipelago, Falloff, FalloffShape, Island, eval_curve};
pub use regions::{RegionMode, VoronoiRegions};
pub use retouch::{Perturb, SpectralOverlay};

use crate::step::StepInfo;

/// Registry entries of every shaping step (the brushes are interactive, not recipe steps).
pub fn steps() -> Vec<StepInfo> {
    vec![
        VoronoiRegions::info(),
        Perturb::info(),
        SpectralOverlay::info(),
        Falloff::info(),
        Island::info(),
        Archipelago::info(),
        Normalize::info(),
        Clamp::info(),
        Scale::info(),
        Terrace::info(),
        Blend::info(),
        SeaLevel::info(),
    ]
}
