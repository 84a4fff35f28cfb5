//! Wavefront OBJ (always available): `v x y z`, `vt u v`, `vn x y z`, and `f a/a/a b/b/b c/c/c`
//! (1-based, counter-clockwise). Optionally an MTL file next to it (`mtllib`/`usemtl`) whose
//! material uses a colour map image as `map_Kd`. OBJ's texture origin is bottom-left, so `vt`
//! is written as `(u, 1 − v)` to show the same image as the glTF export. Vertex colours are not
//! written (OBJ has no standard for them); use the colour map or the `.glb` export.

use std::io::Write;
use std::path::Path;

use super::atomic;
use crate::render::mesh::Mesh;
use crate::{Error, Result};

/// Writes `mesh` as OBJ; if `texture` is given, also writes `<name>.mtl` beside it with one
/// material `terrain` whose diffuse map is that image path (written as given, so pass a path
/// relative to the OBJ's directory).
pub fn write_obj(path: impl AsRef<Path>, mesh: &Mesh, texture: Option<&str>) -> Result<()> {
    let path = path.as_ref();
    if mesh.normals.len() != mesh.positions.len() || mesh.uvs.len() != mesh.positions.len() {
        return Err(Error::param("mesh", "attribute arrays of different lengths", "a consistent mesh"));
    }
    if !mesh.indices.len().is_multiple_of(3)
        || mesh.indices.iter().any(|&i| i as usize >= mesh.positions.len())
    {
        return Err(Error::param("mesh", "bad index list", "whole triangles indexing existing vertices"));
    }
    let mtl_name = path.with_extension("mtl");
    if let Some(tex) = texture {
        let mtl = format!(
            "# terrasynth terrain material\nnewmtl terrain\nKa 1 1 1\nKd 1 1 1\nKs 0 0 0\nillum 1\nmap_Kd {tex}\n"
        );
        atomic::write_bytes_atomic(&mtl_name, mtl.as_bytes())?;
    }
    let mtl_file = mtl_name.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    atomic::write_atomic(path, |w| {
        let body = || -> std::io::Result<()> {
            let mut w = std::io::BufWriter::new(w);
            writeln!(
                w,
                "# terrasynth terrain: {} vertices, {} triangles",
                mesh.vertex_count(),
                mesh.triangle_count()
            )?;
            if texture.is_some() {
                writeln!(w, "mtllib {mtl_file}")?;
            }
            writeln!(w, "o terrain")?;
            for p in &mesh.positions {
                writeln!(w, "v {} {} {}", p[0], p[1], p[2])?;
            }
            for t in &mesh.uvs {
                writeln!(w, "vt {} {}", t[0], 1.0 - t[1])?;
            }
            for n in &mesh.normals {
                writeln!(w, "vn {} {} {}", n[0], n[1], n[2])?;
            }
            if texture.is_some() {
                writeln!(w, "usemtl terrain")?;
            }
            for t in mesh.indices.chunks_exact(3) {
                let [a, b, c] = [t[0] + 1, t[1] + 1, t[2] + 1];
                writeln!(w, "f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}")?;
            }
            w.flush()
        };
        body().map_err(atomic::io_err(path))
    })
}
