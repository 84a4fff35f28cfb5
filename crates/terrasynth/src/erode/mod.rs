//! Erosion: thermal, hydraulic, Olsen's fast variants, droplets and stream power.
//!
//! Every process is an agent noun ([`ThermalEroder`], [`ThermalOlsenEroder`],
//! [`OlsenEroder`], [`HydraulicEroder`], [`HydraulicOlsenEroder`], [`DropletEroder`],
//! [`StreamPowerEroder`]) that owns an `f64` copy of the surface and advances it by
//! [`Eroder::run_one_step`]; the caller owns the time loop (landlab / fastscapelib style).
//! Heights are kept in `f64` while eroding so that mass budgets close to ~1e-12 relative;
//! [`Eroder::write_to`] rounds them back into a [`Heightmap`].
//!
//! The recipe steps (`thermal`, `thermal-olsen`, `hydraulic`, `hydraulic-olsen`,
//! `olsen-erosion`, `droplets`, `stream-power`, see [`steps`]) run that loop for `iterations`
//! iterations with progress and cancellation ([`run_iterations`], whose per-iteration hook
//! lets [`crate::analyze::run_traced`] record Olsen's erosion score ε every k iterations).
//!
//! Sources: Olsen 2004, "Realtime Procedural Terrain Generation" (seed 001 §3; thermal after
//! Musgrave et al. 1989, hydraulic after Beneš & Forsbach 2002); Beyer 2015 (droplets);
//! Braun & Willett 2013 (stream power). Details and measured timings: `docs/EROSION.md`.
//!
//! ```
//! use terrasynth::Heightmap;
//! use terrasynth::erode::{Eroder, ThermalOlsenEroder, ThermalOlsenParams};
//! let mut map = Heightmap::from_fn(33, 33, 1.0, |x, y| ((x * 7 + y * 3) % 5) as f32 / 5.0).unwrap();
//! let mut eroder = ThermalOlsenEroder::new(&map, ThermalOlsenParams::default()).unwrap();
//! let before = eroder.volume();
//! for _ in 0..10 {
//!     eroder.run_one_step().unwrap();
//! }
//! assert!((eroder.volume() - before).abs() < 1e-9 * before);
//! eroder.write_to(&mut map).unwrap();
//! ```

mod droplets;
mod exchange;
mod floodplain;
mod hydraulic;
mod level_tiles;
mod multiscale;
mod olsen_inplace;
mod rates;
mod run;
mod steps;
mod stream_power;
mod talus;
mod thermal;

pub use droplets::{DropletEroder, DropletParams, WorldDropletEroder};
pub use hydraulic::{HydraulicEroder, HydraulicOlsenEroder, HydraulicOlsenParams, HydraulicParams};
pub use multiscale::{CoarseDroplets, CoarseToFine};
pub use olsen_inplace::Sweep;
pub use rates::RateFields;
pub use run::run_iterations;
pub use steps::{Erosion, build_eroder, build_in, iteration_count, reach_of, run_erosion, steps};
pub use stream_power::{StreamPowerEroder, StreamPowerParams};
pub use thermal::{
    OlsenEroder, ThermalEroder, ThermalOlsenEroder, ThermalOlsenParams, ThermalParams, talus_from_k,
};

use crate::{Grid, Heightmap, Result};

/// A surface process advanced one step at a time; the caller owns the loop.
pub trait Eroder: Send {
    /// Advances the process by one iteration (one sweep, one batch of droplets, one time step).
    fn run_one_step(&mut self) -> Result<()>;
    /// The current surface, in `f64`.
    fn surface(&self) -> &Grid<f64>;
    /// The surface the last [`Eroder::run_one_step`] changed, which [`run_iterations`] checks
    /// for non-finite heights: [`Eroder::surface`], except for the coarse steps of
    /// [`CoarseToFine`] (its coarse grid; the full-resolution surface does not change then).
    fn stepped_surface(&self) -> &Grid<f64> {
        self.surface()
    }
    /// Rounds the current surface into `out` (same size).
    fn write_to(&self, out: &mut Heightmap) -> Result<()> {
        write_surface(self.surface(), out)
    }
    /// Σ h over all cells, in `f64` (height units × cells); for the hydraulic erosions, the
    /// conserved total including material held in the water (see each type).
    fn volume(&self) -> f64 {
        self.surface().as_slice().iter().sum()
    }
    /// Ends a run: the hydraulic erosions deposit the sediment their water still holds.
    /// Others do nothing.
    fn finish(&mut self) {}
    /// Water depth per cell (row-major) for processes that keep a water map.
    fn water(&self) -> Option<&[f64]> {
        None
    }
}

/// Copies a heightmap into an `f64` grid.
pub(crate) fn to_f64(map: &Heightmap) -> Grid<f64> {
    map.par_map(|&v| v as f64)
}

/// Rounds an `f64` surface into a heightmap of the same size.
pub(crate) fn write_surface(surface: &Grid<f64>, out: &mut Heightmap) -> Result<()> {
    if !surface.same_size(out) {
        return Err(crate::Error::SizeMismatch {
            what: "erosion output".into(),
            expected_w: surface.width(),
            expected_h: surface.height(),
            got_w: out.width(),
            got_h: out.height(),
        });
    }
    for (o, &s) in out.as_mut_slice().iter_mut().zip(surface.as_slice()) {
        *o = s as f32;
    }
    Ok(())
}

/// Rejects a non-finite or out-of-range number with [`crate::Error::InvalidParameter`].
pub(crate) fn check_range(name: &str, value: f64, min: f64, max: f64) -> Result<()> {
    if value.is_finite() && value >= min && value <= max {
        Ok(())
    } else {
        Err(crate::Error::param(name, value, format!("a number in [{min}, {max}]")))
    }
}

/// Rejects a heightmap (or an eroder's `f64` surface) holding NaN or infinite heights.
pub(crate) fn check_finite<T: Copy + Into<f64>>(map: &Grid<T>) -> Result<()> {
    if let Some(v) = map.as_slice().iter().map(|&v| v.into()).find(|v: &f64| !v.is_finite()) {
        return Err(crate::Error::param("height", v, "finite heights (no NaN or infinity)"));
    }
    Ok(())
}
