//! The 3D view: orbit camera, level-of-detail (LOD) terrain mesh, lighting, and the software
//! rasteriser used when there is no GPU (the wgpu renderer is in [`crate::view3d_gpu`]).
//!
//! **Mesh** ([`Mesh3d`]): the map sampled every `step` cells along both axes, `step =
//! ⌈max(w, h) / detail⌉` (plus the last row and column, [`terrasynth::render::mesh::lod_samples`]).
//! World `X` is east and `Y` north in map widths (the longer side spans 1, origin at the map
//! centre), `Z` = height × height scale / (cell size × (longer side − 1)), so relief is true to
//! scale; the vertical exaggeration `e` is applied when drawing (`Z·e`), so changing it never
//! rebuilds the mesh. Each vertex stores its position, the slope `(∂Z/∂X, ∂Z/∂Y)` by central
//! differences over the neighbouring samples (one-sided at the border) and its palette colour.
//! Four side walls close the block (a diorama): from the border samples (or the sea level,
//! if higher) down to [`WALL_DEPTH`] below the lowest point, soil brown shaded by the side's
//! facing, so the sea floor seen through the translucent water has sides instead of sky
//! around it.
//!
//! **Lighting** (both renderers, per vertex, Gouraud): normal `n = normalize(−e·∂Z/∂X,
//! −e·∂Z/∂Y, 1)`, sun `L = normalize(−1, 1, 1.2)` (from the north-west, high), colour = palette
//! colour × (0.3 + 0.7 · max(0, n · L)) in sRGB values (ambient 0.3). Sky: a vertical gradient
//! from (120, 160, 210) at the top to (180, 210, 235) at the bottom. Water: the rectangle of the
//! map at `Z = sea·e`, blended over what is behind it as 0.35 · behind + 0.65 · (30, 90, 170).
//!
//! **Projection**: pinhole camera looking at [`Camera::target`] (at half the sea height) from
//! [`Camera::basis`]; focal length 0.9 × image height (vertical field of view ≈ 58°), near plane
//! 0.01, far plane 100 map widths.
//!
//! **LOD policy** (the editor, `app.rs`): one regular grid per detail level. The mesh is built
//! at [`Camera::detail`] samples a side while the camera rests (default 256: a 2049² map →
//! every 9th cell, 52 k vertices, 104 k triangles) and at half that while the user drags or
//! zooms; both levels stay cached on the GPU, so a drag switches meshes without rebuilding. A
//! map or detail change rebuilds the mesh (≈ 10 ms at 2049²); camera moves only change the
//! view matrix. While the camera moves the wgpu path also renders at half resolution (a
//! quarter of the pixels, shown stretched), since per-pixel work dominates on software
//! rasterisers; at rest it renders once at full resolution. At the default camera a grid
//! square of the 256 mesh spans ≈ 2 pixels of a 1280×800 view at the target, more in the
//! foreground. A regular grid was chosen over a distance-based (quadtree/chunked) LOD because
//! it is simple, has no cracks and is the same mesh for both renderers; its cost is that
//! close-ups show the facets (raise the detail: 512 halves the facet size but takes ≈ 3× the
//! frame time of 256 on lavapipe, see docs/GUI.md).

use eframe::egui::{Color32, ColorImage};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use terrasynth::Heightmap;
use terrasynth::render::Palette;
use terrasynth::render::palette::FractionMap;

/// Direction towards the sun (unit vector): from the north-west, 50° high.
pub const LIGHT: [f32; 3] = {
    // normalize(−1, 1, 1.2): |v| = sqrt(3.44) = 1.854724…
    let n = 1.854_724_3;
    [-1.0 / n, 1.0 / n, 1.2 / n]
};
/// Ambient light fraction.
pub const AMBIENT: f32 = 0.3;
/// Sky colour at the top and at the bottom of the image (sRGB).
pub const SKY: [[f32; 3]; 2] = [[120.0, 160.0, 210.0], [180.0, 210.0, 235.0]];
/// Water colour (sRGB) and its opacity.
pub const WATER: ([f32; 3], f32) = ([30.0, 90.0, 170.0], 0.65);
/// Focal length in image heights.
pub const FOCAL: f32 = 0.9;
/// Near and far clipping distances, map widths.
pub const NEAR_FAR: [f32; 2] = [0.01, 100.0];
/// Colour of the side walls (sRGB, soil brown) before shading.
pub const WALL: [f32; 3] = [112.0, 94.0, 74.0];
/// How far the side walls reach below the lowest point of the mesh (or the sea, if lower), in
/// map widths at exaggeration 1.
pub const WALL_DEPTH: f32 = 0.02;
/// Highest detail kept while the camera moves (finer rest meshes are halved while moving):
/// 256 samples a side (≈ 105 k triangles) draw at half resolution in ≈ 10–20 ms on lavapipe.
pub const MOVING_DETAIL: u32 = 256;
/// Allowed range of [`Camera::detail`].
pub const DETAIL_RANGE: [u32; 2] = [32, 1024];

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
    /// Mesh detail while the camera rests: samples along the longer side, in [32, 1024];
    /// default 256. Half of it is used while the camera moves.
    pub detail: u32,
}

impl Default for Camera {
    fn default() -> Self {
        Self { yaw: -2.2, pitch: 0.6, distance: 1.6, target: [0.0, 0.0], exaggeration: 2.0, detail: 256 }
    }
}

/// Camera position and orthonormal view basis in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewBasis {
    /// Eye position.
    pub eye: [f32; 3],
    /// Unit vector from the eye towards the target.
    pub forward: [f32; 3],
    /// Unit vector to the right of the image.
    pub right: [f32; 3],
    /// Unit vector to the top of the image.
    pub up: [f32; 3],
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

    /// Samples a side of the mesh to draw: [`Camera::detail`] at rest; while `moving` the same
    /// up to [`MOVING_DETAIL`] (so starting or ending a drag does not switch meshes), above it
    /// half of it, at least [`MOVING_DETAIL`].
    pub fn lod_detail(&self, moving: bool) -> u32 {
        let d = self.detail.clamp(DETAIL_RANGE[0], DETAIL_RANGE[1]);
        if moving && d > MOVING_DETAIL { (d / 2).max(MOVING_DETAIL) } else { d }
    }

    /// Eye and view basis for a mesh whose sea level is at `sea_z` (exaggeration 1): the target
    /// is `(target, max(0, sea_z·e) / 2)` and the eye is `distance` away at `yaw`, `pitch`.
    pub fn basis(&self, sea_z: f32) -> ViewBasis {
        let (sp, cp) = self.pitch.sin_cos();
        let (sy, cy) = self.yaw.sin_cos();
        let target = [self.target[0], self.target[1], (sea_z * self.exaggeration).max(0.0) * 0.5];
        let eye = [
            target[0] + self.distance * cp * cy,
            target[1] + self.distance * cp * sy,
            target[2] + self.distance * sp,
        ];
        let forward = normalize(sub(target, eye));
        let right = normalize(cross(forward, [0.0, 0.0, 1.0]));
        let up = cross(right, forward);
        ViewBasis { eye, forward, right, up }
    }

    /// Raises the camera (pitch first, then distance) until the eye is at least 0.01 map
    /// widths above the ground under it, so zooming or orbiting never puts the eye inside a
    /// mountain. `map`, `height_scale` and `sea_level` as for [`Mesh3d::build`].
    pub fn keep_above(&mut self, map: &Heightmap, height_scale: f32, sea_level: f32) {
        let (w, h) = (map.width(), map.height());
        let span = (w.max(h) - 1).max(1) as f32;
        let zk = z_scale(map, height_scale);
        let ground = |x: f32, y: f32| {
            let cx = ((x + (w - 1) as f32 / span * 0.5) * span).round();
            let cy = (((h - 1) as f32 / span * 0.5 - y) * span).round();
            if cx < 0.0 || cy < 0.0 || cx > (w - 1) as f32 || cy > (h - 1) as f32 {
                return f32::NEG_INFINITY;
            }
            map[(cx as usize, cy as usize)] * zk * self.exaggeration
        };
        for _ in 0..200 {
            let eye = self.basis(sea_level * zk).eye;
            if eye[2] >= ground(eye[0], eye[1]) + 0.01 {
                return;
            }
            if self.pitch < 1.55 {
                self.pitch = (self.pitch + 0.02).min(1.55);
            } else if self.distance < 6.0 {
                self.distance = (self.distance * 1.05).min(6.0);
            } else {
                return;
            }
        }
    }

    /// The view-projection matrix (column-major, `m[column][row]`) for an image of `aspect` =
    /// width / height: clip `x = 2·FOCAL/aspect · x_view`, `y = 2·FOCAL · y_view`, `w = z_view`
    /// (distance along the view direction), and depth `z_ndc = f/(f−n) · (1 − n / z_view)`
    /// (0 at the near plane, 1 at the far plane), matching [`Mesh3d::render`].
    pub fn view_proj(&self, sea_z: f32, aspect: f32) -> [[f32; 4]; 4] {
        let b = self.basis(sea_z);
        let [n, f] = NEAR_FAR;
        let a = f / (f - n);
        let rows = [
            scale4(row(b.right, b.eye), 2.0 * FOCAL / aspect.max(1e-6)),
            scale4(row(b.up, b.eye), 2.0 * FOCAL),
            {
                let mut r = scale4(row(b.forward, b.eye), a);
                r[3] -= a * n;
                r
            },
            row(b.forward, b.eye),
        ];
        std::array::from_fn(|c| std::array::from_fn(|r| rows[r][c]))
    }
}

/// Row `[v, −v·eye]` of a view matrix.
fn row(v: [f32; 3], eye: [f32; 3]) -> [f32; 4] {
    [v[0], v[1], v[2], -dot(v, eye)]
}

fn scale4(r: [f32; 4], k: f32) -> [f32; 4] {
    r.map(|x| x * k)
}

/// World `Z` per height unit at exaggeration 1: height scale / (cell size × (longer side − 1)),
/// so relief is true to scale with the map spanning 1 along its longer side.
pub fn z_scale(map: &Heightmap, height_scale: f32) -> f32 {
    let span = (map.width().max(map.height()) - 1).max(1) as f32;
    height_scale / (map.cell_size() as f32 * span)
}

/// Light factor `AMBIENT + (1 − AMBIENT) · max(0, n · LIGHT)` of a vertex with slope `grad`
/// drawn at exaggeration `e`.
pub fn light_factor(grad: [f32; 2], e: f32) -> f32 {
    let n = normalize([-grad[0] * e, -grad[1] * e, 1.0]);
    AMBIENT + (1.0 - AMBIENT) * dot(n, LIGHT).max(0.0)
}

/// One mesh vertex, laid out as uploaded to the GPU ([`Vertex3d::BYTES`] bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vertex3d {
    /// World position `(X, Y, Z)` at exaggeration 1.
    pub pos: [f32; 3],
    /// Slope `(∂Z/∂X, ∂Z/∂Y)` at exaggeration 1.
    pub grad: [f32; 2],
    /// Palette colour (sRGB) and alpha 255.
    pub color: [u8; 4],
}

impl Vertex3d {
    /// Size of one vertex in the GPU buffer: 3 + 2 `f32`, then 4 `u8`.
    pub const BYTES: usize = 24;

    fn write_le(&self, out: &mut Vec<u8>) {
        for v in self.pos.iter().chain(&self.grad) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.color);
    }
}

/// A terrain mesh ready to draw: the LOD grid of vertices (row by row, north row first).
#[derive(Clone, Debug)]
pub struct Mesh3d {
    /// Samples along X.
    pub nx: usize,
    /// Samples along Y.
    pub ny: usize,
    /// Vertices, `ny` rows of `nx`.
    pub vertices: Vec<Vertex3d>,
    /// Sea level `Z` at exaggeration 1.
    pub sea_z: f32,
    /// Half extents of the map `(X, Y)`, map widths.
    pub half: [f32; 2],
    /// Cells between samples (the level of detail).
    pub step: usize,
}

impl Mesh3d {
    /// Samples `map` with `detail` samples along its longer side (clamped to
    /// [`DETAIL_RANGE`]); colours from `palette` through `fraction`; `sea_level` in height
    /// units, `height_scale` metres per height unit (the export height scale).
    pub fn build(
        map: &Heightmap,
        palette: &Palette,
        fraction: &FractionMap,
        sea_level: f32,
        height_scale: f32,
        detail: u32,
    ) -> Self {
        let (w, h) = (map.width(), map.height());
        let long = w.max(h);
        let step = long.div_ceil(detail.clamp(DETAIL_RANGE[0], DETAIL_RANGE[1]) as usize).max(1);
        let xs: Vec<usize> = terrasynth::render::mesh::lod_samples(w, step);
        let ys: Vec<usize> = terrasynth::render::mesh::lod_samples(h, step);
        let span = (long - 1).max(1) as f32;
        let zk = z_scale(map, height_scale);
        let half = [(w - 1) as f32 / span * 0.5, (h - 1) as f32 / span * 0.5];
        let s = map.as_slice();
        let (nx, ny) = (xs.len(), ys.len());
        let px = |i: usize| xs[i] as f32 / span - half[0];
        let py = |j: usize| half[1] - ys[j] as f32 / span;
        let z = |i: usize, j: usize| s[ys[j] * w + xs[i]] * zk;
        let mut vertices = vec![Vertex3d { pos: [0.0; 3], grad: [0.0; 2], color: [0; 4] }; nx * ny];
        vertices.par_chunks_mut(nx).enumerate().for_each(|(j, out)| {
            let (j0, j1) = (j.saturating_sub(1), (j + 1).min(ny - 1));
            for (i, v) in out.iter_mut().enumerate() {
                let (i0, i1) = (i.saturating_sub(1), (i + 1).min(nx - 1));
                let gx = if i1 > i0 { (z(i1, j) - z(i0, j)) / (px(i1) - px(i0)) } else { 0.0 };
                let gy = if j1 > j0 { (z(i, j1) - z(i, j0)) / (py(j1) - py(j0)) } else { 0.0 };
                let hv = s[ys[j] * w + xs[i]];
                let c = palette.color_at(fraction.fraction(hv));
                *v =
                    Vertex3d { pos: [px(i), py(j), hv * zk], grad: [gx, gy], color: [c[0], c[1], c[2], 255] };
            }
        });
        let sea_z = sea_level * zk;
        let lowest = vertices.iter().map(|v| v.pos[2]).fold(sea_z, f32::min);
        let mut mesh = Self { nx, ny, vertices, sea_z, half, step };
        mesh.add_walls(lowest - WALL_DEPTH, sea_z);
        mesh
    }

    /// Appends the four side walls (see [`WALL_DEPTH`]): per side, the border vertices again
    /// (raised to `sea_z` where they are under water, so the water surface meets the walls)
    /// and the same points at `base`, coloured [`WALL`] shaded by the side's facing.
    fn add_walls(&mut self, base: f32, sea_z: f32) {
        let (nx, ny) = (self.nx, self.ny);
        if nx < 2 || ny < 2 {
            return;
        }
        let flat = light_factor([0.0, 0.0], 1.0);
        // (grid indices along the side, outward normal)
        let sides: [(Vec<usize>, [f32; 3]); 4] = [
            ((0..nx).collect(), [0.0, 1.0, 0.0]),
            ((0..ny).map(|j| j * nx + nx - 1).collect(), [1.0, 0.0, 0.0]),
            ((0..nx).map(|i| (ny - 1) * nx + i).collect(), [0.0, -1.0, 0.0]),
            ((0..ny).map(|j| j * nx).collect(), [-1.0, 0.0, 0.0]),
        ];
        for (ids, normal) in sides {
            // The shader lights these (slope 0) as flat ground: pre-divide by that factor.
            let lit = (AMBIENT + (1.0 - AMBIENT) * dot(normal, LIGHT).max(0.0)) / flat;
            let color = |k: f32| {
                let c = WALL.map(|c| (c * lit * k).round().clamp(0.0, 255.0) as u8);
                [c[0], c[1], c[2], 255]
            };
            for k in ids {
                let p = self.vertices[k].pos;
                let top = [p[0], p[1], p[2].max(sea_z)];
                self.vertices.push(Vertex3d { pos: top, grad: [0.0; 2], color: color(1.0) });
                self.vertices.push(Vertex3d { pos: [p[0], p[1], base], grad: [0.0; 2], color: color(0.6) });
            }
        }
    }

    /// Number of triangles drawn: two per grid square and two per wall segment.
    pub fn triangle_count(&self) -> usize {
        let walls = if self.nx < 2 || self.ny < 2 { 0 } else { 4 * (self.nx - 1) + 4 * (self.ny - 1) };
        2 * (self.nx - 1) * (self.ny - 1) + walls
    }

    /// Triangle list: two triangles per grid square (counter-clockwise seen from above), then
    /// the walls, two triangles per segment. Squares go row by row from the north-west corner.
    pub fn indices(&self) -> Vec<u32> {
        self.indices_from(false, false)
    }

    /// [`Mesh3d::indices`] with the squares ordered from another corner: from the east if
    /// `from_east`, from the south if `from_south` (drawing from the corner nearest the eye
    /// lets the depth test reject hidden pixels before they are shaded).
    pub fn indices_from(&self, from_east: bool, from_south: bool) -> Vec<u32> {
        let nx = self.nx as u32;
        let mut out = Vec::with_capacity(self.triangle_count() * 3);
        let order = |n: u32, flip: bool| (0..n).map(move |k| if flip { n - 1 - k } else { k });
        for j in order(self.ny as u32 - 1, from_south) {
            for i in order(nx - 1, from_east) {
                let a = j * nx + i;
                let (b, c, d) = (a + 1, a + nx, a + nx + 1);
                out.extend_from_slice(&[a, c, b, b, c, d]);
            }
        }
        if self.nx >= 2 && self.ny >= 2 {
            let mut first = (self.nx * self.ny) as u32;
            for n in [self.nx, self.ny, self.nx, self.ny] {
                for k in 0..n as u32 - 1 {
                    let (t0, b0, t1, b1) =
                        (first + 2 * k, first + 2 * k + 1, first + 2 * k + 2, first + 2 * k + 3);
                    out.extend_from_slice(&[t0, b0, t1, t1, b0, b1]);
                }
                first += 2 * n as u32;
            }
        }
        out
    }

    /// The vertices as the GPU vertex buffer (little-endian, [`Vertex3d::BYTES`] each).
    pub fn vertex_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.vertices.len() * Vertex3d::BYTES);
        for v in &self.vertices {
            v.write_le(&mut out);
        }
        out
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh_of(map: &Heightmap, sea: f32, detail: u32) -> Mesh3d {
        let palette = Palette::named("grayscale").unwrap();
        let (lo, hi) = map.min_max().unwrap();
        let fraction = palette.fraction_map(lo, hi, Some(sea));
        Mesh3d::build(map, &palette, &fraction, sea, 100.0, detail)
    }

    #[test]
    fn vertex_count_follows_the_detail() {
        let map = Heightmap::new(257, 129, 1.0).unwrap();
        // step = ⌈257 / 64⌉ = 5: columns 0, 5, …, 255 and 256 (53); rows 0, 5, …, 125 and 128 (27).
        let m = mesh_of(&map, 0.0, 64);
        assert_eq!((m.step, m.nx, m.ny), (5, 53, 27));
        // Grid, then 2 vertices per border sample on each of the 4 walls.
        assert_eq!(m.vertices.len(), 53 * 27 + 2 * (2 * 53 + 2 * 27));
        assert_eq!(m.triangle_count(), 2 * 52 * 26 + 4 * 52 + 4 * 26);
        assert_eq!(m.indices().len(), 3 * m.triangle_count());
        assert_eq!(m.vertex_bytes().len(), m.vertices.len() * Vertex3d::BYTES);
        // Above the map size every cell is a vertex; the detail is clamped to [32, 1024].
        let full = mesh_of(&map, 0.0, 5000);
        assert_eq!((full.step, full.nx, full.ny), (1, 257, 129));
        assert_eq!(mesh_of(&map, 0.0, 1).step, 9); // ⌈257 / 32⌉
    }

    #[test]
    fn heights_and_sea_level_match_the_map() {
        let map = Heightmap::from_fn(65, 65, 2.0, |x, y| ((x * 7 + y * 13) % 17) as f32 / 17.0).unwrap();
        let m = mesh_of(&map, 0.25, 32);
        assert_eq!(m.step, 3);
        // Z = h × height scale / (cell size × (longer side − 1)) = h × 100 / 128.
        let zk = 100.0 / (2.0 * 64.0);
        for (j, y) in terrasynth::render::mesh::lod_samples(65, 3).into_iter().enumerate() {
            for (i, x) in terrasynth::render::mesh::lod_samples(65, 3).into_iter().enumerate() {
                let v = m.vertices[j * m.nx + i];
                assert_eq!(v.pos[2], map[(x, y)] * zk, "cell ({x}, {y})");
                assert!((v.pos[0] - (x as f32 / 64.0 - 0.5)).abs() < 1e-6);
                assert!((v.pos[1] - (0.5 - y as f32 / 64.0)).abs() < 1e-6);
            }
        }
        assert_eq!(m.sea_z, 0.25 * zk);
        assert_eq!(m.half, [0.5, 0.5]);
    }

    #[test]
    fn a_tilted_plane_has_its_slope_everywhere() {
        // h = 0.01·x + 0.02·y (y grows southwards); X east, Y north in map widths (64 cells).
        let map = Heightmap::from_fn(65, 65, 1.0, |x, y| 0.01 * x as f32 + 0.02 * y as f32).unwrap();
        let m = mesh_of(&map, 0.0, 32);
        let zk = 100.0 / 64.0;
        // ∂Z/∂X = 0.01 · zk · 64 per map width; ∂Z/∂Y = −0.02 · zk · 64.
        let want = [0.01 * zk * 64.0, -0.02 * zk * 64.0];
        for v in &m.vertices[..m.nx * m.ny] {
            assert!((v.grad[0] - want[0]).abs() < 1e-3 && (v.grad[1] - want[1]).abs() < 1e-3, "{v:?}");
        }
        // Flat ground: n = (0, 0, 1), light = 0.3 + 0.7 · L.z.
        assert!((light_factor([0.0, 0.0], 2.0) - (0.3 + 0.7 * LIGHT[2])).abs() < 1e-6);
        // A slope whose normal is the sun direction is lit fully; a cliff facing south-east
        // (away from the north-west sun) gets the ambient light only.
        assert!((light_factor([-LIGHT[0] / LIGHT[2], -LIGHT[1] / LIGHT[2]], 1.0) - 1.0).abs() < 1e-5);
        assert!((light_factor([-1e6, 1e6], 1.0) - AMBIENT).abs() < 1e-4);
        // Exaggeration steepens a gentle slope that faces the sun (rising to the south-east).
        assert!(light_factor([0.2, -0.2], 3.0) > light_factor([0.2, -0.2], 1.0));
    }

    #[test]
    fn triangles_are_counter_clockwise_from_above() {
        let map = Heightmap::new(33, 33, 1.0).unwrap();
        let m = mesh_of(&map, 0.0, 32);
        let grid = 2 * (m.nx - 1) * (m.ny - 1);
        for t in m.indices()[..3 * grid].chunks_exact(3) {
            let [a, b, c] = [0, 1, 2].map(|k| m.vertices[t[k] as usize].pos);
            let z = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
            assert!(z > 0.0);
        }
        // The walls are vertical quads on the map border, from the surface down to the base.
        let base = -WALL_DEPTH; // flat map at 0 and sea at 0
        for t in m.indices()[3 * grid..].chunks_exact(3) {
            let p = [0, 1, 2].map(|k| m.vertices[t[k] as usize].pos);
            assert!(p.iter().all(|p| p[0].abs() == 0.5 || p[1].abs() == 0.5), "{p:?}");
            assert!(p.iter().all(|p| p[2] == 0.0 || p[2] == base), "{p:?}");
            assert!(p.iter().any(|p| p[2] == base) && p.iter().any(|p| p[2] == 0.0));
        }
        assert_eq!(m.indices().len(), 3 * m.triangle_count());
        // The other drawing orders hold the same triangles.
        let sorted = |v: Vec<u32>| {
            let mut t: Vec<[u32; 3]> = v.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
            t.sort_unstable();
            t
        };
        for (e, s) in [(true, false), (false, true), (true, true)] {
            assert_eq!(sorted(m.indices_from(e, s)), sorted(m.indices()));
        }
        // From the south-east corner the first square is the last one of the grid.
        let a = (m.ny as u32 - 2) * m.nx as u32 + m.nx as u32 - 2;
        assert_eq!(m.indices_from(true, true)[..3], [a, a + m.nx as u32, a + 1]);
    }

    #[test]
    fn the_matrix_projects_like_the_software_renderer() {
        let cam = Camera { yaw: 0.7, pitch: 0.5, distance: 1.3, target: [0.1, -0.2], ..Camera::default() };
        let (w, h) = (320.0f32, 200.0f32);
        let m = cam.view_proj(0.05, w / h);
        let b = cam.basis(0.05);
        for p in [[0.0, 0.0, 0.0], [0.3, -0.4, 0.1], [-0.5, 0.5, 0.02]] {
            let clip: [f32; 4] =
                std::array::from_fn(|r| (0..3).map(|c| m[c][r] * p[c]).sum::<f32>() + m[3][r]);
            let d = sub(p, b.eye);
            let vz = dot(d, b.forward);
            // Software: x = w/2 + 0.9·h·x_view/z_view; y = h/2 − 0.9·h·y_view/z_view.
            let sx = w * 0.5 + FOCAL * h * dot(d, b.right) / vz;
            let sy = h * 0.5 - FOCAL * h * dot(d, b.up) / vz;
            let gx = (clip[0] / clip[3] + 1.0) * 0.5 * w;
            let gy = (1.0 - clip[1] / clip[3]) * 0.5 * h;
            assert!((sx - gx).abs() < 1e-3 && (sy - gy).abs() < 1e-3, "{p:?}: {sx},{sy} vs {gx},{gy}");
            assert!((clip[3] - vz).abs() < 1e-5);
            let depth = clip[2] / clip[3];
            assert!(depth > 0.0 && depth < 1.0);
        }
    }

    #[test]
    fn the_eye_stays_above_the_ground() {
        // A tall plateau (Z = 0.5 at exaggeration 1) over the whole map.
        let map = Heightmap::from_fn(65, 65, 1.0, |_, _| 1.0).unwrap();
        let hs = 32.0; // Z per height unit = 32 / 64 = 0.5
        let mut cam = Camera { pitch: 0.1, distance: 0.3, exaggeration: 2.0, ..Camera::default() };
        // Target at max(0, sea·e)/2 = 0: the eye starts 0.03 high, inside the 1.0-high plateau.
        assert!(cam.basis(0.0).eye[2] < 1.0);
        cam.keep_above(&map, hs, 0.0);
        let eye = cam.basis(0.0).eye;
        assert!(eye[2] >= 1.01 || eye[0].abs() > 0.5 || eye[1].abs() > 0.5, "{eye:?} {cam:?}");
        assert!(cam.pitch > 0.1);
        // A camera already above the ground is left alone.
        let high = Camera::default();
        let mut c = high;
        c.keep_above(&map, 1.0, 0.0);
        assert_eq!(c, high);
    }

    #[test]
    fn lod_keeps_the_rest_mesh_while_moving_up_to_256() {
        let cam = Camera::default();
        assert_eq!((cam.lod_detail(false), cam.lod_detail(true)), (256, 256));
        let low = Camera { detail: 40, ..cam };
        assert_eq!((low.lod_detail(false), low.lod_detail(true)), (40, 40));
        let fine = Camera { detail: 1024, ..cam };
        assert_eq!((fine.lod_detail(false), fine.lod_detail(true)), (1024, 512));
        let mid = Camera { detail: 400, ..cam };
        assert_eq!(mid.lod_detail(true), 256);
        // Out-of-range details are clamped first.
        assert_eq!(Camera { detail: 5000, ..cam }.lod_detail(false), 1024);
    }
}
