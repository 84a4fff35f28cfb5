//! Background jobs: generation (a low-resolution preview first, then the full map), erosion
//! runs, water layers and exports. Each job runs on its own thread with a
//! [`PipelineProgress`] (progress + cancel flag) and sends its result through a channel; the
//! thread then calls the worker's [`Waker`] (the app's `request_repaint`) so the UI picks it up
//! at once. The UI thread never waits.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

use terrasynth::Result;
use terrasynth::analyze::epsilon;
use terrasynth::recipe::{PipelineProgress, StepEntry};
use terrasynth::step::Terrain;

use crate::document::{Document, preview_recipe, run_erosion};
use crate::water::Water;

/// Largest side of the instant preview, cells.
pub const PREVIEW_MAX_SIDE: usize = 129;

/// What a finished job produced. `id` is the job's number ([`Worker::start`]); results of
/// superseded jobs are ignored by the app.
pub enum JobResult {
    /// The low-resolution preview of a generation.
    Preview { id: u64, terrain: Terrain },
    /// The full map of a generation (recipe + every edit replayed).
    Full { id: u64, terrain: Terrain, seconds: f64, record: crate::export::RunRecord },
    /// An erosion run: the map after, and ε (Olsen's erosion score) before and after.
    Eroded { id: u64, terrain: Terrain, eps_before: f64, eps_after: f64 },
    /// Water layers of the map with generation number `map_gen`.
    Water { map_gen: u64, water: Water },
    /// Files written by an export.
    Exported { id: u64, files: Vec<String> },
    /// The job failed (or was cancelled: `cancelled` is true).
    Failed { id: u64, message: String, cancelled: bool },
}

/// What to run.
pub enum Job {
    /// Generate `doc`: a preview (when `preview`), then the full map.
    Generate { doc: Document, preview: bool },
    /// Run an erosion step on `terrain`.
    Erode { terrain: Terrain, step: StepEntry, seed: u64 },
    /// Export the terrain with the recipe's export settings into a folder.
    Export {
        doc: Document,
        terrain: Terrain,
        dir: std::path::PathBuf,
        engine: Option<terrasynth::io::engine::Engine>,
        /// What report.json says of the generation behind the map (boxed: the other jobs are
        /// far smaller).
        record: Box<crate::export::RunRecord>,
    },
}

impl Job {
    /// Label for the busy indicator.
    pub fn label(&self) -> &'static str {
        match self {
            Job::Generate { .. } => "Generating…",
            Job::Erode { .. } => "Eroding…",
            Job::Export { .. } => "Exporting…",
        }
    }
}

/// The running foreground job, if any.
pub struct Active {
    /// Job number.
    pub id: u64,
    /// "Generating…", "Eroding…" or "Exporting…".
    pub label: &'static str,
    /// Its progress and cancel flag.
    pub progress: PipelineProgress,
    /// Whether the preview of a generation has arrived.
    pub preview_done: bool,
    /// The step running and when the UI first saw it ([`Active::observe_step`]).
    pub step_started: Option<(String, std::time::Instant)>,
}

impl Active {
    /// Notes when the running step changed (call once a frame): the time estimate counts from
    /// there.
    pub fn observe_step(&mut self) {
        let step = self.progress.current_step();
        if self.step_started.as_ref().is_none_or(|(s, _)| *s != step) {
            self.step_started = Some((step, std::time::Instant::now()));
        }
    }

    /// The running step's name, the fraction of it done, and the seconds it still needs,
    /// extrapolated from its own progress so far (`elapsed · (1 − f) / f`, once at least 2 %
    /// is done and half a second passed; None before).
    pub fn step_status(&self) -> (String, f64, Option<f64>) {
        let f = self.progress.step_fraction().clamp(0.0, 1.0);
        let (name, left) = match &self.step_started {
            Some((name, t0)) => {
                let elapsed = t0.elapsed().as_secs_f64();
                (name.clone(), (f >= 0.02 && elapsed >= 0.5).then(|| elapsed * (1.0 - f) / f))
            }
            None => (self.progress.current_step(), None),
        };
        (name, f, left)
    }
}

/// The progress line of a job: `label step f % · about N s left`, with the step's own fraction
/// and time estimate ([`Active::step_status`]) when known.
pub fn progress_text(label: &str, step: &str, fraction: f64, left: Option<f64>) -> String {
    if step.is_empty() {
        return label.to_string();
    }
    let mut t = format!("{label} {step} {:.0} %", fraction * 100.0);
    if let Some(s) = left {
        t.push_str(&if s >= 90.0 {
            format!(" · about {:.0} min left", s / 60.0)
        } else {
            format!(" · about {:.0} s left", s.max(1.0))
        });
    }
    t
}

/// Called on the job's thread after each result is sent (the app wakes its UI with it).
pub type Waker = Arc<dyn Fn() + Send + Sync>;

/// Starts jobs on threads and collects their results.
pub struct Worker {
    tx: Sender<JobResult>,
    rx: Receiver<JobResult>,
    next_id: u64,
    /// The foreground job (generation, erosion or export) running now.
    pub active: Option<Active>,
    /// Number of water jobs running.
    pub water_running: usize,
    waker: Option<Waker>,
}

impl Worker {
    /// A worker that calls `waker` when a result arrives (None: results wait for the next
    /// [`Worker::poll`]).
    pub fn new(waker: Option<Waker>) -> Self {
        let (tx, rx) = channel();
        Self { tx, rx, next_id: 1, active: None, water_running: 0, waker }
    }

    /// Whether a foreground job is running.
    pub fn is_busy(&self) -> bool {
        self.active.is_some()
    }

    /// Number of foreground jobs started so far.
    pub fn started(&self) -> u64 {
        self.next_id - 1
    }

    /// Cancels the foreground job (its result comes back as cancelled).
    pub fn cancel(&mut self) {
        if let Some(a) = &self.active {
            a.progress.cancel();
        }
    }

    /// Starts `job`, cancelling any foreground job still running; returns its number.
    pub fn start(&mut self, job: Job) -> u64 {
        self.cancel();
        let id = self.next_id;
        self.next_id += 1;
        let progress = PipelineProgress::new();
        self.active = Some(Active {
            id,
            label: job.label(),
            progress: progress.clone(),
            preview_done: false,
            step_started: None,
        });
        let tx = self.tx.clone();
        let waker = self.waker.clone();
        std::thread::spawn(move || {
            let send = |r: JobResult| {
                let _ = tx.send(r);
                if let Some(wake) = &waker {
                    wake();
                }
            };
            let fail = |e: terrasynth::Error| JobResult::Failed {
                id,
                cancelled: matches!(e, terrasynth::Error::Cancelled),
                message: e.to_string(),
            };
            match job {
                Job::Generate { doc, preview } => {
                    if preview {
                        let side = doc.recipe.width.max(doc.recipe.height);
                        let factor = side.div_ceil(PREVIEW_MAX_SIDE).max(1);
                        if factor > 1 {
                            let small = Document::new(preview_recipe(&doc.recipe, factor));
                            match small.build(&progress) {
                                Ok(terrain) => send(JobResult::Preview { id, terrain }),
                                Err(e) => return send(fail(e)),
                            }
                        }
                    }
                    let t0 = std::time::Instant::now();
                    match doc.run(&progress) {
                        Ok((run, log)) => {
                            let record = crate::export::RunRecord::new(&run, log);
                            let seconds = t0.elapsed().as_secs_f64();
                            send(JobResult::Full { id, terrain: run.terrain, seconds, record })
                        }
                        Err(e) => send(fail(e)),
                    }
                }
                Job::Erode { mut terrain, step, seed } => {
                    let eps_before = epsilon(&terrain.height);
                    match run_erosion(&mut terrain, &step, seed, &progress) {
                        Ok(()) => {
                            let eps_after = epsilon(&terrain.height);
                            send(JobResult::Eroded { id, terrain, eps_before, eps_after })
                        }
                        Err(e) => send(fail(e)),
                    }
                }
                Job::Export { doc, terrain, dir, engine, record } => {
                    match crate::export::export(&doc, &terrain, &record, &dir, engine) {
                        Ok(files) => send(JobResult::Exported { id, files }),
                        Err(e) => send(fail(e)),
                    }
                }
            }
        });
        id
    }

    /// Computes water layers of `map` on a thread.
    pub fn start_water(
        &mut self,
        map_gen: u64,
        terrain: Terrain,
        sources: Vec<((usize, usize), terrasynth::hydro::RiverMode)>,
    ) {
        self.water_running += 1;
        let tx = self.tx.clone();
        let waker = self.waker.clone();
        std::thread::spawn(move || {
            let r: Result<Water> = Water::compute(&terrain, &sources);
            let msg = match r {
                Ok(water) => JobResult::Water { map_gen, water },
                Err(e) => JobResult::Failed { id: 0, message: format!("water: {e}"), cancelled: false },
            };
            let _ = tx.send(msg);
            if let Some(wake) = &waker {
                wake();
            }
        });
    }

    /// Results that arrived since the last call.
    pub fn poll(&mut self) -> Vec<JobResult> {
        let mut out = Vec::new();
        while let Ok(r) = self.rx.try_recv() {
            if matches!(r, JobResult::Water { .. }) || matches!(r, JobResult::Failed { id: 0, .. }) {
                self.water_running = self.water_running.saturating_sub(1);
            }
            out.push(r);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use terrasynth::Grid;
    use terrasynth::recipe::{RunObserver, StepEvent, preset};

    use super::*;

    /// Reads the step's progress at every iteration of the watched steps (with the step's
    /// place in the recipe).
    struct Seen<'a> {
        progress: &'a PipelineProgress,
        fractions: Vec<(usize, usize, usize, f64)>,
    }

    impl RunObserver for Seen<'_> {
        fn watches_iterations(&self, step: &StepEvent) -> bool {
            step.name == "stream-power"
        }
        fn on_iteration(&mut self, step: &StepEvent, done: usize, total: usize, _: &Grid<f64>) {
            self.fractions.push((step.step, done, total, self.progress.step_fraction()));
        }
    }

    #[test]
    fn stream_power_reports_its_progress_every_iteration() {
        let mut recipe = preset("rivers").unwrap().recipe().unwrap();
        (recipe.width, recipe.height) = (33, 33);
        let pipeline = terrasynth::recipe::Pipeline::new(recipe, &terrasynth::recipe::registry()).unwrap();
        let progress = PipelineProgress::new();
        let mut seen = Seen { progress: &progress, fractions: Vec::new() };
        pipeline.run_with(&progress, &mut seen).unwrap();
        // The preset's two stream-power steps (coarse, then full resolution), each reported
        // from its own start.
        let steps: Vec<&[(usize, usize, usize, f64)]> = seen.fractions.chunk_by(|a, b| a.0 == b.0).collect();
        assert_eq!(steps.len(), 2, "{:?}", seen.fractions);
        assert!(steps[0][0].2 >= 10, "{} iterations", steps[0][0].2);
        for one in steps {
            let n = one[0].2;
            assert_eq!(one.len(), n + 1, "step {}", one[0].0);
            // When iteration k's hook runs, the k − 1 iterations before it are reported done.
            for &(_, done, total, f) in &one[1..] {
                assert_eq!(f, (done - 1) as f64 / total as f64);
            }
        }
    }

    #[test]
    fn the_progress_line_gives_the_steps_share_and_time_left() {
        assert_eq!(progress_text("Generating…", "", 0.0, None), "Generating…");
        assert_eq!(progress_text("Generating…", "stream-power", 0.4, None), "Generating… stream-power 40 %");
        assert_eq!(
            progress_text("Generating…", "stream-power", 0.25, Some(30.0)),
            "Generating… stream-power 25 % · about 30 s left"
        );
        assert_eq!(
            progress_text("Eroding…", "droplets", 0.1, Some(300.0)),
            "Eroding… droplets 10 % · about 5 min left"
        );
    }
}
