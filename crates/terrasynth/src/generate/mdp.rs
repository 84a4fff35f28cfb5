//! Midpoint displacement, queue form, with integer heights (seed 000 and its Python annex).

use std::collections::VecDeque;

use rayon::prelude::*;
use terrasynth_noise::rng::{SplitMix64, derive_seed};

use super::common::{
    LatticeRect, lattice_hash, level_index, pow2_exponent, refuse_world_length, top_spacing_cells,
    with_feature_size_m, world_generator_methods, world_length,
};
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
    ///
    /// **In a world** (an endless plane, any window on demand) the same integer law is defined
    /// level by level on the world lattice: the top level `T` (`feature-size-m` metres rounded to the
    /// nearest power of two cells, `T ≥ 2`) holds `randint(−a, a)` hashed from (seed, world
    /// lattice point); at level `s = T/2, T/4, … 1` a centre is `⌊(sum of its 4 level-2s
    /// corners) / 4⌋ + randint(−r, r)` and an edge midpoint `⌊(sum of its 2 ends) / 2⌋ +
    /// randint(−r, r)`, with `r = ⌊a / 2^l⌋` at the `l`-th level below `T` and the random integers
    /// hashed from (seed, `s`, world lattice point). Each edge midpoint is now defined once, by its
    /// two ends (the queue's "later square wins" needs a finite queue). Integer arithmetic only,
    /// so every window of the world is bit-exact on every machine. Reach per level: level `s`
    /// over a window needs level `2s` over that window grown by `s` cells on each side (rounded
    /// out to multiples of `2s`), computed recursively up to `T` (about `2T` cells of margin).
    #[derive(Clone, Debug, PartialEq)]
    pub struct MidpointDisplacement {
        amplitude: i64 = ParamSpec {
            name: "amplitude",
            label: "Amplitude",
            kind: ParamKind::Int { min: 0, max: 1 << 40 },
            default: DefaultValue::Number(4096.0),
            unit: "integer height units",
            doc: "Initial random range `alea_in` (seed 000 annex): corners and first offsets are \
                  integers in [-amplitude, amplitude], halved (integer division) at each level.",
        },
        feature_size_m: Option<f64> = ParamSpec {
            name: "feature-size-m",
            label: "World feature size",
            kind: ParamKind::Float { min: 1e-3, max: 1e9 },
            default: DefaultValue::Absent,
            unit: "m",
            doc: "World recipes only (and required there): spacing of the coarsest lattice (the first \
                  squares' corners) in metres, rounded to the nearest power of two cells (2..=2^24); \
                  nothing in the relief is wider.",
        },
    }
}

impl MidpointDisplacement {
    /// A checked generator.
    pub fn new(amplitude: i64) -> Result<Self> {
        let s = Self { amplitude, feature_size_m: None };
        s.check_ranges()?;
        Ok(s)
    }

    with_feature_size_m!();

    /// The window `width × height` at world cell `(x0, y0)` of the endless midpoint-displacement
    /// world with cells of `cell_size_m` metres (see the type's docs).
    pub(crate) fn world_window(
        &self,
        (x0, y0): (i64, i64),
        cell_size_m: f64,
        (width, height): (usize, usize),
        seed: u64,
        progress: &Progress,
    ) -> Result<Heightmap> {
        crate::grid::check_size::<i64>(width, height)?;
        let world = MdpWorld {
            top: top_spacing_cells(world_length(self.feature_size_m, "mdp")?, cell_size_m),
            amplitude: self.amplitude,
            top_seed: derive_seed(seed, 2),
            disp_seed: derive_seed(seed, 3),
            progress,
        };
        let (x1, y1) = (x0 + width as i64 - 1, y0 + height as i64 - 1);
        let values = world.level(LatticeRect::covering(1, x0, x1, y0, y1))?;
        Heightmap::from_vec(width, height, 1.0, values.into_iter().map(|v| v as f32).collect())
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

/// The world form of midpoint displacement (see [`MidpointDisplacement`]), for one window.
struct MdpWorld<'a> {
    /// Top lattice spacing, cells (a power of two, at least 2).
    top: i64,
    amplitude: i64,
    top_seed: u64,
    disp_seed: u64,
    progress: &'a Progress,
}

/// `randint(−r, r)` (inclusive) from a 64-bit hash: the high bits of `hash · (2r + 1)`.
#[inline]
fn randint(hash: u64, r: i64) -> i64 {
    ((hash as u128 * (2 * r as u128 + 1)) >> 64) as i64 - r
}

impl MdpWorld<'_> {
    /// The values at every point of `rect` (spacing `rect.step`, a power of two ≤ `top`).
    fn level(&self, rect: LatticeRect) -> Result<Vec<i64>> {
        self.progress.check_cancelled()?;
        let s = rect.step;
        if s == self.top {
            let mut out = vec![0; rect.nx * rect.ny];
            for (j, row) in out.chunks_mut(rect.nx).enumerate() {
                for (i, v) in row.iter_mut().enumerate() {
                    let h = lattice_hash(self.top_seed, rect.i0 + i as i64, rect.j0 + j as i64);
                    *v = randint(h, self.amplitude);
                }
            }
            return Ok(out);
        }
        let (x1, y1) = ((rect.i0 + rect.nx as i64) * s, (rect.j0 + rect.ny as i64) * s);
        let crect = LatticeRect::covering(2 * s, (rect.i0 - 1) * s, x1, (rect.j0 - 1) * s, y1);
        let coarse = self.level(crect)?;
        let level = level_index(self.top, s);
        let r = if level >= 63 { 0 } else { self.amplitude >> level };
        let seed = derive_seed(self.disp_seed, s as u64);
        let c = |i: i64, j: i64| coarse[crect.at(i.div_euclid(2), j.div_euclid(2))];
        let mut out = vec![0; rect.nx * rect.ny];
        out.par_chunks_mut(rect.nx).enumerate().for_each(|(q, row)| {
            let j = rect.j0 + q as i64;
            let j_odd = j.rem_euclid(2) == 1;
            for (p, v) in row.iter_mut().enumerate() {
                let i = rect.i0 + p as i64;
                let mean = match (i.rem_euclid(2) == 1, j_odd) {
                    (false, false) => {
                        *v = c(i, j);
                        continue;
                    }
                    (true, true) => {
                        (c(i - 1, j - 1) + c(i + 1, j - 1) + c(i - 1, j + 1) + c(i + 1, j + 1)).div_euclid(4)
                    }
                    (true, false) => (c(i - 1, j) + c(i + 1, j)).div_euclid(2),
                    (false, true) => (c(i, j - 1) + c(i, j + 1)).div_euclid(2),
                };
                *v = mean + randint(lattice_hash(seed, i, j), r);
            }
        });
        Ok(out)
    }
}

impl Generator for MidpointDisplacement {
    fn generate(&self, width: usize, height: usize, seed: u64, _progress: &Progress) -> Result<Heightmap> {
        refuse_world_length(self.feature_size_m, "the map as its first square")?;
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

    world_generator_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::common::assert_world_window_is_crop;

    fn window(g: &MidpointDisplacement, cell: f64, origin: (i64, i64), size: (usize, usize)) -> Vec<f32> {
        g.world_window(origin, cell, size, 4, &Progress::new()).unwrap().as_slice().to_vec()
    }

    #[test]
    fn world_windows_are_crops_of_larger_windows() {
        for (a, spacing) in [(4096, 16.0 * 30.0), (1 << 20, 128.0 * 30.0)] {
            let g = MidpointDisplacement::new(a).unwrap().with_feature_size_m(spacing).unwrap();
            assert_world_window_is_crop(&|o, s| window(&g, 30.0, o, s));
        }
    }

    /// The integer law: top points in [−a, a]; every height an integer; an edge midpoint at
    /// the finest level is within `r = a >> (levels − 1)` of the floored mean of its two ends.
    #[test]
    fn world_follows_the_integer_law() {
        let a = 1000;
        let g = MidpointDisplacement::new(a).unwrap().with_feature_size_m(16.0).unwrap(); // T = 16
        let (x0, y0, n) = (-32i64, -48i64, 65usize);
        let m = window(&g, 1.0, (x0, y0), (n, n));
        let at = |x: usize, y: usize| m[y * n + x] as i64;
        assert!(m.iter().all(|v| v.fract() == 0.0));
        for y in (0..n).step_by(16) {
            for x in (0..n).step_by(16) {
                assert!((-a..=a).contains(&at(x, y)));
            }
        }
        let r = a >> 3; // levels 8, 4, 2, 1 below T = 16: the finest is level 3
        for y in (0..n).step_by(2) {
            for x in (1..n - 1).step_by(2) {
                let mean = (at(x - 1, y) + at(x + 1, y)).div_euclid(2);
                assert!((at(x, y) - mean).abs() <= r, "({x}, {y})");
            }
        }
        // Amplitude 0: flat.
        let flat = window(
            &MidpointDisplacement::new(0).unwrap().with_feature_size_m(16.0).unwrap(),
            1.0,
            (5, 5),
            (9, 9),
        );
        assert!(flat.iter().all(|&v| v == 0.0));
    }
}
