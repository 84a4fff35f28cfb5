//! Wavefront OBJ (always available): `v x y z`, `vt u v`, `vn x y z`, and `f a/a/a b/b/b c/c/c`
//! (1-based, counter-clockwise). Optionally an MTL file next to it (`mtllib`/`usemtl`) whose
//! material uses a colour map image as `map_Kd`. OBJ's texture origin is bottom-left, so `vt`
//! is written as `(u, 1 − v)` to show the same image as the glTF export. Vertex colours are not
//! written (OBJ has no standard for them); use the colour map or the `.glb` export.

use std::io::Write;
use std::path::Path;

use super::atomic;
use super::mesh_rows::MeshRows;
use crate::render::mesh::{GridMesh, Mesh};
use crate::{Error, Result};

/// Writes `mesh` as OBJ; if `texture` is given, also writes `<name>.mtl` beside it with one
/// material `terrain` whose diffuse map is that image path (written as given, so pass a path
/// relative to the OBJ's directory). Streamed as [`write_obj_grid`].
pub fn write_obj(path: impl AsRef<Path>, mesh: &Mesh, texture: Option<&str>) -> Result<()> {
    if mesh.normals.len() != mesh.positions.len() || mesh.uvs.len() != mesh.positions.len() {
        return Err(Error::param("mesh", "attribute arrays of different lengths", "a consistent mesh"));
    }
    if !mesh.indices.len().is_multiple_of(3)
        || mesh.indices.iter().any(|&i| i as usize >= mesh.positions.len())
    {
        return Err(Error::param("mesh", "bad index list", "whole triangles indexing existing vertices"));
    }
    write_obj_rows(path.as_ref(), mesh, texture)
}

/// Writes the MTL file beside `path` when there is a texture; returns the MTL file name.
fn write_mtl(path: &Path, texture: Option<&str>) -> Result<String> {
    let mtl_name = path.with_extension("mtl");
    if let Some(tex) = texture {
        let mtl = format!(
            "# terrasynth terrain material\nnewmtl terrain\nKa 1 1 1\nKd 1 1 1\nKs 0 0 0\nillum 1\nmap_Kd {tex}\n"
        );
        atomic::write_bytes_atomic(&mtl_name, mtl.as_bytes())?;
    }
    Ok(mtl_name.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
}

/// Writes the mesh of a heightmap as OBJ (and the MTL, as [`write_obj`]), streaming: the
/// lines are formatted band by band of rows (rows in parallel) and written as they come, so
/// the mesh is never held in memory. The bytes are exactly those of [`write_obj`] of
/// [`GridMesh::to_mesh`].
pub fn write_obj_grid(path: impl AsRef<Path>, grid: &GridMesh, texture: Option<&str>) -> Result<()> {
    write_obj_rows(path.as_ref(), grid, texture)
}

/// The one OBJ writer: header, `v`, `vt`, `vn` and `f` lines, each block formatted band by
/// band of rows and written as it comes.
fn write_obj_rows(path: &Path, mesh: &impl MeshRows, texture: Option<&str>) -> Result<()> {
    use std::fmt::Write as _;
    let mtl_file = write_mtl(path, texture)?;
    let text = |rows: usize, line: &(dyn Fn(usize, &mut String) + Sync), w: &mut dyn Write| {
        super::for_text_bands(rows, line, |band| w.write_all(band.as_bytes()).map_err(atomic::io_err(path)))
    };
    let (rows, n) = mesh.vertex_rows();
    atomic::write_atomic(path, |w| {
        let mut head = format!(
            "# terrasynth terrain: {} vertices, {} triangles\n",
            mesh.vertex_count(),
            mesh.triangle_count()
        );
        if texture.is_some() {
            let _ = writeln!(head, "mtllib {mtl_file}");
        }
        head.push_str("o terrain\n");
        w.write_all(head.as_bytes()).map_err(atomic::io_err(path))?;
        let positions = |j: usize, s: &mut String| {
            for i in 0..n {
                let p = mesh.position(i, j);
                let _ = writeln!(s, "v {} {} {}", p[0], p[1], p[2]);
            }
        };
        text(rows, &positions, w)?;
        let uvs = |j: usize, s: &mut String| {
            for i in 0..n {
                let t = mesh.uv(i, j);
                let _ = writeln!(s, "vt {} {}", t[0], 1.0 - t[1]);
            }
        };
        text(rows, &uvs, w)?;
        let normals = |j: usize, s: &mut String| {
            for i in 0..n {
                let v = mesh.normal(i, j);
                let _ = writeln!(s, "vn {} {} {}", v[0], v[1], v[2]);
            }
        };
        text(rows, &normals, w)?;
        if texture.is_some() {
            w.write_all(b"usemtl terrain\n").map_err(atomic::io_err(path))?;
        }
        let (rows, n) = mesh.triangle_rows();
        let faces = |j: usize, s: &mut String| {
            for i in 0..n {
                let [a, b, c] = mesh.triangle(i, j).map(|v| v + 1);
                let _ = writeln!(s, "f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}");
            }
        };
        text(rows, &faces, w)?;
        w.flush().map_err(atomic::io_err(path))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Heightmap;
    use crate::render::MeshOptions;

    #[test]
    fn streamed_obj_equals_the_in_memory_obj() {
        let dir = std::env::temp_dir().join(format!("ts-obj-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let map = Heightmap::from_fn(37, 150, 1.5, |x, y| ((x * 7 + y * 3) % 23) as f32 * 0.7 - 3.1).unwrap();
        for lod in [0, 2] {
            for texture in [None, Some("color.png")] {
                let grid = GridMesh::new(&map, MeshOptions { lod, height_scale: 2.0, ..Default::default() })
                    .unwrap();
                let (da, db) = (dir.join("a"), dir.join("b"));
                std::fs::create_dir_all(&da).unwrap();
                std::fs::create_dir_all(&db).unwrap();
                write_obj(da.join("m.obj"), &grid.to_mesh(), texture).unwrap();
                write_obj_grid(db.join("m.obj"), &grid, texture).unwrap();
                let read = |d: &Path| std::fs::read(d.join("m.obj")).unwrap();
                let (a, b) = (read(&da), read(&db));
                assert!(a == b, "lod {lod} texture {texture:?}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
