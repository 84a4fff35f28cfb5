//! The 3D view: a lit, coloured terrain mesh with a translucent water plane at the sea level,
//! drawn by a small software rasteriser into an image that egui shows as a texture (so it
//! works on every backend, headless tests included).
//!
//! Mesh: the map sampled every `step` cells (`step = ⌈max(w, h) / detail⌉`, the level of
//! detail), world `X` east and `Y` north in map widths (the longer side spans 1), `Z` = height ×
//! height scale / (cell size × (longer side − 1)) × exaggeration, so relief is true to scale at
//! exaggeration 1. Vertex colour = palette colour × (0.3 + 0.7 · max(0, n · L)), sun from the
//! north-west. Triangles are filled with a depth buffer (interpolating 1/depth linearly in screen
//! space) and Gouraud colours. The water plane is ray-cast per pixel: where the view ray meets
//! `Z = sea` inside the map before the terrain, the pixel is blended with blue.

use eframe::egui::{Color32, ColorImage};
use serde::{Deserialize, Serialize};
use terrasynth::Heightmap;
use terrasynth::render::Palette;
use terrasynth::render::palette::FractionMap;

/// Orbit camera around a target point on the map.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Camera {
    /// Rotation around the vertical axis, radians.
    pub yaw: f32,
    /// Elevation above the horizon, radians, in [0.05, 1.55].
    pub pitch: f32,
    /// Distance from the target, map widths, in [0.2, 6].
    pub distance: f32,
    /// Target point (X, Y), map widths from the centre.
    pub target: [f32; 2],
    /// Vertical exaggeration, in [0.1, 20]; default 2.
    pub exaggeration: f32,
    /// Mesh detail: samples along the longer side, in [32, 1024]; default 256.
    pub detail: u32,
}

impl Default for Camera {
    fn default() -> Self {
        Self { yaw: -2.2, pitch: 0.6, distance: 1.6, target: [0.0, 0.0], exaggeration: 2.0, detail: 256 }
    }
}

impl Camera {
    /// Orbit by a mouse drag of `(dx, dy)` points.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.01;
        self.pitch = (self.pitch + dy * 0.01).clamp(0.05, 1.55);
    }

    /// Pan the target by a drag of `(dx, dy)` points on a view `width` points wide.
    pub fn pan(&mut self, dx: f32, dy: f32, width: f32) {
        let k = self.distance / width.max(1.0);
        let (s, c) = self.yaw.sin_cos();
        // Screen right is (−sin yaw, cos yaw); screen up (towards the target) is −(cos yaw, sin yaw).
        self.target[0] = (self.target[0] - (-s * dx) * k + c * dy * k).clamp(-1.0, 1.0);
        self.target[1] = (self.target[1] - (c * dx) * k + s * dy * k).clamp(-1.0, 1.0);
    }

    /// Zoom by a scroll of `delta` points (positive = closer).
    pub fn zoom(&mut self, delta: f32) {
        self.distance = (self.distance * (-delta * 0.002).exp()).clamp(0.2, 6.0);
    }
}

/// A terrain mesh ready to draw: sampled positions and lit vertex colours.
pub struct Mesh3d {
    nx: usize,
    ny: usize,
    pos: Vec<[f32; 3]>,
    color: Vec<[f32; 3]>,
    sea_z: f32,
    half: [f32; 2],
    /// Cells between samples (the level of detail).
    pub step: usize,
}

impl Mesh3d {
    /// Samples `map` for a camera `detail`; colours from `palette` through `fraction`.
    pub fn build(
        map: &Heightmap,
        palette: &Palette,
        fraction: &FractionMap,
        sea_level: f32,
        height_scale: f32,
        cam: &Camera,
    ) -> Self {
        let (w, h) = (map.width(), map.height());
        let long = w.max(h);
        let step = long.div_ceil(cam.detail.clamp(32, 1024) as usize).max(1);
        let xs: Vec<usize> = terrasynth::render::mesh::lod_samples(w, step);
        let ys: Vec<usize> = terrasynth::render::mesh::lod_samples(h, step);
        let span = (long - 1).max(1) as f32;
        let zk = height_scale / (map.cell_size() as f32 * span) * cam.exaggeration;
        let half = [(w - 1) as f32 / span * 0.5, (h - 1) as f32 / span * 0.5];
        let s = map.as_slice();
        let mut pos = Vec::with_capacity(xs.len() * ys.len());
        for &y in &ys {
            for &x in &xs {
                pos.push([x as f32 / span - half[0], half[1] - y as f32 / span, s[y * w + x] * zk]);
            }
        }
        let (nx, ny) = (xs.len(), ys.len());
        let light = normalize([-1.0, 1.0, 1.2]);
        let mut color = Vec::with_capacity(pos.len());
        for j in 0..ny {
            for i in 0..nx {
                let p = |a: usize, b: usize| pos[b * nx + a];
                let (i0, i1) = (i.saturating_sub(1), (i + 1).min(nx - 1));
                let (j0, j1) = (j.saturating_sub(1), (j + 1).min(ny - 1));
                let dzx = (p(i1, j)[2] - p(i0, j)[2]) / (p(i1, j)[0] - p(i0, j)[0]).max(1e-9);
                let dzy = (p(i, j1)[2] - p(i, j0)[2]) / (p(i, j1)[1] - p(i, j0)[1]).min(-1e-9);
                let n = normalize([-dzx, -dzy, 1.0]);
                let lit = 0.3 + 0.7 * dot(n, light).max(0.0);
                let hv = s[ys[j] * w + xs[i]];
                let c = palette.color_at(fraction.fraction(hv));
                color.push([c[0] as f32 * lit, c[1] as f32 * lit, c[2] as f32 * lit]);
            }
        }
        Self { nx, ny, pos, color, sea_z: sea_level * zk, half, step }
    }

    /// Number of triangles drawn.
    pub fn triangle_count(&self) -> usize {
        2 * (self.nx - 1) * (self.ny - 1)
    }

    /// Draws the mesh seen from `cam` into a `width × height` image.
    pub fn render(&self, cam: &Camera, width: usize, height: usize) -> ColorImage {
        let (width, height) = (width.max(8), height.max(8));
        let mut rgb = vec![[0.0f32; 3]; width * height];
        for (y, row) in rgb.chunks_exact_mut(width).enumerate() {
            let t = y as f32 / height as f32;
            row.fill([120.0 + 60.0 * t, 160.0 + 50.0 * t, 210.0 + 25.0 * t]);
        }
        let mut depth = vec![f32::INFINITY; width * height];
        let (sp, cp) = cam.pitch.sin_cos();
        let (sy, cy) = cam.yaw.sin_cos();
        let target = [cam.target[0], cam.target[1], self.sea_z.max(0.0) * 0.5];
        let eye = [
            target[0] + cam.distance * cp * cy,
            target[1] + cam.distance * cp * sy,
            target[2] + cam.distance * sp,
        ];
        let fwd = normalize(sub(target, eye));
        let right = normalize(cross(fwd, [0.0, 0.0, 1.0]));
        let up = cross(right, fwd);
        let f = height as f32 * 0.9;
        let (cx, cyc) = (width as f32 * 0.5, height as f32 * 0.5);
        let near = 0.01;
        let proj: Vec<[f32; 3]> = self
            .pos
            .iter()
            .map(|&p| {
                let d = sub(p, eye);
                let vz = dot(d, fwd);
                [cx + f * dot(d, right) / vz, cyc - f * dot(d, up) / vz, vz]
            })
            .collect();
        for j in 0..self.ny - 1 {
            for i in 0..self.nx - 1 {
                let a = j * self.nx + i;
                let (b, c, d) = (a + 1, a + self.nx, a + self.nx + 1);
                for tri in [[a, c, b], [b, c, d]] {
                    let v = tri.map(|k| proj[k]);
                    if v.iter().any(|p| p[2] < near) {
                        continue;
                    }
                    raster(&v, &tri.map(|k| self.color[k]), width, height, &mut rgb, &mut depth);
                }
            }
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
                let t = (self.sea_z - eye[2]) / dir[2];
                if t <= near || t >= depth[py * width + px] {
                    continue;
                }
                let hit = [eye[0] + dir[0] * t, eye[1] + dir[1] * t];
                if hit[0].abs() > self.half[0] || hit[1].abs() > self.half[1] {
                    continue;
                }
                let px_rgb = &mut rgb[py * width + px];
                let water = [30.0, 90.0, 170.0];
                for (c, w) in px_rgb.iter_mut().zip(water) {
                    *c = *c * 0.35 + w * 0.65;
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

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
fn normalize(a: [f32; 3]) -> [f32; 3] {
    let n = dot(a, a).sqrt().max(1e-20);
    [a[0] / n, a[1] / n, a[2] / n]
}
