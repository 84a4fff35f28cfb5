//! Progress reporting and cancellation for long jobs (erosion, pipelines), shared by the CLI
//! progress bar and the GUI worker thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A cheap, clonable handle: the job calls [`Progress::set`] and checks
/// [`Progress::check_cancelled`]; the caller reads [`Progress::fraction`] and may
/// [`Progress::cancel`]. A default `Progress` is never cancelled and reports to nobody.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    /// Fraction done in [0, 1], stored as f64 bits.
    fraction: AtomicU64,
}

impl Progress {
    /// A new handle, not cancelled, at 0 %.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the fraction done, clamped to [0, 1].
    pub fn set(&self, fraction: f64) {
        let f = if fraction.is_nan() { 0.0 } else { fraction.clamp(0.0, 1.0) };
        self.inner.fraction.store(f.to_bits(), Ordering::Relaxed);
    }

    /// The last fraction recorded.
    pub fn fraction(&self) -> f64 {
        f64::from_bits(self.inner.fraction.load(Ordering::Relaxed))
    }

    /// Asks the job to stop at its next check.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether [`Progress::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Relaxed)
    }

    /// `Err(Error::Cancelled)` once cancelled: call this between iterations with `?`.
    pub fn check_cancelled(&self) -> crate::Result<()> {
        if self.is_cancelled() { Err(crate::Error::Cancelled) } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_is_seen_by_clones() {
        let p = Progress::new();
        let q = p.clone();
        assert!(q.check_cancelled().is_ok());
        p.cancel();
        assert!(matches!(q.check_cancelled(), Err(crate::Error::Cancelled)));
    }

    #[test]
    fn fraction_is_clamped() {
        let p = Progress::new();
        p.set(1.5);
        assert_eq!(p.fraction(), 1.0);
        p.set(f64::NAN);
        assert_eq!(p.fraction(), 0.0);
        p.set(0.25);
        assert_eq!(p.fraction(), 0.25);
    }
}

/// Wall-clock time of a job for reports. `wasm32-unknown-unknown` has no clock
/// (`std::time::Instant::now` panics there), so there it always reads 0 s and the job runs
/// the same.
#[derive(Clone, Copy, Debug)]
pub struct Stopwatch(Option<std::time::Instant>);

impl Stopwatch {
    /// Starts timing.
    pub fn start() -> Self {
        let no_clock = cfg!(all(target_arch = "wasm32", target_os = "unknown"));
        Self(if no_clock { None } else { Some(std::time::Instant::now()) })
    }

    /// Seconds since [`Stopwatch::start`] (0 without a clock).
    pub fn seconds(&self) -> f64 {
        self.0.map_or(0.0, |t| t.elapsed().as_secs_f64())
    }
}
