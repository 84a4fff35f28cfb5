//! Colours of the 2D view, computed per cell so a brush stroke only recolours the rectangle it
//! touched.
//!
//! Shading: the surface normal from central differences in metres,
//! `n = normalize(−∂z/∂x, −∂z/∂y, 1)` with `z = h · height_scale` and steps of `cell_size`
//! (one-sided at the edges), lit by a sun at azimuth 315° (north-west, row 0 is north) and
//! altitude 45°: `light = n · L`, colour factor `0.35 + 0.65 · light / L_z` (1 on flat ground).
//! Slope in degrees is `atan(|∇z|)`.

use eframe::egui::Color32;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use terrasynth::Heightmap;
use terrasynth::render::Palette;
use terrasynth::render::palette::FractionMap;

use crate::water::Water;

/// What the 2D view shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ViewMode {
    /// Palette colours by height.
    Colour,
    /// Palette colours times the hillshade.
    Shaded,
    /// Height as grey, low = black.
    Grayscale,
    /// Slope, 0° (dark green) to 60°+ (red).
    Slope,
    /// Shaded land in muted colours with the sea, lakes and rivers in blue.
    Water,
    /// D8 flow accumulation, `ln(1 + area)`, dark to bright cyan.
    Flow,
}

impl ViewMode {
    /// Every mode, in menu order.
    pub const ALL: [ViewMode; 6] = [
        ViewMode::Colour,
        ViewMode::Shaded,
        ViewMode::Grayscale,
        ViewMode::Slope,
        ViewMode::Water,
        ViewMode::Flow,
    ];

    /// Label shown in the UI.
    pub fn label(self) -> &'static str {
        match self {
            ViewMode::Colour => "Colour",
            ViewMode::Shaded => "Shaded relief",
            ViewMode::Grayscale => "Grayscale",
            ViewMode::Slope => "Slope",
            ViewMode::Water => "Water",
            ViewMode::Flow => "Flow",
        }
    }

    /// Tooltip text.
    pub fn tooltip(self) -> &'static str {
        match self {
            ViewMode::Colour => "Terrain colours by height (the recipe's palette), sea below the sea level.",
            ViewMode::Shaded => {
                "Palette colours lit by a sun in the north-west (45° high): shows the relief."
            }
            ViewMode::Grayscale => "Height as grey: the lowest cell black, the highest white.",
            ViewMode::Slope => "Steepness: flat is dark green, 30° yellow, 60° and steeper red.",
            ViewMode::Water => "Sea, lakes (filled depressions) and rivers from your sources in blue.",
            ViewMode::Flow => "Drainage area (D8 flow accumulation, log scale): valleys light up.",
        }
    }
}

/// Everything needed to colour cells, fixed for one generated map (so strokes do not shift
/// the colours of untouched cells).
pub struct MapStyle<'a> {
    /// The recipe's palette.
    pub palette: &'a Palette,
    /// Height → palette fraction (map range at generation time, with the sea level).
    pub fraction: FractionMap,
    /// Lowest height at generation time (grayscale black).
    pub lo: f32,
    /// Highest height at generation time (grayscale white).
    pub hi: f32,
    /// Sea level, height units.
    pub sea_level: f32,
    /// Metres per height unit (vertical scale of the shading).
    pub height_scale: f32,
    /// Water layers, when computed.
    pub water: Option<&'a Water>,
}

/// Sun direction (towards the sun): azimuth 315°, altitude 45°; x east, y south, z up.
const SUN: [f32; 3] = [-0.5, -0.5, std::f32::consts::FRAC_1_SQRT_2];

/// Gradient `(∂z/∂x, ∂z/∂y)` in metres per metre at cell `(x, y)`.
#[inline]
pub fn gradient(map: &Heightmap, x: usize, y: usize, height_scale: f32) -> (f32, f32) {
    let (w, h) = (map.width(), map.height());
    let s = map.as_slice();
    let cs = map.cell_size() as f32;
    let (x0, x1) = (x.saturating_sub(1), (x + 1).min(w - 1));
    let (y0, y1) = (y.saturating_sub(1), (y + 1).min(h - 1));
    let dx = (s[y * w + x1] - s[y * w + x0]) * height_scale / (cs * (x1 - x0).max(1) as f32);
    let dy = (s[y1 * w + x] - s[y0 * w + x]) * height_scale / (cs * (y1 - y0).max(1) as f32);
    (dx, dy)
}

/// Shading factor at a cell (1 on flat ground).
#[inline]
fn light(dx: f32, dy: f32) -> f32 {
    let inv = 1.0 / (dx * dx + dy * dy + 1.0).sqrt();
    let d = (-dx * SUN[0] - dy * SUN[1] + SUN[2]) * inv;
    0.35 + 0.65 * d.max(0.0) / SUN[2]
}

fn scale(c: [u8; 3], f: f32) -> Color32 {
    let m = |v: u8| (v as f32 * f).round().clamp(0.0, 255.0) as u8;
    Color32::from_rgb(m(c[0]), m(c[1]), m(c[2]))
}

fn lerp3(a: [f32; 3], b: [f32; 3], t: f32) -> [u8; 3] {
    let t = t.clamp(0.0, 1.0);
    [0, 1, 2].map(|k| (a[k] + (b[k] - a[k]) * t).round() as u8)
}

const WATER_BLUE: [u8; 3] = [40, 100, 200];

/// The colour of cell `(x, y)` in `mode`.
pub fn cell_color(map: &Heightmap, style: &MapStyle, mode: ViewMode, x: usize, y: usize) -> Color32 {
    let hv = map.as_slice()[y * map.width() + x];
    let base = || style.palette.color_at(style.fraction.fraction(hv));
    match mode {
        ViewMode::Colour => {
            let c = base();
            Color32::from_rgb(c[0], c[1], c[2])
        }
        ViewMode::Shaded => {
            let (dx, dy) =
                if hv < style.sea_level { (0.0, 0.0) } else { gradient(map, x, y, style.height_scale) };
            scale(base(), light(dx, dy))
        }
        ViewMode::Grayscale => {
            let t = if style.hi > style.lo {
                ((hv - style.lo) / (style.hi - style.lo)).clamp(0.0, 1.0)
            } else {
                0.5
            };
            let g = (t * 255.0).round() as u8;
            Color32::from_gray(g)
        }
        ViewMode::Slope => {
            let (dx, dy) = gradient(map, x, y, style.height_scale);
            let deg = (dx * dx + dy * dy).sqrt().atan().to_degrees();
            let c = if deg < 30.0 {
                lerp3([30.0, 90.0, 40.0], [230.0, 210.0, 60.0], deg / 30.0)
            } else {
                lerp3([230.0, 210.0, 60.0], [200.0, 40.0, 30.0], (deg - 30.0) / 30.0)
            };
            Color32::from_rgb(c[0], c[1], c[2])
        }
        ViewMode::Water => {
            let i = y * map.width() + x;
            let lake = style.water.is_some_and(|w| w.lake_labels.as_slice()[i] != 0);
            if hv < style.sea_level {
                Color32::from_rgb(25, 60, 130)
            } else if lake {
                Color32::from_rgb(WATER_BLUE[0], WATER_BLUE[1], WATER_BLUE[2])
            } else {
                let (dx, dy) = gradient(map, x, y, style.height_scale);
                let c = base();
                let grey = (c[0] as f32 + c[1] as f32 + c[2] as f32) / 3.0;
                let muted = [0, 1, 2].map(|k| ((c[k] as f32 + grey) * 0.5) as u8);
                scale(muted, light(dx, dy))
            }
        }
        ViewMode::Flow => match style.water {
            Some(w) => {
                let f = w.log_flow.as_slice()[y * map.width() + x];
                let max = (map.len() as f32).ln().max(1.0);
                let c = lerp3([10.0, 15.0, 30.0], [120.0, 240.0, 255.0], (f / max).powf(1.5));
                Color32::from_rgb(c[0], c[1], c[2])
            }
            None => Color32::from_gray(20),
        },
    }
}

/// Colours of the rectangle `(x0, y0, w, h)` of `map`, row-major (rows in parallel; each
/// pixel depends only on the map, so the result does not depend on the thread count).
pub fn render_rect(
    map: &Heightmap,
    style: &MapStyle,
    mode: ViewMode,
    (x0, y0, w, h): (usize, usize, usize, usize),
) -> Vec<Color32> {
    let mut out = vec![Color32::BLACK; w * h];
    out.par_chunks_mut(w.max(1)).enumerate().for_each(|(r, row)| {
        for (c, px) in row.iter_mut().enumerate() {
            *px = cell_color(map, style, mode, x0 + c, y0 + r);
        }
    });
    out
}
