//! The mesh of a triangular terrain (`triangular` with `shape = "triangle"`, seed 001 §1.1.1
//! Fig. 5): only the cells inside the triangle ([`TriangleMask`]: `x ≤ y`), and the
//! triangular array's own finest triangles.

use super::mesh::{GridMesh, Mesh, MeshOptions};
use crate::generate::TriangleMask;
use crate::{Heightmap, Result};

/// The mesh of the triangle of `map`: the vertices of the cells with `x ≤ y` (positions,
/// normals, UVs and colours exactly as [`GridMesh`] makes them at LOD 0; `opts.lod` is
/// ignored) and, per pair of rows, the array's upward triangles `(x, y), (x, y+1), (x+1, y+1)`
/// and downward ones `(x, y), (x+1, y), (x+1, y+1)` (`x + 1 ≤ y`), counter-clockwise seen
/// from +Y like the grid mesh. Vertices are numbered row by row.
pub fn triangle_mesh(map: &Heightmap, opts: MeshOptions) -> Result<Mesh> {
    let grid = GridMesh::new(map, MeshOptions { lod: 0, ..opts })?;
    let (w, h) = (map.width(), map.height());
    // First vertex of each row: row y holds min(y + 1, w) vertices.
    let mut start = Vec::with_capacity(h + 1);
    let mut n = 0usize;
    for y in 0..h {
        start.push(n as u32);
        n += (y + 1).min(w);
    }
    let id = |x: usize, y: usize| start[y] + x as u32;
    let mut mesh = Mesh::default();
    for y in 0..h {
        for x in (0..w).filter(|&x| TriangleMask::inside(x, y)) {
            mesh.positions.push(grid.position(x, y));
            mesh.normals.push(grid.normal(x, y));
            mesh.uvs.push(grid.uv(x, y));
            if let Some(c) = grid.color(x, y) {
                mesh.colors.push(c);
            }
        }
    }
    for y in 0..h.saturating_sub(1) {
        for x in 0..w.saturating_sub(1).min(y + 1) {
            mesh.indices.extend([id(x, y), id(x, y + 1), id(x + 1, y + 1)]);
            if x < y {
                mesh.indices.extend([id(x, y), id(x + 1, y + 1), id(x + 1, y)]);
            }
        }
    }
    Ok(mesh)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 5×5 map: 1+2+3+4+5 = 15 vertices and 4² = 16 triangles (the triangle of side 4),
    /// every vertex inside (x ≤ y), every triangle counter-clockwise from +Y (the same sign as
    /// the grid mesh's first triangle), and the vertex heights are the map's.
    #[test]
    fn triangle_mesh_keeps_the_triangle_only() {
        let map = Heightmap::from_fn(5, 5, 2.0, |x, y| (x * 10 + y) as f32).unwrap();
        let m = triangle_mesh(&map, MeshOptions::default()).unwrap();
        assert_eq!(m.positions.len(), 15);
        assert_eq!(m.indices.len(), 16 * 3);
        for p in &m.positions {
            let (x, y) = ((p[0] / 2.0) as usize, (p[2] / 2.0) as usize);
            assert!(x <= y, "vertex ({x}, {y}) outside");
            assert_eq!(p[1], map[(x, y)]);
        }
        let area = |t: &[u32]| {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| m.positions[i as usize]);
            (b[0] - a[0]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[0] - a[0])
        };
        let grid = Mesh::from_heightmap(&map, MeshOptions::default()).unwrap();
        let g = {
            let [a, b, c] = [0, 1, 2].map(|k| grid.positions[grid.indices[k] as usize]);
            (b[0] - a[0]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[0] - a[0])
        };
        for t in m.indices.chunks(3) {
            assert!(area(t) * g > 0.0, "winding of {t:?}");
        }
    }
}
