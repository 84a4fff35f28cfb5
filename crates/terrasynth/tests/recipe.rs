//! Recipe engine: parsing, round trips, validation messages, seeds, progress, cancellation,
//! presets. Uses tiny fake steps so it does not depend on the real generators, plus the real
//! registry for the presets.

use terrasynth::noise::rng::derive_seed;
use terrasynth::recipe::{Pipeline, PipelineProgress, Recipe, StepEntry, presets, registry};
use terrasynth::step::DefaultValue;
use terrasynth::step::{Category, ParamKind, ParamSpec, Params, Step, StepContext, StepInfo, Terrain};
use terrasynth::{Error, Result};

/// Writes its seed's low 20 bits (as f32) plus `add` into every cell.
#[derive(Debug)]
struct SeedFill {
    add: f32,
}
impl Step for SeedFill {
    fn run(&self, t: &mut Terrain, ctx: &StepContext) -> Result<()> {
        let v = (ctx.seed & 0xF_FFFF) as f32 + self.add;
        t.height.as_mut_slice().fill(v);
        Ok(())
    }
}

/// Adds `amount` to every cell, reporting progress row by row and honouring cancel.
#[derive(Debug)]
struct AddRows {
    amount: f32,
}
impl Step for AddRows {
    fn run(&self, t: &mut Terrain, ctx: &StepContext) -> Result<()> {
        let h = t.height.height();
        for y in 0..h {
            ctx.progress.check_cancelled()?;
            for v in t.height.row_mut(y) {
                *v += self.amount;
            }
            ctx.progress.set((y + 1) as f64 / h as f64);
        }
        Ok(())
    }
}

/// Cancels its own progress handle, then checks it (what a user's cancel looks like).
#[derive(Debug)]
struct CancelSelf;
impl Step for CancelSelf {
    fn run(&self, _t: &mut Terrain, ctx: &StepContext) -> Result<()> {
        ctx.progress.cancel();
        ctx.progress.check_cancelled()
    }
}

const FILL_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "add",
    label: "Add",
    kind: ParamKind::Float { min: 0.0, max: 4.0 },
    default: DefaultValue::Number(0.0),
    unit: "",
    doc: "Added to the seed value.",
}];
const ADD_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "amount",
        label: "Amount",
        kind: ParamKind::Float { min: -10.0, max: 10.0 },
        default: DefaultValue::Number(1.0),
        unit: "height units",
        doc: "Added to every cell.",
    },
    ParamSpec {
        name: "mode",
        label: "Mode",
        kind: ParamKind::Choice(&["fast", "slow"]),
        default: DefaultValue::Text("fast"),
        unit: "",
        doc: "Unused.",
    },
];

fn build_fill(p: &Params) -> Result<Box<dyn Step>> {
    Ok(Box::new(SeedFill { add: p.f32("add")? }))
}
fn build_add(p: &Params) -> Result<Box<dyn Step>> {
    let amount = p.f32("amount")?;
    if amount == 7.0 {
        return Err(Error::param("amount", amount, "anything but 7 (cross-check in build)"));
    }
    Ok(Box::new(AddRows { amount }))
}
fn build_cancel(_: &Params) -> Result<Box<dyn Step>> {
    Ok(Box::new(CancelSelf))
}

fn fake_registry() -> Vec<StepInfo> {
    vec![
        StepInfo {
            name: "seed-fill",
            category: Category::Generate,
            doc: "test generator",
            source: "test",
            params: FILL_PARAMS,
            build: build_fill,
        },
        StepInfo {
            name: "add",
            category: Category::Shape,
            doc: "test shaping",
            source: "test",
            params: ADD_PARAMS,
            build: build_add,
        },
        StepInfo {
            name: "cancel",
            category: Category::Shape,
            doc: "test cancel",
            source: "test",
            params: &[],
            build: build_cancel,
        },
    ]
}

fn small(steps: Vec<StepEntry>) -> Recipe {
    let mut r = Recipe::new("test");
    r.width = 9;
    r.height = 5;
    r.seed = 42;
    r.steps = steps;
    r
}

const CANONICAL_TOML: &str = r#"name = "rt"
description = "round trip"
width = 65
height = 33
cell-size = 2.5
seed = 123
sea-level = 0.25

[palette]
stops = [
    { at = 0.0, color = [0, 0, 128] },
    { at = 1.0, color = [255, 255, 255] },
]
smooth = false
sea-at = 0.3

[exports]
height-scale = 300.0
lod = 1
obj = true

[[steps]]
type = "seed-fill"
add = 1.5

[[steps]]
type = "add"
enabled = false
amount = -2
mode = "slow"
"#;

#[test]
fn toml_round_trip_is_exact() {
    let r = Recipe::from_toml_str(CANONICAL_TOML).unwrap();
    assert_eq!(r.width, 65);
    assert!(!r.steps[1].enabled);
    let text = r.to_toml_string().unwrap();
    let back = Recipe::from_toml_str(&text).unwrap();
    assert_eq!(back, r);
    // Writing again gives the same text: integers stay integers (`amount = -2`).
    assert_eq!(back.to_toml_string().unwrap(), text);
    assert!(text.contains("amount = -2\n"), "{text}");
    assert!(text.contains("add = 1.5\n"), "{text}");
}

#[test]
fn json_round_trip_is_exact() {
    let r = Recipe::from_toml_str(CANONICAL_TOML).unwrap();
    let json = r.to_json_string().unwrap();
    let back = Recipe::from_json_str(&json).unwrap();
    assert_eq!(back, r);
    assert_eq!(back.to_json_string().unwrap(), json);
}

#[test]
fn every_problem_is_reported_with_step_index_key_value_and_range() {
    let mut r = small(vec![
        StepEntry::new("seed-fill").with("add", 9.0),
        StepEntry::new("erode-everything"),
        StepEntry::new("add").with("amount", f64::NAN).with("mode", "medium").with("colour", 1.0),
        StepEntry::new("add").with("amount", 7.0),
    ]);
    r.cell_size = -1.0;
    let err = Pipeline::new(r, &fake_registry()).unwrap_err();
    let Error::Recipe(list) = &err else { panic!("expected Error::Recipe, got {err:?}") };
    let msg = err.to_string();
    let problems: Vec<String> = list.iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 7, "{problems:#?}");
    // Typed: each problem says where (step, key) and the allowed range apart from the text.
    let at = |step: Option<usize>, key: &str| {
        list.iter().find(|p| p.step.as_ref().map(|s| s.0) == step && p.field.as_deref() == Some(key))
    };
    let add = at(Some(1), "add").expect("step 1 `add`");
    assert_eq!(add.step, Some((1, "seed-fill".to_string())));
    assert_eq!(add.allowed.as_deref(), Some("a number in [0, 4]"));
    assert_eq!(at(None, "cell-size").unwrap().allowed.as_deref(), Some("a number in [0.001, 1000000] (m)"));
    assert!(at(Some(3), "colour").is_some());
    let has = |needle: &str| problems.iter().any(|p| p.contains(needle));
    assert!(has("invalid `cell-size` = -1: allowed a number in [0.001, 1000000] (m)"), "{msg}");
    assert!(has("step 1 (seed-fill): invalid parameter `add` = 9: allowed a number in [0, 4]"));
    assert!(has(
        "step 2 (erode-everything): unknown step type `erode-everything` (known: seed-fill, add, cancel)"
    ));
    assert!(has("step 3 (add): invalid parameter `amount` = NaN: allowed a number in [-10, 10]"));
    assert!(has("step 3 (add): invalid parameter `mode` = \"medium\": allowed one of fast, slow"));
    assert!(has("step 3 (add): unknown parameter `colour`"));
    assert!(has("step 4 (add): invalid parameter `amount` = 7"), "{msg}");
}

#[test]
fn wrong_value_type_is_a_problem_not_a_parse_error() {
    let text = "width = 9\nheight = 9\n[[steps]]\ntype = \"add\"\namount = \"lots\"\n";
    let r = Recipe::from_toml_str(text).unwrap();
    let err = Pipeline::new(r, &fake_registry()).unwrap_err().to_string();
    assert!(err.contains("step 1 (add): invalid parameter `amount` = \"lots\""), "{err}");
}

#[test]
fn malformed_toml_reports_line_and_column() {
    let err = Recipe::from_toml_str("width = 9\n[[steps]]\ntype = \n").unwrap_err().to_string();
    assert!(err.contains("TOML line 3, column"), "{err}");
}

#[test]
fn step_seeds_are_derived_from_recipe_seed_and_position() {
    // Step 0 is disabled; step 1 must still get derive_seed(seed, 1).
    let mut disabled = StepEntry::new("seed-fill");
    disabled.enabled = false;
    let r = small(vec![disabled, StepEntry::new("seed-fill").with("add", 0.5)]);
    let p = Pipeline::new(r, &fake_registry()).unwrap();
    assert_eq!(p.len(), 1);
    let out = p.run(&PipelineProgress::new()).unwrap();
    let expected = (derive_seed(42, 1) & 0xF_FFFF) as f32 + 0.5;
    assert!(out.terrain.height.as_slice().iter().all(|&v| v == expected));
    assert_eq!(out.timings.len(), 1);
    assert_eq!(out.timings[0].step, 2);
    assert_eq!(out.timings[0].name, "seed-fill");
}

#[test]
fn run_applies_steps_in_order_with_defaults_and_reaches_full_progress() {
    let r = small(vec![
        StepEntry::new("seed-fill"),
        StepEntry::new("add"),
        StepEntry::new("add").with("amount", -0.25),
    ]);
    let p = Pipeline::new(r, &fake_registry()).unwrap();
    let progress = PipelineProgress::new();
    let out = p.run(&progress).unwrap();
    let base = (derive_seed(42, 0) & 0xF_FFFF) as f32;
    assert_eq!(out.terrain.height[(3, 2)], base + 1.0 - 0.25);
    assert_eq!((out.terrain.height.width(), out.terrain.height.height()), (9, 5));
    assert_eq!(progress.fraction(), 1.0);
    assert_eq!(out.timings.iter().map(|t| t.step).collect::<Vec<_>>(), vec![1, 2, 3]);
}

#[test]
fn resolved_recipe_fills_defaults() {
    let r = small(vec![StepEntry::new("add")]);
    let p = Pipeline::new(r, &fake_registry()).unwrap();
    let resolved = p.resolved_recipe(&fake_registry());
    let params = &resolved.steps[0].params;
    assert_eq!(params.len(), 2);
    assert_eq!(params["mode"], terrasynth::step::ParamValue::Text("fast".into()));
}

#[test]
fn cancel_stops_the_run() {
    let r = small(vec![StepEntry::new("seed-fill"), StepEntry::new("cancel"), StepEntry::new("add")]);
    let p = Pipeline::new(r, &fake_registry()).unwrap();
    let progress = PipelineProgress::new();
    assert!(matches!(p.run(&progress), Err(Error::Cancelled)));
    assert!(progress.is_cancelled());
    // A cancelled handle stops a new run before its first step.
    assert!(matches!(p.run(&progress), Err(Error::Cancelled)));
}

#[test]
fn sea_level_and_cell_size_reach_the_terrain() {
    let mut r = small(vec![]);
    r.sea_level = 0.3;
    r.cell_size = 4.0;
    let out = Pipeline::new(r, &fake_registry()).unwrap().run(&PipelineProgress::new()).unwrap();
    assert_eq!(out.terrain.sea_level, 0.3);
    assert_eq!(out.terrain.height.cell_size(), 4.0);
    assert!(out.terrain.height.as_slice().iter().all(|&v| v == 0.0));
}

#[test]
fn absurd_sizes_are_refused_before_allocating() {
    let mut r = small(vec![]);
    r.width = 30_000;
    r.height = 30_000; // 3.6 GB of f32: allowed by size, refused only if above the grid limit
    assert!(Pipeline::new(r.clone(), &fake_registry()).is_ok());
    r.width = 1_000_000;
    let err = Pipeline::new(r, &fake_registry()).unwrap_err().to_string();
    assert!(err.contains("`width` = 1000000"), "{err}");
}

/// Every preset validates against the real registry and runs at 65×65 to a finite,
/// non-flat map.
#[test]
fn every_preset_validates_and_runs_at_65() {
    let reg = registry();
    for preset in presets() {
        let mut r = preset.recipe().unwrap();
        r.width = 65;
        r.height = 65;
        let p = Pipeline::new(r, &reg).unwrap_or_else(|e| panic!("preset {}: {e}", preset.name));
        let out = p.run(&PipelineProgress::new()).unwrap();
        let h = &out.terrain.height;
        assert!(h.as_slice().iter().all(|v| v.is_finite()), "preset {} not finite", preset.name);
        let (lo, hi) = h.min_max().unwrap();
        assert!(hi > lo, "preset {} is flat", preset.name);
    }
}

/// Every preset gives the same bits on 1, 2, 3 and 7 worker threads, run concurrently (the
/// machine loaded by the other runs, so work is split and stolen differently each time), and
/// the same bits again in a second round.
#[test]
fn presets_are_bit_identical_across_thread_counts() {
    let reg = registry();
    let run_with = |threads: usize, recipe: &Recipe| -> Vec<u32> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let p = Pipeline::new(recipe.clone(), &reg).unwrap();
        let out = pool.install(|| p.run(&PipelineProgress::new())).unwrap();
        out.terrain.height.as_slice().iter().map(|v| v.to_bits()).collect()
    };
    for preset in presets() {
        let mut r = preset.recipe().unwrap();
        (r.width, r.height) = (97, 67);
        let reference = run_with(1, &r);
        for round in 0..2 {
            let (r, run_with) = (&r, &run_with);
            let runs: Vec<(usize, Vec<u32>)> = std::thread::scope(|s| {
                let handles: Vec<_> =
                    [1, 2, 3, 7].map(|t| (t, s.spawn(move || run_with(t, r)))).into_iter().collect();
                handles.into_iter().map(|(t, h)| (t, h.join().unwrap())).collect()
            });
            for (threads, bits) in runs {
                assert!(bits == reference, "preset {} round {round}: {threads} threads differ", preset.name);
            }
        }
    }
}
