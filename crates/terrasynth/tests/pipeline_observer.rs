//! The pipeline's run hooks (`recipe::RunObserver`): every step seen once, in order, with its
//! recipe index and category; cancelling from the hook; ε recorded through the hook equal to
//! ε computed directly on the same terrain; the per-iteration trace equal to
//! `analyze::run_traced` on the same eroder.

use terrasynth::analyze::{epsilon, run_traced};
use terrasynth::erode::{Erosion, build_eroder};
use terrasynth::recipe::{
    ErosionRecorder, Pipeline, PipelineProgress, Recipe, RunObserver, StepEntry, StepEvent, StepTiming,
    find_step, registry,
};
use terrasynth::step::{Category, Params, Terrain};
use terrasynth::{Error, Grid, Progress};

/// noise, (disabled scale), thermal, normalize, olsen-erosion on a 33² map.
fn recipe() -> Recipe {
    let mut r = Recipe::new("observer");
    (r.width, r.height, r.seed) = (33, 33, 7);
    let mut disabled = StepEntry::new("scale");
    disabled.enabled = false;
    r.steps = vec![
        StepEntry::new("noise"),
        disabled,
        StepEntry::new("thermal").with("iterations", 6.0),
        StepEntry::new("normalize"),
        StepEntry::new("olsen-erosion").with("iterations", 7.0),
    ];
    r
}

/// Logs every call.
#[derive(Default)]
struct Log {
    calls: Vec<String>,
    cancel_before: Option<usize>,
}

impl RunObserver for Log {
    fn before_step(&mut self, s: &StepEvent, _: &Terrain) -> terrasynth::Result<()> {
        self.calls.push(format!("before {} {} {} {:?}", s.position, s.step, s.name, s.category));
        if self.cancel_before == Some(s.position) {
            return Err(Error::Cancelled);
        }
        Ok(())
    }

    fn after_step(&mut self, s: &StepEvent, _: &Terrain, t: &StepTiming) -> terrasynth::Result<()> {
        assert_eq!((t.step, t.name.as_str()), (s.step, s.name));
        self.calls.push(format!("after {} {} {}", s.position, s.step, s.name));
        Ok(())
    }
}

#[test]
fn observer_sees_every_step_once_in_order() {
    let pipeline = Pipeline::new(recipe(), &registry()).unwrap();
    let mut log = Log::default();
    let out = pipeline.run_with(&PipelineProgress::new(), &mut log).unwrap();
    assert_eq!(
        log.calls,
        [
            "before 0 1 noise Generate",
            "after 0 1 noise",
            "before 1 3 thermal Erode",
            "after 1 3 thermal",
            "before 2 4 normalize Shape",
            "after 2 4 normalize",
            "before 3 5 olsen-erosion Erode",
            "after 3 5 olsen-erosion",
        ]
    );
    // Observing changes nothing: the same bits as a plain run.
    let plain = pipeline.run(&PipelineProgress::new()).unwrap();
    assert_eq!(out.terrain.height, plain.terrain.height);
    assert_eq!(out.timings.iter().map(|t| t.step).collect::<Vec<_>>(), [1, 3, 4, 5]);
}

#[test]
fn observer_error_cancels_the_run_before_the_step() {
    let pipeline = Pipeline::new(recipe(), &registry()).unwrap();
    let mut log = Log { cancel_before: Some(2), ..Log::default() };
    let err = pipeline.run_with(&PipelineProgress::new(), &mut log).unwrap_err();
    assert!(matches!(err, Error::Cancelled), "{err}");
    assert_eq!(log.calls.last().unwrap(), "before 2 4 normalize Shape");
    assert_eq!(log.calls.len(), 5);
}

/// The recipe's first `n` steps (the rest removed).
fn prefix(n: usize) -> Pipeline {
    let mut r = recipe();
    r.steps.truncate(n);
    Pipeline::new(r, &registry()).unwrap()
}

#[test]
fn recorded_epsilon_equals_epsilon_of_the_same_terrain() {
    let mut recorder = ErosionRecorder::new(None);
    recipe_pipeline().run_with(&PipelineProgress::new(), &mut recorder).unwrap();
    let log = recorder.into_log();
    assert!(log.trace.is_empty());
    let got: Vec<(usize, &str, f64)> =
        log.scores.iter().map(|s| (s.step, s.name.as_str(), s.erosion_score)).collect();
    let direct = |n| epsilon(&prefix(n).run(&PipelineProgress::new()).unwrap().terrain.height);
    assert_eq!(got, [(3, "thermal", direct(3)), (5, "olsen-erosion", direct(5))]);
    assert!(got.iter().all(|g| g.2 > 0.0 && g.2.is_finite()));
}

fn recipe_pipeline() -> Pipeline {
    Pipeline::new(recipe(), &registry()).unwrap()
}

#[test]
fn trace_through_the_hook_equals_run_traced_on_the_same_eroder() {
    let mut recorder = ErosionRecorder::new(Some(3));
    let traced = recipe_pipeline().run_with(&PipelineProgress::new(), &mut recorder).unwrap();
    let log = recorder.into_log();
    // Tracing does not change the heights.
    assert_eq!(
        traced.terrain.height,
        recipe_pipeline().run(&PipelineProgress::new()).unwrap().terrain.height
    );
    // The olsen-erosion step (recipe step 5) starts from the terrain after step 4.
    let before: Terrain = prefix(4).run(&PipelineProgress::new()).unwrap().terrain;
    let reg = registry();
    let info = find_step(&reg, "olsen-erosion").unwrap();
    let entry = &recipe().steps[4];
    let params = Params::validate(info.params, &entry.params).unwrap();
    let seed = terrasynth::noise::rng::derive_seed(7, 4);
    let mut eroder = build_eroder(Erosion::OlsenErosion, &params, &before, seed).unwrap();
    let direct = run_traced(&mut *eroder, 7, 3, &Progress::new()).unwrap();
    let want: Vec<(usize, f64)> = direct.records.iter().map(|r| (r.iteration, r.score.epsilon)).collect();
    let got: Vec<(usize, f64)> =
        log.trace.iter().filter(|t| t.step == 5).map(|t| (t.iteration, t.erosion_score)).collect();
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [0, 3, 6, 7]);
    assert_eq!(got, want);
    // The thermal step (6 iterations) is traced too: 0, 3, 6.
    let thermal: Vec<usize> = log.trace.iter().filter(|t| t.step == 3).map(|t| t.iteration).collect();
    assert_eq!(thermal, [0, 3, 6]);
    assert_eq!(log.scores.len(), 2);
}

/// Watches iterations but records nothing: only erosion steps call the hook.
#[derive(Default)]
struct Iterations(Vec<(usize, usize, usize)>);

impl RunObserver for Iterations {
    fn watches_iterations(&self, _: &StepEvent) -> bool {
        true
    }

    fn on_iteration(&mut self, s: &StepEvent, done: usize, total: usize, surface: &Grid<f64>) {
        assert_eq!(s.category, Category::Erode);
        assert_eq!((surface.width(), surface.height()), (33, 33));
        self.0.push((s.step, done, total));
    }
}

#[test]
fn iteration_hook_runs_before_and_after_every_iteration_of_erosion_steps_only() {
    let mut seen = Iterations::default();
    recipe_pipeline().run_with(&PipelineProgress::new(), &mut seen).unwrap();
    let mut want: Vec<(usize, usize, usize)> = (0..=6).map(|i| (3, i, 6)).collect();
    want.extend((0..=7).map(|i| (5, i, 7)));
    assert_eq!(seen.0, want);
}
