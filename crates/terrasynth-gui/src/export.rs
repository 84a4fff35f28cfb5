//! Export: the editor's current terrain (recipe output plus edits) written by the library's
//! export, `terrasynth::export::write` — the function `terrasynth generate` calls — with the
//! recipe's `[exports]` settings. So the files are those of `generate` on the same recipe,
//! byte for byte, with the editor's edits in the heights. report.json has the per-step
//! timings and erosion scores of the generation behind the map ([`RunRecord`], recorded by the
//! worker as `generate` records them; only the times differ). The rivers
//! of the document's river sources are traced on the terrain first
//! ([`terrasynth::recipe::project::place_rivers`]), as `terrasynth generate --project` does, so
//! they are in `rivers.geojson`, `water.png`, the painted images and the carved mesh, and cut
//! into the heights when the recipe carves its rivers (then the map is built from the document,
//! exactly as `generate --project` builds it).
//! `recipe.toml` and `project.tsproj` (the document with its edits) are written too, so the
//! export can be regenerated. Every file is written atomically (temp file, then rename).

use std::path::Path;

use terrasynth::export::{ExportOptions, write};
use terrasynth::io::engine::Engine;
use terrasynth::recipe::{
    ErosionLog, Pipeline, PipelineProgress, RunOutput, StepScore, StepTiming, registry,
};
use terrasynth::step::Terrain;
use terrasynth::{Error, Result, io};

use crate::document::{Document, place_rivers_with, save_project};

/// What report.json says of the generation behind the editor's map, as `terrasynth generate`
/// records it: the recipe's per-step `timings`, the pipeline's seconds (`run.seconds`) and ε
/// after each erosion step (`erosion_scores`). Edits made since (strokes, runs of the Erosion
/// panel) are in project.tsproj, not here. Default: nothing recorded (empty lists, 0 s).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunRecord {
    /// One entry per enabled recipe step.
    pub timings: Vec<StepTiming>,
    /// Wall-clock seconds of the recipe's pipeline.
    pub seconds: f64,
    /// ε after each enabled erosion step of the recipe.
    pub erosion_scores: Vec<StepScore>,
}

impl RunRecord {
    /// The record of `run` (from [`Document::run`]) and its erosion `log`.
    pub fn new(run: &RunOutput, log: ErosionLog) -> Self {
        Self { timings: run.timings.clone(), seconds: run.seconds, erosion_scores: log.scores }
    }
}

/// Writes every output of `doc.recipe.exports` for `terrain` into `dir` (created if missing),
/// then report.json (with `record`'s timings and erosion scores), `recipe.toml` and
/// `project.tsproj`; returns the file names written.
///
/// With an `engine`, its import files too (Unity: `height.raw`) and its import settings in
/// report.json, as `terrasynth generate --engine`. `generate` picks the engine's nearest size
/// before it generates; the editor's map already exists, so a size the engine cannot import
/// is refused before anything is written, with the size to set ([`engine_size_problem`]).
pub fn export(
    doc: &Document,
    terrain: &Terrain,
    record: &RunRecord,
    dir: &Path,
    engine: Option<Engine>,
) -> Result<Vec<String>> {
    if let Some(problem) =
        engine.and_then(|e| engine_size_problem(e, terrain.height.width(), terrain.height.height()))
    {
        return Err(Error::InvalidSize {
            width: terrain.height.width(),
            height: terrain.height.height(),
            reason: problem,
        });
    }
    let pipeline = Pipeline::new(doc.recipe.clone(), &registry())?;
    let sources = doc.sources_with_modes();
    let terrain = if doc.carves_placed_rivers() {
        // The recipe carves its rivers, so the placed ones are cut into the heights after the
        // edits: the map shown has them cut already, and tracing them on it again would cut
        // deeper. Build the document's map as `generate --project` does.
        doc.build(&PipelineProgress::new())?
    } else {
        let mut terrain = terrain.clone();
        place_rivers_with(&mut terrain, &sources)?;
        terrain
    };
    let run =
        RunOutput { terrain, timings: record.timings.clone(), seconds: record.seconds, peak_bytes: None };
    let opts = ExportOptions {
        engine,
        threads: rayon::current_num_threads(),
        erosion_scores: record.erosion_scores.clone(),
        ..ExportOptions::default()
    };
    let report = write(dir, &run, &pipeline, &opts)?;
    let mut files = report.files;
    files.push("report.json".to_string());
    let out = |name: &str| dir.join(name);
    let toml = doc.recipe.to_toml_string()?;
    io::write_atomic(out("recipe.toml"), |w| {
        w.write_all(toml.as_bytes()).map_err(|source| Error::Io { path: out("recipe.toml"), source })
    })?;
    files.push("recipe.toml".to_string());
    save_project(&out("project.tsproj"), doc, &())?;
    files.push("project.tsproj".to_string());
    Ok(files)
}

/// Why a `width × height` map cannot be exported for `engine` (not square, or a side the
/// engine does not import), naming the nearest side it takes; `None` when it can.
pub fn engine_size_problem(engine: Engine, width: usize, height: usize) -> Option<String> {
    if width == height && engine.is_valid_side(width) {
        return None;
    }
    let nearest = engine.pick_side(width.max(height));
    let sizes = join_sizes(engine.sizes());
    // Unreal takes every C·S·Q + 1 (io::engine); its list is the recommended sizes.
    let sizes = if engine == Engine::Unreal {
        format!("C·S·Q + 1 cells a side (e.g. {sizes})")
    } else {
        format!("{sizes} cells a side")
    };
    Some(format!("{} imports square maps of {sizes}: set the size to {nearest} × {nearest}", engine.name()))
}

fn join_sizes(sizes: &[usize]) -> String {
    let s: Vec<String> = sizes.iter().map(|n| n.to_string()).collect();
    s.join(", ")
}
