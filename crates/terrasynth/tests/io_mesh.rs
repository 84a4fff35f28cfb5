//! OBJ/MTL export parsed back. (Timings of the render/analyze/io paths: `benches/io.rs`.)

use std::path::PathBuf;

use terrasynth::Heightmap;
use terrasynth::io;
use terrasynth::render::{Mesh, MeshOptions};

fn out_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("io-mesh");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn bumps(n: usize) -> Heightmap {
    Heightmap::from_fn(n, n, 2.0, |x, y| ((x as f32 * 0.21).sin() + (y as f32 * 0.13).cos()) * 10.0).unwrap()
}

#[test]
fn obj_parses_back_with_matching_counts_and_values() {
    let map = bumps(33);
    let mesh =
        Mesh::from_heightmap(&map, MeshOptions { lod: 1, height_scale: 3.0, ..Default::default() }).unwrap();
    let dir = out_dir();
    let path = dir.join("terrain.obj");
    io::obj::write_obj(&path, &mesh, Some("terrain_colour.png")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let count = |prefix: &str| text.lines().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(count("v "), 17 * 17);
    assert_eq!(count("vt "), 17 * 17);
    assert_eq!(count("vn "), 17 * 17);
    assert_eq!(count("f "), 2 * 16 * 16);
    assert!(text.contains("mtllib terrain.mtl") && text.contains("usemtl terrain"));
    // First vertex and first face, 1-based, same triangle as the mesh.
    let v: Vec<f32> = text.lines().find(|l| l.starts_with("v ")).unwrap()[2..]
        .split(' ')
        .map(|t| t.parse().unwrap())
        .collect();
    assert_eq!(v, mesh.positions[0].to_vec());
    let f = text.lines().find(|l| l.starts_with("f ")).unwrap();
    let [a, b, c] = [mesh.indices[0] + 1, mesh.indices[1] + 1, mesh.indices[2] + 1];
    assert_eq!(f, format!("f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}"));
    // vt flips v (OBJ's origin is bottom-left): the first vertex (top-left of the map) has v = 1.
    assert_eq!(text.lines().find(|l| l.starts_with("vt ")).unwrap(), "vt 0 1");
    let mtl = std::fs::read_to_string(dir.join("terrain.mtl")).unwrap();
    assert!(mtl.contains("newmtl terrain") && mtl.contains("map_Kd terrain_colour.png"));
    // A broken mesh is refused.
    let mut bad = mesh.clone();
    bad.indices.push(0);
    assert!(io::obj::write_obj(dir.join("bad.obj"), &bad, None).is_err());
    assert!(!dir.join("bad.obj").exists());
}
