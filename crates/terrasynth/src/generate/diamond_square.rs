//! Iterative diamond-square (seed 001 §1.1.1).

use rayon::prelude::*;
use terrasynth_noise::rng::{SplitMix64, derive_seed};

use super::common::{
    LatticeRect, Subdivision, crop_square, diamond_square_fill, lattice_value, level_index, pow2_exponent,
    refuse_world_length, symmetric, top_spacing_cells, with_feature_size_m, world_generator_methods,
    world_length,
};
use super::{Generator, GeneratorStep};
use crate::step::params::step_params;
use crate::step::{Category, DefaultValue, ParamKind, StepInfo};
use crate::{Heightmap, Progress, Result};

step_params! {
    /// Square-based midpoint displacement, computed iteratively level by level (seed 001 §1.1.1).
    ///
    /// Steps, on a `(2^n + 1)²` grid with the smallest `n` that covers the map:
    /// 1. the 4 corners get `roughness · u`, `u` uniform in [−1, 1);
    /// 2. for each level (half-step `h = 2^(n−1) … 1`): *diamond* — each square's centre is the
    ///    mean of its 4 corners plus `disp · u`; *square* — each edge midpoint is the mean of its 4
    ///    diamond neighbours (3 on the border) plus `disp · u`;
    /// 3. `disp` starts at `roughness` and is multiplied by `2^(−smoothness)` after each level.
    ///
    /// The seed draws `random() ∈ [0, 1]`; this uses `u ∈ [−1, 1)` so the map does not drift
    /// upwards level after level (the shape statistics are otherwise the same). Levels past
    /// `detail` (when `detail > 0`) get no offset: their cells are bilinear interpolation of the
    /// coarser grid, so `detail` sets how many points carry fractal detail. Maps that are not
    /// `2^n + 1` square are the top-left window of the next valid square.
    ///
    /// **In a world** (an endless plane, any window on demand) the same law is defined level by
    /// level on the world lattice instead of one square:
    /// - level `T` (the top spacing: `feature-size-m` metres rounded to the nearest power of two cells,
    ///   `T ≥ 2`): the value at world lattice point `(i·T, j·T)` is `roughness · u(i, j)`, `u` a
    ///   hash in [−1, 1) of (seed, `i`, `j`);
    /// - level `s = T/2, T/4, … 1`: centres (odd, odd multiples of `s`) are the mean of their 4
    ///   level-`2s` corners plus `disp · u`, edge midpoints the mean of their 4 diamond neighbours
    ///   (2 level-`2s` points, 2 centres) plus `disp · u`, with `u` hashed from (seed, `s`, world
    ///   lattice point) and `disp = roughness · 2^(−smoothness·l)` at the `l`-th level below `T`
    ///   (only the first `detail` levels when `detail > 0`; finer ones are bilinear).
    ///
    /// Every value is a function of world coordinates only, so any window equals the same cells
    /// of any larger window, bit for bit. Reach per level: the points of level `s` over a window
    /// need level `2s` over that window grown by `2s` cells on each side (rounded out to
    /// multiples of `2s`): the centres one step beyond the window for its edge midpoints, and
    /// their corners. A window therefore computes each coarser level over a slightly larger
    /// window, recursively up to `T` (about `4T` cells of margin in all, at a cost of a few
    /// points per level). No libm: the decay `2^(−smoothness)` is `detmath::exp2`. The relief
    /// has no features wider than `T`; there is no map edge, hence no 3-neighbour border case.
    #[derive(Clone, Debug, PartialEq)]
    pub struct DiamondSquare {
        roughness: f64 = ParamSpec {
            name: "roughness",
            label: "Roughness",
            kind: ParamKind::Float { min: 0.0, max: 1000.0 },
            default: DefaultValue::Number(1.0),
            unit: "height units",
            doc: "Initial displacement factor (seed 001 §1.1.1): offsets at the coarsest level are \
                  uniform in [-roughness, roughness]. Scales the whole relief.",
        },
        smoothness: f64 = ParamSpec {
            name: "smoothness",
            label: "Smoothness H",
            kind: ParamKind::Float { min: 0.0, max: 4.0 },
            default: DefaultValue::Number(1.0),
            unit: "",
            doc: "H: the displacement is multiplied by 2^(-H) after each level (seed 001 §1.1.1). \
                  0 = very rough (white-noise-like), 1 = natural, 2+ = smooth rolling hills.",
        },
        detail: u32 = ParamSpec {
            name: "detail",
            label: "Detail levels",
            kind: ParamKind::Int { min: 0, max: 20 },
            default: DefaultValue::Number(0.0),
            unit: "levels",
            doc: "Number of subdivision levels that get random offsets (the seed's `detail`, grid \
                  2^detail + 1); finer levels are bilinear interpolation. 0 = every level.",
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

impl DiamondSquare {
    /// A checked generator.
    pub fn new(roughness: f64, smoothness: f64, detail: u32) -> Result<Self> {
        let s = Self { roughness, smoothness, detail, feature_size_m: None };
        s.check_ranges()?;
        Ok(s)
    }

    with_feature_size_m!();

    /// The window `width × height` at world cell `(x0, y0)` of the endless diamond-square
    /// world with cells of `cell_size_m` metres (see the type's docs).
    pub(crate) fn world_window(
        &self,
        (x0, y0): (i64, i64),
        cell_size_m: f64,
        (width, height): (usize, usize),
        seed: u64,
        progress: &Progress,
    ) -> Result<Heightmap> {
        crate::grid::check_size::<f64>(width, height)?;
        let world = DsWorld {
            top: top_spacing_cells(world_length(self.feature_size_m, "diamond-square")?, cell_size_m),
            roughness: self.roughness,
            decay: terrasynth_noise::detmath::exp2(-self.smoothness),
            noisy_levels: if self.detail == 0 { u32::MAX } else { self.detail },
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
            name: "diamond-square",
            category: Category::Generate,
            doc: "Iterative diamond-square midpoint displacement: fractal relief whose roughness \
                  is set by the per-level displacement factor 2^(-smoothness).",
            source: "seed 001 §1.1.1 (square base, iterative form)",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(GeneratorStep(Self::read_params(p)?))),
        }
    }
}

/// The world form of diamond-square (see [`DiamondSquare`]), for one window.
struct DsWorld<'a> {
    /// Top lattice spacing, cells (a power of two, at least 2).
    top: i64,
    roughness: f64,
    /// `2^(−smoothness)`.
    decay: f64,
    noisy_levels: u32,
    top_seed: u64,
    disp_seed: u64,
    progress: &'a Progress,
}

impl DsWorld<'_> {
    /// The values at every point of `rect` (spacing `rect.step`, a power of two ≤ `top`).
    fn level(&self, rect: LatticeRect) -> Result<Vec<f64>> {
        self.progress.check_cancelled()?;
        let s = rect.step;
        if s == self.top {
            let mut out = vec![0.0; rect.nx * rect.ny];
            for (j, row) in out.chunks_mut(rect.nx).enumerate() {
                for (i, v) in row.iter_mut().enumerate() {
                    *v =
                        self.roughness * lattice_value(self.top_seed, rect.i0 + i as i64, rect.j0 + j as i64);
                }
            }
            return Ok(out);
        }
        // Centres one point beyond the window (for its edge midpoints), and their corners.
        let fine = rect.grown(1);
        let (fx1, fy1) = (fine.i0 + fine.nx as i64 - 1, fine.j0 + fine.ny as i64 - 1);
        let crect =
            LatticeRect::covering(2 * s, (fine.i0 - 1) * s, (fx1 + 1) * s, (fine.j0 - 1) * s, (fy1 + 1) * s);
        let coarse = self.level(crect)?;
        let level = level_index(self.top, s);
        let noisy = level < self.noisy_levels;
        let disp = (0..level).fold(self.roughness, |d, _| d * self.decay);
        let seed = derive_seed(self.disp_seed, s as u64);
        // Level-2s value at fine lattice point (i, j), both even.
        let c = |i: i64, j: i64| coarse[crect.at(i.div_euclid(2), j.div_euclid(2))];
        let offset = |i: i64, j: i64| if noisy { disp * lattice_value(seed, i, j) } else { 0.0 };
        // Centres (odd, odd) over `fine`; other entries unused.
        let mut centres = vec![0.0; fine.nx * fine.ny];
        centres.par_chunks_mut(fine.nx).enumerate().for_each(|(r, row)| {
            let j = fine.j0 + r as i64;
            if j.rem_euclid(2) == 0 {
                return;
            }
            for (q, v) in row.iter_mut().enumerate() {
                let i = fine.i0 + q as i64;
                if i.rem_euclid(2) == 1 {
                    let m = (c(i - 1, j - 1) + c(i + 1, j - 1) + c(i - 1, j + 1) + c(i + 1, j + 1)) * 0.25;
                    *v = m + offset(i, j);
                }
            }
        });
        let centre = |i: i64, j: i64| centres[fine.at(i, j)];
        let mut out = vec![0.0; rect.nx * rect.ny];
        out.par_chunks_mut(rect.nx).enumerate().for_each(|(r, row)| {
            let j = rect.j0 + r as i64;
            let j_odd = j.rem_euclid(2) == 1;
            for (q, v) in row.iter_mut().enumerate() {
                let i = rect.i0 + q as i64;
                *v = match (i.rem_euclid(2) == 1, j_odd) {
                    (false, false) => c(i, j),
                    (true, true) => centre(i, j),
                    // Horizontal edge: ends (i ± 1, j) are level 2s, (i, j ± 1) centres.
                    (true, false) if noisy => {
                        (c(i - 1, j) + c(i + 1, j) + centre(i, j - 1) + centre(i, j + 1)) * 0.25
                            + offset(i, j)
                    }
                    (true, false) => (c(i - 1, j) + c(i + 1, j)) * 0.5,
                    // Vertical edge: ends (i, j ± 1) are level 2s, (i ± 1, j) centres.
                    (false, true) if noisy => {
                        (centre(i - 1, j) + centre(i + 1, j) + c(i, j - 1) + c(i, j + 1)) * 0.25
                            + offset(i, j)
                    }
                    (false, true) => (c(i, j - 1) + c(i, j + 1)) * 0.5,
                };
            }
        });
        Ok(out)
    }
}

impl Generator for DiamondSquare {
    fn generate(&self, width: usize, height: usize, seed: u64, _progress: &Progress) -> Result<Heightmap> {
        refuse_world_length(self.feature_size_m, "the map as its first square")?;
        crate::grid::check_size::<f64>(width, height)?;
        let n = pow2_exponent(width, height);
        let side = (1usize << n) + 1;
        let mut buf = vec![0.0; side * side];
        let mut rng = SplitMix64::new(derive_seed(seed, 0));
        for (x, y) in [(0, 0), (side - 1, 0), (0, side - 1), (side - 1, side - 1)] {
            buf[y * side + x] = self.roughness * symmetric(&mut rng);
        }
        let sub = Subdivision {
            disp0: self.roughness,
            decay: terrasynth_noise::detmath::exp2(-self.smoothness),
            noisy_levels: if self.detail == 0 { u32::MAX } else { self.detail },
        };
        diamond_square_fill(&mut buf, side, side - 1, sub, derive_seed(seed, 1));
        crop_square(&buf, side, width, height)
    }

    world_generator_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::common::assert_world_window_is_crop;

    fn window(ds: &DiamondSquare, cell: f64, origin: (i64, i64), size: (usize, usize)) -> Vec<f32> {
        ds.world_window(origin, cell, size, 9, &Progress::new()).unwrap().as_slice().to_vec()
    }

    #[test]
    fn world_windows_are_crops_of_larger_windows() {
        for (smoothness, detail, spacing) in
            [(1.0, 0, 16.0 * 30.0), (0.4, 0, 64.0 * 30.0), (2.0, 2, 8.0 * 30.0)]
        {
            let ds =
                DiamondSquare::new(100.0, smoothness, detail).unwrap().with_feature_size_m(spacing).unwrap();
            assert_world_window_is_crop(&|o, s| window(&ds, 30.0, o, s));
        }
    }

    /// The top lattice holds `roughness · u` and the first noisy level only: with `detail = 1`
    /// every finer level is bilinear, so along a row of level-1 points (every `T/2` cells) the
    /// heights are linear between them (zero second difference inside each interval).
    #[test]
    fn world_levels_past_detail_are_bilinear() {
        let ds = DiamondSquare::new(10.0, 1.0, 1).unwrap().with_feature_size_m(32.0).unwrap(); // T = 32
        let (x0, y0, w) = (-48i64, -16i64, 129usize);
        let map = window(&ds, 1.0, (x0, y0), (w, 1));
        let mut kinks = 0;
        for i in 1..w - 1 {
            let d2 = map[i - 1] as f64 - 2.0 * map[i] as f64 + map[i + 1] as f64;
            if (x0 + i as i64).rem_euclid(16) == 0 {
                kinks += (d2.abs() > 1e-3) as usize;
            } else {
                assert!(d2.abs() < 1e-3, "x = {}: second difference {d2}", x0 + i as i64);
            }
        }
        assert!(kinks > 0, "no kink at the level-1 points: the row is a straight line");
        // Top points lie in [-roughness, roughness).
        let top = window(&ds, 1.0, (-64, -64), (129, 129));
        for j in (0..129).step_by(32) {
            for i in (0..129).step_by(32) {
                assert!((-10.0..10.0).contains(&top[j * 129 + i]));
            }
        }
    }

    /// Roughness law: the mean squared difference between neighbours at lag `2d` over that at
    /// lag `d` is `4^H` for fractional Brownian relief; the world form keeps the seed's law
    /// (checked loosely, as a statistic of one window).
    #[test]
    fn world_roughness_follows_smoothness() {
        let ratio = |h: f64| {
            let ds = DiamondSquare::new(1.0, h, 0).unwrap().with_feature_size_m(256.0).unwrap();
            let m = window(&ds, 1.0, (-300, 77), (257, 257));
            let msd = |lag: usize| {
                let mut s = 0.0;
                for y in 0..257 {
                    for x in 0..257 - lag {
                        s += (m[y * 257 + x + lag] as f64 - m[y * 257 + x] as f64).powi(2);
                    }
                }
                s / (257 * (257 - lag)) as f64
            };
            msd(8) / msd(4)
        };
        let (smooth, rough) = (ratio(1.0), ratio(0.3));
        assert!((2.5..6.0).contains(&smooth), "H = 1: ratio {smooth}, expected about 4");
        assert!((1.0..2.3).contains(&rough), "H = 0.3: ratio {rough}, expected about 1.5");
    }
}
