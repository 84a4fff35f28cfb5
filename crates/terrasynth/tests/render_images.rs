//! Rendering on a test terrain (a Gaussian island times value-noise fBm): colour maps, hillshade,
//! shaded relief. Compares small renders with the committed golden PNGs in
//! `tests/goldens/render/` and checks invariants: sea where the sea level says, soft (never
//! black) shadows, thread-count independence.

use terrasynth::Heightmap;
use terrasynth::render::hillshade::{HillshadeOptions, hillshade, hillshade_u8, shade, shaded_relief};
use terrasynth::render::{Mesh, MeshOptions, Palette};

const N: usize = 257;
const SEA: f32 = 0.0;

/// Lattice value noise in [0, 1] with smoothstep interpolation (test-only terrain source).
fn value_noise(x: f32, y: f32, seed: u32) -> f32 {
    let hash = |ix: i32, iy: i32| {
        let mut h = (ix as u32).wrapping_mul(0x8da6_b343)
            ^ (iy as u32).wrapping_mul(0xd816_3841)
            ^ seed.wrapping_mul(0xcb1a_b31f);
        h ^= h >> 13;
        h = h.wrapping_mul(0x5bd1_e995);
        h ^= h >> 15;
        (h & 0xffff) as f32 / 65535.0
    };
    let (x0, y0) = (x.floor(), y.floor());
    let (tx, ty) = (x - x0, y - y0);
    let (sx, sy) = (tx * tx * (3.0 - 2.0 * tx), ty * ty * (3.0 - 2.0 * ty));
    let (ix, iy) = (x0 as i32, y0 as i32);
    let top = hash(ix, iy) * (1.0 - sx) + hash(ix + 1, iy) * sx;
    let bottom = hash(ix, iy + 1) * (1.0 - sx) + hash(ix + 1, iy + 1) * sx;
    top * (1.0 - sy) + bottom * sy
}

/// An island test terrain in metres (about −150..+450), cell size 8 m: a Gaussian island
/// shape times 7 octaves of value-noise fBm (ridged in the upper octaves).
fn terrain() -> Heightmap {
    terrain_of_side(N)
}

/// [`terrain`] sampled on `n × n` cells (the same island at another resolution).
fn terrain_of_side(n: usize) -> Heightmap {
    let c = n as f32;
    Heightmap::from_fn(n, n, 8.0, |x, y| {
        let (fx, fy) = (x as f32 / c, y as f32 / c);
        let g = |cx: f32, cy: f32, r: f32| {
            let (dx, dy) = (fx - cx, fy - cy);
            (-(dx * dx + dy * dy) / (2.0 * r * r)).exp()
        };
        let island = (g(0.45, 0.47, 0.2) + 0.6 * g(0.7, 0.65, 0.12)).min(1.0);
        let (mut sum, mut amp, mut freq) = (0.0, 1.0, 4.0);
        for octave in 0..7u32 {
            let v = value_noise(fx * freq, fy * freq, octave);
            sum += amp * if octave >= 2 { 1.0 - (2.0 * v - 1.0).abs() } else { v };
            amp *= 0.5;
            freq *= 2.0;
        }
        island * (sum * 420.0) - 150.0 * (1.0 - island) - 20.0
    })
    .unwrap()
}

/// Side of the golden renders: small, so the committed PNGs stay a few kB each.
const GOLDEN_SIDE: usize = 65;

/// Compares `pixels` (`channels` per pixel) with the golden PNG `tests/goldens/render/<name>.png`
/// after decoding it. On a mismatch writes `<name>.new.png` beside it and returns the name;
/// with `UPDATE_GOLDENS=1` (re)writes the golden instead. Look at both pictures before
/// accepting a change.
#[cfg(feature = "png")]
fn compare_with_golden(name: &str, channels: usize, pixels: &[u8]) -> Option<String> {
    use std::path::{Path, PathBuf};

    use terrasynth::io::png::{write_gray8, write_rgb8};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/goldens/render");
    let write = |path: &Path| {
        let n = GOLDEN_SIDE;
        if channels == 3 { write_rgb8(path, n, n, pixels) } else { write_gray8(path, n, n, pixels) }
            .expect("write png");
    };
    let golden = dir.join(format!("{name}.png"));
    let new = dir.join(format!("{name}.new.png"));
    if std::env::var_os("UPDATE_GOLDENS").is_some() {
        std::fs::create_dir_all(&dir).expect("golden dir");
        write(&golden);
        let _ = std::fs::remove_file(&new);
        return None;
    }
    let decoded = image::open(&golden)
        .map(|img| if channels == 3 { img.to_rgb8().into_raw() } else { img.to_luma8().into_raw() });
    match decoded {
        Ok(want) if want == pixels => {
            let _ = std::fs::remove_file(&new);
            None
        }
        _ => {
            write(&new);
            Some(format!("{} (see {})", golden.display(), new.display()))
        }
    }
}

#[cfg(feature = "png")]
#[test]
fn colour_hillshade_and_shaded_renders_match_the_goldens() {
    let map = terrain_of_side(GOLDEN_SIDE);
    let opts = HillshadeOptions::default();
    let mut mismatches = Vec::new();
    for name in Palette::NAMES {
        let p = Palette::named(name).unwrap();
        mismatches.extend(compare_with_golden(&format!("colour_{name}"), 3, &p.colorize(&map, Some(SEA))));
        let shaded = shaded_relief(&map, &p, &opts, Some(SEA)).unwrap();
        mismatches.extend(compare_with_golden(&format!("shaded_{name}"), 3, &shaded));
    }
    mismatches.extend(compare_with_golden("hillshade", 1, &hillshade_u8(&map, &opts, None).unwrap()));
    assert!(
        mismatches.is_empty(),
        "renders differ from the goldens (rerun with UPDATE_GOLDENS=1 to accept):\n{}",
        mismatches.join("\n")
    );
}

#[test]
fn sea_is_blue_and_shadows_keep_their_colour() {
    let map = terrain();
    let p = Palette::named("classic").unwrap();
    let opts = HillshadeOptions::default();
    let rgb = p.colorize(&map, Some(SEA));
    let hs = hillshade(&map, &opts, Some(SEA)).unwrap();
    let shaded = shade(&rgb, &hs, &opts).unwrap();
    let mut sea_cells = 0;
    for (i, &h) in map.as_slice().iter().enumerate() {
        let c = &rgb[3 * i..3 * i + 3];
        let blue = c[2] as i32 > c[0] as i32 + 40 && c[2] > c[1];
        if h < SEA {
            sea_cells += 1;
            assert!(blue, "sea cell {i} is not blue: {c:?}");
            // Flat water: the shading factor is exactly 1.
            assert_eq!(&shaded[3 * i..3 * i + 3], c);
        } else {
            assert!(!blue, "land cell {i} is blue: {c:?}");
        }
        // Soft shadows: at least `ambient` of the colour remains.
        for ch in 0..3 {
            assert!(shaded[3 * i + ch] as f64 >= (c[ch] as f64 * opts.ambient).floor(), "cell {i}");
        }
    }
    assert!(sea_cells > N * N / 10 && sea_cells < N * N * 9 / 10, "{sea_cells} sea cells");
    // The highest cell is snow-white.
    let top = map.as_slice().iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
    assert!(rgb[3 * top..3 * top + 3].iter().all(|&v| v > 240));
    // Some slopes face away from the sun (the hillshade has real contrast).
    let land: Vec<f32> = hs.iter().zip(map.as_slice()).filter(|(_, h)| **h >= SEA).map(|(s, _)| *s).collect();
    let (lo, hi) = land.iter().fold((1f32, 0f32), |(a, b), &v| (a.min(v), b.max(v)));
    assert!(lo < 0.45 && hi > 0.9, "hillshade range {lo}..{hi}");
}

#[test]
fn rendering_is_identical_on_any_thread_count() {
    let map = terrain();
    let p = Palette::named("classic").unwrap();
    let run = |n: usize| {
        rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap().install(|| {
            let shaded = shaded_relief(&map, &p, &HillshadeOptions::default(), Some(SEA)).unwrap();
            let opts =
                MeshOptions { lod: 1, colors: Some(p.clone()), sea_level: Some(SEA), ..Default::default() };
            (shaded, Mesh::from_heightmap(&map, opts).unwrap())
        })
    };
    let one = run(1);
    assert!(one == run(2), "2 threads differ");
    assert!(one == run(4), "4 threads differ");
}
