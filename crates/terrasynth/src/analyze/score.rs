//! Olsen's erosion score ε, the one implementation every front end uses (report.json's
//! `metrics` and `erosion_scores`, `--trace`, the editor's ε label), and its trace over an
//! erosion run.
//!
//! ## Definition (Olsen 2004, "Realtime Procedural Terrain Generation", §"Erosion score";
//! seed 001 §3.3.3)
//! The slope of a cell is the largest absolute height difference to its 4 (von Neumann)
//! neighbours, `s = max(|h − h_W|, |h − h_E|, |h − h_N|, |h − h_S|)`. Then
//! `s̄ = mean(s)`, `σ_s = sqrt(mean((s − s̄)²))` (population standard deviation) and
//! `ε = σ_s / s̄` (0 when `s̄ = 0`). A good game terrain has a low `s̄` (walkable) and a high
//! `ε` (flat areas plus some steep relief). ε is dimensionless: scaling or shifting the heights
//! leaves it unchanged, so it is computed on the heights as they are (no normalisation).
//!
//! **Edges:** Olsen's maps are toroidal ([`Boundary::Wrap`]). A generated map is not periodic,
//! so wrapping would invent cliffs at the borders: terrasynth's reports use
//! [`Boundary::Closed`] (edge cells use only the neighbours that exist), see [`epsilon`].
//!
//! The slopes are computed and summed row by row in parallel (an inner row's slopes without
//! branches, then summed left to right, with their squared deviations about the row's mean),
//! and the rows combined top to bottom in one pass, so the result does not depend on the
//! thread count and needs no map-sized buffer.

use rayon::prelude::*;

use crate::erode::Eroder;
use crate::grid::Boundary;
use crate::{Grid, Heightmap, Progress, Result};

/// Slope statistics of a surface (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErosionScore {
    /// Mean slope s̄ (height units per cell).
    pub mean_slope: f64,
    /// Population standard deviation σ_s of the slope.
    pub slope_std: f64,
    /// `ε = σ_s / s̄` (0 when s̄ = 0). Dimensionless, invariant to height scaling.
    pub epsilon: f64,
}

/// The slopes of row `y` into `out` (`w` cells), left to right.
fn row_slopes<T>(data: &[T], w: usize, h: usize, y: usize, boundary: Boundary, out: &mut [f64])
where
    T: Copy + Into<f64>,
{
    let at = |x: usize, dx: isize, dy: isize| -> Option<f64> {
        let (nx, ny) = (x as isize + dx, y as isize + dy);
        let (nx, ny) = match boundary {
            Boundary::Closed if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize => return None,
            Boundary::Closed => (nx as usize, ny as usize),
            Boundary::Wrap => (nx.rem_euclid(w as isize) as usize, ny.rem_euclid(h as isize) as usize),
        };
        Some(data[ny * w + nx].into())
    };
    let edge = |x: usize| {
        [(0, -1), (-1, 0), (1, 0), (0, 1)]
            .iter()
            .filter_map(|&(dx, dy)| at(x, dx, dy))
            .fold(0.0f64, |m, v| m.max((data[y * w + x].into() - v).abs()))
    };
    if y == 0 || y + 1 == h || w < 3 {
        for (x, s) in out.iter_mut().enumerate() {
            *s = edge(x);
        }
        return;
    }
    // An inner row: its inner cells' slopes in a loop without branches (SIMD lanes), the edge
    // cells in their places. The largest of four absolute differences does not depend on the
    // order they are taken in.
    let row = y * w;
    let n = w - 2;
    let cells = |from: usize| &data[from..from + n];
    let (up, left, mid, right, down) =
        (cells(row - w + 1), cells(row), cells(row + 1), cells(row + 2), cells(row + w + 1));
    for (k, s) in out[1..w - 1].iter_mut().enumerate() {
        let c: f64 = mid[k].into();
        *s = 0.0f64
            .max((c - up[k].into()).abs())
            .max((c - left[k].into()).abs())
            .max((c - right[k].into()).abs())
            .max((c - down[k].into()).abs());
    }
    out[0] = edge(0);
    out[w - 1] = edge(w - 1);
}

/// Computes [`ErosionScore`] of `surface` (heights in `f32` or `f64`) with the given edge rule.
///
/// ```
/// use terrasynth::Grid;
/// use terrasynth::analyze::erosion_score;
/// use terrasynth::grid::Boundary;
/// // Slopes of [0, 1, 3] (closed): 1, 2, 2.
/// let g = Grid::from_vec(3, 1, 1.0, vec![0.0f64, 1.0, 3.0]).unwrap();
/// let s = erosion_score(&g, Boundary::Closed);
/// assert!((s.mean_slope - 5.0 / 3.0).abs() < 1e-15);
/// ```
pub fn erosion_score<T>(surface: &Grid<T>, boundary: Boundary) -> ErosionScore
where
    T: Copy + Into<f64> + Send + Sync,
{
    // One pass over the slopes: each row's sum (left to right) and its squared deviations
    // about the row's own mean, on the rayon threads; then, top to bottom, s̄ = Σ sums / n and
    // n·σ² = Σ over rows of (M2_row + w·(row mean − s̄)²) (Chan, Golub & LeVeque 1979), so the
    // result does not depend on the thread count.
    let (w, h) = (surface.width(), surface.height());
    let data = surface.as_slice();
    let rows: Vec<(f64, f64)> = (0..h)
        .into_par_iter()
        .map_init(
            || vec![0.0f64; w],
            |slopes, y| {
                row_slopes(data, w, h, y, boundary, slopes);
                let sum: f64 = slopes.iter().sum();
                let mean = sum / w as f64;
                (sum, slopes.iter().map(|&s| (s - mean) * (s - mean)).sum())
            },
        )
        .collect();
    let n = data.len() as f64;
    let mean = rows.iter().map(|r| r.0).sum::<f64>() / n;
    let var: f64 = rows.iter().map(|&(sum, m2)| m2 + w as f64 * (sum / w as f64 - mean).powi(2)).sum();
    let std = (var / n).sqrt();
    ErosionScore { mean_slope: mean, slope_std: std, epsilon: if mean > 0.0 { std / mean } else { 0.0 } }
}

/// ε of a heightmap with closed edges: the value report.json (`metrics.erosion_score`,
/// `erosion_scores`, `trace`) and the editor show.
pub fn epsilon(map: &Heightmap) -> f64 {
    erosion_score(map, Boundary::Closed).epsilon
}

/// One trace entry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRecord {
    /// Iterations completed when recorded (0 = before the first).
    pub iteration: usize,
    /// The score at that point (closed boundary).
    pub score: ErosionScore,
}

/// The erosion score recorded during a run (see [`run_traced`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// Entries in iteration order.
    pub records: Vec<TraceRecord>,
}

impl Trace {
    /// Whether iteration `done` of `total` is recorded with interval `every`: before the
    /// first (0), every `every` iterations (`every = 0`: none in between) and after the last.
    pub fn is_recorded(done: usize, total: usize, every: usize) -> bool {
        done == 0 || (every > 0 && done.is_multiple_of(every)) || done == total
    }

    /// Records the score of `surface` after `iteration` iterations.
    pub fn record(&mut self, iteration: usize, surface: &Grid<f64>) {
        self.records.push(TraceRecord { iteration, score: erosion_score(surface, Boundary::Closed) });
    }
}

/// Runs `iterations` steps of `eroder` (see [`crate::erode::run_iterations`]) and records ε
/// before the first iteration, every `every` iterations (`every = 0`: none in between) and
/// after the last. A pipeline records the same points through
/// [`crate::recipe::ErosionRecorder`].
///
/// ```
/// use terrasynth::{Heightmap, Progress};
/// use terrasynth::analyze::run_traced;
/// use terrasynth::erode::{OlsenEroder, ThermalOlsenParams};
/// let map = Heightmap::from_fn(33, 33, 1.0, |x, y| ((x * x + 3 * y) % 7) as f32 / 7.0).unwrap();
/// let mut e = OlsenEroder::new(&map, ThermalOlsenParams { talus: 16.0 / 33.0, ..Default::default() }).unwrap();
/// let trace = run_traced(&mut e, 10, 5, &Progress::new()).unwrap();
/// let at: Vec<usize> = trace.records.iter().map(|r| r.iteration).collect();
/// assert_eq!(at, [0, 5, 10]);
/// ```
pub fn run_traced(
    eroder: &mut dyn Eroder,
    iterations: usize,
    every: usize,
    progress: &Progress,
) -> Result<Trace> {
    let mut trace = Trace::default();
    crate::erode::run_iterations(eroder, iterations, progress, &mut |done, total, surface| {
        if Trace::is_recorded(done, total, every) {
            trace.record(done, surface);
        }
    })?;
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The score from the definition, cell by cell (every neighbour through the edge rule),
    /// each row summed left to right and the row sums top to bottom, the variance in a second
    /// pass about the mean: the fast interior path and the parallel rows must give the same
    /// mean, bit for bit, and the one-pass variance the same to rounding.
    fn reference(g: &Grid<f64>, boundary: Boundary) -> ErosionScore {
        let (w, h) = (g.width() as isize, g.height() as isize);
        let slope = |x: isize, y: isize| {
            let c = g.as_slice()[(y * w + x) as usize];
            let mut m = 0.0f64;
            for (dx, dy) in [(0, -1), (-1, 0), (1, 0), (0, 1)] {
                let (nx, ny) = (x + dx, y + dy);
                let (nx, ny) = match boundary {
                    Boundary::Closed if nx < 0 || ny < 0 || nx >= w || ny >= h => continue,
                    Boundary::Closed => (nx, ny),
                    Boundary::Wrap => (nx.rem_euclid(w), ny.rem_euclid(h)),
                };
                m = m.max((c - g.as_slice()[(ny * w + nx) as usize]).abs());
            }
            m
        };
        let rows = |g: &dyn Fn(f64) -> f64| -> f64 {
            (0..h).map(|y| (0..w).fold(0.0, |a, x| a + g(slope(x, y)))).fold(0.0, |a, r| a + r)
        };
        let n = (w * h) as f64;
        let mean = rows(&|s| s) / n;
        let var = rows(&|s| (s - mean) * (s - mean)) / n;
        let std = var.sqrt();
        ErosionScore { mean_slope: mean, slope_std: std, epsilon: if mean > 0.0 { std / mean } else { 0.0 } }
    }

    #[test]
    fn score_equals_the_cell_by_cell_definition() {
        for (w, h) in [(1, 1), (2, 5), (3, 3), (37, 23), (70, 131), (600, 4)] {
            // A tilt far larger than the relief makes the rows' mean slopes differ, so the
            // rows' deviations from the overall mean count.
            let g = Grid::from_fn(w, h, 1.0, |x, y| {
                (((x * 7919 + y * 104_729) % 1009) as f64).sqrt() * 0.37 + (y * y) as f64 * 3.0
            })
            .unwrap();
            for boundary in [Boundary::Closed, Boundary::Wrap] {
                let (got, want) = (erosion_score(&g, boundary), reference(&g, boundary));
                assert_eq!(got.mean_slope.to_bits(), want.mean_slope.to_bits(), "{w}×{h} {boundary:?}");
                for (a, b) in [(got.slope_std, want.slope_std), (got.epsilon, want.epsilon)] {
                    assert!((a - b).abs() <= 1e-12 * b.abs(), "{w}×{h} {boundary:?}: {a} against {b}");
                }
            }
        }
    }
}
