//! Terrain metrics: height statistics, slope statistics and Olsen's erosion score, hypsometric
//! integral, peak and pit densities; biome classification and splat maps ([`biomes`]); the
//! realism figures in physical units (spectral slope, slope percentiles, drainage, Hack's law,
//! isotropy: [`realism`], printed by `terrasynth analyze`).
//!
//! ## Slope and erosion score
//! Olsen's slope `s` (largest absolute height difference to the 4 axis neighbours, edges
//! closed) and `ε = σ_s / s̄` come from [`erosion_score`] (module [`mod@score`], the one
//! implementation, with the definition and its source). `slope_mean` and `slope_std` are then
//! divided by the height range (max − min; 0 for a flat map), so they read in normalised
//! height per cell and do not depend on the height unit; ε needs no such step.
//!
//! ## Hypsometric integral: `(mean − min) / (max − min)` (0 for a flat map; Strahler 1952).
//! High values (> 0.6) mean convex, young relief with most land high up; low values
//! (< 0.35) mean old, eroded relief with wide lowlands.
//!
//! ## Peaks and pits: a peak is an interior cell (not on the border) strictly higher than all 8
//! neighbours; a pit is one strictly lower than all 8. Counts are given per 10 000 interior
//! cells (`count · 10⁴ / ((W − 2)(H − 2))`, 0 for maps narrower than 3 cells).
//!
//! Heights are assumed finite. All sums are in f64; rows are processed in parallel and their
//! partial sums added in row order, so the values do not depend on the thread count.

mod fft;
pub mod realism;
pub mod score;

pub use realism::{Realism, RealismOptions};
pub use score::{ErosionScore, Trace, TraceRecord, epsilon, erosion_score, run_traced};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::Heightmap;
use crate::grid::{Boundary, D8};

pub mod biomes;

/// Metrics of one heightmap (see the module docs for each definition).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Smallest height (height units).
    pub min: f64,
    /// Largest height.
    pub max: f64,
    /// Mean height.
    pub mean: f64,
    /// Mean slope `s̄`, in normalised height (map range = 1) per cell.
    pub slope_mean: f64,
    /// Population standard deviation of the slope `σ_s`, same unit.
    pub slope_std: f64,
    /// Olsen's erosion score `ε = σ_s / s̄` (dimensionless; 0 for a flat map).
    pub erosion_score: f64,
    /// `(mean − min) / (max − min)` in [0, 1].
    pub hypsometric_integral: f64,
    /// Strict local maxima over the 8 neighbours, per 10 000 interior cells.
    pub peaks_per_10k: f64,
    /// Strict local minima over the 8 neighbours, per 10 000 interior cells.
    pub pits_per_10k: f64,
}

impl Metrics {
    /// Computes every metric of `map`.
    ///
    /// ```
    /// use terrasynth::{Heightmap, analyze::Metrics};
    /// // A plane: every cell has the same slope, so σ_s = 0 and ε = 0.
    /// let plane = Heightmap::from_fn(8, 8, 1.0, |x, y| (x + 2 * y) as f32).unwrap();
    /// let m = Metrics::compute(&plane);
    /// assert!(m.erosion_score.abs() < 1e-9);
    /// assert!((m.hypsometric_integral - 0.5).abs() < 1e-9);
    /// ```
    pub fn compute(map: &Heightmap) -> Self {
        let (w, h) = (map.width(), map.height());
        let stats = map.stats();
        let (lo, hi) = (stats.min as f64, stats.max as f64);
        let range = hi - lo;
        let inv = if range > 0.0 { 1.0 / range } else { 0.0 };
        let data = map.as_slice();
        let slopes = erosion_score(map, Boundary::Closed);
        let (slope_mean, slope_std) = (slopes.mean_slope * inv, slopes.slope_std * inv);

        // Peaks and pits over interior cells.
        let (peaks, pits) = if w >= 3 && h >= 3 {
            let counts: Vec<(u64, u64)> = (1..h - 1)
                .into_par_iter()
                .map(|y| {
                    let (mut pk, mut pt) = (0u64, 0u64);
                    for x in 1..w - 1 {
                        let c = data[y * w + x];
                        let (mut higher, mut lower) = (true, true);
                        // Any order: only "all higher" / "all lower" is counted.
                        for (dx, dy) in D8 {
                            let v = data[(y as isize + dy as isize) as usize * w
                                + (x as isize + dx as isize) as usize];
                            higher &= c > v;
                            lower &= c < v;
                        }
                        pk += higher as u64;
                        pt += lower as u64;
                    }
                    (pk, pt)
                })
                .collect();
            let interior = ((w - 2) * (h - 2)) as f64;
            let (pk, pt) = counts.iter().fold((0, 0), |(a, b), &(c, d)| (a + c, b + d));
            (pk as f64 * 1.0e4 / interior, pt as f64 * 1.0e4 / interior)
        } else {
            (0.0, 0.0)
        };

        Self {
            min: lo,
            max: hi,
            mean: stats.mean,
            slope_mean,
            slope_std,
            erosion_score: slopes.epsilon,
            hypsometric_integral: if range > 0.0 { (stats.mean - lo) / range } else { 0.0 },
            peaks_per_10k: peaks,
            pits_per_10k: pits,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_4x4() {
        // 0 0 0 0
        // 0 4 0 0
        // 0 0 0 0
        // 0 0 0 8
        // Normalised (÷8): the 4 becomes 0.5, the 8 becomes 1.
        // Slopes: the 0.5 cell and its 4 neighbours have 0.5; the 1 cell and its 2 neighbours
        // have 1; the other 8 cells have 0. Sum = 5·0.5 + 3·1 = 5.5 → s̄ = 5.5/16 = 0.34375.
        // Σs² = 5·0.25 + 3 = 4.25 → var = 4.25/16 − 0.34375² = 0.1474609375.
        // Mean height 12/16 = 0.75; hypsometric = 0.75/8 = 0.09375.
        // Interior cells (1,1), (2,1), (1,2), (2,2): only (1,1) = 4 is a strict peak → 1/4 of
        // the interior = 2500 per 10k; no strict pit (flat zero neighbours are not lower).
        let mut map = Heightmap::new(4, 4, 1.0).unwrap();
        map[(1, 1)] = 4.0;
        map[(3, 3)] = 8.0;
        let m = Metrics::compute(&map);
        assert_eq!((m.min, m.max, m.mean), (0.0, 8.0, 0.75));
        assert_eq!(m.slope_mean, 0.34375);
        assert!((m.slope_std - 0.1474609375f64.sqrt()).abs() < 1e-12);
        assert!((m.erosion_score - 0.1474609375f64.sqrt() / 0.34375).abs() < 1e-12);
        assert_eq!(m.hypsometric_integral, 0.09375);
        assert_eq!(m.peaks_per_10k, 2500.0);
        assert_eq!(m.pits_per_10k, 0.0);
        // Negating the map turns the peak into a pit and keeps the slope statistics.
        let neg = map.map(|v| -v);
        let n = Metrics::compute(&neg);
        assert_eq!((n.peaks_per_10k, n.pits_per_10k), (0.0, 2500.0));
        assert!((n.erosion_score - m.erosion_score).abs() < 1e-12);
    }

    #[test]
    fn plane_has_zero_slope_spread_and_flat_map_is_all_zero() {
        let plane = Heightmap::from_fn(5, 5, 1.0, |x, y| (x + 2 * y) as f32).unwrap();
        let m = Metrics::compute(&plane);
        assert!((m.slope_mean - 2.0 / 12.0).abs() < 1e-12);
        assert!(m.slope_std < 1e-12 && m.erosion_score < 1e-9);
        assert_eq!((m.peaks_per_10k, m.pits_per_10k), (0.0, 0.0));
        let flat = Heightmap::filled(6, 6, 1.0, 3.0).unwrap();
        let f = Metrics::compute(&flat);
        assert_eq!(
            (f.slope_mean, f.slope_std, f.erosion_score, f.hypsometric_integral),
            (0.0, 0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn scale_invariant_and_serialises_with_exact_field_names() {
        let map = Heightmap::from_fn(33, 33, 1.0, |x, y| (x as f32 * 0.37).sin() * (y as f32 * 0.21).cos())
            .unwrap();
        let a = Metrics::compute(&map);
        let b = Metrics::compute(&map.map(|v| v * 100.0 + 5.0));
        assert!((a.erosion_score - b.erosion_score).abs() < 1e-5);
        assert!((a.hypsometric_integral - b.hypsometric_integral).abs() < 1e-5);
        let json = serde_json::to_value(a).unwrap();
        let keys: Vec<_> = json.as_object().unwrap().keys().cloned().collect();
        let mut expected = vec![
            "min",
            "max",
            "mean",
            "slope_mean",
            "slope_std",
            "erosion_score",
            "hypsometric_integral",
            "peaks_per_10k",
            "pits_per_10k",
        ];
        expected.sort();
        let mut keys = keys;
        keys.sort();
        assert_eq!(keys, expected);
    }

    #[test]
    fn same_result_on_any_thread_count() {
        let map =
            Heightmap::from_fn(129, 97, 1.0, |x, y| ((x * 7919 + y * 104729) % 1013) as f32 * 0.001).unwrap();
        let run = |n| {
            rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap().install(|| Metrics::compute(&map))
        };
        let one = run(1);
        assert_eq!(one, run(2));
        assert_eq!(one, run(4));
    }
}
