//! Olsen's erosion score ε and a trace of it over an erosion run.

use super::Eroder;
use super::topology::{Boundary, Topology};
use crate::{Error, Grid, Progress, Result};

/// Slope statistics of a surface (Olsen 2004, "Slope map and erosion score"; seed 001 §3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErosionScore {
    /// Mean slope s̄, where `s = max |h − h_i|` over the 4 axis neighbours (height units per cell).
    pub mean_slope: f64,
    /// Population standard deviation σ_s of the slope.
    pub slope_std: f64,
    /// `ε = σ_s / s̄` (0 when s̄ = 0). Dimensionless, invariant to height scaling.
    pub epsilon: f64,
}

/// Computes [`ErosionScore`] of `surface`. Olsen wraps around the edges (`Boundary::Wrap`);
/// with `Boundary::Closed` edge cells use only the neighbours that exist.
pub fn erosion_score(surface: &Grid<f64>, boundary: Boundary) -> ErosionScore {
    let topo = Topology { width: surface.width(), height: surface.height(), boundary };
    let h = surface.as_slice();
    let slope = |x: usize, y: usize| {
        let c = h[y * topo.width + x];
        [(0, -1), (-1, 0), (1, 0), (0, 1)]
            .iter()
            .filter_map(|&(dx, dy)| topo.neighbour(x, y, dx, dy))
            .fold(0.0f64, |s, j| s.max((c - h[j]).abs()))
    };
    let n = h.len() as f64;
    let mut sum = 0.0;
    for y in 0..topo.height {
        for x in 0..topo.width {
            sum += slope(x, y);
        }
    }
    let mean = sum / n;
    let mut var = 0.0;
    for y in 0..topo.height {
        for x in 0..topo.width {
            let d = slope(x, y) - mean;
            var += d * d;
        }
    }
    let std = (var / n).sqrt();
    ErosionScore { mean_slope: mean, slope_std: std, epsilon: if mean > 0.0 { std / mean } else { 0.0 } }
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
    /// Records the score of `surface` after `iteration` iterations.
    pub fn record(&mut self, iteration: usize, surface: &Grid<f64>) {
        self.records.push(TraceRecord { iteration, score: erosion_score(surface, Boundary::Closed) });
    }
}

/// Runs `iterations` steps of `eroder`, setting `progress` and checking for cancellation
/// between iterations, and records ε before the first iteration, every `every` iterations
/// (`every = 0`: none in between) and after the last. This is what `--trace k` uses.
///
/// ```
/// use terrasynth::{Heightmap, Progress};
/// use terrasynth::erode::{OlsenEroder, ThermalOlsenParams, run_traced};
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
    trace.record(0, eroder.surface());
    run_loop(eroder, iterations, progress, |i, s| {
        if (every > 0 && i % every == 0) || i == iterations {
            trace.record(i, s);
        }
    })?;
    Ok(trace)
}

/// The loop every erosion step runs: `iterations` calls of `run_one_step` with progress,
/// cancellation, and a callback after each iteration (1-based count).
pub(crate) fn run_loop(
    eroder: &mut dyn Eroder,
    iterations: usize,
    progress: &Progress,
    mut after: impl FnMut(usize, &Grid<f64>),
) -> Result<()> {
    for i in 0..iterations {
        progress.check_cancelled()?;
        eroder.run_one_step()?;
        if let Some(v) = eroder.surface().as_slice().iter().find(|v| !v.is_finite()) {
            return Err(Error::param(
                "height",
                v,
                "finite heights: the erosion diverged, lower its rates or time step",
            ));
        }
        after(i + 1, eroder.surface());
        progress.set((i + 1) as f64 / iterations.max(1) as f64);
    }
    Ok(())
}
