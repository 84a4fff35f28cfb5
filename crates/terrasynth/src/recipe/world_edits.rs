//! Hand edits on an endless world: brush strokes and placed rivers in **world cell
//! coordinates**, stored per chunk, replayed on any window so that **an edited window equals the
//! same cells cut from any larger edited window, bit for bit** (issue 11, part 5).
//!
//! A [`WorldEdit`] is a brush stroke (the finite editor's brushes, seed 004 §10, see
//! [`crate::shape::brush`]: raise, lower, flatten toward one target per stroke, smooth toward the
//! 3×3 box mean) whose dab centres and radius are world cells, or a river source at a world
//! cell. [`WorldEdits`] holds them in the order they were made (each has a sequence number) and
//! indexes them by the chunks of [`WORLD_EDIT_CHUNK`] cells they may change, so a window reads
//! only the edits of the chunks around it ([`WorldEdits::touching`]).
//!
//! [`edited_window`] computes a window of `world` with the edits: it runs the world on a grown
//! window, replays the edits that can reach the requested cells in order, and cuts the result.
//!
//! **What is exact.** Every edit is defined on the endless plane, so its result at a cell does
//! not depend on the window:
//! - raise and lower change a cell from its own height and its world position (the fall-off
//!   `smoothstep(1 − d/r)` with `d` measured from the world cell `X as f64 − centre`): pointwise,
//!   exact on any window;
//! - flatten blends toward the fall-off-weighted mean of the stroke's **first dab's disc** (as
//!   the finite editor: one target per stroke); it needs the heights of that disc;
//! - smooth reads the 3×3 neighbours before each dab; a stroke's result on its cells depends on
//!   the heights of its footprint grown by one cell (and on nothing else);
//! - a river source traces a river on its **own region**, the square of `2·reach + 1` cells
//!   centred on the source (fixed by the source, never by the window): the ε-filled surface of
//!   that square ([`RiverMode::Filled`], Barnes et al. 2014), from the source down to the sea or
//!   the square's edge, and carves the path: each cell closer than `width` cells to a path
//!   point `p` moves toward the bed `h_p − depth` by the brush fall-off `f(d)` (never up):
//!   `h ← h + f(d) · min(0, h_p − depth − h)`. So a placed river runs at most `reach` cells from
//!   its source.
//!
//! Each edit thus has a **footprint** (the cells it may change) and an **input region** (the
//! cells its result reads besides a cell's own height: none, the first disc, the footprint grown
//! by 1, the river's square). [`edited_window`] walks the edits backwards from the requested
//! window: an edit whose footprint meets the cells needed after it adds its input region to the
//! cells needed before it. The world is generated on the resulting rectangle, every edit is
//! replayed there, and cells outside the needed ones (which may read a clipped neighbourhood)
//! are cut off. The result is exact, bit for bit: `tests` check windows against crops of larger
//! windows for every edit kind, with negative and far origins.
//!
//! ```
//! use terrasynth::recipe::{PipelineProgress, World};
//! use terrasynth::recipe::world_edits::{WorldEdit, WorldEdits, edited_window};
//! use terrasynth::shape::brush::BrushMode;
//! let world = World::from_preset("world").unwrap();
//! let mut edits = WorldEdits::new();
//! edits.push(WorldEdit::Stroke {
//!     mode: BrushMode::Raise, radius: 6.0, strength: 50.0, dabs: vec![[-3.0, 2.5], [4.0, 2.5]],
//! }).unwrap();
//! let p = PipelineProgress::new();
//! let big = edited_window(&world, &edits, -20, -10, 40, 24, &p).unwrap();
//! let small = edited_window(&world, &edits, -5, 0, 9, 5, &p).unwrap();
//! assert_eq!(small.terrain.height.row(0), &big.terrain.height.row(10)[15..24]);
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::hydro::{RiverMode, source_rivers};
use crate::recipe::pipeline::PipelineProgress;
use crate::recipe::world::World;
use crate::shape::brush::{Brush, BrushMode};
use crate::step::Terrain;
use crate::{Error, Heightmap, Result};

/// Side, in cells, of the chunks edits are filed under: chunk `(cx, cy)` holds the edits that
/// may change a cell of world cells `cx·S ..< (cx+1)·S` × `cy·S ..< (cy+1)·S`.
pub const WORLD_EDIT_CHUNK: usize = 256;

/// Largest side, in cells, of an edit's footprint (a stroke's dabs plus radius, a river's
/// square plus its width): larger edits are refused, so a window never needs more than a few
/// thousand cells of world around it.
pub const MAX_EDIT_SPAN: i64 = 8192;

/// Largest |coordinate| of a dab centre or river source, in cells (2⁴⁰: world positions stay
/// exact in `f64` with room for the fractions of dab centres).
pub const MAX_WORLD_CELL: f64 = 1_099_511_627_776.0;

/// Default half side of a river source's region, cells (a 513² square).
pub const DEFAULT_RIVER_REACH: usize = 256;
/// Allowed half sides of a river source's region, cells.
pub const RIVER_REACH_RANGE: [usize; 2] = [8, 2048];
/// Default depth a placed river carves below its water surface, metres.
pub const DEFAULT_RIVER_DEPTH_M: f32 = 4.0;
/// Default half width of a placed river's carve, cells.
pub const DEFAULT_RIVER_WIDTH: f64 = 2.0;
/// Largest half width of a placed river's carve, cells.
pub const MAX_RIVER_WIDTH: f64 = 64.0;

/// One hand edit of a world (module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorldEdit {
    /// A terraforming stroke: one brush dab at each centre, in order.
    Stroke {
        /// Raise, lower, flatten or smooth.
        mode: BrushMode,
        /// Brush radius, cells, in (0, [`MAX_RADIUS`](crate::shape::brush::MAX_RADIUS)].
        radius: f64,
        /// Metres for raise/lower (≥ 0); a fraction in [0, 1] for flatten and smooth.
        strength: f32,
        /// Dab centres `[x, y]`, world cells (cell centres at integers).
        dabs: Vec<[f64; 2]>,
    },
    /// A river source at world cell `(x, y)`, traced and carved within its region.
    RiverSource {
        /// World column.
        x: i64,
        /// World row.
        y: i64,
        /// Half side of the river's region, cells ([`RIVER_REACH_RANGE`]).
        #[serde(default = "default_reach")]
        reach: usize,
        /// Carve depth below the water surface, metres (≥ 0; 0 draws the river without
        /// carving).
        #[serde(default = "default_depth", rename = "depth-m")]
        depth_m: f32,
        /// Half width of the carve, cells, in (0, [`MAX_RIVER_WIDTH`]].
        #[serde(default = "default_width")]
        width: f64,
    },
}

fn default_reach() -> usize {
    DEFAULT_RIVER_REACH
}
fn default_depth() -> f32 {
    DEFAULT_RIVER_DEPTH_M
}
fn default_width() -> f64 {
    DEFAULT_RIVER_WIDTH
}

/// A rectangle of world cells `x0 ..< x1` × `y0 ..< y1` (empty when `x1 ≤ x0` or `y1 ≤ y0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CellRect {
    /// First column.
    pub x0: i64,
    /// First row.
    pub y0: i64,
    /// Column after the last.
    pub x1: i64,
    /// Row after the last.
    pub y1: i64,
}

impl CellRect {
    /// The `w × h` rectangle at `(x0, y0)`.
    pub fn at(x0: i64, y0: i64, w: usize, h: usize) -> Self {
        Self { x0, y0, x1: x0 + w as i64, y1: y0 + h as i64 }
    }

    /// Whether no cell is inside.
    pub fn is_empty(&self) -> bool {
        self.x1 <= self.x0 || self.y1 <= self.y0
    }

    /// Whether the two share a cell.
    pub fn meets(&self, o: &CellRect) -> bool {
        !self.is_empty()
            && !o.is_empty()
            && self.x0 < o.x1
            && o.x0 < self.x1
            && self.y0 < o.y1
            && o.y0 < self.y1
    }

    /// The smallest rectangle holding both (an empty one is ignored).
    pub fn union(&self, o: &CellRect) -> CellRect {
        if self.is_empty() {
            return *o;
        }
        if o.is_empty() {
            return *self;
        }
        CellRect {
            x0: self.x0.min(o.x0),
            y0: self.y0.min(o.y0),
            x1: self.x1.max(o.x1),
            y1: self.y1.max(o.y1),
        }
    }

    /// Grown by `m` cells on every side.
    pub fn grown(&self, m: i64) -> CellRect {
        CellRect { x0: self.x0 - m, y0: self.y0 - m, x1: self.x1 + m, y1: self.y1 + m }
    }

    /// Whether `o` lies inside.
    pub fn contains(&self, o: &CellRect) -> bool {
        o.is_empty() || (self.x0 <= o.x0 && self.y0 <= o.y0 && o.x1 <= self.x1 && o.y1 <= self.y1)
    }

    /// Width in cells.
    pub fn width(&self) -> usize {
        (self.x1 - self.x0).max(0) as usize
    }

    /// Height in cells.
    pub fn height(&self) -> usize {
        (self.y1 - self.y0).max(0) as usize
    }
}

/// The bounding box of a disc of `radius` around `(cx, cy)`: the cells `ceil(c − r) ..= floor(c + r)`
/// (the finite brush's bounds).
fn disc_rect(c: [f64; 2], radius: f64) -> CellRect {
    CellRect {
        x0: (c[0] - radius).ceil() as i64,
        y0: (c[1] - radius).ceil() as i64,
        x1: (c[0] + radius).floor() as i64 + 1,
        y1: (c[1] + radius).floor() as i64 + 1,
    }
}

/// The brush fall-off `smoothstep(t) = t²(3 − 2t)` for `t` clamped to [0, 1] (seed 004 §10; the
/// same expression as the finite brush, so a stroke at the world origin has its bits).
#[inline]
fn falloff(t: f64) -> f64 {
    terrasynth_noise::detmath::smoothstep(t)
}

impl WorldEdit {
    /// Checks every field (one error naming the field and the allowed range).
    pub fn validate(&self) -> Result<()> {
        match self {
            WorldEdit::Stroke { mode, radius, strength, dabs } => {
                if dabs.is_empty() {
                    return Err(Error::param("dabs", "[]", "at least one dab centre"));
                }
                for d in dabs {
                    if !(d[0].abs() <= MAX_WORLD_CELL && d[1].abs() <= MAX_WORLD_CELL) {
                        return Err(Error::param(
                            "dab centre",
                            format!("({}, {})", d[0], d[1]),
                            format!("finite world cells within ±{MAX_WORLD_CELL}"),
                        ));
                    }
                }
                Brush { x: dabs[0][0], y: dabs[0][1], radius: *radius, strength: *strength, mode: *mode }
                    .validate()?;
            }
            WorldEdit::RiverSource { x, y, reach, depth_m, width } => {
                if !((*x as f64).abs() <= MAX_WORLD_CELL && (*y as f64).abs() <= MAX_WORLD_CELL) {
                    return Err(Error::param(
                        "river source",
                        format!("({x}, {y})"),
                        format!("world cells within ±{MAX_WORLD_CELL}"),
                    ));
                }
                let [lo, hi] = RIVER_REACH_RANGE;
                if !(lo..=hi).contains(reach) {
                    return Err(Error::param("reach", reach, format!("{lo}..={hi} cells")));
                }
                if !(depth_m.is_finite() && (0.0..=1000.0).contains(depth_m)) {
                    return Err(Error::param("depth-m", depth_m, "a number in [0, 1000] metres"));
                }
                if !(width.is_finite() && *width > 0.0 && *width <= MAX_RIVER_WIDTH) {
                    return Err(Error::param(
                        "width",
                        width,
                        format!("a number in (0, {MAX_RIVER_WIDTH}] cells"),
                    ));
                }
            }
        }
        let f = self.footprint();
        if f.width() as i64 > MAX_EDIT_SPAN || f.height() as i64 > MAX_EDIT_SPAN {
            return Err(Error::param(
                "world edit",
                format!("{}x{} cells", f.width(), f.height()),
                format!("a footprint of at most {MAX_EDIT_SPAN} cells a side (split the stroke)"),
            ));
        }
        Ok(())
    }

    /// The cells this edit may change.
    pub fn footprint(&self) -> CellRect {
        match self {
            WorldEdit::Stroke { radius, dabs, .. } => {
                dabs.iter().fold(CellRect::at(0, 0, 0, 0), |r, d| r.union(&disc_rect(*d, *radius)))
            }
            WorldEdit::RiverSource { width, .. } => self.river_region().grown(width.ceil() as i64),
        }
    }

    /// The cells the edit's result reads besides each changed cell's own height (module docs):
    /// none for raise and lower.
    pub fn input_region(&self) -> Option<CellRect> {
        match self {
            WorldEdit::Stroke { mode: BrushMode::Raise | BrushMode::Lower, .. } => None,
            WorldEdit::Stroke { mode: BrushMode::Flatten, radius, dabs, .. } => {
                Some(disc_rect(dabs[0], *radius))
            }
            WorldEdit::Stroke { mode: BrushMode::Smooth, .. } => Some(self.footprint().grown(1)),
            WorldEdit::RiverSource { .. } => Some(self.river_region()),
        }
    }

    /// A river source's region: the `2·reach + 1` square centred on it (empty for strokes).
    pub fn river_region(&self) -> CellRect {
        match self {
            WorldEdit::RiverSource { x, y, reach, .. } => {
                let r = *reach as i64;
                CellRect { x0: x - r, y0: y - r, x1: x + r + 1, y1: y + r + 1 }
            }
            WorldEdit::Stroke { .. } => CellRect::at(0, 0, 0, 0),
        }
    }

    /// This edit as it lands on the world sampled every `stride` cells (level of detail: dab
    /// centres, radius, river source, reach and width divided by `stride`, radius and width at
    /// least one cell, reach at least the smallest allowed). An approximation for `stride > 1`
    /// (module docs of the world view), the edit itself for `stride = 1`.
    pub fn at_stride(&self, stride: u32) -> WorldEdit {
        if stride <= 1 {
            return self.clone();
        }
        let k = stride as f64;
        match self {
            WorldEdit::Stroke { mode, radius, strength, dabs } => WorldEdit::Stroke {
                mode: *mode,
                radius: (radius / k).max(1.0),
                strength: *strength,
                dabs: dabs.iter().map(|d| [d[0] / k, d[1] / k]).collect(),
            },
            WorldEdit::RiverSource { x, y, reach, depth_m, width } => WorldEdit::RiverSource {
                x: x.div_euclid(stride as i64),
                y: y.div_euclid(stride as i64),
                reach: (reach / stride as usize).max(RIVER_REACH_RANGE[0]),
                depth_m: *depth_m,
                width: (width / k).max(1.0),
            },
        }
    }
}

/// One stored edit: its sequence number (the order edits replay in) and the edit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorldEditEntry {
    /// Position in the order of edits (increasing; gaps allowed).
    pub seq: u64,
    /// The edit.
    pub edit: WorldEdit,
}

/// The edits of a world, indexed per chunk (module docs). In the project file
/// (`world-edits`), each chunk lists the edits that may change its cells; an edit spanning
/// several chunks is listed in each (with its `seq`), so a reader of one chunk has every edit
/// it needs.
#[derive(Clone, Debug, Default)]
pub struct WorldEdits {
    chunks: BTreeMap<(i64, i64), Vec<Arc<WorldEditEntry>>>,
    all: BTreeMap<u64, Arc<WorldEditEntry>>,
    next_seq: u64,
}

impl PartialEq for WorldEdits {
    fn eq(&self, o: &Self) -> bool {
        self.all == o.all
    }
}

/// The chunks of [`WORLD_EDIT_CHUNK`] cells that `r` meets.
fn chunks_of(r: &CellRect) -> impl Iterator<Item = (i64, i64)> + use<> {
    let s = WORLD_EDIT_CHUNK as i64;
    let (cx0, cx1) = (r.x0.div_euclid(s), (r.x1 - 1).div_euclid(s));
    let (cy0, cy1) = (r.y0.div_euclid(s), (r.y1 - 1).div_euclid(s));
    let empty = r.is_empty();
    (cy0..=cy1).filter(move |_| !empty).flat_map(move |cy| (cx0..=cx1).map(move |cx| (cx, cy)))
}

impl WorldEdits {
    /// No edits.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether there is no edit.
    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// Number of edits.
    pub fn len(&self) -> usize {
        self.all.len()
    }

    /// Every edit, in order.
    pub fn entries(&self) -> impl Iterator<Item = &WorldEditEntry> {
        self.all.values().map(|e| &**e)
    }

    /// The chunks that hold at least one edit.
    pub fn chunk_keys(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.chunks.keys().copied()
    }

    /// Adds `edit` after every other (validated first) and returns its sequence number.
    pub fn push(&mut self, edit: WorldEdit) -> Result<u64> {
        edit.validate()?;
        let seq = self.next_seq;
        self.insert(WorldEditEntry { seq, edit });
        Ok(seq)
    }

    fn insert(&mut self, entry: WorldEditEntry) {
        let e = Arc::new(entry);
        self.next_seq = self.next_seq.max(e.seq + 1);
        for k in chunks_of(&e.edit.footprint()) {
            let list = self.chunks.entry(k).or_default();
            let at = list.partition_point(|x| x.seq < e.seq);
            list.insert(at, e.clone());
        }
        self.all.insert(e.seq, e);
    }

    /// Removes and returns the last edit (undo).
    pub fn pop(&mut self) -> Option<WorldEdit> {
        let (&seq, _) = self.all.last_key_value()?;
        let e = self.all.remove(&seq)?;
        for k in chunks_of(&e.edit.footprint()) {
            if let Some(list) = self.chunks.get_mut(&k) {
                list.retain(|x| x.seq != seq);
                if list.is_empty() {
                    self.chunks.remove(&k);
                }
            }
        }
        self.next_seq = seq;
        Some(e.edit.clone())
    }

    /// The edits whose footprint meets `r`, in order (read from the chunks `r` meets only).
    pub fn touching(&self, r: &CellRect) -> Vec<Arc<WorldEditEntry>> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for k in chunks_of(r) {
            for e in self.chunks.get(&k).into_iter().flatten() {
                if e.edit.footprint().meets(r) && seen.insert(e.seq) {
                    out.push(e.clone());
                }
            }
        }
        out.sort_by_key(|e| e.seq);
        out
    }

    /// Every edit landed on the world sampled every `stride` cells ([`WorldEdit::at_stride`]).
    pub fn at_stride(&self, stride: u32) -> WorldEdits {
        if stride <= 1 {
            return self.clone();
        }
        let mut out = WorldEdits::new();
        for e in self.all.values() {
            out.insert(WorldEditEntry { seq: e.seq, edit: e.edit.at_stride(stride) });
        }
        out
    }

    /// The rectangle the world must be generated on so that replaying the edits gives the
    /// cells of `window` exactly, and the edits to replay there, in order (module docs).
    pub fn plan(&self, window: CellRect) -> (CellRect, Vec<Arc<WorldEditEntry>>) {
        let mut load = window;
        loop {
            let list = self.touching(&load);
            let mut need = window;
            for e in list.iter().rev() {
                if e.edit.footprint().meets(&need)
                    && let Some(r) = e.edit.input_region()
                {
                    need = need.union(&r);
                }
            }
            if load.contains(&need) {
                // `need` ⊆ `load`: no edit outside the list can reach it.
                let list = list.into_iter().filter(|e| e.edit.footprint().meets(&need)).collect();
                return (need, list);
            }
            load = load.union(&need);
        }
    }
}

/// The project file's form of [`WorldEdits`]: per chunk, its edits.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct WorldEditsFile {
    chunk_size: usize,
    chunks: Vec<ChunkEdits>,
}

#[derive(Serialize, Deserialize)]
struct ChunkEdits {
    chunk: [i64; 2],
    edits: Vec<WorldEditEntry>,
}

impl Serialize for WorldEdits {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        WorldEditsFile {
            chunk_size: WORLD_EDIT_CHUNK,
            chunks: self
                .chunks
                .iter()
                .map(|(k, v)| ChunkEdits {
                    chunk: [k.0, k.1],
                    edits: v.iter().map(|e| (**e).clone()).collect(),
                })
                .collect(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for WorldEdits {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let file = WorldEditsFile::deserialize(d)?;
        if file.chunk_size != WORLD_EDIT_CHUNK {
            return Err(D::Error::custom(format!(
                "world-edits chunk-size {} is not supported (this build files edits in chunks of {WORLD_EDIT_CHUNK})",
                file.chunk_size
            )));
        }
        let mut out = WorldEdits::new();
        for c in file.chunks {
            for e in c.edits {
                e.edit.validate().map_err(|err| D::Error::custom(format!("world edit {}: {err}", e.seq)))?;
                if !chunks_of(&e.edit.footprint()).any(|k| k == (c.chunk[0], c.chunk[1])) {
                    return Err(D::Error::custom(format!(
                        "world edit {} is filed under chunk {:?}, which it does not touch",
                        e.seq, c.chunk
                    )));
                }
                match out.all.get(&e.seq) {
                    Some(old) if old.edit != e.edit => {
                        return Err(D::Error::custom(format!(
                            "two different world edits have the same seq {}",
                            e.seq
                        )));
                    }
                    Some(_) => {}
                    None => out.insert(e),
                }
            }
        }
        Ok(out)
    }
}

/// Largest level-of-detail stride [`world_at_stride`] accepts.
pub const MAX_STRIDE: u32 = 1 << 12;

/// The world sampled every `stride` cells (level of detail for far views): the same recipe with
/// `stride` times the cell size, so its cell `(X, Y)` lies at world cell `(stride·X, stride·Y)`.
/// `stride` is a power of two in `1..=`[`MAX_STRIDE`].
///
/// **What is exact.** For point steps whose positions are world metres (`noise`, `voronoi`,
/// `spectral`, fall-offs, `normalize`, `clamp`, `terrace`…) a coarse cell equals the full
/// resolution cell bit for bit: its metre position `X · (stride · c)` and the noise coordinate
/// `X · (stride · c / m)` are the same products as `(stride · X) · c` and `(stride·X) · (c / m)`,
/// scaled by a power of two (exact in floating point; `tests` checks it). Stencil steps
/// (erosions, smoothing, perturbation) run on the coarse grid with coarse neighbours, talus
/// angles in metres per coarse cell and iterations unchanged: an approximation of the full
/// resolution result, not a subsample (thermal erosion moves less material per coarse cell).
/// Edits land with [`WorldEdits::at_stride`], also an approximation.
pub fn world_at_stride(world: &World, stride: u32) -> Result<World> {
    if !(stride.is_power_of_two() && stride <= MAX_STRIDE) {
        return Err(Error::param("stride", stride, format!("a power of two in 1..={MAX_STRIDE}")));
    }
    let mut r = world.recipe().clone();
    r.cell_size *= stride as f64;
    World::new(r)
}

/// An edited window: the terrain, and the placed rivers that cross it.
#[derive(Clone, Debug)]
pub struct EditedWindow {
    /// Heights (with the edits) and sea level of the window.
    pub terrain: Terrain,
    /// Each placed river whose region meets the generated area: its edit's seq and its path in
    /// world cells, from the source down.
    pub rivers: Vec<(u64, Vec<[i64; 2]>)>,
}

/// The `width × height` window of `world` at world cell `(x0, y0)` with `edits` replayed (module
/// docs: equal to the same cells of any larger edited window, bit for bit). Without edits it is
/// [`World::window`].
pub fn edited_window(
    world: &World,
    edits: &WorldEdits,
    x0: i64,
    y0: i64,
    width: usize,
    height: usize,
    progress: &PipelineProgress,
) -> Result<EditedWindow> {
    let want = CellRect::at(x0, y0, width, height);
    let (need, list) = edits.plan(want);
    let mut terrain = world.window(need.x0, need.y0, need.width(), need.height(), progress)?;
    let mut rivers = Vec::new();
    for e in &list {
        if progress.is_cancelled() {
            return Err(Error::Cancelled);
        }
        if let Some(path) = apply_edit(&mut terrain, need.x0, need.y0, &e.edit)? {
            rivers.push((e.seq, path));
        }
    }
    if need != want {
        let (dx, dy) = ((x0 - need.x0) as usize, (y0 - need.y0) as usize);
        terrain.height = terrain.height.crop(dx, dy, width, height)?;
        if let Some(w) = &terrain.water {
            terrain.water = Some(w.crop(dx, dy, width, height)?);
        }
    }
    Ok(EditedWindow { terrain, rivers })
}

/// Replays one edit on `terrain`, whose cell (0, 0) is world cell `(x0, y0)`; a river source
/// returns its path.
fn apply_edit(terrain: &mut Terrain, x0: i64, y0: i64, edit: &WorldEdit) -> Result<Option<Vec<[i64; 2]>>> {
    match edit {
        WorldEdit::Stroke { mode, radius, strength, dabs } => {
            let mut target = None;
            if *mode == BrushMode::Flatten {
                target = flatten_target(&terrain.height, x0, y0, dabs[0], *radius);
            }
            for d in dabs {
                dab(&mut terrain.height, x0, y0, *d, *radius, *strength as f64, *mode, target);
            }
            Ok(None)
        }
        WorldEdit::RiverSource { reach, depth_m, width, .. } => {
            river(terrain, x0, y0, edit.river_region(), *reach, *depth_m, *width).map(Some)
        }
    }
}

/// The cells of `rect` inside the window of `map` (origin `(x0, y0)`), as window indices.
fn clip(map: &Heightmap, x0: i64, y0: i64, r: CellRect) -> Option<(usize, usize, usize, usize)> {
    let cx0 = r.x0.max(x0);
    let cy0 = r.y0.max(y0);
    let cx1 = r.x1.min(x0 + map.width() as i64);
    let cy1 = r.y1.min(y0 + map.height() as i64);
    (cx1 > cx0 && cy1 > cy0)
        .then(|| ((cx0 - x0) as usize, (cy0 - y0) as usize, (cx1 - x0) as usize, (cy1 - y0) as usize))
}

/// Calls `f(i, j, weight)` for each window cell strictly inside the disc of `radius` around the
/// world point `c`, the distance measured in world cells (`X as f64 − c`), row by row.
fn for_each_in_disc(
    map: &Heightmap,
    x0: i64,
    y0: i64,
    c: [f64; 2],
    radius: f64,
    mut f: impl FnMut(usize, usize, f64),
) {
    let Some((i0, j0, i1, j1)) = clip(map, x0, y0, disc_rect(c, radius)) else { return };
    for j in j0..j1 {
        let dy = (y0 + j as i64) as f64 - c[1];
        for i in i0..i1 {
            let dx = (x0 + i as i64) as f64 - c[0];
            let d2 = dx * dx + dy * dy;
            if d2 < radius * radius {
                f(i, j, falloff(1.0 - d2.sqrt() / radius));
            }
        }
    }
}

/// A flatten stroke's target: `Σ f·h / Σ f` over its first dab's disc (as
/// [`Brush::flatten_target`]).
fn flatten_target(map: &Heightmap, x0: i64, y0: i64, c: [f64; 2], radius: f64) -> Option<f64> {
    let (mut sum, mut weight) = (0.0f64, 0.0f64);
    for_each_in_disc(map, x0, y0, c, radius, |i, j, f| {
        sum += f * map[(i, j)] as f64;
        weight += f;
    });
    (weight > 0.0).then(|| sum / weight)
}

/// One dab in world coordinates (the formulas of [`crate::shape::brush`]).
#[allow(clippy::too_many_arguments)]
fn dab(
    map: &mut Heightmap,
    x0: i64,
    y0: i64,
    c: [f64; 2],
    radius: f64,
    s: f64,
    mode: BrushMode,
    target: Option<f64>,
) {
    let mut changes: Vec<(usize, usize, f32)> = Vec::new();
    match mode {
        BrushMode::Raise | BrushMode::Lower => {
            let sign = if mode == BrushMode::Raise { 1.0 } else { -1.0 };
            for_each_in_disc(map, x0, y0, c, radius, |i, j, f| {
                changes.push((i, j, (map[(i, j)] as f64 + sign * s * f) as f32));
            });
        }
        BrushMode::Flatten => {
            let Some(t) = target else { return };
            for_each_in_disc(map, x0, y0, c, radius, |i, j, f| {
                let v = map[(i, j)] as f64;
                changes.push((i, j, (v + s * f * (t - v)) as f32));
            });
        }
        BrushMode::Smooth => {
            // Every new value reads the heights before the dab (changes are written after).
            let (w, h) = (map.width(), map.height());
            for_each_in_disc(map, x0, y0, c, radius, |i, j, f| {
                let (mut sum, mut n) = (0.0f64, 0u32);
                for jj in j.saturating_sub(1)..(j + 2).min(h) {
                    for ii in i.saturating_sub(1)..(i + 2).min(w) {
                        sum += map[(ii, jj)] as f64;
                        n += 1;
                    }
                }
                let b = sum / n as f64;
                let v = map[(i, j)] as f64;
                changes.push((i, j, (v + s * f * (b - v)) as f32));
            });
        }
    }
    for (i, j, v) in changes {
        map[(i, j)] = v;
    }
}

/// Traces the river of a source on its region and carves it (module docs); returns its path in
/// world cells. The region lies inside the window whenever the result matters (the plan adds it).
#[allow(clippy::too_many_arguments)]
fn river(
    terrain: &mut Terrain,
    x0: i64,
    y0: i64,
    region: CellRect,
    reach: usize,
    depth_m: f32,
    width: f64,
) -> Result<Vec<[i64; 2]>> {
    let Some((i0, j0, i1, j1)) = clip(&terrain.height, x0, y0, region) else { return Ok(Vec::new()) };
    if (i1 - i0, j1 - j0) != (region.width(), region.height()) {
        // Part of the region lies outside this window: the river cannot reach the cells asked
        // for (the plan would have added its region), so it is not traced here.
        return Ok(Vec::new());
    }
    let mut local = Terrain::new(region.width(), region.height(), terrain.height.cell_size())?;
    local.sea_level = terrain.sea_level;
    local.height = terrain.height.crop(i0, j0, i1 - i0, j1 - j0)?;
    let traced = source_rivers(&local, &[((reach, reach), RiverMode::Filled)])?;
    let Some(river) = traced.into_iter().next() else { return Ok(Vec::new()) };
    let mut path = Vec::with_capacity(river.points.len());
    for p in &river.points {
        let (wx, wy) = (region.x0 + p.x as i64, region.y0 + p.y as i64);
        path.push([wx, wy]);
        let bed = p.height as f64 - depth_m as f64;
        let map = &mut terrain.height;
        let mut changes = Vec::new();
        for_each_in_disc(map, x0, y0, [wx as f64, wy as f64], width, |i, j, f| {
            let v = map[(i, j)] as f64;
            changes.push((i, j, (v + f * (bed - v).min(0.0)) as f32));
        });
        for (i, j, v) in changes {
            map[(i, j)] = v;
        }
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Recipe;

    fn small_world() -> World {
        let r = Recipe::from_toml_str(
            r#"
            cell-size = 30.0
            sea-level = 0.0
            [world]
            height-range = [-1000.0, 2000.0]
            [[steps]]
            type = "noise"
            octaves = 5
            feature-size-m = 3000.0
            [[steps]]
            type = "normalize"
            input-range = [-1.0, 1.0]
            min = -1000.0
            max = 2000.0
            [[steps]]
            type = "thermal"
            iterations = 2
            talus-slope = 0.7
            "#,
        )
        .unwrap();
        World::new(r).unwrap()
    }

    fn stroke(mode: BrushMode, strength: f32, dabs: &[[f64; 2]]) -> WorldEdit {
        WorldEdit::Stroke { mode, radius: 5.5, strength, dabs: dabs.to_vec() }
    }

    /// Every kind of edit, overlapping, around the origin `(ox, oy)`.
    fn edits_at(ox: i64, oy: i64) -> WorldEdits {
        let o = [ox as f64, oy as f64];
        let at = |x: f64, y: f64| [o[0] + x, o[1] + y];
        let mut e = WorldEdits::new();
        e.push(stroke(BrushMode::Raise, 120.0, &[at(-3.3, 0.5), at(0.0, 1.5), at(6.7, 2.0)])).unwrap();
        e.push(stroke(BrushMode::Smooth, 0.8, &[at(-8.0, -2.0), at(-4.0, 0.0), at(0.0, 2.0), at(4.0, 4.0)]))
            .unwrap();
        e.push(stroke(BrushMode::Flatten, 0.7, &[at(9.0, 9.0), at(2.0, 3.0), at(-2.0, -1.0)])).unwrap();
        e.push(stroke(BrushMode::Lower, 60.0, &[at(12.25, -6.0), at(14.0, -4.0)])).unwrap();
        e.push(WorldEdit::RiverSource { x: ox + 3, y: oy + 2, reach: 24, depth_m: 5.0, width: 1.5 }).unwrap();
        e.push(stroke(BrushMode::Smooth, 1.0, &[at(3.0, 8.0), at(5.0, 10.0)])).unwrap();
        e
    }

    /// Edited windows equal the same cells cut from larger edited windows, at a negative and a
    /// far origin, with odd sizes and windows cutting through every edit.
    #[test]
    fn edited_windows_are_crops_of_larger_edited_windows() {
        let world = small_world();
        let p = PipelineProgress::new();
        for (ox, oy) in [(-37i64, -23i64), (10_000_000, -10_000_003)] {
            let edits = edits_at(ox, oy);
            let (bx, by, bw, bh) = (ox - 40, oy - 35, 81usize, 71usize);
            let big = edited_window(&world, &edits, bx, by, bw, bh, &p).unwrap();
            let plain = world.window(bx, by, bw, bh, &p).unwrap();
            let changed = big
                .terrain
                .height
                .as_slice()
                .iter()
                .zip(plain.height.as_slice())
                .filter(|(a, b)| a != b)
                .count();
            assert!(changed > 200, "the edits change {changed} cells");
            assert_eq!(big.rivers.len(), 1);
            for (dx, dy, w, h) in [
                (0usize, 0usize, 13usize, 9usize),
                (35, 30, 7, 5),
                (38, 33, 1, 1),
                (30, 28, 21, 19),
                (44, 40, 9, 3),
                (52, 29, 11, 17),
                (bw - 5, bh - 3, 5, 3),
            ] {
                let small = edited_window(&world, &edits, bx + dx as i64, by + dy as i64, w, h, &p).unwrap();
                for j in 0..h {
                    for i in 0..w {
                        let (a, b) = (small.terrain.height[(i, j)], big.terrain.height[(dx + i, dy + j)]);
                        assert!(
                            a.to_bits() == b.to_bits(),
                            "origin ({ox}, {oy}) window +({dx}, {dy}) {w}x{h}: cell ({i}, {j}) = {a}, larger window {b}"
                        );
                    }
                }
            }
        }
    }

    /// The river is traced on its own region: its path is the same whatever window asks, it
    /// runs downhill on the filled surface and it carves (no cell goes up).
    #[test]
    fn a_placed_river_is_the_same_in_every_window_and_carves_down() {
        let world = small_world();
        let p = PipelineProgress::new();
        let mut edits = WorldEdits::new();
        edits.push(WorldEdit::RiverSource { x: 5, y: -7, reach: 40, depth_m: 8.0, width: 2.0 }).unwrap();
        let a = edited_window(&world, &edits, 0, -10, 8, 8, &p).unwrap();
        let b = edited_window(&world, &edits, -60, -60, 130, 110, &p).unwrap();
        assert_eq!(a.rivers, b.rivers);
        let path = &b.rivers[0].1;
        assert_eq!(path[0], [5, -7]);
        assert!(path.len() > 3, "{path:?}");
        assert!(path.iter().all(|c| (c[0] - 5).abs() <= 40 && (c[1] + 7).abs() <= 40));
        let plain = world.window(-60, -60, 130, 110, &p).unwrap();
        let (e, o) = (b.terrain.height.as_slice(), plain.height.as_slice());
        assert!(e.iter().zip(o).all(|(e, o)| e <= o), "a river never raises a cell");
        let [sx, sy] = path[1];
        let k = ((sy + 60) * 130 + sx + 60) as usize;
        assert!(e[k] < o[k], "the path is carved");
    }

    /// On the map at the world origin a world stroke gives the finite brush's bits.
    #[test]
    fn a_world_stroke_at_the_origin_equals_the_finite_brush() {
        use crate::shape::brush::Stroke;
        let world = small_world();
        let p = PipelineProgress::new();
        for mode in [BrushMode::Raise, BrushMode::Lower, BrushMode::Flatten, BrushMode::Smooth] {
            let s = if matches!(mode, BrushMode::Raise | BrushMode::Lower) { 40.0 } else { 0.6 };
            let dabs = [[20.3, 21.0], [24.0, 22.5], [27.5, 25.0]];
            let mut edits = WorldEdits::new();
            edits.push(stroke(mode, s, &dabs)).unwrap();
            let got = edited_window(&world, &edits, 0, 0, 48, 48, &p).unwrap();
            let mut map = world.window(0, 0, 48, 48, &p).unwrap().height;
            let mut st = Stroke::new();
            for d in dabs {
                st.apply_dab(&mut map, &Brush { x: d[0], y: d[1], radius: 5.5, strength: s, mode }).unwrap();
            }
            assert_eq!(got.terrain.height.as_slice(), map.as_slice(), "{mode:?}");
        }
    }

    #[test]
    fn edits_are_filed_per_chunk_and_round_trip_exactly() {
        let edits = edits_at(250, -3);
        // The first stroke spans chunks 0 and 1 of row -1 and 0; the river's square more.
        let keys: Vec<_> = edits.chunk_keys().collect();
        assert!(keys.contains(&(0, -1)) && keys.contains(&(1, 0)), "{keys:?}");
        let far = CellRect::at(5000, 5000, 10, 10);
        assert!(edits.touching(&far).is_empty());
        let text = serde_json::to_string(&edits).unwrap();
        let back: WorldEdits = serde_json::from_str(&text).unwrap();
        assert_eq!(back, edits);
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        let world = small_world();
        let p = PipelineProgress::new();
        let a = edited_window(&world, &edits, 230, -20, 40, 30, &p).unwrap();
        let b = edited_window(&world, &back, 230, -20, 40, 30, &p).unwrap();
        assert_eq!(a.terrain.height.as_slice(), b.terrain.height.as_slice());
        // Undo drops the last edit from every chunk.
        let mut u = edits.clone();
        let last = u.pop().unwrap();
        assert_eq!(u.len(), edits.len() - 1);
        assert!(u.entries().all(|e| e.edit != last));
        u.push(last).unwrap();
        assert_eq!(u, edits);
    }

    /// Point steps: a coarse window is every `stride`-th cell of the full-resolution window.
    #[test]
    fn coarse_worlds_are_exact_subsamples_for_point_steps() {
        let r = Recipe::from_toml_str(
            r#"
            cell-size = 30.0
            [world]
            height-range = [-1000.0, 2000.0]
            [[steps]]
            type = "noise"
            octaves = 7
            feature-size-m = 20000.0
            [[steps]]
            type = "normalize"
            input-range = [-1.0, 1.0]
            min = -1000.0
            max = 2000.0
            [[steps]]
            type = "terrace"
            levels = 6
            "#,
        )
        .unwrap();
        let world = World::new(r).unwrap();
        let p = PipelineProgress::new();
        for stride in [2u32, 8, 64] {
            let coarse = world_at_stride(&world, stride).unwrap();
            let (cx, cy) = (-7i64, 5i64);
            let c = coarse.window(cx, cy, 9, 7, &p).unwrap();
            let s = stride as i64;
            let fine =
                world.window(cx * s, cy * s, 8 * stride as usize + 1, 6 * stride as usize + 1, &p).unwrap();
            for j in 0..7 {
                for i in 0..9 {
                    let (a, b) = (c.height[(i, j)], fine.height[(i * stride as usize, j * stride as usize)]);
                    assert_eq!(a.to_bits(), b.to_bits(), "stride {stride}: cell ({i}, {j}) {a} vs {b}");
                }
            }
        }
        for bad in [0u32, 3, 1 << 13] {
            let e = world_at_stride(&world, bad).map(|_| ()).unwrap_err().to_string();
            assert!(e.contains("power of two"), "{e}");
        }
    }

    #[test]
    fn bad_world_edits_are_refused_with_the_allowed_range() {
        let cases = [
            (stroke(BrushMode::Raise, 1.0, &[]), "at least one dab"),
            (stroke(BrushMode::Smooth, 2.0, &[[0.0, 0.0]]), "[0, 1]"),
            (stroke(BrushMode::Raise, 1.0, &[[f64::NAN, 0.0]]), "finite world cells"),
            (
                WorldEdit::Stroke {
                    mode: BrushMode::Raise,
                    radius: 0.0,
                    strength: 1.0,
                    dabs: vec![[0.0, 0.0]],
                },
                "radius",
            ),
            (stroke(BrushMode::Raise, 1.0, &[[0.0, 0.0], [9000.0, 0.0]]), "at most 8192 cells"),
            (WorldEdit::RiverSource { x: 0, y: 0, reach: 3, depth_m: 1.0, width: 1.0 }, "8..=2048"),
            (WorldEdit::RiverSource { x: 0, y: 0, reach: 30, depth_m: -1.0, width: 1.0 }, "depth-m"),
            (WorldEdit::RiverSource { x: 0, y: 0, reach: 30, depth_m: 1.0, width: 0.0 }, "width"),
        ];
        for (edit, want) in cases {
            let e = WorldEdits::new().push(edit).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
        let bad = r#"{"chunk-size": 256, "chunks": [{"chunk": [9, 9], "edits": [{"seq": 0,
            "edit": {"kind": "stroke", "mode": "Raise", "radius": 2.0, "strength": 1.0, "dabs": [[0.0, 0.0]]}}]}]}"#;
        let e = serde_json::from_str::<WorldEdits>(bad).unwrap_err().to_string();
        assert!(e.contains("does not touch"), "{e}");
        let e = serde_json::from_str::<WorldEdits>(&bad.replace("256", "128")).unwrap_err().to_string();
        assert!(e.contains("chunk-size 128"), "{e}");
    }
}
