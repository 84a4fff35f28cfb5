//! [`MeshRows`]: the one view the GLB and OBJ writers read a mesh through, row by row (rows in
//! parallel, written in order), so a heightmap's [`GridMesh`] is streamed without being held
//! in memory and a general [`Mesh`] goes through the same code and gives the same bytes as the
//! [`GridMesh::to_mesh`] of that grid.

use crate::render::mesh::{GridMesh, Mesh};

/// A mesh as rows of vertices and rows of triangles.
#[cfg_attr(not(feature = "gltf"), allow(dead_code))]
pub(crate) trait MeshRows: Sync {
    /// Number of vertex rows and vertices per row (row-major vertex numbering).
    fn vertex_rows(&self) -> (usize, usize);
    /// Position of vertex `i` of row `j`, metres.
    fn position(&self, i: usize, j: usize) -> [f32; 3];
    /// Unit normal of vertex `i` of row `j`.
    fn normal(&self, i: usize, j: usize) -> [f32; 3];
    /// The unit normals of row `j` into `out` (one per vertex of the row).
    fn normal_row(&self, j: usize, out: &mut [[f32; 3]]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.normal(i, j);
        }
    }
    /// The positions of row `j` into `out` (one per vertex of the row).
    fn position_row(&self, j: usize, out: &mut [[f32; 3]]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.position(i, j);
        }
    }
    /// Texture coordinate of vertex `i` of row `j` (origin top-left).
    fn uv(&self, i: usize, j: usize) -> [f32; 2];
    /// The texture coordinates of row `j` into `out`.
    fn uv_row(&self, j: usize, out: &mut [[f32; 2]]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.uv(i, j);
        }
    }
    /// Whether the vertices have colours.
    fn has_colors(&self) -> bool;
    /// sRGB colour of vertex `i` of row `j` (black when the mesh has none).
    fn color(&self, i: usize, j: usize) -> [u8; 3];
    /// Number of triangle rows and triangles per row.
    fn triangle_rows(&self) -> (usize, usize);
    /// The 0-based vertex indices of triangle `i` of row `j` (counter-clockwise).
    fn triangle(&self, i: usize, j: usize) -> [u32; 3];
    /// The triangles of row `j` into `out` (one per triangle of the row).
    fn triangle_row(&self, j: usize, out: &mut [[u32; 3]]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.triangle(i, j);
        }
    }
    /// Component-wise min and max of the positions, in vertex order.
    fn bounds(&self) -> ([f32; 3], [f32; 3]);

    /// Vertex count.
    fn vertex_count(&self) -> usize {
        let (rows, per_row) = self.vertex_rows();
        rows * per_row
    }

    /// Triangle count.
    fn triangle_count(&self) -> usize {
        let (rows, per_row) = self.triangle_rows();
        rows * per_row
    }
}

/// A grid mesh: one row of the grid per vertex row; the two triangles of each quad of a grid
/// row, in [`GridMesh::quad`] order, per triangle row.
impl MeshRows for GridMesh<'_> {
    fn vertex_rows(&self) -> (usize, usize) {
        (self.ny(), self.nx())
    }
    fn position(&self, i: usize, j: usize) -> [f32; 3] {
        GridMesh::position(self, i, j)
    }
    fn normal(&self, i: usize, j: usize) -> [f32; 3] {
        GridMesh::normal(self, i, j)
    }
    fn normal_row(&self, j: usize, out: &mut [[f32; 3]]) {
        GridMesh::normal_row(self, j, out)
    }
    fn position_row(&self, j: usize, out: &mut [[f32; 3]]) {
        GridMesh::position_row(self, j, out)
    }
    fn uv(&self, i: usize, j: usize) -> [f32; 2] {
        GridMesh::uv(self, i, j)
    }
    fn uv_row(&self, j: usize, out: &mut [[f32; 2]]) {
        GridMesh::uv_row(self, j, out)
    }
    fn has_colors(&self) -> bool {
        GridMesh::has_colors(self)
    }
    fn color(&self, i: usize, j: usize) -> [u8; 3] {
        GridMesh::color(self, i, j).unwrap_or_default()
    }
    fn triangle_rows(&self) -> (usize, usize) {
        (self.ny() - 1, 2 * (self.nx() - 1))
    }
    fn triangle(&self, i: usize, j: usize) -> [u32; 3] {
        let q = self.quad(i / 2, j);
        let k = 3 * (i % 2);
        [q[k], q[k + 1], q[k + 2]]
    }
    fn triangle_row(&self, j: usize, out: &mut [[u32; 3]]) {
        GridMesh::triangle_row(self, j, out)
    }
    fn bounds(&self) -> ([f32; 3], [f32; 3]) {
        GridMesh::bounds(self)
    }
}

/// Any mesh: one vertex per vertex row, one triangle per triangle row. The caller checks that
/// the attribute arrays have one entry per vertex and that every index exists.
impl MeshRows for Mesh {
    fn vertex_rows(&self) -> (usize, usize) {
        (self.positions.len(), 1)
    }
    fn position(&self, _: usize, j: usize) -> [f32; 3] {
        self.positions[j]
    }
    fn normal(&self, _: usize, j: usize) -> [f32; 3] {
        self.normals[j]
    }
    fn uv(&self, _: usize, j: usize) -> [f32; 2] {
        self.uvs[j]
    }
    fn has_colors(&self) -> bool {
        !self.colors.is_empty()
    }
    fn color(&self, _: usize, j: usize) -> [u8; 3] {
        self.colors.get(j).copied().unwrap_or_default()
    }
    fn triangle_rows(&self) -> (usize, usize) {
        (self.indices.len() / 3, 1)
    }
    fn triangle(&self, _: usize, j: usize) -> [u32; 3] {
        [self.indices[3 * j], self.indices[3 * j + 1], self.indices[3 * j + 2]]
    }
    fn bounds(&self) -> ([f32; 3], [f32; 3]) {
        Mesh::bounds(self).unwrap_or_default()
    }
}
