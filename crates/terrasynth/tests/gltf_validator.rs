//! The `.glb` export passes the Khronos glTF validator (npm `gltf-validator`, installed into
//! tools/node_modules by scripts/setup.sh) with 0 errors, and reads back with `gltf-json`.
#![cfg(feature = "gltf")]

use std::path::{Path, PathBuf};
use std::process::Command;

use terrasynth::Heightmap;
use terrasynth::io::gltf::{read_glb, write_glb};
use terrasynth::render::{Mesh, MeshOptions, Palette};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn hills(n: usize) -> Heightmap {
    let c = n as f32;
    Heightmap::from_fn(n, n, 1.0, |x, y| {
        let g = |cx: f32, cy: f32, r: f32, a: f32| {
            let (dx, dy) = (x as f32 - cx * c, y as f32 - cy * c);
            a * (-(dx * dx + dy * dy) / (2.0 * r * r * c * c)).exp()
        };
        g(0.3, 0.4, 0.15, 20.0) + g(0.7, 0.6, 0.2, 14.0) + g(0.5, 0.2, 0.08, 8.0) - 3.0
    })
    .unwrap()
}

/// Runs the validator on `file` and returns its JSON report.
fn validate(file: &Path) -> serde_json::Value {
    let module = repo_root().join("tools/node_modules/gltf-validator");
    assert!(
        module.join("package.json").is_file(),
        "the Khronos glTF validator is missing ({}): run scripts/setup.sh (needs npm)",
        module.display()
    );
    let script = "const v = require(process.argv[1]); const fs = require('fs');\
                  v.validateBytes(new Uint8Array(fs.readFileSync(process.argv[2])))\
                  .then(r => console.log(JSON.stringify(r)))\
                  .catch(e => { console.error(String(e)); process.exit(1); });";
    let out = Command::new("node")
        .arg("-e")
        .arg(script)
        .arg(&module)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run `node` ({e}): install Node.js and run scripts/setup.sh"));
    assert!(out.status.success(), "validator failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("validator prints a JSON report")
}

#[test]
fn glb_passes_the_khronos_validator_at_several_lods() {
    let map = hills(65);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gltf");
    std::fs::create_dir_all(&dir).unwrap();
    for lod in [0u32, 1, 2] {
        let opts = MeshOptions {
            height_scale: 1.0,
            lod,
            colors: Some(Palette::named("classic").unwrap()),
            sea_level: Some(0.0),
        };
        let mesh = Mesh::from_heightmap(&map, opts).unwrap();
        let path = dir.join(format!("hills_lod{lod}.glb"));
        write_glb(&path, &mesh).unwrap();
        let report = validate(&path);
        let issues = &report["issues"];
        let (errors, warnings) =
            (issues["numErrors"].as_u64().unwrap(), issues["numWarnings"].as_u64().unwrap());
        if warnings > 0 {
            eprintln!("lod {lod}: {warnings} validator warnings: {}", issues["messages"]);
        }
        assert_eq!(errors, 0, "lod {lod}: validator errors: {}", issues["messages"]);
        let side = [65, 33, 17][lod as usize];
        assert_eq!(report["info"]["totalVertexCount"].as_u64(), Some(side * side), "lod {lod}");
        assert_eq!(report["info"]["totalTriangleCount"].as_u64(), Some(2 * (side - 1) * (side - 1)));
    }
}

#[test]
fn glb_reads_back_with_gltf_json() {
    let map = hills(33);
    let mesh = Mesh::from_heightmap(&map, MeshOptions { lod: 1, ..Default::default() }).unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gltf");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("readback.glb");
    write_glb(&path, &mesh).unwrap();
    let (root, bin) = read_glb(&path).unwrap();
    assert_eq!(root.meshes.len(), 1);
    assert_eq!(root.nodes.len(), 1);
    assert_eq!(root.materials.len(), 1);
    // POSITION, NORMAL, TEXCOORD_0 (no colours here), indices.
    assert_eq!(root.accessors.len(), 4);
    assert_eq!(root.accessors[0].count.0, 17 * 17);
    assert_eq!(root.accessors[3].count.0, (2 * 16 * 16 * 3) as u64);
    // The position bytes are the mesh's positions, little-endian.
    let first: Vec<f32> =
        bin[..12].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    assert_eq!(first, mesh.positions[0].to_vec());
    assert_eq!(bin.len() % 4, 0);
    // A corrupt file is a format error.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(dir.join("cut.glb"), &bytes[..bytes.len() / 2]).unwrap();
    assert!(matches!(read_glb(dir.join("cut.glb")), Err(terrasynth::Error::Format { .. })));
}
