//! Binary glTF 2.0 (`.glb`, feature `gltf`) from a [`Mesh`].
//!
//! One scene, one node `terrain`, one mesh with one triangle primitive: `POSITION` (f32 vec3,
//! with min/max), `NORMAL` (f32 vec3, unit), `TEXCOORD_0` (f32 vec2), `COLOR_0` (f32 vec3, linear
//! RGB converted from the mesh's sRGB colours, only if the mesh has colours), u32 indices; one
//! material `terrain` (white base colour, metallic 0, roughness 1, so vertex colours show as
//! they are). Units are metres, Y up (glTF convention). The JSON is written with `serde_json`
//! and read back with `gltf-json` ([`read_glb`]); the Khronos validator reports 0 errors on it
//! (tests/gltf_validator.rs).
//!
//! UVs and colours stay f32 although core glTF 2.0 allows normalised 16-bit integers for them
//! (36 bytes a vertex instead of 44: 63 MB instead of 71 for a 1025² map): Blender 3.4 imports
//! those right, but Godot 3.2.3's importer reads the integers without scaling them (UVs up to
//! 65 504, every colour white; `scripts/engine-import.sh` checks both, session 50).

use std::path::Path;

use serde_json::{Value, json};

use super::mesh_rows::MeshRows;
use super::{atomic, format_err};
use crate::render::mesh::{GridMesh, Mesh};
use crate::{Error, Result};

const GLB_MAGIC: u32 = 0x4654_6C67; // "glTF"
const CHUNK_JSON: u32 = 0x4E4F_534A; // "JSON"
const CHUNK_BIN: u32 = 0x004E_4942; // "BIN\0"
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const FLOAT: u32 = 5126;
const UNSIGNED_INT: u32 = 5125;

/// sRGB (0..=255) to linear RGB in [0, 1] (IEC 61966-2-1 transfer function).
pub fn srgb_to_linear(c: u8) -> f32 {
    let c = c as f32 / 255.0;
    // detmath: the mesh's colours are the same bytes on every platform.
    if c <= 0.04045 { c / 12.92 } else { terrasynth_noise::detmath::powf((c + 0.055) / 1.055, 2.4) }
}

fn check_mesh(mesh: &Mesh) -> Result<()> {
    let n = mesh.positions.len();
    let bad = |what: &str| Error::param("mesh", what.to_string(), "a consistent mesh");
    if n == 0 || mesh.indices.is_empty() || !mesh.indices.len().is_multiple_of(3) {
        return Err(bad("no vertices, or an index count that is not a multiple of 3"));
    }
    if mesh.normals.len() != n || mesh.uvs.len() != n || !(mesh.colors.is_empty() || mesh.colors.len() == n) {
        return Err(bad("attribute arrays of different lengths"));
    }
    if mesh.indices.iter().any(|&i| i as usize >= n) {
        return Err(bad("an index past the last vertex"));
    }
    if mesh.positions.iter().flatten().chain(mesh.normals.iter().flatten()).any(|v| !v.is_finite()) {
        return Err(bad("a non-finite position or normal"));
    }
    Ok(())
}

/// What the glTF JSON needs to know about a mesh: counts, bounds and whether it has colours.
struct Shape {
    vertices: usize,
    indices: usize,
    colors: bool,
    lo: [f32; 3],
    hi: [f32; 3],
}

impl Shape {
    /// Byte length of each buffer view, in BIN order: positions, normals, UVs, [colours],
    /// indices. Every length is a multiple of 4, so no view needs padding.
    fn view_lengths(&self) -> Vec<usize> {
        let n = self.vertices;
        let mut v = vec![n * 12, n * 12, n * 8];
        if self.colors {
            v.push(n * 12);
        }
        v.push(self.indices * 4);
        v
    }

    /// The GLB header, JSON chunk header and JSON (padded with spaces to 4 bytes) and the BIN
    /// chunk header: everything before the BIN data. Errors if the file would reach 4 GiB.
    fn head(&self) -> Result<Vec<u8>> {
        let lengths = self.view_lengths();
        let mut offset = 0usize;
        let views: Vec<Value> = lengths
            .iter()
            .enumerate()
            .map(|(k, &len)| {
                let target = if k + 1 == lengths.len() { ELEMENT_ARRAY_BUFFER } else { ARRAY_BUFFER };
                let view = json!({"buffer": 0, "byteOffset": offset, "byteLength": len, "target": target});
                offset += len;
                view
            })
            .collect();
        let bin_len = offset;
        let n = self.vertices;
        let (lo, hi) = (self.lo, self.hi);
        let mut accessors = vec![
            json!({"bufferView": 0, "componentType": FLOAT, "count": n, "type": "VEC3", "min": lo, "max": hi}),
            json!({"bufferView": 1, "componentType": FLOAT, "count": n, "type": "VEC3"}),
            json!({"bufferView": 2, "componentType": FLOAT, "count": n, "type": "VEC2"}),
        ];
        let mut attributes = json!({"POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2});
        if self.colors {
            accessors.push(json!({"bufferView": 3, "componentType": FLOAT, "count": n, "type": "VEC3"}));
            attributes["COLOR_0"] = json!(3);
        }
        let idx_view = views.len() - 1;
        let idx_accessor = accessors.len();
        accessors.push(json!({"bufferView": idx_view, "componentType": UNSIGNED_INT, "count": self.indices, "type": "SCALAR"}));

        let doc = json!({
            "asset": {"version": "2.0", "generator": concat!("terrasynth ", env!("CARGO_PKG_VERSION"))},
            "scene": 0,
            "scenes": [{"nodes": [0]}],
            "nodes": [{"mesh": 0, "name": "terrain"}],
            "meshes": [{"name": "terrain", "primitives": [{"attributes": attributes, "indices": idx_accessor, "material": 0, "mode": 4}]}],
            "materials": [{"name": "terrain", "pbrMetallicRoughness": {"baseColorFactor": [1.0, 1.0, 1.0, 1.0], "metallicFactor": 0.0, "roughnessFactor": 1.0}}],
            "buffers": [{"byteLength": bin_len}],
            "bufferViews": views,
            "accessors": accessors,
        });
        let mut json_bytes = serde_json::to_vec(&doc).expect("JSON values always serialise");
        while !json_bytes.len().is_multiple_of(4) {
            json_bytes.push(b' ');
        }
        let total = 12 + 8 + json_bytes.len() + 8 + bin_len;
        let total = u32::try_from(total)
            .map_err(|_| Error::param("mesh", format!("{total} bytes"), "a GLB under 4 GiB"))?;
        let mut out = Vec::with_capacity(28 + json_bytes.len());
        out.extend_from_slice(&GLB_MAGIC.to_le_bytes());
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&total.to_le_bytes());
        out.extend_from_slice(&(json_bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
        out.extend_from_slice(&json_bytes);
        out.extend_from_slice(&(bin_len as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        Ok(out)
    }
}

/// Length in bytes of the BIN chunk of a mesh with `vertices` vertices and `indices` indices
/// (12 + 12 + 8 [+ 12 with colours] bytes per vertex, 4 per index). The whole GLB is this
/// plus about 1.5 KB of header and JSON, and must stay under [`GLB_MAX_BYTES`].
pub fn glb_bin_len(vertices: u64, indices: u64, colors: bool) -> u64 {
    vertices * if colors { 44 } else { 32 } + indices * 4
}

/// Largest GLB file: its length field is a u32.
pub const GLB_MAX_BYTES: u64 = u32::MAX as u64;

/// Margin for the GLB header and JSON when checking the 4 GiB limit before writing.
const GLB_HEAD_MARGIN: u64 = 64 << 10;

/// Bytes of the GLB of a `width`×`height` heightmap mesh at `lod` (with vertex colours), plus
/// a margin for the header and JSON.
fn grid_glb_bytes(width: usize, height: usize, lod: u32) -> u64 {
    let (nx, ny) = GridMesh::grid_size(width, height, lod);
    let (v, i) = ((nx * ny) as u64, (6 * (nx - 1) * (ny - 1)) as u64);
    glb_bin_len(v, i, true) + GLB_HEAD_MARGIN
}

/// Checks before anything is written that the `mesh.glb` of a `width`×`height` map at `lod`
/// stays under glTF's 4 GiB ([`GLB_MAX_BYTES`]); the error names the smallest LOD that fits.
/// Maps under 2 cells on a side have no mesh and pass.
pub fn check_grid_glb_size(width: usize, height: usize, lod: u32) -> Result<()> {
    if width < 2 || height < 2 {
        return Ok(());
    }
    let bytes = grid_glb_bytes(width, height, lod);
    if bytes > GLB_MAX_BYTES {
        return Err(Error::GlbTooLarge {
            width,
            height,
            lod,
            gib: bytes as f64 / (1u64 << 30) as f64,
            min_lod: smallest_glb_lod(width, height),
        });
    }
    Ok(())
}

/// The smallest mesh LOD whose GLB fits in 4 GiB.
pub fn smallest_glb_lod(width: usize, height: usize) -> u32 {
    (0..=crate::render::mesh::MAX_LOD)
        .find(|&lod| grid_glb_bytes(width, height, lod) <= GLB_MAX_BYTES)
        .unwrap_or(crate::render::mesh::MAX_LOD)
}

/// Serialises a mesh to GLB bytes (see the module docs): [`write_glb`]'s writer, into memory.
pub fn glb_bytes(mesh: &Mesh) -> Result<Vec<u8>> {
    check_mesh(mesh)?;
    let mut out = Vec::new();
    write_glb_rows(&mut out, Path::new("(GLB in memory)"), mesh)?;
    Ok(out)
}

/// [`srgb_to_linear`] of every byte value.
fn linear_lut() -> [f32; 256] {
    std::array::from_fn(|v| srgb_to_linear(v as u8))
}

/// Writes a mesh as a `.glb` file (atomically), streamed as [`write_glb_grid`].
pub fn write_glb(path: impl AsRef<Path>, mesh: &Mesh) -> Result<()> {
    check_mesh(mesh)?;
    let path = path.as_ref();
    atomic::write_atomic(path, |w| write_glb_rows(w, path, mesh))
}

/// Writes the mesh of a heightmap as a `.glb` file (atomically), streaming: the vertex
/// attributes and indices are computed band by band of rows (rows in parallel) and written as
/// they come, so only a few MB are held besides the heights. The bytes are exactly those of
/// [`write_glb`] of [`GridMesh::to_mesh`]. Errors as [`glb_bytes`] (a non-finite position or
/// normal, a file of 4 GiB or more); a failed write leaves no file.
pub fn write_glb_grid(path: impl AsRef<Path>, grid: &GridMesh) -> Result<()> {
    let path = path.as_ref();
    atomic::write_atomic(path, |w| write_glb_rows(w, path, grid))
}

/// The one GLB writer: header and JSON, then the BIN chunk (positions, normals, UVs, linear
/// colours, indices), each computed band by band of rows and written to `w` as it comes.
/// `path` names the output in errors.
fn write_glb_rows(w: &mut dyn std::io::Write, path: &Path, mesh: &impl MeshRows) -> Result<()> {
    let (lo, hi) = mesh.bounds();
    let shape = Shape {
        vertices: mesh.vertex_count(),
        indices: 3 * mesh.triangle_count(),
        colors: mesh.has_colors(),
        lo,
        hi,
    };
    let head = shape.head()?;
    let bad = || Error::param("mesh", "a non-finite position or normal", "a consistent mesh");
    let (rows, n) = mesh.vertex_rows();
    w.write_all(&head).map_err(atomic::io_err(path))?;
    // Each row's values are computed straight into the row's bytes (the mesh's row methods,
    // without a call per vertex), then made little-endian.
    let ok =
        super::write_row_bands(w, path, rows, n * 12, |j, row| fill_f32s(row, |v| mesh.position_row(j, v)))?;
    let ok = ok
        && super::write_row_bands(w, path, rows, n * 12, |j, row| fill_f32s(row, |v| mesh.normal_row(j, v)))?;
    if !ok {
        return Err(bad());
    }
    super::write_row_bands(w, path, rows, n * 8, |j, row| fill_f32s(row, |v| mesh.uv_row(j, v)))?;
    if shape.colors {
        let lut = linear_lut();
        super::write_row_bands(w, path, rows, n * 12, |j, row| {
            fill_f32s(row, |colors: &mut [[f32; 3]]| {
                for (i, c) in colors.iter_mut().enumerate() {
                    *c = mesh.color(i, j).map(|v| lut[v as usize]);
                }
            })
        })?;
    }
    let (rows, n) = mesh.triangle_rows();
    super::write_row_bands(w, path, rows, n * 12, |j, row| {
        let (triangles, _) = bytemuck::cast_slice_mut::<u8, u32>(row).as_chunks_mut::<3>();
        mesh.triangle_row(j, triangles);
        if cfg!(target_endian = "big") {
            for v in triangles.as_flattened_mut() {
                *v = v.to_le();
            }
        }
        true
    })?;
    Ok(())
}

/// Fills `row`, the bytes of a row of f32 vectors (4-byte aligned: see [`super::for_row_bands`]),
/// with `fill` writing the values in place, then makes them little-endian; false if one is not
/// finite.
fn fill_f32s<const N: usize>(row: &mut [u8], fill: impl FnOnce(&mut [[f32; N]])) -> bool {
    let (values, _) = bytemuck::cast_slice_mut::<u8, f32>(row).as_chunks_mut::<N>();
    fill(values);
    let values = values.as_flattened_mut();
    if cfg!(target_endian = "big") {
        for x in values.iter_mut() {
            *x = f32::from_bits(x.to_bits().to_le());
        }
    }
    values.iter().all(|x| f32::from_bits(u32::from_le(x.to_bits())).is_finite())
}

/// Reads a `.glb`: the glTF JSON parsed by `gltf-json` and the BIN chunk. Errors
/// ([`Error::Format`]) on a bad header, truncated chunks or invalid JSON.
pub fn read_glb(path: impl AsRef<Path>) -> Result<(gltf_json::Root, Vec<u8>)> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(atomic::io_err(path))?;
    let u32_at = |o: usize| -> Result<u32> {
        bytes
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| format_err(path, "truncated GLB"))
    };
    if u32_at(0)? != GLB_MAGIC || u32_at(4)? != 2 {
        return Err(format_err(path, "not a glTF 2.0 binary file"));
    }
    if u32_at(8)? as usize != bytes.len() {
        return Err(format_err(path, "GLB length field does not match the file size"));
    }
    let json_len = u32_at(12)? as usize;
    if u32_at(16)? != CHUNK_JSON {
        return Err(format_err(path, "first GLB chunk is not JSON"));
    }
    let json = bytes.get(20..20 + json_len).ok_or_else(|| format_err(path, "truncated JSON chunk"))?;
    let root =
        gltf_json::Root::from_slice(json).map_err(|e| format_err(path, format!("invalid glTF JSON: {e}")))?;
    let bin_at = 20 + json_len;
    let bin = if bin_at < bytes.len() {
        let len = u32_at(bin_at)? as usize;
        if u32_at(bin_at + 4)? != CHUNK_BIN {
            return Err(format_err(path, "second GLB chunk is not BIN"));
        }
        bytes
            .get(bin_at + 8..bin_at + 8 + len)
            .ok_or_else(|| format_err(path, "truncated BIN chunk"))?
            .to_vec()
    } else {
        Vec::new()
    };
    Ok((root, bin))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Heightmap;
    use crate::render::{MeshOptions, Palette};

    fn bumpy(w: usize, h: usize) -> Heightmap {
        Heightmap::from_fn(w, h, 2.5, |x, y| {
            ((x as f32 * 0.37).sin() * 9.0 + (y as f32 * 0.21).cos() * 5.0) - 2.0
        })
        .unwrap()
    }

    #[test]
    fn streamed_glb_equals_the_in_memory_glb() {
        let dir = std::env::temp_dir().join(format!("ts-glb-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let palette = Palette::named("classic").unwrap();
        for (w, h) in [(2, 2), (37, 23), (65, 65), (130, 9)] {
            let map = bumpy(w, h);
            for lod in [0, 1, 3] {
                for colors in [None, Some(palette.clone())] {
                    let opts =
                        MeshOptions { height_scale: 1.5, lod, colors: colors.clone(), sea_level: Some(0.0) };
                    let grid = GridMesh::new(&map, opts).unwrap();
                    let expected = glb_bytes(&grid.to_mesh()).unwrap();
                    let path = dir.join("s.glb");
                    write_glb_grid(&path, &grid).unwrap();
                    let got = std::fs::read(&path).unwrap();
                    assert!(got == expected, "{w}x{h} lod {lod} colours {}", colors.is_some());
                    // The head's BIN length is the one `glb_bin_len` predicts.
                    let bin =
                        glb_bin_len(grid.vertex_count() as u64, grid.index_count() as u64, colors.is_some());
                    let json_len = u32::from_le_bytes(got[12..16].try_into().unwrap()) as u64;
                    assert_eq!(got.len() as u64, 28 + json_len + bin);
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn streamed_glb_is_identical_on_1_and_2_threads() {
        let dir = std::env::temp_dir().join(format!("ts-glb-threads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let map = bumpy(97, 61);
        let opts = MeshOptions { colors: Some(Palette::named("classic").unwrap()), ..Default::default() };
        let grid = GridMesh::new(&map, opts).unwrap();
        let files: Vec<Vec<u8>> = [1, 2]
            .iter()
            .map(|&n| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
                let path = dir.join(format!("t{n}.glb"));
                pool.install(|| write_glb_grid(&path, &grid)).unwrap();
                std::fs::read(&path).unwrap()
            })
            .collect();
        assert!(files[0] == files[1]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn non_finite_heights_are_refused_and_leave_no_file() {
        let dir = std::env::temp_dir().join(format!("ts-glb-nan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut map = bumpy(9, 9);
        map[(4, 4)] = f32::NAN;
        let grid = GridMesh::new(&map, MeshOptions::default()).unwrap();
        let path = dir.join("nan.glb");
        assert!(write_glb_grid(&path, &grid).is_err());
        assert!(std::fs::read_dir(&dir).unwrap().next().is_none(), "a file was left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
