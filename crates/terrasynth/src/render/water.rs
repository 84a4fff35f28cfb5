//! Water drawn on maps: river rasterising ([`stamp_rivers`]), the fresh-water mask, and the
//! row renderers of `water.png` ([`WaterImage`]) and `flow.png` ([`FlowImage`]) from the
//! hydrology layers ([`WaterLayers`]). Row by row, so a caller can stream an image without
//! holding it whole.

use terrasynth_noise::detmath;

use crate::Heightmap;
use crate::hydro::{River, WaterLayers};

/// Sea colour in `water.png`.
pub const SEA_RGBA: [u8; 4] = [24, 56, 110, 255];
/// Lake colour in `water.png`; also the fresh water painted over `color.png`/`shaded.png`
/// (the `classic` palette's shallow water).
pub const LAKE_RGBA: [u8; 4] = [62, 128, 188, 255];

/// Calls `paint(cell index, discharge)` for every cell of every river drawn as discs of its
/// channel width (at least one cell across) stamped every half cell along its polyline.
pub fn stamp_rivers(width: usize, height: usize, rivers: &[River], mut paint: impl FnMut(usize, f32)) {
    for river in rivers {
        for seg in river.points.windows(2) {
            let (a, b) = (&seg[0], &seg[1]);
            let len = (detmath::hypotf(b.x - a.x, b.y - a.y) * 2.0).ceil().max(1.0) as usize;
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
                        if inside && detmath::hypotf(px as f32 - cx, py as f32 - cy) <= r {
                            paint(py as usize * width + px as usize, q);
                        }
                    }
                }
            }
        }
    }
}

/// Lake and river cells of `layers` (rivers stamped as in [`stamp_rivers`]), row-major.
pub fn fresh_water_mask(layers: &WaterLayers) -> Vec<bool> {
    let mut mask: Vec<bool> = layers.lake_labels.iter().map(|&l| l != 0).collect();
    stamp_rivers(layers.width, layers.height, &layers.rivers, |i, _| mask[i] = true);
    mask
}

/// `water.png`, row by row: transparent land, sea in [`SEA_RGBA`], lakes in [`LAKE_RGBA`],
/// rivers from light blue (small) to deep blue (the largest discharge) on
/// `ln(1 + Q) / ln(1 + Q_max)`, drawn at their channel width (a cell covered by several
/// stamps takes the largest discharge). The river cells are kept sparse (cell index and
/// discharge, sorted), so no whole RGBA image is built.
pub struct WaterImage<'a> {
    layers: &'a WaterLayers<'a>,
    height: &'a Heightmap,
    sea_level: f32,
    /// River cells: (cell index, largest discharge), sorted by index, one entry per cell.
    river_cells: Vec<(usize, f32)>,
    q_max: f32,
}

impl<'a> WaterImage<'a> {
    /// Stamps the rivers of `layers` on a map the size of `height`.
    pub fn new(layers: &'a WaterLayers<'a>, height: &'a Heightmap, sea_level: f32) -> Self {
        let (w, h) = (height.width(), height.height());
        let mut cells: Vec<(usize, f32)> = Vec::new();
        stamp_rivers(w, h, &layers.rivers, |i, q| {
            if q > -1.0 {
                cells.push((i, q));
            }
        });
        // Per cell, the largest discharge of its stamps first, then one entry per cell.
        cells.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
        cells.dedup_by_key(|c| c.0);
        let q_max =
            layers.rivers.iter().flat_map(|r| r.points.iter()).map(|p| p.discharge).fold(1.0f32, f32::max);
        Self { layers, height, sea_level, river_cells: cells, q_max }
    }

    /// Pixels of row `y` (`width × 4` bytes).
    pub fn row(&self, y: usize, out: &mut [u8]) {
        let w = self.height.width();
        let z = &self.height.as_slice()[y * w..(y + 1) * w];
        let labels = &self.layers.lake_labels[y * w..(y + 1) * w];
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
            let t = (detmath::ln_1pf(q.max(0.0)) / detmath::ln_1pf(self.q_max)).clamp(0.0, 1.0);
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
    /// The grey level of each whole area below [`FLOW_TABLE`] cells, computed once.
    small: Vec<u8>,
}

/// Drainage areas are whole numbers of cells, most of them small: their grey levels are
/// looked up (each computed once, by the same formula, so the same bytes) instead of a
/// library `ln_1p` per pixel.
const FLOW_TABLE: usize = 4096;

impl<'a> FlowImage<'a> {
    /// Finds `A_max` of the layers' flow accumulation.
    pub fn new(layers: &'a WaterLayers<'a>) -> Self {
        let flow: &[f32] = &layers.flow;
        let log_max = detmath::ln_1pf(flow.iter().fold(0.0f32, |m, &a| m.max(a))).max(f32::MIN_POSITIVE);
        let small = (0..FLOW_TABLE).map(|k| Self::grey(k as f32, log_max)).collect();
        Self { flow, log_max, small }
    }

    /// `round(ln(1 + A) / ln(1 + A_max) · 255)`, clamped to a byte (negative and NaN areas
    /// count as 0).
    #[inline]
    fn grey(a: f32, log_max: f32) -> u8 {
        super::round_clamped((detmath::ln_1pf(a.max(0.0)) / log_max * 255.0) as f64, 255.0) as u8
    }

    /// Grey levels of row `y` (`out.len()` = the width).
    pub fn row(&self, y: usize, out: &mut [u8]) {
        let w = out.len();
        for (o, &a) in out.iter_mut().zip(&self.flow[y * w..(y + 1) * w]) {
            let k = a as u32;
            *o = if (k as usize) < self.small.len() && k as f32 == a {
                self.small[k as usize]
            } else {
                Self::grey(a, self.log_max)
            };
        }
    }
}
