//! The iteration loop every erosion step runs, with a hook on the surface after each iteration
//! (Olsen's erosion score and its trace live in [`crate::analyze`], which calls this loop).

use rayon::prelude::*;

use super::Eroder;
use crate::step::IterationHook;
use crate::{Error, Progress, Result};

/// Runs `iterations` calls of [`Eroder::run_one_step`], setting `progress` and checking for
/// cancellation between iterations, and stops with an error naming the problem if a height
/// becomes non-finite. `each(done, iterations, surface)` is called before the first
/// iteration (`done = 0`) and after every iteration (`done` = iterations completed).
///
/// ```
/// use terrasynth::{Heightmap, Progress};
/// use terrasynth::erode::{ThermalOlsenEroder, ThermalOlsenParams, run_iterations};
/// let map = Heightmap::from_fn(9, 9, 1.0, |x, y| (x * y) as f32).unwrap();
/// let mut e = ThermalOlsenEroder::new(&map, ThermalOlsenParams::default()).unwrap();
/// let mut seen = Vec::new();
/// run_iterations(&mut e, 3, &Progress::new(), &mut |done, total, _| seen.push((done, total))).unwrap();
/// assert_eq!(seen, [(0, 3), (1, 3), (2, 3), (3, 3)]);
/// ```
pub fn run_iterations(
    eroder: &mut dyn Eroder,
    iterations: usize,
    progress: &Progress,
    each: &mut IterationHook<'_>,
) -> Result<()> {
    each(0, iterations, eroder.surface());
    for i in 0..iterations {
        progress.check_cancelled()?;
        eroder.run_one_step()?;
        if let Some(v) = first_non_finite(eroder.stepped_surface().as_slice()) {
            return Err(Error::param(
                "height",
                v,
                "finite heights: the erosion diverged, lower its rates or time step",
            ));
        }
        each(i + 1, iterations, eroder.surface());
        progress.set((i + 1) as f64 / iterations.max(1) as f64);
    }
    Ok(())
}

/// The first non-finite value of `values`, if any: pieces of [`PIECE`] values scanned on the
/// rayon threads, the first piece (in order) that has one answering, so the value found does
/// not depend on the thread count. Every iteration of every erosion is checked, so on a large
/// map this is a pass over the surface each time (134 MB at 4097²): on two threads it takes
/// half as long.
fn first_non_finite(values: &[f64]) -> Option<f64> {
    values.par_chunks(PIECE).find_map_first(first_non_finite_in)
}

/// Values per piece of [`first_non_finite`] (512 KiB).
const PIECE: usize = 1 << 16;

/// [`first_non_finite`] of one piece: the scan without an early exit runs on blocks of 16 (the
/// compiler vectorises it); only a block that has one is searched.
fn first_non_finite_in(values: &[f64]) -> Option<f64> {
    const BLOCK: usize = 16;
    let blocks = values.chunks_exact(BLOCK);
    let tail = blocks.remainder();
    for block in blocks {
        if block.iter().fold(false, |bad, v| bad | !v.is_finite()) {
            return block.iter().copied().find(|v| !v.is_finite());
        }
    }
    tail.iter().copied().find(|v| !v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_non_finite_value_is_found_wherever_it_is() {
        for n in [0, 1, 15, 16, 17, 40, 1000, 3 * PIECE + 5] {
            let clean = vec![1.5f64; n];
            assert_eq!(first_non_finite(&clean), None, "n = {n}");
            for at in [0, n / 2, n.saturating_sub(1)].into_iter().filter(|&k| k < n) {
                let mut v = clean.clone();
                v[at] = f64::NEG_INFINITY;
                if at + 1 < n {
                    v[n - 1] = f64::NAN; // a later one is not the answer
                }
                let got = first_non_finite(&v).map(f64::to_bits);
                assert_eq!(got, Some(v[at].to_bits()), "n = {n}, at = {at}");
            }
        }
    }
}
