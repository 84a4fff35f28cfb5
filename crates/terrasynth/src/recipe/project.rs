//! Projects: a recipe plus an ordered list of edits (brush strokes, river sources, erosion
//! runs), and the versioned project file (`.tsproj`, JSON) that stores them. The editor saves
//! them; `terrasynth generate --project` runs them; both build the terrain with
//! [`Document::build`], so the CLI's files equal the editor's export of the same project.
//!
//! The terrain of a project is always `run(recipe)` followed by every edit replayed in order
//! ([`Document::apply_edits`]). Strokes are stored dab by dab (the exact centres the editor
//! applied), so loading a project replays the same dabs ([`Stroke::apply_dab`], which keeps a
//! flatten stroke's target) and reproduces the heights bit for bit.
//!
//! **River sources** are part of the terrain: after the edits, a river is traced from each
//! source down the ε-filled final surface ([`RiverTracer`], [`RiverMode::Filled`]: it always
//! reaches the sea or the map edge) and stored as [`HydroLayers::placed`], so every output
//! that draws rivers has them: `rivers.geojson`, `water.png`, the fresh water painted on
//! `color.png`/`shaded.png`, the biomes, and the mesh carved with `exports.carve-mesh`
//! ([`place_rivers`]). Each point carries the drainage area of its cell (the recipe's `rivers`
//! flow layer, else a [`FlowGraph`] of the final heights) and the network's hydraulic-geometry
//! width `max-width · (A / A_max)^0.5` (Leopold & Maddock 1953, as [`extract_rivers`]
//! (crate::hydro::extract_rivers)). A placed river that reaches a river of the recipe's own
//! `rivers`/`squig-rivers` step stops there (the junction cell included), as a tributary of
//! the network does. When the recipe carves its rivers (the last enabled `rivers` step has
//! `carve-depth` > 0), the placed rivers are cut into the heights the same way, at the depth of
//! the network's rivers of the same drainage area ([`carve_placed_rivers`], the last thing
//! [`Document::apply_edits`] does); otherwise they leave the heights alone.
//!
//! Edits are map-relative: each stroke and river source records the map size it was made on
//! (`map = [width, height]`, cells) beside its cell coordinates. Replayed on a map of another
//! size (or another cell size, which changes no cell index), positions scale corner onto corner
//! (`x' = x · (W − 1) / (w − 1)`, as [`preview_recipe`] and the import step's resampling map
//! corners) and the brush radius with the map, so an edit stays on the same spot of the map
//! (513 → 1025 puts a dab at cell 100 on cell 200). On the map it was made on the coordinates are
//! used unchanged, bit for bit. Version 1 project files had cell indices alone; they load with
//! `map` set to their recipe's size (the map they were made on).
//!
//! **World projects** (a world recipe, docs/WORLDS.md) keep their strokes and river sources in
//! world cells, filed per chunk ([`Document::world_edits`], [`super::world_edits`]): the file's
//! `world-edits` key, written only when there are some (such a file is version 3; a project
//! without world edits is still written as version 2, byte for byte as before). A project with
//! a droplet erosion (recipe step or erosion run) that leaves the droplet count to "auto" (one
//! per cell, since version 4) is written as version 4; earlier files read such a step as the
//! 50 000 droplets it meant then ([`LEGACY_DROPLETS`]). Every window of
//! the edited world is [`super::world_edits::edited_window`]; [`Document::build`] of a world
//! project is its recipe's default window (`0, 0, width × height`) with the edits.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::world_edits::{WorldEdits, edited_window};
use super::{
    ErosionLog, ErosionRecorder, Pipeline, PipelineProgress, Recipe, RunOutput, StepEntry, find_step,
    registry,
};
use crate::hydro::{HydroLayers, RiverMode, carve_rivers_below, source_rivers};
use crate::shape::brush::{Brush, BrushMode, MAX_RADIUS, Stroke};
use crate::step::{Category, Terrain};
use crate::{Error, Result};

/// Identifies a terrasynth project file.
pub const PROJECT_FORMAT: &str = "terrasynth-project";
/// The project format version this build writes (and the newest it reads) for a project whose
/// droplet erosion leaves its droplet count to the step's "auto" (one droplet per cell): older
/// builds read a `droplets` step without a `droplets` key as 50 000 droplets, so such a file is
/// refused by them rather than replayed differently.
pub const PROJECT_VERSION: u32 = 4;
/// The version written for a project with world edits and no automatic droplet count.
pub const PROJECT_VERSION_WORLD: u32 = 3;
/// The version written for a project without world edits (files that older builds read).
pub const PROJECT_VERSION_MAP: u32 = 2;
/// What a `droplets` step without a `droplets` key meant in project versions 1 to 3: the
/// number they are read with.
pub const LEGACY_DROPLETS: f64 = 50_000.0;

/// Whether `step` is a `droplets` step with the automatic count (no `droplets` key).
fn auto_droplets(step: &StepEntry) -> bool {
    step.kind == "droplets" && !step.params.contains_key("droplets")
}

/// The `droplets` entries of a map project (its recipe steps and erosion runs) with the
/// automatic count. World recipes have none: their droplets are counted per world cell
/// (`droplets-per-cell`).
fn auto_droplet_entries(doc: &mut Document) -> Vec<&mut StepEntry> {
    if doc.recipe.is_world() {
        return Vec::new();
    }
    let runs = doc.edits.iter_mut().filter_map(|e| match e {
        EditOp::Erode { step, .. } => Some(step),
        _ => None,
    });
    doc.recipe.steps.iter_mut().chain(runs).filter(|s| auto_droplets(s)).collect()
}

/// The version [`save_project`] writes for `doc`: the oldest that reads it the same way.
pub fn project_version(doc: &Document) -> u32 {
    let mut runs = doc.edits.iter().filter_map(|e| match e {
        EditOp::Erode { step, .. } => Some(step),
        _ => None,
    });
    if !doc.recipe.is_world() && (doc.recipe.steps.iter().any(auto_droplets) || runs.any(auto_droplets)) {
        PROJECT_VERSION
    } else if !doc.world_edits.is_empty() {
        PROJECT_VERSION_WORLD
    } else {
        PROJECT_VERSION_MAP
    }
}

fn is_filled(mode: &RiverMode) -> bool {
    *mode == RiverMode::Filled
}

/// One edit on top of the recipe's output, replayed in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum EditOp {
    /// A terraforming stroke: one [`Brush`] dab at each centre, in order.
    Stroke {
        /// Raise, lower, flatten or smooth.
        mode: BrushMode,
        /// Brush radius, cells.
        radius: f64,
        /// Brush strength (height units; a fraction in [0, 1] for smooth).
        strength: f32,
        /// Dab centres `[x, y]` in cells of `map`.
        dabs: Vec<[f64; 2]>,
        /// Size `[width, height]` of the map the stroke was made on (None only while reading
        /// a version 1 file; [`parse_project`] fills it in).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        map: Option<[usize; 2]>,
    },
    /// A river source at cell `(x, y)` of `map`: the river is traced from it by `mode`.
    RiverSource {
        /// Column.
        x: usize,
        /// Row.
        y: usize,
        /// How the river walks (projects saved before modes existed load as `filled`, what
        /// they were traced with, and `filled` is not written, so their files stay the same).
        #[serde(default, skip_serializing_if = "is_filled")]
        mode: RiverMode,
        /// Size `[width, height]` of the map the source was placed on (see `Stroke::map`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        map: Option<[usize; 2]>,
    },
    /// An erosion step run on the terrain as it was at this point of the edit list.
    Erode {
        /// The erosion step (type + parameters), as in a recipe.
        step: StepEntry,
        /// Seed of the run.
        seed: u64,
    },
}

impl EditOp {
    /// The brush of dab `k` of a stroke.
    pub fn brush(mode: BrushMode, radius: f64, strength: f32, at: [f64; 2]) -> Brush {
        Brush { x: at[0], y: at[1], radius, strength, mode }
    }

    /// Applies this edit to `terrain` (river sources change nothing here; they are drawn
    /// from the final heights). A stroke made on a map of another size lands on the same
    /// spot of this one (see the module docs).
    pub fn apply(&self, terrain: &mut Terrain, progress: &PipelineProgress) -> Result<()> {
        match self {
            EditOp::Stroke { mode, radius, strength, dabs, map } => {
                let (w, h) = (terrain.height.width(), terrain.height.height());
                let scale = map_scale(*map, w, h);
                let radius = match scale {
                    None => *radius,
                    Some((sx, sy)) => (radius * (sx * sy).sqrt()).clamp(f64::MIN_POSITIVE, MAX_RADIUS),
                };
                let mut stroke = Stroke::new();
                for &at in dabs {
                    let at = match scale {
                        None => at,
                        Some((sx, sy)) => [at[0] * sx, at[1] * sy],
                    };
                    stroke.apply_dab(&mut terrain.height, &EditOp::brush(*mode, radius, *strength, at))?;
                }
                Ok(())
            }
            EditOp::RiverSource { .. } => Ok(()),
            EditOp::Erode { step, seed } => run_erosion(terrain, step, *seed, progress),
        }
    }
}

/// Runs one erosion step (any registry step of category Erode) on `terrain`, as a one-step
/// pipeline whose seed is `seed` (so the run is validated, cancellable and deterministic).
pub fn run_erosion(
    terrain: &mut Terrain,
    entry: &StepEntry,
    seed: u64,
    progress: &PipelineProgress,
) -> Result<()> {
    let reg = registry();
    if find_step(&reg, &entry.kind).is_none_or(|i| i.category != Category::Erode) {
        return Err(Error::recipe(format!("`{}` is not an erosion step", entry.kind)));
    }
    let mut recipe = Recipe::new("erosion");
    recipe.width = terrain.height.width();
    recipe.height = terrain.height.height();
    recipe.cell_size = terrain.height.cell_size();
    recipe.sea_level = terrain.sea_level as f64;
    recipe.seed = seed;
    recipe.steps = vec![entry.clone()];
    let pipeline = Pipeline::new(recipe, &reg)?;
    let out = pipeline.run_on(terrain.clone(), progress)?;
    *terrain = out.terrain;
    Ok(())
}

/// The recipe and the edits on top of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// The generator pipeline.
    pub recipe: Recipe,
    /// Edits in the order they were made.
    #[serde(default)]
    pub edits: Vec<EditOp>,
    /// Strokes and river sources of a world project, in world cells, filed per chunk (module
    /// docs); absent from files without them.
    #[serde(default, rename = "world-edits", skip_serializing_if = "WorldEdits::is_empty")]
    pub world_edits: WorldEdits,
}

impl Document {
    /// A document with `recipe` and no edits.
    pub fn new(recipe: Recipe) -> Self {
        Self { recipe, edits: Vec::new(), world_edits: WorldEdits::new() }
    }

    /// Runs the recipe, then replays every edit and traces the placed rivers
    /// ([`Document::apply_edits`]). Cancelling `progress` stops it with [`Error::Cancelled`].
    pub fn build(&self, progress: &PipelineProgress) -> Result<Terrain> {
        Ok(self.run(progress)?.0.terrain)
    }

    /// [`Document::build`], keeping what report.json reports of the run: the recipe's
    /// per-step timings and whole-run seconds ([`RunOutput`]: its terrain has the edits
    /// replayed) and ε after each erosion step ([`ErosionLog`], as `terrasynth generate`
    /// records it). A document with world edits is cut from its world, so it has no steps of
    /// its own to time: empty timings and log.
    pub fn run(&self, progress: &PipelineProgress) -> Result<(RunOutput, ErosionLog)> {
        let t0 = std::time::Instant::now();
        if !self.world_edits.is_empty() {
            let world = super::World::new(self.recipe.clone())?;
            let (w, h) = (self.recipe.width, self.recipe.height);
            let mut terrain = edited_window(&world, &self.world_edits, 0, 0, w, h, progress)?.terrain;
            self.apply_edits(&mut terrain, progress)?;
            let seconds = t0.elapsed().as_secs_f64();
            return Ok((
                RunOutput { terrain, timings: Vec::new(), seconds, peak_bytes: None },
                ErosionLog::default(),
            ));
        }
        let pipeline = Pipeline::new(self.recipe.clone(), &registry())?;
        let mut recorder = ErosionRecorder::new(None);
        let mut out = pipeline.run_with(progress, &mut recorder)?;
        self.apply_edits(&mut out.terrain, progress)?;
        Ok((out, recorder.into_log()))
    }

    /// Replays every edit on `terrain` (the recipe's output) in order, then traces a river
    /// from each source on the result ([`place_rivers`]).
    pub fn apply_edits(&self, terrain: &mut Terrain, progress: &PipelineProgress) -> Result<()> {
        for e in &self.edits {
            if progress.is_cancelled() {
                return Err(Error::Cancelled);
            }
            e.apply(terrain, progress)?;
        }
        place_rivers_with(terrain, &self.sources_with_modes())?;
        if let Some(depth) = self.carve_depth() {
            carve_placed_rivers(terrain, depth)?;
        }
        Ok(())
    }

    /// Whether the placed rivers are cut into the heights: the recipe carves its rivers
    /// ([`Document::carve_depth`]) and there are river sources.
    pub fn carves_placed_rivers(&self) -> bool {
        self.carve_depth().is_some() && self.edits.iter().any(|e| matches!(e, EditOp::RiverSource { .. }))
    }

    /// The depth the recipe carves its rivers by: the `carve-depth` of its last enabled
    /// `rivers` step, when above 0 (height units); None when the recipe carves none, so the
    /// placed rivers leave the heights alone.
    pub fn carve_depth(&self) -> Option<f32> {
        let step = self.recipe.steps.iter().rev().find(|s| s.enabled && s.kind == "rivers")?;
        match step.params.get("carve-depth") {
            Some(crate::step::ParamValue::Number(d)) if *d > 0.0 => Some(*d as f32),
            _ => None,
        }
    }

    /// River sources, in the order they were placed, as cells of the recipe's map (a source
    /// placed on a map of another size moves with the map, to the nearest cell).
    pub fn sources(&self) -> Vec<(usize, usize)> {
        self.sources_with_modes().into_iter().map(|(c, _)| c).collect()
    }

    /// [`Document::sources`] with each source's walk.
    pub fn sources_with_modes(&self) -> Vec<((usize, usize), RiverMode)> {
        let (w, h) = (self.recipe.width, self.recipe.height);
        self.edits
            .iter()
            .filter_map(|e| match e {
                EditOp::RiverSource { x, y, map, mode } => Some((
                    match map_scale(*map, w, h) {
                        None => (*x, *y),
                        Some((sx, sy)) => {
                            let at =
                                |v: usize, s: f64, n: usize| ((v as f64 * s).round() as usize).min(n - 1);
                            (at(*x, sx, w), at(*y, sy, h))
                        }
                    },
                    *mode,
                )),
                _ => None,
            })
            .collect()
    }

    /// Whether any edit was made on a map of another size than the recipe's (it will be
    /// scaled to the map when replayed).
    pub fn has_resized_edits(&self) -> bool {
        let size = [self.recipe.width, self.recipe.height];
        self.edits.iter().any(|e| match e {
            EditOp::Stroke { map, .. } | EditOp::RiverSource { map, .. } => map.is_some_and(|m| m != size),
            EditOp::Erode { .. } => false,
        })
    }
}

/// Traces a river from each of `sources` (cells of `terrain`'s map) and stores them as the
/// terrain's [`HydroLayers::placed`] rivers, replacing earlier ones (module docs: traced on the
/// ε-filled surface; drainage area and width per point; stopped at a river of the recipe's own
/// network). No sources clears them (and adds no layer to a terrain without one). Errors on a
/// source outside the map.
pub fn place_rivers(terrain: &mut Terrain, sources: &[(usize, usize)]) -> Result<()> {
    let with_modes: Vec<_> = sources.iter().map(|&s| (s, RiverMode::Filled)).collect();
    place_rivers_with(terrain, &with_modes)
}

/// [`place_rivers`] with a walk per source ([`RiverMode`]; [`source_rivers`] traces them).
pub fn place_rivers_with(terrain: &mut Terrain, sources: &[((usize, usize), RiverMode)]) -> Result<()> {
    if sources.is_empty() {
        if let Some(l) = terrain.layers.get_mut::<HydroLayers>() {
            l.placed.clear();
        }
        return Ok(());
    }
    let placed = source_rivers(terrain, sources)?;
    terrain.layers.get_or_default::<HydroLayers>().placed = placed;
    Ok(())
}

/// Cuts the terrain's placed rivers ([`HydroLayers::placed`]) into its heights, `depth`
/// below their water surface at the discharge of the recipe's largest river
/// ([`carve_rivers_below`]: `depth · (A / A_max)^0.4`, `A_max` over the recipe's rivers and the
/// placed ones), as the recipe's `rivers` step cut its own network: a creek from a placed
/// source is as deep as the network's creeks of its size. Nothing without placed rivers.
pub fn carve_placed_rivers(terrain: &mut Terrain, depth: f32) -> Result<()> {
    let Some(layers) = terrain.layers.get::<HydroLayers>() else { return Ok(()) };
    if layers.placed.is_empty() {
        return Ok(());
    }
    let q_max = layers
        .rivers
        .iter()
        .chain(&layers.placed)
        .flat_map(|r| r.points.iter())
        .map(|p| p.discharge)
        .fold(1.0f32, f32::max);
    let placed = layers.placed.clone();
    carve_rivers_below(&mut terrain.height, &placed, depth, q_max)
}

/// How cell coordinates of a map of size `map` scale onto a `w × h` map, corner onto corner:
/// `(sx, sy)`, or None when the sizes are the same (or unknown), so the coordinates are used
/// exactly as stored.
pub fn map_scale(map: Option<[usize; 2]>, w: usize, h: usize) -> Option<(f64, f64)> {
    let [mw, mh] = map?;
    if [mw, mh] == [w, h] || mw < 2 || mh < 2 {
        return None;
    }
    Some(((w - 1) as f64 / (mw - 1) as f64, (h - 1) as f64 / (mh - 1) as f64))
}

/// A low-resolution copy of `recipe` for the instant preview: each side shrunk by `factor`
/// (`(n − 1) / factor + 1` cells, at least 2) and the cell size multiplied by `factor`, so the
/// map covers the same ground.
pub fn preview_recipe(recipe: &Recipe, factor: usize) -> Recipe {
    let mut r = recipe.clone();
    let f = factor.max(1);
    r.width = ((recipe.width - 1) / f + 1).max(2);
    r.height = ((recipe.height - 1) / f + 1).max(2);
    r.cell_size = recipe.cell_size * f as f64;
    r
}

/// What a project file holds: format tag, version, the document and the view settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct ProjectFile<V> {
    /// Always [`PROJECT_FORMAT`].
    pub format: String,
    /// Format version ([`PROJECT_VERSION`]).
    pub version: u32,
    /// Recipe and edits.
    pub document: Document,
    /// View settings (optional when reading).
    pub view: Option<V>,
}

/// Writes `doc` and `view` as a JSON project file (atomically: temp file, then rename).
pub fn save_project<V: Serialize>(path: &Path, doc: &Document, view: &V) -> Result<()> {
    let file = ProjectFile {
        format: PROJECT_FORMAT.into(),
        version: project_version(doc),
        document: doc.clone(),
        view: Some(view),
    };
    let text = serde_json::to_string_pretty(&file)
        .map_err(|e| Error::recipe(format!("cannot write project: {e}")))?;
    crate::io::write_atomic(path, |w| {
        w.write_all(text.as_bytes()).map_err(|source| Error::Io { path: path.to_path_buf(), source })
    })
}

/// Reads a project file. Errors (with the path) on unreadable files, bad JSON, a wrong format
/// tag, a newer version, or a recipe that does not validate.
/// Only a regular file of at most [`crate::recipe::model::MAX_RECIPE_FILE_BYTES`] is read;
/// relative file paths of its recipe resolve against the project file's folder
/// ([`Recipe::resolve_paths`]).
pub fn load_project<V: for<'de> Deserialize<'de>>(path: &Path) -> Result<(Document, Option<V>)> {
    let bytes = crate::io::read_input_file(path, crate::recipe::model::MAX_RECIPE_FILE_BYTES)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::recipe(format!("{}: not a project file (not UTF-8 text)", path.display())))?;
    let (mut doc, view) =
        parse_project(&text).map_err(|e| Error::recipe(format!("{}: {e}", path.display())))?;
    doc.recipe.resolve_paths(path.parent().unwrap_or(Path::new("")));
    Ok((doc, view))
}

/// Parses the text of a project file (see [`load_project`]).
pub fn parse_project<V: for<'de> Deserialize<'de>>(text: &str) -> Result<(Document, Option<V>)> {
    let head: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::recipe(format!("not a project file (JSON error: {e})")))?;
    if head.get("format").and_then(|f| f.as_str()) != Some(PROJECT_FORMAT) {
        return Err(Error::recipe(format!("not a project file (no `format = \"{PROJECT_FORMAT}\"`)")));
    }
    match head.get("version").and_then(|v| v.as_u64()) {
        Some(v) if v >= 1 && v <= PROJECT_VERSION as u64 => {}
        Some(v) => {
            return Err(Error::recipe(format!(
                "project version {v} is not supported (this build reads 1..={PROJECT_VERSION})"
            )));
        }
        None => return Err(Error::recipe("project file has no version")),
    }
    let mut file: ProjectFile<V> =
        serde_json::from_str(text).map_err(|e| Error::recipe(format!("bad project file: {e}")))?;
    // Before version 4 a droplets step without a count ran 50 000 droplets.
    if file.version < PROJECT_VERSION {
        for entry in auto_droplet_entries(&mut file.document) {
            entry.params.insert("droplets".into(), crate::step::ParamValue::Number(LEGACY_DROPLETS));
        }
    }
    // Version 1 stored cell indices alone: they belong to the recipe's own map size.
    let size = [file.document.recipe.width, file.document.recipe.height];
    for e in &mut file.document.edits {
        if let EditOp::Stroke { map, .. } | EditOp::RiverSource { map, .. } = e {
            map.get_or_insert(size);
        }
    }
    let problems = file.document.recipe.check_fields();
    if !problems.is_empty() {
        return Err(Error::Recipe(problems));
    }
    Pipeline::new(file.document.recipe.clone(), &registry())?;
    if !file.document.world_edits.is_empty() && !file.document.recipe.is_world() {
        return Err(Error::recipe(
            "the project has world edits but its recipe is not a world recipe (no [world] table)",
        ));
    }
    let (w, h) = (file.document.recipe.width, file.document.recipe.height);
    for e in &file.document.edits {
        if let EditOp::RiverSource { x, y, map, .. } = e {
            let [mw, mh] = map.unwrap_or([w, h]);
            if *x >= mw || *y >= mh {
                return Err(Error::recipe(format!("river source ({x}, {y}) is outside the {mw}x{mh} map")));
            }
        }
    }
    Ok((file.document, file.view))
}

/// A fresh erosion entry for the step `name` with its default parameters and `iterations`.
pub fn erosion_entry(name: &str, iterations: u32) -> StepEntry {
    let mut e = StepEntry::new(name);
    let reg = registry();
    if let Some(info) = find_step(&reg, name)
        && info.params.iter().any(|p| p.name == "iterations")
    {
        e = e.with("iterations", iterations as f64);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hydro::RiverPoint;

    fn small_island() -> Recipe {
        let mut r = crate::recipe::presets()[0].recipe().unwrap();
        r.width = 65;
        r.height = 65;
        r
    }

    fn stroke() -> EditOp {
        // Awkward decimals: they must survive the JSON round trip bit for bit.
        EditOp::Stroke {
            mode: BrushMode::Raise,
            radius: 7.3,
            strength: 0.013,
            dabs: vec![[10.1, 20.7], [0.1 + 0.2, 33.333333333333336]],
            map: Some([65, 65]),
        }
    }

    #[test]
    fn project_round_trip_is_exact() {
        let mut doc = Document::new(small_island());
        doc.edits = vec![
            stroke(),
            EditOp::RiverSource { x: 3, y: 60, map: Some([65, 65]), mode: RiverMode::Filled },
            EditOp::Erode { step: erosion_entry("thermal", 3), seed: 99 },
        ];
        let dir = std::env::temp_dir().join(format!("ts-gui-doc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.tsproj");
        save_project(&path, &doc, &[1.5f64, 0.1]).unwrap();
        let (back, view) = load_project::<[f64; 2]>(&path).unwrap();
        assert_eq!(back, doc);
        assert_eq!(view, Some([1.5, 0.1]));
        let progress = PipelineProgress::new();
        let a = doc.build(&progress).unwrap();
        let b = back.build(&progress).unwrap();
        assert_eq!(a.height.as_slice(), b.height.as_slice());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn replaying_a_stroke_equals_applying_its_dabs() {
        let progress = PipelineProgress::new();
        let base = Document::new(small_island());
        let mut live = base.build(&progress).unwrap();
        let EditOp::Stroke { mode, radius, strength, dabs, .. } = stroke() else { unreachable!() };
        for at in &dabs {
            EditOp::brush(mode, radius, strength, *at).apply(&mut live.height).unwrap();
        }
        let mut doc = base.clone();
        doc.edits.push(stroke());
        let replayed = doc.build(&progress).unwrap();
        assert_eq!(live.height.as_slice(), replayed.height.as_slice());
        assert_ne!(live.height.as_slice(), base.build(&progress).unwrap().height.as_slice());
    }

    #[test]
    fn bad_project_files_are_rejected_with_a_reason() {
        let ok = serde_json::to_string(&ProjectFile::<()> {
            format: PROJECT_FORMAT.into(),
            version: 1,
            document: Document::new(small_island()),
            view: None,
        })
        .unwrap();
        assert!(parse_project::<()>(&ok).is_ok());
        let cases = [
            ("{ not json", "JSON"),
            ("{\"format\": \"other\", \"version\": 1}", "not a project file"),
            (&ok.replace("\"version\":1", "\"version\":99"), "version 99"),
            (&ok.replace("\"width\":65", "\"width\":0"), "width"),
            (
                &ok.replace("\"edits\":[]", "\"edits\":[{\"kind\":\"river-source\",\"x\":500,\"y\":1}]"),
                "outside",
            ),
            (&ok.replace("\"octaves\":8", "\"octaves\":-3"), "octaves"),
        ];
        for (text, want) in cases {
            let err = parse_project::<()>(text).unwrap_err().to_string();
            assert!(err.contains(want), "{want}: {err}");
        }
    }

    #[test]
    fn version_1_files_load_with_their_edits_on_the_recipes_map() {
        let mut doc = Document::new(small_island());
        doc.edits =
            vec![stroke(), EditOp::RiverSource { x: 3, y: 60, map: Some([65, 65]), mode: RiverMode::Filled }];
        let v2 = serde_json::to_string(&ProjectFile::<()> {
            format: PROJECT_FORMAT.into(),
            version: 2,
            document: doc.clone(),
            view: None,
        })
        .unwrap();
        // A version 1 file: the same edits without `map`.
        let v1 = v2.replace("\"version\":2", "\"version\":1").replace(",\"map\":[65,65]", "");
        assert!(!v1.contains("map") && v1.contains("\"version\":1"), "{v1}");
        let (back, _) = parse_project::<()>(&v1).unwrap();
        assert_eq!(back, doc, "cell indices belong to the recipe's map");
        let progress = PipelineProgress::new();
        assert_eq!(
            back.build(&progress).unwrap().height.as_slice(),
            doc.build(&progress).unwrap().height.as_slice()
        );
    }

    /// A droplet erosion with the automatic count (one droplet per cell since version 4) makes
    /// the file version 4, so builds that read an absent count as 50 000 refuse it; a version
    /// 2 or 3 file with an absent count still runs its 50 000 droplets, bit for bit as before.
    #[test]
    fn droplet_runs_keep_their_count_across_project_versions() {
        let mut doc = Document::new(small_island());
        assert_eq!(project_version(&doc), PROJECT_VERSION_MAP);
        doc.edits = vec![EditOp::Erode { step: erosion_entry("droplets", 1), seed: 5 }];
        assert_eq!(project_version(&doc), PROJECT_VERSION);
        let text = |doc: &Document, version: u32| {
            serde_json::to_string(&ProjectFile::<()> {
                format: PROJECT_FORMAT.into(),
                version,
                document: doc.clone(),
                view: None,
            })
            .unwrap()
        };
        let (now, _) = parse_project::<()>(&text(&doc, PROJECT_VERSION)).unwrap();
        assert_eq!(now, doc, "version 4: auto stays auto");
        let (old, _) = parse_project::<()>(&text(&doc, PROJECT_VERSION_MAP)).unwrap();
        let mut legacy = doc.clone();
        let EditOp::Erode { step, .. } = &mut legacy.edits[0] else { unreachable!() };
        *step = step.clone().with("droplets", LEGACY_DROPLETS);
        assert_eq!(old, legacy, "version 2: the 50 000 droplets it meant");
        assert_eq!(
            project_version(&legacy),
            PROJECT_VERSION_MAP,
            "an explicit count reads the same anywhere"
        );
        // The count matters: auto on 65² is 4 225 droplets, not 50 000.
        let progress = PipelineProgress::new();
        assert_ne!(
            now.build(&progress).unwrap().height.as_slice(),
            old.build(&progress).unwrap().height.as_slice()
        );
        // The recipe's own steps too.
        let mut recipe_doc = Document::new(small_island());
        recipe_doc.recipe.steps.push(StepEntry::new("droplets"));
        assert_eq!(project_version(&recipe_doc), PROJECT_VERSION);
        let (old, _) = parse_project::<()>(&text(&recipe_doc, PROJECT_VERSION_MAP)).unwrap();
        assert_eq!(
            old.recipe.steps.last().unwrap().params.get("droplets"),
            Some(&crate::step::ParamValue::Number(LEGACY_DROPLETS))
        );
    }

    #[test]
    fn edits_scale_with_the_map_corner_onto_corner() {
        let mut doc = Document::new(small_island());
        doc.edits = vec![EditOp::RiverSource { x: 32, y: 16, map: Some([65, 65]), mode: RiverMode::Filled }];
        assert_eq!(doc.sources(), vec![(32, 16)]);
        assert!(!doc.has_resized_edits());
        (doc.recipe.width, doc.recipe.height) = (129, 257);
        assert_eq!(doc.sources(), vec![(64, 64)]);
        assert!(doc.has_resized_edits());
        assert_eq!(map_scale(Some([65, 65]), 129, 257), Some((2.0, 4.0)));
        assert_eq!(map_scale(Some([65, 65]), 65, 65), None, "same map: coordinates used exactly");
        // A stroke on the bigger map covers the same fraction of it: its changed cells span
        // twice as many columns.
        let progress = PipelineProgress::new();
        let span = |w: usize| {
            let mut d = Document::new(small_island());
            (d.recipe.width, d.recipe.height) = (w, w);
            let base = d.build(&progress).unwrap();
            d.edits = vec![EditOp::Stroke {
                mode: BrushMode::Raise,
                radius: 4.0,
                strength: 0.05,
                dabs: vec![[16.0, 32.0], [40.0, 32.0]],
                map: Some([65, 65]),
            }];
            let edited = d.build(&progress).unwrap();
            let cols: Vec<usize> = (0..w * w)
                .filter(|&i| edited.height.as_slice()[i] != base.height.as_slice()[i])
                .map(|i| i % w)
                .collect();
            (*cols.iter().min().unwrap(), *cols.iter().max().unwrap())
        };
        let (a0, a1) = span(65);
        let (b0, b1) = span(129);
        assert!(
            (b0 as i64 - 2 * a0 as i64).abs() <= 1 && (b1 as i64 - 2 * a1 as i64).abs() <= 1,
            "{a0}..{a1} vs {b0}..{b1}"
        );
    }

    /// A world project's edits are filed per chunk, saved as version 3, and replay exactly:
    /// save → load → the same window bytes; a project without world edits stays version 2.
    #[test]
    fn world_projects_save_and_replay_their_edits_exactly() {
        use super::super::world_edits::WorldEdit;
        use crate::recipe::World;
        let mut recipe = crate::recipe::preset("world").unwrap().recipe().unwrap();
        (recipe.width, recipe.height) = (40, 30);
        let mut doc = Document::new(recipe.clone());
        let plain_text = serde_json::to_string(&ProjectFile::<()> {
            format: PROJECT_FORMAT.into(),
            version: PROJECT_VERSION_MAP,
            document: doc.clone(),
            view: None,
        })
        .unwrap();
        assert!(!plain_text.contains("world-edits"), "no key without world edits");
        doc.world_edits
            .push(WorldEdit::Stroke {
                mode: BrushMode::Raise,
                radius: 9.0,
                strength: 300.0,
                dabs: vec![[250.0, 3.0], [258.5, 4.25], [266.0, 6.0]],
            })
            .unwrap();
        doc.world_edits
            .push(WorldEdit::Stroke {
                mode: BrushMode::Smooth,
                radius: 5.0,
                strength: 0.9,
                dabs: vec![[256.0, 5.0]],
            })
            .unwrap();
        doc.world_edits
            .push(WorldEdit::RiverSource { x: 20, y: 10, reach: 32, depth_m: 6.0, width: 2.0 })
            .unwrap();
        let dir = std::env::temp_dir().join(format!("ts-world-doc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("w.tsproj");
        save_project(&path, &doc, &()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"version\": 3") && text.contains("\"world-edits\""), "{text}");
        let (back, _) = load_project::<()>(&path).unwrap();
        assert_eq!(back, doc);
        let world = World::new(recipe.clone()).unwrap();
        let p = PipelineProgress::new();
        for (x0, y0, w, h) in [(240i64, -5i64, 30usize, 20usize), (255, 0, 3, 3), (0, 0, 40, 30)] {
            let a = edited_window(&world, &doc.world_edits, x0, y0, w, h, &p).unwrap();
            let b = edited_window(&world, &back.world_edits, x0, y0, w, h, &p).unwrap();
            assert_eq!(a.terrain.height.as_slice(), b.terrain.height.as_slice());
        }
        // `build` is the default window with the edits (the river source at (20, 10) carves it).
        let built = back.build(&p).unwrap();
        let plain = Document::new(recipe).build(&p).unwrap();
        assert_ne!(built.height.as_slice(), plain.height.as_slice());
        // World edits on a map recipe are refused.
        let map_text = text.replace("\"world\": {", "\"not-world\": {");
        let e = parse_project::<()>(&map_text).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("not a world recipe") || e.contains("not-world"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn preview_recipe_covers_the_same_ground() {
        let r = small_island();
        let p = preview_recipe(&r, 4);
        assert_eq!((p.width, p.height), (17, 17));
        assert_eq!(p.cell_size, r.cell_size * 4.0);
        assert_eq!((p.width - 1) as f64 * p.cell_size, (r.width - 1) as f64 * r.cell_size);
        assert_eq!(preview_recipe(&r, 1), r);
    }

    #[test]
    fn cancelled_build_stops() {
        let progress = PipelineProgress::new();
        progress.cancel();
        assert!(matches!(Document::new(small_island()).build(&progress), Err(Error::Cancelled)));
    }

    /// The highest land cell of `t` (a source that surely starts a long river).
    fn summit(t: &Terrain) -> (usize, usize) {
        let h = t.height.as_slice();
        let i = (0..h.len()).max_by(|&a, &b| h[a].total_cmp(&h[b])).unwrap();
        (i % t.height.width(), i / t.height.width())
    }

    #[test]
    fn placed_rivers_are_traced_to_the_sea_and_join_the_water_layers() {
        use crate::hydro::WaterLayers;
        let progress = PipelineProgress::new();
        let mut doc = Document::new(small_island());
        let plain = doc.build(&progress).unwrap();
        assert!(plain.layers.get::<HydroLayers>().is_none(), "no sources: no layer is added");
        let network = WaterLayers::build(&plain).unwrap().rivers.len();
        let (x, y) = summit(&plain);
        doc.edits.push(EditOp::RiverSource { x, y, map: Some([65, 65]), mode: RiverMode::Filled });
        let t = doc.build(&progress).unwrap();
        assert_eq!(t.height.as_slice(), plain.height.as_slice(), "a source changes no height");
        let placed = &t.layers.get::<HydroLayers>().unwrap().placed;
        assert_eq!(placed.len(), 1);
        let pts = &placed[0].points;
        assert_eq!((pts[0].x, pts[0].y), (x as f32, y as f32));
        // Downhill on the filled surface, to the sea or the edge, drainage area growing.
        assert!(pts.windows(2).all(|p| p[1].height < p[0].height && p[1].discharge >= p[0].discharge));
        let end = pts.last().unwrap();
        let (ex, ey) = (end.x as usize, end.y as usize);
        assert!(
            t.height[(ex, ey)] < t.sea_level || ex == 0 || ey == 0 || ex == 64 || ey == 64,
            "ends at ({ex}, {ey})"
        );
        let layers = WaterLayers::build(&t).unwrap();
        assert_eq!(layers.rivers.len(), network + 1);
        assert_eq!(layers.rivers.last(), Some(&placed[0]));
        // Undoing the source (no sources left) clears them.
        doc.edits.pop();
        let mut again = t.clone();
        doc.apply_edits(&mut again, &progress).unwrap();
        assert!(again.layers.get::<HydroLayers>().unwrap().placed.is_empty());
    }

    #[test]
    fn a_placed_river_stops_at_the_recipes_own_network() {
        let progress = PipelineProgress::new();
        let mut recipe = crate::recipe::preset("rivers").unwrap().recipe().unwrap();
        (recipe.width, recipe.height) = (65, 65);
        let mut doc = Document::new(recipe);
        let plain = doc.build(&progress).unwrap();
        let network = &plain.layers.get::<HydroLayers>().unwrap().rivers;
        let cells: std::collections::HashSet<(i64, i64)> = network
            .iter()
            .flat_map(|r| r.points.iter().map(|p| (p.x.round() as i64, p.y.round() as i64)))
            .collect();
        let (x, y) = summit(&plain);
        doc.edits.push(EditOp::RiverSource { x, y, map: None, mode: RiverMode::Filled });
        let t = doc.build(&progress).unwrap();
        let placed = &t.layers.get::<HydroLayers>().unwrap().placed;
        let pts = &placed.first().expect("a river from the summit").points;
        let on = |p: &RiverPoint| cells.contains(&(p.x as i64, p.y as i64));
        assert!(on(pts.last().unwrap()), "ends on the network");
        assert!(!pts[..pts.len() - 1].iter().any(on), "joins it only at its last point");
        let widest = network.iter().flat_map(|r| r.points.iter()).map(|p| p.width).fold(0.0, f32::max);
        assert!(pts.iter().all(|p| p.width <= widest && p.width >= 0.0));
    }

    /// When the recipe's `rivers` step carves (carve-depth > 0), a placed river is cut into
    /// the heights as that network is: every cell of its course is lowered, to at most its
    /// water surface minus the depth of a network river of its drainage area, never deeper than
    /// carve-depth, and no cell away from it changes. With carve-depth 0 it changes no height.
    #[test]
    fn a_placed_river_is_carved_when_the_recipe_carves() {
        let progress = PipelineProgress::new();
        // The island with a sparse carved network (the big rivers only).
        let mut recipe = small_island();
        let depth = 0.03;
        recipe.steps.push(StepEntry::new("rivers").with("threshold", 0.02).with("carve-depth", depth as f64));
        let mut doc = Document::new(recipe);
        assert_eq!(doc.carve_depth(), Some(depth));
        let plain = doc.build(&progress).unwrap();
        // The source whose placed river is longest (a long course to check).
        let length = |c: (usize, usize)| {
            let mut t = plain.clone();
            place_rivers(&mut t, &[c]).unwrap();
            t.layers.get::<HydroLayers>().unwrap().placed.first().map_or(0, |r| r.points.len())
        };
        let (x, y) = (0..65 * 65)
            .step_by(7)
            .map(|i| (i % 65, i / 65))
            .filter(|&c| plain.height[c] > plain.sea_level)
            .max_by_key(|&c| length(c))
            .unwrap();
        doc.edits.push(EditOp::RiverSource { x, y, map: None, mode: RiverMode::Filled });
        let t = doc.build(&progress).unwrap();
        let layers = t.layers.get::<HydroLayers>().unwrap();
        let pts = &layers.placed.first().expect("a placed river").points;
        assert!(pts.len() > 5, "{} points", pts.len());
        let q_max = layers
            .rivers
            .iter()
            .chain(&layers.placed)
            .flat_map(|r| &r.points)
            .map(|p| p.discharge)
            .fold(1.0f32, f32::max);
        let mut lowered = 0;
        // Every point but the last (the junction with the network, carved by it already).
        for p in &pts[..pts.len() - 1] {
            let c = (p.x as usize, p.y as usize);
            let bed = p.height - depth * terrasynth_noise::detmath::powf(p.discharge / q_max, 0.4);
            assert!(t.height[c] <= bed, "{c:?}: {} above its bed {bed}", t.height[c]);
            let floor = plain.height[c].min(p.height - depth);
            assert!(t.height[c] >= floor - 1e-6, "{c:?}: cut deeper than carve-depth");
            // Lowered, unless the ground was below the bed already (a lake the river crosses).
            assert!(t.height[c] < plain.height[c] || plain.height[c] <= bed, "{c:?} lowered");
            lowered += usize::from(t.height[c] < plain.height[c]);
        }
        assert!(lowered * 2 > pts.len(), "{lowered} of {} cells lowered", pts.len());
        // Only the course and the cells within half its width move.
        let reach = pts.iter().map(|p| p.width * 0.5).fold(0.0f32, f32::max).ceil() as i64 + 1;
        for yy in 0..65 {
            for xx in 0..65 {
                let near =
                    pts.iter().any(|p| (p.x as i64 - xx).abs() <= reach && (p.y as i64 - yy).abs() <= reach);
                if !near {
                    assert_eq!(
                        t.height[(xx as usize, yy as usize)],
                        plain.height[(xx as usize, yy as usize)]
                    );
                }
            }
        }
        // carve-depth 0: the source changes no height.
        let step = doc.recipe.steps.iter_mut().rfind(|s| s.kind == "rivers").unwrap();
        step.params.insert("carve-depth".into(), crate::step::ParamValue::Number(0.0));
        assert_eq!(doc.carve_depth(), None);
        let uncut = doc.build(&progress).unwrap();
        doc.edits.clear();
        assert_eq!(uncut.height.as_slice(), doc.build(&progress).unwrap().height.as_slice());
    }
}
