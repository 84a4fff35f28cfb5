//! Rivers: the drainage network (cells whose accumulation reaches a threshold), rivers traced
//! from user-placed sources (seed 004 §9), and carving of river beds.
//!
//! Width from discharge by downstream hydraulic geometry (Leopold & Maddock 1953, USGS Prof.
//! Paper 252): `w = a·Q^0.5`, `d = c·Q^0.4`. With unit rainfall the discharge `Q` is
//! proportional to the drainage area (the D8 accumulation `A`), so here
//! `width = max_width · (A / A_max)^0.5` cells and `depth = carve_depth · (A / A_max)^0.4`,
//! where `A_max` is the largest accumulation on the map.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::fill::{DepressionFiller, check_dem};
use super::flow::{FlowField, steepest_lower};
use super::lakes::{LakeMap, lakes_from_fill};
use crate::grid::D8;
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
    if !(carve_depth.is_finite() && carve_depth >= 0.0) {
        return Err(Error::param("carve-depth", carve_depth, "a finite number >= 0 (height units)"));
    }
    let q_max = rivers.iter().flat_map(|r| r.points.iter()).map(|p| p.discharge).fold(1.0f32, f32::max);
    let (w, h) = (terrain.width() as i64, terrain.height() as i64);
    for p in rivers.iter().flat_map(|r| r.points.iter()) {
        let bed = p.height - carve_depth * (p.discharge / q_max).powf(0.4);
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
    // Kahn's algorithm from the sources; nodes in a cycle (none for D8 rivers) get order 1.
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

/// How [`river_from_source`] walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RiverMode {
    /// The seed's first walk (seed 004 §9, version 1): step to the lowest unvisited
    /// 8-neighbour of the raw terrain; stop at the sea (height below the sea level), at the
    /// map edge, or in a local minimum (when every unvisited neighbour is higher). Kept as a
    /// reference: it stops in the first pit.
    Reference,
    /// Follow D8 steepest descent on the ε-filled surface: the river always reaches the sea
    /// or the map edge, crosses lakes at their surface, never revisits a cell (heights strictly
    /// decrease) and drains flats.
    Filled,
}

/// Why a traced river stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RiverEnd {
    /// Reached a cell below the sea level.
    Sea,
    /// Reached the map edge (water leaves the map).
    Edge,
    /// Stopped in a local minimum (only in [`RiverMode::Reference`]).
    Pit,
}

/// A river traced from one source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceRiver {
    /// Cells from the source downstream, `(x, y)`.
    pub cells: Vec<(usize, usize)>,
    /// Cell centres in world coordinates (metres).
    pub world: Vec<[f64; 2]>,
    /// Height at each cell: the filled surface (water surface) in [`RiverMode::Filled`], the
    /// raw terrain in [`RiverMode::Reference`].
    pub heights: Vec<f32>,
    /// Ids of the lakes crossed, in order (see [`LakeMap`]); empty in Reference mode.
    pub lakes: Vec<u32>,
    /// Why the walk stopped.
    pub end: RiverEnd,
}

/// Reusable state for tracing many rivers on one terrain: the ε-filled surface and the lakes.
/// Build it once after each terrain edit, then call [`RiverTracer::trace`] per source (each
/// trace costs O(river length)).
#[derive(Clone, Debug)]
pub struct RiverTracer {
    raw: Heightmap,
    filled: Heightmap,
    lakes: LakeMap,
    sea_level: f32,
}

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
        let cs = self.raw.cell_size();
        let mut out = SourceRiver {
            cells: Vec::new(),
            world: Vec::new(),
            heights: Vec::new(),
            lakes: Vec::new(),
            end: RiverEnd::Edge,
        };
        let surface = match mode {
            RiverMode::Reference => &self.raw,
            RiverMode::Filled => &self.filled,
        };
        let z = surface.as_slice();
        let mut visited = std::collections::HashSet::new();
        let mut c = source.1 * w + source.0;
        loop {
            let (x, y) = (c % w, c / w);
            out.cells.push((x, y));
            out.world.push([x as f64 * cs, y as f64 * cs]);
            out.heights.push(z[c]);
            visited.insert(c);
            if mode == RiverMode::Filled {
                let l = self.lakes.labels.as_slice()[c];
                if l != 0 && out.lakes.last() != Some(&l) {
                    out.lakes.push(l);
                }
            }
            if self.raw.as_slice()[c] < self.sea_level {
                out.end = RiverEnd::Sea;
                break;
            }
            if x == 0 || y == 0 || x + 1 == w || y + 1 == h {
                out.end = RiverEnd::Edge;
                break;
            }
            let next = match mode {
                RiverMode::Filled => steepest_lower(z, w, h, x, y),
                RiverMode::Reference => lowest_unvisited(z, w, x, y, &visited).filter(|&n| z[n] <= z[c]),
            };
            match next {
                Some(n) => c = n,
                None => {
                    out.end = RiverEnd::Pit;
                    break;
                }
            }
        }
        Ok(out)
    }
}

/// The lowest unvisited 8-neighbour of interior cell `(x, y)` (ties: first in neighbour order).
fn lowest_unvisited(
    z: &[f32],
    w: usize,
    x: usize,
    y: usize,
    visited: &std::collections::HashSet<usize>,
) -> Option<usize> {
    let mut best: Option<usize> = None;
    for &(dx, dy) in &D8 {
        let n = (y as i64 + dy as i64) as usize * w + (x as i64 + dx as i64) as usize;
        if !visited.contains(&n) && best.is_none_or(|b| z[n] < z[b]) {
            best = Some(n);
        }
    }
    best
}

/// Traces one river from `source` on `dem` (see [`RiverMode`]). For many sources on one
/// terrain, build a [`RiverTracer`] once instead.
///
/// ```
/// use terrasynth::{Heightmap, hydro::{RiverEnd, RiverMode, river_from_source}};
/// // A slope falling to the east with a pit in the middle: the reference walk stops in the
/// // pit, the filled walk crosses it and reaches the east edge.
/// let mut dem = Heightmap::from_fn(9, 5, 1.0, |x, _| (9 - x) as f32).unwrap();
/// dem[(4, 2)] = 0.0;
/// let r = river_from_source(&dem, -1.0, (1, 2), RiverMode::Reference).unwrap();
/// assert_eq!((r.end, r.cells.last().copied()), (RiverEnd::Pit, Some((4, 2))));
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
