//! Golden checksums of the bulk fill's output bits, one per spec for every level (the SIMD
//! kernels and the portable scalar level give the same bits, on every platform), over regions that take the permute path, the
//! gather path (spacing above one lattice cell) and rows wider than the lattice path's column
//! tiles. Any change to a kernel's arithmetic, its operation order or the tiling shows up here
//! (the point path has its own goldens in `golden.rs`). On a deliberate change, run with
//! `GOLDEN_PRINT=1` and `--nocapture`, check why the bits moved, and paste the new values.

use terrasynth_noise::{Noise, NoiseSpec, Region};

/// The specs: every bulk-path kind under every fractal, plus a periodic and a reference-seeded
/// case.
fn specs() -> Vec<String> {
    let mut v = Vec::new();
    for kind in ["white", "value", "perlin-angle", "perlin-table", "perlin", "opensimplex2"] {
        for fractal in ["none", "fbm", "ridged", "hybrid", "billow"] {
            v.push(format!(
                "kind = \"{kind}\", seed = 20261123, fractal = \"{fractal}\", octaves = 5, \
                 frequency = 0.37, offset = [3.25, -1.5]"
            ));
        }
    }
    v.push("kind = \"perlin\", seed = \"reference\", fractal = \"fbm\", octaves = 4, period = 4".into());
    v.push("kind = \"perlin-table\", seed = \"reference\", res = 7.5, fractal = \"ridged\"".into());
    v
}

/// Regions: fine spacing (permute path), coarse spacing (gather path), and a wide strip.
const REGIONS: [Region; 3] = [
    Region { x0: -13.37, y0: 7.91, dx: 0.173, dy: 0.219, width: 67, height: 45 },
    Region { x0: 5.5, y0: -2.0, dx: 3.7, dy: 2.9, width: 41, height: 9 },
    Region { x0: -20.3, y0: 1.1, dx: 0.047, dy: 0.31, width: 1100, height: 3 },
];

/// FNV-1a over the output bits of every region, in order.
fn checksum(noise: &Noise, scalar: bool) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for region in &REGIONS {
        let mut out = vec![0.0f32; region.width * region.height];
        if scalar { noise.fill_scalar(region, &mut out) } else { noise.fill(region, &mut out) }
            .expect("fill");
        for v in out {
            for b in v.to_bits().to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
    h
}

/// The checksum of every level (scalar, AVX2, AVX-512 give the same bits) per spec of
/// [`specs`], in order. Regenerated for issue 11 part 6: the SIMD levels no longer fuse
/// multiply-adds and the scalar level of opensimplex2 runs the lane kernel instead of the f64
/// point kernel; the lattice kinds' scalar checksums did not move (the old scalar bits are now
/// every level's bits), opensimplex2's did.
const GOLDEN: [u64; 32] = [
    0xb32950e76da7554d, // kind = "white", seed = 20261123, fractal = "none", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0xeafb22031b4d74f6, // kind = "white", seed = 20261123, fractal = "fbm", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x14370ba483b6aa33, // kind = "white", seed = 20261123, fractal = "ridged", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x500f5dc11382e5cc, // kind = "white", seed = 20261123, fractal = "hybrid", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x7b40758ba1e8a6fc, // kind = "white", seed = 20261123, fractal = "billow", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x508187bca8c24822, // kind = "value", seed = 20261123, fractal = "none", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x18ade1828d58f703, // kind = "value", seed = 20261123, fractal = "fbm", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x14f909cf4ac7f1e0, // kind = "value", seed = 20261123, fractal = "ridged", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0xd1a14fb5f27f50b8, // kind = "value", seed = 20261123, fractal = "hybrid", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x50624a99a1380921, // kind = "value", seed = 20261123, fractal = "billow", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0xd0838d8062bfce8c, // kind = "perlin-angle", seed = 20261123, fractal = "none", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x539a2a1aa585b3ff, // kind = "perlin-angle", seed = 20261123, fractal = "fbm", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x1ed285bc74bdd76e, // kind = "perlin-angle", seed = 20261123, fractal = "ridged", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0xbc3b6ed01635adf6, // kind = "perlin-angle", seed = 20261123, fractal = "hybrid", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x48696a6f8078eede, // kind = "perlin-angle", seed = 20261123, fractal = "billow", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x3d0c2ce79e341812, // kind = "perlin-table", seed = 20261123, fractal = "none", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0xe15939f380a2e0e3, // kind = "perlin-table", seed = 20261123, fractal = "fbm", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x777c95615cd63889, // kind = "perlin-table", seed = 20261123, fractal = "ridged", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x4936401a7dd675ee, // kind = "perlin-table", seed = 20261123, fractal = "hybrid", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0xb69145be0a6c0703, // kind = "perlin-table", seed = 20261123, fractal = "billow", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0xe8440e3b8da80f4d, // kind = "perlin", seed = 20261123, fractal = "none", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x529e7777045420ed, // kind = "perlin", seed = 20261123, fractal = "fbm", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x8228e8004a1f7c40, // kind = "perlin", seed = 20261123, fractal = "ridged", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0xb3754ca6dba70a73, // kind = "perlin", seed = 20261123, fractal = "hybrid", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x5edda52ec2a0baee, // kind = "perlin", seed = 20261123, fractal = "billow", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0xc28848a0191ed73b, // kind = "opensimplex2", seed = 20261123, fractal = "none", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0xdb44393d2af7b890, // kind = "opensimplex2", seed = 20261123, fractal = "fbm", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0xc0571187595d864d, // kind = "opensimplex2", seed = 20261123, fractal = "ridged", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x01ce80042c9163a7, // kind = "opensimplex2", seed = 20261123, fractal = "hybrid", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0x93b86077d789c258, // kind = "opensimplex2", seed = 20261123, fractal = "billow", octaves = 5, frequency = 0.37, offset = [3.25, -1.5]
    0xa6cfa59c4da46ba7, // kind = "perlin", seed = "reference", fractal = "fbm", octaves = 4, period = 4
    0xf1e5ecb1ba35a043, // kind = "perlin-table", seed = "reference", res = 7.5, fractal = "ridged"
];

#[test]
fn bulk_output_bits_match_the_goldens() {
    let specs = specs();
    assert_eq!(specs.len(), GOLDEN.len());
    let print = std::env::var_os("GOLDEN_PRINT").is_some();
    // The SIMD checksum applies to `fill` on the SIMD levels (it errs when `TERRASYNTH_SIMD`
    // is invalid).
    let simd = !matches!(Noise::bulk_simd_level(), "scalar" | "invalid TERRASYNTH_SIMD");
    let mut failures = Vec::new();
    for (spec, &want) in specs.iter().zip(&GOLDEN) {
        let noise = NoiseSpec::from_inline_toml(spec).unwrap().build().unwrap();
        let got_simd = if simd { checksum(&noise, false) } else { 0 };
        let got_scalar = checksum(&noise, true);
        if print {
            println!("    0x{got_scalar:016x}, // {spec}");
        }
        if got_scalar != want || (simd && got_simd != want) {
            failures.push(format!("{spec}: scalar 0x{got_scalar:016x}, best level 0x{got_simd:016x}"));
        }
    }
    assert!(!print, "printed the goldens; unset GOLDEN_PRINT");
    assert!(failures.is_empty(), "bulk output bits changed for: {failures:#?}");
}
