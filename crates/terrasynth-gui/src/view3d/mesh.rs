//! The level-of-detail terrain mesh of the 3D view ([`Mesh3d`]): the regular LOD grid with its
//! side walls, the finer near-camera patch with stitching skirts, and the index orders and
//! vertex bytes the renderers draw (see [`super`] for the LOD policy).

use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;
use terrasynth::Heightmap;
use terrasynth::render::Palette;
use terrasynth::render::palette::FractionMap;
use terrasynth::render::water::LAKE_RGBA;

use super::{Camera, DETAIL_RANGE, Light, WALL, WALL_DEPTH};

/// World `Z` per height unit at exaggeration 1: height scale / (cell size × (longer side − 1)),
/// so relief is true to scale with the map spanning 1 along its longer side.
pub fn z_scale(map: &Heightmap, height_scale: f32) -> f32 {
    let span = (map.width().max(map.height()) - 1).max(1) as f32;
    height_scale / (map.cell_size() as f32 * span)
}

/// Half extents `(X, Y)` of `map` in map widths (the longer side spans 1).
fn map_half(map: &Heightmap) -> [f32; 2] {
    let span = (map.width().max(map.height()) - 1).max(1) as f32;
    [(map.width() - 1) as f32 / span * 0.5, (map.height() - 1) as f32 / span * 0.5]
}

/// The grid vertices of `map` at columns `xs` × rows `ys` (increasing cell indices), row by
/// row: position, slope by central differences over the neighbouring samples (one-sided at
/// the ends of the lists), palette colour — or the fresh-water colour when a cell of `water`
/// within `reach` cells (a square) of the sample is wet, so rivers narrower than the sample
/// spacing still show.
fn grid_vertices(
    map: &Heightmap,
    palette: &Palette,
    fraction: &FractionMap,
    zk: f32,
    (xs, ys): (&[usize], &[usize]),
    water: Option<(&[bool], usize)>,
) -> Vec<Vertex3d> {
    let w = map.width();
    let span = (w.max(map.height()) - 1).max(1) as f32;
    let half = map_half(map);
    let s = map.as_slice();
    let (nx, ny) = (xs.len(), ys.len());
    let px = |i: usize| xs[i] as f32 / span - half[0];
    let py = |j: usize| half[1] - ys[j] as f32 / span;
    let z = |i: usize, j: usize| s[ys[j] * w + xs[i]] * zk;
    let water = water.filter(|(m, _)| m.len() == s.len());
    let wet = |x: usize, y: usize| {
        water.is_some_and(|(m, r)| {
            let (x0, x1) = (x.saturating_sub(r), (x + r).min(w - 1));
            let (y0, y1) = (y.saturating_sub(r), (y + r).min(map.height() - 1));
            (y0..=y1).any(|yy| m[yy * w + x0..=yy * w + x1].contains(&true))
        })
    };
    let mut vertices = vec![Vertex3d { pos: [0.0; 3], grad: [0.0; 2], color: [0; 4] }; nx * ny];
    vertices.par_chunks_mut(nx.max(1)).enumerate().for_each(|(j, out)| {
        let (j0, j1) = (j.saturating_sub(1), (j + 1).min(ny - 1));
        for (i, v) in out.iter_mut().enumerate() {
            let (i0, i1) = (i.saturating_sub(1), (i + 1).min(nx - 1));
            let gx = if i1 > i0 { (z(i1, j) - z(i0, j)) / (px(i1) - px(i0)) } else { 0.0 };
            let gy = if j1 > j0 { (z(i, j1) - z(i, j0)) / (py(j1) - py(j0)) } else { 0.0 };
            let hv = s[ys[j] * w + xs[i]];
            let c = if wet(xs[i], ys[j]) {
                [LAKE_RGBA[0], LAKE_RGBA[1], LAKE_RGBA[2]]
            } else {
                palette.color_at(fraction.fraction(hv))
            };
            *v = Vertex3d { pos: [px(i), py(j), hv * zk], grad: [gx, gy], color: [c[0], c[1], c[2], 255] };
        }
    });
    vertices
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
    /// Map columns of the grid's samples (`nx` of them, increasing).
    pub xs: Vec<usize>,
    /// Map rows of the grid's samples (`ny` of them, increasing; north row first).
    pub ys: Vec<usize>,
    /// What [`Mesh3d::patch`] needs to sample the map finer (kept by [`Mesh3d::build`]; `None`
    /// in a patch).
    pub source: Option<Arc<PatchSource>>,
}

/// The full-resolution inputs of a mesh, kept so that finer patches can be cut from it.
#[derive(Clone, Debug)]
pub struct PatchSource {
    map: Heightmap,
    palette: Palette,
    fraction: FractionMap,
    height_scale: f32,
    water: Option<Arc<Vec<bool>>>,
}

/// Half size of the near-camera patch, in camera distances (see [`Mesh3d::patch_rect`]).
pub const PATCH_HALF: f32 = 0.6;
/// Samples along a side of the near-camera patch (at most, plus the coarse grid's own).
pub const PATCH_SAMPLES: usize = 224;

/// Where a finer patch replaces the coarse grid: grid squares `i0..i1` × `j0..j1` of the
/// coarse mesh (sample indices, so the patch border runs along coarse grid lines), sampled
/// every `fine` cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatchRect {
    /// First coarse column of the patch.
    pub i0: usize,
    /// First coarse row of the patch.
    pub j0: usize,
    /// Last coarse column (exclusive for squares, inclusive for samples).
    pub i1: usize,
    /// Last coarse row (exclusive for squares, inclusive for samples).
    pub j1: usize,
    /// Cells between the patch's samples (less than the coarse step).
    pub fine: usize,
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
        Self::build_with_water(map, palette, fraction, sea_level, height_scale, detail, None)
    }

    /// [`Mesh3d::build`] with the fresh water (lakes and rivers, row-major cells of `map`)
    /// painted in the export's lake colour: a vertex is wet when a wet cell lies within half a
    /// sample spacing of it (so a one-cell river shows at any level of detail).
    pub fn build_with_water(
        map: &Heightmap,
        palette: &Palette,
        fraction: &FractionMap,
        sea_level: f32,
        height_scale: f32,
        detail: u32,
        water: Option<Arc<Vec<bool>>>,
    ) -> Self {
        let (w, h) = (map.width(), map.height());
        let long = w.max(h);
        let step = long.div_ceil(detail.clamp(DETAIL_RANGE[0], DETAIL_RANGE[1]) as usize).max(1);
        let xs: Vec<usize> = terrasynth::render::mesh::lod_samples(w, step);
        let ys: Vec<usize> = terrasynth::render::mesh::lod_samples(h, step);
        let zk = z_scale(map, height_scale);
        let reach = step / 2;
        let vertices =
            grid_vertices(map, palette, fraction, zk, (&xs, &ys), water.as_deref().map(|m| (&m[..], reach)));
        let (nx, ny) = (xs.len(), ys.len());
        let sea_z = sea_level * zk;
        let lowest = vertices.iter().map(|v| v.pos[2]).fold(sea_z, f32::min);
        let source = PatchSource {
            map: map.clone(),
            palette: palette.clone(),
            fraction: *fraction,
            height_scale,
            water,
        };
        let half = map_half(map);
        let mut mesh = Self { nx, ny, vertices, sea_z, half, step, xs, ys, source: Some(Arc::new(source)) };
        mesh.add_walls(lowest - WALL_DEPTH, sea_z);
        mesh
    }

    /// The patch of this mesh to refine for `cam`, if any: a square of half size
    /// [`PATCH_HALF`] × d centred half-way between the camera target and the eye (seen from
    /// above; the centre snapped to multiples of max(half / 4, coarse step) cells), where d is
    /// the camera distance rounded to a quarter power of two (so zooming rebuilds it only
    /// every ≈ 19 %), widened to the coarse grid lines; sampled every
    /// `fine = ⌈2·half / PATCH_SAMPLES⌉` cells. `None` when
    /// that is not at least a quarter finer than the coarse step (e.g. at the default
    /// distance), when the mesh has no [`PatchSource`], or the square misses the map.
    pub fn patch_rect(&self, cam: &Camera) -> Option<PatchRect> {
        let src = self.source.as_ref()?;
        let span = (src.map.width().max(src.map.height()) - 1).max(1) as f32;
        let d = (cam.distance.max(1e-3).log2() * 4.0).round() / 4.0;
        let half_cells = PATCH_HALF * d.exp2() * span;
        let fine = ((2.0 * half_cells / PATCH_SAMPLES as f32).ceil() as usize).max(1);
        if fine * 4 > self.step * 3 {
            return None;
        }
        // Centre half-way between the target and the eye (the nearest ground shows the biggest
        // facets), snapped to a lattice of a quarter of the half size (at least a coarse step)
        // so orbiting rebuilds the patch only every few degrees.
        let eye = cam.basis(self.sea_z).eye;
        let q = (half_cells / 4.0).max(self.step as f32);
        let snap = |c: f32| (c / q).round() * q;
        let cx = snap((0.5 * (cam.target[0] + eye[0]) + self.half[0]) * span);
        let cy = snap((self.half[1] - 0.5 * (cam.target[1] + eye[1])) * span);
        // Coarse sample index at or below / at or above a cell coordinate.
        let index = |c: f32, samples: &[usize], up: bool| {
            let k = samples.partition_point(|&x| (x as f32) < c);
            let k =
                if up || samples.get(k).is_some_and(|&x| x as f32 == c) { k } else { k.saturating_sub(1) };
            k.min(samples.len() - 1)
        };
        let (i0, i1) = (index(cx - half_cells, &self.xs, false), index(cx + half_cells, &self.xs, true));
        let (j0, j1) = (index(cy - half_cells, &self.ys, false), index(cy + half_cells, &self.ys, true));
        (i1 > i0 && j1 > j0).then_some(PatchRect { i0, j0, i1, j1, fine })
    }

    /// The finer mesh over `rect` (from [`Mesh3d::patch_rect`]): the map sampled every
    /// `rect.fine` cells plus at every coarse sample inside it (so every coarse grid line of
    /// the border has a patch vertex at each coarse vertex), then, instead of walls, a
    /// **stitching skirt** on each side: for every border sample, the patch vertex and the
    /// point below or above it on the coarse grid's edge (linear between the two coarse
    /// vertices around it). The skirt is a vertical strip that exactly fills the gap between
    /// the fine border and the coarse triangles' edge, so no cracks show whatever the heights.
    /// Same vertex layout as [`Mesh3d::build`] (walls replaced by the skirts), so
    /// [`Mesh3d::indices_from`] draws it. `None` without a [`PatchSource`].
    pub fn patch(&self, rect: &PatchRect) -> Option<Mesh3d> {
        let src = self.source.as_ref()?;
        let samples = |coarse: &[usize], a: usize, b: usize| {
            let (lo, hi) = (coarse[a], coarse[b]);
            let mut v: Vec<usize> =
                (lo..=hi).step_by(rect.fine.max(1)).chain(coarse[a..=b].iter().copied()).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let xs = samples(&self.xs, rect.i0, rect.i1);
        let ys = samples(&self.ys, rect.j0, rect.j1);
        let zk = z_scale(&src.map, src.height_scale);
        let water = src.water.as_deref().map(|m| (&m[..], rect.fine / 2));
        let vertices = grid_vertices(&src.map, &src.palette, &src.fraction, zk, (&xs, &ys), water);
        let (nx, ny) = (xs.len(), ys.len());
        let mut patch = Mesh3d {
            nx,
            ny,
            vertices,
            sea_z: self.sea_z,
            half: self.half,
            step: rect.fine,
            xs,
            ys,
            source: None,
        };
        // Coarse Z at cell `c` along coarse line `fixed` (a row if `horizontal`, else a column).
        let coarse_z = |horizontal: bool, fixed: usize, c: usize| {
            let line = if horizontal { &self.xs } else { &self.ys };
            let k = line.partition_point(|&x| x <= c).clamp(1, line.len() - 1) - 1;
            let t = (c - line[k]) as f32 / (line[k + 1] - line[k]) as f32;
            let at = |k: usize| {
                let idx = if horizontal { fixed * self.nx + k } else { k * self.nx + fixed };
                self.vertices[idx].pos[2]
            };
            at(k) + (at(k + 1) - at(k)) * t
        };
        // Same side order as the walls: north, east, south, west.
        let sides: [(Vec<usize>, bool, usize); 4] = [
            ((0..nx).collect(), true, rect.j0),
            ((0..ny).map(|j| j * nx + nx - 1).collect(), false, rect.i1),
            ((0..nx).map(|i| (ny - 1) * nx + i).collect(), true, rect.j1),
            ((0..ny).map(|j| j * nx).collect(), false, rect.i0),
        ];
        for (ids, horizontal, fixed) in sides {
            for (k, id) in ids.into_iter().enumerate() {
                let v = patch.vertices[id];
                let c = if horizontal { patch.xs[k] } else { patch.ys[k] };
                let z = coarse_z(horizontal, fixed, c);
                patch.vertices.push(v);
                patch.vertices.push(Vertex3d { pos: [v.pos[0], v.pos[1], z], ..v });
            }
        }
        Some(patch)
    }

    /// Appends the four side walls (see [`WALL_DEPTH`]): per side, the border vertices again
    /// (raised to `sea_z` where they are under water, so the water surface meets the walls)
    /// and the same points at `base`, coloured [`WALL`] shaded by the side's facing.
    fn add_walls(&mut self, base: f32, sea_z: f32) {
        let (nx, ny) = (self.nx, self.ny);
        if nx < 2 || ny < 2 {
            return;
        }
        let light = Light::library();
        let flat = light.factor([0.0, 0.0, 1.0]);
        // (grid indices along the side, outward normal)
        let sides: [(Vec<usize>, [f32; 3]); 4] = [
            ((0..nx).collect(), [0.0, 1.0, 0.0]),
            ((0..ny).map(|j| j * nx + nx - 1).collect(), [1.0, 0.0, 0.0]),
            ((0..nx).map(|i| (ny - 1) * nx + i).collect(), [0.0, -1.0, 0.0]),
            ((0..ny).map(|j| j * nx).collect(), [-1.0, 0.0, 0.0]),
        ];
        for (ids, normal) in sides {
            // The shader lights these (slope 0) as flat ground: pre-divide by that factor.
            let lit = light.factor(normal) / flat;
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

    /// Ranges of [`Mesh3d::indices_from`]`(from_east, from_south)` of a mesh of `nx` × `ny`
    /// samples with walls that draw everything but the grid squares under `hole` (the walls
    /// included): one range before the hole's first row, one between consecutive rows of the
    /// hole, one after (squares are laid out row by row in the drawing order, six indices
    /// each).
    pub fn ranges_without(
        nx: usize,
        ny: usize,
        from_east: bool,
        from_south: bool,
        hole: &PatchRect,
    ) -> Vec<Range<u32>> {
        let (cols, rows) = (nx as u32 - 1, ny as u32 - 1);
        let end = 6 * (cols * rows + 2 * cols + 2 * rows);
        // The hole in drawing ranks (rows and columns counted from the starting corner).
        let flip = |a: usize, b: usize, n: u32, f: bool| {
            if f { (n - b as u32, n - a as u32) } else { (a as u32, b as u32) }
        };
        let (c0, c1) = flip(hole.i0, hole.i1, cols, from_east);
        let (r0, r1) = flip(hole.j0, hole.j1, rows, from_south);
        let at = |r: u32, c: u32| 6 * (r * cols + c);
        let mut out = Vec::with_capacity((r1 - r0) as usize + 1);
        let mut start = 0;
        for r in r0..r1 {
            out.push(start..at(r, c0));
            start = at(r, c1);
        }
        out.push(start..end);
        out.retain(|r| !r.is_empty());
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
    fn rivers_thinner_than_the_sample_spacing_still_colour_the_mesh() {
        // A one-cell river down column 50 of a 129² map sampled every 4 cells (33 samples a
        // side, detail 33): column 50 lies between samples 48 and 52, within reach 2 of both.
        let map = Heightmap::from_fn(129, 129, 1.0, |x, y| (x + y) as f32 * 0.01).unwrap();
        let palette = Palette::named("classic").unwrap();
        let fraction = palette.fraction_map(0.0, 2.56, Some(-1.0));
        let mut water = vec![false; 129 * 129];
        (0..129).for_each(|y| water[y * 129 + 50] = true);
        let m = Mesh3d::build_with_water(&map, &palette, &fraction, -1.0, 100.0, 33, Some(Arc::new(water)));
        assert_eq!(m.step, 4);
        let lake = [LAKE_RGBA[0], LAKE_RGBA[1], LAKE_RGBA[2], 255];
        let wet: Vec<usize> = (0..m.nx).filter(|&i| m.vertices[10 * m.nx + i].color == lake).collect();
        assert_eq!(wet.iter().map(|&i| m.xs[i]).collect::<Vec<_>>(), [48, 52]);
        let dry = Mesh3d::build(&map, &palette, &fraction, -1.0, 100.0, 33);
        assert!(dry.vertices.iter().all(|v| v.color != lake));
        assert_eq!(dry.vertices.len(), m.vertices.len());
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

    /// A rough 1025² map (hashed heights in 0..1, so no two neighbours agree) and its mesh at
    /// detail 128 (every 9 cells).
    fn rough() -> (Heightmap, Mesh3d) {
        let map = Heightmap::from_fn(1025, 1025, 1.0, |x, y| {
            let h = (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ (y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
            (h.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32
        })
        .unwrap();
        let m = mesh_of(&map, -1.0, 128);
        (map, m)
    }

    #[test]
    fn a_patch_only_where_it_is_finer() {
        let (_, m) = rough();
        assert_eq!(m.step, 9);
        // Default distance 1.6: the patch would be sampled every ⌈2·0.6·1.68·1024/224⌉ = 10
        // cells, not finer than 9: none.
        assert_eq!(m.patch_rect(&Camera::default()), None);
        // Close up (distance 0.2 → 2^-2.25 = 0.21): half size 0.6·0.21·1024 = 129 cells around
        // the point half-way between target and eye (snapped to 32 cells), sampled every
        // ⌈2·129/224⌉ = 2 cells.
        let cam = Camera { distance: 0.2, target: [0.1, -0.2], ..Camera::default() };
        let r = m.patch_rect(&cam).expect("a patch close up");
        assert_eq!(r.fine, 2);
        let eye = cam.basis(m.sea_z).eye;
        let (cx, cy) = ((0.5 * (0.1 + eye[0]) + 0.5) * 1024.0, (0.5 - 0.5 * (-0.2 + eye[1])) * 1024.0);
        let (x0, x1, y0, y1) = (m.xs[r.i0] as f32, m.xs[r.i1] as f32, m.ys[r.j0] as f32, m.ys[r.j1] as f32);
        let (half, q) = (0.6 * 0.2102 * 1024.0, 0.6 * 0.2102 * 1024.0 / 4.0);
        let inner = half - q / 2.0 - 1.0;
        assert!(x0 <= cx - inner && x1 >= cx + inner && y0 <= cy - inner && y1 >= cy + inner, "{r:?}");
        assert!(x1 - x0 <= 2.0 * half + 18.0 && y1 - y0 <= 2.0 * half + 18.0, "{r:?}");
        // The eye's side of the target: the camera looks from the south-west (yaw −2.2).
        assert!(cx < 0.6 * 1024.0 && cy > 0.7 * 1024.0);
        // Small moves keep the same patch (no rebuild); a zoom past a quarter power of two or a
        // pan across coarse grid lines changes it.
        assert_eq!(m.patch_rect(&Camera { distance: 0.205, ..cam }), Some(r));
        // Orbiting 0.2 rad in steps of 0.01 (the eye's half-way point moves ≈ 17 cells)
        // changes the snapped patch at most twice.
        let rects: Vec<_> =
            (0..=20).map(|k| m.patch_rect(&Camera { yaw: cam.yaw + 0.01 * k as f32, ..cam })).collect();
        assert!(rects.windows(2).filter(|w| w[0] != w[1]).count() <= 2);
        assert_ne!(m.patch_rect(&Camera { distance: 0.3, ..cam }), Some(r));
        assert_ne!(m.patch_rect(&Camera { target: [0.2, -0.2], ..cam }), Some(r));
        // A target near a corner clamps the patch to the map.
        let r = m.patch_rect(&Camera { target: [-0.5, 0.5], ..cam }).unwrap();
        assert_eq!((r.i0, r.j0), (0, 0));
        // A patch has no source: no patch of a patch.
        let p = m.patch(&r).unwrap();
        assert_eq!(p.patch_rect(&cam), None);
    }

    #[test]
    fn patch_skirts_meet_the_coarse_edges() {
        let (map, m) = rough();
        // Inside the map, clamped at the north-west corner, at the south-east border.
        let cams = [(0.35, [0.05, 0.1], 0.6), (0.25, [-0.48, 0.45], 2.0), (0.5, [0.45, -0.45], -0.7)];
        for (distance, target, yaw) in cams {
            let cam = Camera { distance, target, yaw, ..Camera::default() };
            check_patch(&map, &m, &cam);
        }
    }

    fn check_patch(map: &Heightmap, m: &Mesh3d, cam: &Camera) {
        let r = m.patch_rect(cam).unwrap();
        assert!(r.fine < m.step, "{r:?}");
        let p = m.patch(&r).unwrap();
        // The patch spans exactly the coarse squares i0..i1 × j0..j1 and has a vertex at every
        // coarse sample inside them (plus every `fine` cells in between).
        assert_eq!((p.xs[0], p.xs[p.nx - 1]), (m.xs[r.i0], m.xs[r.i1]));
        assert_eq!((p.ys[0], p.ys[p.ny - 1]), (m.ys[r.j0], m.ys[r.j1]));
        assert!(m.xs[r.i0..=r.i1].iter().all(|x| p.xs.contains(x)));
        assert!(m.ys[r.j0..=r.j1].iter().all(|y| p.ys.contains(y)));
        assert!(p.xs.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] <= r.fine));
        // Vertex count bound: the patch spans ≤ PATCH_SAMPLES·fine cells plus a coarse step
        // of widening on each side, sampled every `fine` cells plus at the coarse samples.
        let side_x = (m.xs[r.i1] - m.xs[r.i0]) / r.fine + (r.i1 - r.i0) + 2;
        let side_y = (m.ys[r.j1] - m.ys[r.j0]) / r.fine + (r.j1 - r.j0) + 2;
        let bound = PATCH_SAMPLES + 2 * m.step / r.fine + PATCH_SAMPLES * r.fine / m.step + 6;
        assert!(p.nx <= side_x && p.ny <= side_y && side_x.max(side_y) <= bound, "{r:?}");
        // (samples along a side)² + 2 skirt vertices per border sample.
        assert_eq!(p.vertices.len(), p.nx * p.ny + 2 * (2 * p.nx + 2 * p.ny));
        let zk = z_scale(map, 100.0);
        for (j, &y) in p.ys.iter().enumerate() {
            for (i, &x) in p.xs.iter().enumerate() {
                assert_eq!(p.vertices[j * p.nx + i].pos[2], map[(x, y)] * zk);
            }
        }
        // Skirts, side by side (north, east, south, west): each pair is a border vertex of the
        // patch and the point on the coarse edge straight below or above it.
        let coarse = |i: usize, j: usize| m.vertices[j * m.nx + i].pos[2];
        let mut k = p.nx * p.ny;
        let sides: [(Vec<(usize, usize)>, bool); 4] = [
            ((0..p.nx).map(|i| (i, 0)).collect(), true),
            ((0..p.ny).map(|j| (p.nx - 1, j)).collect(), false),
            ((0..p.nx).map(|i| (i, p.ny - 1)).collect(), true),
            ((0..p.ny).map(|j| (0, j)).collect(), false),
        ];
        let mut crossing = 0;
        for (cells, along_x) in sides {
            for (i, j) in cells {
                let (top, bottom) = (p.vertices[k], p.vertices[k + 1]);
                k += 2;
                assert_eq!(top, p.vertices[j * p.nx + i]);
                assert_eq!((bottom.pos[0], bottom.pos[1]), (top.pos[0], top.pos[1]));
                // The coarse edge: linear between the coarse vertices around this sample.
                let (c, line, fixed) = if along_x {
                    (p.xs[i], &m.xs, if j == 0 { r.j0 } else { r.j1 })
                } else {
                    (p.ys[j], &m.ys, if i == 0 { r.i0 } else { r.i1 })
                };
                let a = line.iter().rposition(|&v| v <= c).unwrap().min(line.len() - 2);
                let t = (c - line[a]) as f32 / (line[a + 1] - line[a]) as f32;
                let at = |q: usize| if along_x { coarse(q, fixed) } else { coarse(fixed, q) };
                let want = at(a) + (at(a + 1) - at(a)) * t;
                assert!((bottom.pos[2] - want).abs() < 1e-6, "{c}: {} vs {want}", bottom.pos[2]);
                if t == 0.0 {
                    // At a coarse vertex the fine and coarse edges share the height.
                    assert_eq!(bottom.pos[2], top.pos[2]);
                } else if (bottom.pos[2] - top.pos[2]).abs() > 1e-4 {
                    crossing += 1;
                }
            }
        }
        assert_eq!(k, p.vertices.len());
        assert!(crossing > 100, "the rough map leaves real gaps to fill: {crossing}");
        assert_eq!(p.indices().len(), 3 * p.triangle_count());
    }

    #[test]
    fn ranges_without_skip_exactly_the_hole() {
        let map = Heightmap::new(65, 49, 1.0).unwrap();
        let m = mesh_of(&map, 0.0, 32); // step 3: 23 × 17 samples
        let (cols, rows) = (m.nx - 1, m.ny - 1);
        let hole = PatchRect { i0: 4, j0: 2, i1: 11, j1: 9, fine: 1 };
        for (e, s) in [(false, false), (true, false), (false, true), (true, true)] {
            let idx = m.indices_from(e, s);
            let mut drawn = vec![0u8; idx.len() / 6];
            for r in Mesh3d::ranges_without(m.nx, m.ny, e, s, &hole) {
                assert!(r.start % 6 == 0 && r.end % 6 == 0 && r.end as usize <= idx.len());
                for q in r.start / 6..r.end / 6 {
                    drawn[q as usize] += 1;
                }
            }
            for (q, &d) in drawn.iter().enumerate() {
                // Which grid square (or wall quad) the q-th six indices draw.
                let a = idx[6 * q] as usize;
                let in_hole = q < cols * rows && {
                    let (i, j) = (a % m.nx, a / m.nx);
                    (hole.i0..hole.i1).contains(&i) && (hole.j0..hole.j1).contains(&j)
                };
                assert_eq!(d, u8::from(!in_hole), "corner {e} {s}, quad {q} (vertex {a})");
            }
        }
    }
}
