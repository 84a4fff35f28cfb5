//! Colours of the 2D view, computed per cell so a brush stroke only recolours the rectangle it
//! touched.
//!
//! Colours and shading are the library's, so the view shows what the exported images show:
//! heights are taken in metres (`(h as f64 · height_scale) as f32`, as `terrasynth generate`
//! does), palette colours come from the metres range of the map as generated (as
//! `color.png`), and "Shaded relief" is `terrasynth::render::hillshade` (Horn gradient, sun at
//! azimuth 315° and altitude 45°, ambient 0.35, flat sea) applied with
//! [`shade_pixel`] — the pixels of `shaded.png` for the same heights. The recipe's own lakes
//! and rivers (its `rivers`, `lakes`, `squig-rivers` steps: `export::recipe_water_mask`, the
//! cells the export paints) are painted in the export's fresh-water colour before shading in
//! "Colour" and "Shaded relief", as on `color.png` and `shaded.png`, so what the view shows is
//! what the export writes. So are the rivers of the user's sources (`Water::placed_cells`, the
//! cells `export` paints for them). "Grayscale" and "Slope" paint the same cells in that colour
//! over their own values, so every view shows the rivers and lakes of water.png. The water
//! view shades its muted land with the same light.
//! Slope in degrees is `atan(|∇z|)` from central differences in metres.

use eframe::egui::Color32;
use rayon::prelude::*;
use terrasynth::Heightmap;
use terrasynth::render::hillshade::{Hillshader, shade_pixel};
use terrasynth::render::palette::FractionMap;
use terrasynth::render::water::LAKE_RGBA;
use terrasynth::render::{HillshadeOptions, Palette};

pub use crate::settings::ViewMode;
use crate::water::Water;

/// Everything needed to colour cells, fixed for one generated map (so strokes do not shift
/// the colours of untouched cells).
pub struct MapStyle<'a> {
    /// The recipe's palette.
    pub palette: &'a Palette,
    /// Height in metres → palette fraction (the metres range of the map at generation time,
    /// with the sea level in metres), as `color.png`.
    pub fraction: FractionMap,
    /// Lowest height at generation time (grayscale black).
    pub lo: f32,
    /// Highest height at generation time (grayscale white).
    pub hi: f32,
    /// Sea level, height units.
    pub sea_level: f32,
    /// Metres per height unit (the recipe's `exports.height-scale`).
    pub height_scale: f64,
    /// Water layers, when computed.
    pub water: Option<&'a Water>,
    /// The recipe's own lake and river cells (row-major), painted in fresh water in the colour
    /// and shaded modes as the export paints them (None: the recipe has none).
    pub recipe_water: Option<&'a [bool]>,
}

impl<'a> MapStyle<'a> {
    /// The style of a map whose heights spanned `lo ..= hi` when generated.
    pub fn new(
        palette: &'a Palette,
        (lo, hi): (f32, f32),
        sea_level: f32,
        height_scale: f64,
        water: Option<&'a Water>,
    ) -> Self {
        let m = |h: f32| metres(h, height_scale);
        let fraction = palette.fraction_map(m(lo), m(hi), Some(m(sea_level)));
        Self { palette, fraction, lo, hi, sea_level, height_scale, water, recipe_water: None }
    }

    /// The same style with the recipe's water cells painted (see [`MapStyle::recipe_water`]).
    pub fn with_recipe_water(self, mask: Option<&'a [bool]>) -> Self {
        Self { recipe_water: mask, ..self }
    }

    /// Palette colour of a height (height units).
    fn base(&self, h: f32) -> [u8; 3] {
        self.palette.color_at(self.fraction.fraction(metres(h, self.height_scale)))
    }
}

/// A height in metres as `terrasynth generate` converts it: `(h as f64 · scale) as f32`.
#[inline]
pub fn metres(h: f32, height_scale: f64) -> f32 {
    (h as f64 * height_scale) as f32
}

/// The light of shaded relief: the library's default hillshade.
fn shading() -> HillshadeOptions {
    HillshadeOptions::default()
}

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

/// `rgb` × the library's light factor of hillshade `hs` (see [`shade_pixel`]).
fn shaded(rgb: [u8; 3], hs: f32) -> Color32 {
    let opts = shading();
    let c = shade_pixel(rgb, hs, opts.ambient, opts.sun_vector()[2]);
    Color32::from_rgb(c[0], c[1], c[2])
}

fn lerp3(a: [f32; 3], b: [f32; 3], t: f32) -> [u8; 3] {
    let t = t.clamp(0.0, 1.0);
    [0, 1, 2].map(|k| (a[k] + (b[k] - a[k]) * t).round() as u8)
}

const WATER_BLUE: [u8; 3] = [40, 100, 200];

/// The colour of cell `(x, y)` in `mode`; `hs` is its hillshade (used by the shaded and water
/// modes, from [`Hillshader`]).
fn cell_color(map: &Heightmap, style: &MapStyle, mode: ViewMode, x: usize, y: usize, hs: f32) -> Color32 {
    let hv = map.as_slice()[y * map.width() + x];
    let i = y * map.width() + x;
    let wet = || {
        style.recipe_water.is_some_and(|m| m[i])
            || style.water.is_some_and(|w| w.placed_cells.len() == map.len() && w.placed_cells[i])
    };
    let base = || if wet() { [LAKE_RGBA[0], LAKE_RGBA[1], LAKE_RGBA[2]] } else { style.base(hv) };
    let height_scale = style.height_scale as f32;
    match mode {
        ViewMode::Colour => {
            let c = base();
            Color32::from_rgb(c[0], c[1], c[2])
        }
        ViewMode::Shaded => shaded(base(), hs),
        // Every view shows the fresh water the export writes (water.png): the grey and slope
        // views paint it in the export's lake colour over their own values.
        ViewMode::Grayscale | ViewMode::Slope if wet() => {
            Color32::from_rgb(LAKE_RGBA[0], LAKE_RGBA[1], LAKE_RGBA[2])
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
            let (dx, dy) = gradient(map, x, y, height_scale);
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
            let lake = style.water.is_some_and(|w| w.is_fresh(i));
            if hv < style.sea_level {
                Color32::from_rgb(25, 60, 130)
            } else if lake {
                Color32::from_rgb(WATER_BLUE[0], WATER_BLUE[1], WATER_BLUE[2])
            } else {
                let c = base();
                let grey = (c[0] as f32 + c[1] as f32 + c[2] as f32) / 3.0;
                let muted = [0, 1, 2].map(|k| ((c[k] as f32 + grey) * 0.5) as u8);
                shaded(muted, hs)
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
    let opts = shading();
    let lit = matches!(mode, ViewMode::Shaded | ViewMode::Water);
    // The recipe checks the height scale; should it still be unusable, the map is drawn flat.
    let shader = lit
        .then(|| Hillshader::in_metres(map, &opts, Some(style.sea_level), style.height_scale).ok())
        .flatten();
    let flat = opts.sun_vector()[2] as f32;
    let mut out = vec![Color32::BLACK; w * h];
    out.par_chunks_mut(w.max(1)).enumerate().for_each_init(
        || vec![flat; w],
        |hs, (r, row)| {
            if let Some(s) = &shader {
                s.span(y0 + r, x0, hs);
            }
            for (c, px) in row.iter_mut().enumerate() {
                *px = cell_color(map, style, mode, x0 + c, y0 + r, hs[c]);
            }
        },
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use terrasynth::render::hillshade::shaded_relief;

    /// The shaded view of a map, whole or a rectangle at a time (as a brush stroke redraws it),
    /// is exactly `shaded.png` without water: the library's colour × hillshade of the heights in
    /// metres with the sea level in metres.
    #[test]
    fn shaded_relief_is_the_librarys_shaded_image() {
        let (w, h) = (61, 37);
        let map = Heightmap::from_fn(w, h, 12.5, |x, y| {
            let (u, v) = (x as f32 / w as f32 - 0.5, y as f32 / h as f32 - 0.5);
            (0.6 - 2.0 * (u * u + v * v)) + 0.05 * ((x * 7 + y * 3) % 11) as f32 / 11.0
        })
        .unwrap();
        let palette = Palette::named("classic").unwrap();
        let (sea, scale) = (0.25, 731.0);
        let style = MapStyle::new(&palette, map.min_max().unwrap(), sea, scale, None);
        let metres_map = map.map(|&v| metres(v, scale));
        let want = shaded_relief(&metres_map, &palette, &shading(), Some(metres(sea, scale))).unwrap();
        let got: Vec<u8> = render_rect(&map, &style, ViewMode::Shaded, (0, 0, w, h))
            .iter()
            .flat_map(|c| [c.r(), c.g(), c.b()])
            .collect();
        assert_eq!(got, want);
        // Sea, flat land, lit and shadowed slopes all occur, so every branch is compared.
        assert!(map.as_slice().iter().any(|&v| v < sea) && map.as_slice().iter().any(|&v| v > sea));
        let rect = (13, 5, 20, 9);
        let part = render_rect(&map, &style, ViewMode::Shaded, rect);
        for (k, c) in part.iter().enumerate() {
            let (x, y) = (rect.0 + k % rect.2, rect.1 + k / rect.2);
            let i = 3 * (y * w + x);
            assert_eq!([c.r(), c.g(), c.b()], [want[i], want[i + 1], want[i + 2]], "cell {x}, {y}");
        }
    }
}
