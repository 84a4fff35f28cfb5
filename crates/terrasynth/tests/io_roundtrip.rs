//! Write → read round trips of every heightmap format, GeoTIFF tags, and the import step.

use std::collections::BTreeMap;
use std::path::PathBuf;

use terrasynth::io::{self, FileFormat, ReadOptions, read_heightmap};
use terrasynth::step::{ParamValue, Params, StepContext, Terrain};
use terrasynth::{Error, Heightmap};

fn out_dir(tag: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("io-roundtrip-{tag}"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A bumpy test map with negative heights and a non-unit range.
fn test_map(w: usize, h: usize) -> Heightmap {
    Heightmap::from_fn(w, h, 2.5, |x, y| {
        let (fx, fy) = (x as f32 / w as f32, y as f32 / h as f32);
        120.0 * (fx * 7.0).sin() * (fy * 5.0).cos() + 40.0 * fx - 15.3
    })
    .unwrap()
}

#[test]
fn png16_round_trip_within_half_a_step() {
    let map = test_map(67, 45);
    let (lo, hi) = (-200.0f32, 200.0f32);
    let path = out_dir("png").join("h.png");
    io::png::write_png16(&path, &map, lo, hi).unwrap();
    let back = read_heightmap(&path, &ReadOptions::default()).unwrap();
    assert_eq!((back.width(), back.height()), (67, 45));
    let half_step = (hi - lo) as f64 / 131070.0;
    for (&a, &f) in map.as_slice().iter().zip(back.as_slice()) {
        // The stored code is exactly the quantised one.
        assert_eq!((f as f64 * 65535.0).round() as u16, io::quantize_u16(a, lo, hi));
        let restored = lo as f64 + f as f64 * (hi - lo) as f64;
        assert!((restored - a as f64).abs() <= half_step + 1e-4, "{a} -> {restored}");
    }
}

#[test]
fn r16_round_trip_and_size_errors() {
    let map = test_map(33, 33);
    let (lo, hi) = map.min_max().unwrap();
    let path = out_dir("r16").join("h.r16");
    io::raw::write_r16(&path, &map, lo, hi).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 33 * 33 * 2);
    // Square size inferred.
    let back = read_heightmap(&path, &ReadOptions::default()).unwrap();
    assert_eq!((back.width(), back.height()), (33, 33));
    for (&a, &f) in map.as_slice().iter().zip(back.as_slice()) {
        assert_eq!((f as f64 * 65535.0).round() as u16, io::quantize_u16(a, lo, hi));
    }
    assert_eq!(back.as_slice()[0], io::quantize_u16(map.as_slice()[0], lo, hi) as f32 / 65535.0);
    // Wrong size given: the error names expected and actual byte counts.
    let opts = ReadOptions { format: FileFormat::Raw, width: 40, height: 33 };
    let err = read_heightmap(&path, &opts).unwrap_err().to_string();
    assert!(err.contains("2640 bytes") && err.contains("2178"), "{err}");
}

#[cfg(feature = "exr")]
#[test]
fn exr_round_trip_is_bit_exact() {
    let mut map = test_map(50, 31);
    map[(3, 4)] = -0.0;
    map[(5, 6)] = 1.0e-30;
    let path = out_dir("exr").join("h.exr");
    io::exr::write(&path, &map).unwrap();
    let back = read_heightmap(&path, &ReadOptions::default()).unwrap();
    assert_eq!((back.width(), back.height()), (50, 31));
    let bits = |m: &Heightmap| m.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back), bits(&map));
}

#[cfg(feature = "tiff")]
#[test]
fn geotiff_round_trip_is_bit_exact_and_tags_are_present() {
    use terrasynth::io::tiff::{self as t, GeoTiffOptions};
    let map = test_map(41, 29);
    let path = out_dir("tiff").join("h.tif");
    t::write_geotiff(&path, &map, &GeoTiffOptions::default()).unwrap();
    let back = read_heightmap(&path, &ReadOptions::default()).unwrap();
    let bits = |m: &Heightmap| m.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back), bits(&map));
    assert_eq!(back.cell_size(), 2.5, "cell size read back from ModelPixelScale");
    let tags = t::read_geo_tags(&path).unwrap();
    assert_eq!(tags.pixel_scale, vec![2.5, 2.5, 0.0]);
    assert_eq!(tags.tiepoint, vec![0.0, 0.0, 0.0, 0.0, 29.0 * 2.5, 0.0]);
    assert_eq!(&tags.geo_keys[..4], &[1, 1, 0, 5]);
    assert_eq!(tags.key(t::GEOKEY_MODEL_TYPE), Some(1));
    assert_eq!(tags.key(t::GEOKEY_RASTER_TYPE), Some(1));
    assert_eq!(tags.key(t::GEOKEY_PROJECTED_CRS), Some(t::USER_DEFINED));
    assert_eq!(tags.key(t::GEOKEY_LINEAR_UNITS), Some(9001));
    // A real CRS and origin.
    let opts = GeoTiffOptions { epsg: Some(32631), origin: Some([500000.0, 4_600_000.0]) };
    t::write_geotiff(&path, &map, &opts).unwrap();
    let tags = t::read_geo_tags(&path).unwrap();
    assert_eq!(tags.key(t::GEOKEY_PROJECTED_CRS), Some(32631));
    assert_eq!(tags.tiepoint[3..5], [500000.0, 4_600_000.0]);
}

#[cfg(feature = "tiff")]
#[test]
fn tiff_u16_and_u8_read_as_fractions() {
    use tiff::encoder::{TiffEncoder, colortype};
    let dir = out_dir("tiff-int");
    let p16 = dir.join("h16.tif");
    let mut f = std::fs::File::create(&p16).unwrap();
    TiffEncoder::new(&mut f)
        .unwrap()
        .write_image::<colortype::Gray16>(3, 2, &[0, 65535, 32768, 1, 2, 3])
        .unwrap();
    let m = read_heightmap(&p16, &ReadOptions::default()).unwrap();
    assert_eq!((m.width(), m.height()), (3, 2));
    assert_eq!(m.as_slice()[..3], [0.0, 1.0, 32768.0 / 65535.0]);
    let p8 = dir.join("h8.tif");
    let mut f = std::fs::File::create(&p8).unwrap();
    TiffEncoder::new(&mut f).unwrap().write_image::<colortype::Gray8>(2, 2, &[0, 255, 51, 102]).unwrap();
    let m = read_heightmap(&p8, &ReadOptions::default()).unwrap();
    assert_eq!(m.as_slice(), &[0.0, 1.0, 0.2, 0.4]);
    // RGB TIFF is refused with a clear message.
    let prgb = dir.join("rgb.tif");
    let mut f = std::fs::File::create(&prgb).unwrap();
    TiffEncoder::new(&mut f).unwrap().write_image::<colortype::RGB8>(1, 1, &[1, 2, 3]).unwrap();
    let err = read_heightmap(&prgb, &ReadOptions::default()).unwrap_err().to_string();
    assert!(err.contains("single gray channel"), "{err}");
}

#[cfg(feature = "png")]
#[test]
fn png8_gray_and_rgb_luminance() {
    let dir = out_dir("png8");
    let p = dir.join("g8.png");
    io::png::write_gray8(&p, 2, 1, &[0, 255]).unwrap();
    assert_eq!(read_heightmap(&p, &ReadOptions::default()).unwrap().as_slice(), &[0.0, 1.0]);
    // Gray stored as RGB reads back as the same gray; pure green reads as its luminance.
    let p = dir.join("rgb.png");
    io::png::write_rgb8(&p, 2, 1, &[51, 51, 51, 0, 255, 0]).unwrap();
    let m = read_heightmap(&p, &ReadOptions::default()).unwrap();
    assert!((m.as_slice()[0] - 0.2).abs() < 1e-6);
    assert!((m.as_slice()[1] - 0.7152).abs() < 1e-6);
    // RGBA splat map writer: sizes are checked.
    assert!(io::png::write_rgba8(dir.join("s.png"), 2, 2, &[0; 15]).is_err());
    io::png::write_rgba8(dir.join("s.png"), 2, 2, &[7; 16]).unwrap();
}

fn import_params(pairs: &[(&str, ParamValue)]) -> Params {
    let given: BTreeMap<String, ParamValue> = pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    Params::validate(io::import::INFO.params, &given).unwrap()
}

#[test]
fn import_step_reads_scales_and_resamples() {
    let map = Heightmap::from_fn(17, 17, 1.0, |x, y| (x + y) as f32 / 32.0).unwrap();
    let path = out_dir("import").join("ramp.r16");
    io::raw::write_r16(&path, &map, 0.0, 1.0).unwrap();
    let ctx = StepContext::new(1, Default::default());
    let text = |s: &str| ParamValue::Text(s.into());

    // Same size, scale 100.
    let p = import_params(&[("path", text(path.to_str().unwrap())), ("scale", ParamValue::Number(100.0))]);
    let step = (io::import::INFO.build)(&p).unwrap();
    let mut terrain = Terrain::new(17, 17, 4.0).unwrap();
    step.run(&mut terrain, &ctx).unwrap();
    assert_eq!(terrain.height.cell_size(), 4.0);
    assert!((terrain.height[(16, 16)] - 100.0).abs() < 1e-3);
    assert!((terrain.height[(8, 0)] - 25.0).abs() < 2e-3);

    // Other size: resampled bilinearly, corners onto corners (a ramp stays a ramp).
    let mut terrain = Terrain::new(33, 33, 1.0).unwrap();
    step.run(&mut terrain, &ctx).unwrap();
    assert!((terrain.height[(32, 32)] - 100.0).abs() < 1e-3);
    assert!((terrain.height[(1, 0)] - 100.0 / 64.0).abs() < 2e-3);

    // resize = "error" refuses.
    let p = import_params(&[("path", text(path.to_str().unwrap())), ("resize", text("error"))]);
    let step = (io::import::INFO.build)(&p).unwrap();
    let err = step.run(&mut terrain, &ctx).unwrap_err();
    assert!(matches!(err, Error::SizeMismatch { expected_w: 33, got_w: 17, .. }), "{err}");

    // A missing path is refused when building; a missing file is an I/O error naming it.
    assert!((io::import::INFO.build)(&import_params(&[])).is_err());
    let p = import_params(&[("path", text("/nonexistent/x.png"))]);
    let err = (io::import::INFO.build)(&p).unwrap().run(&mut terrain, &ctx).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/x.png"), "{err}");
    assert!(terrasynth::recipe::registry::generators().iter().any(|s| s.name == "import"));
}
