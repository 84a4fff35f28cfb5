//! Triangle meshes from heightmaps, with a height multiplier and a level of detail that skips
//! vertices (seed 003 §III: "on décrémente le nombre de triangles en sautant une partie des
//! points de la carte de hauteur").
//!
//! Layout (glTF conventions, Y up, right-handed): the vertex of grid cell `(x, y)` is at
//! `(x · cell_size, h · height_scale, y · cell_size)`, so rows run along +Z. UVs are
//! `(x / (W − 1), y / (H − 1))`, matching an image of the map (row 0 at the top, v = 0).
//! Each grid quad gives two triangles wound counter-clockwise seen from above (+Y).
//!
//! LOD: level `lod` keeps every `step = 2^lod`-th column and row, **and always the last column
//! and row**, so the mesh keeps the exact extent of the map and the edges of neighbouring tiles
//! match. Normals are smooth: central differences of the full-resolution heights at each kept
//! vertex, `n = normalise(−∂y/∂x, 1, −∂y/∂z)` (one-sided at the map's edges).

use rayon::prelude::*;

use crate::render::palette::{FractionMap, Palette};
use crate::{Error, Heightmap, Result};

/// Largest LOD level accepted (step 2^16).
pub const MAX_LOD: u32 = 16;

/// How to build a mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshOptions {
    /// Height multiplier (seed 003 "coefficient multiplicateur"): world Y = height × this.
    /// Default 1; any finite number.
    pub height_scale: f32,
    /// Level of detail: vertex step = 2^lod (0 = every cell; 1 = every other one, …), 0..=16.
    pub lod: u32,
    /// Vertex colours from this palette (stored sRGB in [`Mesh::colors`]); `None` for none.
    pub colors: Option<Palette>,
    /// Sea level for the palette (see [`crate::render::palette`]); `None` uses min..max.
    pub sea_level: Option<f32>,
}

impl Default for MeshOptions {
    fn default() -> Self {
        Self { height_scale: 1.0, lod: 0, colors: None, sea_level: None }
    }
}

/// An indexed triangle mesh.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// Vertex positions (x, y, z), metres.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals.
    pub normals: Vec<[f32; 3]>,
    /// Texture coordinates in [0, 1].
    pub uvs: Vec<[f32; 2]>,
    /// sRGB vertex colours (empty when the options had no palette).
    pub colors: Vec<[u8; 3]>,
    /// Triangle list, three indices per triangle, counter-clockwise seen from +Y.
    pub indices: Vec<u32>,
}

/// The kept sample coordinates along one axis of `n` cells for a given step: 0, step, 2·step,
/// …, plus `n − 1` if not already there.
pub fn lod_samples(n: usize, step: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).step_by(step.max(1)).collect();
    if v.last() != Some(&(n - 1)) {
        v.push(n - 1);
    }
    v
}

/// The mesh of a heightmap described without storing it: every vertex attribute and every
/// quad's indices are computed on demand from the heights. [`Mesh::from_heightmap`] collects
/// it into vectors; the streaming writers (`io::gltf::write_glb_grid`) write it row by row,
/// so a 4097² mesh never has to be held whole in memory. Both give the same values.
#[derive(Clone, Debug)]
pub struct GridMesh<'a> {
    map: &'a Heightmap,
    xs: Vec<usize>,
    ys: Vec<usize>,
    cs: f32,
    hs: f32,
    colors: Option<(Palette, FractionMap)>,
    /// The colours of every map cell (3 bytes each), when the caller already computed them
    /// with the mesh's own palette and mapping ([`GridMesh::with_color_cache`]).
    color_cache: Option<&'a [u8]>,
}

impl<'a> GridMesh<'a> {
    /// Checks the options (see [`Mesh::from_heightmap`] for the errors) and sets up the view.
    pub fn new(map: &'a Heightmap, opts: MeshOptions) -> Result<Self> {
        if !opts.height_scale.is_finite() {
            return Err(Error::param("height_scale", opts.height_scale, "a finite number"));
        }
        if opts.lod > MAX_LOD {
            return Err(Error::param("lod", opts.lod, format!("an integer in 0..={MAX_LOD}")));
        }
        let (w, h) = (map.width(), map.height());
        if w < 2 || h < 2 {
            return Err(Error::InvalidSize {
                width: w,
                height: h,
                reason: "a mesh needs at least 2x2 cells".into(),
            });
        }
        if let Some(p) = &opts.colors {
            p.validate()?;
        }
        let (nx, ny) = Self::grid_size(w, h, opts.lod);
        if (nx as u64) * (ny as u64) > u32::MAX as u64 {
            return Err(Error::InvalidSize {
                width: w,
                height: h,
                reason: "more than 2^32 mesh vertices".into(),
            });
        }
        let step = 1usize << opts.lod;
        let colors = opts.colors.map(|p| {
            let (lo, hi) = map.min_max().unwrap_or((0.0, 1.0));
            let fm = p.fraction_map(lo, hi, opts.sea_level);
            (p, fm)
        });
        Ok(Self {
            map,
            xs: lod_samples(w, step),
            ys: lod_samples(h, step),
            cs: map.cell_size() as f32,
            hs: opts.height_scale,
            colors,
            color_cache: None,
        })
    }

    /// Takes the vertex colours from `rgb` (3 sRGB bytes per map cell, row-major) instead of
    /// computing them again, when they were made with the mesh's own palette and mapping:
    /// `palette` and `fm` equal to those of the options (the mapping from the map's range and
    /// sea level) and one colour per cell. Otherwise the mesh keeps computing its own, so the
    /// colours are the same either way.
    pub fn with_color_cache(mut self, rgb: &'a [u8], palette: &Palette, fm: FractionMap) -> Self {
        let same = self.colors.as_ref().is_some_and(|(p, f)| p == palette && *f == fm);
        if same && rgb.len() == 3 * self.map.len() {
            self.color_cache = Some(rgb);
        }
        self
    }

    /// Vertices per row and per column of a `w × h` map at level `lod` (no allocation), for
    /// sizing files before building anything. `lod` is capped at [`MAX_LOD`].
    pub fn grid_size(w: usize, h: usize, lod: u32) -> (usize, usize) {
        let step = 1usize << lod.min(MAX_LOD);
        let along = |n: usize| {
            if n == 0 { 0 } else { (n - 1) / step + 1 + usize::from(!(n - 1).is_multiple_of(step)) }
        };
        (along(w), along(h))
    }

    /// Vertices per row.
    pub fn nx(&self) -> usize {
        self.xs.len()
    }

    /// Rows of vertices.
    pub fn ny(&self) -> usize {
        self.ys.len()
    }

    /// Number of vertices, `nx · ny`.
    pub fn vertex_count(&self) -> usize {
        self.xs.len() * self.ys.len()
    }

    /// Number of indices, `6 (nx − 1)(ny − 1)`.
    pub fn index_count(&self) -> usize {
        6 * (self.xs.len() - 1) * (self.ys.len() - 1)
    }

    /// Whether the vertices carry colours.
    pub fn has_colors(&self) -> bool {
        self.colors.is_some()
    }

    #[inline]
    fn at(&self, x: usize, y: usize) -> f32 {
        self.map.as_slice()[y * self.map.width() + x]
    }

    /// Position of vertex `(i, j)` (column `i`, row `j` of the kept samples).
    #[inline]
    pub fn position(&self, i: usize, j: usize) -> [f32; 3] {
        let (x, y) = (self.xs[i], self.ys[j]);
        [x as f32 * self.cs, self.at(x, y) * self.hs, y as f32 * self.cs]
    }

    /// Unit normal of vertex `(i, j)`: central differences of the full-resolution heights.
    #[inline]
    pub fn normal(&self, i: usize, j: usize) -> [f32; 3] {
        let (x, y) = (self.xs[i], self.ys[j]);
        let (w, h) = (self.map.width(), self.map.height());
        let (hs, cs) = (self.hs, self.cs);
        let (x0, x1) = (x.saturating_sub(1), (x + 1).min(w - 1));
        let (y0, y1) = (y.saturating_sub(1), (y + 1).min(h - 1));
        let across = [self.at(x0, y), self.at(x1, y), (x1 - x0) as f32 * cs];
        slope_normal(across, [self.at(x, y0), self.at(x, y1), (y1 - y0) as f32 * cs], hs)
    }

    /// The unit normals of vertex row `j` into `out` (one per vertex of the row), the same
    /// values as [`GridMesh::normal`]. At full resolution (`lod` 0) the row's inner vertices
    /// are done in one loop over the three map rows around it, without the per-vertex sample
    /// lookups and edge clamps (the same operations in the same order: the same bits).
    pub fn normal_row(&self, j: usize, out: &mut [[f32; 3]]) {
        let (w, h) = (self.map.width(), self.map.height());
        let n = self.xs.len();
        if n != w || w < 3 {
            for (i, o) in out.iter_mut().enumerate().take(n) {
                *o = self.normal(i, j);
            }
            return;
        }
        let y = self.ys[j];
        let (y0, y1) = (y.saturating_sub(1), (y + 1).min(h - 1));
        let z = self.map.as_slice();
        let (row, up, down) = (&z[y * w..(y + 1) * w], &z[y0 * w..(y0 + 1) * w], &z[y1 * w..(y1 + 1) * w]);
        let (hs, cs) = (self.hs, self.cs);
        let (across, along) = (2.0 * cs, (y1 - y0) as f32 * cs);
        for x in [0, w - 1] {
            out[x] = self.normal(x, j);
        }
        let inner = &mut out[1..w - 1];
        for (k, o) in inner.iter_mut().enumerate() {
            *o = slope_normal([row[k], row[k + 2], across], [up[k + 1], down[k + 1], along], hs);
        }
    }

    /// The positions of vertex row `j` into `out` (one per vertex of the row), the same values
    /// as [`GridMesh::position`], from one map row without a lookup per vertex.
    pub fn position_row(&self, j: usize, out: &mut [[f32; 3]]) {
        let (w, y) = (self.map.width(), self.ys[j]);
        let row = &self.map.as_slice()[y * w..(y + 1) * w];
        let (cs, hs, z) = (self.cs, self.hs, y as f32 * self.cs);
        for (o, &x) in out.iter_mut().zip(&self.xs) {
            *o = [x as f32 * cs, row[x] * hs, z];
        }
    }

    /// The texture coordinates of vertex row `j` into `out`, the same values as
    /// [`GridMesh::uv`].
    pub fn uv_row(&self, j: usize, out: &mut [[f32; 2]]) {
        let (w, h) = (self.map.width(), self.map.height());
        let v = self.ys[j] as f32 / (h - 1) as f32;
        for (o, &x) in out.iter_mut().zip(&self.xs) {
            *o = [x as f32 / (w - 1) as f32, v];
        }
    }

    /// The triangles of quad row `j` into `out` (`2 (nx − 1)` of them): the two triangles of
    /// each [`GridMesh::quad`], in order.
    pub fn triangle_row(&self, j: usize, out: &mut [[u32; 3]]) {
        for (i, pair) in out.chunks_exact_mut(2).enumerate() {
            let [a, c, b, b2, c2, d] = self.quad(i, j);
            pair[0] = [a, c, b];
            pair[1] = [b2, c2, d];
        }
    }

    /// Texture coordinates of vertex `(i, j)`.
    #[inline]
    pub fn uv(&self, i: usize, j: usize) -> [f32; 2] {
        let (w, h) = (self.map.width(), self.map.height());
        [self.xs[i] as f32 / (w - 1) as f32, self.ys[j] as f32 / (h - 1) as f32]
    }

    /// sRGB colour of vertex `(i, j)`, if the options had a palette.
    #[inline]
    pub fn color(&self, i: usize, j: usize) -> Option<[u8; 3]> {
        let (p, fm) = self.colors.as_ref()?;
        let (x, y) = (self.xs[i], self.ys[j]);
        if let Some(rgb) = self.color_cache {
            let k = 3 * (y * self.map.width() + x);
            return Some([rgb[k], rgb[k + 1], rgb[k + 2]]);
        }
        Some(p.color_at(fm.fraction(self.at(x, y))))
    }

    /// The six indices of the quad between vertex rows `j` and `j + 1` and columns `i` and
    /// `i + 1`: two triangles, counter-clockwise seen from +Y.
    #[inline]
    pub fn quad(&self, i: usize, j: usize) -> [u32; 6] {
        let nx = self.xs.len();
        let a = (j * nx + i) as u32; // (x, y)
        let b = a + 1; // (x+1, y)
        let c = a + nx as u32; // (x, y+1)
        let d = c + 1; // (x+1, y+1)
        [a, c, b, b, c, d]
    }

    /// Axis-aligned bounds `(min, max)` of the positions (same values as [`Mesh::bounds`] of
    /// the collected mesh).
    pub fn bounds(&self) -> ([f32; 3], [f32; 3]) {
        // On 8 lanes at full resolution. A minimum does not depend on the order of its terms
        // but between 0 and −0, where either may come out (the compiler may swap the operands
        // of `min`), so a zero extreme is always +0 (as in `Mesh::bounds`).
        const LANES: usize = 8;
        let w = self.map.width();
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        let (mut los, mut his) = ([f32::INFINITY; LANES], [f32::NEG_INFINITY; LANES]);
        for &y in &self.ys {
            if self.xs.len() == w {
                let (blocks, rest) = self.map.as_slice()[y * w..(y + 1) * w].as_chunks::<LANES>();
                for block in blocks {
                    for k in 0..LANES {
                        let v = block[k] * self.hs;
                        (los[k], his[k]) = (los[k].min(v), his[k].max(v));
                    }
                }
                for &h in rest {
                    let v = h * self.hs;
                    (lo, hi) = (lo.min(v), hi.max(v));
                }
            } else {
                for &x in &self.xs {
                    let v = self.at(x, y) * self.hs;
                    (lo, hi) = (lo.min(v), hi.max(v));
                }
            }
        }
        for k in 0..LANES {
            (lo, hi) = (lo.min(los[k]), hi.max(his[k]));
        }
        (lo, hi) = (lo + 0.0, hi + 0.0);
        let (x1, z1) =
            (self.xs[self.xs.len() - 1] as f32 * self.cs, self.ys[self.ys.len() - 1] as f32 * self.cs);
        ([0.0, lo, 0.0], [x1, hi, z1])
    }

    /// Collects the whole mesh into vectors.
    pub fn to_mesh(&self) -> Mesh {
        let (nx, ny) = (self.nx(), self.ny());
        // One row of vertices per task; rows are concatenated in order, so the result does not
        // depend on the thread count.
        let mut mesh = Mesh {
            positions: vec![[0.0; 3]; nx * ny],
            normals: vec![[0.0; 3]; nx * ny],
            uvs: vec![[0.0; 2]; nx * ny],
            colors: if self.has_colors() { vec![[0; 3]; nx * ny] } else { Vec::new() },
            indices: vec![0; self.index_count()],
        };
        mesh.positions.par_chunks_mut(nx).enumerate().for_each(|(j, row)| {
            row.iter_mut().enumerate().for_each(|(i, v)| *v = self.position(i, j));
        });
        mesh.normals.par_chunks_mut(nx).enumerate().for_each(|(j, row)| {
            row.iter_mut().enumerate().for_each(|(i, v)| *v = self.normal(i, j));
        });
        mesh.uvs.par_chunks_mut(nx).enumerate().for_each(|(j, row)| {
            row.iter_mut().enumerate().for_each(|(i, v)| *v = self.uv(i, j));
        });
        mesh.colors.par_chunks_mut(nx).enumerate().for_each(|(j, row)| {
            row.iter_mut().enumerate().for_each(|(i, v)| *v = self.color(i, j).unwrap_or_default());
        });
        mesh.indices.par_chunks_mut(6 * (nx - 1)).enumerate().for_each(|(j, row)| {
            row.chunks_exact_mut(6).enumerate().for_each(|(i, q)| q.copy_from_slice(&self.quad(i, j)));
        });
        mesh
    }
}

impl Mesh {
    /// Builds the mesh of `map` (see the module docs). Errors on a non-finite height scale, a
    /// LOD above [`MAX_LOD`], a map narrower than 2 cells, or more than 2^32 vertices.
    pub fn from_heightmap(map: &Heightmap, opts: MeshOptions) -> Result<Self> {
        Ok(GridMesh::new(map, opts)?.to_mesh())
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// Axis-aligned bounds `(min, max)` of the positions, or `None` for an empty mesh; a zero
    /// bound is +0.
    pub fn bounds(&self) -> Option<([f32; 3], [f32; 3])> {
        let first = *self.positions.first()?;
        let (lo, hi) = self.positions.iter().fold((first, first), |(lo, hi), p| {
            (
                [lo[0].min(p[0]), lo[1].min(p[1]), lo[2].min(p[2])],
                [hi[0].max(p[0]), hi[1].max(p[1]), hi[2].max(p[2])],
            )
        });
        // A zero extreme is +0, whichever zero `min` kept (see `GridMesh::bounds`).
        Some((lo.map(|v| v + 0.0), hi.map(|v| v + 0.0)))
    }
}

/// The unit normal from central differences: `across` and `along` are the heights behind and
/// ahead of the vertex and their distance, along x and along z; `hs` scales the heights.
#[inline]
fn slope_normal(across: [f32; 3], along: [f32; 3], hs: f32) -> [f32; 3] {
    let dydx = (across[1] - across[0]) * hs / across[2];
    let dydz = (along[1] - along[0]) * hs / along[2];
    normalize([-dydx, 1.0, -dydz])
}

fn normalize(v: [f32; 3]) -> [f32; 3] {
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if len > 0.0 && len.is_finite() { [v[0] / len, v[1] / len, v[2] / len] } else { [0.0, 1.0, 0.0] }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `normal_row` gives `normal`'s bits for every vertex: at full resolution (its row loop)
    /// and at LOD 1 (the per-vertex path), on rough heights with flat patches, steep steps,
    /// negative zeros and an infinite cliff (the fallback normal), down to 3 × 2 maps.
    #[test]
    fn normal_row_equals_normal_bit_for_bit() {
        for (w, h) in [(37usize, 23usize), (3, 2), (4, 3)] {
            let map = Heightmap::from_fn(w, h, 2.5, |x, y| match (x * 7 + y * 13) % 17 {
                0 => -0.0,
                1 => 0.0,
                2 => 1.0e30,
                3 if x == 5 && y == 4 => f32::MAX,
                k => (k as f32 * 0.731).sin() * 40.0 + y as f32,
            })
            .unwrap();
            for lod in [0, 1] {
                let opts = MeshOptions { height_scale: 3.5, lod, ..Default::default() };
                let grid = GridMesh::new(&map, opts).unwrap();
                for j in 0..grid.ny() {
                    let mut row = vec![[9.0f32; 3]; grid.nx()];
                    grid.normal_row(j, &mut row);
                    for (i, got) in row.iter().enumerate() {
                        let want = grid.normal(i, j);
                        assert_eq!(
                            got.map(f32::to_bits),
                            want.map(f32::to_bits),
                            "{w}×{h} lod {lod} ({i}, {j})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn lod_keeps_last_row_and_column() {
        assert_eq!(lod_samples(5, 1), vec![0, 1, 2, 3, 4]);
        assert_eq!(lod_samples(5, 2), vec![0, 2, 4]);
        assert_eq!(lod_samples(6, 4), vec![0, 4, 5]);
        assert_eq!(lod_samples(2, 8), vec![0, 1]);
    }

    #[test]
    fn grid_size_matches_the_kept_samples() {
        for n in [2, 3, 5, 6, 17, 33, 100, 4097] {
            for lod in 0..6 {
                let (nx, ny) = GridMesh::grid_size(n, n + 3, lod);
                assert_eq!(nx, lod_samples(n, 1 << lod).len(), "n {n} lod {lod}");
                assert_eq!(ny, lod_samples(n + 3, 1 << lod).len(), "n {n} lod {lod}");
            }
        }
    }

    #[test]
    fn counts_winding_and_extent() {
        let map = Heightmap::from_fn(65, 33, 2.0, |x, y| (x + y) as f32 * 0.1).unwrap();
        for (lod, nx, ny) in [(0, 65, 33), (1, 33, 17), (2, 17, 9), (3, 9, 5)] {
            let m = Mesh::from_heightmap(&map, MeshOptions { lod, ..Default::default() }).unwrap();
            assert_eq!(m.vertex_count(), nx * ny, "lod {lod}");
            assert_eq!(m.triangle_count(), 2 * (nx - 1) * (ny - 1));
            let (lo, hi) = m.bounds().unwrap();
            assert_eq!((lo[0], lo[2], hi[0], hi[2]), (0.0, 0.0, 128.0, 64.0), "extent kept at lod {lod}");
            // Every triangle faces up (+Y) on this gentle ramp.
            for t in m.indices.chunks_exact(3) {
                let [a, b, c] = [t[0], t[1], t[2]].map(|i| m.positions[i as usize]);
                let (u, v) =
                    ([b[0] - a[0], b[1] - a[1], b[2] - a[2]], [c[0] - a[0], c[1] - a[1], c[2] - a[2]]);
                assert!(u[2] * v[0] - u[0] * v[2] > 0.0, "triangle {t:?} faces down");
            }
        }
    }

    /// The streamed mesh's bounds (on lanes at full resolution) are those of the collected
    /// mesh bit for bit, a zero extreme +0 in both, at widths around the lane count.
    #[test]
    fn grid_bounds_equal_the_collected_mesh_bounds() {
        let bits = |(lo, hi): ([f32; 3], [f32; 3])| (lo.map(f32::to_bits), hi.map(f32::to_bits));
        for w in [2, 7, 8, 9, 17, 33] {
            for (case, f) in [
                (0, (|x, y| ((x * 37 + y * 11) % 23) as f32 * 0.7 - 5.0) as fn(usize, usize) -> f32),
                // Zero and minus zero both at the extreme: the sign is the sequential fold's.
                (1, |x, y| if (x + y) % 3 == 0 { -0.0 } else { ((x + 2 * y) % 5) as f32 }),
                (2, |x, y| if (x * y) % 4 == 1 { 0.0 } else { -(((x + y) % 7) as f32) - 0.0 }),
                // One zero of each sign in different lanes, in the order that makes the lanes'
                // minimum (then maximum) differ from the fold's when the tie is not redone.
                (3, |x, y| match (x, y) {
                    (0, 4) => -0.0,
                    (7, 0) => 0.0,
                    _ => 1.0 + x as f32,
                }),
                (4, |x, y| match (x, y) {
                    (0, 4) => -0.0,
                    (7, 0) => 0.0,
                    _ => -1.0 - x as f32,
                }),
            ] {
                let map = Heightmap::from_fn(w, 5, 1.0, f).unwrap();
                for lod in 0..2 {
                    let opts = MeshOptions { lod, height_scale: 1.5, ..Default::default() };
                    let grid = GridMesh::new(&map, opts.clone()).unwrap();
                    let mesh = Mesh::from_heightmap(&map, opts).unwrap();
                    assert_eq!(
                        bits(grid.bounds()),
                        bits(mesh.bounds().unwrap()),
                        "w {w} case {case} lod {lod}"
                    );
                }
            }
        }
    }

    #[test]
    fn neighbouring_tiles_share_their_edge_at_every_lod() {
        // Two tiles of 37 columns that share column 36 of a 73-wide map: their meshes must
        // have the same edge heights at the same LOD, even though 36 is not a multiple of 8.
        let map = Heightmap::from_fn(73, 41, 1.0, |x, y| ((x * 13 + y * 7) % 17) as f32).unwrap();
        let left = map.crop(0, 0, 37, 41).unwrap();
        let right = map.crop(36, 0, 37, 41).unwrap();
        for lod in 0..4 {
            let opts = MeshOptions { lod, ..Default::default() };
            let (l, r) = (
                Mesh::from_heightmap(&left, opts.clone()).unwrap(),
                Mesh::from_heightmap(&right, opts).unwrap(),
            );
            let nx = lod_samples(37, 1 << lod).len();
            let left_edge: Vec<f32> = l.positions.chunks_exact(nx).map(|row| row[nx - 1][1]).collect();
            let right_edge: Vec<f32> = r.positions.chunks_exact(nx).map(|row| row[0][1]).collect();
            assert_eq!(left_edge, right_edge, "lod {lod}");
        }
    }

    /// A colour cache made with the mesh's own palette and mapping gives the colours the mesh
    /// computes itself at every vertex and level of detail; one made with another mapping (or
    /// of the wrong length) is ignored, so the colours never change.
    #[test]
    fn color_cache_gives_the_same_colours_or_is_ignored() {
        let map = Heightmap::from_fn(37, 23, 1.0, |x, y| ((x * 7 + y * 13) % 29) as f32 - 6.0).unwrap();
        let palette = Palette::named("classic").unwrap();
        let (lo, hi) = map.min_max().unwrap();
        let fm = palette.fraction_map(lo, hi, Some(0.0));
        let rgb = palette.colorize_mapped(&map, fm);
        let other = palette.colorize_mapped(&map, palette.fraction_map(lo - 5.0, hi, Some(0.0)));
        assert_ne!(rgb, other);
        for lod in 0..3 {
            let opts = MeshOptions {
                lod,
                colors: Some(palette.clone()),
                sea_level: Some(0.0),
                ..Default::default()
            };
            let own = GridMesh::new(&map, opts.clone()).unwrap();
            let cached = GridMesh::new(&map, opts.clone()).unwrap().with_color_cache(&rgb, &palette, fm);
            let wrong_fm = palette.fraction_map(lo - 5.0, hi, Some(0.0));
            let refused =
                GridMesh::new(&map, opts.clone()).unwrap().with_color_cache(&other, &palette, wrong_fm);
            let short = GridMesh::new(&map, opts).unwrap().with_color_cache(&other[3..], &palette, fm);
            assert!(
                cached.color_cache.is_some() && refused.color_cache.is_none() && short.color_cache.is_none()
            );
            for j in 0..own.ny() {
                for i in 0..own.nx() {
                    let want = own.color(i, j);
                    assert_eq!(cached.color(i, j), want, "lod {lod} ({i}, {j})");
                    assert_eq!(refused.color(i, j), want);
                    assert_eq!(short.color(i, j), want);
                }
            }
        }
    }

    #[test]
    fn normals_of_a_ramp_are_exact() {
        // y = 0.5 · x (cell size 1, scale 2) → slope 1 along x → normal (−1, 1, 0)/√2.
        let map = Heightmap::from_fn(5, 5, 1.0, |x, _| x as f32 * 0.5).unwrap();
        let m = Mesh::from_heightmap(&map, MeshOptions { height_scale: 2.0, ..Default::default() }).unwrap();
        let r = std::f32::consts::FRAC_1_SQRT_2;
        for n in &m.normals {
            assert!((n[0] + r).abs() < 1e-6 && (n[1] - r).abs() < 1e-6 && n[2].abs() < 1e-6, "{n:?}");
        }
        assert_eq!(m.uvs[24], [1.0, 1.0]);
    }

    #[test]
    fn bad_options_are_refused() {
        let map = Heightmap::new(4, 4, 1.0).unwrap();
        let nan = MeshOptions { height_scale: f32::NAN, ..Default::default() };
        assert!(Mesh::from_heightmap(&map, nan).is_err());
        assert!(Mesh::from_heightmap(&map, MeshOptions { lod: 17, ..Default::default() }).is_err());
        assert!(Mesh::from_heightmap(&Heightmap::new(1, 4, 1.0).unwrap(), MeshOptions::default()).is_err());
    }
}
