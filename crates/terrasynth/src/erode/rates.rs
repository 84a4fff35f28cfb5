//! Uplift and erodibility that vary over the land (issue 13 §3: "uplift and erodibility from
//! noise fields (ranges, hard and soft rock)"), for [`StreamPowerEroder`](super::StreamPowerEroder).
//!
//! Landscape evolution models take both rates as fields rather than constants: uplift `U(x)`
//! raises mountain ranges where it is high and leaves basins where it is low, and erodibility
//! `K(x)` is high in soft rock, which wears down into valleys and lowlands, and low in hard
//! rock, which stands as ridges and plateaus (Braun & Willett 2013 let `U` and `K` vary from
//! node to node; Cordonnier et al. 2016 paint the uplift map to shape ranges). Here each field is a
//! fractal Perlin noise `n(x)` (four octaves, persistence ½, scaled to about [−1, 1] and
//! clamped there) of its own seed:
//! - **uplift** `U(x) = U·(1 + v·n(x))`, `v` = `uplift-variation` in [0, 1], so `U` spans
//!   `U·(1 − v)` to `U·(1 + v)` and keeps its mean;
//! - **erodibility** `K(x) = K·c^s(x)` with `s = clamp(2·n, −1, 1)`, `c` = `rock-contrast` ≥ 1:
//!   patches of hard rock (`K/c`) and soft rock (`K·c`) with sharper borders than the noise,
//!   the geometric mean still `K`.
//!
//! Both are functions of the **world cell**: cell `(x, y)` samples the noise at
//! `(x/ℓ, y/ℓ)`, `ℓ` the field's base lattice size in cells, never at a position relative to
//! the window it is computed in, so the coarse grid of [`CoarseToFine`](super::CoarseToFine)
//! (its cell `X` is the fine cell `X·f`) sees the same field as the fine one, and the tiled
//! stream power of endless worlds will find the same rates in every tile.

use terrasynth_noise::rng::derive_seed;
use terrasynth_noise::{CellRegion, FractalKind, NoiseKind, NoiseSpec, Seed, detmath};

use crate::{Error, Result};

/// The noise values are divided by this before clamping to [−1, 1]: about 2.3 standard
/// deviations of the four-octave Perlin fBm (σ = 0.131 over a 1000² window, 27 lattice cells
/// across), so about 2 % of cells reach the ends.
const NOISE_SCALE: f64 = 0.3;

/// The two rate fields of stream power. The default is uniform rates (no field).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateFields {
    /// Relative amplitude `v` of the uplift field, in [0, 1]; 0 = uniform uplift.
    pub uplift_variation: f64,
    /// Base lattice size of the uplift field, in cells (> 0).
    pub uplift_size: f64,
    /// Erodibility ratio `c` between soft and average rock (and average and hard), in
    /// [1, 100]; 1 = uniform erodibility.
    pub rock_contrast: f64,
    /// Base lattice size of the rock field, in cells (> 0).
    pub rock_size: f64,
    /// Seed of both fields (each derives its own stream).
    pub seed: u64,
}

impl Default for RateFields {
    fn default() -> Self {
        Self { uplift_variation: 0.0, uplift_size: 256.0, rock_contrast: 1.0, rock_size: 128.0, seed: 0 }
    }
}

impl RateFields {
    /// Checks the ranges (the recipe keys' specs hold the same ones).
    pub fn check(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.uplift_variation) {
            return Err(Error::param("uplift-variation", self.uplift_variation, "a number in [0, 1]"));
        }
        if !(1.0..=100.0).contains(&self.rock_contrast) {
            return Err(Error::param("rock-contrast", self.rock_contrast, "a number in [1, 100]"));
        }
        for (name, v) in [("uplift-size", self.uplift_size), ("rock-size", self.rock_size)] {
            if !(v.is_finite() && v > 0.0 && v <= 1e9) {
                return Err(Error::param(name, v, "a size in (0, 1e9] cells"));
            }
        }
        Ok(())
    }

    /// Whether uplift varies.
    pub fn has_uplift(&self) -> bool {
        self.uplift_variation > 0.0
    }

    /// Whether erodibility varies.
    pub fn has_rock(&self) -> bool {
        self.rock_contrast > 1.0
    }

    /// The uplift multipliers `1 + v·n` of a `w × h` grid whose cell `(X, Y)` is the world
    /// cell `(X·step, Y·step)` (step 1 for a full-resolution grid, `f` for a coarse one).
    pub fn uplift_factors(&self, w: usize, h: usize, step: usize) -> Result<Vec<f64>> {
        let v = self.uplift_variation;
        self.sample(w, h, step, self.uplift_size, 1, |n| 1.0 + v * n)
    }

    /// The erodibility multipliers `c^clamp(2n, −1, 1)` of the same grid as
    /// [`RateFields::uplift_factors`].
    pub fn rock_factors(&self, w: usize, h: usize, step: usize) -> Result<Vec<f64>> {
        // detmath, not the platform's libm: the same bits on every platform.
        let ln_c = detmath::ln(self.rock_contrast);
        self.sample(w, h, step, self.rock_size, 2, |n| detmath::exp(ln_c * (2.0 * n).clamp(-1.0, 1.0)))
    }

    /// The noise of stream `stream`, lattice `size` cells, scaled to [−1, 1] and mapped by
    /// `f`, at every cell of the grid.
    fn sample(
        &self,
        w: usize,
        h: usize,
        step: usize,
        size: f64,
        stream: u64,
        f: impl Fn(f64) -> f64,
    ) -> Result<Vec<f64>> {
        self.check()?;
        crate::memory::check_cells(w, h, 12, "stream power's rate field")?;
        let spec = NoiseSpec {
            kind: NoiseKind::Perlin,
            fractal: FractalKind::Fbm,
            octaves: 4,
            persistence: 0.5,
            lacunarity: 2.0,
            seed: Seed::Number(derive_seed(self.seed, stream)),
            ..NoiseSpec::default()
        };
        let bad =
            |e: &dyn std::fmt::Display| Error::param("rate field", size, format!("a valid noise ({e})"));
        let noise = spec.build().map_err(|e| bad(&e))?;
        let scale = step as f64 / size;
        let cells = CellRegion {
            col0: 0,
            row0: 0,
            width: w,
            height: h,
            scale_x: scale,
            scale_y: scale,
            offset_x: 0.0,
            offset_y: 0.0,
        };
        let mut raw = vec![0f32; w * h];
        noise.fill_cells(&cells, &mut raw).map_err(|e| bad(&e))?;
        Ok(raw.iter().map(|&n| f((n as f64 / NOISE_SCALE).clamp(-1.0, 1.0))).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> RateFields {
        RateFields { uplift_variation: 0.6, uplift_size: 40.0, rock_contrast: 4.0, rock_size: 25.0, seed: 7 }
    }

    /// The factors stay in their ranges, average about 1 (uplift) and reach both rock
    /// extremes, and the two fields are different noises.
    #[test]
    fn factors_span_their_ranges() {
        let f = fields();
        let up = f.uplift_factors(200, 150, 1).unwrap();
        let rock = f.rock_factors(200, 150, 1).unwrap();
        assert!(up.iter().all(|&u| (0.4 - 1e-12..=1.6 + 1e-12).contains(&u)));
        let mean = up.iter().sum::<f64>() / up.len() as f64;
        assert!((mean - 1.0).abs() < 0.15, "mean uplift factor {mean}");
        let spread = up.iter().fold(0.0f64, |m, &u| m.max((u - 1.0).abs()));
        assert!(spread > 0.3, "uplift varies by {spread} only");
        assert!(rock.iter().all(|&k| (0.25 - 1e-12..=4.0 + 1e-12).contains(&k)));
        let hard = rock.iter().filter(|&&k| k < 0.26).count();
        let soft = rock.iter().filter(|&&k| k > 3.9).count();
        assert!(hard > 100 && soft > 100, "hard {hard}, soft {soft} cells");
        // Not the same noise: the rock field is not a function of the uplift field.
        let same_sign = up.iter().zip(&rock).filter(|(u, k)| (**u > 1.0) == (**k > 1.0)).count();
        assert!(same_sign < up.len() * 3 / 4 && same_sign > up.len() / 4);
    }

    /// Uniform when switched off: every factor exactly 1.
    #[test]
    fn neutral_settings_give_ones() {
        let f = RateFields { uplift_variation: 0.0, rock_contrast: 1.0, ..fields() };
        assert!(f.uplift_factors(30, 20, 1).unwrap().iter().all(|&u| u == 1.0));
        assert!(f.rock_factors(30, 20, 1).unwrap().iter().all(|&k| k == 1.0));
    }

    /// A coarse grid at step `s` samples the fine grid's field at its lattice cells (within a
    /// rounding of the sample position), so coarse and fine steps erode the same rocks.
    #[test]
    fn coarse_grid_samples_the_fine_field_at_its_lattice_cells() {
        let f = fields();
        let fine = f.rock_factors(81, 61, 1).unwrap();
        let coarse = f.rock_factors(21, 16, 4).unwrap();
        for y in 0..16 {
            for x in 0..21 {
                let (a, b) = (coarse[y * 21 + x], fine[(4 * y) * 81 + 4 * x]);
                assert!((a - b).abs() < 1e-5 * b, "({x}, {y}): {a} vs {b}");
            }
        }
    }

    /// Out-of-range settings are refused with the allowed range.
    #[test]
    fn bad_settings_name_the_range() {
        for (f, key) in [
            (RateFields { uplift_variation: 1.5, ..fields() }, "uplift-variation"),
            (RateFields { rock_contrast: 0.5, ..fields() }, "rock-contrast"),
            (RateFields { rock_size: 0.0, ..fields() }, "rock-size"),
            (RateFields { uplift_size: f64::NAN, ..fields() }, "uplift-size"),
        ] {
            let e = f.check().unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
    }
}
