//! The iteration loop every erosion step runs, with a hook on the surface after each iteration
//! (Olsen's erosion score and its trace live in [`crate::analyze`], which calls this loop).

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
        if let Some(v) = eroder.surface().as_slice().iter().find(|v| !v.is_finite()) {
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
