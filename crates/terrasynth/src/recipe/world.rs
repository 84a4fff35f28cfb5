//! [`World`]: an endless world from a world recipe (one with a `[world]` table), any window of
//! which is computed on demand — seed 000's worlds generated from a seed, like Minecraft's.
//!
//! A window is defined independently of which window is asked for: every step computes a cell
//! from world coordinates and from input cells within its [`Reach`](crate::step::Reach), and
//! [`Pipeline::run_window`] grows the window by the reaches before each step, so **any window
//! equals the same cells cut from any larger window, bit for bit**.
//!
//! ```
//! use terrasynth::recipe::{PipelineProgress, Recipe, World};
//! let recipe = Recipe::from_toml_str(r#"
//! cell-size = 30.0
//! [world]
//! height-range = [-1000.0, 2000.0]
//! [[steps]]
//! type = "noise"
//! feature-size-m = 5000.0
//! [[steps]]
//! type = "normalize"
//! input-range = [-1.0, 1.0]
//! min = -1000.0
//! max = 2000.0
//! "#).unwrap();
//! let world = World::new(recipe).unwrap();
//! let p = PipelineProgress::new();
//! let big = world.window(-40, 7, 30, 20, &p).unwrap();
//! let small = world.window(-31, 12, 5, 4, &p).unwrap();
//! assert_eq!(small.height.row(0), &big.height.row(5)[9..14]);
//! ```

use crate::recipe::model::Recipe;
use crate::recipe::pipeline::{Pipeline, PipelineProgress, RunOutput};
use crate::recipe::registry::registry;
use crate::step::Terrain;
use crate::{Error, Result};

/// A validated world recipe, ready to make windows. Cheap to share between threads: each
/// [`World::window`] call is independent (a task scheduler may run one per tile).
#[derive(Debug)]
pub struct World {
    pipeline: Pipeline,
}

impl World {
    /// Validates a world recipe: it must have a `[world]` table and only steps that can run on
    /// a window (the error names every global step).
    pub fn new(recipe: Recipe) -> Result<Self> {
        if !recipe.is_world() {
            return Err(Error::NotInWorld {
                what: format!(
                    "recipe `{}` is not a world recipe: add a [world] table with `height-range = \
                     [lowest, highest]` in metres (see docs/WORLDS.md)",
                    recipe.name
                ),
            });
        }
        Ok(Self { pipeline: Pipeline::new(recipe, &registry())? })
    }

    /// The world of a built-in preset (e.g. `world`).
    pub fn from_preset(name: &str) -> Result<Self> {
        Self::new(crate::recipe::presets::preset(name)?.recipe()?)
    }

    /// The recipe.
    pub fn recipe(&self) -> &Recipe {
        self.pipeline.recipe()
    }

    /// The validated pipeline.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// The world's declared height range in metres.
    pub fn height_range(&self) -> [f64; 2] {
        self.recipe().world.as_ref().map_or([0.0, 1.0], |w| w.height_range)
    }

    /// The `width × height` window whose cell (0, 0) is world cell `(x0, y0)`.
    pub fn window(
        &self,
        x0: i64,
        y0: i64,
        width: usize,
        height: usize,
        progress: &PipelineProgress,
    ) -> Result<Terrain> {
        Ok(self.run_window(x0, y0, width, height, progress)?.terrain)
    }

    /// [`World::window`] with the run's timings and peak memory.
    pub fn run_window(
        &self,
        x0: i64,
        y0: i64,
        width: usize,
        height: usize,
        progress: &PipelineProgress,
    ) -> Result<RunOutput> {
        self.pipeline.run_window(x0, y0, width, height, progress, &mut ())
    }

    /// Chunk `(cx, cy)` of side `size` (≥ 2): the window at `(cx · (size − 1), cy · (size − 1))`,
    /// so neighbouring chunks share their edge row and column, as engine landscapes expect.
    pub fn chunk(&self, cx: i64, cy: i64, size: usize, progress: &PipelineProgress) -> Result<Terrain> {
        let (x0, y0) = chunk_origin(cx, cy, size)?;
        self.window(x0, y0, size, size, progress)
    }
}

/// World cell of chunk `(cx, cy)`'s corner for chunks of `size` cells sharing edges.
pub fn chunk_origin(cx: i64, cy: i64, size: usize) -> Result<(i64, i64)> {
    let bad = || Error::InvalidSize {
        width: size,
        height: size,
        reason: "a chunk has at least 2 cells a side and its world position must fit in 64 bits".into(),
    };
    if size < 2 {
        return Err(bad());
    }
    let step = i64::try_from(size - 1).map_err(|_| bad())?;
    let x0 = cx.checked_mul(step).ok_or_else(bad)?;
    let y0 = cy.checked_mul(step).ok_or_else(bad)?;
    Ok((x0, y0))
}

/// Test helper for every chunkable step: runs a large window of `recipe` (a world recipe) at a
/// negative origin and checks that odd-sized windows inside it (one touching each corner, one in
/// the middle) equal the same cells cut from it, bit for bit; then the same at a far origin
/// (|x| = 10⁷ cells). Panics naming the first differing cell.
#[doc(hidden)]
pub fn assert_window_is_crop(recipe: &Recipe) {
    let world = World::new(recipe.clone()).unwrap_or_else(|e| panic!("not a world recipe: {e}"));
    let p = PipelineProgress::new();
    for (bx, by) in [(-37i64, -23i64), (10_000_000, -10_000_003)] {
        let (bw, bh) = (61usize, 47usize);
        let big = world.window(bx, by, bw, bh, &p).unwrap();
        for (dx, dy, w, h) in [
            (0usize, 0usize, 13usize, 9usize),
            (bw - 17, 0, 17, 11),
            (0, bh - 7, 9, 7),
            (bw - 5, bh - 3, 5, 3),
            (20, 15, 21, 19),
            (1, 1, 1, 1),
        ] {
            let small = world.window(bx + dx as i64, by + dy as i64, w, h, &p).unwrap();
            for j in 0..h {
                for i in 0..w {
                    let (a, b) = (small.height[(i, j)], big.height[(dx + i, dy + j)]);
                    assert!(
                        a.to_bits() == b.to_bits(),
                        "window ({}, {}) {w}x{h}: cell ({i}, {j}) = {a}, but the larger window at ({bx}, {by}) has {b}",
                        bx + dx as i64,
                        by + dy as i64
                    );
                }
            }
            assert_eq!(small.sea_level.to_bits(), big.sea_level.to_bits(), "sea level");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::model::StepEntry;

    /// A world of noise mapped to metres, then every point step of the core.
    fn point_world() -> Recipe {
        let mut r = Recipe::from_toml_str(
            r#"
            name = "w"
            cell-size = 25.0
            width = 40
            height = 30
            seed = 11
            [world]
            height-range = [-800.0, 1600.0]
            [[steps]]
            type = "noise"
            kind = "opensimplex2"
            octaves = 6
            feature-size-m = 4000.0
            [[steps]]
            type = "normalize"
            input-range = [-1.0, 1.0]
            min = -800.0
            max = 1600.0
            "#,
        )
        .unwrap();
        r.steps.push(StepEntry::new("terrace").with("levels", 5.0).with("sharpness", 0.5));
        r.steps.push(StepEntry::new("scale").with("factor", 1.1).with("offset", -20.0));
        r.steps.push(StepEntry::new("clamp").with("min", -800.0).with("max", 1600.0));
        r.steps.push(StepEntry::new("sea-level").with("value", 0.25));
        r
    }

    #[test]
    fn point_steps_give_windows_equal_to_crops() {
        assert_window_is_crop(&point_world());
    }

    #[test]
    fn the_default_window_is_the_window_at_the_origin() {
        let r = point_world();
        let world = World::new(r.clone()).unwrap();
        let p = PipelineProgress::new();
        let run = Pipeline::new(r, &registry()).unwrap().run(&p).unwrap().terrain;
        let w = world.window(0, 0, 40, 30, &p).unwrap();
        assert_eq!(run.height, w.height);
        // Sea level: a quarter of the world's declared range, not of the window's.
        assert_eq!(w.sea_level, -800.0 + 0.25 * 2400.0);
        // Heights are metres within the declared range, and not flat.
        let (lo, hi) = w.height.min_max().unwrap();
        assert!((-800.0..=1600.0).contains(&lo) && (-800.0..=1600.0).contains(&hi) && hi - lo > 100.0);
    }

    #[test]
    fn chunks_share_their_edges() {
        let world = World::new(point_world()).unwrap();
        let p = PipelineProgress::new();
        let a = world.chunk(-1, 2, 9, &p).unwrap();
        let b = world.chunk(0, 2, 9, &p).unwrap();
        let c = world.chunk(-1, 3, 9, &p).unwrap();
        for k in 0..9 {
            assert_eq!(a.height[(8, k)], b.height[(0, k)]);
            assert_eq!(a.height[(k, 8)], c.height[(k, 0)]);
        }
        assert_eq!(chunk_origin(-1, 2, 9).unwrap(), (-8, 16));
        assert!(chunk_origin(i64::MAX, 0, 9).is_err() && chunk_origin(0, 0, 1).is_err());
    }

    #[test]
    fn global_steps_and_map_recipes_are_refused_with_one_clear_error() {
        let mut r = point_world();
        r.steps.push(StepEntry::new("fill"));
        r.steps.push(StepEntry::new("normalize"));
        let e = World::new(r).unwrap_err().to_string();
        assert!(e.contains("step 7 (fill): cannot run on a window of a world"), "{e}");
        assert!(e.contains("step 8 (normalize): cannot run"), "{e}");
        let mut map = point_world();
        map.world = None;
        let e = World::new(map).unwrap_err().to_string();
        assert!(e.contains("recipe `w` is not a world recipe"), "{e}");
        // Noise without its length in metres cannot make a world either.
        let mut r = point_world();
        r.steps[0].params.remove("feature-size-m");
        let e = World::new(r).unwrap_err().to_string();
        assert!(e.contains("step 1 (noise): cannot run on a window"), "{e}");
        // A bad height range names the key and the allowed form.
        let mut r = point_world();
        r.world = Some(crate::recipe::WorldSpec { height_range: [5.0, 5.0] });
        let e = World::new(r).unwrap_err().to_string();
        assert!(e.contains("invalid `world.height-range` = [5, 5]"), "{e}");
        // A map recipe refuses `feature-size-m` (its noise would ignore it) before it runs.
        let mut r = point_world();
        r.world = None;
        r.steps.truncate(1);
        let e = Pipeline::new(r, &registry()).unwrap_err().to_string();
        assert!(e.contains("step 1 (noise): invalid parameter `feature-size-m`"), "{e}");
        assert!(e.contains("only in a world recipe"), "{e}");
    }

    #[test]
    fn world_recipes_round_trip_through_toml() {
        let r = point_world();
        let text = r.to_toml_string().unwrap();
        assert!(text.contains("[world]"), "{text}");
        assert_eq!(Recipe::from_toml_str(&text).unwrap(), r);
    }
}
