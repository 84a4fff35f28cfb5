//! Hydrology outputs of `generate`: the rivers, lakes and flow the images need (taken from the
//! recipe's hydrology steps, or computed), `water.png`, `flow.png` and `rivers.geojson`.
//!
//! When the recipe has no `rivers`/`squig-rivers` step, the outputs compute the standard
//! chain on the final heights: Priority-Flood fill with ε → D8 routing → accumulation →
//! rivers where the drainage area is at least [`DEFAULT_RIVER_THRESHOLD`] of the map
//! (width [`DEFAULT_MAX_WIDTH`] cells at the largest river), the same as a `rivers` step with
//! its defaults. Without a `lakes` step, lakes are the depressions of the final heights
//! covering at least max(4, cells / 2000) cells (small pits are left out). The terrain itself
//! is never changed.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Value, json};
use terrasynth::Heightmap;
use terrasynth::hydro::{D8Router, DepressionFiller, River, extract_rivers, find_lakes};
use terrasynth::step::Terrain;

/// Drainage area (fraction of the map's cells) from which a cell is a river when the recipe
/// has no `rivers` step (the `rivers` step's default).
pub const DEFAULT_RIVER_THRESHOLD: f64 = 0.002;
/// Channel width in cells of the largest computed river (the `rivers` step's default).
pub const DEFAULT_MAX_WIDTH: f32 = 3.0;

/// Flow accumulation and rivers of a [`HydroView`], with which of them were computed.
pub struct FlowPart<'t> {
    flow: Cow<'t, [f32]>,
    rivers: Cow<'t, [River]>,
    computed: Vec<&'static str>,
}

/// Lake labels of a [`HydroView`] and their count; `computed` if the outputs found them.
pub struct LakePart<'t> {
    labels: Cow<'t, [u32]>,
    count: usize,
    computed: bool,
}

/// The hydrology layers the outputs draw: borrowed from the recipe's terrain when its steps
/// made them, computed (and owned) otherwise. Built from its two independent parts,
/// [`HydroView::flow_part`] and [`HydroView::lake_part`], which `generate` runs in parallel.
pub struct HydroView<'t> {
    /// D8 flow accumulation per cell, in cells.
    pub flow: Cow<'t, [f32]>,
    /// River polylines, upstream first (grid coordinates).
    pub rivers: Cow<'t, [River]>,
    /// Lake id per cell (0 = none).
    pub lake_labels: Cow<'t, [u32]>,
    /// Number of lakes.
    pub lake_count: usize,
    /// Which layers were computed by the outputs rather than taken from the recipe's steps.
    pub computed: Vec<&'static str>,
}

impl<'t> HydroView<'t> {
    /// The flow accumulation and rivers: the recipe's, or Priority-Flood ε fill → D8 →
    /// accumulation → rivers (module docs).
    pub fn flow_part(terrain: &'t Terrain) -> anyhow::Result<FlowPart<'t>> {
        let h = &terrain.height;
        let sea = terrain.sea_level;
        let have_rivers = terrain.hydro.flow.is_some() || !terrain.hydro.rivers.is_empty();
        if let (Some(f), true) = (&terrain.hydro.flow, have_rivers) {
            let rivers = Cow::Borrowed(terrain.hydro.rivers.as_slice());
            return Ok(FlowPart { flow: Cow::Borrowed(f.as_slice()), rivers, computed: vec![] });
        }
        let filled = DepressionFiller::with_epsilon().fill(h, sea)?;
        let field = D8Router.d8(&filled, sea)?;
        let acc = field.accumulate(None)?;
        let mut computed = vec!["flow"];
        let rivers = if have_rivers {
            Cow::Borrowed(terrain.hydro.rivers.as_slice())
        } else {
            computed.push("rivers");
            let threshold = (DEFAULT_RIVER_THRESHOLD * h.len() as f64).max(1.0);
            Cow::Owned(extract_rivers(&filled, &field, &acc, threshold, DEFAULT_MAX_WIDTH)?)
        };
        Ok(FlowPart {
            flow: Cow::Owned(acc.as_slice().iter().map(|&a| a as f32).collect()),
            rivers,
            computed,
        })
    }

    /// The lake labels: the recipe's, or the depressions of the final heights (module docs).
    pub fn lake_part(terrain: &'t Terrain) -> anyhow::Result<LakePart<'t>> {
        let h = &terrain.height;
        Ok(match &terrain.hydro.lake_labels {
            Some(l) => LakePart {
                labels: Cow::Borrowed(l.as_slice()),
                count: terrain.hydro.lakes.len(),
                computed: false,
            },
            None => {
                let min_area = (h.len() / 2000).max(4);
                let map = find_lakes(h, terrain.sea_level, 0.0, min_area)?;
                LakePart { labels: Cow::Owned(map.labels.into_vec()), count: map.lakes.len(), computed: true }
            }
        })
    }

    /// Puts the two parts together.
    pub fn from_parts(flow: FlowPart<'t>, lakes: LakePart<'t>) -> Self {
        let mut computed = flow.computed;
        if lakes.computed {
            computed.push("lakes");
        }
        Self {
            flow: flow.flow,
            rivers: flow.rivers,
            lake_labels: lakes.labels,
            lake_count: lakes.count,
            computed,
        }
    }

    /// Lake and river cells (rivers stamped as in [`stamp_rivers`]).
    pub fn fresh_water_mask(&self, width: usize, height: usize) -> Vec<bool> {
        let mut mask: Vec<bool> = self.lake_labels.iter().map(|&l| l != 0).collect();
        stamp_rivers(width, height, &self.rivers, |i, _| mask[i] = true);
        mask
    }
}

/// Calls `paint(cell index, discharge)` for every cell of every river drawn as discs of its
/// channel width (at least one cell across) stamped every half cell along its polyline.
pub fn stamp_rivers(width: usize, height: usize, rivers: &[River], mut paint: impl FnMut(usize, f32)) {
    for river in rivers {
        for seg in river.points.windows(2) {
            let (a, b) = (&seg[0], &seg[1]);
            let len = ((b.x - a.x).hypot(b.y - a.y) * 2.0).ceil().max(1.0) as usize;
            for k in 0..=len {
                let t = k as f32 / len as f32;
                let (cx, cy) = (a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t);
                let r = (0.5 * (a.width + (b.width - a.width) * t)).max(0.5);
                let q = a.discharge + (b.discharge - a.discharge) * t;
                let ri = r.ceil() as i64;
                for dy in -ri..=ri {
                    for dx in -ri..=ri {
                        let (px, py) = (cx.round() as i64 + dx, cy.round() as i64 + dy);
                        let inside = px >= 0 && py >= 0 && (px as usize) < width && (py as usize) < height;
                        if inside && (px as f32 - cx).hypot(py as f32 - cy) <= r {
                            paint(py as usize * width + px as usize, q);
                        }
                    }
                }
            }
        }
    }
}

/// Sea colour in `water.png`.
pub const SEA_RGBA: [u8; 4] = [24, 56, 110, 255];
/// Lake colour in `water.png`.
pub const LAKE_RGBA: [u8; 4] = [62, 128, 188, 255];

/// `water.png`, row by row: transparent land, sea in [`SEA_RGBA`], lakes in [`LAKE_RGBA`],
/// rivers from light blue (small) to deep blue (the largest discharge) on
/// `ln(1 + Q) / ln(1 + Q_max)`, drawn at their channel width (a cell covered by several
/// stamps takes the largest discharge). The river cells are kept sparse (cell index and
/// discharge, sorted), so no whole RGBA image is built.
pub struct WaterImage<'a> {
    view: &'a HydroView<'a>,
    height: &'a Heightmap,
    sea_level: f32,
    /// River cells: (cell index, largest discharge), sorted by index, one entry per cell.
    river_cells: Vec<(usize, f32)>,
    q_max: f32,
}

impl<'a> WaterImage<'a> {
    /// Stamps the rivers of `view` on a map the size of `height`.
    pub fn new(view: &'a HydroView<'a>, height: &'a Heightmap, sea_level: f32) -> Self {
        let (w, h) = (height.width(), height.height());
        let mut cells: Vec<(usize, f32)> = Vec::new();
        stamp_rivers(w, h, &view.rivers, |i, q| {
            if q > -1.0 {
                cells.push((i, q));
            }
        });
        // Per cell, the largest discharge of its stamps first, then one entry per cell.
        cells.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
        cells.dedup_by_key(|c| c.0);
        let q_max =
            view.rivers.iter().flat_map(|r| r.points.iter()).map(|p| p.discharge).fold(1.0f32, f32::max);
        Self { view, height, sea_level, river_cells: cells, q_max }
    }

    /// Pixels of row `y` (`width × 4` bytes).
    pub fn row(&self, y: usize, out: &mut [u8]) {
        let w = self.height.width();
        let z = &self.height.as_slice()[y * w..(y + 1) * w];
        let labels = &self.view.lake_labels[y * w..(y + 1) * w];
        for ((px, &v), &lake) in out.chunks_exact_mut(4).zip(z).zip(labels) {
            let c = if v < self.sea_level {
                SEA_RGBA
            } else if lake != 0 {
                LAKE_RGBA
            } else {
                [0; 4]
            };
            px.copy_from_slice(&c);
        }
        let start = self.river_cells.partition_point(|c| c.0 < y * w);
        let end = self.river_cells.partition_point(|c| c.0 < (y + 1) * w);
        for &(i, q) in &self.river_cells[start..end] {
            let t = (q.max(0.0).ln_1p() / self.q_max.ln_1p()).clamp(0.0, 1.0);
            let mix = |a: f32, b: f32| (a + (b - a) * t).round() as u8;
            let x = i - y * w;
            out[4 * x..4 * x + 4].copy_from_slice(&[
                mix(140.0, 20.0),
                mix(200.0, 80.0),
                mix(245.0, 190.0),
                255,
            ]);
        }
    }
}

/// `flow.png`, row by row: `255 · ln(1 + A) / ln(1 + A_max)`.
pub struct FlowImage<'a> {
    flow: &'a [f32],
    log_max: f32,
}

impl<'a> FlowImage<'a> {
    /// Finds `A_max` of the view's flow accumulation.
    pub fn new(view: &'a HydroView<'a>) -> Self {
        let flow: &[f32] = &view.flow;
        let log_max = flow.iter().fold(0.0f32, |m, &a| m.max(a)).ln_1p().max(f32::MIN_POSITIVE);
        Self { flow, log_max }
    }

    /// Grey levels of row `y` (`out.len()` = the width).
    pub fn row(&self, y: usize, out: &mut [u8]) {
        let w = out.len();
        for (o, &a) in out.iter_mut().zip(&self.flow[y * w..(y + 1) * w]) {
            *o = (a.max(0.0).ln_1p() / self.log_max * 255.0).round().clamp(0.0, 255.0) as u8;
        }
    }
}

/// Strahler order at every river vertex, from the network the polylines form (vertices
/// rounded to cells; a river's last vertex is the junction with the river it joins).
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

/// `rivers.geojson` (RFC 7946): a FeatureCollection with one LineString per river, upstream
/// first. Coordinates are local world metres `[x, y, z]`: `x = column · cell size`,
/// `y = row · cell size` (rows go south, as in the heightmaps), `z` = the water surface
/// (filled surface) height in metres. Properties: `id`, `order` (Strahler order of the river
/// above its last vertex, which is the junction with the river it joins or its outlet),
/// `discharge_cells` and `drainage_area_m2` at that point, `max_width_m`, `length_m`, and
/// `grid`, the polyline in grid coordinates (column, row).
pub fn rivers_geojson(view: &HydroView, cell_size_m: f64, height_scale_m: f64) -> Value {
    let orders = strahler_orders(&view.rivers);
    let features: Vec<Value> = view
        .rivers
        .iter()
        .zip(&orders)
        .enumerate()
        .map(|(id, (r, ord))| {
            let n = r.points.len();
            let own = n.saturating_sub(2);
            let coords: Vec<Value> = r
                .points
                .iter()
                .map(|p| {
                    json!([
                        p.x as f64 * cell_size_m,
                        p.y as f64 * cell_size_m,
                        p.height as f64 * height_scale_m
                    ])
                })
                .collect();
            let grid: Vec<Value> = r.points.iter().map(|p| json!([p.x, p.y])).collect();
            let length: f64 = r
                .points
                .windows(2)
                .map(|s| ((s[1].x - s[0].x) as f64).hypot((s[1].y - s[0].y) as f64))
                .sum::<f64>()
                * cell_size_m;
            let q = r.points.get(own).map_or(0.0, |p| p.discharge as f64);
            let width = r.points.iter().map(|p| p.width).fold(0.0f32, f32::max) as f64;
            json!({
                "type": "Feature",
                "geometry": {"type": "LineString", "coordinates": coords},
                "properties": {
                    "id": id,
                    "order": ord.get(own).copied().unwrap_or(1),
                    "discharge_cells": q,
                    "drainage_area_m2": q * cell_size_m * cell_size_m,
                    "max_width_m": width.max(1.0) * cell_size_m,
                    "length_m": length,
                    "grid": grid,
                },
            })
        })
        .collect();
    json!({
        "type": "FeatureCollection",
        "name": "rivers",
        "cell_size_m": cell_size_m,
        "features": features,
    })
}

/// Lowers the river beds of `metres` (a copy for the mesh) with the hydrology module's
/// carving: each river cell is cut to at most its water surface minus
/// `depth_m · (Q / Q_max)^0.4`.
pub fn carved(
    metres: &Heightmap,
    view: &HydroView,
    height_scale_m: f64,
    depth_m: f32,
) -> anyhow::Result<Heightmap> {
    let mut out = metres.clone();
    let scaled: Vec<River> = view
        .rivers
        .iter()
        .map(|r| {
            let mut r = r.clone();
            for p in &mut r.points {
                p.height = (p.height as f64 * height_scale_m) as f32;
            }
            r
        })
        .collect();
    terrasynth::hydro::carve_rivers(&mut out, &scaled, depth_m)?;
    Ok(out)
}
