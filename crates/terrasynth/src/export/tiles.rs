//! Tile sets of an endless world for game engines: `C × R` tiles of `N × N` cells, tile
//! `(i, j)` the window at `(X + i·(N − 1), Y + j·(N − 1))`, so neighbours share their edge row
//! and column as engine landscapes expect (Unreal World Partition's tiled import, Unity's
//! terrain grid, Terrain3D regions: research/anchors-scale.md §4).
//!
//! Each piece is a plain call that a task scheduler (Dask, a job queue, one process per tile)
//! can run on its own:
//! - [`TileLayout::new`] checks the layout (and the engine's tile sizes) without touching a file;
//! - [`write_manifest`] writes `DIR/world.json` ([`WorldManifest`]: every tile's window, folder
//!   and files, the world height range in metres, seed, resolved recipe, version, the engine's
//!   naming and import figures), or checks that an existing one describes the same tile set;
//! - [`write_tile`] writes one tile into `DIR/x{i}_y{j}/`: computed into `DIR/.x{i}_y{j}.partial`
//!   and renamed when complete, so a killed run leaves no partial tile and a rerun skips the
//!   tiles already there;
//! - [`write_tiles`] does both for every tile, several tiles at a time on the caller's rayon
//!   pool (at most [`TileOptions::concurrent_tiles`] tiles in memory, whatever the world size).
//!
//! The tiles hold the files that line up across tile edges ([`ExportOptions::seamless_only`]):
//! heights (16-bit files on the world's height range, EXR/TIFF in metres), colour, hillshade
//! and shaded images (shaded from a window grown by one cell, so edges match), the mesh
//! (normals one-sided at the tile edge). The hydrology layers are left out: rivers and lakes
//! depend on whole drainage basins (research/anchors-scale.md §1: every tiled tool blends or
//! differs there).
//!
//! ```
//! use terrasynth::World;
//! use terrasynth::export::tiles::{TileLayout, TileOptions, write_tiles};
//! use terrasynth::recipe::Recipe;
//!
//! let mut recipe = Recipe::from_toml_str(r#"
//! cell-size = 30.0
//! [world]
//! height-range = [-1000.0, 2000.0]
//! [exports]
//! glb = false
//! images = false
//! [[steps]]
//! type = "noise"
//! feature-size-m = 3000.0
//! [[steps]]
//! type = "normalize"
//! input-range = [-1.0, 1.0]
//! min = -1000.0
//! max = 2000.0
//! "#)?;
//! let world = World::new(recipe)?;
//! let layout = TileLayout::new((-10, 5), (2, 2), 17, None)?;
//! let dir = std::env::temp_dir().join(format!("terrasynth-tiles-doc-{}", std::process::id()));
//! let done = write_tiles(&dir, &world, &layout, &TileOptions::default())?;
//! assert_eq!(done.written, 4);
//! assert!(dir.join("x1_y1/height.tif").exists() && dir.join("world.json").exists());
//! // A rerun skips the complete tiles.
//! assert_eq!(write_tiles(&dir, &world, &layout, &TileOptions::default())?.skipped, 4);
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), terrasynth::Error>(())
//! ```

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde::Serialize;

use super::{ExportOptions, Report, Window, file_names, run_window};
use crate::io::engine::{Engine, EngineImport};
use crate::io::geojson::write_json;
use crate::recipe::{PipelineProgress, Recipe, World, registry};
use crate::{Error, Progress, Result};

/// Most tiles per side of a tile set.
pub const MAX_TILES_PER_SIDE: usize = 4096;

/// Where the tiles of a tile set are and what they hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileLayout {
    /// World cell of tile (0, 0)'s first cell.
    pub origin: (i64, i64),
    /// Columns and rows of tiles.
    pub tiles: (usize, usize),
    /// Cells per tile side (neighbours share one row/column).
    pub tile: usize,
    /// Target engine: its tile sizes, naming and import figures.
    pub engine: Option<Engine>,
}

impl TileLayout {
    /// A checked layout: `tiles` each in 1..=[`MAX_TILES_PER_SIDE`], `tile` in
    /// 2..=`MAX_RECIPE_SIDE` (and a size the engine imports as a tile), every tile's window
    /// within the world's coordinate limits ([`Window::new`]).
    pub fn new(
        origin: (i64, i64),
        tiles: (usize, usize),
        tile: usize,
        engine: Option<Engine>,
    ) -> Result<Self> {
        let (c, r) = tiles;
        if !(1..=MAX_TILES_PER_SIDE).contains(&c) || !(1..=MAX_TILES_PER_SIDE).contains(&r) {
            return Err(Error::param(
                "tiles",
                format!("{c}x{r}"),
                format!("CxR with each in 1..={MAX_TILES_PER_SIDE}"),
            ));
        }
        // The first tile checks the size; the last one the far corner.
        Window::new(origin.0, origin.1, tile, tile)?;
        if let Some(e) = engine
            && !engine_tile_ok(e, tile)
        {
            return Err(Error::param(format!("tile size for {}", e.name()), tile, engine_tile_sizes(e)));
        }
        let layout = Self { origin, tiles, tile, engine };
        let step = (tile - 1) as i64;
        let far = |o: i64, n: usize| o.checked_add(step.checked_mul(n as i64 - 1)?);
        match (far(origin.0, c), far(origin.1, r)) {
            (Some(x), Some(y)) => Window::new(x, y, tile, tile).map_err(|_| {
                Error::param(
                    "tile set",
                    format!("{c}x{r} tiles of {tile} at {},{}", origin.0, origin.1),
                    format!("every tile within ±{} world cells", super::MAX_WORLD_CELL - 1),
                )
            })?,
            _ => {
                return Err(Error::param(
                    "tile set",
                    format!("{c}x{r} tiles of {tile}"),
                    "a world position that fits in 64 bits",
                ));
            }
        };
        Ok(layout)
    }

    /// The window of tile `(i, j)`.
    pub fn window(&self, i: usize, j: usize) -> Window {
        let step = (self.tile - 1) as i64;
        Window {
            x0: self.origin.0 + i as i64 * step,
            y0: self.origin.1 + j as i64 * step,
            width: self.tile,
            height: self.tile,
        }
    }

    /// Every tile, row by row.
    pub fn indices(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.tiles.1).flat_map(move |j| (0..self.tiles.0).map(move |i| (i, j)))
    }

    /// Number of tiles.
    pub fn count(&self) -> usize {
        self.tiles.0 * self.tiles.1
    }

    /// Cells of the whole tile set per side: `C·(N − 1) + 1` × `R·(N − 1) + 1`.
    pub fn extent(&self) -> (usize, usize) {
        (self.tiles.0 * (self.tile - 1) + 1, self.tiles.1 * (self.tile - 1) + 1)
    }
}

/// Folder of tile `(i, j)` inside the tile set's folder.
pub fn tile_dir_name(i: usize, j: usize) -> String {
    format!("x{i}_y{j}")
}

/// Terrain3D's region sizes (`Terrain3D::RegionSize`, 64..=2048 in src/terrain_3d.h of
/// Terrain3D 1.0): a Godot tile of `n` cells fills one region of `n − 1`.
pub const TERRAIN3D_REGION_SIZES: &[usize] = &[64, 128, 256, 512, 1024, 2048];

/// Whether `n` cells a side is a tile `engine` imports: Unreal any landscape size
/// ([`Engine::is_valid_side`]); Unity `2^k + 1` in 33..=4097; Godot one Terrain3D region plus
/// the shared edge, `r + 1` for r in [`TERRAIN3D_REGION_SIZES`].
pub fn engine_tile_ok(engine: Engine, n: usize) -> bool {
    match engine {
        Engine::Godot => TERRAIN3D_REGION_SIZES.iter().any(|&r| r + 1 == n),
        _ => engine.is_valid_side(n),
    }
}

/// The allowed tile sizes of `engine`, in words.
fn engine_tile_sizes(engine: Engine) -> String {
    let list =
        |sizes: &mut dyn Iterator<Item = usize>| sizes.map(|s| s.to_string()).collect::<Vec<_>>().join(", ");
    match engine {
        Engine::Unreal => {
            format!("an Unreal landscape size C·S·Q+1, e.g. {}", list(&mut engine.sizes().iter().copied()))
        }
        Engine::Unity => format!("one of {}", list(&mut engine.sizes().iter().copied())),
        Engine::Godot => format!(
            "a Terrain3D region size + 1, one of {}",
            list(&mut TERRAIN3D_REGION_SIZES.iter().map(|r| r + 1))
        ),
    }
}

/// The engine-named file of tile `(i, j)` in `DIR/<engine>/`, and the tile file it copies.
fn engine_file(
    engine: Engine,
    name: &str,
    layout: &TileLayout,
    files: &[String],
    i: usize,
    j: usize,
) -> Option<(String, String)> {
    let pick = |prefs: &[&str]| prefs.iter().find(|f| files.iter().any(|g| g == *f)).map(|f| f.to_string());
    let ext = |f: &str| f.rsplit('.').next().unwrap_or("").to_string();
    match engine {
        // Epic's tiled import parses `<name>_x<i>_y<j>` (FLandscapeImportHelper::ExtractCoordinates).
        Engine::Unreal => {
            pick(&["height.png", "height.r16"]).map(|f| (format!("{name}_x{i}_y{j}.{}", ext(&f)), f))
        }
        // Unity's Terrain Toolbox batch import reads `Name_X_Z`, Z growing north: our row j
        // grows south.
        Engine::Unity => {
            pick(&["height.raw"]).map(|f| (format!("{name}_{i}_{}.raw", layout.tiles.1 - 1 - j), f))
        }
        // Terrain3D imports each tile at its position (world.json `position_m`).
        Engine::Godot => {
            pick(&["height.exr", "height.r16"]).map(|f| (format!("{name}_x{i}_y{j}.{}", ext(&f)), f))
        }
    }
}

/// `DIR/world.json`: the tile set, written before any tile and the same on every rerun.
#[derive(Clone, Debug, Serialize)]
pub struct WorldManifest {
    /// Version of the library that wrote it.
    pub version: String,
    /// The recipe seed (a string above 2^63 − 1, as in the recipe).
    #[serde(serialize_with = "crate::recipe::model::seed_form::serialize")]
    pub seed: u64,
    /// The resolved recipe (every default filled in).
    pub recipe: Recipe,
    /// World cell of tile (0, 0)'s first cell, `[x, y]` (x east, y south).
    pub origin: [i64; 2],
    /// Tiles, `[columns, rows]`.
    pub tiles: [usize; 2],
    /// Cells per tile side; neighbouring tiles share one row or column.
    pub tile_size: usize,
    /// Cells of the whole set, `[width, height]`.
    pub extent: [usize; 2],
    /// Metres between cells.
    pub cell_size_m: f64,
    /// The world's height range in metres: 0 and 65535 of every tile's 16-bit files.
    pub height_range_m: [f64; 2],
    /// Files in every tile folder (report.json included).
    pub files: Vec<String>,
    /// Files the tiles leave out, and why.
    pub not_tiled: String,
    /// Engine naming and import figures, with `--engine`.
    pub engine: Option<EngineTiles>,
    /// Every tile, row by row.
    pub tile_list: Vec<TileEntry>,
}

/// An engine's view of the tile set in world.json.
#[derive(Clone, Debug, Serialize)]
pub struct EngineTiles {
    /// Engine name.
    pub engine: Engine,
    /// Folder (inside the tile set's) of the engine-named height files.
    pub folder: String,
    /// How the files there are named.
    pub naming: String,
    /// Import figures of one tile (every tile has the same: the world's height range).
    pub import: EngineImport,
}

/// One tile in world.json.
#[derive(Clone, Debug, Serialize)]
pub struct TileEntry {
    /// Column of tiles.
    pub i: usize,
    /// Row of tiles.
    pub j: usize,
    /// Its folder.
    pub dir: String,
    /// Its world window.
    pub window: Window,
    /// World position of its first cell in metres, `[x, y]` (engine import offset).
    pub position_m: [f64; 2],
    /// The engine-named height file (relative to the tile set's folder), with `--engine`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_file: Option<String>,
}

impl WorldManifest {
    /// The manifest of `layout` for `world`.
    pub fn new(world: &World, layout: &TileLayout) -> Self {
        let recipe = world.recipe();
        let files: Vec<String> =
            file_names(recipe, layout.engine, true).into_iter().chain(["report.json".to_string()]).collect();
        let cell = recipe.cell_size;
        let range = world.height_range();
        let name = crate::io::safe_file_stem(&recipe.name, "world");
        let engine = layout.engine.map(|e| EngineTiles {
            engine: e,
            folder: e.name().to_string(),
            naming: match e {
                Engine::Unreal => format!("{name}_x{{i}}_y{{j}}: Epic's tiled landscape import"),
                Engine::Unity => format!("{name}_{{i}}_{{z}} with z = rows − 1 − j (Unity's Z grows north)"),
                Engine::Godot => format!("{name}_x{{i}}_y{{j}}, imported at position_m"),
            },
            import: EngineImport::new(e, layout.tile, cell, range[0], range[1]),
        });
        let tile_list = layout
            .indices()
            .map(|(i, j)| {
                let w = layout.window(i, j);
                TileEntry {
                    i,
                    j,
                    dir: tile_dir_name(i, j),
                    window: w,
                    position_m: [w.x0 as f64 * cell, w.y0 as f64 * cell],
                    engine_file: layout
                        .engine
                        .and_then(|e| engine_file(e, &name, layout, &files, i, j))
                        .map(|(f, _)| format!("{}/{f}", e_name(layout))),
                }
            })
            .collect();
        let (ew, eh) = layout.extent();
        Self {
            version: env!("CARGO_PKG_VERSION").to_string(),
            seed: recipe.seed,
            recipe: world.pipeline().resolved_recipe(&registry()),
            origin: [layout.origin.0, layout.origin.1],
            tiles: [layout.tiles.0, layout.tiles.1],
            tile_size: layout.tile,
            extent: [ew, eh],
            cell_size_m: cell,
            height_range_m: range,
            files,
            not_tiled:
                "water.png, flow.png, biomes.png, splat.png, rivers.geojson: rivers and lakes depend on \
                        whole drainage basins, so per-tile layers would not match across tile edges"
                    .to_string(),
            engine,
            tile_list,
        }
    }
}

fn e_name(layout: &TileLayout) -> &'static str {
    layout.engine.map_or("", |e| e.name())
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

/// Writes `dir/world.json` for `layout` (creating `dir`), or, if it exists, checks that it
/// describes the same tile set (a rerun resumes it); a different one is refused naming the
/// first differing field. Also removes partial tiles left by a killed run.
pub fn write_manifest(dir: &Path, world: &World, layout: &TileLayout) -> Result<WorldManifest> {
    let manifest = WorldManifest::new(world, layout);
    let path = dir.join("world.json");
    if dir.exists() && !dir.is_dir() {
        return Err(Error::param("tile set folder", dir.display(), "a folder (or a path to create)"));
    }
    if path.exists() {
        let old: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).map_err(io_err(&path))?).map_err(|e| {
                Error::Io {
                    path: path.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                }
            })?;
        let new = serde_json::to_value(&manifest)
            .map_err(|e| Error::Io { path: path.clone(), source: std::io::Error::other(e) })?;
        if old != new {
            let key = new
                .as_object()
                .and_then(|n| n.iter().find(|(k, v)| old.get(k.as_str()) != Some(v)).map(|(k, _)| k.clone()))
                .unwrap_or_else(|| "a field".into());
            return Err(Error::param(
                "tile set folder",
                dir.display(),
                format!(
                    "an empty folder or one holding the same tile set: its world.json differs in `{key}`; \
                     pick another --out or remove it"
                ),
            ));
        }
    } else {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        write_json(&path, &manifest)?;
    }
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let entry = entry.map_err(io_err(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(".x") && name.ends_with(".partial") {
            std::fs::remove_dir_all(entry.path()).map_err(io_err(&entry.path()))?;
        }
    }
    Ok(manifest)
}

/// Options of [`write_tile`] and [`write_tiles`].
#[derive(Clone, Debug)]
pub struct TileOptions {
    /// Tiles computed at the same time by [`write_tiles`] (each itself parallel); memory is
    /// about this many tiles. Default: the pool's threads, at most 4.
    pub concurrent_tiles: usize,
    /// Cancellation, checked before each tile and each file.
    pub progress: Progress,
}

impl Default for TileOptions {
    fn default() -> Self {
        Self { concurrent_tiles: rayon::current_num_threads().clamp(1, 4), progress: Progress::new() }
    }
}

/// What [`write_tile`] did.
#[derive(Clone, Debug)]
pub enum TileOutcome {
    /// The tile was complete already.
    Skipped,
    /// The tile was written; its report.
    Written(Box<Report>),
}

/// Writes tile `(i, j)` of `layout` into `dir/x{i}_y{j}/` unless it is complete already: the
/// window grown by the margin is run, exported into `dir/.x{i}_y{j}.partial` and renamed when
/// every file is there. With an engine, also links its engine-named height file. `dir` must
/// hold the tile set's world.json ([`write_manifest`]).
pub fn write_tile(
    dir: &Path,
    world: &World,
    layout: &TileLayout,
    (i, j): (usize, usize),
    opts: &TileOptions,
) -> Result<TileOutcome> {
    if i >= layout.tiles.0 || j >= layout.tiles.1 {
        return Err(Error::param(
            "tile",
            format!("({i}, {j})"),
            format!("i in 0..{} and j in 0..{}", layout.tiles.0, layout.tiles.1),
        ));
    }
    let done = dir.join(tile_dir_name(i, j));
    let outcome = if done.join("report.json").is_file() {
        TileOutcome::Skipped
    } else {
        opts.progress.check_cancelled()?;
        if done.exists() {
            // Not made by a rename of a complete tile: stale, write it again.
            std::fs::remove_dir_all(&done).map_err(io_err(&done))?;
        }
        let partial = dir.join(format!(".{}.partial", tile_dir_name(i, j)));
        if partial.exists() {
            std::fs::remove_dir_all(&partial).map_err(io_err(&partial))?;
        }
        let window = layout.window(i, j);
        let progress = PipelineProgress::new();
        let run = run_window(world.pipeline(), &window, &progress, &mut ())?;
        let export = ExportOptions {
            engine: layout.engine,
            threads: rayon::current_num_threads(),
            window: Some(window),
            seamless_only: true,
            progress: opts.progress.clone(),
            ..ExportOptions::default()
        };
        let report = super::write(&partial, &run, world.pipeline(), &export)?;
        drop(run);
        std::fs::rename(&partial, &done).map_err(io_err(&done))?;
        TileOutcome::Written(Box::new(report))
    };
    if let Some(e) = layout.engine {
        link_engine_file(dir, world, layout, e, i, j)?;
    }
    Ok(outcome)
}

/// Makes `dir/<engine>/<engine name>` point at the tile's height file (a hard link, or a copy
/// where links fail), atomically; kept if already there.
fn link_engine_file(
    dir: &Path,
    world: &World,
    layout: &TileLayout,
    e: Engine,
    i: usize,
    j: usize,
) -> Result<()> {
    let recipe = world.recipe();
    let name = crate::io::safe_file_stem(&recipe.name, "world");
    let files = file_names(recipe, Some(e), true);
    let Some((target, source)) = engine_file(e, &name, layout, &files, i, j) else {
        return Ok(());
    };
    let folder = dir.join(e.name());
    std::fs::create_dir_all(&folder).map_err(io_err(&folder))?;
    let dest = folder.join(&target);
    if dest.exists() {
        return Ok(());
    }
    let src = dir.join(tile_dir_name(i, j)).join(source);
    let tmp = folder.join(format!(".{target}.partial"));
    let _ = std::fs::remove_file(&tmp);
    if std::fs::hard_link(&src, &tmp).is_err() {
        std::fs::copy(&src, &tmp).map_err(io_err(&tmp))?;
    }
    std::fs::rename(&tmp, &dest).map_err(io_err(&dest))
}

/// What [`write_tiles`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TilesSummary {
    /// Tiles written by this call.
    pub written: usize,
    /// Tiles that were complete already.
    pub skipped: usize,
    /// The tile set's folder.
    pub dir: PathBuf,
}

/// Writes world.json and every tile of `layout` ([`write_manifest`], then [`write_tile`] for
/// each), [`TileOptions::concurrent_tiles`] tiles at a time on the caller's rayon pool. The
/// first error stops the tiles not yet started and is returned; complete tiles stay.
pub fn write_tiles(
    dir: &Path,
    world: &World,
    layout: &TileLayout,
    opts: &TileOptions,
) -> Result<TilesSummary> {
    // Each tile in flight holds about a dozen f32 grids of its grown window (pipeline and
    // export), 48 bytes per cell: refused up front rather than half-way through the set.
    let side = layout.tile + 2 * super::window::WINDOW_MARGIN;
    let at_once = opts.concurrent_tiles.max(1) as u64;
    crate::memory::check_cells(side, side, 48 * at_once, "the tiles computed at once")?;
    write_manifest(dir, world, layout)?;
    let all: Vec<(usize, usize)> = layout.indices().collect();
    let next = AtomicUsize::new(0);
    let (written, skipped) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    // Each worker takes the next tile when its tile is done: at most `concurrent_tiles` tiles
    // are in memory, and each tile's own work is parallel on the pool.
    rayon::scope(|s| {
        for _ in 0..opts.concurrent_tiles.max(1) {
            s.spawn(|_| {
                while !failed.load(Ordering::Acquire) {
                    let k = next.fetch_add(1, Ordering::AcqRel);
                    let Some(&tile) = all.get(k) else { break };
                    match write_tile(dir, world, layout, tile, opts) {
                        Ok(TileOutcome::Skipped) => skipped.fetch_add(1, Ordering::AcqRel),
                        Ok(TileOutcome::Written(_)) => written.fetch_add(1, Ordering::AcqRel),
                        Err(e) => {
                            failed.store(true, Ordering::Release);
                            if let Ok(mut slot) = first_error.lock() {
                                slot.get_or_insert(e);
                            }
                            break;
                        }
                    };
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(TilesSummary { written: written.into_inner(), skipped: skipped.into_inner(), dir: dir.to_path_buf() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_share_edges_and_span_the_extent() {
        let l = TileLayout::new((-7, 3), (3, 2), 9, None).unwrap();
        assert_eq!(l.window(0, 0), Window { x0: -7, y0: 3, width: 9, height: 9 });
        assert_eq!(l.window(2, 1), Window { x0: -7 + 16, y0: 3 + 8, width: 9, height: 9 });
        assert_eq!(l.extent(), (25, 17));
        assert_eq!(l.indices().collect::<Vec<_>>(), vec![(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]);
    }

    #[test]
    fn bad_layouts_name_the_allowed_range() {
        let e = TileLayout::new((0, 0), (0, 2), 9, None).unwrap_err().to_string();
        assert!(e.contains("1..=4096"), "{e}");
        let e = TileLayout::new((0, 0), (2, 2), 1, None).unwrap_err().to_string();
        assert!(e.contains("2..="), "{e}");
        let e = TileLayout::new((0, 0), (2, 2), 1000, Some(Engine::Unity)).unwrap_err().to_string();
        assert!(e.contains("1025"), "{e}");
        let e = TileLayout::new((0, 0), (2, 2), 1025, Some(Engine::Unreal)).unwrap_err().to_string();
        assert!(e.contains("1009"), "{e}");
        assert!(TileLayout::new((0, 0), (2, 2), 1009, Some(Engine::Unreal)).is_ok());
        let e = TileLayout::new((0, 0), (2, 2), 4097, Some(Engine::Godot)).unwrap_err().to_string();
        assert!(e.contains("65, 129, 257, 513, 1025, 2049"), "{e}");
        assert!(TileLayout::new((0, 0), (2, 2), 2049, Some(Engine::Godot)).is_ok());
        let far = super::super::MAX_WORLD_CELL - 20;
        let e = TileLayout::new((far, 0), (4, 1), 9, None).unwrap_err().to_string();
        assert!(e.contains("world cells"), "{e}");
    }

    #[test]
    fn engine_names_follow_each_importer() {
        let l = TileLayout::new((0, 0), (2, 3), 33, None).unwrap();
        let files: Vec<String> = ["height.png", "height.raw", "height.exr"].map(String::from).to_vec();
        let f = |e| engine_file(e, "w", &l, &files, 1, 0).unwrap().0;
        assert_eq!(f(Engine::Unreal), "w_x1_y0.png");
        assert_eq!(f(Engine::Unity), "w_1_2.raw");
        assert_eq!(f(Engine::Godot), "w_x1_y0.exr");
    }
}
