//! Helpers shared by the generators: the `2^n + 1` working size, seeded lattice values, and the square
//! subdivision core used by diamond-square and Voronoi + diamond-square.

use terrasynth_noise::rng::{SplitMix64, derive_seed, mix64};

use crate::{Error, Heightmap, Result};

/// The smallest `n >= 1` such that a `2^n + 1` square covers a `width × height` map.
pub(crate) fn pow2_exponent(width: usize, height: usize) -> u32 {
    let side = width.max(height).max(2) - 1;
    side.next_power_of_two().trailing_zeros().max(1)
}

/// Copies the top-left `width × height` window of a `side × side` f64 buffer into a heightmap
/// (cell size 1). This is how every `2^n + 1` generator serves other sizes: it builds the
/// next valid square and crops it.
pub(crate) fn crop_square(buf: &[f64], side: usize, width: usize, height: usize) -> Result<Heightmap> {
    debug_assert!(width <= side && height <= side && buf.len() == side * side);
    let mut data = Vec::with_capacity(width * height);
    for y in 0..height {
        data.extend(buf[y * side..y * side + width].iter().map(|&v| v as f32));
    }
    Heightmap::from_vec(width, height, 1.0, data)
}

/// Uniform in [-1, 1).
#[inline]
pub(crate) fn symmetric(rng: &mut SplitMix64) -> f64 {
    rng.next_f64() * 2.0 - 1.0
}

/// A reproducible value in [-1, 1) for lattice point `(ix, iy)` of stream `seed`: the same
/// inputs give the same value on any thread, in any order.
#[inline]
pub(crate) fn lattice_value(seed: u64, ix: i64, iy: i64) -> f64 {
    let h = lattice_hash(seed, ix, iy);
    (h >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
}

/// A reproducible `u64` for world lattice point `(ix, iy)` of stream `seed` (the hash behind
/// [`lattice_value`]): a pure function of its inputs, so every window of a world sees the same
/// value at the same point.
#[inline]
pub(crate) fn lattice_hash(seed: u64, ix: i64, iy: i64) -> u64 {
    mix64(derive_seed(seed, ix as u64) ^ (iy as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

/// The lattice points of spacing `step` (world cells) covering `[xa, xb] × [ya, yb]`: index
/// ranges `i0..=i1`, `j0..=j1` with `i0·step ≤ xa`, `i1·step ≥ xb` (rounded outward).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LatticeRect {
    pub step: i64,
    pub i0: i64,
    pub j0: i64,
    pub nx: usize,
    pub ny: usize,
}

impl LatticeRect {
    /// The smallest lattice rectangle of spacing `step` covering the world cells
    /// `[xa, xb] × [ya, yb]` (inclusive).
    pub(crate) fn covering(step: i64, xa: i64, xb: i64, ya: i64, yb: i64) -> Self {
        let (i0, j0) = (xa.div_euclid(step), ya.div_euclid(step));
        let (i1, j1) = (-(-xb).div_euclid(step), -(-yb).div_euclid(step));
        Self { step, i0, j0, nx: (i1 - i0 + 1) as usize, ny: (j1 - j0 + 1) as usize }
    }

    /// Grown by `n` lattice points on every side.
    pub(crate) fn grown(self, n: i64) -> Self {
        Self {
            i0: self.i0 - n,
            j0: self.j0 - n,
            nx: self.nx + 2 * n as usize,
            ny: self.ny + 2 * n as usize,
            ..self
        }
    }

    /// Index in a row-major buffer of lattice point `(i, j)` (lattice indices).
    #[inline]
    pub(crate) fn at(&self, i: i64, j: i64) -> usize {
        debug_assert!(i >= self.i0 && j >= self.j0, "({i}, {j}) outside {self:?}");
        (j - self.j0) as usize * self.nx + (i - self.i0) as usize
    }
}

/// The world length (`feature-size-m`, metres) a generator needs to make a window of a world,
/// or [`Error::NotInWorld`] naming the key.
pub(crate) fn world_length(feature_size_m: Option<f64>, step: &str) -> Result<f64> {
    feature_size_m.ok_or_else(|| Error::NotInWorld {
        what: format!("the {step} step needs `feature-size-m` (metres) in a world recipe"),
    })
}

/// Refuses `feature-size-m` in a finite map (it only means something in a world), as the
/// `noise` step does; `map_length` names what a map uses instead.
pub(crate) fn refuse_world_length(feature_size_m: Option<f64>, map_length: &str) -> Result<()> {
    match feature_size_m {
        None => Ok(()),
        Some(m) => Err(Error::param(
            "feature-size-m",
            m,
            format!("only in a world recipe (one with a [world] table); a finite map uses {map_length}"),
        )),
    }
}

/// The [`Generator`](super::Generator) methods of a seed generator that makes worlds once its
/// `feature-size-m` is given: `in_world` and `generate_window`, which calls the generator's
/// own `world_window((x0, y0), cell_size_m, (width, height), seed, progress)`.
macro_rules! world_generator_methods {
    () => {
        fn in_world(&self) -> bool {
            self.feature_size_m.is_some()
        }

        fn generate_window(
            &self,
            world: &crate::step::WorldFrame,
            width: usize,
            height: usize,
            seed: u64,
            progress: &crate::Progress,
        ) -> crate::Result<crate::Heightmap> {
            self.world_window((world.x0, world.y0), world.cell_size, (width, height), seed, progress)
        }
    };
}
pub(crate) use world_generator_methods;

/// The builder `with_feature_size_m` of a seed generator with an optional `feature_size_m`
/// field checked by its `step_params!` specs.
macro_rules! with_feature_size_m {
    () => {
        /// The same generator with the world length `feature-size-m` (metres), checked: the
        /// generator can then make windows of a world.
        pub fn with_feature_size_m(self, metres: f64) -> crate::Result<Self> {
            let s = Self { feature_size_m: Some(metres), ..self };
            s.check_ranges()?;
            Ok(s)
        }
    };
}
pub(crate) use with_feature_size_m;

/// A `width × height` heightmap (cell size 1) from a world field computed in f64 by `field`,
/// after the size check and a cancellation check.
pub(crate) fn field_window(
    (width, height): (usize, usize),
    progress: &crate::Progress,
    field: impl FnOnce() -> Result<Vec<f64>>,
) -> Result<Heightmap> {
    crate::grid::check_size::<f64>(width, height)?;
    progress.check_cancelled()?;
    Heightmap::from_vec(width, height, 1.0, field()?.into_iter().map(|v| v as f32).collect())
}

/// Largest top lattice spacing of the world subdivisions, in cells (`2^24`).
pub(crate) const MAX_TOP_SPACING_CELLS: i64 = 1 << 24;

/// The coarsest lattice spacing, in cells, of a world subdivision ([`DiamondSquare`] and
/// [`MidpointDisplacement`] in a world): the power of two nearest (in ratio) to
/// `spacing_m / cell_size_m`, at least 2 and at most [`MAX_TOP_SPACING_CELLS`]. `2^L` is nearest
/// when `2^(2L) ≤ 2r² < 2^(2L+2)`, a comparison of exact powers of two (no logarithm).
///
/// [`DiamondSquare`]: super::DiamondSquare
/// [`MidpointDisplacement`]: super::MidpointDisplacement
pub(crate) fn top_spacing_cells(spacing_m: f64, cell_size_m: f64) -> i64 {
    let r = spacing_m / cell_size_m;
    let t = 2.0 * r * r;
    let mut l = 1u32;
    while (1i64 << l) < MAX_TOP_SPACING_CELLS && ((1u64 << (2 * (l + 1))) as f64) <= t {
        l += 1;
    }
    1 << l
}

/// The level index of a subdivision step whose fine spacing is `step` under a top spacing
/// `top` (both powers of two): 0 for `step = top / 2`, 1 for `top / 4`, …
pub(crate) fn level_index(top: i64, step: i64) -> u32 {
    (top / (2 * step)).trailing_zeros()
}

/// Replaces the terrain's heights with `map`, keeping the terrain's cell size (and drops the
/// [`super::triangular::TriangleMask`] of an earlier triangle: the new heights fill the map).
pub(crate) fn install(terrain: &mut crate::step::Terrain, mut map: Heightmap) -> Result<()> {
    if map.width() != terrain.height.width() || map.height() != terrain.height.height() {
        return Err(Error::SizeMismatch {
            what: "generated map".into(),
            expected_w: terrain.height.width(),
            expected_h: terrain.height.height(),
            got_w: map.width(),
            got_h: map.height(),
        });
    }
    map.set_cell_size(terrain.height.cell_size())?;
    terrain.height = map;
    terrain.layers.remove::<super::triangular::TriangleMask>();
    Ok(())
}

/// Progress over the rows of a parallel loop: each row reports itself done (the fraction
/// is rows started / rows, in whatever order threads take them) and stops the loop with
/// [`Error::Cancelled`] once the job is cancelled.
pub(crate) struct RowProgress<'a> {
    progress: &'a crate::Progress,
    rows: usize,
    started: std::sync::atomic::AtomicUsize,
}

impl<'a> RowProgress<'a> {
    pub(crate) fn new(progress: &'a crate::Progress, rows: usize) -> Self {
        Self { progress, rows: rows.max(1), started: std::sync::atomic::AtomicUsize::new(0) }
    }

    /// Call at the start of each row.
    pub(crate) fn row_done(&self) -> Result<()> {
        self.progress.check_cancelled()?;
        let n = self.started.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if n.is_multiple_of(16) {
            self.progress.set(n as f64 / self.rows as f64);
        }
        Ok(())
    }
}

/// How each level of a square subdivision is displaced.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Subdivision {
    /// Displacement amplitude of the first (coarsest) level processed.
    pub disp0: f64,
    /// Factor applied to the amplitude at each finer level (`2^(−smoothness)`).
    pub decay: f64,
    /// Number of levels that get random offsets; finer levels are filled by bilinear
    /// interpolation (centre = mean of 4 corners, edge midpoint = mean of its 2 ends).
    pub noisy_levels: u32,
}

/// Iterative diamond-square over a `side × side` buffer (`side = 2^n + 1`) whose cells at
/// multiples of `start` are already set: fills all the others (seed 001 §1.1.1).
///
/// Per level with half-step `h`: the diamond pass sets each square's centre to the mean of its
/// 4 corners plus `disp · u`, then the square pass sets each edge midpoint to the mean of its
/// (up to 4; 3 on the border) diamond neighbours plus `disp · u`, `u` uniform in [−1, 1) drawn in
/// row-major order from one SplitMix64 stream; then `disp *= decay`. Each cell is written once,
/// so shared edges have one value (no context sensitivity).
pub(crate) fn diamond_square_fill(buf: &mut [f64], side: usize, start: usize, sub: Subdivision, seed: u64) {
    debug_assert!(start.is_power_of_two() && (side - 1).is_multiple_of(start) && buf.len() == side * side);
    let mut rng = SplitMix64::new(seed);
    let mut disp = sub.disp0;
    let mut step = start;
    let mut level = 0;
    while step > 1 {
        let h = step / 2;
        let noisy = level < sub.noisy_levels;
        // Diamond pass: centres of squares.
        for y in (h..side).step_by(step) {
            for x in (h..side).step_by(step) {
                let m = (buf[(y - h) * side + x - h]
                    + buf[(y - h) * side + x + h]
                    + buf[(y + h) * side + x - h]
                    + buf[(y + h) * side + x + h])
                    * 0.25;
                buf[y * side + x] = if noisy { m + disp * symmetric(&mut rng) } else { m };
            }
        }
        // Square pass: edge midpoints (rows alternate between offsets h and 0).
        for y in (0..side).step_by(h) {
            let x0 = if (y / h).is_multiple_of(2) { h } else { 0 };
            for x in (x0..side).step_by(step) {
                let v = if noisy {
                    let mut sum = 0.0;
                    let mut n = 0.0;
                    if x >= h {
                        sum += buf[y * side + x - h];
                        n += 1.0;
                    }
                    if x + h < side {
                        sum += buf[y * side + x + h];
                        n += 1.0;
                    }
                    if y >= h {
                        sum += buf[(y - h) * side + x];
                        n += 1.0;
                    }
                    if y + h < side {
                        sum += buf[(y + h) * side + x];
                        n += 1.0;
                    }
                    sum / n + disp * symmetric(&mut rng)
                } else if x0 == h {
                    // Horizontal edge: mean of its two ends (bilinear).
                    (buf[y * side + x - h] + buf[y * side + x + h]) * 0.5
                } else {
                    (buf[(y - h) * side + x] + buf[(y + h) * side + x]) * 0.5
                };
                buf[y * side + x] = v;
            }
        }
        disp *= sub.decay;
        step = h;
        level += 1;
    }
}

/// Checks a world window function `window((x0, y0), (width, height))` (row-major heights)
/// for the bit-exact rule: every sub-window (odd sizes, negative origins, single cells, and
/// windows at |x| = 10⁷ cells) equals the same cells cut from a larger window. Panics naming
/// the first differing cell.
#[cfg(test)]
pub(crate) fn assert_world_window_is_crop(window: &dyn Fn((i64, i64), (usize, usize)) -> Vec<f32>) {
    let far = 10_000_000i64;
    for (big_origin, big_size) in [((-41, -29), (97usize, 83usize)), ((far - 30, -far - 17), (61, 45))] {
        let big = window(big_origin, big_size);
        assert_eq!(big.len(), big_size.0 * big_size.1);
        let subs = [
            ((0usize, 0usize), (big_size.0, 1usize)),
            ((3, 5), (31, 17)),
            ((40, 41), (1, 1)),
            ((11, 2), (7, 77)),
        ];
        for ((dx, dy), (w, h)) in subs {
            let (w, h) = (w.min(big_size.0 - dx), h.min(big_size.1 - dy));
            let origin = (big_origin.0 + dx as i64, big_origin.1 + dy as i64);
            let sub = window(origin, (w, h));
            for y in 0..h {
                for x in 0..w {
                    let (a, b) = (sub[y * w + x], big[(y + dy) * big_size.0 + x + dx]);
                    assert_eq!(
                        a.to_bits(),
                        b.to_bits(),
                        "world cell ({}, {}): window {origin:?} {w}x{h} gives {a}, window {big_origin:?} gives {b}",
                        origin.0 + x as i64,
                        origin.1 + y as i64
                    );
                }
            }
        }
        // The windows are not flat (the check above would pass trivially on a constant).
        assert!(big.iter().any(|&v| v != big[0]), "window {big_origin:?} is flat");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pow2_exponent_covers_the_map() {
        assert_eq!(pow2_exponent(1, 1), 1);
        assert_eq!(pow2_exponent(3, 2), 1);
        assert_eq!(pow2_exponent(4, 4), 2);
        assert_eq!(pow2_exponent(5, 5), 2);
        assert_eq!(pow2_exponent(6, 2), 3);
        assert_eq!(pow2_exponent(1000, 600), 10);
        assert_eq!(pow2_exponent(1025, 7), 10);
    }

    #[test]
    fn lattice_values_are_in_range_and_stable() {
        for i in -50..50 {
            assert!((-1.0..1.0).contains(&lattice_value(7, i, 3 * i)));
        }
        // Reference values from an independent re-implementation of the formula (SplitMix64's
        // finaliser, `derive_seed`, then `(h >> 11)·2⁻⁵² − 1`) in Python's integers and floats.
        // A change here changes the maps of every generator that uses it (spectral).
        let reference = [
            ((7, 0, 0), 0.4659433640031505),
            ((7, 1, 2), 0.4173330105863602),
            ((7, 2, 1), -0.6219738734200126),
            ((8, 1, 2), -0.015472895945097598),
            ((7, -50, -150), -0.3129870677950366),
            ((7, 49, 147), 0.15142324196567558),
            ((0, -1, 1 << 40), -0.03270442738347468),
        ];
        for ((seed, ix, iy), want) in reference {
            assert_eq!(lattice_value(seed, ix, iy).to_bits(), f64::to_bits(want), "({seed}, {ix}, {iy})");
        }
    }

    #[test]
    fn top_spacing_is_the_nearest_power_of_two() {
        assert_eq!(top_spacing_cells(3840.0, 30.0), 128);
        assert_eq!(top_spacing_cells(181.0 * 30.0, 30.0), 128); // 128·√2 = 181.02
        assert_eq!(top_spacing_cells(182.0 * 30.0, 30.0), 256);
        assert_eq!(top_spacing_cells(91.0, 1.0), 128); // 64·√2 = 90.5
        assert_eq!(top_spacing_cells(1.0, 30.0), 2);
        assert_eq!(top_spacing_cells(1e12, 1.0), MAX_TOP_SPACING_CELLS);
        assert_eq!((level_index(128, 64), level_index(128, 1)), (0, 6));
    }

    #[test]
    fn lattice_rect_covers_outward() {
        let r = LatticeRect::covering(4, -5, 6, 0, 0);
        assert_eq!((r.i0, r.nx, r.j0, r.ny), (-2, 5, 0, 1)); // -8 ..= 8
        let r = LatticeRect::covering(4, -8, 8, 3, 4);
        assert_eq!((r.i0, r.nx, r.j0, r.ny), (-2, 5, 0, 2));
        assert_eq!(r.grown(1).at(-3, -1), 0);
    }

    #[test]
    fn noiseless_subdivision_is_bilinear() {
        let side = 9;
        let mut buf = vec![0.0; side * side];
        buf[0] = 0.0;
        buf[side - 1] = 8.0;
        buf[(side - 1) * side] = 16.0;
        buf[side * side - 1] = 24.0;
        let sub = Subdivision { disp0: 1.0, decay: 0.5, noisy_levels: 0 };
        diamond_square_fill(&mut buf, side, 8, sub, 1);
        for y in 0..side {
            for x in 0..side {
                assert_eq!(buf[y * side + x], (x + 2 * y) as f64, "({x}, {y})");
            }
        }
    }
}
