//! The world view (`terrasynth-gui --world PRESET`): an endless world (a recipe with a
//! `[world]` table, see the library's `recipe::World`) panned, zoomed and edited without edges.
//!
//! - [`WorldChunks`] (no egui types, unit-tested): chunks of [`CHUNK`] × [`CHUNK`] cells are
//!   generated on worker threads, nearest the view centre first, with the world edits replayed
//!   (`recipe::world_edits::edited_window`, exact on every chunk); finished chunks come back as
//!   RGBA images; the cache holds at most [`CACHE_BYTES`] of them and drops the least recently
//!   drawn. An edit marks the chunks it reaches stale: they are made again (the old image stays
//!   on screen until the new one arrives).
//! - **Level of detail**: at level `L` a chunk samples every `2^L`-th world cell
//!   (`recipe::world_edits::world_at_stride`: exact for point steps, an approximation for
//!   stencil steps and for the edits); the view picks the level at which a sampled cell spans at
//!   least half a point, so zooming out to [`MIN_POINTS_PER_CELL`] shows a whole continent with
//!   the same number of chunks as a near view.
//! - [`chunk_rgba`]: a chunk's colours: the recipe's palette over the world's declared height
//!   range (never the chunk's own, so chunks match) times the hillshade, computed on the chunk
//!   grown by one cell so edge cells see their true neighbours: neighbouring chunks join without
//!   a seam; placed rivers drawn in water blue.
//! - [`WorldApp`]: the window: drag to pan, scroll to zoom, the brush tools (raise, lower,
//!   smooth, flatten), river sources, undo/redo, Save/Open of the world project (`.tsproj` with
//!   `world-edits`), the cursor's world cell and height in the status line.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use eframe::egui::{self, Color32, Pos2, Rect, Sense, Stroke, TextureHandle, Vec2};
use serde::{Deserialize, Serialize};
use terrasynth::recipe::project::{Document, load_project, save_project};
use terrasynth::recipe::world_edits::{
    CellRect, DEFAULT_RIVER_DEPTH_M, DEFAULT_RIVER_REACH, DEFAULT_RIVER_WIDTH, WorldEdit, WorldEdits,
    edited_window, world_at_stride,
};
use terrasynth::recipe::{PipelineProgress, World};
use terrasynth::render::hillshade::{HillshadeOptions, Hillshader, shade_pixel};
use terrasynth::render::palette::{FractionMap, Palette};
use terrasynth::shape::brush::BrushMode;

use crate::panels::{FileBrowser, Outcome, Purpose, error_note, typed_slider};

/// Cells per chunk side.
pub const CHUNK: usize = 256;

/// Bytes of chunk images and heights the cache keeps (512 KiB a chunk: 512 chunks).
pub const CACHE_BYTES: usize = 256 << 20;

/// Closest zoom, screen points per cell.
pub const MAX_POINTS_PER_CELL: f32 = 8.0;

/// Farthest zoom, screen points per cell (1/1024: a 1400-point view spans 1.4 million cells,
/// 43 000 km of 30 m cells), shown at level of detail up to [`MAX_LEVEL`].
pub const MIN_POINTS_PER_CELL: f32 = 1.0 / 1024.0;

/// Deepest level of detail: every 2⁹-th cell.
pub const MAX_LEVEL: u8 = 9;

/// Water colour of placed rivers on the chunks.
const RIVER_RGB: [u8; 3] = [38, 92, 196];

/// The world brush's radius range, world cells.
pub const BRUSH_RADIUS: std::ops::RangeInclusive<f64> = 1.0..=400.0;

/// One chunk's key: at level `level`, chunk `(x, y)` covers world cells
/// `x·CHUNK·2^level ..< (x+1)·CHUNK·2^level` (and rows alike), one pixel every `2^level` cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkKey {
    /// Level of detail (0 = every cell).
    pub level: u8,
    /// Chunk column at this level.
    pub x: i64,
    /// Chunk row at this level.
    pub y: i64,
}

impl ChunkKey {
    /// Chunk `(x, y)` of full resolution.
    pub fn new(x: i64, y: i64) -> Self {
        Self { level: 0, x, y }
    }

    /// Cells of the world between two pixels.
    pub fn stride(&self) -> i64 {
        1 << self.level
    }

    /// The world cells the chunk covers.
    pub fn cells(&self) -> CellRect {
        let side = CHUNK as i64 * self.stride();
        CellRect { x0: self.x * side, y0: self.y * side, x1: (self.x + 1) * side, y1: (self.y + 1) * side }
    }
}

/// A finished chunk: RGBA pixels, one per sampled cell, and its heights in metres.
#[derive(Clone, Debug)]
pub struct ChunkImage {
    /// Which chunk.
    pub key: ChunkKey,
    /// `CHUNK × CHUNK × 4` bytes.
    pub rgba: Vec<u8>,
    /// `CHUNK × CHUNK` heights (metres), row-major.
    pub heights: Vec<f32>,
}

impl ChunkImage {
    fn bytes(&self) -> usize {
        self.rgba.len() + self.heights.len() * 4
    }
}

/// The colours of full-resolution chunk `key` of `world` without edits (see the module docs).
pub fn chunk_rgba(world: &World, key: ChunkKey) -> terrasynth::Result<ChunkImage> {
    let c = CHUNK as i64;
    let (rgba, heights) = window_rgba(world, &WorldEdits::new(), key.x * c, key.y * c)?;
    Ok(ChunkImage { key, rgba, heights })
}

/// The colours and heights of the `CHUNK × CHUNK` window of `world` with `edits` at world cell
/// `(x0, y0)` (of `world`'s own grid).
pub fn window_rgba(
    world: &World,
    edits: &WorldEdits,
    x0: i64,
    y0: i64,
) -> terrasynth::Result<(Vec<u8>, Vec<f32>)> {
    let run = edited_window(world, edits, x0 - 1, y0 - 1, CHUNK + 2, CHUNK + 2, &PipelineProgress::new())?;
    let terrain = run.terrain;
    let recipe = world.recipe();
    let palette: Palette = recipe.palette.resolve()?;
    let [lo, hi] = world.height_range();
    let sea = Some(terrain.sea_level);
    let fractions = FractionMap::new(lo as f32, hi as f32, sea, palette.sea_at);
    let opts = HillshadeOptions::default();
    let shader = Hillshader::new(&terrain.height, &opts, sea)?;
    let flat = opts.altitude_deg.to_radians().sin();
    let mut rgba = Vec::with_capacity(CHUNK * CHUNK * 4);
    let mut heights = Vec::with_capacity(CHUNK * CHUNK);
    let mut hs = vec![0.0f32; CHUNK + 2];
    for y in 1..=CHUNK {
        shader.row(y, &mut hs);
        let row = terrain.height.row(y);
        for x in 1..=CHUNK {
            let rgb = shade_pixel(palette.color_at(fractions.fraction(row[x])), hs[x], opts.ambient, flat);
            rgba.extend_from_slice(&[rgb[0], rgb[1], rgb[2], 255]);
            heights.push(row[x]);
        }
    }
    for (_, path) in &run.rivers {
        for &[x, y] in path {
            let (i, j) = (x - x0, y - y0);
            if (0..CHUNK as i64).contains(&i) && (0..CHUNK as i64).contains(&j) {
                let k = (j as usize * CHUNK + i as usize) * 4;
                rgba[k..k + 3].copy_from_slice(&RIVER_RGB);
            }
        }
    }
    Ok((rgba, heights))
}

/// The worlds of every level of detail and the edits as they land on each, at one version.
struct Levels {
    worlds: Vec<Arc<World>>,
    edits: Vec<Arc<WorldEdits>>,
    version: u64,
}

impl Levels {
    fn new(world: World, edits: WorldEdits) -> terrasynth::Result<Self> {
        let mut worlds = vec![];
        for l in 0..=MAX_LEVEL {
            worlds.push(Arc::new(world_at_stride(&world, 1 << l)?));
        }
        let mut s = Self { worlds, edits: vec![], version: 0 };
        s.set_edits(&edits);
        Ok(s)
    }

    fn set_edits(&mut self, edits: &WorldEdits) {
        self.edits = (0..=MAX_LEVEL).map(|l| Arc::new(edits.at_stride(1 << l))).collect();
        self.version += 1;
    }
}

/// What the workers share: the chunks wanted, nearest first, the stop flag, and the worlds and
/// edits to make them from.
struct Queue {
    wanted: Vec<ChunkKey>,
    stop: bool,
    levels: Levels,
}

type ChunkResult = (ChunkKey, u64, Result<ChunkImage, String>);

/// A cached chunk.
struct Cached {
    image: ChunkImage,
    /// Frame it was last drawn in.
    used: u64,
    /// Edits version it was made with.
    version: u64,
}

/// Chunk generation on worker threads and the cache bookkeeping (see the module docs).
pub struct WorldChunks {
    world: Arc<World>,
    edits: WorldEdits,
    queue: Arc<(Mutex<Queue>, Condvar)>,
    results: Receiver<ChunkResult>,
    workers: Vec<JoinHandle<()>>,
    in_flight: Arc<Mutex<HashSet<ChunkKey>>>,
    ready: HashMap<ChunkKey, Cached>,
    /// Chunks an edit reached: the edits version they must be made with.
    need: HashMap<ChunkKey, u64>,
    version: u64,
    bytes: usize,
    /// The first error a chunk gave, if any.
    pub error: Option<String>,
    frame: u64,
}

impl WorldChunks {
    /// Starts `threads` (≥ 1) workers over `world`.
    pub fn new(world: World, threads: usize) -> Self {
        Self::with_edits(world, WorldEdits::new(), threads).expect("a valid world has every level of detail")
    }

    /// Starts `threads` (≥ 1) workers over `world` with `edits`.
    pub fn with_edits(world: World, edits: WorldEdits, threads: usize) -> terrasynth::Result<Self> {
        let levels = Levels::new(world, edits.clone())?;
        let world = levels.worlds[0].clone();
        let version = levels.version;
        let queue = Arc::new((Mutex::new(Queue { wanted: vec![], stop: false, levels }), Condvar::new()));
        let in_flight: Arc<Mutex<HashSet<ChunkKey>>> = Arc::default();
        let (tx, results) = channel();
        let workers = (0..threads.max(1))
            .map(|_| {
                let (queue, in_flight, tx) = (queue.clone(), in_flight.clone(), tx.clone());
                std::thread::spawn(move || work(&queue, &in_flight, &tx))
            })
            .collect();
        Ok(Self {
            world,
            edits,
            queue,
            results,
            workers,
            in_flight,
            ready: HashMap::new(),
            need: HashMap::new(),
            version,
            bytes: 0,
            error: None,
            frame: 0,
        })
    }

    /// The world shown (full resolution).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The edits shown.
    pub fn edits(&self) -> &WorldEdits {
        &self.edits
    }

    /// Replaces the edits; `changed` is the cells whose heights may differ (the chunks showing
    /// them, at every level, are made again).
    pub fn set_edits(&mut self, edits: WorldEdits, changed: CellRect) {
        self.edits = edits;
        let (lock, wake) = &*self.queue;
        if let Ok(mut q) = lock.lock() {
            q.levels.set_edits(&self.edits);
            self.version = q.levels.version;
        }
        let busy: Vec<ChunkKey> =
            self.in_flight.lock().map(|s| s.iter().copied().collect()).unwrap_or_default();
        for key in self.ready.keys().copied().chain(busy) {
            // Hillshade reads one sampled cell beyond the chunk; at coarse levels an edit is
            // scaled and may reach a few sampled cells farther (a river's reach is at least 8).
            let margin = if key.level == 0 { 2 } else { 10 };
            if key.cells().grown(margin * key.stride()).meets(&changed) {
                self.need.insert(key, self.version);
            }
        }
        wake.notify_all();
    }

    fn is_stale(&self, key: &ChunkKey) -> bool {
        self.ready.get(key).is_some_and(|c| c.version < self.need.get(key).copied().unwrap_or(0))
    }

    /// Asks for `keys` (nearest first): the chunks not ready (or stale) nor being made are
    /// queued in that order, replacing the previous wishes (chunks that left the view are no
    /// longer made).
    pub fn want(&mut self, keys: &[ChunkKey]) {
        self.frame += 1;
        let frame = self.frame;
        for k in keys {
            if let Some(c) = self.ready.get_mut(k) {
                c.used = frame;
            }
        }
        let missing: Vec<ChunkKey> = {
            let busy = self.in_flight.lock();
            let busy = busy.as_deref().ok();
            keys.iter()
                .copied()
                .filter(|k| {
                    (!self.ready.contains_key(k) || self.is_stale(k)) && !busy.is_some_and(|b| b.contains(k))
                })
                .collect()
        };
        let (lock, wake) = &*self.queue;
        if let Ok(mut q) = lock.lock() {
            q.wanted = missing;
        }
        wake.notify_all();
    }

    /// Takes the chunks finished since the last call into the cache (dropping the least
    /// recently drawn beyond [`CACHE_BYTES`]) and returns their keys.
    pub fn receive(&mut self) -> Vec<ChunkKey> {
        let mut got = Vec::new();
        while let Ok((key, version, result)) = self.results.try_recv() {
            match result {
                Ok(image) => {
                    self.bytes += image.bytes();
                    if let Some(old) = self.ready.insert(key, Cached { image, used: self.frame, version }) {
                        self.bytes -= old.image.bytes();
                    }
                    if self.need.get(&key).is_some_and(|&v| v <= version) {
                        self.need.remove(&key);
                    }
                    got.push(key);
                }
                Err(e) => {
                    self.error.get_or_insert(e);
                }
            }
        }
        if self.bytes > CACHE_BYTES {
            let mut by_age: Vec<(u64, ChunkKey)> = self.ready.iter().map(|(k, c)| (c.used, *k)).collect();
            by_age.sort_unstable();
            for (_, k) in by_age {
                if self.bytes <= CACHE_BYTES {
                    break;
                }
                if let Some(c) = self.ready.remove(&k) {
                    self.bytes -= c.image.bytes();
                    self.need.remove(&k);
                }
            }
        }
        got
    }

    /// A finished chunk (perhaps stale: made before the last edit reached it).
    pub fn get(&self, key: ChunkKey) -> Option<&ChunkImage> {
        self.ready.get(&key).map(|c| &c.image)
    }

    /// Number of chunks in the cache.
    pub fn cached(&self) -> usize {
        self.ready.len()
    }

    /// Bytes of the cached chunks (at most [`CACHE_BYTES`] after [`WorldChunks::receive`]).
    pub fn cached_bytes(&self) -> usize {
        self.bytes
    }

    /// Whether chunks are still being made or waiting.
    pub fn busy(&self) -> bool {
        let queued = self.queue.0.lock().map(|q| !q.wanted.is_empty()).unwrap_or(false);
        queued || self.in_flight.lock().map(|s| !s.is_empty()).unwrap_or(false)
    }

    /// Waits until every wanted chunk has been made (tests and screenshots).
    pub fn wait(&mut self) {
        while self.busy() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        self.receive();
    }
}

impl Drop for WorldChunks {
    fn drop(&mut self) {
        let (lock, wake) = &*self.queue;
        if let Ok(mut q) = lock.lock() {
            q.stop = true;
        }
        wake.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// A worker: takes the first wanted chunk, makes it from the current worlds and edits, sends it
/// back with the edits version.
fn work(queue: &(Mutex<Queue>, Condvar), in_flight: &Mutex<HashSet<ChunkKey>>, tx: &Sender<ChunkResult>) {
    let (lock, wake) = queue;
    loop {
        let (key, world, edits, version) = {
            let Ok(mut q) = lock.lock() else { return };
            loop {
                if q.stop {
                    return;
                }
                if !q.wanted.is_empty() {
                    let key = q.wanted.remove(0);
                    if let Ok(mut f) = in_flight.lock() {
                        f.insert(key);
                    }
                    let l = key.level as usize;
                    break (key, q.levels.worlds[l].clone(), q.levels.edits[l].clone(), q.levels.version);
                }
                q = match wake.wait(q) {
                    Ok(q) => q,
                    Err(_) => return,
                };
            }
        };
        let c = CHUNK as i64;
        let result = window_rgba(&world, &edits, key.x * c, key.y * c)
            .map(|(rgba, heights)| ChunkImage { key, rgba, heights })
            .map_err(|e| e.to_string());
        let sent = tx.send((key, version, result));
        if let Ok(mut f) = in_flight.lock() {
            f.remove(&key);
        }
        if sent.is_err() {
            return;
        }
    }
}

/// Where the view looks: the world cell at the centre of the screen and the zoom.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct WorldCamera {
    /// World cell (fractional) at the view's centre.
    pub centre: [f64; 2],
    /// Screen points per cell.
    pub points_per_cell: f32,
}

impl Default for WorldCamera {
    fn default() -> Self {
        Self { centre: [0.0, 0.0], points_per_cell: 1.0 }
    }
}

impl WorldCamera {
    /// The world cell under screen position `p` of a view `rect`.
    pub fn cell_at(&self, rect: Rect, p: Pos2) -> [f64; 2] {
        let d = p - rect.center();
        let k = self.points_per_cell as f64;
        [self.centre[0] + d.x as f64 / k, self.centre[1] + d.y as f64 / k]
    }

    /// Screen position of world cell corner `c` in a view `rect`.
    pub fn screen_at(&self, rect: Rect, c: [f64; 2]) -> Pos2 {
        let k = self.points_per_cell as f64;
        let c0 = rect.center();
        Pos2::new(c0.x + ((c[0] - self.centre[0]) * k) as f32, c0.y + ((c[1] - self.centre[1]) * k) as f32)
    }

    /// Zooms by `factor` keeping the world cell under `p` fixed on screen.
    pub fn zoom_at(&mut self, rect: Rect, p: Pos2, factor: f32) {
        let before = self.cell_at(rect, p);
        self.points_per_cell =
            (self.points_per_cell * factor).clamp(MIN_POINTS_PER_CELL, MAX_POINTS_PER_CELL);
        let after = self.cell_at(rect, p);
        self.centre[0] += before[0] - after[0];
        self.centre[1] += before[1] - after[1];
    }

    /// Moves the view by a screen drag `delta`.
    pub fn pan(&mut self, delta: Vec2) {
        let k = self.points_per_cell as f64;
        self.centre[0] -= delta.x as f64 / k;
        self.centre[1] -= delta.y as f64 / k;
    }

    /// The level of detail shown: the smallest `L` at which a sampled cell (`2^L` cells) spans
    /// at least half a point, at most [`MAX_LEVEL`].
    pub fn level(&self) -> u8 {
        let mut l = 0u8;
        while l < MAX_LEVEL && self.points_per_cell * ((1u32 << l) as f32) < 0.5 {
            l += 1;
        }
        l
    }

    /// The chunks of level `level` a view `rect` shows (plus a ring around it, made ahead of
    /// panning), nearest the centre first.
    pub fn chunks_at(&self, rect: Rect, level: u8) -> Vec<ChunkKey> {
        let a = self.cell_at(rect, rect.min);
        let b = self.cell_at(rect, rect.max);
        let c = (CHUNK as f64) * (1u64 << level) as f64;
        let range = |lo: f64, hi: f64| ((lo / c).floor() as i64 - 1)..=((hi / c).floor() as i64 + 1);
        let mut keys: Vec<ChunkKey> = range(a[1], b[1])
            .flat_map(|y| range(a[0], b[0]).map(move |x| ChunkKey { level, x, y }))
            .collect();
        let centre = [self.centre[0] / c - 0.5, self.centre[1] / c - 0.5];
        let dist = |k: &ChunkKey| {
            let (dx, dy) = (k.x as f64 - centre[0], k.y as f64 - centre[1]);
            dx * dx + dy * dy
        };
        keys.sort_by(|p, q| dist(p).total_cmp(&dist(q)));
        keys
    }

    /// The chunks a view `rect` shows at the camera's level of detail ([`WorldCamera::level`]).
    pub fn visible_chunks(&self, rect: Rect) -> Vec<ChunkKey> {
        self.chunks_at(rect, self.level())
    }
}

/// What a world view tool does when you press or drag on the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorldTool {
    /// Drag to pan.
    Pan,
    /// A brush stroke.
    Brush(BrushMode),
    /// Click to place a river source.
    River,
}

/// The view settings a world project saves beside its document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorldViewFile {
    /// Where the view looked.
    pub camera: WorldCamera,
}

/// The world window (see the module docs).
pub struct WorldApp {
    chunks: WorldChunks,
    camera: WorldCamera,
    textures: HashMap<ChunkKey, TextureHandle>,
    name: String,
    /// The status line's cursor text, from the last frame.
    status_text: String,
    /// The tool the map's primary button uses.
    pub tool: WorldTool,
    /// Brush radius, cells.
    pub radius: f64,
    /// Raise/lower strength, metres.
    pub height_strength: f32,
    /// Smooth/flatten strength, a fraction.
    pub blend_strength: f32,
    /// Dabs of the stroke being painted (world cells).
    painting: Vec<[f64; 2]>,
    redo: Vec<WorldEdit>,
    /// The project file Save and Open use.
    pub path: String,
    /// Where the map was drawn in the last frame.
    map_rect: Option<Rect>,
    /// The file browser Browse… opened (it fills in [`WorldApp::path`]).
    browser: Option<FileBrowser>,
    /// The last message of Save, Open or an edit (errors included).
    pub message: String,
    /// The problem with a typed brush value that was not applied (shown under the tool bar
    /// while the bad text stays in its field).
    pub field_error: Option<String>,
    /// Gives a Tab typed within the same frame as other keys a frame of its own.
    focus_moves: crate::panels::FocusMoveDeferral,
}

impl WorldApp {
    /// The world view of `world`, named `name` in the title.
    pub fn new(world: World, name: &str) -> Self {
        Self {
            chunks: WorldChunks::new(world, threads()),
            camera: WorldCamera::default(),
            textures: HashMap::new(),
            name: name.to_string(),
            status_text: String::new(),
            tool: WorldTool::Pan,
            radius: 24.0,
            height_strength: 40.0,
            blend_strength: 0.5,
            painting: Vec::new(),
            redo: Vec::new(),
            path: format!("{name}.tsproj"),
            message: String::new(),
            field_error: None,
            map_rect: None,
            browser: None,
            focus_moves: Default::default(),
        }
    }

    /// The screen position of world cell `c` (its centre at `c + 0.5`) in the last frame's map.
    pub fn cell_to_screen(&self, c: [f64; 2]) -> Option<Pos2> {
        self.map_rect.map(|r| self.camera.screen_at(r, [c[0] + 0.5, c[1] + 0.5]))
    }

    /// The camera (tests and screenshots).
    pub fn camera_mut(&mut self) -> &mut WorldCamera {
        &mut self.camera
    }

    /// The chunks (tests and screenshots).
    pub fn chunks(&self) -> &WorldChunks {
        &self.chunks
    }

    /// The chunks, to wait for them (tests and screenshots).
    pub fn chunks_mut(&mut self) -> &mut WorldChunks {
        &mut self.chunks
    }

    /// The edits made so far, in order.
    pub fn edits(&self) -> &WorldEdits {
        self.chunks.edits()
    }

    /// Adds an edit (it shows as soon as the chunks it reaches are made again).
    pub fn push_edit(&mut self, edit: WorldEdit) -> terrasynth::Result<()> {
        let mut edits = self.chunks.edits().clone();
        let changed = edit.footprint();
        edits.push(edit)?;
        self.chunks.set_edits(edits, changed);
        self.redo.clear();
        Ok(())
    }

    /// Undoes the last edit; false when there is none.
    pub fn undo(&mut self) -> bool {
        let mut edits = self.chunks.edits().clone();
        let Some(e) = edits.pop() else { return false };
        self.chunks.set_edits(edits, e.footprint());
        self.redo.push(e);
        true
    }

    /// Redoes the last undone edit; false when there is none.
    pub fn redo(&mut self) -> bool {
        let Some(e) = self.redo.pop() else { return false };
        let mut edits = self.chunks.edits().clone();
        let changed = e.footprint();
        if edits.push(e).is_ok() {
            self.chunks.set_edits(edits, changed);
        }
        true
    }

    /// Saves the world project (the recipe, the edits per chunk and the camera) to `path`.
    pub fn save_to(&mut self, path: &Path) -> terrasynth::Result<()> {
        let mut doc = Document::new(self.chunks.world().recipe().clone());
        doc.world_edits = self.chunks.edits().clone();
        save_project(path, &doc, &WorldViewFile { camera: self.camera })?;
        self.message = format!("Saved {}", path.display());
        Ok(())
    }

    /// Opens a world project: its world, edits and camera replace the view's.
    pub fn open(&mut self, path: &Path) -> terrasynth::Result<()> {
        let (doc, view) = load_project::<WorldViewFile>(path)?;
        let world = World::new(doc.recipe)?;
        self.chunks = WorldChunks::with_edits(world, doc.world_edits, threads())?;
        self.textures.clear();
        self.redo.clear();
        if let Some(v) = view {
            self.camera = v.camera;
        }
        self.name = path.file_stem().map_or_else(|| self.name.clone(), |s| s.to_string_lossy().into_owned());
        self.message = format!("Opened {}", path.display());
        Ok(())
    }

    fn brush_strength(&self, mode: BrushMode) -> f32 {
        match mode {
            BrushMode::Raise | BrushMode::Lower => self.height_strength,
            BrushMode::Flatten | BrushMode::Smooth => self.blend_strength,
        }
    }

    /// The tool bar: tools, brush settings, undo/redo, the project file.
    fn tools_ui(&mut self, ui: &mut egui::Ui) {
        let mut field_error = None;
        ui.horizontal_wrapped(|ui| {
            let tools = [
                (WorldTool::Pan, "Pan", "Drag to move the view."),
                (
                    WorldTool::Brush(BrushMode::Raise),
                    "Raise",
                    "Drag to raise the ground (metres at the centre).",
                ),
                (WorldTool::Brush(BrushMode::Lower), "Lower", "Drag to lower the ground."),
                (WorldTool::Brush(BrushMode::Smooth), "Smooth", "Drag to smooth toward the 3×3 mean."),
                (
                    WorldTool::Brush(BrushMode::Flatten),
                    "Flatten",
                    "Drag to flatten toward the height under the stroke's first dab.",
                ),
                (
                    WorldTool::River,
                    "River source",
                    "Click to place a river source: traced downhill within 256 cells and carved.",
                ),
            ];
            for (tool, label, tip) in tools {
                ui.selectable_value(&mut self.tool, tool, label).on_hover_text(tip);
            }
            ui.separator();
            let mut errors = Vec::new();
            errors.extend(typed_slider(
                ui,
                "world",
                ("radius", "cells", "Brush radius in world cells; the fall-off is smooth to the edge."),
                &mut self.radius,
                BRUSH_RADIUS,
                true,
            ));
            if let WorldTool::Brush(mode) = self.tool {
                let (strength, unit, range, log) = match mode {
                    BrushMode::Raise | BrushMode::Lower => {
                        (&mut self.height_strength, "m", 1.0..=500.0, true)
                    }
                    _ => (&mut self.blend_strength, "", 0.0..=1.0, false),
                };
                let mut v = *strength as f64;
                let tip =
                    "Per dab: metres at the centre for raise/lower, a blend fraction for smooth and flatten.";
                errors.extend(typed_slider(ui, "world", ("strength", unit, tip), &mut v, range, log));
                *strength = v as f32;
            }
            field_error = errors.into_iter().next();
            ui.separator();
            if ui.button("Undo").clicked() {
                self.undo();
            }
            if ui.button("Redo").clicked() {
                self.redo();
            }
            ui.separator();
            ui.label("Project");
            ui.add(egui::TextEdit::singleline(&mut self.path).desired_width(220.0))
                .accessible_name("Project file")
                .on_hover_text("The world project (.tsproj) Save world and Open world use.");
            if ui.button("Browse…").on_hover_text("Pick the world project file in a file browser.").clicked()
            {
                self.browser = Some(FileBrowser::new(Purpose::ProjectFile, Path::new(&self.path)));
            }
            if ui.button("Save world").clicked() {
                let p = PathBuf::from(&self.path);
                if let Err(e) = self.save_to(&p) {
                    self.message = format!("cannot save {}: {e}", p.display());
                }
            }
            if ui.button("Open world").clicked() {
                let p = PathBuf::from(&self.path);
                if let Err(e) = self.open(&p) {
                    self.message = format!("cannot open {}: {e}", p.display());
                }
            }
            if !self.message.is_empty() {
                ui.label(&self.message);
            }
        });
        // A refused typed value shows under the tool bar while it stays in its field, apart
        // from the message, so it never hides "Saved …" or another result.
        error_note(ui, field_error.as_deref());
        self.field_error = field_error;
    }

    /// Adds the dabs from the last one to world point `c`, one every radius/4 cells.
    fn paint_to(&mut self, c: [f64; 2]) {
        let spacing = (self.radius / 4.0).max(0.5);
        let Some(&last) = self.painting.last() else {
            self.painting.push(c);
            return;
        };
        let (dx, dy) = (c[0] - last[0], c[1] - last[1]);
        let len = (dx * dx + dy * dy).sqrt();
        let n = (len / spacing).floor() as usize;
        for k in 1..=n.min(10_000) {
            let t = k as f64 * spacing / len;
            self.painting.push([last[0] + dx * t, last[1] + dy * t]);
        }
    }

    fn finish_stroke(&mut self, mode: BrushMode) {
        let dabs = std::mem::take(&mut self.painting);
        if dabs.is_empty() {
            return;
        }
        let edit = WorldEdit::Stroke { mode, radius: self.radius, strength: self.brush_strength(mode), dabs };
        match self.push_edit(edit) {
            Ok(()) => self.message = format!("{mode:?} stroke painted"),
            Err(e) => self.message = format!("stroke refused: {e}"),
        }
    }

    /// Lays out and draws one frame.
    pub fn frame_ui(&mut self, root: &mut egui::Ui) {
        let ctx = root.ctx().clone();
        for key in self.chunks.receive() {
            if let Some(c) = self.chunks.get(key) {
                let img = egui::ColorImage::from_rgba_unmultiplied([CHUNK, CHUNK], &c.rgba);
                let tex = ctx.load_texture(format!("chunk {key:?}"), img, egui::TextureOptions::NEAREST);
                self.textures.insert(key, tex);
            }
        }
        self.textures.retain(|k, _| self.chunks.get(*k).is_some());
        // The editor's shortcuts: Ctrl+Z undo; Ctrl+Y or Ctrl+Shift+Z redo.
        let redo = ctx.input_mut(|i| {
            i.consume_key(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::Z)
                || i.consume_key(egui::Modifiers::COMMAND, egui::Key::Y)
        });
        if redo {
            self.redo();
        } else if ctx.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::Z)) {
            self.undo();
        }
        let mut status = String::new();
        let camera = self.camera;
        let busy = self.chunks.busy();
        let error = self.chunks.error.clone();
        let name = self.name.clone();
        let n_edits = self.chunks.edits().len();
        let status_bar = |ui: &mut egui::Ui, status: &str| {
            ui.horizontal(|ui| {
                ui.label(format!(
                    "World `{name}`: drag to pan, scroll to zoom ({:.3} points per cell, level of detail {}: \
                     every {} cells). {n_edits} edits. {status}",
                    camera.points_per_cell,
                    camera.level(),
                    1u32 << camera.level()
                ));
                if busy {
                    ui.spinner();
                    ui.label("generating chunks…");
                }
                if let Some(e) = &error {
                    ui.colored_label(Color32::LIGHT_RED, e);
                }
            });
        };
        let hover = self.status_text.clone();
        egui::Panel::top("world-tools").show(root, |ui| self.tools_ui(ui));
        if let Some(b) = self.browser.as_mut() {
            match b.ui(&ctx) {
                Outcome::Open => {}
                Outcome::Cancelled => self.browser = None,
                Outcome::Chosen(p) => {
                    self.path = p.display().to_string();
                    self.browser = None;
                }
            }
        }
        egui::Panel::bottom("world-status").show(root, |ui| status_bar(ui, &hover));
        egui::CentralPanel::default().frame(egui::Frame::NONE).show(root, |ui| {
            let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
            self.map_rect = Some(rect);
            let pan = self.tool == WorldTool::Pan || response.dragged_by(egui::PointerButton::Secondary);
            if pan && response.dragged() {
                self.camera.pan(response.drag_delta());
            }
            let pointer = response.interact_pointer_pos().or(response.hover_pos());
            match (self.tool, pointer) {
                (WorldTool::Brush(_), Some(p)) if response.dragged_by(egui::PointerButton::Primary) => {
                    let c = self.camera.cell_at(rect, p);
                    self.paint_to(c);
                }
                (WorldTool::Brush(mode), _) if response.drag_stopped() => self.finish_stroke(mode),
                (WorldTool::Brush(mode), Some(p)) if response.clicked() => {
                    self.painting = vec![self.camera.cell_at(rect, p)];
                    self.finish_stroke(mode);
                }
                (WorldTool::River, Some(p)) if response.clicked() => {
                    let c = self.camera.cell_at(rect, p);
                    let edit = WorldEdit::RiverSource {
                        x: c[0].round() as i64,
                        y: c[1].round() as i64,
                        reach: DEFAULT_RIVER_REACH,
                        depth_m: DEFAULT_RIVER_DEPTH_M,
                        width: DEFAULT_RIVER_WIDTH,
                    };
                    match self.push_edit(edit) {
                        Ok(()) => self.message = "River source placed".into(),
                        Err(e) => self.message = format!("river source refused: {e}"),
                    }
                }
                _ => {}
            }
            if let Some(p) = response.hover_pos() {
                let scroll = ui.input(|i| i.smooth_scroll_delta.y);
                let zoom = ui.input(|i| i.zoom_delta()) * (scroll / 200.0).exp();
                if zoom != 1.0 {
                    self.camera.zoom_at(rect, p, zoom);
                }
                let c = self.camera.cell_at(rect, p);
                let (x, y) = (c[0].floor() as i64, c[1].floor() as i64);
                let level = self.camera.level();
                let s = 1i64 << level;
                let side = CHUNK as i64 * s;
                let key = ChunkKey { level, x: x.div_euclid(side), y: y.div_euclid(side) };
                let h = self.chunks.get(key).map(|ch| {
                    let (i, j) = ((x.rem_euclid(side) / s) as usize, (y.rem_euclid(side) / s) as usize);
                    ch.heights[j * CHUNK + i]
                });
                let m = self.chunks.world().recipe().cell_size;
                status = match h {
                    Some(h) => {
                        format!("cell ({x}, {y}) = ({:.0} m, {:.0} m): {h:.1} m", x as f64 * m, y as f64 * m)
                    }
                    None => format!("cell ({x}, {y})"),
                };
            }
            let level = self.camera.level();
            let keys = self.camera.chunks_at(rect, level);
            self.chunks.want(&keys);
            let painter = ui.painter_at(rect);
            painter.rect_filled(rect, 0.0, Color32::from_gray(40));
            let uv = Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0));
            // Coarser chunks already made fill in while this level's arrive.
            let under: Vec<ChunkKey> = (level + 1..=(level + 2).min(MAX_LEVEL))
                .rev()
                .flat_map(|l| self.camera.chunks_at(rect, l))
                .filter(|k| self.textures.contains_key(k))
                .collect();
            for key in under.iter().chain(&keys) {
                let cells = key.cells();
                let a = self.camera.screen_at(rect, [cells.x0 as f64, cells.y0 as f64]);
                let b = self.camera.screen_at(rect, [cells.x1 as f64, cells.y1 as f64]);
                if let Some(tex) = self.textures.get(key) {
                    painter.image(tex.id(), Rect::from_min_max(a, b), uv, Color32::WHITE);
                }
            }
            // The stroke being painted.
            let k = self.camera.points_per_cell;
            for d in &self.painting {
                let p = self.camera.screen_at(rect, [d[0] + 0.5, d[1] + 0.5]);
                painter.circle_stroke(
                    p,
                    self.radius as f32 * k,
                    Stroke::new(1.0, Color32::from_white_alpha(120)),
                );
            }
            if let (WorldTool::Brush(_), Some(p)) = (self.tool, response.hover_pos()) {
                painter.circle_stroke(p, self.radius as f32 * k, Stroke::new(1.5, Color32::WHITE));
            }
        });
        self.status_text = status;
        if self.chunks.busy() {
            ctx.request_repaint_after(std::time::Duration::from_millis(30));
        }
    }
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).max(1)
}

impl eframe::App for WorldApp {
    fn raw_input_hook(&mut self, ctx: &egui::Context, raw_input: &mut egui::RawInput) {
        self.focus_moves.hook(ctx, raw_input);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frame_ui(ui);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use terrasynth::Recipe;

    fn world() -> World {
        let r = Recipe::from_toml_str(
            r#"
            cell-size = 40.0
            sea-level = 0.0
            [world]
            height-range = [-1000.0, 2000.0]
            [[steps]]
            type = "noise"
            feature-size-m = 20000.0
            [[steps]]
            type = "normalize"
            input-range = [-1.0, 1.0]
            min = -1000.0
            max = 2000.0
            "#,
        )
        .unwrap();
        World::new(r).unwrap()
    }

    /// A chunk's pixels are the world's cells: its heights equal the window of the world at the
    /// chunk's corner, and the colours of neighbouring chunks' shared border (hillshade on the
    /// grown window) equal those of one chunk-sized window straddling them.
    #[test]
    fn chunks_are_windows_of_the_world_and_join_without_seams() {
        let w = world();
        let a = chunk_rgba(&w, ChunkKey::new(-1, 0)).unwrap();
        let b = chunk_rgba(&w, ChunkKey::new(0, 0)).unwrap();
        let direct = w.window(-(CHUNK as i64), 0, CHUNK, CHUNK, &PipelineProgress::new()).unwrap();
        assert_eq!(a.heights, direct.height.as_slice());
        // The last column of chunk a and the first of chunk b are neighbours in the world: a
        // window straddling both gives them the same colours.
        let half = CHUNK as i64 / 2;
        let (mid, _) = window_rgba(&w, &WorldEdits::new(), -half, 0).unwrap();
        let px = |img: &[u8], x: usize, y: usize| img[(y * CHUNK + x) * 4..(y * CHUNK + x) * 4 + 4].to_vec();
        for y in 0..CHUNK {
            assert_eq!(px(&a.rgba, CHUNK - 1, y), px(&mid, CHUNK / 2 - 1, y), "row {y}");
            assert_eq!(px(&b.rgba, 0, y), px(&mid, CHUNK / 2, y), "row {y}");
        }
        // And the view is not flat: the shading varies along the seam.
        let seam: HashSet<Vec<u8>> = (0..CHUNK).map(|y| px(&b.rgba, 0, y)).collect();
        assert!(seam.len() > 10, "{} colours", seam.len());
    }

    /// What you see is what you export: a chunk's colours are the `shaded.png` that `generate
    /// --window` writes for the same window, pixel for pixel.
    #[test]
    fn chunk_colours_are_the_exported_shaded_png() {
        use terrasynth::export::{ExportOptions, Window, run_window, write};
        let w = world();
        let key = ChunkKey::new(-2, 1);
        let chunk = chunk_rgba(&w, key).unwrap();
        let window = Window::new(key.x * CHUNK as i64, key.y * CHUNK as i64, CHUNK, CHUNK).unwrap();
        let p = PipelineProgress::new();
        let run = run_window(w.pipeline(), &window, &p, &mut ()).unwrap();
        let dir = std::env::temp_dir().join(format!("terrasynth-world-view-{}", std::process::id()));
        let opts = ExportOptions { window: Some(window), seamless_only: true, ..Default::default() };
        write(&dir, &run, w.pipeline(), &opts).unwrap();
        let png = image::open(dir.join("shaded.png")).unwrap().to_rgb8();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!((png.width() as usize, png.height() as usize), (CHUNK, CHUNK));
        let mut differ = 0;
        for (k, px) in png.pixels().enumerate() {
            if px.0[..] != chunk.rgba[k * 4..k * 4 + 3] {
                differ += 1;
            }
        }
        assert_eq!(differ, 0, "{differ} pixels differ from shaded.png");
    }

    #[test]
    fn workers_make_the_wanted_chunks_and_the_cache_is_bounded() {
        let mut chunks = WorldChunks::new(world(), 2);
        let keys = [
            ChunkKey::new(0, 0),
            ChunkKey::new(-1, 0),
            ChunkKey::new(0, -1),
            ChunkKey { level: 3, x: 5, y: 7 },
        ];
        chunks.want(&keys);
        chunks.wait();
        for k in keys {
            let c = chunks.get(k).unwrap_or_else(|| panic!("chunk {k:?} missing"));
            assert_eq!(c.rgba.len(), CHUNK * CHUNK * 4);
            assert_eq!(c.key, k);
        }
        assert!(chunks.error.is_none() && !chunks.busy());
        assert_eq!(chunks.cached(), 4);
        assert_eq!(chunks.cached_bytes(), 4 * CHUNK * CHUNK * 8);
        const { assert!(CACHE_BYTES / (CHUNK * CHUNK * 8) >= 300, "the cache holds a far view's chunks") };
    }

    /// A coarse chunk (level 2) of a point-step world is every 4th cell of the full-resolution
    /// chunks it covers.
    #[test]
    fn coarse_chunks_subsample_the_world() {
        let mut chunks = WorldChunks::new(world(), 2);
        let coarse = ChunkKey { level: 2, x: -1, y: 0 };
        let fine = ChunkKey::new(-4, 1);
        chunks.want(&[coarse, fine]);
        chunks.wait();
        let (c, f) = (chunks.get(coarse).unwrap(), chunks.get(fine).unwrap());
        // Fine chunk (-4, 1) is the top-left quarter's second row of 64-cell blocks of coarse
        // chunk (-1, 0): coarse pixel (i, 64 + j) is world cell (4i − 1024, 4(64 + j)).
        for j in 0..CHUNK / 4 {
            for i in 0..CHUNK / 4 {
                assert_eq!(
                    c.heights[(64 + j) * CHUNK + i].to_bits(),
                    f.heights[4 * j * CHUNK + 4 * i].to_bits()
                );
            }
        }
    }

    /// An edit makes the chunks it reaches again: their heights then equal the edited world's
    /// window; chunks it does not reach keep their image.
    #[test]
    fn an_edit_remakes_the_chunks_it_reaches() {
        let mut chunks = WorldChunks::new(world(), 2);
        let keys = [ChunkKey::new(0, 0), ChunkKey::new(1, 0), ChunkKey::new(3, 3)];
        chunks.want(&keys);
        chunks.wait();
        let far = chunks.get(keys[2]).unwrap().heights.clone();
        let mut edits = WorldEdits::new();
        let stroke = WorldEdit::Stroke {
            mode: BrushMode::Raise,
            radius: 20.0,
            strength: 300.0,
            dabs: vec![[240.0, 100.0], [270.0, 100.0]],
        };
        let changed = stroke.footprint();
        edits.push(stroke).unwrap();
        chunks.set_edits(edits.clone(), changed);
        chunks.want(&keys);
        chunks.wait();
        let p = PipelineProgress::new();
        for k in &keys[..2] {
            let c = chunks.get(*k).unwrap();
            let w = edited_window(chunks.world(), &edits, k.x * 256, 0, CHUNK, CHUNK, &p).unwrap();
            assert_eq!(c.heights, w.terrain.height.as_slice(), "{k:?}");
        }
        assert_eq!(chunks.get(keys[2]).unwrap().heights, far);
    }

    #[test]
    fn camera_zooms_about_the_cursor_and_lists_nearest_chunks_first() {
        let rect = Rect::from_min_size(Pos2::ZERO, Vec2::new(800.0, 600.0));
        let mut cam = WorldCamera { centre: [1000.0, -500.0], points_per_cell: 1.0 };
        let p = Pos2::new(100.0, 50.0);
        let before = cam.cell_at(rect, p);
        cam.zoom_at(rect, p, 2.0);
        let after = cam.cell_at(rect, p);
        assert!((before[0] - after[0]).abs() < 1e-9 && (before[1] - after[1]).abs() < 1e-9);
        assert_eq!(cam.points_per_cell, 2.0);
        cam.zoom_at(rect, p, 1000.0);
        assert_eq!(cam.points_per_cell, MAX_POINTS_PER_CELL);
        let cam = WorldCamera { centre: [0.0, 0.0], points_per_cell: 1.0 };
        let keys = cam.visible_chunks(rect);
        // 800 × 600 cells around the origin: chunks -2..=1 by -2..=1 plus a ring.
        let has = |x, y| keys.contains(&ChunkKey::new(x, y));
        assert!(has(-3, -3) && has(2, 2) && !has(3, 0));
        assert!(keys[..4].iter().all(|k| k.level == 0 && (-1..=0).contains(&k.x) && (-1..=0).contains(&k.y)));
        // Far zoom: the level keeps a sampled cell at half a point or more, and the chunk count
        // stays that of a near view.
        for (ppc, level) in [(1.0, 0u8), (0.5, 0), (0.3, 1), (0.25, 1), (0.01, 6), (MIN_POINTS_PER_CELL, 9)] {
            let cam = WorldCamera { centre: [123456.0, -98765.0], points_per_cell: ppc };
            assert_eq!(cam.level(), level, "{ppc}");
            assert!(cam.visible_chunks(rect).len() <= 11 * 9, "{ppc}: {}", cam.visible_chunks(rect).len());
        }
    }
}
