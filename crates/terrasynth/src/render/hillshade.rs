//! Hillshade (shaded relief) and colour × hillshade.
//!
//! ## Gradient: Horn's method (Horn 1981, "Hill shading and the reflectance map", Proc. IEEE
//! 69(1); the formula of GDAL and ArcGIS). With the 3×3 window
//! ```text
//!   a b c
//!   d e f      (row above = north, row below = south)
//!   g h i
//! ```
//! `∂z/∂x = ((c + 2f + i) − (a + 2d + g)) / (8 · cell)` (east) and
//! `∂z/∂y = ((a + 2b + c) − (g + 2h + i)) / (8 · cell)` (north), heights multiplied by the
//! z-factor. Cells outside the map take the value of the nearest edge cell.
//!
//! ## Shading: Lambert with the sun at azimuth `A` (clockwise from north, default 315° = NW) and
//! altitude `θ` (default 45°): surface normal `n = normalise(−∂z/∂x, −∂z/∂y, 1)`, sun vector
//! `L = (sin A cos θ, cos A cos θ, sin θ)`, `hillshade = max(0, n · L)` in [0, 1]. This equals
//! the usual `cos(zenith)cos(slope) + sin(zenith)sin(slope)cos(azimuth − aspect)`. A flat cell
//! gets `sin θ` (0.707 at 45°).
//!
//! ## Colour × hillshade ([`shade`]): `out = colour · (ambient + (1 − ambient) · hs / sin θ)`,
//! clamped to 255. Dividing by `sin θ` keeps flat ground at its palette colour; slopes facing
//! the sun brighten, slopes facing away darken down to `ambient · colour` (default ambient
//! 0.35), so shadows keep their hue and are never black. Cells below the sea level are shaded
//! as the flat sea surface when [`HillshadeOptions::flat_water`] is set (the palette already
//! gives water its depth gradient).

use rayon::prelude::*;
use terrasynth_noise::detmath;

use crate::{Error, Heightmap, Result};

/// Hillshade settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HillshadeOptions {
    /// Sun azimuth, degrees clockwise from north (row 0 side of the map). Default 315; any
    /// finite value (taken mod 360).
    pub azimuth_deg: f64,
    /// Sun altitude above the horizon, degrees, in (0, 90]. Default 45.
    pub altitude_deg: f64,
    /// Vertical exaggeration: heights are multiplied by this before the gradient (use it when
    /// heights and cell size are in different units, e.g. heights in [0, 1] on a 1 m grid).
    /// Default 1; finite and > 0.
    pub z_factor: f64,
    /// Share of light that reaches slopes facing away from the sun in [`shade`], in [0, 1].
    /// Default 0.35.
    pub ambient: f64,
    /// Shade cells below the sea level as a flat surface (default true).
    pub flat_water: bool,
}

impl Default for HillshadeOptions {
    fn default() -> Self {
        Self { azimuth_deg: 315.0, altitude_deg: 45.0, z_factor: 1.0, ambient: 0.35, flat_water: true }
    }
}

impl HillshadeOptions {
    /// Checks every field (errors name the field, the value and the allowed range).
    pub fn validate(&self) -> Result<()> {
        if !self.azimuth_deg.is_finite() {
            return Err(Error::param("azimuth", self.azimuth_deg, "a finite angle in degrees"));
        }
        if !(self.altitude_deg.is_finite() && self.altitude_deg > 0.0 && self.altitude_deg <= 90.0) {
            return Err(Error::param("altitude", self.altitude_deg, "degrees in (0, 90]"));
        }
        if !(self.z_factor.is_finite() && self.z_factor > 0.0) {
            return Err(Error::param("z_factor", self.z_factor, "a finite number > 0"));
        }
        if !(self.ambient.is_finite() && (0.0..=1.0).contains(&self.ambient)) {
            return Err(Error::param("ambient", self.ambient, "a number in [0, 1]"));
        }
        Ok(())
    }

    /// Unit vector towards the sun, `(east, north, up)`:
    /// `L = (sin A cos θ, cos A cos θ, sin θ)` (see the module docs). The editor's 3D view
    /// lights its mesh with it, so the 2D and 3D views and `shaded.png` share one sun.
    pub fn sun_vector(&self) -> [f64; 3] {
        let (az, alt) = (self.azimuth_deg.to_radians(), self.altitude_deg.to_radians());
        [detmath::sin(az) * detmath::cos(alt), detmath::cos(az) * detmath::cos(alt), detmath::sin(alt)]
    }

    /// Colour factor of a cell with hillshade `hs` = `max(0, n · L)`:
    /// `ambient + (1 − ambient) · hs / sin θ` (1 on flat ground, `ambient` facing away from
    /// the sun). [`shade_pixel`] multiplies a colour by it.
    #[inline]
    pub fn light_factor(&self, hs: f64) -> f64 {
        self.ambient + (1.0 - self.ambient) * hs / detmath::sin(self.altitude_deg.to_radians())
    }
}

/// Hillshade of one map, row by row: the sun vector and slope factor computed once, then
/// [`Hillshader::row`] shades any row on its own (each cell from its 3×3 window), so rows can
/// be computed in any order, in parallel or streamed to a file, with the same bits as
/// [`hillshade`]. [`Hillshader::span`] shades part of a row (the editor recolours only the
/// cells a brush touched).
#[derive(Clone, Copy, Debug)]
pub struct Hillshader<'a> {
    map: &'a Heightmap,
    sun: [f64; 3],
    k: f64,
    sea: Option<f32>,
    scale: Option<f64>,
}

impl<'a> Hillshader<'a> {
    /// Checks the options and prepares the shading of `map` (see [`hillshade`]).
    pub fn new(map: &'a Heightmap, opts: &HillshadeOptions, sea_level: Option<f32>) -> Result<Self> {
        opts.validate()?;
        Ok(Self {
            map,
            sun: opts.sun_vector(),
            k: opts.z_factor / (8.0 * map.cell_size()),
            sea: sea_level.filter(|s| opts.flat_water && s.is_finite()),
            scale: None,
        })
    }

    /// As [`Hillshader::new`] for the map in metres, `(h as f64 · height_scale) as f32` per
    /// cell, without building that map: the same bits as `Hillshader::new` on
    /// `map.map(|&h| (h as f64 * height_scale) as f32)` (what `shaded.png` shades), with
    /// `sea_level` in height units. `height_scale` must be finite and > 0.
    pub fn in_metres(
        map: &'a Heightmap,
        opts: &HillshadeOptions,
        sea_level: Option<f32>,
        height_scale: f64,
    ) -> Result<Self> {
        if !(height_scale.is_finite() && height_scale > 0.0) {
            return Err(Error::param("height_scale", height_scale, "a finite number > 0 (metres per unit)"));
        }
        let mut shader = Self::new(map, opts, None)?;
        shader.sea =
            sea_level.map(|s| (s as f64 * height_scale) as f32).filter(|s| opts.flat_water && s.is_finite());
        shader.scale = Some(height_scale);
        Ok(shader)
    }

    /// Hillshade in [0, 1] of row `y` into `out` (`out.len()` = the map's width).
    pub fn row(&self, y: usize, out: &mut [f32]) {
        self.span(y, 0, out);
    }

    /// Hillshade in [0, 1] of cells `x0 .. x0 + out.len()` of row `y` (cut at the map's
    /// width): the same values as those cells of [`Hillshader::row`].
    pub fn span(&self, y: usize, x0: usize, out: &mut [f32]) {
        let (w, h) = (self.map.width(), self.map.height());
        let (sun, k, data) = (self.sun, self.k, self.map.as_slice());
        let metres = |v: f32| match self.scale {
            Some(s) => (v as f64 * s) as f32,
            None => v,
        };
        let z = |x: usize, y: usize| metres(data[y * w + x]) as f64;
        let (yn, ys) = (y.saturating_sub(1), (y + 1).min(h - 1));
        for (x, px) in (x0..w).zip(out.iter_mut()) {
            if self.sea.is_some_and(|s| metres(data[y * w + x]) < s) {
                *px = sun[2] as f32;
                continue;
            }
            let (xw, xe) = (x.saturating_sub(1), (x + 1).min(w - 1));
            let (a, b, c) = (z(xw, yn), z(x, yn), z(xe, yn));
            let (d, f) = (z(xw, y), z(xe, y));
            let (g, hh, i) = (z(xw, ys), z(x, ys), z(xe, ys));
            let dzdx = ((c + 2.0 * f + i) - (a + 2.0 * d + g)) * k;
            let dzdy = ((a + 2.0 * b + c) - (g + 2.0 * hh + i)) * k;
            let dot = -dzdx * sun[0] - dzdy * sun[1] + sun[2];
            let shade = dot / (dzdx * dzdx + dzdy * dzdy + 1.0).sqrt();
            *px = if shade.is_finite() { shade.clamp(0.0, 1.0) as f32 } else { 0.0 };
        }
    }
}

/// Hillshade of every cell in [0, 1] (see the module docs); `sea_level` with
/// [`HillshadeOptions::flat_water`] makes cells below it flat. Rows are computed in parallel,
/// each cell from its own 3×3 window, so the result does not depend on the thread count.
pub fn hillshade(map: &Heightmap, opts: &HillshadeOptions, sea_level: Option<f32>) -> Result<Vec<f32>> {
    let shader = Hillshader::new(map, opts, sea_level)?;
    let mut out = vec![0f32; map.len()];
    out.par_chunks_mut(map.width()).enumerate().for_each(|(y, row)| shader.row(y, row));
    Ok(out)
}

/// Hillshade in [0, 1] to an 8-bit grey level, `round(hs · 255)` (values outside [0, 1]
/// clamped).
#[inline]
pub fn hillshade_byte(hs: f32) -> u8 {
    super::round_clamped((hs.clamp(0.0, 1.0) * 255.0) as f64, 255.0) as u8
}

/// Colour × hillshade of one pixel (see the module docs): `flat` = sin(sun altitude),
/// `ambient` = [`HillshadeOptions::ambient`]. [`shade`] applies it to every pixel.
#[inline]
pub fn shade_pixel(rgb: [u8; 3], hs: f32, ambient: f64, flat: f64) -> [u8; 3] {
    let factor = ambient + (1.0 - ambient) * hs as f64 / flat;
    rgb.map(|c| super::round_clamped(c as f64 * factor, 255.0) as u8)
}

/// Hillshade as 8-bit gray, `round(hs · 255)`.
pub fn hillshade_u8(map: &Heightmap, opts: &HillshadeOptions, sea_level: Option<f32>) -> Result<Vec<u8>> {
    Ok(hillshade(map, opts, sea_level)?.into_iter().map(|v| (v * 255.0).round() as u8).collect())
}

/// Colour × hillshade (see the module docs): `rgb` is `W × H × 3` sRGB bytes (e.g. from
/// [`crate::render::palette::Palette::colorize`]), `hs` the hillshade in [0, 1].
pub fn shade(rgb: &[u8], hs: &[f32], opts: &HillshadeOptions) -> Result<Vec<u8>> {
    opts.validate()?;
    if rgb.len() != hs.len() * 3 {
        return Err(Error::SizeMismatch {
            what: "colour buffer (pixels)".into(),
            expected_w: hs.len(),
            expected_h: 1,
            got_w: rgb.len() / 3,
            got_h: 1,
        });
    }
    let flat = detmath::sin(opts.altitude_deg.to_radians());
    let amb = opts.ambient;
    let mut out = vec![0u8; rgb.len()];
    out.par_chunks_mut(3 * 1024).zip(rgb.par_chunks(3 * 1024)).zip(hs.par_chunks(1024)).for_each(
        |((o, c), s)| {
            for ((op, cp), &sv) in o.chunks_exact_mut(3).zip(c.chunks_exact(3)).zip(s) {
                op.copy_from_slice(&shade_pixel([cp[0], cp[1], cp[2]], sv, amb, flat));
            }
        },
    );
    Ok(out)
}

/// Convenience: palette colours of `map` × its hillshade, `W × H × 3` sRGB bytes.
pub fn shaded_relief(
    map: &Heightmap,
    palette: &crate::render::palette::Palette,
    opts: &HillshadeOptions,
    sea_level: Option<f32>,
) -> Result<Vec<u8>> {
    let rgb = palette.colorize(map, sea_level);
    let hs = hillshade(map, opts, sea_level)?;
    shade(&rgb, &hs, opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_map_is_sin_altitude() {
        let map = Heightmap::filled(9, 7, 1.0, 3.0).unwrap();
        let hs = hillshade(&map, &HillshadeOptions::default(), None).unwrap();
        assert!(hs.iter().all(|&v| (v - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6));
    }

    #[test]
    fn slope_facing_the_sun_is_fully_lit() {
        // Sun from the NW at 45°: a plane rising towards the SE with slope 1 (45°) tilts its
        // face towards the NW and faces the sun exactly. Height rises to the east (x) and to
        // the south (+row) by 1/√2 per metre each.
        let g = std::f32::consts::FRAC_1_SQRT_2;
        let map = Heightmap::from_fn(9, 9, 1.0, |x, y| (x as f32 + y as f32) * g).unwrap();
        let hs = hillshade(&map, &HillshadeOptions::default(), None).unwrap();
        let v = hs[4 * 9 + 4]; // interior cell (edge cells see a clamped window)
        assert!((v - 1.0).abs() < 1e-6, "facing the sun should be 1, got {v}");
        let map = Heightmap::from_fn(9, 9, 1.0, |x, y| -(x as f32 + y as f32) * g).unwrap();
        let v = hillshade(&map, &HillshadeOptions::default(), None).unwrap()[4 * 9 + 4];
        assert!(v < 1e-6, "facing away from the NW sun should be dark, got {v}");
    }

    #[test]
    fn z_factor_and_cell_size_act_on_the_slope_only() {
        let map = Heightmap::from_fn(17, 13, 1.0, |x, y| ((x * x + 3 * y) % 11) as f32).unwrap();
        let z2 = HillshadeOptions { z_factor: 2.0, ..Default::default() };
        let a = hillshade(&map, &z2, None).unwrap();
        // Doubling the heights is the same as z-factor 2 ...
        let b = hillshade(&map.map(|v| v * 2.0), &HillshadeOptions::default(), None).unwrap();
        // ... and as halving the cell size.
        let mut half = map.clone();
        half.set_cell_size(0.5).unwrap();
        let c = hillshade(&half, &HillshadeOptions::default(), None).unwrap();
        for i in 0..a.len() {
            assert!((a[i] - b[i]).abs() < 1e-6 && (a[i] - c[i]).abs() < 1e-6, "cell {i}");
        }
        // Flat water: below the sea level every cell gets the flat value.
        let s = hillshade(&map, &HillshadeOptions::default(), Some(5.0)).unwrap();
        for (v, h) in s.iter().zip(map.as_slice()) {
            if *h < 5.0 {
                assert!((v - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn shade_keeps_flat_colour_and_soft_shadows() {
        let opts = HillshadeOptions::default();
        let flat = std::f32::consts::FRAC_1_SQRT_2;
        let out = shade(&[100, 150, 200, 100, 150, 200], &[flat, 0.0], &opts).unwrap();
        assert_eq!(&out[..3], &[100, 150, 200]);
        assert_eq!(&out[3..], &[35, 53, 70]); // ambient 0.35
        assert!(shade(&[0; 5], &[0.0; 2], &opts).is_err());
    }

    #[test]
    fn spans_and_metres_give_the_bits_of_whole_rows() {
        let map = Heightmap::from_fn(23, 11, 2.5, |x, y| ((x * 7 + y * y * 3) % 13) as f32 * 0.037).unwrap();
        let opts = HillshadeOptions::default();
        // A span is the same cells of the row.
        let shader = Hillshader::new(&map, &opts, Some(0.2)).unwrap();
        let (mut row, mut span) = (vec![0f32; 23], vec![0f32; 9]);
        for y in 0..11 {
            shader.row(y, &mut row);
            shader.span(y, 14, &mut span);
            assert_eq!(&row[14..], &span[..], "row {y}");
        }
        // In metres: the bits of the map converted to metres first (as shaded.png).
        let scale = 813.7;
        let metres = map.map(|&v| (v as f64 * scale) as f32);
        let sea = (0.2f64 * scale) as f32;
        let a = Hillshader::in_metres(&map, &opts, Some(0.2), scale).unwrap();
        let b = Hillshader::new(&metres, &opts, Some(sea)).unwrap();
        let mut other = vec![0f32; 23];
        for y in 0..11 {
            a.row(y, &mut row);
            b.row(y, &mut other);
            assert_eq!(
                row.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                other.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }
        assert!(Hillshader::in_metres(&map, &opts, None, 0.0).is_err());
        // The light factor is the one shade_pixel applies: 1 on flat ground, ambient in shadow.
        let flat = opts.sun_vector()[2];
        assert!((opts.light_factor(flat) - 1.0).abs() < 1e-12);
        assert_eq!(opts.light_factor(0.0), opts.ambient);
        assert_eq!(
            shade_pixel([200, 100, 50], 0.3, opts.ambient, flat),
            [200.0, 100.0, 50.0].map(|c: f64| (c * opts.light_factor(0.3f32 as f64)).round() as u8)
        );
    }

    #[test]
    fn bad_options_are_rejected() {
        let map = Heightmap::new(3, 3, 1.0).unwrap();
        for o in [
            HillshadeOptions { altitude_deg: 0.0, ..Default::default() },
            HillshadeOptions { z_factor: f64::NAN, ..Default::default() },
            HillshadeOptions { azimuth_deg: f64::INFINITY, ..Default::default() },
            HillshadeOptions { ambient: 1.5, ..Default::default() },
        ] {
            assert!(hillshade(&map, &o, None).is_err(), "{o:?}");
        }
    }
}
