//! Truncated, corrupt and random files give `Error::Format` (or a clean size error), never a
//! panic.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use terrasynth::io::{self, FileFormat, ReadOptions, decode_heightmap};
use terrasynth::{Error, Heightmap};

fn out_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("io-corrupt");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sample_map() -> Heightmap {
    Heightmap::from_fn(37, 29, 1.0, |x, y| ((x * 31 + y * 17) % 97) as f32 / 97.0).unwrap()
}

/// Valid files of every readable format, written once by our writers.
fn valid_files() -> Vec<(FileFormat, Vec<u8>)> {
    static FILES: std::sync::OnceLock<Vec<(FileFormat, Vec<u8>)>> = std::sync::OnceLock::new();
    FILES.get_or_init(write_valid_files).clone()
}

fn write_valid_files() -> Vec<(FileFormat, Vec<u8>)> {
    let map = sample_map();
    let dir = out_dir();
    let mut v = Vec::new();
    #[cfg(feature = "png")]
    {
        io::png::write_png16(dir.join("v.png"), &map, 0.0, 1.0).unwrap();
        v.push((FileFormat::Png, std::fs::read(dir.join("v.png")).unwrap()));
    }
    #[cfg(feature = "exr")]
    {
        io::exr::write(dir.join("v.exr"), &map).unwrap();
        v.push((FileFormat::Exr, std::fs::read(dir.join("v.exr")).unwrap()));
    }
    #[cfg(feature = "tiff")]
    {
        io::tiff::write_geotiff(dir.join("v.tif"), &map, &Default::default()).unwrap();
        v.push((FileFormat::Tiff, std::fs::read(dir.join("v.tif")).unwrap()));
    }
    io::raw::write_r16(dir.join("v.r16"), &map, 0.0, 1.0).unwrap();
    v.push((FileFormat::R16, std::fs::read(dir.join("v.r16")).unwrap()));
    v
}

fn opts(format: FileFormat) -> ReadOptions {
    ReadOptions { format, width: 37, height: 29 }
}

#[test]
fn valid_files_decode() {
    for (format, bytes) in valid_files() {
        let m = decode_heightmap(&bytes, Path::new("v"), &opts(format)).unwrap();
        assert_eq!((m.width(), m.height()), (37, 29), "{format:?}");
    }
}

#[test]
fn truncated_files_are_format_errors() {
    for (format, bytes) in valid_files() {
        let mut cuts = vec![0, 4, 8, 16, 33, bytes.len() / 2, bytes.len() * 3 / 4];
        // A PNG cut inside its final IEND chunk still holds every pixel (decoders accept it),
        // so the last-byte cut is only checked for the other formats.
        if format != FileFormat::Png {
            cuts.push(bytes.len() - 1);
        }
        for keep in cuts {
            let err = decode_heightmap(&bytes[..keep], Path::new("cut.bin"), &opts(format));
            assert!(
                matches!(err, Err(Error::Format { ref path, .. }) if path == Path::new("cut.bin")),
                "{format:?} cut to {keep} bytes: {:?}",
                err.map(|m| (m.width(), m.height()))
            );
        }
    }
}

#[test]
fn garbage_is_a_format_error_for_every_format() {
    let garbage: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    for format in [FileFormat::Png, FileFormat::Exr, FileFormat::Tiff, FileFormat::R16] {
        let err = decode_heightmap(&garbage[..4999], Path::new("junk"), &opts(format));
        assert!(matches!(err, Err(Error::Format { .. })), "{format:?}: {err:?}");
    }
}

#[cfg(feature = "png")]
#[test]
fn oversized_png_header_is_refused_before_decoding() {
    // A valid PNG header claiming 2^20 + 1 pixels a side, with no pixel data.
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = b"IHDR".to_vec();
    ihdr.extend_from_slice(&((1u32 << 20) + 1).to_be_bytes());
    ihdr.extend_from_slice(&((1u32 << 20) + 1).to_be_bytes());
    ihdr.extend_from_slice(&[16, 0, 0, 0, 0]);
    png.extend_from_slice(&13u32.to_be_bytes());
    png.extend_from_slice(&ihdr);
    png.extend_from_slice(&crc32(&ihdr).to_be_bytes());
    let err = decode_heightmap(&png, Path::new("huge.png"), &ReadOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Format { .. }), "{err}");
}

/// CRC-32 (IEEE) for the hand-made PNG chunk above.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic_png(tail in proptest::collection::vec(any::<u8>(), 0..600)) {
        let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
        bytes.extend_from_slice(&tail);
        let r = decode_heightmap(&bytes, Path::new("r.png"), &ReadOptions::default());
        let is_format_error = matches!(r, Err(Error::Format { .. }));
        prop_assert!(is_format_error, "{:?}", r.map(|m| m.len()));
    }

    #[test]
    fn random_bytes_never_panic_r16(bytes in proptest::collection::vec(any::<u8>(), 0..600),
                                    w in 0usize..40, h in 0usize..40) {
        let r = decode_heightmap(&bytes, Path::new("r.r16"), &ReadOptions { format: FileFormat::R16, width: w, height: h });
        if let Ok(m) = &r {
            prop_assert_eq!(m.len() * 2, bytes.len());
        } else {
            let clean = matches!(r, Err(Error::Format { .. }) | Err(Error::InvalidSize { .. }));
            prop_assert!(clean, "unexpected error kind: {:?}", r.err());
        }
    }

    #[test]
    fn mutated_valid_files_never_panic(which in 0usize..4, flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let files = valid_files();
        let (format, mut bytes) = files[which % files.len()].clone();
        for (at, value) in flips {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        // Ok (a flip in pixel data) or a clean error; a panic fails the test.
        let _ = decode_heightmap(&bytes, Path::new("m"), &opts(format));
    }
}
