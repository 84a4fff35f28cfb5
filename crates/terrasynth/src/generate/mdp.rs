//! Midpoint displacement, queue form, with integer heights (seed 000 and its Python annex).

use std::collections::VecDeque;

use terrasynth_noise::rng::SplitMix64;

use super::common::pow2_exponent;
use super::{Generator, GeneratorStep};
use crate::step::params::step_params;
use crate::step::{Category, DefaultValue, ParamKind, StepInfo};
use crate::{Heightmap, Progress, Result};

step_params! {
    /// Square midpoint displacement processed breadth-first from a FIFO queue, in integers
    /// (seed 000, annex `carte_mid_point`).
    ///
    /// Steps, on a `(2^n + 1)²` grid of `i64` with the smallest `n` that covers the map:
    /// 1. the 4 corners get `randint(−a, a)` (`a` = `amplitude`);
    /// 2. the queue starts with the whole square `(x1, y1, x2, y2, a)`;
    /// 3. pop a square; with `(xc, yc)` its integer centre, set
    ///    `h(xc, yc) = ⌊(sum of 4 corners) / 4⌋ + randint(−r, r)` and each edge midpoint
    ///    `⌊(sum of its 2 ends) / 2⌋ + randint(−r, r)`;
    /// 4. if the square is wider than 1 cell, push its 4 quadrants (top-left, bottom-right,
    ///    bottom-left, top-right, in the annex's order) with `⌊r / 2⌋`.
    ///
    /// Divisions floor towards −∞ and `randint` is inclusive, like Python's `//` and
    /// `random.randint`. As in the annex, an edge shared by two squares is written by both (the
    /// later one wins): this is the recursive form's context sensitivity that seed 001 §1.1.1
    /// removes with the iterative [`DiamondSquare`](super::DiamondSquare). Once `r` reaches 0 the
    /// remaining levels are pure integer averaging, which shows as small flat steps: keep
    /// `amplitude ≥ 2^n` for a fully fractal map. Heights are the integers as `f32`; other sizes are
    /// the top-left window of the square.
    ///
    /// Known look: an edge midpoint only sees the 2 ends of its edge, so the borders of the big
    /// early squares show as faint straight creases (visible in a hillshade). That is this form's
    /// classic artefact, kept for fidelity to seed 000; [`DiamondSquare`](super::DiamondSquare)
    /// averages 4 diamond neighbours and has none.
    #[derive(Clone, Debug, PartialEq)]
    pub struct MidpointDisplacement {
        amplitude: i64 = ParamSpec {
            name: "amplitude",
            kind: ParamKind::Int { min: 0, max: 1 << 40 },
            default: DefaultValue::Number(4096.0),
            unit: "integer height units",
            doc: "Initial random range `alea_in` (seed 000 annex): corners and first offsets are \
                  integers in [-amplitude, amplitude], halved (integer division) at each level.",
        },
    }
}

impl MidpointDisplacement {
    /// A checked generator.
    pub fn new(amplitude: i64) -> Result<Self> {
        let s = Self { amplitude };
        s.check_ranges()?;
        Ok(s)
    }

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "mdp",
            category: Category::Generate,
            doc: "Midpoint displacement, queue form with integer offsets (the seed 000 annex): \
                  fast, rough fractal relief.",
            source: "seed 000 (midpoint displacement, Python annex `carte_mid_point`)",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(GeneratorStep(Self::read_params(p)?))),
        }
    }
}

impl Generator for MidpointDisplacement {
    fn generate(&self, width: usize, height: usize, seed: u64, _progress: &Progress) -> Result<Heightmap> {
        crate::grid::check_size::<i64>(width, height)?;
        let side = (1usize << pow2_exponent(width, height)) + 1;
        let mut res = vec![0i64; side * side];
        let mut rng = SplitMix64::new(seed);
        let a = self.amplitude;
        let last = side - 1;
        for (x, y) in [(0, 0), (last, 0), (0, last), (last, last)] {
            res[y * side + x] = rng.range_i64(-a, a);
        }
        let mut queue = VecDeque::new();
        queue.push_back((0usize, 0usize, last, last, a));
        while let Some((xg, yg, xd, yd, r)) = queue.pop_front() {
            let (xc, yc) = ((xg + xd) / 2, (yg + yd) / 2);
            let at = |x: usize, y: usize| y * side + x;
            let c = res[at(xg, yg)] + res[at(xg, yd)] + res[at(xd, yd)] + res[at(xd, yg)];
            res[at(xc, yc)] = c.div_euclid(4) + rng.range_i64(-r, r);
            res[at(xc, yg)] = (res[at(xg, yg)] + res[at(xd, yg)]).div_euclid(2) + rng.range_i64(-r, r);
            res[at(xc, yd)] = (res[at(xg, yd)] + res[at(xd, yd)]).div_euclid(2) + rng.range_i64(-r, r);
            res[at(xg, yc)] = (res[at(xg, yg)] + res[at(xg, yd)]).div_euclid(2) + rng.range_i64(-r, r);
            res[at(xd, yc)] = (res[at(xd, yd)] + res[at(xd, yg)]).div_euclid(2) + rng.range_i64(-r, r);
            if xc - xg > 1 {
                let r2 = r.div_euclid(2);
                queue.push_back((xg, yg, xc, yc, r2));
                queue.push_back((xc, yc, xd, yd, r2));
                queue.push_back((xg, yc, xc, yd, r2));
                queue.push_back((xc, yg, xd, yc, r2));
            }
        }
        let data =
            (0..height).flat_map(|y| res[y * side..y * side + width].iter().map(|&v| v as f32)).collect();
        Heightmap::from_vec(width, height, 1.0, data)
    }
}
