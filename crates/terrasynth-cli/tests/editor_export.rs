//! The editor's Export writes what `terrasynth generate` writes: for the same recipe (and for
//! the same project, with `--project`), every file byte for byte (report.json compared with its
//! machine-dependent fields removed: its step timings and erosion scores are the same).

use std::path::Path;

use serde_json::Value;
use terrasynth::io::engine::Engine;
use terrasynth::recipe::{PipelineProgress, Recipe, preset};
use terrasynth::shape::brush::BrushMode;
use terrasynth_gui::document::{Document, EditOp, erosion_entry, save_project};
use terrasynth_gui::export::RunRecord;

mod common;

use common::temp_dir;

/// report.json without what depends on the machine: `run` (times, peak memory, threads) and
/// the seconds and peak memory of each `timings` entry (its step and type are kept).
fn report_without_timings(path: &Path) -> Value {
    let mut v = common::json(path);
    let obj = v.as_object_mut().unwrap();
    obj.remove("run").expect("report.json has run");
    for t in obj["timings"].as_array_mut().expect("report.json has timings") {
        let t = t.as_object_mut().unwrap();
        t.remove("seconds").expect("a timing has seconds");
        t.remove("peak_bytes");
    }
    v
}

/// Runs `generate --recipe` and the editor's export (the document built headless, as the
/// editor's worker builds it) on `recipe`; compares every file.
fn editor_export_equals_generate(name: &str, recipe: Recipe, has_erosion: bool) {
    editor_export_equals_cli(name, Document::new(recipe), has_erosion, None);
}

/// Runs `generate` on `doc` (`--recipe` without edits, else `--project`) and the editor's
/// export of it, both for `engine` (`--engine` and the export dialog's Engine menu); compares
/// every file.
fn editor_export_equals_cli(name: &str, doc: Document, has_erosion: bool, engine: Option<Engine>) {
    let dir = temp_dir(name);
    let input = if doc.edits.is_empty() {
        let path = dir.join("recipe.toml");
        std::fs::write(&path, doc.recipe.to_toml_string().unwrap()).unwrap();
        ["--recipe".to_string(), path.display().to_string()]
    } else {
        let path = dir.join("in.tsproj");
        save_project(&path, &doc, &()).unwrap();
        ["--project".to_string(), path.display().to_string()]
    };
    let cli = dir.join("cli");
    let mut args = vec![input[0].as_str(), input[1].as_str()];
    if let Some(e) = engine {
        args.extend(["--engine", e.name()]);
    }
    let out = common::generate(&cli, &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let editor = dir.join("editor");
    // As the editor's worker does: the document run, its step timings and ε recorded.
    let (run, log) = doc.run(&PipelineProgress::new()).unwrap();
    let record = RunRecord::new(&run, log);
    let written = terrasynth_gui::export::export(&doc, &run.terrain, &record, &editor, engine).unwrap();

    let report = common::json(&cli.join("report.json"));
    let mut files: Vec<String> =
        report["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect();
    assert!(files.len() >= 12, "{files:?}");
    files.push("report.json".into());
    let mut expected = files.clone();
    expected.extend(["recipe.toml".to_string(), "project.tsproj".to_string()]);
    assert_eq!(written, expected, "the editor writes generate's files plus its project");
    for f in &files[..files.len() - 1] {
        let (a, b) = (std::fs::read(cli.join(f)).unwrap(), std::fs::read(editor.join(f)).unwrap());
        assert!(a == b, "{name}: {f} differs between generate and the editor's export");
    }
    let (a, b) = (
        report_without_timings(&cli.join("report.json")),
        report_without_timings(&editor.join("report.json")),
    );
    assert_eq!(a, b, "{name}: report.json");
    // Both have one timing per enabled step and, with erosion, its ε: the same.
    let steps = doc.recipe.steps.iter().filter(|s| s.enabled).count();
    assert_eq!(b["timings"].as_array().unwrap().len(), steps, "{name}");
    assert_eq!(b["erosion_scores"].as_array().unwrap().is_empty(), !has_erosion, "{name}");
    let editor_run = common::json(&editor.join("report.json"))["run"]["seconds"].as_f64().unwrap();
    assert!(editor_run > 0.0, "{name}: the editor's report has the pipeline's seconds");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn editor_export_of_a_recipe_without_hydrology_equals_generate() {
    // The island preset: the outputs compute flow, rivers and lakes themselves.
    let mut recipe = preset("island").unwrap().recipe().unwrap();
    (recipe.width, recipe.height, recipe.seed) = (97, 65, 5);
    recipe.exports.obj = true;
    editor_export_equals_generate("island", recipe, false);
}

#[test]
fn editor_export_of_a_recipe_with_rivers_lakes_and_carving_equals_generate() {
    // The rivers preset: its own rivers and lakes painted on color.png, stream-power erosion,
    // and the rivers carved into the mesh.
    let mut recipe = preset("rivers").unwrap().recipe().unwrap();
    (recipe.width, recipe.height) = (65, 65);
    recipe.exports.obj = true;
    recipe.exports.carve_mesh = true;
    editor_export_equals_generate("rivers", recipe, true);
}

/// The export dialog's Engine menu writes what `generate --engine` writes: Unity's
/// `height.raw` (south row first) and the engine's import settings in report.json; a size the
/// engine cannot import is refused before anything is written, naming the size to set.
#[test]
fn editor_export_for_an_engine_equals_generate_engine() {
    let mut recipe = preset("island").unwrap().recipe().unwrap();
    (recipe.width, recipe.height, recipe.seed) = (65, 65, 5);
    editor_export_equals_cli("unity", Document::new(recipe.clone()), false, Some(Engine::Unity));
    editor_export_equals_cli("godot", Document::new(recipe.clone()), false, Some(Engine::Godot));

    (recipe.width, recipe.height) = (97, 65);
    let doc = Document::new(recipe);
    let terrain = doc.build(&PipelineProgress::new()).unwrap();
    let dir = temp_dir("engine-size").join("out");
    let err =
        terrasynth_gui::export::export(&doc, &terrain, &RunRecord::default(), &dir, Some(Engine::Unity))
            .unwrap_err()
            .to_string();
    assert!(err.contains("97x65") && err.contains("set the size to 129 × 129"), "{err}");
    assert!(!dir.exists(), "nothing written");
}

#[test]
fn generate_project_equals_the_editors_export_of_it() {
    // A stroke, an erosion run and two river sources on the rivers preset: the placed rivers
    // must be in rivers.geojson, water.png, the painted images and the carved mesh of both.
    let mut recipe = preset("rivers").unwrap().recipe().unwrap();
    (recipe.width, recipe.height) = (65, 65);
    recipe.exports.carve_mesh = true;
    let mut doc = Document::new(recipe);
    let progress = PipelineProgress::new();
    let plain = doc.build(&progress).unwrap();
    let h = plain.height.as_slice();
    let summit = (0..h.len()).max_by(|&a, &b| h[a].total_cmp(&h[b])).unwrap();
    doc.edits = vec![
        EditOp::Stroke {
            mode: BrushMode::Raise,
            radius: 5.0,
            strength: 0.04,
            dabs: vec![[20.0, 20.0], [24.0, 22.0]],
            map: Some([65, 65]),
        },
        EditOp::Erode { step: erosion_entry("thermal", 3), seed: 11 },
        EditOp::RiverSource { x: summit % 65, y: summit / 65, map: Some([65, 65]), mode: Default::default() },
        EditOp::RiverSource { x: 22, y: 21, map: Some([65, 65]), mode: Default::default() },
    ];
    let rivers = |d: &Document| {
        let dir = temp_dir("project-rivers");
        let t = d.build(&progress).unwrap();
        terrasynth_gui::export::export(d, &t, &RunRecord::default(), &dir, None).unwrap();
        let n = common::json(&dir.join("rivers.geojson"))["features"].as_array().unwrap().len();
        let _ = std::fs::remove_dir_all(&dir);
        n
    };
    let mut no_sources = doc.clone();
    no_sources.edits.truncate(2);
    assert!(rivers(&doc) > rivers(&no_sources), "the placed rivers are exported");
    editor_export_equals_cli("project", doc, true, None);
}

/// When the recipe's `rivers` step carves, the placed rivers are cut into the heights: the
/// editor's export (which builds the document's map) equals `generate --project` file by file,
/// and its heights differ from the same project's without carving only near the rivers.
#[test]
fn generate_project_equals_the_editors_export_when_the_recipe_carves_placed_rivers() {
    let mut recipe = preset("island").unwrap().recipe().unwrap();
    (recipe.width, recipe.height, recipe.seed) = (65, 65, 5);
    recipe
        .steps
        .push(terrasynth::recipe::StepEntry::new("rivers").with("threshold", 0.02).with("carve-depth", 0.03));
    let mut doc = Document::new(recipe);
    let plain = doc.build(&PipelineProgress::new()).unwrap();
    let h = plain.height.as_slice();
    let summit = (0..h.len()).max_by(|&a, &b| h[a].total_cmp(&h[b])).unwrap();
    doc.edits = vec![EditOp::RiverSource {
        x: summit % 65,
        y: summit / 65,
        map: Some([65, 65]),
        mode: Default::default(),
    }];
    let carved = doc.build(&PipelineProgress::new()).unwrap();
    assert_ne!(carved.height.as_slice(), h, "the placed river is cut into the heights");
    editor_export_equals_cli("project-carved", doc, false, None);
}
