//! The editor application: persistent state ([`Document`] + [`ViewSettings`]) apart from
//! runtime resources (terrain, textures, worker, undo stacks).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use eframe::egui::{
    self, Color32, Key, Modifiers, Pos2, Rect, Sense, Stroke as LineStroke, TextureHandle, Vec2,
};
use serde::{Deserialize, Serialize};
use terrasynth::recipe::{Pipeline, Recipe, StepEntry, presets, registry};
use terrasynth::render::Palette;
use terrasynth::render::palette::FractionMap;
use terrasynth::shape::brush::{Brush, BrushMode, Edit, Stroke};
use terrasynth::step::{Category, ParamKind, ParamSpec, ParamValue, Terrain};
use terrasynth::{Heightmap, noise::rng::SplitMix64};

use crate::document::{Document, EditOp, erosion_entry, load_project, save_project};
use crate::maprender::{MapStyle, ViewMode, gradient, render_rect};
use crate::view3d::{Camera, Mesh3d};
use crate::view3d_gpu::View3dGpu;
use crate::water::Water;
use crate::worker::{Job, JobResult, Worker};

/// The editor's tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tool {
    /// Look around: drag pans, the cursor readout shows heights.
    Inspect,
    /// Paint the terrain with a brush.
    Terraform,
    /// Click to place river sources.
    River,
}

/// Brush settings of the terraform tool.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BrushSettings {
    /// Raise, lower, flatten or smooth.
    pub mode: BrushMode,
    /// Radius, cells, in [1, 256]; default 24.
    pub radius: f64,
    /// Strength per dab: height units for raise/lower/flatten in [0, 0.1] (default 0.01); a
    /// fraction in [0, 1] for smooth.
    pub strength: f32,
}

/// View settings saved with a project.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ViewSettings {
    /// What the 2D view shows.
    pub mode: ViewMode,
    /// 2D zoom (1 = the map fits the view).
    pub zoom: f32,
    /// 2D pan, points.
    pub pan: [f32; 2],
    /// Show the 3D view instead of the 2D one.
    pub show_3d: bool,
    /// 3D camera.
    pub camera: Camera,
    /// Current tool.
    pub tool: Tool,
    /// Brush of the terraform tool.
    pub brush: BrushSettings,
    /// Keep the seed when a preset is loaded, and disable "Random".
    pub seed_locked: bool,
    /// Show the help panel.
    pub show_help: bool,
}

impl Default for ViewSettings {
    fn default() -> Self {
        Self {
            mode: ViewMode::Shaded,
            zoom: 1.0,
            pan: [0.0, 0.0],
            show_3d: false,
            camera: Camera::default(),
            tool: Tool::Inspect,
            brush: BrushSettings { mode: BrushMode::Raise, radius: 24.0, strength: 0.01 },
            seed_locked: false,
            show_help: true,
        }
    }
}

/// Start-up options (not saved).
#[derive(Clone, Debug)]
pub struct AppOptions {
    /// Where the periodic recovery file goes (None: no recovery file).
    pub recovery_path: Option<PathBuf>,
    /// Time between recovery saves while there are unsaved changes.
    pub recovery_interval: Duration,
    /// Generate the first map at start.
    pub generate_at_start: bool,
}

impl Default for AppOptions {
    fn default() -> Self {
        let dir = std::env::var_os("XDG_STATE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
            .map(|d| d.join("terrasynth"));
        Self {
            recovery_path: dir.map(|d| d.join("recovery.tsproj")),
            recovery_interval: Duration::from_secs(30),
            generate_at_start: true,
        }
    }
}

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

/// Colour mapping fixed for one generated map.
struct StyleCache {
    palette: Palette,
    fraction: FractionMap,
    lo: f32,
    hi: f32,
}

/// Erosion panel state.
struct ErosionPanel {
    entry: StepEntry,
    iterations: u32,
    eps: Option<(f64, f64)>,
}

/// The editor.
pub struct TerrainApp {
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
    /// Last error message (shown in red until dismissed).
    pub error: Option<String>,
    /// Path field of the project dialog.
    pub project_path: String,
    /// Folder field of the export dialog.
    pub export_dir: String,
    /// Files written by the last export.
    pub exported: Vec<String>,
    /// Seconds the last full generation took.
    pub last_generation_s: Option<f64>,
    /// Where the map was drawn last frame (screen rect of the whole map) and points per cell.
    pub map_screen: Option<(Rect, f32)>,
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
    style: Option<StyleCache>,
    texture: Option<TextureHandle>,
    texture_mode: Option<ViewMode>,
    texture_full_dirty: bool,
    dirty_rect: Option<[usize; 4]>,
    hover_cell: Option<(usize, usize)>,
    show_project: bool,
    show_export: bool,
    close_prompt: bool,
    allow_close: bool,
    last_recovery: Instant,
    recovery_available: bool,
    add_step: &'static str,
    erosion: ErosionPanel,
    erosion_pending: Option<EditOp>,
    mesh: Option<((u64, u32), Mesh3d)>,
    gpu3d: Option<View3dGpu>,
    tex3d: Option<TextureHandle>,
    tex3d_key: Option<(u64, [u32; 2], [u32; 6])>,
    seed_rng: SplitMix64,
}

/// Default erosion step of the erosion panel.
const DEFAULT_EROSION: &str = "thermal";

impl TerrainApp {
    /// The app as eframe creates it (default preset, generation started at once).
    pub fn new(cc: &eframe::CreationContext<'_>) -> Self {
        Self::with_options(cc, AppOptions::default())
    }

    /// The app with explicit options (tests turn off the recovery file).
    pub fn with_options(cc: &eframe::CreationContext<'_>, options: AppOptions) -> Self {
        let recipe = presets()[0].recipe().unwrap_or_else(|_| Recipe::new("empty"));
        let doc = Document::new(recipe);
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        let recovery_available = options.recovery_path.as_ref().is_some_and(|p| p.exists());
        let mut app = Self {
            committed: doc.clone(),
            saved: doc.clone(),
            doc,
            view: ViewSettings::default(),
            terrain: None,
            is_preview: false,
            water: None,
            status: "Ready".into(),
            error: None,
            project_path: "terrain.tsproj".into(),
            export_dir: "terrain-export".into(),
            exported: Vec::new(),
            last_generation_s: None,
            map_screen: None,
            requested: None,
            map_gen: 0,
            version: 0,
            water_version: None,
            water_pending: None,
            history: Vec::new(),
            redo: Vec::new(),
            painting: None,
            worker: Worker::new(Some(cc.egui_ctx.clone())),
            style: None,
            texture: None,
            texture_mode: None,
            texture_full_dirty: true,
            dirty_rect: None,
            hover_cell: None,
            show_project: false,
            show_export: false,
            close_prompt: false,
            allow_close: false,
            last_recovery: Instant::now(),
            recovery_available,
            add_step: "noise",
            erosion: ErosionPanel { entry: erosion_entry(DEFAULT_EROSION, 20), iterations: 20, eps: None },
            erosion_pending: None,
            mesh: None,
            tex3d: None,
            gpu3d: cc.wgpu_render_state.as_ref().map(View3dGpu::new),
            tex3d_key: None,
            seed_rng: SplitMix64::new(seed),
            options,
        };
        if app.options.generate_at_start {
            app.generate(true);
        }
        app
    }

    // ----- state queries (used by tests) -----

    /// Whether a generation, erosion or export is running.
    pub fn is_busy(&self) -> bool {
        self.worker.is_busy()
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

    /// The heights as raw bytes (little-endian f32), for exact comparisons.
    pub fn height_bytes(&self) -> Vec<u8> {
        self.terrain
            .as_ref()
            .map(|t| t.height.as_slice().iter().flat_map(|v| v.to_le_bytes()).collect())
            .unwrap_or_default()
    }

    /// Screen position of the centre of cell `(x, y)` in the 2D view drawn last frame.
    pub fn cell_to_screen(&self, x: f32, y: f32) -> Option<Pos2> {
        let (r, scale) = self.map_screen?;
        Some(Pos2::new(r.min.x + (x + 0.5) * scale, r.min.y + (y + 0.5) * scale))
    }

    /// Whether the 3D view has drawn a frame.
    pub fn has_3d_image(&self) -> bool {
        self.tex3d.is_some() || self.gpu3d.as_ref().is_some_and(View3dGpu::has_image)
    }

    /// Erosion score before and after the last erosion run.
    pub fn erosion_scores(&self) -> Option<(f64, f64)> {
        self.erosion.eps
    }

    // ----- actions -----

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
            self.error = Some(e.to_string());
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
    fn commit_doc(&mut self) {
        if self.doc != self.committed {
            let before = Box::new(std::mem::replace(&mut self.committed, self.doc.clone()));
            self.history.push(Action::Doc { before, after: Box::new(self.doc.clone()) });
            self.redo.clear();
        }
    }

    /// Loads a built-in preset (keeps the seed when it is locked). Undoable.
    pub fn load_preset(&mut self, name: &str) {
        match terrasynth::recipe::preset(name).and_then(|p| p.recipe()) {
            Ok(mut r) => {
                if self.view.seed_locked {
                    r.seed = self.doc.recipe.seed;
                }
                self.commit_doc();
                self.doc = Document::new(r);
                self.commit_doc();
                self.generate(true);
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// Undoes the last action (Ctrl+Z).
    pub fn undo(&mut self) {
        self.commit_doc();
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
        self.commit_doc();
        let Some(action) = self.redo.pop() else {
            self.status = "Nothing to redo".into();
            return;
        };
        let action = self.apply_action(action, false);
        self.history.push(action);
        self.status = "Redone".into();
    }

    /// Whether the current terrain is the full map of generation `map_gen` and may be edited in
    /// place.
    fn exact_ok(&self, map_gen: u64) -> bool {
        !self.worker.is_busy() && !self.is_preview && self.terrain.is_some() && map_gen == self.map_gen
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
                            self.mark_dirty([edit.rect.x, edit.rect.y, edit.rect.w, edit.rect.h]);
                            self.version += 1;
                        }
                        Err(e) => {
                            self.error = Some(e.to_string());
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
                Action::Source { op }
            }
            Action::Erode { before, after, op, map_gen } => {
                self.toggle_edit(&op, undo);
                if self.exact_ok(map_gen) {
                    let t = self.terrain.as_mut().expect("checked by exact_ok");
                    t.height = if undo { before.clone() } else { after.clone() };
                    self.texture_full_dirty = true;
                    self.version += 1;
                } else {
                    self.generate(false);
                }
                Action::Erode { before, after, op, map_gen }
            }
        }
    }

    /// Places a river source at cell `(x, y)`. Undoable.
    pub fn add_river_source(&mut self, x: usize, y: usize) {
        let Some(t) = &self.terrain else { return };
        if x >= t.height.width() || y >= t.height.height() || self.is_preview {
            return;
        }
        self.commit_doc();
        let op = EditOp::RiverSource { x, y };
        self.doc.edits.push(op.clone());
        self.committed = self.doc.clone();
        self.history.push(Action::Source { op });
        self.redo.clear();
        self.version += 1;
        self.status = format!("River source at ({x}, {y})");
    }

    /// Paints one straight stroke from `a` to `b` (cell coordinates) with the current brush,
    /// as a drag would. Undoable as one action.
    pub fn paint_stroke(&mut self, a: [f64; 2], b: [f64; 2]) {
        self.stroke_to(a);
        self.stroke_to(b);
        self.end_stroke();
    }

    fn stroke_to(&mut self, p: [f64; 2]) {
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
        let mut dirty: Option<[usize; 4]> = None;
        for c in centres {
            let b = brush(c);
            if let Err(e) = painting.stroke.dab(&mut t.height, &b) {
                self.error = Some(e.to_string());
                break;
            }
            painting.dabs.push(c);
            painting.last = c;
            let r = b.bounds(w, h);
            if r.w > 0 && r.h > 0 {
                dirty = Some(union(dirty, [r.x, r.y, r.w, r.h]));
            }
        }
        if let Some(d) = dirty {
            self.mark_dirty(d);
        }
    }

    fn end_stroke(&mut self) {
        let Some(p) = self.painting.take() else { return };
        let Some(t) = &self.terrain else { return };
        if p.dabs.is_empty() {
            return;
        }
        let edit = p.stroke.finish(&t.height);
        self.commit_doc();
        let op = EditOp::Stroke {
            mode: p.settings.mode,
            radius: p.settings.radius,
            strength: p.settings.strength,
            dabs: p.dabs,
        };
        self.doc.edits.push(op.clone());
        self.committed = self.doc.clone();
        self.history.push(Action::Stroke { edit, op, map_gen: self.map_gen });
        self.redo.clear();
        self.version += 1;
        self.status = "Stroke painted".into();
    }

    /// Runs the erosion panel's step on the current terrain (in the background).
    pub fn run_erosion(&mut self) {
        let Some(terrain) = self.terrain.clone() else { return };
        if self.worker.is_busy() || self.is_preview {
            return;
        }
        self.commit_doc();
        let mut entry = self.erosion.entry.clone();
        if entry.params.contains_key("iterations") {
            entry.params.insert("iterations".into(), ParamValue::Number(self.erosion.iterations as f64));
        }
        let seed = terrasynth::noise::rng::derive_seed(
            self.doc.recipe.seed,
            1_000_000 + self.doc.edits.len() as u64,
        );
        self.erosion_pending = Some(EditOp::Erode { step: entry.clone(), seed });
        self.worker.start(Job::Erode { terrain, step: entry, seed });
    }

    /// Saves the project to `path`.
    pub fn save_project_to(&mut self, path: &str) {
        self.commit_doc();
        match save_project(std::path::Path::new(path), &self.doc, &self.view) {
            Ok(()) => {
                self.saved = self.doc.clone();
                self.project_path = path.to_string();
                self.status = format!("Saved {path}");
                // The saved project now holds the work: drop the recovery file (unless the
                // project was saved over it).
                if let Some(r) = &self.options.recovery_path
                    && r.as_path() != std::path::Path::new(path)
                    && r.exists()
                {
                    let _ = std::fs::remove_file(r);
                    self.recovery_available = false;
                }
            }
            Err(e) => self.error = Some(format!("Cannot save: {e}")),
        }
    }

    /// Opens the project at `path`; on error the current state is kept and the error shown.
    pub fn open_project(&mut self, path: &str) {
        match load_project::<ViewSettings>(std::path::Path::new(path)) {
            Ok((doc, view)) => {
                self.commit_doc();
                self.doc = doc;
                if let Some(v) = view {
                    self.view = v;
                }
                self.commit_doc();
                self.saved = self.doc.clone();
                self.project_path = path.to_string();
                self.status = format!("Opened {path}");
                self.error = None;
                self.generate(false);
            }
            Err(e) => self.error = Some(format!("Cannot open project: {e}")),
        }
    }

    /// Exports the current terrain into `dir` (in the background).
    pub fn export_to(&mut self, dir: &str) {
        let Some(t) = &self.terrain else { return };
        if self.worker.is_busy() || self.is_preview {
            self.error = Some("Wait for the generation to finish before exporting.".into());
            return;
        }
        self.worker.start(Job::Export { doc: self.doc.clone(), terrain: t.clone(), dir: PathBuf::from(dir) });
    }

    // ----- results and caches -----

    /// Water layers are needed in the water and flow views, when there are river sources, and
    /// once more after the last source is removed (to clear its river).
    fn needs_water(&self) -> bool {
        matches!(self.view.mode, ViewMode::Water | ViewMode::Flow)
            || self.doc.edits.iter().any(|e| matches!(e, EditOp::RiverSource { .. }))
            || self.water.as_ref().is_some_and(|w| !w.rivers.is_empty())
    }

    fn set_terrain(&mut self, terrain: Terrain, preview: bool) {
        let (lo, hi) = terrain.height.min_max().unwrap_or((0.0, 1.0));
        let palette = self
            .doc
            .recipe
            .palette
            .resolve()
            .unwrap_or_else(|_| Palette::named("classic").expect("built-in palette"));
        let fraction = palette.fraction_map(lo, hi, Some(terrain.sea_level));
        self.style = Some(StyleCache { palette, fraction, lo, hi });
        let size_changed = self.terrain.as_ref().is_none_or(|t| !t.height.same_size(&terrain.height));
        if size_changed {
            self.texture = None;
        }
        self.terrain = Some(terrain);
        self.is_preview = preview;
        self.texture_full_dirty = true;
        self.version += 1;
        if !preview {
            self.map_gen += 1;
        }
    }

    fn handle_results(&mut self) {
        for r in self.worker.poll() {
            let active = self.worker.active.as_ref().map(|a| a.id);
            match r {
                JobResult::Preview { id, terrain } if Some(id) == active => {
                    if let Some(a) = self.worker.active.as_mut() {
                        a.preview_done = true;
                    }
                    self.set_terrain(terrain, true);
                }
                JobResult::Full { id, terrain, seconds } if Some(id) == active => {
                    self.worker.active = None;
                    self.set_terrain(terrain, false);
                    self.last_generation_s = Some(seconds);
                    self.status = format!("Generated in {:.0} ms", seconds * 1000.0);
                    self.error = None;
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
                        self.texture_full_dirty = true;
                        self.version += 1;
                        self.history.push(Action::Erode { before, after, op, map_gen: self.map_gen });
                        self.redo.clear();
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
                    if cancelled {
                        self.status = "Cancelled".into();
                        if self.is_preview {
                            self.status =
                                "Cancelled: showing the preview; press Generate for the full map".into();
                        }
                    } else {
                        self.error = Some(message);
                    }
                }
                JobResult::Water { map_gen, water } => {
                    self.water_pending = None;
                    if map_gen == self.version {
                        self.water = Some(water);
                        self.water_version = Some(map_gen);
                        if matches!(self.view.mode, ViewMode::Water | ViewMode::Flow) {
                            self.texture_full_dirty = true;
                        }
                    }
                }
                _ => {}
            }
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
            self.worker.start_water(self.version, t.height.clone(), t.sea_level, self.doc.sources());
        }
    }

    fn mark_dirty(&mut self, r: [usize; 4]) {
        self.dirty_rect = Some(union(self.dirty_rect, r));
    }

    fn update_texture(&mut self, ctx: &egui::Context) {
        let (Some(t), Some(s)) = (&self.terrain, &self.style) else { return };
        let map = &t.height;
        let water = if self.water_version == Some(self.version) { self.water.as_ref() } else { None };
        let water = water.or(self.water.as_ref().filter(|w| w.lake_labels.same_size(map)));
        let style = MapStyle {
            palette: &s.palette,
            fraction: s.fraction,
            lo: s.lo,
            hi: s.hi,
            sea_level: t.sea_level,
            height_scale: self.doc.recipe.exports.height_scale as f32,
            water,
        };
        let (w, h) = (map.width(), map.height());
        if self.texture_mode != Some(self.view.mode) {
            self.texture_full_dirty = true;
        }
        if self.texture.is_none() || self.texture_full_dirty {
            let pixels = render_rect(map, &style, self.view.mode, (0, 0, w, h));
            let img = egui::ColorImage::new([w, h], pixels);
            match &mut self.texture {
                Some(tex) => tex.set(img, egui::TextureOptions::LINEAR),
                None => {
                    self.texture = Some(ctx.load_texture("terrain-map", img, egui::TextureOptions::LINEAR))
                }
            }
            self.texture_full_dirty = false;
            self.dirty_rect = None;
            self.texture_mode = Some(self.view.mode);
        } else if let Some([x, y, rw, rh]) = self.dirty_rect.take() {
            // Grow by one cell: shading uses the neighbours.
            let (x0, y0) = (x.saturating_sub(1), y.saturating_sub(1));
            let (x1, y1) = ((x + rw + 1).min(w), (y + rh + 1).min(h));
            let pixels = render_rect(map, &style, self.view.mode, (x0, y0, x1 - x0, y1 - y0));
            let img = egui::ColorImage::new([x1 - x0, y1 - y0], pixels);
            if let Some(tex) = &mut self.texture {
                tex.set_partial([x0, y0], img, egui::TextureOptions::LINEAR);
            }
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

    // ----- UI -----

    fn shortcuts(&mut self, ctx: &egui::Context) {
        let redo = ctx.input_mut(|i| {
            i.consume_key(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z)
                || i.consume_key(Modifiers::COMMAND, Key::Y)
        });
        if redo {
            self.redo();
        } else if ctx.input_mut(|i| i.consume_key(Modifiers::COMMAND, Key::Z)) {
            self.undo();
        }
        if ctx.input_mut(|i| i.consume_key(Modifiers::NONE, Key::F1)) {
            self.view.show_help = !self.view.show_help;
        }
    }

    fn top_bar_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            if ui
                .button("Project…")
                .on_hover_text("Open or save a project (recipe + edits + view).")
                .clicked()
            {
                self.show_project = true;
            }
            if ui
                .button("Export…")
                .on_hover_text("Write heightmaps, images and meshes (as `terrasynth generate`).")
                .clicked()
            {
                self.show_export = true;
            }
            ui.separator();
            let can_undo = !self.history.is_empty() || self.doc != self.committed;
            if ui
                .add_enabled(can_undo, egui::Button::new("Undo"))
                .on_hover_text("Undo the last edit or parameter change (Ctrl+Z).")
                .clicked()
            {
                self.undo();
            }
            if ui
                .add_enabled(!self.redo.is_empty(), egui::Button::new("Redo"))
                .on_hover_text("Redo (Ctrl+Shift+Z).")
                .clicked()
            {
                self.redo();
            }
            ui.separator();
            for (tool, label, tip) in [
                (
                    Tool::Inspect,
                    "Inspect",
                    "Look around: drag to pan, scroll to zoom, read heights under the cursor.",
                ),
                (
                    Tool::Terraform,
                    "Terraform",
                    "Paint the terrain: raise, lower, flatten or smooth while dragging.",
                ),
                (Tool::River, "Rivers", "Click to place a river source; the river runs downhill to the sea."),
            ] {
                ui.selectable_value(&mut self.view.tool, tool, label).on_hover_text(tip);
            }
            ui.separator();
            ui.selectable_value(&mut self.view.show_3d, false, "2D").on_hover_text("Top-down map.");
            ui.selectable_value(&mut self.view.show_3d, true, "3D")
                .on_hover_text("Lit 3D view: drag to orbit, right-drag to pan, scroll to zoom.");
            if !self.view.show_3d {
                egui::ComboBox::from_id_salt("view-mode")
                    .selected_text(self.view.mode.label())
                    .show_ui(ui, |ui| {
                        for m in ViewMode::ALL {
                            ui.selectable_value(&mut self.view.mode, m, m.label()).on_hover_text(m.tooltip());
                        }
                    })
                    .response
                    .on_hover_text("What the map shows.");
            }
            ui.separator();
            ui.toggle_value(&mut self.view.show_help, "Help").on_hover_text("Explain each mode (F1).");
        });
    }

    fn left_panel_ui(&mut self, ui: &mut egui::Ui) {
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            ui.heading("terrasynth");
            ui.horizontal(|ui| {
                ui.label("Preset").on_hover_text("Start from a built-in recipe.");
                let mut chosen = None;
                egui::ComboBox::from_id_salt("preset").selected_text(self.doc.recipe.name.clone()).show_ui(
                    ui,
                    |ui| {
                        for p in presets() {
                            if ui.selectable_label(self.doc.recipe.name == p.name, p.name).clicked() {
                                chosen = Some(p.name);
                            }
                        }
                    },
                );
                if let Some(name) = chosen {
                    self.load_preset(name);
                }
            });
            ui.horizontal(|ui| {
                ui.label("Seed").on_hover_text("The same seed always gives the same terrain.");
                ui.add_enabled(
                    !self.view.seed_locked,
                    egui::DragValue::new(&mut self.doc.recipe.seed)
                        .range(0..=terrasynth::recipe::model::MAX_SEED),
                )
                .on_hover_text("Seed of the recipe (0 ..= 2^63 − 1).");
                if ui
                    .add_enabled(!self.view.seed_locked, egui::Button::new("Random"))
                    .on_hover_text("Pick a new random seed.")
                    .clicked()
                {
                    self.doc.recipe.seed = self.seed_rng.next_u64() >> 1;
                }
                ui.checkbox(&mut self.view.seed_locked, "Lock")
                    .on_hover_text("Keep this seed when loading a preset; disables Random.");
            });
            ui.horizontal(|ui| {
                ui.label("Size").on_hover_text("Map width × height in cells.");
                ui.add(egui::DragValue::new(&mut self.doc.recipe.width).range(2..=4097))
                    .on_hover_text("Width, cells (2 ..= 4097). Some generators need 2^n + 1.");
                ui.label("×");
                ui.add(egui::DragValue::new(&mut self.doc.recipe.height).range(2..=4097))
                    .on_hover_text("Height, cells (2 ..= 4097).");
            });
            ui.horizontal(|ui| {
                ui.label("Cell size").on_hover_text("Ground size of one cell, metres.");
                ui.add(
                    egui::DragValue::new(&mut self.doc.recipe.cell_size)
                        .range(0.01..=10_000.0)
                        .suffix(" m")
                        .speed(0.1),
                );
                ui.label("Sea")
                    .on_hover_text("Sea level, height units (the `sea-level` step can change it).");
                ui.add(egui::DragValue::new(&mut self.doc.recipe.sea_level).speed(0.01).range(-10.0..=10.0));
            });
            ui.horizontal(|ui| {
                let busy = self.worker.is_busy();
                if ui
                    .add_enabled(!busy, egui::Button::new("Generate"))
                    .on_hover_text("Run the recipe and replay your edits.")
                    .clicked()
                {
                    self.commit_doc();
                    self.generate(true);
                }
                if ui
                    .add_enabled(busy, egui::Button::new("Cancel"))
                    .on_hover_text("Stop the running job; the last map stays.")
                    .clicked()
                {
                    self.cancel();
                }
            });
            if let Some(a) = &self.worker.active {
                let step = a.progress.current_step();
                let text = if step.is_empty() { a.label.to_string() } else { format!("{} {step}", a.label) };
                ui.add(egui::ProgressBar::new(a.progress.fraction() as f32).text(text).animate(true));
            }
            ui.separator();
            self.steps_ui(ui);
            ui.separator();
            self.tool_ui(ui);
            ui.separator();
            self.erosion_ui(ui);
        });
    }

    fn steps_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Steps").on_hover_text("The recipe: steps run top to bottom.");
        let reg = registry();
        let mut remove = None;
        let mut swap = None;
        let n = self.doc.recipe.steps.len();
        for (i, entry) in self.doc.recipe.steps.iter_mut().enumerate() {
            let info = reg.iter().find(|s| s.name == entry.kind);
            let id = ui.make_persistent_id(("step", i));
            egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, false)
                .show_header(ui, |ui| {
                    ui.checkbox(&mut entry.enabled, "").on_hover_text("Enable or disable this step.");
                    let label = ui.label(format!("{}. {}", i + 1, entry.kind));
                    if let Some(info) = info {
                        label.on_hover_text(format!("{}\n\nSource: {}", info.doc, info.source));
                    }
                    if ui
                        .add_enabled(i > 0, egui::Button::new("Up").small())
                        .on_hover_text("Move up")
                        .clicked()
                    {
                        swap = Some((i - 1, i));
                    }
                    if ui
                        .add_enabled(i + 1 < n, egui::Button::new("Down").small())
                        .on_hover_text("Move down")
                        .clicked()
                    {
                        swap = Some((i, i + 1));
                    }
                    if ui.small_button("Remove").on_hover_text("Remove this step").clicked() {
                        remove = Some(i);
                    }
                })
                .body(|ui| match info {
                    Some(info) => params_ui(ui, info.params, entry, i),
                    None => {
                        ui.colored_label(Color32::RED, format!("unknown step type `{}`", entry.kind));
                    }
                });
        }
        if let Some(i) = remove {
            self.doc.recipe.steps.remove(i);
        }
        if let Some((a, b)) = swap {
            self.doc.recipe.steps.swap(a, b);
        }
        ui.horizontal(|ui| {
            egui::ComboBox::from_id_salt("add-step").selected_text(self.add_step).show_ui(ui, |ui| {
                for cat in [Category::Generate, Category::Shape, Category::Erode, Category::Hydro] {
                    ui.label(format!("{cat:?}"));
                    for s in reg.iter().filter(|s| s.category == cat) {
                        ui.selectable_value(&mut self.add_step, s.name, s.name).on_hover_text(s.doc);
                    }
                }
            });
            if ui.button("Add step").on_hover_text("Append the chosen step to the recipe.").clicked() {
                self.doc.recipe.steps.push(StepEntry::new(self.add_step));
            }
        });
    }

    fn tool_ui(&mut self, ui: &mut egui::Ui) {
        match self.view.tool {
            Tool::Inspect => {
                ui.label("Inspect: drag to pan, scroll to zoom.");
            }
            Tool::Terraform => {
                ui.heading("Brush");
                ui.horizontal(|ui| {
                    for (m, label, tip) in [
                        (BrushMode::Raise, "Raise", "Add height under the brush."),
                        (BrushMode::Lower, "Lower", "Remove height under the brush."),
                        (BrushMode::Flatten, "Flatten", "Pull heights towards the mean under the brush."),
                        (BrushMode::Smooth, "Smooth", "Blend each cell towards its 3×3 neighbourhood mean."),
                    ] {
                        ui.selectable_value(&mut self.view.brush.mode, m, label).on_hover_text(tip);
                    }
                });
                ui.add(
                    egui::Slider::new(&mut self.view.brush.radius, 1.0..=256.0)
                        .text("radius")
                        .suffix(" cells"),
                )
                .on_hover_text("Brush radius in cells; the fall-off is smooth to the edge.");
                let max = if self.view.brush.mode == BrushMode::Smooth { 1.0 } else { 0.1 };
                self.view.brush.strength = self.view.brush.strength.min(max);
                ui.add(egui::Slider::new(&mut self.view.brush.strength, 0.0..=max).text("strength"))
                    .on_hover_text(
                        "Per dab: height units for raise/lower/flatten, a blend fraction for smooth.",
                    );
            }
            Tool::River => {
                ui.heading("River sources");
                ui.label(format!("{} sources. Click the map to add one.", self.doc.sources().len()));
            }
        }
    }

    fn erosion_ui(&mut self, ui: &mut egui::Ui) {
        egui::CollapsingHeader::new("Erosion").default_open(false).show(ui, |ui| {
            let reg = registry();
            let mut kind = self.erosion.entry.kind.clone();
            egui::ComboBox::from_id_salt("erosion-kind").selected_text(kind.clone()).show_ui(ui, |ui| {
                for s in reg.iter().filter(|s| s.category == Category::Erode) {
                    ui.selectable_value(&mut kind, s.name.to_string(), s.name).on_hover_text(s.doc);
                }
            });
            if kind != self.erosion.entry.kind {
                self.erosion.entry = erosion_entry(&kind, self.erosion.iterations);
            }
            ui.add(egui::DragValue::new(&mut self.erosion.iterations).range(1..=100_000).prefix("iterations "))
                .on_hover_text("Iterations (sweeps, droplet rounds or time steps) to run.");
            if let Some(info) = reg.iter().find(|s| s.name == self.erosion.entry.kind) {
                let specs: Vec<ParamSpec> = info.params.iter().copied().filter(|p| p.name != "iterations").collect();
                params_ui(ui, &specs, &mut self.erosion.entry, 10_000);
            }
            let can = !self.worker.is_busy() && !self.is_preview && self.terrain.is_some();
            if ui.add_enabled(can, egui::Button::new("Run erosion")).on_hover_text("Erode the current map (undoable).").clicked() {
                self.run_erosion();
            }
            if let Some((a, b)) = self.erosion.eps {
                ui.label(format!("erosion score ε: {a:.3} -> {b:.3}")).on_hover_text(
                    "Olsen's ε = σ(slope) / mean(slope): higher means flat valleys and steep slopes, as in eroded land.",
                );
            }
        });
    }

    fn map_view_ui(&mut self, ui: &mut egui::Ui) {
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        ui.painter().rect_filled(rect, 0.0, Color32::from_gray(30));
        self.update_texture(ui.ctx());
        let Some(t) = &self.terrain else {
            ui.painter().text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "Generating…",
                egui::FontId::proportional(20.0),
                Color32::WHITE,
            );
            return;
        };
        let (w, h) = (t.height.width() as f32, t.height.height() as f32);
        let fit = (rect.width() / w).min(rect.height() / h);
        // Zoom with the scroll wheel around the cursor.
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                let old = self.view.zoom;
                self.view.zoom = (old * (scroll * 0.002).exp()).clamp(0.2, 64.0);
                if let Some(p) = response.hover_pos() {
                    let c = rect.center() + Vec2::from(self.view.pan);
                    let k = self.view.zoom / old;
                    let nc = p + (c - p) * k;
                    self.view.pan = (nc - rect.center()).into();
                }
            }
        }
        let scale = fit * self.view.zoom;
        let centre = rect.center() + Vec2::from(self.view.pan);
        let img_rect = Rect::from_center_size(centre, Vec2::new(w * scale, h * scale));
        let to_cell =
            |p: Pos2| [((p.x - img_rect.min.x) / scale) as f64, ((p.y - img_rect.min.y) / scale) as f64];
        let to_screen = |c: (f32, f32)| {
            Pos2::new(img_rect.min.x + (c.0 + 0.5) * scale, img_rect.min.y + (c.1 + 0.5) * scale)
        };
        self.map_screen = Some((img_rect, scale));
        let painter = ui.painter_at(rect);
        if let Some(tex) = &self.texture {
            painter.image(
                tex.id(),
                img_rect,
                Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
                Color32::WHITE,
            );
        }
        // Rivers from sources.
        if let Some(water) = &self.water
            && water.lake_labels.same_size(&t.height)
        {
            for river in &water.rivers {
                let pts: Vec<Pos2> = river.iter().map(|&(x, y)| to_screen((x as f32, y as f32))).collect();
                painter.add(egui::Shape::line(
                    pts,
                    LineStroke::new((scale * 0.8).clamp(1.5, 4.0), Color32::from_rgb(30, 110, 230)),
                ));
            }
        }
        for (x, y) in self.doc.sources() {
            painter.circle(
                to_screen((x as f32, y as f32)),
                4.0,
                Color32::from_rgb(120, 200, 255),
                LineStroke::new(1.0, Color32::BLACK),
            );
        }
        // Hover readout.
        self.hover_cell = None;
        if let Some(p) = response.hover_pos() {
            let c = to_cell(p);
            if c[0] >= 0.0 && c[1] >= 0.0 && c[0] < w as f64 && c[1] < h as f64 {
                self.hover_cell = Some((c[0] as usize, c[1] as usize));
            }
            if self.view.tool == Tool::Terraform {
                painter.circle_stroke(
                    p,
                    self.view.brush.radius as f32 * scale,
                    LineStroke::new(1.5, Color32::WHITE),
                );
                painter.circle_stroke(
                    p,
                    self.view.brush.radius as f32 * scale + 1.5,
                    LineStroke::new(1.0, Color32::BLACK),
                );
            }
        }
        if self.is_preview || self.worker.is_busy() {
            let label = self.worker.active.as_ref().map_or("Generating…", |a| a.label);
            painter.text(
                rect.left_top() + Vec2::new(10.0, 10.0),
                egui::Align2::LEFT_TOP,
                label,
                egui::FontId::proportional(18.0),
                Color32::WHITE,
            );
        }
        // Tools.
        let pointer = response.interact_pointer_pos();
        match self.view.tool {
            Tool::Inspect => {
                if response.dragged() {
                    let d = response.drag_delta();
                    self.view.pan = [self.view.pan[0] + d.x, self.view.pan[1] + d.y];
                }
            }
            Tool::Terraform => {
                if (response.dragged_by(egui::PointerButton::Primary)
                    || response.drag_started_by(egui::PointerButton::Primary))
                    && let Some(p) = pointer
                {
                    self.stroke_to(to_cell(p));
                } else if response.clicked()
                    && let Some(p) = pointer
                {
                    self.stroke_to(to_cell(p));
                    self.end_stroke();
                }
                if response.drag_stopped() {
                    self.end_stroke();
                }
                if response.dragged_by(egui::PointerButton::Secondary) {
                    let d = response.drag_delta();
                    self.view.pan = [self.view.pan[0] + d.x, self.view.pan[1] + d.y];
                }
            }
            Tool::River => {
                if response.clicked()
                    && let Some(p) = pointer
                {
                    let c = to_cell(p);
                    if c[0] >= 0.0 && c[1] >= 0.0 {
                        self.add_river_source(c[0] as usize, c[1] as usize);
                    }
                }
                if response.dragged() {
                    let d = response.drag_delta();
                    self.view.pan = [self.view.pan[0] + d.x, self.view.pan[1] + d.y];
                }
            }
        }
    }

    fn view_3d_ui(&mut self, ui: &mut egui::Ui) {
        let cam = &mut self.view.camera;
        ui.horizontal(|ui| {
            ui.add(
                egui::Slider::new(&mut cam.exaggeration, 0.1..=20.0).logarithmic(true).text("exaggeration"),
            )
            .on_hover_text("Vertical exaggeration of the 3D view (1 = true to scale).");
            let [lo, hi] = crate::view3d::DETAIL_RANGE;
            ui.add(egui::Slider::new(&mut cam.detail, lo..=hi).logarithmic(true).text("detail"))
                .on_hover_text(
                    "Mesh samples along the longer side (above 256, halved while the view moves). \
                     Higher is finer and slower.",
                );
            if ui.button("Reset view").on_hover_text("Back to the default camera.").clicked() {
                *cam = Camera { exaggeration: cam.exaggeration, detail: cam.detail, ..Camera::default() };
            }
        });
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        if response.dragged_by(egui::PointerButton::Primary) {
            let d = response.drag_delta();
            cam.orbit(d.x, d.y);
        }
        if response.dragged_by(egui::PointerButton::Secondary)
            || response.dragged_by(egui::PointerButton::Middle)
        {
            let d = response.drag_delta();
            cam.pan(d.x, d.y, rect.width());
        }
        let mut scrolling = false;
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                cam.zoom(scroll);
                scrolling = true;
            }
        }
        let (Some(t), Some(s)) = (&self.terrain, &self.style) else { return };
        let hs = self.doc.recipe.exports.height_scale as f32;
        cam.keep_above(&t.height, hs, t.sea_level);
        // Level of detail: the full detail at rest, half of it while the camera moves.
        let moving = response.dragged() || scrolling;
        let detail = cam.lod_detail(moving);
        let cam = *cam;
        let build = || Mesh3d::build(&t.height, &s.palette, &s.fraction, t.sea_level, hs, detail);
        let ppp = ui.ctx().pixels_per_point();
        let uv = Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0));
        let lod = if let Some(gpu) = &mut self.gpu3d {
            // wgpu: full resolution at rest, half while moving (a quarter of the pixels to shade
            // on a software rasteriser); the mesh stays on the GPU while only the camera changes.
            let k = if moving { 0.5 * ppp } else { ppp };
            let px = [(rect.width() * k).round() as u32, (rect.height() * k).round() as u32];
            let key = self.version.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(detail);
            let drawn = gpu.draw(key, build, &cam, px);
            drawn.map(|(tex, lod)| {
                ui.painter().image(tex, rect, uv, Color32::WHITE);
                lod
            })
        } else {
            // No wgpu device (glow or a headless test): the software rasteriser, ≤ 1280×960.
            let key = (self.version, detail);
            if self.mesh.as_ref().is_none_or(|(k, _)| *k != key) {
                self.mesh = Some((key, build()));
            }
            let px = [(rect.width() * ppp).min(1280.0) as u32, (rect.height() * ppp).min(960.0) as u32];
            let cam_key = [cam.yaw, cam.pitch, cam.distance, cam.target[0], cam.target[1], cam.exaggeration]
                .map(f32::to_bits);
            let tkey = (self.version ^ ((detail as u64) << 40), px, cam_key);
            if self.tex3d_key != Some(tkey)
                && let Some((_, mesh)) = &self.mesh
            {
                let img = mesh.render(&cam, px[0] as usize, px[1] as usize);
                match &mut self.tex3d {
                    Some(tex) => tex.set(img, egui::TextureOptions::LINEAR),
                    None => {
                        self.tex3d =
                            Some(ui.ctx().load_texture("terrain-3d", img, egui::TextureOptions::LINEAR))
                    }
                }
                self.tex3d_key = Some(tkey);
            }
            if let Some(tex) = &self.tex3d {
                ui.painter().image(tex.id(), rect, uv, Color32::WHITE);
            }
            self.mesh.as_ref().map(|(_, m)| (m.step, m.triangle_count()))
        };
        if let Some((step, triangles)) = lod {
            let renderer = if self.gpu3d.is_some() { "wgpu" } else { "software" };
            ui.painter().text(
                rect.left_bottom() + Vec2::new(8.0, -8.0),
                egui::Align2::LEFT_BOTTOM,
                format!("LOD: every {step} cells, {triangles} triangles ({renderer})"),
                egui::FontId::proportional(13.0),
                Color32::WHITE,
            );
        }
        ui.painter().text(
            rect.left_top() + Vec2::new(8.0, 8.0),
            egui::Align2::LEFT_TOP,
            "Drag: orbit · right-drag: pan · scroll: zoom",
            egui::FontId::proportional(13.0),
            Color32::WHITE,
        );
    }

    fn status_bar_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            if let (Some((x, y)), Some(t)) = (self.hover_cell, &self.terrain) {
                let hs = self.doc.recipe.exports.height_scale as f32;
                let hv = t.height[(x, y)];
                let (dx, dy) = gradient(&t.height, x, y, hs);
                let slope = (dx * dx + dy * dy).sqrt().atan().to_degrees();
                ui.monospace(format!(
                    "x {x:5}  y {y:5}  height {hv:.4} ({:.1} m)  slope {slope:.1}°",
                    hv * hs
                ));
            } else {
                ui.monospace("x —  y —  height —  slope —");
            }
            ui.separator();
            ui.label(self.status.as_str());
            if self.has_unsaved_changes() {
                ui.label("• unsaved changes");
            }
        });
    }

    fn help_ui(&mut self, ui: &mut egui::Ui) {
        egui::ScrollArea::vertical().show(ui, |ui| {
            ui.heading("Help");
            ui.label(HELP_TEXT);
        });
    }

    fn dialogs_ui(&mut self, ctx: &egui::Context) {
        if let Some(e) = self.error.clone() {
            egui::Window::new("Error").collapsible(false).resizable(false).show(ctx, |ui| {
                ui.colored_label(Color32::from_rgb(255, 120, 110), e.as_str());
                ui.label("Your current terrain and edits are unchanged.");
                if ui.button("OK").clicked() {
                    self.error = None;
                }
            });
        }
        if self.show_project {
            let mut open = true;
            egui::Window::new("Project").open(&mut open).show(ctx, |ui| {
                ui.horizontal(|ui| {
                    ui.label("File");
                    ui.text_edit_singleline(&mut self.project_path)
                        .on_hover_text("Path of the project file (.tsproj, JSON).");
                });
                ui.horizontal(|ui| {
                    if ui
                        .button("Save project")
                        .on_hover_text("Save the recipe, your edits and the view.")
                        .clicked()
                    {
                        let p = self.project_path.clone();
                        self.save_project_to(&p);
                    }
                    if ui
                        .button("Open project")
                        .on_hover_text("Load a project; the terrain is rebuilt exactly.")
                        .clicked()
                    {
                        let p = self.project_path.clone();
                        self.open_project(&p);
                    }
                });
                if self.recovery_available
                    && let Some(p) = self.options.recovery_path.clone()
                    && ui.button("Restore recovery file").on_hover_text(p.display().to_string()).clicked()
                {
                    self.open_project(&p.display().to_string());
                    self.saved = Document::new(Recipe::new("recovered"));
                    self.recovery_available = false;
                }
            });
            self.show_project &= open;
        }
        if self.show_export {
            let mut open = true;
            egui::Window::new("Export").open(&mut open).show(ctx, |ui| {
                ui.horizontal(|ui| {
                    ui.label("Folder");
                    ui.text_edit_singleline(&mut self.export_dir)
                        .on_hover_text("Output folder (created if missing).");
                });
                let ex = &mut self.doc.recipe.exports;
                ui.checkbox(&mut ex.png, "height.png (16-bit)");
                ui.checkbox(&mut ex.r16, "height.r16 (Unity/Unreal raw)");
                ui.checkbox(&mut ex.exr, "height.exr (metres)");
                ui.checkbox(&mut ex.tiff, "height.tif (GeoTIFF, metres)");
                ui.checkbox(&mut ex.images, "color / hillshade / shaded PNG");
                ui.checkbox(&mut ex.glb, "mesh.glb");
                ui.checkbox(&mut ex.obj, "mesh.obj");
                ui.add(
                    egui::DragValue::new(&mut ex.height_scale)
                        .range(0.001..=100_000.0)
                        .prefix("height scale ")
                        .suffix(" m"),
                )
                .on_hover_text("Metres per height unit.");
                ui.add(
                    egui::DragValue::new(&mut ex.lod)
                        .range(0..=terrasynth::recipe::model::MAX_LOD)
                        .prefix("mesh LOD "),
                )
                .on_hover_text("Mesh level of detail: every 2^lod cells.");
                if ui.button("Export now").clicked() {
                    let d = self.export_dir.clone();
                    self.export_to(&d);
                }
                if !self.exported.is_empty() {
                    ui.label(format!("Wrote: {}", self.exported.join(", ")));
                }
            });
            self.show_export &= open;
        }
        if self.close_prompt {
            egui::Modal::new(egui::Id::unique("close-prompt")).show(ctx, |ui| {
                ui.heading("Unsaved changes");
                ui.label("Save the project before closing?");
                ui.horizontal(|ui| {
                    if ui.button("Save and close").clicked() {
                        let p = self.project_path.clone();
                        self.save_project_to(&p);
                        if !self.has_unsaved_changes() {
                            self.allow_close = true;
                            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                        }
                        self.close_prompt = false;
                    }
                    if ui.button("Discard and close").clicked() {
                        self.allow_close = true;
                        self.close_prompt = false;
                        ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                    }
                    if ui.button("Keep editing").clicked() {
                        self.close_prompt = false;
                    }
                });
            });
        }
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

/// Sliders and fields for `specs`, editing `entry.params` (a key is written only once its
/// value differs from the default's display). `salt` keeps widget ids unique.
pub fn params_ui(ui: &mut egui::Ui, specs: &[ParamSpec], entry: &mut StepEntry, salt: usize) {
    for spec in specs {
        let current = entry.params.get(spec.name).cloned().unwrap_or_else(|| spec.default.to_value());
        let tip = param_tooltip(spec);
        let mut new_value = None;
        ui.horizontal(|ui| {
            ui.label(spec.name).on_hover_text(tip.as_str());
            match (spec.kind, &current) {
                (ParamKind::Float { min, max }, ParamValue::Number(v)) => {
                    let mut x = *v;
                    let r = if min.is_finite() && max.is_finite() && max > min {
                        let log = min > 0.0 && max / min > 1000.0;
                        ui.add(
                            egui::Slider::new(&mut x, min..=max)
                                .logarithmic(log)
                                .suffix(unit_suffix(spec.unit)),
                        )
                    } else {
                        ui.add(egui::DragValue::new(&mut x).speed(0.01).suffix(unit_suffix(spec.unit)))
                    };
                    r.on_hover_text(tip.as_str());
                    if x != *v {
                        new_value = Some(ParamValue::Number(x.clamp(min, max)));
                    }
                }
                (ParamKind::Int { min, max }, ParamValue::Number(v)) => {
                    let mut x = *v as i64;
                    let r = if max - min <= 4096 {
                        ui.add(egui::Slider::new(&mut x, min..=max).suffix(unit_suffix(spec.unit)))
                    } else {
                        ui.add(egui::DragValue::new(&mut x).range(min..=max).suffix(unit_suffix(spec.unit)))
                    };
                    r.on_hover_text(tip.as_str());
                    if x as f64 != *v {
                        new_value = Some(ParamValue::Number(x as f64));
                    }
                }
                (ParamKind::Bool, ParamValue::Bool(b)) => {
                    let mut x = *b;
                    ui.checkbox(&mut x, "").on_hover_text(tip.as_str());
                    if x != *b {
                        new_value = Some(ParamValue::Bool(x));
                    }
                }
                (ParamKind::Choice(options), ParamValue::Text(s)) => {
                    let mut x = s.clone();
                    egui::ComboBox::from_id_salt((salt, spec.name)).selected_text(x.clone()).show_ui(
                        ui,
                        |ui| {
                            for o in options {
                                ui.selectable_value(&mut x, o.to_string(), *o);
                            }
                        },
                    );
                    if &x != s {
                        new_value = Some(ParamValue::Text(x));
                    }
                }
                (ParamKind::List { .. }, ParamValue::List(l)) => {
                    let text_id = ui.make_persistent_id((salt, spec.name, "list"));
                    let mut text = ui.data_mut(|d| {
                        d.get_temp::<String>(text_id)
                            .unwrap_or_else(|| l.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "))
                    });
                    let r = ui.text_edit_singleline(&mut text).on_hover_text(tip.as_str());
                    if r.changed() {
                        let parsed: Result<Vec<f64>, _> = text
                            .split(',')
                            .map(|s| s.trim())
                            .filter(|s| !s.is_empty())
                            .map(str::parse::<f64>)
                            .collect();
                        if let Ok(v) = parsed
                            && &v != l
                        {
                            new_value = Some(ParamValue::List(v));
                        }
                    }
                    ui.data_mut(|d| d.insert_temp(text_id, text));
                }
                (_, v) => {
                    let mut x = match v {
                        ParamValue::Text(s) => s.clone(),
                        other => format!("{other:?}"),
                    };
                    if ui.text_edit_singleline(&mut x).on_hover_text(tip.as_str()).lost_focus() {
                        new_value = Some(ParamValue::Text(x));
                    }
                }
            }
        });
        if let Some(v) = new_value {
            entry.params.insert(spec.name.to_string(), v);
        }
    }
}

fn unit_suffix(unit: &str) -> String {
    if unit.is_empty() { String::new() } else { format!(" {unit}") }
}

/// Tooltip of a parameter: its doc, unit, range and default.
pub fn param_tooltip(spec: &ParamSpec) -> String {
    let range = match spec.kind {
        ParamKind::Float { min, max } => format!("range {min} ..= {max}"),
        ParamKind::Int { min, max } => format!("integer {min} ..= {max}"),
        ParamKind::Bool => "on/off".to_string(),
        ParamKind::Choice(o) => format!("one of: {}", o.join(", ")),
        ParamKind::List { min, max, min_len, max_len } => {
            format!("{min_len}..={max_len} numbers in {min} ..= {max}")
        }
        ParamKind::Text => "text".to_string(),
    };
    let unit = if spec.unit.is_empty() { String::new() } else { format!(", unit {}", spec.unit) };
    format!("{}\n\n{range}{unit}; default {:?}", spec.doc, spec.default.to_value())
}

/// The help panel's text: one paragraph per mode.
pub const HELP_TEXT: &str = "\
Generate: choose a preset, set the seed (Random picks one, Lock keeps it), edit the steps on \
the left and press Generate. Any change starts a quick low-resolution preview, then the full \
map; the progress bar shows the step running and Cancel stops it.

Steps: each step of the recipe runs top to bottom. Tick the box to enable or disable a step, \
use the arrows to reorder, Remove to delete it, and 'Add step' to append one. Hover a parameter for its \
meaning, unit and range.

Inspect: drag to pan, scroll to zoom. The bar at the bottom reads x, y, height and slope under \
the cursor. The view menu shows colour, shaded relief, grayscale, slope, water or flow.

Terraform: drag on the map to paint. Raise and Lower add or remove height, Flatten pulls \
towards the mean, Smooth blurs. Radius and strength are on the left; the white circle is the \
brush. Right-drag pans.

Rivers: click on land to place a source; the river follows the steepest descent to the sea, \
crossing lakes. Rivers and lakes are recomputed after every edit (Water view shows lakes).

Erosion: pick an erosion, set the iterations and press Run erosion; ε (the erosion score) is \
shown before and after.

3D: drag to orbit, right-drag to pan, scroll to zoom. The mesh is simplified (LOD) on large maps.

Undo / redo: Ctrl+Z / Ctrl+Shift+Z undo every stroke, source, erosion and parameter change. \
Projects (Project…) save the recipe with all edits; Export… writes the same files as \
`terrasynth generate`. Unsaved work is written to a recovery file every 30 s.";

impl eframe::App for TerrainApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        self.handle_results();
        self.shortcuts(&ctx);
        if ctx.input(|i| i.viewport().close_requested()) && self.has_unsaved_changes() && !self.allow_close {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.close_prompt = true;
        }
        egui::Panel::top("top-bar").show(ui, |ui| self.top_bar_ui(ui));
        egui::Panel::bottom("status-bar").show(ui, |ui| self.status_bar_ui(ui));
        egui::Panel::left("left-panel")
            .resizable(true)
            .default_size(340.0)
            .show(ui, |ui| self.left_panel_ui(ui));
        if self.view.show_help {
            egui::Panel::right("help-panel")
                .resizable(true)
                .default_size(280.0)
                .show(ui, |ui| self.help_ui(ui));
        }
        egui::CentralPanel::default()
            .show(ui, |ui| if self.view.show_3d { self.view_3d_ui(ui) } else { self.map_view_ui(ui) });
        self.dialogs_ui(&ctx);
        // A parameter change regenerates at once (preview first); it becomes one undo step when
        // the pointer is released and no field has focus.
        if self.requested.as_ref().map(generation_key) != Some(generation_key(&self.doc.recipe)) {
            self.generate(true);
        }
        let idle = !ctx.input(|i| i.pointer.any_down()) && ctx.memory(|m| m.focused().is_none());
        if idle && self.painting.is_none() {
            self.commit_doc();
        }
        self.write_recovery();
        if self.worker.is_busy() || self.worker.water_running > 0 {
            ctx.request_repaint_after(Duration::from_millis(50));
        }
    }
}
