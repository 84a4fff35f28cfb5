//! Binary glTF 2.0 (`.glb`, feature `gltf`) from a [`Mesh`].
//!
//! One scene, one node `terrain`, one mesh with one triangle primitive: `POSITION` (f32 vec3,
//! with min/max), `NORMAL` (f32 vec3, unit), `TEXCOORD_0` (f32 vec2), `COLOR_0` (f32 vec3, linear
//! RGB converted from the mesh's sRGB colours, only if the mesh has colours), u32 indices; one
//! material `terrain` (white base colour, metallic 0, roughness 1, so vertex colours show as
//! they are). Units are metres, Y up (glTF convention). The JSON is written with `serde_json`
//! and read back with `gltf-json` ([`read_glb`]); the Khronos validator reports 0 errors on it
//! (tests/gltf_validator.rs).

use std::path::Path;

use serde_json::{Value, json};

use super::{atomic, format_err};
use crate::render::mesh::Mesh;
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
    if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
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

/// Appends `data` to `bin` as one buffer view and returns the view's JSON.
fn push_view(bin: &mut Vec<u8>, data: &[u8], target: u32) -> Value {
    let offset = bin.len();
    bin.extend_from_slice(data);
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    json!({"buffer": 0, "byteOffset": offset, "byteLength": data.len(), "target": target})
}

fn f32_bytes<const N: usize>(v: &[[f32; N]]) -> Vec<u8> {
    v.iter().flatten().flat_map(|x| x.to_le_bytes()).collect()
}

/// Serialises a mesh to GLB bytes (see the module docs).
pub fn glb_bytes(mesh: &Mesh) -> Result<Vec<u8>> {
    check_mesh(mesh)?;
    let mut bin = Vec::new();
    let mut views = Vec::new();
    let mut accessors = Vec::new();
    let n = mesh.positions.len();
    let (lo, hi) = mesh.bounds().expect("checked non-empty");

    views.push(push_view(&mut bin, &f32_bytes(&mesh.positions), ARRAY_BUFFER));
    accessors.push(
        json!({"bufferView": 0, "componentType": FLOAT, "count": n, "type": "VEC3", "min": lo, "max": hi}),
    );
    views.push(push_view(&mut bin, &f32_bytes(&mesh.normals), ARRAY_BUFFER));
    accessors.push(json!({"bufferView": 1, "componentType": FLOAT, "count": n, "type": "VEC3"}));
    views.push(push_view(&mut bin, &f32_bytes(&mesh.uvs), ARRAY_BUFFER));
    accessors.push(json!({"bufferView": 2, "componentType": FLOAT, "count": n, "type": "VEC2"}));
    let mut attributes = json!({"POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2});
    if !mesh.colors.is_empty() {
        let linear: Vec<[f32; 3]> = mesh.colors.iter().map(|c| c.map(srgb_to_linear)).collect();
        views.push(push_view(&mut bin, &f32_bytes(&linear), ARRAY_BUFFER));
        accessors.push(json!({"bufferView": 3, "componentType": FLOAT, "count": n, "type": "VEC3"}));
        attributes["COLOR_0"] = json!(3);
    }
    let idx: Vec<u8> = mesh.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    let idx_view = views.len();
    views.push(push_view(&mut bin, &idx, ELEMENT_ARRAY_BUFFER));
    let idx_accessor = accessors.len();
    accessors.push(json!({"bufferView": idx_view, "componentType": UNSIGNED_INT, "count": mesh.indices.len(), "type": "SCALAR"}));

    let doc = json!({
        "asset": {"version": "2.0", "generator": concat!("terrasynth ", env!("CARGO_PKG_VERSION"))},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0, "name": "terrain"}],
        "meshes": [{"name": "terrain", "primitives": [{"attributes": attributes, "indices": idx_accessor, "material": 0, "mode": 4}]}],
        "materials": [{"name": "terrain", "pbrMetallicRoughness": {"baseColorFactor": [1.0, 1.0, 1.0, 1.0], "metallicFactor": 0.0, "roughnessFactor": 1.0}}],
        "buffers": [{"byteLength": bin.len()}],
        "bufferViews": views,
        "accessors": accessors,
    });
    let mut json_bytes = serde_json::to_vec(&doc).expect("JSON values always serialise");
    while !json_bytes.len().is_multiple_of(4) {
        json_bytes.push(b' ');
    }
    let total = 12 + 8 + json_bytes.len() + 8 + bin.len();
    let total = u32::try_from(total)
        .map_err(|_| Error::param("mesh", format!("{total} bytes"), "a GLB under 4 GiB"))?;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&GLB_MAGIC.to_le_bytes());
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&(json_bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(&json_bytes);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
    out.extend_from_slice(&bin);
    Ok(out)
}

/// Writes a mesh as a `.glb` file (atomically).
pub fn write_glb(path: impl AsRef<Path>, mesh: &Mesh) -> Result<()> {
    let bytes = glb_bytes(mesh)?;
    atomic::write_bytes_atomic(path, &bytes)
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
