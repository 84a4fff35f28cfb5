//! The editor model: everything the editor does apart from drawing, with no egui types, so it
//! is driven and tested without a window (`#[test]`s below).
//!
//! - the [`Document`] (recipe + edits) and the [`ViewSettings`], both saved in projects;
//! - the undo/redo history: parameter changes, strokes, river sources and erosion runs, each
//!   undone exactly (strokes and erosion in place when the map is the one they were made on);
//! - generation requests: any change of the recipe's terrain part starts a regeneration
//!   (preview first) at the end of the frame ([`Editor::end_frame`]); it becomes one undo step
//!   when the UI reports it idle (pointer up, no field focused);
//! - the background jobs ([`Worker`]) and their results ([`Editor::poll`]);
//! - versions of the heights and water layers, and the changed part of the map
//!   ([`Editor::take_map_changes`]) from which the views update their textures;
//! - project save/open and the periodic recovery file.
//!
//! The panels in [`crate::panels`] draw it and call its methods.

use std::path::{Path, PathBuf};
use std::time::Instant;

use terrasynth::analyze::epsilon;
use terrasynth::io::engine::Engine;
use terrasynth::noise::rng::{SplitMix64, derive_seed};
use terrasynth::recipe::{Pipeline, Recipe, StepEntry, presets, registry};
use terrasynth::render::Palette;
use terrasynth::render::palette::FractionMap;
use terrasynth::shape::brush::{Brush, Edit, Stroke};
use terrasynth::step::{ParamValue, Terrain};
use terrasynth::{Heightmap, recipe};

use crate::document::{Document, EditOp, erosion_entry, load_project, save_project};
use crate::settings::{AppOptions, BrushSettings, ViewSettings};
use crate::water::Water;
use crate::worker::{Active, Job, JobResult, Waker, Worker};

/// Errors kept in the error log.
pub const MAX_LOGGED_ERRORS: usize = 100;

/// Number of seeds "Random" picks from (0 to 999 999: six digits at most).
pub const RANDOM_SEEDS: u64 = 1_000_000;

/// Projects kept in the recent-files list.
pub const MAX_RECENT: usize = 8;

/// Default erosion step of the erosion panel.
pub const DEFAULT_EROSION: &str = "thermal";

/// One undoable action.
enum Action {
    /// The document changed (parameters, steps, preset, seed, size): regenerate.
    Doc { before: Box<Document>, after: Box<Document> },
    /// A brush stroke, with its exact undo record, made on map generation `map_gen`.
    Stroke { edit: Edit, op: EditOp, map_gen: u64 },
    /// A river source.
    Source { op: EditOp },
    /// An erosion run: the whole map before and after.
    Erode { before: Heightmap, after: Heightmap, op: EditOp, map_gen: u64 },
}

/// A stroke being painted.
struct Painting {
    stroke: Stroke,
    dabs: Vec<[f64; 2]>,
    last: [f64; 2],
    settings: BrushSettings,
}

/// Colour mapping fixed for one generated map (so strokes do not shift the colours of
/// untouched cells).
#[derive(Clone, Debug)]
pub struct MapColours {
    /// The recipe's palette.
    pub palette: Palette,
    /// Height (height units) → palette fraction over the generated map's range.
    pub fraction: FractionMap,
    /// Lowest height of the generated map.
    pub lo: f32,
    /// Highest height of the generated map.
    pub hi: f32,
    /// The recipe's own lake and river cells, painted as the export paints them on
    /// `color.png`/`shaded.png` (`export::recipe_water_mask`; None when there are none).
    pub recipe_water: Option<Vec<bool>>,
}

/// What changed in the map since the views last drew it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MapChanges {
    /// Everything (a new map, an erosion run, new water layers): redraw it all.
    pub full: bool,
    /// Only this rectangle `[x, y, w, h]` of cells (brush strokes).
    pub rect: Option<[usize; 4]>,
}

/// Erosion panel settings: the step to run and its iterations, and the last run's ε.
#[derive(Clone, Debug)]
pub struct ErosionSettings {
    /// The erosion step (type and parameters).
    pub entry: StepEntry,
    /// Iterations (sweeps, droplet rounds or time steps) to run.
    pub iterations: u32,
    /// Erosion score ε before and after the last run.
    pub eps: Option<(f64, f64)>,
}

impl ErosionSettings {
    /// The erosion step `kind` with its default parameters and its own default iteration count
    /// (the library's: e.g. one round of one droplet per cell, not 20 rounds, which melted the
    /// island).
    pub fn new(kind: &str) -> Self {
        let iterations = default_iterations(kind);
        Self { entry: erosion_entry(kind, iterations), iterations, eps: None }
    }

    /// Switches to the erosion step `kind` with its default parameters and iterations.
    pub fn set_kind(&mut self, kind: &str) {
        if kind != self.entry.kind {
            let eps = self.eps;
            *self = Self { eps, ..Self::new(kind) };
        }
    }
}

/// The default of the erosion step `kind`'s `iterations` parameter (1 when it has none).
pub fn default_iterations(kind: &str) -> u32 {
    match crate::limits::iterations_spec(kind).map(|s| s.default.to_value()) {
        Some(ParamValue::Number(n)) if n >= 1.0 => n as u32,
        _ => 1,
    }
}

/// The editor model (see the module docs).
pub struct Editor {
    /// Recipe and edits (saved in projects).
    pub doc: Document,
    /// View settings (saved in projects).
    pub view: ViewSettings,
    /// The terrain shown (None before the first generation).
    pub terrain: Option<Terrain>,
    /// Whether `terrain` is the low-resolution preview.
    pub is_preview: bool,
    /// Water layers of the current heights (when computed).
    pub water: Option<Water>,
    /// Last status message.
    pub status: String,
    /// The latest error, shown in the error bar until dismissed ([`Editor::dismiss_error`]);
    /// only the recipe's own "cannot run" error goes away by itself, once the fixed recipe
    /// has generated (a finished generation hides no other error).
    pub error: Option<String>,
    /// Every error of this session, oldest first (at most [`MAX_LOGGED_ERRORS`]), with the
    /// seconds since start: the error log window lists them.
    pub error_log: Vec<(f64, String)>,
    /// The open project's file: where Save writes (None: a new project, Save asks where).
    /// Set only by a successful open or save, so a failed Open never redirects Save.
    pub project_path: Option<PathBuf>,
    /// Recently opened or saved projects, newest first (at most [`MAX_RECENT`]).
    pub recent: Vec<PathBuf>,
    /// Folder field of the export dialog.
    pub export_dir: String,
    /// The game engine the export targets (its import files and sizes), as `generate --engine`.
    pub export_engine: Option<Engine>,
    /// Files written by the last export.
    pub exported: Vec<String>,
    /// Seconds the last full generation took.
    pub last_generation_s: Option<f64>,
    /// The last full generation's step timings and erosion scores, for report.json.
    pub last_run: crate::export::RunRecord,
    /// The erosion panel's step, iterations and last ε.
    pub erosion: ErosionSettings,
    /// Mask painting and the mask overlay ([`crate::mask_paint`]).
    pub mask: crate::mask_paint::MaskPaint,
    options: AppOptions,
    committed: Document,
    requested: Option<Recipe>,
    saved: Document,
    map_gen: u64,
    version: u64,
    water_version: Option<u64>,
    water_pending: Option<u64>,
    history: Vec<Action>,
    redo: Vec<Action>,
    painting: Option<Painting>,
    worker: Worker,
    colours: Option<MapColours>,
    changes: MapChanges,
    last_recovery: Instant,
    recovery_available: bool,
    erosion_pending: Option<EditOp>,
    seed_rng: SplitMix64,
    started: Instant,
    /// The error shown is the recipe's (it could not run): a later successful generation
    /// replaces it.
    recipe_error: bool,
    /// What the running generation does to the edits (a new seed or size), for the status bar.
    edits_note: Option<String>,
    /// The full map (and its colours) a preview replaced while a generation runs.
    replaced: Option<(Terrain, MapColours)>,
}

impl Editor {
    /// The editor on the first preset; `waker` is called from job threads when a result
    /// arrives (the app passes its `request_repaint`). Starts the first generation when
    /// `options.generate_at_start`.
    pub fn new(options: AppOptions, waker: Option<Waker>) -> Self {
        let recipe = presets()[0].recipe().unwrap_or_else(|_| Recipe::new("empty"));
        let doc = Document::new(recipe);
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        let recovery_available = options.recovery_path.as_ref().is_some_and(|p| p.exists());
        let mut editor = Self {
            committed: doc.clone(),
            saved: doc.clone(),
            doc,
            view: ViewSettings::default(),
            terrain: None,
            is_preview: false,
            water: None,
            status: "Ready".into(),
            error: None,
            error_log: Vec::new(),
            project_path: None,
            recent: options.recent_path.as_deref().map(read_recent).unwrap_or_default(),
            export_dir: "terrain-export".into(),
            export_engine: None,
            exported: Vec::new(),
            last_generation_s: None,
            last_run: crate::export::RunRecord::default(),
            erosion: ErosionSettings::new(DEFAULT_EROSION),
            mask: Default::default(),
            requested: None,
            map_gen: 0,
            version: 0,
            water_version: None,
            water_pending: None,
            history: Vec::new(),
            redo: Vec::new(),
            painting: None,
            worker: Worker::new(waker),
            colours: None,
            changes: MapChanges { full: true, rect: None },
            last_recovery: Instant::now(),
            recovery_available,
            erosion_pending: None,
            seed_rng: SplitMix64::new(seed),
            started: Instant::now(),
            recipe_error: false,
            edits_note: None,
            replaced: None,
            options,
        };
        if let Some(p) = editor.options.open_at_start.clone() {
            editor.open_project(&p);
        }
        if editor.options.generate_at_start && editor.requested.is_none() {
            editor.generate(true);
        }
        editor
    }

    // ----- state queries -----

    /// Whether a generation, erosion or export is running.
    pub fn is_busy(&self) -> bool {
        self.worker.is_busy()
    }

    /// Number of foreground jobs (generations, erosion runs, exports) started so far.
    pub fn jobs_started(&self) -> u64 {
        self.worker.started()
    }

    /// The running foreground job (label and progress), if any.
    pub fn active_job(&self) -> Option<&Active> {
        self.worker.active.as_ref()
    }

    /// Whether water layers are still being computed (or about to be) for the current heights.
    pub fn water_pending(&self) -> bool {
        self.worker.water_running > 0
            || (self.needs_water()
                && self.water_version != Some(self.version)
                && self.water_pending != Some(self.version))
    }

    /// Whether the document differs from the last saved or loaded one.
    pub fn has_unsaved_changes(&self) -> bool {
        self.doc != self.saved
    }

    /// Number of undoable actions.
    pub fn undo_len(&self) -> usize {
        self.history.len()
    }

    /// Whether there is something to undo (an action, or a change not yet committed).
    pub fn can_undo(&self) -> bool {
        !self.history.is_empty() || self.doc != self.committed
    }

    /// Whether there is something to redo.
    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// Whether the current map may be edited (a full map, no job running).
    pub fn can_edit(&self) -> bool {
        self.edit_blocker().is_none()
    }

    /// Why the map cannot be edited now (painting, river sources, erosion), in words for a
    /// disabled button's tooltip; None when it can.
    pub fn edit_blocker(&self) -> Option<&'static str> {
        if let Some(a) = self.worker.active.as_ref() {
            Some(match a.label {
                "Eroding…" => "An erosion run is going on: wait for it or Cancel it.",
                "Exporting…" => "An export is being written: wait for it to finish.",
                _ => "The map is being generated: wait for it or Cancel it.",
            })
        } else if self.terrain.is_none() {
            Some("There is no map yet: press Generate.")
        } else if self.is_preview {
            Some("The map shown is the low-resolution preview: press Generate for the full map.")
        } else {
            None
        }
    }

    /// The text over the 2D map: the running job, or that the map is only a preview (None on
    /// a full map with nothing running).
    pub fn map_overlay(&self) -> Option<String> {
        match self.worker.active.as_ref() {
            Some(a) => Some(a.label.to_string()),
            None if self.is_preview => Some("Preview only: press Generate for the full map".into()),
            None => None,
        }
    }

    /// Version of the heights shown: it changes with every new map and every edit.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Map version the water layers shown were computed for (it changes when new ones arrive).
    pub fn water_version(&self) -> Option<u64> {
        self.water_version
    }

    /// The colour mapping of the current map (None before the first map).
    pub fn colours(&self) -> Option<&MapColours> {
        self.colours.as_ref()
    }

    /// The water layers when they belong to the current map size (possibly one edit old).
    pub fn water_for_map(&self) -> Option<&Water> {
        let map = &self.terrain.as_ref()?.height;
        let current = if self.water_version == Some(self.version) { self.water.as_ref() } else { None };
        current.or(self.water.as_ref()).filter(|w| w.lake_labels.same_size(map))
    }

    /// What changed in the map since the last call (the map view redraws it).
    pub fn take_map_changes(&mut self) -> MapChanges {
        std::mem::take(&mut self.changes)
    }

    /// The recovery file, when one from an earlier session can be restored.
    pub fn recovery_file(&self) -> Option<&Path> {
        self.options.recovery_path.as_deref().filter(|_| self.recovery_available)
    }

    /// The heights as raw bytes (little-endian f32), for exact comparisons.
    pub fn height_bytes(&self) -> Vec<u8> {
        self.terrain
            .as_ref()
            .map(|t| t.height.as_slice().iter().flat_map(|v| v.to_le_bytes()).collect())
            .unwrap_or_default()
    }

    /// Erosion score before and after the last erosion run.
    pub fn erosion_scores(&self) -> Option<(f64, f64)> {
        self.erosion.eps
    }

    /// Shows `message` in the error bar (until dismissed) and adds it to the error log.
    pub fn report_error(&mut self, message: impl Into<String>) {
        let message = message.into();
        if self.error_log.len() >= MAX_LOGGED_ERRORS {
            self.error_log.remove(0);
        }
        self.error_log.push((self.started.elapsed().as_secs_f64(), message.clone()));
        self.error = Some(message);
        self.recipe_error = false;
    }

    /// Hides the error bar (the error stays in the log).
    pub fn dismiss_error(&mut self) {
        self.error = None;
    }

    // ----- document, generation, undo -----

    /// Replaces the document (like "New"; not undoable: the history is cleared) and generates it.
    pub fn new_document(&mut self, doc: Document) {
        self.doc = doc;
        self.committed = self.doc.clone();
        self.saved = self.doc.clone();
        self.history.clear();
        self.redo.clear();
        self.generate(true);
    }

    /// Starts a generation of the document (a preview first when `preview`).
    pub fn generate(&mut self, preview: bool) {
        if let Err(e) = Pipeline::new(self.doc.recipe.clone(), &registry()) {
            self.report_error(format!(
                "The recipe cannot run: {e}. The map shown is the last one generated."
            ));
            self.recipe_error = true;
            self.requested = Some(self.doc.recipe.clone());
            return;
        }
        self.painting = None;
        self.requested = Some(self.doc.recipe.clone());
        self.worker.start(Job::Generate { doc: self.doc.clone(), preview });
    }

    /// Cancels the running job.
    pub fn cancel(&mut self) {
        self.worker.cancel();
    }

    /// Records the document change since the last commit as one undoable action.
    pub fn commit(&mut self) {
        if self.doc != self.committed {
            let before = Box::new(std::mem::replace(&mut self.committed, self.doc.clone()));
            self.history.push(Action::Doc { before, after: Box::new(self.doc.clone()) });
            self.redo.clear();
        }
    }

    /// Picks a new random seed (the "Random" button): at most six digits, easy to note down and
    /// share ([`RANDOM_SEEDS`] of them); any seed the library accepts can still be typed.
    pub fn random_seed(&mut self) {
        self.doc.recipe.seed = self.seed_rng.next_u64() % RANDOM_SEEDS;
    }

    /// Loads a built-in preset (keeps the seed when it is locked). Undoable.
    pub fn load_preset(&mut self, name: &str) {
        match recipe::preset(name).and_then(|p| p.recipe()) {
            Ok(mut r) => {
                if self.view.seed_locked {
                    r.seed = self.doc.recipe.seed;
                }
                self.commit();
                self.doc = Document::new(r);
                self.commit();
                self.erosion.eps = None;
                self.generate(true);
            }
            Err(e) => self.report_error(e.to_string()),
        }
    }

    /// Undoes the last action (Ctrl+Z).
    pub fn undo(&mut self) {
        self.commit();
        let Some(action) = self.history.pop() else {
            self.status = "Nothing to undo".into();
            return;
        };
        let action = self.apply_action(action, true);
        self.redo.push(action);
        self.status = "Undone".into();
    }

    /// Redoes the last undone action (Ctrl+Shift+Z).
    pub fn redo(&mut self) {
        self.commit();
        let Some(action) = self.redo.pop() else {
            self.status = "Nothing to redo".into();
            return;
        };
        let action = self.apply_action(action, false);
        self.history.push(action);
        self.status = "Redone".into();
    }

    /// Whether the current terrain is the full map of generation `map_gen` and may be edited in
    /// place (not when the map is rebuilt after every edit, [`Editor::rebuilds_on_edit`]).
    fn exact_ok(&self, map_gen: u64) -> bool {
        self.can_edit() && map_gen == self.map_gen && !self.rebuilds_on_edit()
    }

    /// Whether every edit rebuilds the map from the document instead of changing it in place:
    /// when the recipe carves its rivers and there are river sources, their rivers are cut into
    /// the heights after all the edits ([`Document::apply_edits`]), so a stroke or an erosion
    /// run made in place would land on the cut channels and differ from the project's map.
    pub fn rebuilds_on_edit(&self) -> bool {
        self.doc.carves_placed_rivers()
    }

    /// Removes the last edit (undo) or appends `op` again (redo), without a new undo step.
    fn toggle_edit(&mut self, op: &EditOp, undo: bool) {
        if undo {
            self.doc.edits.pop();
        } else {
            self.doc.edits.push(op.clone());
        }
        self.committed = self.doc.clone();
    }

    fn apply_action(&mut self, action: Action, undo: bool) -> Action {
        // The ε shown belongs to the last erosion run on this map: any undo or redo makes it
        // out of date (an erosion redo sets it again below).
        self.erosion.eps = None;
        match action {
            Action::Doc { before, after } => {
                self.doc = if undo { (*before).clone() } else { (*after).clone() };
                self.committed = self.doc.clone();
                self.generate(true);
                Action::Doc { before, after }
            }
            Action::Stroke { edit, op, map_gen } => {
                self.toggle_edit(&op, undo);
                if self.exact_ok(map_gen) {
                    let t = self.terrain.as_mut().expect("checked by exact_ok");
                    let r = if undo { edit.undo(&mut t.height) } else { edit.redo(&mut t.height) };
                    match r {
                        Ok(()) => {
                            self.mark_changed([edit.rect.x, edit.rect.y, edit.rect.w, edit.rect.h]);
                            self.version += 1;
                        }
                        Err(e) => {
                            self.report_error(format!("{e}; regenerating the map"));
                            self.generate(false);
                        }
                    }
                } else {
                    self.generate(false);
                }
                Action::Stroke { edit, op, map_gen }
            }
            Action::Source { op } => {
                self.toggle_edit(&op, undo);
                self.version += 1;
                if self.doc.carve_depth().is_some() {
                    self.generate(false);
                }
                Action::Source { op }
            }
            Action::Erode { before, after, op, map_gen } => {
                self.toggle_edit(&op, undo);
                if !undo {
                    self.erosion.eps = Some((epsilon(&before), epsilon(&after)));
                }
                if self.exact_ok(map_gen) {
                    let t = self.terrain.as_mut().expect("checked by exact_ok");
                    t.height = if undo { before.clone() } else { after.clone() };
                    self.changes.full = true;
                    self.version += 1;
                } else {
                    self.generate(false);
                }
                Action::Erode { before, after, op, map_gen }
            }
        }
    }

    // ----- edits -----

    /// Places a river source at cell `(x, y)`. Undoable.
    pub fn add_river_source(&mut self, x: usize, y: usize) {
        let Some(t) = &self.terrain else { return };
        if x >= t.height.width() || y >= t.height.height() || self.is_preview {
            return;
        }
        let map = Some([t.height.width(), t.height.height()]);
        self.commit();
        let op = EditOp::RiverSource { x, y, map, mode: self.view.river_mode };
        self.doc.edits.push(op.clone());
        self.committed = self.doc.clone();
        self.history.push(Action::Source { op });
        self.redo.clear();
        self.version += 1;
        self.status = format!("River source at ({x}, {y})");
        if self.doc.carve_depth().is_some() {
            // The recipe carves its rivers: the new river is cut into the heights.
            self.generate(false);
        }
    }

    /// Paints one straight stroke from `a` to `b` (cell coordinates) with the current brush,
    /// as a drag would. Undoable as one action.
    pub fn paint_stroke(&mut self, a: [f64; 2], b: [f64; 2]) {
        self.stroke_to(a);
        self.stroke_to(b);
        self.end_stroke();
    }

    /// Continues the stroke being painted to cell position `p` (starts one with the current
    /// brush if none is), with dabs every radius / 4 cells.
    pub fn stroke_to(&mut self, p: [f64; 2]) {
        if self.worker.is_busy() || self.is_preview {
            return;
        }
        let Some(t) = self.terrain.as_mut() else { return };
        let settings = self.painting.as_ref().map_or(self.view.brush, |s| s.settings);
        let brush = |at: [f64; 2]| Brush {
            x: at[0],
            y: at[1],
            radius: settings.radius,
            strength: settings.strength,
            mode: settings.mode,
        };
        let spacing = (settings.radius / 4.0).max(0.5);
        let mut centres = Vec::new();
        match &self.painting {
            None => centres.push(p),
            Some(s) => {
                let d = ((p[0] - s.last[0]).powi(2) + (p[1] - s.last[1]).powi(2)).sqrt();
                let n = (d / spacing).floor() as usize;
                for k in 1..=n {
                    let f = k as f64 * spacing / d;
                    centres.push([s.last[0] + (p[0] - s.last[0]) * f, s.last[1] + (p[1] - s.last[1]) * f]);
                }
            }
        }
        let painting = self.painting.get_or_insert_with(|| Painting {
            stroke: Stroke::new(),
            dabs: Vec::new(),
            last: p,
            settings,
        });
        let (w, h) = (t.height.width(), t.height.height());
        let mut changed: Option<[usize; 4]> = None;
        let mut failed = None;
        for c in centres {
            let b = brush(c);
            if let Err(e) = painting.stroke.dab(&mut t.height, &b) {
                failed = Some(format!("Brush: {e}"));
                break;
            }
            painting.dabs.push(c);
            painting.last = c;
            let r = b.bounds(w, h);
            if r.w > 0 && r.h > 0 {
                changed = Some(union(changed, [r.x, r.y, r.w, r.h]));
            }
        }
        if let Some(r) = changed {
            self.mark_changed(r);
        }
        if let Some(e) = failed {
            self.report_error(e);
        }
    }

    /// Ends the stroke being painted: it becomes one edit and one undo step.
    pub fn end_stroke(&mut self) {
        let Some(p) = self.painting.take() else { return };
        let Some(t) = &self.terrain else { return };
        if p.dabs.is_empty() {
            return;
        }
        let edit = p.stroke.finish(&t.height);
        let map = Some([t.height.width(), t.height.height()]);
        self.commit();
        let op = EditOp::Stroke {
            mode: p.settings.mode,
            radius: p.settings.radius,
            strength: p.settings.strength,
            dabs: p.dabs,
            map,
        };
        self.doc.edits.push(op.clone());
        self.committed = self.doc.clone();
        self.history.push(Action::Stroke { edit, op, map_gen: self.map_gen });
        self.redo.clear();
        self.version += 1;
        self.status = "Stroke painted".into();
        if self.rebuilds_on_edit() {
            self.generate(false);
        }
    }

    /// Runs the erosion panel's step on the current terrain (in the background).
    pub fn run_erosion(&mut self) {
        let Some(terrain) = self.terrain.clone() else { return };
        if self.worker.is_busy() || self.is_preview {
            return;
        }
        self.commit();
        let mut entry = self.erosion.entry.clone();
        if entry.params.contains_key("iterations") {
            entry.params.insert("iterations".into(), ParamValue::Number(self.erosion.iterations as f64));
        }
        let seed = derive_seed(self.doc.recipe.seed, 1_000_000 + self.doc.edits.len() as u64);
        self.erosion_pending = Some(EditOp::Erode { step: entry.clone(), seed });
        self.worker.start(Job::Erode { terrain, step: entry, seed });
    }

    // ----- files -----

    /// The window title: the project's file name (or "untitled"), `*` when there are unsaved
    /// changes, then the program.
    pub fn title(&self) -> String {
        let name = self
            .project_path
            .as_deref()
            .and_then(|p| p.file_name())
            .map_or("untitled".to_string(), |n| n.to_string_lossy().into_owned());
        let dirty = if self.has_unsaved_changes() { " *" } else { "" };
        format!("{name}{dirty} — terrasynth")
    }

    /// Starts a new project: the first preset (keeping the seed when it is locked), no edits, no
    /// file yet (Save will ask where). Not undoable.
    pub fn new_project(&mut self) {
        let mut recipe = presets()[0].recipe().unwrap_or_else(|_| Recipe::new("empty"));
        if self.view.seed_locked {
            recipe.seed = self.doc.recipe.seed;
        }
        self.project_path = None;
        self.new_document(Document::new(recipe));
        self.status = "New project".into();
    }

    /// Saves the open project to its file. Returns false (and saves nothing) when the project
    /// has no file yet: the caller asks where ([`Editor::save_project_to`]).
    pub fn save_project(&mut self) -> bool {
        match self.project_path.clone() {
            Some(p) => {
                self.save_project_to(p);
                true
            }
            None => false,
        }
    }

    /// Saves the project to `path`, which becomes the open project's file.
    pub fn save_project_to(&mut self, path: impl AsRef<Path>) {
        let path = path.as_ref();
        self.commit();
        match save_project(path, &self.doc, &self.view) {
            Ok(()) => {
                self.saved = self.doc.clone();
                self.project_path = Some(path.to_path_buf());
                self.remember(path);
                self.status = format!("Saved {}", path.display());
                // The saved project now holds the work: drop the recovery file (unless the
                // project was saved over it).
                if let Some(r) = &self.options.recovery_path
                    && r.as_path() != path
                    && r.exists()
                {
                    let _ = std::fs::remove_file(r);
                    self.recovery_available = false;
                }
            }
            Err(e) => self.report_error(format!("Cannot save: {e}")),
        }
    }

    /// Opens the project at `path`, which becomes the open project's file; on error the
    /// current state (and the open project's file) is kept and the error shown.
    pub fn open_project(&mut self, path: impl AsRef<Path>) {
        let path = path.as_ref();
        match load_project::<ViewSettings>(path) {
            Ok((doc, view)) => {
                self.load_document(doc, view);
                self.project_path = Some(path.to_path_buf());
                self.remember(path);
                self.status = format!("Opened {}", path.display());
            }
            Err(e) => self.report_error(format!("Cannot open project: {e} (nothing was changed)")),
        }
    }

    /// Replaces the document and view with a loaded one (undoable) and rebuilds the map.
    fn load_document(&mut self, doc: Document, view: Option<ViewSettings>) {
        self.commit();
        self.doc = doc;
        if let Some(v) = view {
            self.view = v;
        }
        self.commit();
        self.saved = self.doc.clone();
        self.generate(false);
    }

    /// Puts `path` first in the recent-files list (and its file, when there is one).
    fn remember(&mut self, path: &Path) {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        if self.options.recovery_path.as_deref() == Some(path.as_path()) {
            return;
        }
        self.recent.retain(|p| p != &path);
        self.recent.insert(0, path);
        self.recent.truncate(MAX_RECENT);
        if let Some(file) = &self.options.recent_path {
            if let Some(dir) = file.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            if let Ok(text) = serde_json::to_string_pretty(&self.recent) {
                let _ = std::fs::write(file, text);
            }
        }
    }

    /// Opens the recovery file; its work counts as unsaved.
    pub fn restore_recovery(&mut self) {
        let Some(p) = self.options.recovery_path.clone() else { return };
        match load_project::<ViewSettings>(&p) {
            Ok((doc, view)) => {
                self.load_document(doc, view);
                // Not the project's file: Save asks where.
                self.project_path = None;
                self.saved = Document::new(Recipe::new("recovered"));
                self.recovery_available = false;
                self.status = "Recovered the unsaved work of the last session".into();
            }
            Err(e) => self.report_error(format!("Cannot restore the recovery file: {e}")),
        }
    }

    /// Exports the current terrain into `dir` (in the background).
    pub fn export_to(&mut self, dir: &str) {
        let Some(t) = &self.terrain else { return };
        if self.worker.is_busy() || self.is_preview {
            self.report_error("Wait for the generation to finish before exporting.");
            return;
        }
        let engine = self.export_engine;
        self.worker.start(Job::Export {
            doc: self.doc.clone(),
            terrain: t.clone(),
            dir: PathBuf::from(dir),
            engine,
            record: Box::new(self.last_run.clone()),
        });
    }

    // ----- the frame loop -----

    /// Water layers are needed in the water and flow views, when there are river sources, and
    /// once more after the last source is removed (to clear its river).
    fn needs_water(&self) -> bool {
        self.view.mode.shows_water()
            || self.doc.edits.iter().any(|e| matches!(e, EditOp::RiverSource { .. }))
            || self.water.as_ref().is_some_and(|w| !w.rivers.is_empty())
    }

    fn set_terrain(&mut self, mut terrain: Terrain, preview: bool) {
        // The sources' rivers are traced again on every edit (with the water layers): the map
        // keeps only the recipe's own water.
        let _ = crate::document::place_rivers(&mut terrain, &[]);
        if preview {
            // Keep the full map a preview replaces, to bring it back if the job is cancelled
            // or fails.
            if !self.is_preview
                && let (Some(t), Some(c)) = (self.terrain.take(), self.colours.take())
            {
                self.replaced = Some((t, c));
            }
        } else {
            self.replaced = None;
        }
        let (lo, hi) = terrain.height.min_max().unwrap_or((0.0, 1.0));
        let palette = self
            .doc
            .recipe
            .palette
            .resolve()
            .unwrap_or_else(|_| Palette::named("classic").expect("built-in palette"));
        let fraction = palette.fraction_map(lo, hi, Some(terrain.sea_level));
        let mask = terrasynth::export::recipe_water_mask(&terrain);
        let recipe_water = mask.iter().any(|&w| w).then_some(mask);
        self.colours = Some(MapColours { palette, fraction, lo, hi, recipe_water });
        self.terrain = Some(terrain);
        self.is_preview = preview;
        self.changes = MapChanges { full: true, rect: None };
        self.version += 1;
        if !preview {
            self.map_gen += 1;
        }
    }

    /// Brings back the full map a preview replaced (after a cancelled or failed generation);
    /// returns whether there was one.
    fn restore_replaced(&mut self) -> bool {
        let Some((terrain, colours)) = self.replaced.take() else { return false };
        self.terrain = Some(terrain);
        self.colours = Some(colours);
        self.is_preview = false;
        self.changes = MapChanges { full: true, rect: None };
        self.version += 1;
        true
    }

    fn mark_changed(&mut self, r: [usize; 4]) {
        self.changes.rect = Some(union(self.changes.rect, r));
    }

    /// Takes the results of finished jobs and starts the water layers when they are due. Call
    /// once at the start of every frame.
    pub fn poll(&mut self) {
        for r in self.worker.poll() {
            let active = self.worker.active.as_ref().map(|a| a.id);
            match r {
                JobResult::Preview { id, terrain } if Some(id) == active => {
                    if let Some(a) = self.worker.active.as_mut() {
                        a.preview_done = true;
                    }
                    self.set_terrain(terrain, true);
                }
                JobResult::Full { id, terrain, seconds, record } if Some(id) == active => {
                    self.worker.active = None;
                    self.set_terrain(terrain, false);
                    self.last_run = record;
                    self.last_generation_s = Some(seconds);
                    self.status = format!("Generated in {:.0} ms", seconds * 1000.0);
                    if let Some(note) = self.edits_note.take() {
                        self.status = format!("{}. {note}", self.status);
                    }
                    // A recipe that could not run now runs: its error is out of date (it stays
                    // in the log). Any other error stays until dismissed.
                    if std::mem::take(&mut self.recipe_error) {
                        self.error = None;
                    }
                }
                JobResult::Eroded { id, terrain, eps_before, eps_after } if Some(id) == active => {
                    self.worker.active = None;
                    let op = self.erosion_pending.take();
                    if let (Some(old), Some(op)) = (self.terrain.as_mut(), op) {
                        let before = std::mem::replace(&mut old.height, terrain.height);
                        let after = old.height.clone();
                        self.erosion.eps = Some((eps_before, eps_after));
                        self.status = format!("Erosion done: ε {eps_before:.3} -> {eps_after:.3}");
                        self.doc.edits.push(op.clone());
                        self.committed = self.doc.clone();
                        self.changes.full = true;
                        self.version += 1;
                        self.history.push(Action::Erode { before, after, op, map_gen: self.map_gen });
                        self.redo.clear();
                        if self.rebuilds_on_edit() {
                            self.generate(false);
                        }
                    }
                }
                JobResult::Exported { id, files } if Some(id) == active => {
                    self.worker.active = None;
                    self.status = format!("Exported {} files to {}", files.len(), self.export_dir);
                    self.exported = files;
                }
                JobResult::Failed { id, message, cancelled } if Some(id) == active || id == 0 => {
                    if id != 0 {
                        self.worker.active = None;
                    }
                    let restored = id != 0 && self.restore_replaced();
                    let shown = if restored {
                        "showing the previous map; press Generate for the new one"
                    } else if self.is_preview {
                        "showing the preview; press Generate for the full map"
                    } else {
                        "the map is unchanged"
                    };
                    if cancelled {
                        self.status = format!("Cancelled: {shown}");
                    } else {
                        self.report_error(format!("{message} ({shown})"));
                    }
                }
                JobResult::Water { map_gen, water } => {
                    self.water_pending = None;
                    if map_gen == self.version {
                        // The colour and shaded views paint the sources' rivers too.
                        let placed = |w: &Water| !w.rivers.is_empty();
                        let redraw = self.view.mode.shows_water()
                            || placed(&water)
                            || self.water.as_ref().is_some_and(placed);
                        self.water = Some(water);
                        self.water_version = Some(map_gen);
                        if redraw {
                            self.changes.full = true;
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(a) = self.worker.active.as_mut() {
            a.observe_step();
        }
        // Water layers for the current heights, once no stroke or job is running.
        if self.needs_water()
            && self.painting.is_none()
            && !self.worker.is_busy()
            && self.water_version != Some(self.version)
            && self.water_pending != Some(self.version)
            && self.worker.water_running == 0
            && let Some(t) = &self.terrain
        {
            self.water_pending = Some(self.version);
            self.worker.start_water(self.version, t.clone(), self.doc.sources_with_modes());
        }
    }

    /// Ends a frame: a change of the recipe's terrain part starts a regeneration (preview
    /// first); when `idle` (no pointer button down, no field focused) and no stroke is being
    /// painted, the document change becomes one undo step; the recovery file is written when
    /// due. Returns whether jobs are still running (the UI should repaint soon).
    pub fn end_frame(&mut self, idle: bool) -> bool {
        if self.requested.as_ref().map(generation_key) != Some(generation_key(&self.doc.recipe)) {
            let note = self.requested.as_ref().and_then(|old| edits_note(old, &self.doc));
            self.generate(true);
            if let Some(note) = note {
                self.status = note.clone();
                self.edits_note = Some(note);
            }
        }
        if idle && self.painting.is_none() {
            self.commit();
        }
        self.write_recovery();
        self.worker.is_busy() || self.worker.water_running > 0
    }

    /// Runs idle frames (each one commits and writes the recovery file when due) until no job
    /// is running and the water layer is up to date, for at most `timeout`. Returns whether the
    /// editor became idle. For headless use: tests, scripts and the recovery test's child.
    pub fn run_until_idle(&mut self, timeout: std::time::Duration) -> bool {
        let t0 = Instant::now();
        loop {
            self.poll();
            let busy = self.end_frame(true);
            if !busy && !self.water_pending() {
                return true;
            }
            if t0.elapsed() >= timeout {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    fn write_recovery(&mut self) {
        if !self.has_unsaved_changes() || self.last_recovery.elapsed() < self.options.recovery_interval {
            return;
        }
        self.last_recovery = Instant::now();
        if let Some(p) = self.options.recovery_path.clone() {
            if let Some(dir) = p.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            if let Err(e) = save_project(&p, &self.doc, &self.view) {
                self.status = format!("Recovery file not written: {e}");
            }
        }
    }
}

/// The recent-files list stored at `path` (empty when missing or unreadable).
fn read_recent(path: &Path) -> Vec<PathBuf> {
    std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
}

/// What happens to the edits when the recipe changes from `old` to `doc.recipe`: a new seed or
/// a new size keeps every stroke and river source where it was on the map (see
/// [`crate::document`]); the status bar says so.
fn edits_note(old: &Recipe, doc: &Document) -> Option<String> {
    let n = doc.edits.len();
    if n == 0 {
        return None;
    }
    let r = &doc.recipe;
    if (old.width, old.height) != (r.width, r.height) {
        Some(format!(
            "Map resized to {}×{}: your {n} edits keep their place on the map (scaled with it)",
            r.width, r.height
        ))
    } else if old.seed != r.seed {
        Some(format!(
            "New seed: your {n} edits stay where they were on the map; the terrain under them changed"
        ))
    } else {
        None
    }
}

/// The part of a recipe that changes the terrain (everything but the export settings).
fn generation_key(r: &Recipe) -> Recipe {
    Recipe { exports: Default::default(), ..r.clone() }
}

/// Smallest rectangle `[x, y, w, h]` holding `a` (if any) and `b`.
fn union(a: Option<[usize; 4]>, b: [usize; 4]) -> [usize; 4] {
    match a {
        None => b,
        Some(a) => {
            let (x0, y0) = (a[0].min(b[0]), a[1].min(b[1]));
            let (x1, y1) = ((a[0] + a[2]).max(b[0] + b[2]), (a[1] + a[3]).max(b[1] + b[3]));
            [x0, y0, x1 - x0, y1 - y0]
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use terrasynth::recipe::PipelineProgress;
    use terrasynth::shape::brush::BrushMode;

    use super::*;

    /// An editor on the default preset at 65² with seed 7, generated (full map).
    fn editor() -> Editor {
        let options = AppOptions { recovery_path: None, generate_at_start: false, ..AppOptions::default() };
        let mut e = Editor::new(options, None);
        let mut recipe = e.doc.recipe.clone();
        (recipe.width, recipe.height, recipe.seed) = (65, 65, 7);
        e.new_document(Document::new(recipe));
        settle(&mut e);
        e
    }

    /// Runs frames (idle UI) until no job is running.
    fn settle(e: &mut Editor) {
        assert!(e.run_until_idle(Duration::from_secs(120)), "editor stayed busy: {}", e.status);
    }

    /// The heights of `doc` built from scratch (recipe + every edit replayed).
    fn rebuilt(doc: &Document) -> Vec<u8> {
        let t = doc.build(&PipelineProgress::new()).unwrap();
        t.height.as_slice().iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn a_parameter_edit_requests_a_regeneration_and_undoes_as_one_step() {
        let mut e = editor();
        let first = e.height_bytes();
        assert!(!e.is_busy() && e.undo_len() == 0 && !e.can_undo());
        // A seed change regenerates at the end of the frame, but is not an undo step while the
        // UI is busy (a field focused, a drag going on).
        e.doc.recipe.seed = 8;
        assert!(e.end_frame(false), "a regeneration should be running");
        assert!(e.is_busy() && e.undo_len() == 0 && e.can_undo());
        settle(&mut e);
        assert_eq!(e.undo_len(), 1);
        let second = e.height_bytes();
        assert_ne!(second, first);
        assert_eq!(second, rebuilt(&e.doc));
        // An export setting does not change the terrain: no regeneration.
        e.doc.recipe.exports.obj = !e.doc.recipe.exports.obj;
        assert!(!e.end_frame(true) && !e.is_busy());
        e.undo();
        settle(&mut e);
        // Undo, undo, redo, redo: back and forth through exactly the same maps.
        e.undo();
        settle(&mut e);
        assert_eq!((e.doc.recipe.seed, e.height_bytes()), (7, first.clone()));
        assert!(e.can_redo());
        e.redo();
        settle(&mut e);
        assert_eq!((e.doc.recipe.seed, e.height_bytes()), (8, second));
    }

    #[test]
    fn strokes_and_sources_undo_exactly_in_place() {
        let mut e = editor();
        let before = e.height_bytes();
        e.view.brush = BrushSettings { mode: BrushMode::Raise, radius: 6.0, strength: 0.05 };
        e.take_map_changes();
        e.paint_stroke([20.0, 20.0], [40.0, 30.0]);
        // The view is told which cells changed: the stroke's bounds, not the whole map.
        let changes = e.take_map_changes();
        let [x, y, w, h] = changes.rect.expect("a changed rectangle");
        // Dabs every 1.5 cells from (20, 20) towards (40, 30), radius 6.
        assert!(!changes.full && x <= 14 && y <= 14 && x + w >= 44 && y + h >= 35, "{changes:?}");
        assert!(x + w < 60 && y + h < 50, "{changes:?}");
        let painted = e.height_bytes();
        assert_ne!(painted, before);
        // The stroke is an edit that replays to the same bits.
        assert!(matches!(e.doc.edits[..], [EditOp::Stroke { .. }]));
        assert_eq!(painted, rebuilt(&e.doc));
        e.add_river_source(32, 32);
        assert_eq!(e.doc.sources(), vec![(32, 32)]);
        assert_eq!(e.undo_len(), 2);
        // Undo works in place (no regeneration) and restores the exact heights.
        e.undo();
        assert!(e.doc.sources().is_empty());
        e.undo();
        assert!(!e.is_busy() && e.doc.edits.is_empty());
        assert_eq!(e.height_bytes(), before);
        e.redo();
        assert_eq!(e.height_bytes(), painted);
        // Sources outside the map or on a preview are ignored.
        e.add_river_source(65, 3);
        assert_eq!(e.undo_len(), 1);
    }

    #[test]
    fn an_erosion_run_is_an_edit_that_replays() {
        let mut e = editor();
        let before = e.height_bytes();
        e.erosion.set_kind("thermal");
        e.erosion.iterations = 5;
        e.run_erosion();
        assert!(e.is_busy());
        settle(&mut e);
        let eroded = e.height_bytes();
        assert_ne!(eroded, before);
        let (eps_before, eps_after) = e.erosion_scores().expect("ε shown");
        assert!(eps_before.is_finite() && eps_after.is_finite());
        match &e.doc.edits[..] {
            [EditOp::Erode { step, .. }] => {
                assert_eq!(step.kind, "thermal");
                assert_eq!(step.params.get("iterations"), Some(&ParamValue::Number(5.0)));
            }
            other => panic!("expected one erosion edit, got {other:?}"),
        }
        // Opening the project again (a fresh build) replays the run to the same bits.
        assert_eq!(rebuilt(&e.doc), eroded);
        e.undo();
        assert_eq!(e.height_bytes(), before);
        assert_eq!(e.erosion_scores(), None, "ε of an undone run is not shown");
        e.redo();
        assert_eq!(e.height_bytes(), eroded);
        assert_eq!(e.erosion_scores(), Some((eps_before, eps_after)), "redo shows the run's ε again");
        e.load_preset("mountains");
        assert_eq!(e.erosion_scores(), None, "a new preset has no erosion run");
    }

    #[test]
    fn each_erosion_starts_with_its_own_default_iterations() {
        let mut e = editor();
        assert_eq!(e.erosion.entry.kind, DEFAULT_EROSION);
        e.erosion.set_kind("droplets");
        // One round of one droplet per cell (the panel used to run 20 of them and melt the
        // island): the count is left to the step's "auto".
        assert_eq!(e.erosion.iterations, 1);
        assert_eq!(e.erosion.entry.params.get("droplets"), None);
        assert_eq!(e.erosion.entry.params.get("iterations"), Some(&ParamValue::Number(1.0)));
        e.erosion.set_kind("thermal");
        assert_eq!(e.erosion.iterations, default_iterations("thermal"));
        assert!(default_iterations("thermal") >= 1 && default_iterations("no-such-step") == 1);
    }

    #[test]
    fn projects_round_trip_with_their_view_settings() {
        let dir = std::env::temp_dir().join(format!("terrasynth-editor-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.tsproj").display().to_string();
        let mut e = editor();
        e.paint_stroke([10.0, 10.0], [30.0, 12.0]);
        e.view.zoom = 3.5;
        e.view.mode = crate::settings::ViewMode::Slope;
        assert!(e.has_unsaved_changes());
        e.save_project_to(&path);
        assert!(!e.has_unsaved_changes() && e.error.is_none());
        let mut f = editor();
        f.open_project(&path);
        settle(&mut f);
        assert_eq!((&f.doc, &f.view), (&e.doc, &e.view));
        assert_eq!(f.height_bytes(), e.height_bytes());
        assert!(!f.has_unsaved_changes());
        // A missing file keeps everything and says why.
        f.open_project(dir.join("missing.tsproj"));
        assert!(f.error.as_deref().is_some_and(|m| m.starts_with("Cannot open project")));
        assert_eq!(f.doc, e.doc);
        let _ = std::fs::remove_dir_all(dir);
    }
}
