//! The world view (`terrasynth-gui --world PRESET`): an endless world (a recipe with a
//! `[world]` table, see the library's `recipe::World`) panned and zoomed without edges.
//!
//! - [`WorldChunks`] (no egui types, unit-tested): chunks of [`CHUNK`] × [`CHUNK`] cells are
//!   generated on worker threads, nearest the view centre first; finished chunks come back as
//!   RGBA images; the view keeps at most [`CACHE_CHUNKS`] of them and drops the least recently
//!   drawn.
//! - [`chunk_rgba`]: a chunk's colours: the recipe's palette over the world's declared height
//!   range (never the chunk's own, so chunks match) times the hillshade, computed on the chunk
//!   grown by one cell so edge cells see their true neighbours: neighbouring chunks join without
//!   a seam.
//! - [`WorldApp`]: the window: drag to pan, scroll to zoom, the cursor's world cell and height in
//!   the status line.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use eframe::egui::{self, Color32, Pos2, Rect, Sense, TextureHandle, Vec2};
use terrasynth::recipe::{PipelineProgress, World};
use terrasynth::render::hillshade::{HillshadeOptions, Hillshader, shade_pixel};
use terrasynth::render::palette::{FractionMap, Palette};

/// Cells per chunk side.
pub const CHUNK: usize = 256;

/// Chunk images kept (about 96 MiB of RGBA at 256²).
pub const CACHE_CHUNKS: usize = 384;

/// Closest zoom, screen points per cell.
pub const MAX_POINTS_PER_CELL: f32 = 8.0;

/// Farthest zoom, screen points per cell (1/2: a 1400 × 880-point view spans 2800 × 1760 cells,
/// about 15 × 10 chunks with the ring made ahead, well inside the cache).
pub const MIN_POINTS_PER_CELL: f32 = 0.5;

/// One chunk's key: chunk `(cx, cy)` covers world cells `cx·CHUNK ..< (cx+1)·CHUNK` (and rows
/// alike).
pub type ChunkKey = (i64, i64);

/// A finished chunk: RGBA pixels, one per cell, and its heights in metres.
#[derive(Clone, Debug)]
pub struct ChunkImage {
    /// Which chunk.
    pub key: ChunkKey,
    /// `CHUNK × CHUNK × 4` bytes.
    pub rgba: Vec<u8>,
    /// `CHUNK × CHUNK` heights (metres), row-major.
    pub heights: Vec<f32>,
}

/// The colours of chunk `key` of `world` (see the module docs).
pub fn chunk_rgba(world: &World, key: ChunkKey) -> terrasynth::Result<ChunkImage> {
    let (rgba, heights) = window_rgba(world, key.0 * CHUNK as i64, key.1 * CHUNK as i64)?;
    Ok(ChunkImage { key, rgba, heights })
}

/// The colours and heights of the `CHUNK × CHUNK` window of `world` at world cell `(x0, y0)`.
pub fn window_rgba(world: &World, x0: i64, y0: i64) -> terrasynth::Result<(Vec<u8>, Vec<f32>)> {
    let terrain = world.window(x0 - 1, y0 - 1, CHUNK + 2, CHUNK + 2, &PipelineProgress::new())?;
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
    Ok((rgba, heights))
}

/// What the workers share: the chunks wanted, nearest first, and the stop flag.
#[derive(Default)]
struct Queue {
    wanted: Vec<ChunkKey>,
    stop: bool,
}

/// Chunk generation on worker threads and the cache bookkeeping (see the module docs).
pub struct WorldChunks {
    world: Arc<World>,
    queue: Arc<(Mutex<Queue>, Condvar)>,
    results: Receiver<(ChunkKey, Result<ChunkImage, String>)>,
    workers: Vec<JoinHandle<()>>,
    in_flight: Arc<Mutex<HashSet<ChunkKey>>>,
    /// Finished chunks with the frame they were last drawn in.
    ready: HashMap<ChunkKey, (ChunkImage, u64)>,
    /// The first error a chunk gave, if any.
    pub error: Option<String>,
    frame: u64,
}

impl WorldChunks {
    /// Starts `threads` (≥ 1) workers over `world`.
    pub fn new(world: World, threads: usize) -> Self {
        let world = Arc::new(world);
        let queue: Arc<(Mutex<Queue>, Condvar)> = Arc::default();
        let in_flight: Arc<Mutex<HashSet<ChunkKey>>> = Arc::default();
        let (tx, results) = channel();
        let workers = (0..threads.max(1))
            .map(|_| {
                let (world, queue, in_flight, tx) =
                    (world.clone(), queue.clone(), in_flight.clone(), tx.clone());
                std::thread::spawn(move || work(&world, &queue, &in_flight, &tx))
            })
            .collect();
        Self { world, queue, results, workers, in_flight, ready: HashMap::new(), error: None, frame: 0 }
    }

    /// The world shown.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Asks for `keys` (nearest first): the chunks not ready nor being made are queued in that
    /// order, replacing the previous wishes (chunks that left the view are no longer made).
    pub fn want(&mut self, keys: &[ChunkKey]) {
        self.frame += 1;
        let frame = self.frame;
        for k in keys {
            if let Some((_, used)) = self.ready.get_mut(k) {
                *used = frame;
            }
        }
        let missing: Vec<ChunkKey> = {
            let busy = self.in_flight.lock();
            let busy = busy.as_deref().ok();
            keys.iter()
                .copied()
                .filter(|k| !self.ready.contains_key(k) && !busy.is_some_and(|b| b.contains(k)))
                .collect()
        };
        let (lock, wake) = &*self.queue;
        if let Ok(mut q) = lock.lock() {
            q.wanted = missing;
        }
        wake.notify_all();
    }

    /// Takes the chunks finished since the last call into the cache (dropping the least
    /// recently drawn beyond [`CACHE_CHUNKS`]) and returns their keys.
    pub fn receive(&mut self) -> Vec<ChunkKey> {
        let mut got = Vec::new();
        while let Ok((key, result)) = self.results.try_recv() {
            match result {
                Ok(image) => {
                    self.ready.insert(key, (image, self.frame));
                    got.push(key);
                }
                Err(e) => {
                    self.error.get_or_insert(e);
                }
            }
        }
        if self.ready.len() > CACHE_CHUNKS {
            let mut by_age: Vec<(u64, ChunkKey)> =
                self.ready.iter().map(|(k, (_, used))| (*used, *k)).collect();
            by_age.sort_unstable();
            for (_, k) in by_age.into_iter().take(self.ready.len() - CACHE_CHUNKS) {
                self.ready.remove(&k);
            }
        }
        got
    }

    /// A finished chunk.
    pub fn get(&self, key: ChunkKey) -> Option<&ChunkImage> {
        self.ready.get(&key).map(|(c, _)| c)
    }

    /// Number of chunks in the cache.
    pub fn cached(&self) -> usize {
        self.ready.len()
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

/// A worker: takes the first wanted chunk, makes it, sends it back.
fn work(
    world: &World,
    queue: &(Mutex<Queue>, Condvar),
    in_flight: &Mutex<HashSet<ChunkKey>>,
    tx: &Sender<(ChunkKey, Result<ChunkImage, String>)>,
) {
    let (lock, wake) = queue;
    loop {
        let key = {
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
                    break key;
                }
                q = match wake.wait(q) {
                    Ok(q) => q,
                    Err(_) => return,
                };
            }
        };
        let result = chunk_rgba(world, key).map_err(|e| e.to_string());
        let sent = tx.send((key, result));
        if let Ok(mut f) = in_flight.lock() {
            f.remove(&key);
        }
        if sent.is_err() {
            return;
        }
    }
}

/// Where the view looks: the world cell at the centre of the screen and the zoom.
#[derive(Clone, Copy, Debug, PartialEq)]
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

    /// The chunks a view `rect` shows (plus a ring around it, made ahead of panning), nearest
    /// the centre first.
    pub fn visible_chunks(&self, rect: Rect) -> Vec<ChunkKey> {
        let a = self.cell_at(rect, rect.min);
        let b = self.cell_at(rect, rect.max);
        let c = CHUNK as f64;
        let range = |lo: f64, hi: f64| ((lo / c).floor() as i64 - 1)..=((hi / c).floor() as i64 + 1);
        let mut keys: Vec<ChunkKey> =
            range(a[1], b[1]).flat_map(|cy| range(a[0], b[0]).map(move |cx| (cx, cy))).collect();
        let centre = [self.centre[0] / c - 0.5, self.centre[1] / c - 0.5];
        let dist = |k: &ChunkKey| {
            let (dx, dy) = (k.0 as f64 - centre[0], k.1 as f64 - centre[1]);
            dx * dx + dy * dy
        };
        keys.sort_by(|p, q| dist(p).total_cmp(&dist(q)));
        keys
    }
}

/// The world window (see the module docs).
pub struct WorldApp {
    chunks: WorldChunks,
    camera: WorldCamera,
    textures: HashMap<ChunkKey, TextureHandle>,
    name: String,
    /// The status line's cursor text, from the last frame.
    status_text: String,
}

impl WorldApp {
    /// The world view of `world`, named `name` in the title.
    pub fn new(world: World, name: &str) -> Self {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).max(1);
        Self {
            chunks: WorldChunks::new(world, threads),
            camera: WorldCamera::default(),
            textures: HashMap::new(),
            name: name.to_string(),
            status_text: String::new(),
        }
    }

    /// The camera (tests and screenshots).
    pub fn camera_mut(&mut self) -> &mut WorldCamera {
        &mut self.camera
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
        let mut status = String::new();
        let camera = self.camera;
        let busy = self.chunks.busy();
        let error = self.chunks.error.clone();
        let name = self.name.clone();
        let status_bar = |ui: &mut egui::Ui, status: &str| {
            ui.horizontal(|ui| {
                ui.label(format!(
                    "World `{name}`: drag to pan, scroll to zoom ({:.2} points per cell). {status}",
                    camera.points_per_cell
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
        egui::Panel::bottom("world-status").show(root, |ui| status_bar(ui, &hover));
        egui::CentralPanel::default().frame(egui::Frame::NONE).show(root, |ui| {
            let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
            if response.dragged() {
                self.camera.pan(response.drag_delta());
            }
            if let Some(p) = response.hover_pos() {
                let scroll = ui.input(|i| i.smooth_scroll_delta.y);
                let zoom = ui.input(|i| i.zoom_delta()) * (scroll / 200.0).exp();
                if zoom != 1.0 {
                    self.camera.zoom_at(rect, p, zoom);
                }
                let c = self.camera.cell_at(rect, p);
                let (x, y) = (c[0].floor() as i64, c[1].floor() as i64);
                let key = (x.div_euclid(CHUNK as i64), y.div_euclid(CHUNK as i64));
                let h = self.chunks.get(key).map(|ch| {
                    let (i, j) = (x.rem_euclid(CHUNK as i64) as usize, y.rem_euclid(CHUNK as i64) as usize);
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
            let keys = self.camera.visible_chunks(rect);
            self.chunks.want(&keys);
            let painter = ui.painter_at(rect);
            painter.rect_filled(rect, 0.0, Color32::from_gray(40));
            let uv = Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0));
            for key in &keys {
                let c = CHUNK as f64;
                let a = self.camera.screen_at(rect, [key.0 as f64 * c, key.1 as f64 * c]);
                let b = self.camera.screen_at(rect, [(key.0 + 1) as f64 * c, (key.1 + 1) as f64 * c]);
                if let Some(tex) = self.textures.get(key) {
                    painter.image(tex.id(), Rect::from_min_max(a, b), uv, Color32::WHITE);
                }
            }
        });
        self.status_text = status;
        if self.chunks.busy() {
            ctx.request_repaint_after(std::time::Duration::from_millis(30));
        }
    }
}

impl eframe::App for WorldApp {
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
        let a = chunk_rgba(&w, (-1, 0)).unwrap();
        let b = chunk_rgba(&w, (0, 0)).unwrap();
        let direct = w.window(-(CHUNK as i64), 0, CHUNK, CHUNK, &PipelineProgress::new()).unwrap();
        assert_eq!(a.heights, direct.height.as_slice());
        // The last column of chunk a and the first of chunk b are neighbours in the world: a
        // window straddling both gives them the same colours.
        let half = CHUNK as i64 / 2;
        let (mid, _) = window_rgba(&w, -half, 0).unwrap();
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
        let key = (-2, 1);
        let chunk = chunk_rgba(&w, key).unwrap();
        let window = Window::new(key.0 * CHUNK as i64, key.1 * CHUNK as i64, CHUNK, CHUNK).unwrap();
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
        let keys = [(0, 0), (-1, 0), (0, -1), (5, 7)];
        chunks.want(&keys);
        chunks.wait();
        for k in keys {
            let c = chunks.get(k).unwrap_or_else(|| panic!("chunk {k:?} missing"));
            assert_eq!(c.rgba.len(), CHUNK * CHUNK * 4);
            assert_eq!(c.key, k);
        }
        assert!(chunks.error.is_none() && !chunks.busy());
        assert_eq!(chunks.cached(), 4);
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
        assert!(keys.contains(&(-3, -3)) && keys.contains(&(2, 2)) && !keys.contains(&(3, 0)));
        assert!(keys[..4].iter().all(|k| [(-1, -1), (0, -1), (-1, 0), (0, 0)].contains(k)), "{keys:?}");
    }
}
