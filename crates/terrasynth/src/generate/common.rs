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
    let h = mix64(derive_seed(seed, ix as u64) ^ (iy as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93));
    (h >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
}

/// The cubic smoothstep `3t² − 2t³`.
#[inline]
pub(crate) fn smoothstep(t: f64) -> f64 {
    t * t * (3.0 - 2.0 * t)
}

/// Replaces the terrain's heights with `map`, keeping the terrain's cell size.
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
