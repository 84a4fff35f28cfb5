//! Base generators: they overwrite `terrain.height` at its current size from the step's seed.
//!
//! | step | type | source |
//! |---|---|---|
//! | `mdp` | [`MidpointDisplacement`] | seed 000 (queue form, Python annex) |
//! | `diamond-square` | [`DiamondSquare`] | seed 001 §1.1.1 |
//! | `triangular` | [`Triangular`] | seed 001 §1.1.1 (base triangulaire) |
//! | `spectral` | [`Spectral`] | seed 001 §1.1.2 |
//! | `voronoi` | [`Voronoi`] (+ [`region_map`]) | seed 001 §1.2, §3.3.3 |
//! | `fault` | [`Fault`] | seed 001 §1 (named); Shankel 2000 |
//! | `circles` | [`Circles`] | seed 001 §1 (named); hill algorithm |
//! | `voronoi-ds` | [`VoronoiDiamondSquare`] | seed 001 §2.2 |
//! | `noise` | [`NoiseTerrain`] | terrasynth-noise (seeds 002–004) |
//!
//! Every generator is a plain value type with documented fields, a `PARAMS` list of
//! [`ParamSpec`](crate::step::ParamSpec)s (the same ranges check both `new` and recipes), and
//! the [`Generator`] trait, which makes a [`Heightmap`] of any size from a seed. Generators that
//! need a `2^n + 1` square build the next valid square and keep its top-left window, so any
//! size (e.g. 1000 × 600) works.
//!
//! ```
//! use terrasynth::generate::{DiamondSquare, Generator};
//! let map = DiamondSquare::new(1.0, 1.0, 0).unwrap()
//!     .generate(40, 25, 7, &terrasynth::Progress::new()).unwrap();
//! assert_eq!((map.width(), map.height()), (40, 25));
//! ```

mod circles;
pub(crate) mod common;
mod diamond_square;
mod fault;
mod mdp;
mod noise;
mod spectral;
mod triangular;
mod voronoi;
mod voronoi_ds;

pub use circles::{Circles, HillProfile};
pub use diamond_square::DiamondSquare;
pub use fault::Fault;
pub use mdp::MidpointDisplacement;
pub use noise::NoiseTerrain;
pub use spectral::{Interpolation, Spectral};
pub use triangular::{TriangleArray, TriangleMask, TriangleShape, Triangular};
pub use voronoi::{
    MARGIN_SPACINGS, MAX_COEFFICIENTS, Metric, Voronoi, feature_points, feature_points_with_margin,
    region_map,
};
pub(crate) use voronoi::{MAX_POINTS_PER_CELL, WorldPoints};
pub use voronoi_ds::VoronoiDiamondSquare;

use crate::step::{Frame, Reach, Step, StepContext, StepInfo, Terrain, WorldFrame};
use crate::{Error, Heightmap, Progress, Result};

/// Something that makes a terrain from nothing but a size and a seed.
pub trait Generator: Send + Sync + std::fmt::Debug {
    /// A `width × height` heightmap (cell size 1) for `seed`. The same inputs give the same
    /// bits on any machine and any thread count. Long generators report to `progress` and stop
    /// with [`Error::Cancelled`](crate::Error::Cancelled) when it is cancelled.
    fn generate(&self, width: usize, height: usize, seed: u64, progress: &Progress) -> Result<Heightmap>;

    /// Whether this generator defines an endless world ([`Generator::generate_window`]);
    /// the default is `false` (a single-map generator, refused in world recipes).
    fn in_world(&self) -> bool {
        false
    }

    /// The `width × height` window at world cell `(world.x0, world.y0)` of the endless world
    /// this generator defines for `seed` (lengths in metres, heights in metres). Every cell is
    /// computed from its world coordinates alone, so any window equals the same cells cut from
    /// a larger one, bit for bit. The default refuses (see [`Generator::in_world`]).
    fn generate_window(
        &self,
        world: &WorldFrame,
        width: usize,
        height: usize,
        seed: u64,
        progress: &Progress,
    ) -> Result<Heightmap> {
        let _ = (world, width, height, seed, progress);
        Err(Error::NotInWorld {
            what: format!("{self:?} makes one finite map and cannot make a window of a world"),
        })
    }
}

/// Runs a [`Generator`] as a pipeline [`Step`]: overwrites the terrain's heights (same size and
/// cell size) using `ctx.seed`.
#[derive(Clone, Debug)]
pub struct GeneratorStep<G>(pub G);

impl<G: Generator> Step for GeneratorStep<G> {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        let (w, h) = (terrain.height.width(), terrain.height.height());
        let map = match &ctx.frame {
            Frame::Map => self.0.generate(w, h, ctx.seed, &ctx.progress)?,
            Frame::World(world) => self.0.generate_window(world, w, h, ctx.seed, &ctx.progress)?,
        };
        common::install(terrain, map)?;
        ctx.progress.set(1.0);
        Ok(())
    }

    /// A generator defines each cell from its world coordinates: reach 0 when it can make
    /// worlds, global otherwise.
    fn reach(&self, _world: &WorldFrame) -> Reach {
        if self.0.in_world() { Reach::Cells(0) } else { Reach::Global }
    }
}

/// Registry entries of every base generator, in the order of the table above.
pub fn steps() -> Vec<StepInfo> {
    vec![
        MidpointDisplacement::info(),
        DiamondSquare::info(),
        Triangular::info(),
        Spectral::info(),
        Voronoi::info(),
        Fault::info(),
        Circles::info(),
        VoronoiDiamondSquare::info(),
        NoiseTerrain::info(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::step::ParamKind;

    /// A generator's constructor takes both ends of every spec range and refuses one step past
    /// either, naming the key: `new` and recipes share the one declaration in `step_params!`.
    #[test]
    fn fault_new_refuses_exactly_outside_its_specs() {
        let d = Fault::default();
        let build = |i: usize, v: f64| {
            let mut a = [d.iterations as f64, d.displacement, d.final_displacement, d.transition];
            a[i] = v;
            Fault::new(a[0] as u32, a[1], a[2], a[3])
        };
        for (i, spec) in Fault::PARAMS.iter().enumerate() {
            let (min, max, step) = match spec.kind {
                ParamKind::Float { min, max } => (min, max, 1e-9 * max.abs().max(1.0)),
                ParamKind::Int { min, max } => (min as f64, max as f64, 1.0),
                _ => panic!("{} is not a number", spec.name),
            };
            assert!(build(i, min).is_ok() && build(i, max).is_ok(), "{}", spec.name);
            for v in [min - step, max + step] {
                match build(i, v) {
                    Err(Error::InvalidParameter { name, .. }) => assert_eq!(name, spec.name),
                    other => panic!("{} = {v}: {other:?}", spec.name),
                }
            }
        }
        // Default is every spec's default.
        assert_eq!(d, Fault::new(200, 1.0, 0.05, 0.02).unwrap());
    }
}
