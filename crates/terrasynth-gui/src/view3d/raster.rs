//! The software rasteriser of the 3D view: draws a [`Mesh3d`] on the CPU when there is no wgpu
//! device (glow, headless tests). Same camera, projection, lighting, sky and water as the wgpu
//! renderer (see [`super`]); the near-camera patch is not drawn.

use eframe::egui::{Color32, ColorImage};

use super::{Camera, FOCAL, Mesh3d, NEAR_FAR, SKY, ViewBasis, WATER, dot, light_factor, sub};

impl Mesh3d {
    /// Draws the mesh seen from `cam` into a `width × height` image on the CPU (the fallback
    /// when no wgpu device exists; single-threaded, ≈ 5 fps at 1280×800).
    pub fn render(&self, cam: &Camera, width: usize, height: usize) -> ColorImage {
        let (width, height) = (width.max(8), height.max(8));
        let mut rgb = vec![[0.0f32; 3]; width * height];
        for (y, row) in rgb.chunks_exact_mut(width).enumerate() {
            let t = y as f32 / height as f32;
            row.fill(std::array::from_fn(|c| SKY[0][c] + (SKY[1][c] - SKY[0][c]) * t));
        }
        let mut depth = vec![f32::INFINITY; width * height];
        let e = cam.exaggeration;
        let ViewBasis { eye, forward: fwd, right, up } = cam.basis(self.sea_z);
        let sea_z = self.sea_z * e;
        let f = height as f32 * FOCAL;
        let (cx, cyc) = (width as f32 * 0.5, height as f32 * 0.5);
        let near = NEAR_FAR[0];
        let proj: Vec<[f32; 3]> = self
            .vertices
            .iter()
            .map(|v| {
                let d = sub([v.pos[0], v.pos[1], v.pos[2] * e], eye);
                let vz = dot(d, fwd);
                [cx + f * dot(d, right) / vz, cyc - f * dot(d, up) / vz, vz]
            })
            .collect();
        let color: Vec<[f32; 3]> = self
            .vertices
            .iter()
            .map(|v| {
                let lit = light_factor(v.grad, e);
                [0, 1, 2].map(|c| v.color[c] as f32 * lit)
            })
            .collect();
        for t in self.indices().chunks_exact(3) {
            let tri = [t[0] as usize, t[1] as usize, t[2] as usize];
            let v = tri.map(|k| proj[k]);
            if v.iter().any(|p| p[2] < near) {
                continue;
            }
            raster(&v, &tri.map(|k| color[k]), width, height, &mut rgb, &mut depth);
        }
        // Water plane by ray casting.
        for py in 0..height {
            for px in 0..width {
                let dir_view = [(px as f32 + 0.5 - cx) / f, -(py as f32 + 0.5 - cyc) / f, 1.0];
                let dir =
                    [0, 1, 2].map(|k| right[k] * dir_view[0] + up[k] * dir_view[1] + fwd[k] * dir_view[2]);
                if dir[2].abs() < 1e-6 {
                    continue;
                }
                let t = (sea_z - eye[2]) / dir[2];
                if t <= near || t >= depth[py * width + px] {
                    continue;
                }
                let hit = [eye[0] + dir[0] * t, eye[1] + dir[1] * t];
                if hit[0].abs() > self.half[0] || hit[1].abs() > self.half[1] {
                    continue;
                }
                let px_rgb = &mut rgb[py * width + px];
                for (c, w) in px_rgb.iter_mut().zip(WATER.0) {
                    *c = *c * (1.0 - WATER.1) + w * WATER.1;
                }
            }
        }
        let pixels = rgb
            .iter()
            .map(|c| {
                Color32::from_rgb(
                    c[0].clamp(0.0, 255.0) as u8,
                    c[1].clamp(0.0, 255.0) as u8,
                    c[2].clamp(0.0, 255.0) as u8,
                )
            })
            .collect();
        ColorImage::new([width, height], pixels)
    }
}

/// Fills one triangle (screen x, y, view depth) with interpolated colours and a depth test.
fn raster(
    v: &[[f32; 3]; 3],
    col: &[[f32; 3]; 3],
    w: usize,
    h: usize,
    rgb: &mut [[f32; 3]],
    depth: &mut [f32],
) {
    let area = (v[1][0] - v[0][0]) * (v[2][1] - v[0][1]) - (v[2][0] - v[0][0]) * (v[1][1] - v[0][1]);
    if area.abs() < 1e-12 || !area.is_finite() {
        return;
    }
    let minx = v.iter().map(|p| p[0]).fold(f32::INFINITY, f32::min).floor().max(0.0) as usize;
    let maxx = v.iter().map(|p| p[0]).fold(f32::NEG_INFINITY, f32::max).ceil().min(w as f32 - 1.0);
    let miny = v.iter().map(|p| p[1]).fold(f32::INFINITY, f32::min).floor().max(0.0) as usize;
    let maxy = v.iter().map(|p| p[1]).fold(f32::NEG_INFINITY, f32::max).ceil().min(h as f32 - 1.0);
    if maxx < 0.0 || maxy < 0.0 {
        return;
    }
    let (maxx, maxy) = (maxx as usize, maxy as usize);
    let inv_z = v.map(|p| 1.0 / p[2]);
    for y in miny..=maxy {
        let py = y as f32 + 0.5;
        for x in minx..=maxx {
            let px = x as f32 + 0.5;
            let w0 = ((v[1][0] - px) * (v[2][1] - py) - (v[2][0] - px) * (v[1][1] - py)) / area;
            let w1 = ((v[2][0] - px) * (v[0][1] - py) - (v[0][0] - px) * (v[2][1] - py)) / area;
            let w2 = 1.0 - w0 - w1;
            if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                continue;
            }
            let z = 1.0 / (w0 * inv_z[0] + w1 * inv_z[1] + w2 * inv_z[2]);
            let k = y * w + x;
            if z < depth[k] {
                depth[k] = z;
                rgb[k] = [0, 1, 2].map(|c| w0 * col[0][c] + w1 * col[1][c] + w2 * col[2][c]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use terrasynth::Heightmap;
    use terrasynth::render::Palette;

    use super::*;

    /// A flat map seen from straight above fills the middle of the image with its palette colour
    /// (flat ground is lit at factor 1), the corners show the sky, and water over the map blends
    /// its colour in.
    #[test]
    fn a_flat_map_from_above_shows_its_colour_sky_and_water() {
        let map = Heightmap::from_fn(33, 33, 1.0, |_, _| 0.5).unwrap();
        let palette = Palette::named("grayscale").unwrap();
        let fraction = palette.fraction_map(0.0, 1.0, None);
        let colour = palette.color_at(fraction.fraction(0.5));
        let cam = Camera { pitch: 1.55, distance: 2.0, ..Camera::default() };
        let (w, h) = (64, 48);
        let img = Mesh3d::build(&map, &palette, &fraction, -1.0, 10.0, 64).render(&cam, w, h);
        let px = |x: usize, y: usize| img.pixels[y * w + x];
        let centre = px(w / 2, h / 2);
        for (c, want) in [centre.r(), centre.g(), centre.b()].into_iter().zip(colour) {
            assert!(c.abs_diff(want) <= 1, "centre {centre:?}, palette {colour:?}");
        }
        let corner = px(0, 0);
        assert!(corner.b() > corner.r() && corner.b() >= 200, "sky expected, got {corner:?}");
        // Sea level above the ground: the water colour is blended over the terrain.
        let wet = Mesh3d::build(&map, &palette, &fraction, 0.9, 10.0, 64).render(&cam, w, h);
        let c = wet.pixels[(h / 2) * w + w / 2];
        let want = [0, 1, 2].map(|k| colour[k] as f32 * (1.0 - WATER.1) + WATER.0[k] * WATER.1);
        for (got, want) in [c.r(), c.g(), c.b()].into_iter().zip(want) {
            assert!((got as f32 - want).abs() <= 1.5, "water {c:?}, want {want:?}");
        }
    }
}
