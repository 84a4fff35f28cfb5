//! Spectral synthesis: a sum of interpolated random lattices (seed 001 §1.1.2).

use rayon::prelude::*;
use terrasynth_noise::detmath::smoothstep;
use terrasynth_noise::rng::derive_seed;

use super::common::{
    field_window, lattice_value, refuse_world_length, with_feature_size_m, world_generator_methods,
    world_length,
};
use super::{Generator, GeneratorStep};
use crate::step::params::{Choice, choice_enum, step_params};
use crate::step::{Category, DefaultValue, ParamKind, StepInfo};
use crate::{Heightmap, Progress, Result};

choice_enum! {
    /// How a lattice layer is interpolated between its points.
    pub enum Interpolation {
        /// Bilinear (the seed's choice: "simple, fast, good results"). Shows faint creases along
        /// lattice lines.
        Linear = "linear",
        /// Bilinear with smoothstep weights `3t² − 2t³`: no creases, a little slower.
        Smooth = "smooth",
    }
}

step_params! {
    /// Spectral synthesis (seed 001 §1.1.2): `h = Σ_{i=0}^{passes−1} p^i · L_i`, where layer `L_i`
    /// is a lattice of `f_i` random values in [−1, 1) per map side (along the longer side; the
    /// shorter side gets the same spacing), interpolated to every cell, and
    /// `f_{i+1} = f_i · step` (`f_i` is rounded and capped at one value per cell).
    ///
    /// Lattice point values are hashes of (layer seed, lattice coordinates), so every cell is
    /// computed independently (rayon over rows, bit-identical for any thread count). The seed's
    /// figure 6 uses start 4, step 2, persistence 0.5, 4 passes, linear interpolation; Olsen 2004
    /// (research/algorithms.md §1) uses up to 9 octaves at N = 512.
    ///
    /// **In a world** (an endless plane, any window on demand) there is no map side and no
    /// global FFT-like pass: layer `i` is the lattice of spacing `λ_i = feature-size-m / step^i` metres
    /// (at least one cell), its values hashed from (layer seed, world lattice coordinates) and
    /// its origin shifted by a hashed fraction of `λ_i` (so the layers' lattice lines do not all
    /// meet at the world origin), interpolated as `interpolation` says at each cell's position in
    /// metres, and weighted by the seed's amplitude law `A_i = p^i` for frequencies
    /// `f_i = f_0 · step^i` (seed 001 §1.1.2): `A ∝ f^(−β)` with `β = −ln p / ln step`, the
    /// `1/f^β` spectrum (β = 1 for the default `p = 0.5`, `step = 2`). Powers are repeated
    /// multiplications, interpolation is polynomial: no libm. Each cell depends only on its world
    /// coordinates (reach 0), so any window equals the same cells of any larger window.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Spectral {
        start_frequency: f64 = ParamSpec {
            name: "start-frequency",
            label: "Start frequency",
            kind: ParamKind::Float { min: 2.0, max: 4096.0 },
            default: DefaultValue::Number(4.0),
            unit: "points per side",
            doc: "Lattice points along the map's longer side in the first pass (seed 001 §1.1.2, \
                  figure 6 uses 4). Higher gives more, smaller main features.",
        },
        step: f64 = ParamSpec {
            name: "step",
            label: "Frequency step",
            kind: ParamKind::Float { min: 1.1, max: 8.0 },
            default: DefaultValue::Number(2.0),
            unit: "",
            doc: "Frequency multiplier between passes (seed 001 §1.1.2: f_{i+1} = f_i × step).",
        },
        persistence: f64 = ParamSpec {
            name: "persistence",
            label: "Persistence",
            kind: ParamKind::Float { min: 0.0, max: 1.0 },
            default: DefaultValue::Number(0.5),
            unit: "",
            doc: "Amplitude of pass i is persistence^i (seed 001 §1.1.2). Higher keeps more \
                  fine detail (rougher).",
        },
        passes: u32 = ParamSpec {
            name: "passes",
            label: "Passes",
            kind: ParamKind::Int { min: 1, max: 16 },
            default: DefaultValue::Number(6.0),
            unit: "",
            doc: "Number of layers summed (seed 001 §1.1.2).",
        },
        interpolation: Interpolation = ParamSpec {
            name: "interpolation",
            label: "Interpolation",
            kind: ParamKind::Choice(Interpolation::NAMES),
            default: DefaultValue::Text("smooth"),
            unit: "",
            doc: "`linear` (the seed's choice, faint creases on lattice lines) or `smooth` \
                  (smoothstep weights, no creases).",
        },
        feature_size_m: Option<f64> = ParamSpec {
            name: "feature-size-m",
            label: "World feature size",
            kind: ParamKind::Float { min: 1e-3, max: 1e9 },
            default: DefaultValue::Absent,
            unit: "m",
            doc: "World recipes only (and required there): lattice spacing of the first pass in \
                  metres (its wavelength); pass i has feature-size-m / step^i.",
        },
    }
}

/// One pass's interpolation weight at each x of a row, and the spans of x sharing a lattice
/// column: `(first x, end, column)`.
type PassColumns = (Vec<f64>, Vec<(usize, usize, usize)>);

impl Spectral {
    /// A checked generator.
    pub fn new(
        start_frequency: f64,
        step: f64,
        persistence: f64,
        passes: u32,
        interpolation: Interpolation,
    ) -> Result<Self> {
        let s = Self { start_frequency, step, persistence, passes, interpolation, feature_size_m: None };
        s.check_ranges()?;
        Ok(s)
    }

    with_feature_size_m!();

    /// The registry entry.
    pub fn info() -> StepInfo {
        StepInfo {
            name: "spectral",
            category: Category::Generate,
            doc: "Spectral synthesis: sum of random lattices of rising frequency and falling \
                  amplitude, interpolated to the grid.",
            source: "seed 001 §1.1.2; Olsen 2004 §2 (research/algorithms.md §1)",
            params: Self::PARAMS,
            build: |p| Ok(Box::new(GeneratorStep(Self::read_params(p)?))),
        }
    }

    /// Amplitude `p^i` of every pass, by repeated multiplication (exact same bits everywhere).
    pub(crate) fn amplitudes(&self) -> Vec<f64> {
        std::iter::successors(Some(1.0), |a| Some(a * self.persistence)).take(self.passes as usize).collect()
    }

    /// Lattice spacing (in cells) of every pass for a map whose longer side is `long_side`.
    fn spacings(&self, long_side: usize) -> Vec<f64> {
        let span = (long_side.max(2) - 1) as f64;
        (0..self.passes)
            .map(|i| {
                let f = (self.start_frequency * mul_pow(self.step, i)).round().clamp(2.0, span + 1.0);
                span / (f - 1.0)
            })
            .collect()
    }

    /// The sum of the passes at every cell, in f64 (amplitudes `p^i`, values in
    /// `[−Σp^i, Σp^i]`).
    pub(crate) fn field(&self, width: usize, height: usize, seed: u64) -> Vec<f64> {
        let rows = self.rows(width, height, seed);
        let mut out = vec![0.0f64; width * height];
        out.par_chunks_mut(width).enumerate().for_each(|(y, row)| rows.row(y, row));
        out
    }

    /// The field of [`Spectral::field`] row by row ([`FieldRows::row`]), for callers that use
    /// each row at once instead of holding the whole field: the same values, bit for bit.
    pub(crate) fn rows(&self, width: usize, height: usize, seed: u64) -> FieldRows {
        let spacings = self.spacings(width.max(height));
        let amps: Vec<f64> = self.amplitudes();
        let seeds: Vec<u64> = (0..self.passes as u64).map(|i| derive_seed(seed, i)).collect();
        let smooth = self.interpolation == Interpolation::Smooth;
        // Every row has the same lattice column and weight at each x, per pass: computed once,
        // as the weights and the spans of x that share a lattice column (the inner loop then
        // runs over a span with the column's lattice values fixed: no lookup per cell, SIMD
        // lanes; the same arithmetic as a lookup per cell).
        let passes: Vec<PassColumns> = spacings
            .iter()
            .map(|&s| {
                let mut weights = Vec::with_capacity(width);
                let mut spans: Vec<(usize, usize, usize)> = Vec::new();
                for x in 0..width {
                    let u = x as f64 / s;
                    let ix = u.floor();
                    weights.push(if smooth { smoothstep(u - ix) } else { u - ix });
                    match spans.last_mut() {
                        Some((_, end, column)) if *column == ix as usize => *end = x + 1,
                        _ => spans.push((x, x + 1, ix as usize)),
                    }
                }
                (weights, spans)
            })
            .collect();
        FieldRows { width, spacings, amps, seeds, smooth, passes }
    }
}

/// A [`Spectral`] field ready to be computed row by row ([`Spectral::rows`]).
pub(crate) struct FieldRows {
    width: usize,
    spacings: Vec<f64>,
    amps: Vec<f64>,
    seeds: Vec<u64>,
    smooth: bool,
    passes: Vec<PassColumns>,
}

impl FieldRows {
    /// Row `y` of the field into `row` (`width` cells), which need not be zeroed: the first
    /// pass writes without reading.
    pub(crate) fn row(&self, y: usize, row: &mut [f64]) {
        let width = self.width;
        debug_assert_eq!(row.len(), width);
        // Lattice values of the two lattice rows around y, one per lattice column.
        let (mut top, mut bottom) = (Vec::new(), Vec::new());
        for (i, &s) in self.spacings.iter().enumerate() {
            let v = y as f64 / s;
            let iy = v.floor();
            let ty = if self.smooth { smoothstep(v - iy) } else { v - iy };
            let iy = iy as i64;
            let columns = ((width - 1) as f64 / s).floor() as i64 + 2;
            top.clear();
            bottom.clear();
            top.extend((0..columns).map(|ix| lattice_value(self.seeds[i], ix, iy)));
            bottom.extend((0..columns).map(|ix| lattice_value(self.seeds[i], ix, iy + 1)));
            let (weights, spans) = &self.passes[i];
            let amp = self.amps[i];
            for &(from, to, ix) in spans {
                let (t0, t1, b0, b1) = (top[ix], top[ix + 1], bottom[ix], bottom[ix + 1]);
                let value = |tx: f64| {
                    let t = t0 + (t1 - t0) * tx;
                    let b = b0 + (b1 - b0) * tx;
                    amp * (t + (b - t) * ty)
                };
                let cells = row[from..to].iter_mut().zip(&weights[from..to]);
                if i == 0 {
                    // The first pass writes without reading (the same `0.0 + v`): a fresh
                    // page of the field read before it is written is mapped to the shared
                    // zero page, and replacing it costs an inter-processor TLB flush per 4 KiB
                    // (perturbation at 4097² on 2 threads: 1.2 s of 1.5 s in those).
                    cells.for_each(|(cell, &tx)| *cell = 0.0 + value(tx));
                } else {
                    cells.for_each(|(cell, &tx)| *cell += value(tx));
                }
            }
        }
    }
}

impl Spectral {
    /// The sum of the passes over the window `width × height` at world cell `(x0, y0)` of the
    /// endless world with cells of `cell_size_m` metres (see the type's docs).
    pub(crate) fn world_window(
        &self,
        origin: (i64, i64),
        cell_size_m: f64,
        size: (usize, usize),
        seed: u64,
        progress: &Progress,
    ) -> Result<Heightmap> {
        field_window(size, progress, || self.world_field(origin, cell_size_m, size, seed))
    }

    /// The same window as a field of f64 values.
    pub(crate) fn world_field(
        &self,
        (x0, y0): (i64, i64),
        cell_size_m: f64,
        (width, height): (usize, usize),
        seed: u64,
    ) -> Result<Vec<f64>> {
        let amps = self.amplitudes();
        let smooth = self.interpolation == Interpolation::Smooth;
        let weight = |t: f64| if smooth { smoothstep(t) } else { t };
        let mut out = vec![0.0f64; width * height];
        let mut wavelength = world_length(self.feature_size_m, "spectral")?;
        for (pass, &amp) in amps.iter().enumerate() {
            let seed = derive_seed(seed, pass as u64);
            // Cells per lattice step (at most one lattice value per cell).
            let scale = cell_size_m / wavelength.max(cell_size_m);
            wavelength /= self.step;
            // The layer's origin, shifted by a hashed fraction of its spacing.
            let shift = derive_seed(seed, 0x7368_6966);
            let (ox, oy) =
                ((lattice_value(shift, 0, 0) + 1.0) * 0.5, (lattice_value(shift, 1, 0) + 1.0) * 0.5);
            // Per column: lattice column and weight (the same for every row).
            let columns: Vec<(i64, f64)> = (0..width)
                .map(|i| {
                    let u = (x0 + i as i64) as f64 * scale + ox;
                    let iu = u.floor();
                    (iu as i64, weight(u - iu))
                })
                .collect();
            let first = columns[0].0;
            let count = (columns[width - 1].0 - first + 2) as usize;
            out.par_chunks_mut(width).enumerate().for_each(|(r, row)| {
                let v = (y0 + r as i64) as f64 * scale + oy;
                let iv = v.floor();
                let ty = weight(v - iv);
                let iv = iv as i64;
                let top: Vec<f64> = (0..count).map(|k| lattice_value(seed, first + k as i64, iv)).collect();
                let bottom: Vec<f64> =
                    (0..count).map(|k| lattice_value(seed, first + k as i64, iv + 1)).collect();
                for (cell, &(iu, tx)) in row.iter_mut().zip(&columns) {
                    let k = (iu - first) as usize;
                    let t = top[k] + (top[k + 1] - top[k]) * tx;
                    let b = bottom[k] + (bottom[k + 1] - bottom[k]) * tx;
                    *cell += amp * (t + (b - t) * ty);
                }
            });
        }
        Ok(out)
    }
}

/// `x^n` by repeated multiplication.
fn mul_pow(x: f64, n: u32) -> f64 {
    (0..n).fold(1.0, |acc, _| acc * x)
}

impl Generator for Spectral {
    fn generate(&self, width: usize, height: usize, seed: u64, _progress: &Progress) -> Result<Heightmap> {
        refuse_world_length(self.feature_size_m, "`start-frequency`")?;
        crate::grid::check_size::<f64>(width, height)?;
        let data = self.field(width, height, seed).into_iter().map(|v| v as f32).collect();
        Heightmap::from_vec(width, height, 1.0, data)
    }

    world_generator_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::common::assert_world_window_is_crop;

    #[test]
    fn world_windows_are_crops_of_larger_windows() {
        for interpolation in [Interpolation::Linear, Interpolation::Smooth] {
            let s =
                Spectral::new(4.0, 2.0, 0.5, 6, interpolation).unwrap().with_feature_size_m(1200.0).unwrap();
            assert_world_window_is_crop(&|o, size| {
                s.world_field(o, 30.0, size, 3).unwrap().into_iter().map(|v| v as f32).collect()
            });
        }
        // A step that is not a power of two, spacings that do not divide the cell size.
        let s = Spectral::new(4.0, 2.7, 0.6, 5, Interpolation::Smooth)
            .unwrap()
            .with_feature_size_m(777.7)
            .unwrap();
        assert_world_window_is_crop(&|o, size| {
            s.world_field(o, 13.3, size, 5).unwrap().into_iter().map(|v| v as f32).collect()
        });
    }

    /// One linear pass is bilinear between lattice points: along a row the second difference is
    /// zero except next to a lattice column (at most 2 cells per column, 20 columns in 200
    /// cells at spacing 10); the sum of the passes is bounded by `Σ p^i`.
    #[test]
    fn world_passes_are_interpolated_lattices() {
        let s = Spectral::new(4.0, 2.0, 0.5, 1, Interpolation::Linear)
            .unwrap()
            .with_feature_size_m(10.0)
            .unwrap();
        let row = s.world_field((-100, 3), 1.0, (200, 1), 1).unwrap();
        let kinks = (1..199).filter(|&i| (row[i - 1] - 2.0 * row[i] + row[i + 1]).abs() > 1e-12).count();
        assert!((19..=42).contains(&kinks), "{kinks} kinks over 20 lattice columns");
        let s = Spectral::new(4.0, 2.0, 0.5, 8, Interpolation::Smooth)
            .unwrap()
            .with_feature_size_m(300.0)
            .unwrap();
        let field = s.world_field((-50, -50), 10.0, (101, 101), 2).unwrap();
        let bound = s.amplitudes().iter().sum::<f64>();
        assert!(field.iter().all(|v| v.abs() <= bound));
        assert!(field.iter().any(|&v| v != field[0]));
    }
}
