//! Rivers: the drainage network (cells whose accumulation reaches a threshold), rivers traced
//! from user-placed sources (seed 004 §9), and carving of river beds.
//!
//! Width from discharge by downstream hydraulic geometry (Leopold & Maddock 1953, USGS Prof.
//! Paper 252): `w = a·Q^0.5`, `d = c·Q^0.4`. With unit rainfall the discharge `Q` is
//! proportional to the drainage area (the D8 accumulation `A`), so here
//! `width = max_width · (A / A_max)^0.5` cells and `depth = carve_depth · (A / A_max)^0.4`,
//! where `A_max` is the largest accumulation on the map.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use terrasynth_noise::detmath;

use super::fill::{DepressionFiller, check_dem};
use super::flow::{FlowField, steepest_lower};
use super::lakes::{LakeMap, lakes_from_fill};
use crate::grid::Donors;
use crate::step::params::choice_enum;
use crate::{Error, Grid, Heightmap, Result};

/// One vertex of a river polyline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RiverPoint {
    /// Column, in cells (cell centres at integers).
    pub x: f32,
    /// Row, in cells.
    pub y: f32,
    /// Water surface height here (the filled surface), height units.
    pub height: f32,
    /// Drainage area upstream of this point, in cells (a discharge proxy).
    pub discharge: f32,
    /// Channel width, in cells.
    pub width: f32,
}

/// A river: a polyline from its head (source or confluence-free start) downstream to where it
/// ends (an outlet, or a junction with a larger river, which is included as the last point).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct River {
    /// Vertices from upstream to downstream.
    pub points: Vec<RiverPoint>,
}

impl River {
    /// The polyline in world coordinates (metres): `(x · cell_size_m, y · cell_size_m)`.
    pub fn world_points(&self, cell_size_m: f64) -> Vec<[f64; 2]> {
        self.points.iter().map(|p| [p.x as f64 * cell_size_m, p.y as f64 * cell_size_m]).collect()
    }
}

/// Extracts the river network: every cell whose accumulation is at least `threshold` cells is
/// a river cell. Rivers start at river cells with no river donor and follow receivers until an
/// outlet or a cell already part of an earlier river (the junction, included). `max_width` is
/// the width in cells at the largest accumulation (see the module docs). Heads are visited in
/// row-major order, so the result is deterministic.
pub fn extract_rivers(
    surface: &Heightmap,
    flow: &FlowField,
    accumulation: &Grid<f64>,
    threshold: f64,
    max_width: f32,
) -> Result<Vec<River>> {
    if !(threshold.is_finite() && threshold >= 1.0) {
        return Err(Error::param("threshold", threshold, "a finite number >= 1 (cells)"));
    }
    if !(max_width.is_finite() && max_width >= 0.0) {
        return Err(Error::param("max-width", max_width, "a finite number >= 0 (cells)"));
    }
    let (w, h) = (flow.width(), flow.height());
    if surface.width() != w
        || surface.height() != h
        || accumulation.width() != w
        || accumulation.height() != h
    {
        return Err(Error::SizeMismatch {
            what: "surface/accumulation".into(),
            expected_w: w,
            expected_h: h,
            got_w: surface.width(),
            got_h: surface.height(),
        });
    }
    let acc = accumulation.as_slice();
    let rec = flow.receivers();
    let a_max = acc.iter().copied().fold(1.0f64, f64::max);
    let is_river = |i: usize| acc[i] >= threshold;
    let mut has_river_donor = vec![false; w * h];
    for i in 0..w * h {
        if is_river(i) && rec[i] as usize != i {
            has_river_donor[rec[i] as usize] = true;
        }
    }
    let mut taken = vec![false; w * h];
    let mut rivers = Vec::new();
    let point = |i: usize| {
        let a = acc[i];
        RiverPoint {
            x: (i % w) as f32,
            y: (i / w) as f32,
            height: surface.as_slice()[i],
            discharge: a as f32,
            width: max_width * (a / a_max).sqrt() as f32,
        }
    };
    for (head, &fed) in has_river_donor.iter().enumerate() {
        if !is_river(head) || fed {
            continue;
        }
        let mut river = River::default();
        let mut c = head;
        loop {
            river.points.push(point(c));
            if taken[c] {
                break;
            }
            taken[c] = true;
            let r = rec[c] as usize;
            if r == c {
                break;
            }
            c = r;
        }
        if river.points.len() >= 2 {
            rivers.push(river);
        }
    }
    Ok(rivers)
}

/// Lowers river beds into `terrain`: around every river point, cells within half the width
/// (at least the point's own cell) are set to at most `height − depth`, with
/// `depth = carve_depth · (discharge / max discharge)^0.4` (hydraulic geometry, module docs).
/// Because river heights on the filled surface strictly decrease downstream, the carved bed
/// also never rises downstream. `carve_depth` in height units, ≥ 0.
pub fn carve_rivers(terrain: &mut Heightmap, rivers: &[River], carve_depth: f32) -> Result<()> {
    let q_max = rivers.iter().flat_map(|r| r.points.iter()).map(|p| p.discharge).fold(1.0f32, f32::max);
    carve_rivers_below(terrain, rivers, carve_depth, q_max)
}

/// [`carve_rivers`] with the largest discharge given: the depth at a point is
/// `carve_depth · (discharge / q_max)^0.4`, so rivers added to a network already carved (the
/// editor's placed rivers, joining the `rivers` step's) are cut as deep as that network's
/// rivers of the same discharge, not as deep as its largest. `q_max` ≥ every discharge
/// carved (larger discharges are cut `carve_depth` deep at most).
pub fn carve_rivers_below(
    terrain: &mut Heightmap,
    rivers: &[River],
    carve_depth: f32,
    q_max: f32,
) -> Result<()> {
    if !(carve_depth.is_finite() && carve_depth >= 0.0) {
        return Err(Error::param("carve-depth", carve_depth, "a finite number >= 0 (height units)"));
    }
    let q_max = q_max.max(f32::MIN_POSITIVE);
    let (w, h) = (terrain.width() as i64, terrain.height() as i64);
    for p in rivers.iter().flat_map(|r| r.points.iter()) {
        let bed = p.height - carve_depth * detmath::powf((p.discharge / q_max).min(1.0), 0.4);
        let r = (p.width * 0.5).max(0.0);
        let ri = r.ceil() as i64;
        let (cx, cy) = (p.x as i64, p.y as i64);
        for y in (cy - ri).max(0)..=(cy + ri).min(h - 1) {
            for x in (cx - ri).max(0)..=(cx + ri).min(w - 1) {
                let d2 = ((x - cx) * (x - cx) + (y - cy) * (y - cy)) as f32;
                if d2 <= r * r || (x == cx && y == cy) {
                    let v = &mut terrain[(x as usize, y as usize)];
                    *v = v.min(bed);
                }
            }
        }
    }
    Ok(())
}

/// Carves `rivers` (heights in height units) into `metres`, a copy of the terrain in metres
/// (height units × `height_scale_m`): the river heights are scaled to metres, then
/// [`carve_rivers`] cuts each river cell to at most its water surface minus
/// `depth_m · (Q / Q_max)^0.4`. Returns the carved copy (the mesh of `exports.carve-mesh`).
pub fn carve_rivers_scaled(
    metres: &Heightmap,
    rivers: &[River],
    height_scale_m: f64,
    depth_m: f32,
) -> Result<Heightmap> {
    let mut out = metres.clone();
    let scaled: Vec<River> = rivers
        .iter()
        .map(|r| {
            let mut r = r.clone();
            for p in &mut r.points {
                p.height = (p.height as f64 * height_scale_m) as f32;
            }
            r
        })
        .collect();
    carve_rivers(&mut out, &scaled, depth_m)?;
    Ok(out)
}

/// Strahler order (Strahler 1957) at every river vertex, from the network the polylines form
/// (vertices rounded to cells; a river's last vertex is the junction with the river it joins).
/// Sources have order 1; where two or more branches of the highest incoming order meet, the
/// order grows by one. Returns one order per vertex of each river.
pub fn strahler_orders(rivers: &[River]) -> Vec<Vec<u32>> {
    let key = |x: f32, y: f32| (y.round() as i64, x.round() as i64);
    // Every cell the rivers pass through, numbered in order of first appearance.
    let mut ids: HashMap<(i64, i64), u32> = HashMap::new();
    let vertices: Vec<Vec<u32>> = rivers
        .iter()
        .map(|r| {
            r.points
                .iter()
                .map(|p| {
                    let next = ids.len() as u32;
                    *ids.entry(key(p.x, p.y)).or_insert(next)
                })
                .collect()
        })
        .collect();
    let n = ids.len();
    // Each cell's receiver is the cell after it on the first river that leaves it.
    let mut receiver = vec![u32::MAX; n];
    for seg in vertices.iter().flat_map(|v| v.windows(2)) {
        let (a, b) = (seg[0] as usize, seg[1]);
        if a != b as usize && receiver[a] == u32::MAX {
            receiver[a] = b;
        }
    }
    let donors = Donors::new(&receiver, |_, r| r != u32::MAX);
    // Kahn's algorithm from the sources (the order does not depend on which ready cell goes
    // first); cells in a cycle, and below one (none for D8 rivers), keep order 1.
    let mut pending: Vec<usize> = (0..n).map(|i| donors.of(i).len()).collect();
    let mut order = vec![1u32; n];
    let mut ready: Vec<u32> = (0..n as u32).filter(|&i| pending[i as usize] == 0).collect();
    while let Some(node) = ready.pop() {
        let ins = donors.of(node as usize);
        let top = ins.iter().map(|&d| order[d as usize]).max().unwrap_or(1);
        let at_top = ins.iter().filter(|&&d| order[d as usize] == top).count();
        order[node as usize] = if at_top >= 2 { top + 1 } else { top };
        let r = receiver[node as usize];
        if r != u32::MAX {
            pending[r as usize] -= 1;
            if pending[r as usize] == 0 {
                ready.push(r);
            }
        }
    }
    vertices.iter().map(|v| v.iter().map(|&i| order[i as usize]).collect()).collect()
}

choice_enum! {
    /// How [`RiverTracer::trace`] walks from a source (the `river-sources` step's `mode`).
    pub enum RiverMode {
        /// Seed 004 §9, first version: from the head, step to the lowest 8-neighbour *not
        /// already in the river* on the raw terrain, uphill if it must; stop at the sea (a
        /// cell below the sea level) or when every neighbour is already river (the head is
        /// enclosed by its own cells: the "lake" the seed describes, [`RiverEnd::Enclosed`]).
        WalkV1 = "walk-v1",
        /// Seed 004 §9, second version: the same walk, but when the head is enclosed by its
        /// own cells it steps back one cell (the enclosed cell stays water, counted as a lake
        /// cell) and tries again from there, until the river reaches the sea, so it always
        /// does. The abandoned cells are the seed's lakes ([`SourceRiver::backtracked`]).
        BacktrackV2 = "backtrack-v2",
        /// Follow D8 steepest descent on the ε-filled surface (Barnes et al. 2014): the river
        /// always reaches the sea or the map edge, crosses lakes at their surface, never
        /// revisits a cell (heights strictly decrease) and drains flats. The default.
        Filled = "filled",
    }
}

impl Default for RiverMode {
    /// [`RiverMode::Filled`] (what the editor traced before modes existed).
    fn default() -> Self {
        RiverMode::Filled
    }
}

/// Why a traced river stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RiverEnd {
    /// Reached a cell below the sea level.
    Sea,
    /// Reached the map edge (water leaves the map).
    Edge,
    /// The head is enclosed by its own river cells ([`RiverMode::WalkV1`] only; in
    /// [`RiverMode::BacktrackV2`] only when no cell reachable from the source is sea or edge,
    /// which cannot happen on a map whose edge is an outlet).
    Enclosed,
}

/// A river traced from one source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceRiver {
    /// Cells from the source to where the walk ended, `(x, y)`: each the 8-neighbour of the
    /// one before.
    pub cells: Vec<(usize, usize)>,
    /// Cell centres in world coordinates (metres).
    pub world: Vec<[f64; 2]>,
    /// Height at each cell: the filled surface (water surface) in [`RiverMode::Filled`], the
    /// raw terrain in the walks.
    pub heights: Vec<f32>,
    /// Ids of the lakes crossed, in order (see [`LakeMap`]); empty in the walks.
    pub lakes: Vec<u32>,
    /// [`RiverMode::BacktrackV2`]: the cells the walk entered and then stepped back from (the
    /// seed's lakes: still water, not on the way to the sea), as arms: each a run of cells
    /// left one after the other, from the first left (the dead end) back to the cell the walk
    /// went on from, which ends the arm (a cell of `cells` or of a later arm). Empty in the
    /// other modes.
    pub lake_arms: Vec<Vec<(usize, usize)>>,
    /// Why the walk stopped.
    pub end: RiverEnd,
}

/// Reusable state for tracing many rivers on one terrain: the ε-filled surface and the lakes.
/// Build it once after each terrain edit, then call [`RiverTracer::trace`] per source (a
/// filled trace costs O(river length); a walk allocates one flag per cell).
#[derive(Clone, Debug)]
pub struct RiverTracer {
    raw: Heightmap,
    filled: Heightmap,
    lakes: LakeMap,
    sea_level: f32,
}

/// The 8 neighbours in the order the seed lists them (seed 004 §9: columns `x, x−1, x+1`, in
/// each rows `y, y−1, y+1`, the centre left out); the seed's stable sort by height keeps this
/// order among equal heights, so the walks break ties the same way.
const SEED_NEIGHBOURS: [(i8, i8); 8] = [(0, -1), (0, 1), (-1, 0), (-1, -1), (-1, 1), (1, 0), (1, -1), (1, 1)];

impl RiverTracer {
    /// Fills `dem` (outlets = edge and cells below `sea_level`) with one flood that gives both
    /// the ε surface and the exact fill ([`DepressionFiller::fill_both`]), and finds its lakes.
    pub fn new(dem: &Heightmap, sea_level: f32) -> Result<Self> {
        let (exact, filled) = DepressionFiller::fill_both(dem, sea_level)?;
        let lakes = lakes_from_fill(dem, &exact, 0.0, 1)?;
        Ok(Self { raw: dem.clone(), filled, lakes, sea_level })
    }

    /// The ε-filled surface.
    pub fn filled(&self) -> &Heightmap {
        &self.filled
    }

    /// The lakes (exact fill).
    pub fn lakes(&self) -> &LakeMap {
        &self.lakes
    }

    /// Traces a river from `source` = `(x, y)` in cells. Errors if the source is outside the map.
    pub fn trace(&self, source: (usize, usize), mode: RiverMode) -> Result<SourceRiver> {
        let (w, h) = (self.raw.width(), self.raw.height());
        if source.0 >= w || source.1 >= h {
            return Err(Error::param(
                "source",
                format!("({}, {})", source.0, source.1),
                format!("a cell inside the {w}x{h} map"),
            ));
        }
        let start = source.1 * w + source.0;
        let (path, arms, end) = match mode {
            RiverMode::Filled => self.descend(start),
            RiverMode::WalkV1 => self.walk(start, false),
            RiverMode::BacktrackV2 => self.walk(start, true),
        };
        let z = match mode {
            RiverMode::Filled => self.filled.as_slice(),
            RiverMode::WalkV1 | RiverMode::BacktrackV2 => self.raw.as_slice(),
        };
        let cs = self.raw.cell_size();
        let mut lakes = Vec::new();
        if mode == RiverMode::Filled {
            for &c in &path {
                let l = self.lakes.labels.as_slice()[c];
                if l != 0 && lakes.last() != Some(&l) {
                    lakes.push(l);
                }
            }
        }
        Ok(SourceRiver {
            cells: path.iter().map(|&c| (c % w, c / w)).collect(),
            world: path.iter().map(|&c| [(c % w) as f64 * cs, (c / w) as f64 * cs]).collect(),
            heights: path.iter().map(|&c| z[c]).collect(),
            lakes,
            lake_arms: arms.iter().map(|a| a.iter().map(|&c| (c % w, c / w)).collect()).collect(),
            end,
        })
    }

    /// Whether the walk ends at cell `c`: below the sea level, or on the map edge.
    fn outlet(&self, c: usize) -> Option<RiverEnd> {
        let (w, h) = (self.raw.width(), self.raw.height());
        let (x, y) = (c % w, c / w);
        if self.raw.as_slice()[c] < self.sea_level {
            Some(RiverEnd::Sea)
        } else if x == 0 || y == 0 || x + 1 == w || y + 1 == h {
            Some(RiverEnd::Edge)
        } else {
            None
        }
    }

    /// [`RiverMode::Filled`]: D8 steepest descent on the ε-filled surface to an outlet.
    fn descend(&self, mut c: usize) -> (Vec<usize>, Vec<Vec<usize>>, RiverEnd) {
        let (w, h) = (self.raw.width(), self.raw.height());
        let z = self.filled.as_slice();
        let mut path = Vec::new();
        loop {
            path.push(c);
            if let Some(end) = self.outlet(c) {
                return (path, Vec::new(), end);
            }
            // Every interior cell of the ε-filled surface has a lower neighbour.
            match steepest_lower(z, w, h, c % w, c / w) {
                Some(n) => c = n,
                None => return (path, Vec::new(), RiverEnd::Enclosed),
            }
        }
    }

    /// The seed's walks (seed 004 §9). The river is the list of its cells; the head moves to
    /// its lowest neighbour not yet in the river (ties in [`SEED_NEIGHBOURS`] order, heights
    /// of the raw terrain, uphill if every free neighbour is higher). When no neighbour is
    /// free, version 1 stops ([`RiverEnd::Enclosed`]); version 2 (`backtrack`) steps back: the
    /// head leaves the path but stays in the river (the seed moves it to the front of its
    /// list), and the walk goes on from the cell before it. Both stop at the sea (the seed's
    /// `grille[y][x] < 0.15`, here the terrain's sea level) and, one addition to the seed, at
    /// the map edge, where water leaves the map (the seed's islands have sea all around, so
    /// there the two agree). Returns the path from the source, the lake arms (see
    /// [`SourceRiver::lake_arms`]) and the end.
    fn walk(&self, start: usize, backtrack: bool) -> (Vec<usize>, Vec<Vec<usize>>, RiverEnd) {
        let (w, h) = (self.raw.width(), self.raw.height());
        let z = self.raw.as_slice();
        let mut in_river = vec![false; w * h];
        in_river[start] = true;
        let mut path = vec![start];
        let mut arms: Vec<Vec<usize>> = Vec::new();
        let mut stepping_back = false;
        while let Some(&c) = path.last() {
            if let Some(end) = self.outlet(c) {
                return (path, arms, end);
            }
            // `c` is interior (edge cells are outlets), so all 8 neighbours exist.
            let (x, y) = ((c % w) as i64, (c / w) as i64);
            let mut best: Option<usize> = None;
            for &(dx, dy) in &SEED_NEIGHBOURS {
                let n = (y + dy as i64) as usize * w + (x + dx as i64) as usize;
                if !in_river[n] && best.is_none_or(|b| z[n] < z[b]) {
                    best = Some(n);
                }
            }
            match best {
                Some(n) => {
                    if stepping_back && let Some(arm) = arms.last_mut() {
                        arm.push(c); // the cell the walk goes on from ends the arm
                    }
                    stepping_back = false;
                    in_river[n] = true;
                    path.push(n);
                }
                None if backtrack => {
                    if !stepping_back {
                        arms.push(Vec::new());
                    }
                    stepping_back = true;
                    if let (Some(arm), Some(left)) = (arms.last_mut(), path.pop()) {
                        arm.push(left);
                    }
                }
                None => return (path, arms, RiverEnd::Enclosed),
            }
        }
        (path, arms, RiverEnd::Enclosed)
    }
}

/// Traces one river from `source` on `dem` (see [`RiverMode`]). For many sources on one
/// terrain, build a [`RiverTracer`] once instead.
///
/// ```
/// use terrasynth::{Heightmap, hydro::{RiverEnd, RiverMode, river_from_source}};
/// // A slope falling to the east with a pit in the middle: the seed's walk does not stop in
/// // the pit (it climbs out to the lowest neighbour not yet in the river), nor does the filled
/// // walk, which crosses it as a lake; both reach the east edge.
/// let mut dem = Heightmap::from_fn(9, 5, 1.0, |x, _| (9 - x) as f32).unwrap();
/// dem[(4, 2)] = 0.0;
/// let r = river_from_source(&dem, -1.0, (1, 2), RiverMode::WalkV1).unwrap();
/// assert_eq!(r.end, RiverEnd::Edge);
/// assert_eq!(r.cells, (1..9).map(|x| (x, 2)).collect::<Vec<_>>());
/// assert_eq!(r.heights[3..5], [0.0, 4.0]); // out of the pit, uphill
/// let f = river_from_source(&dem, -1.0, (1, 2), RiverMode::Filled).unwrap();
/// assert_eq!(f.end, RiverEnd::Edge);
/// assert_eq!(f.lakes.len(), 1);
/// ```
pub fn river_from_source(
    dem: &Heightmap,
    sea_level: f32,
    source: (usize, usize),
    mode: RiverMode,
) -> Result<SourceRiver> {
    check_dem(dem)?;
    RiverTracer::new(dem, sea_level)?.trace(source, mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn river(cells: &[(i32, i32)]) -> River {
        let points = cells
            .iter()
            .map(|&(x, y)| RiverPoint { x: x as f32, y: y as f32, height: 0.0, discharge: 1.0, width: 1.0 })
            .collect();
        River { points }
    }

    /// The first form of [`strahler_orders`] (ordered maps keyed by cell), its oracle.
    fn strahler_reference(rivers: &[River]) -> Vec<Vec<u32>> {
        use std::collections::BTreeMap;
        let key = |x: f32, y: f32| (y.round() as i64, x.round() as i64);
        let mut donors: BTreeMap<(i64, i64), Vec<(i64, i64)>> = BTreeMap::new();
        let mut receiver: BTreeMap<(i64, i64), (i64, i64)> = BTreeMap::new();
        for r in rivers {
            for seg in r.points.windows(2) {
                let (a, b) = (key(seg[0].x, seg[0].y), key(seg[1].x, seg[1].y));
                donors.entry(a).or_default();
                if a != b && !receiver.contains_key(&a) {
                    receiver.insert(a, b);
                    donors.entry(b).or_default().push(a);
                }
            }
        }
        let mut pending: BTreeMap<(i64, i64), usize> = donors.iter().map(|(k, d)| (*k, d.len())).collect();
        let mut order: BTreeMap<(i64, i64), u32> = BTreeMap::new();
        let mut ready: Vec<(i64, i64)> = pending.iter().filter(|(_, n)| **n == 0).map(|(k, _)| *k).collect();
        while let Some(node) = ready.pop() {
            let ins: Vec<u32> = donors[&node].iter().map(|d| order.get(d).copied().unwrap_or(1)).collect();
            let top = ins.iter().copied().max().unwrap_or(1);
            let o = if ins.iter().filter(|&&v| v == top).count() >= 2 { top + 1 } else { top };
            order.insert(node, o);
            if let Some(r) = receiver.get(&node)
                && let Some(n) = pending.get_mut(r)
            {
                *n -= 1;
                if *n == 0 {
                    ready.push(*r);
                }
            }
        }
        rivers
            .iter()
            .map(|r| r.points.iter().map(|p| order.get(&key(p.x, p.y)).copied().unwrap_or(1)).collect())
            .collect()
    }

    #[test]
    fn strahler_orders_equal_the_map_based_reference() {
        let mut x = 0x853c_49e6_748f_ea9bu64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n) as i32
        };
        for case in 0..300 {
            // Random walks on a small grid: they meet, merge, revisit cells and make cycles;
            // some are one point long, some repeat a cell.
            let size = 4 + next(12);
            let rivers: Vec<River> = (0..1 + next(12))
                .map(|_| {
                    let (mut cx, mut cy) = (next(size as u64), next(size as u64));
                    let cells: Vec<(i32, i32)> = (0..1 + next(10))
                        .map(|_| {
                            let cell = (cx, cy);
                            cx = (cx + next(3) - 1).clamp(0, size);
                            cy = (cy + next(3) - 1).clamp(0, size);
                            cell
                        })
                        .collect();
                    river(&cells)
                })
                .collect();
            assert_eq!(strahler_orders(&rivers), strahler_reference(&rivers), "case {case}");
        }
    }

    /// A hand-drawn network (cells as (column, row), rows going down to the outlet):
    /// ```text
    /// a(0,0)  b(2,0)        d(6,0)  e(8,0)
    ///     \    /                \    /
    ///     (1,1) order 2         (7,1) order 2
    ///        \                    /
    ///         `----> (4,5) <-----'   order 3
    ///                  |   f(6,6) order 1
    ///                (4,7) <--'      stays 3
    ///                  |
    ///                (4,8) outlet
    /// ```
    #[test]
    fn strahler_orders_of_a_hand_drawn_network() {
        let rivers = vec![
            // a: source to the junction with b, then on to the trunk junction and the outlet.
            river(&[(0, 0), (1, 1), (1, 2), (2, 3), (3, 4), (4, 5), (4, 6), (4, 7), (4, 8)]),
            // b: source to its junction with a.
            river(&[(2, 0), (1, 1)]),
            // d: source down to the trunk junction.
            river(&[(6, 0), (7, 1), (7, 2), (6, 3), (5, 4), (4, 5)]),
            // e: source to its junction with d.
            river(&[(8, 0), (7, 1)]),
            // f: a short source joining the trunk.
            river(&[(6, 6), (5, 7), (4, 7)]),
        ];
        let orders = strahler_orders(&rivers);
        assert_eq!(orders[0], vec![1, 2, 2, 2, 2, 3, 3, 3, 3]);
        assert_eq!(orders[1], vec![1, 2]);
        assert_eq!(orders[2], vec![1, 2, 2, 2, 2, 3]);
        assert_eq!(orders[3], vec![1, 2]);
        assert_eq!(orders[4], vec![1, 1, 3]);
    }

    #[test]
    fn a_single_river_is_order_one_and_no_rivers_give_nothing() {
        assert_eq!(strahler_orders(&[river(&[(0, 0), (1, 1), (2, 2)])]), vec![vec![1, 1, 1]]);
        assert!(strahler_orders(&[]).is_empty());
    }

    #[test]
    fn carving_scales_river_heights_to_metres() {
        let metres = Heightmap::from_fn(5, 1, 1.0, |_, _| 100.0).unwrap();
        let mut r = river(&[(2, 0)]);
        r.points[0].height = 4.0; // 4 height units = 40 m at a scale of 10 m per unit
        let carved = carve_rivers_scaled(&metres, &[r], 10.0, 5.0).unwrap();
        assert_eq!(carved.as_slice(), &[100.0, 100.0, 35.0, 100.0, 100.0]);
    }
}
