//! Resource limits (issue 15 part 2): sizes that come from input are checked against the
//! memory available before anything is allocated, with the size in the error. The limit is
//! set with `TERRASYNTH_MEMORY_LIMIT` so the test does not depend on the machine; everything
//! runs in one test because the variable is process-wide.

use std::path::Path;

use terrasynth::analyze::realism::{Realism, RealismOptions};
use terrasynth::erode::{ThermalEroder, ThermalParams};
use terrasynth::io::{ReadOptions, decode_heightmap};
use terrasynth::recipe::{Pipeline, Recipe, registry};
use terrasynth::{Error, Heightmap};

#[test]
fn input_sizes_beyond_the_available_memory_are_refused_before_allocating() {
    // SAFETY: the only test in this binary; no other thread reads the environment now.
    unsafe { std::env::set_var("TERRASYNTH_MEMORY_LIMIT", "100M") };

    // A recipe's map: 8193² f32 = 256 MiB > 100 MiB, refused at validation.
    let r = Recipe::from_toml_str("width = 8193\nheight = 8193\n[[steps]]\ntype = \"noise\"\n").unwrap();
    let err = Pipeline::new(r, &registry()).unwrap_err().to_string();
    assert!(err.contains("one grid would take 256.1 MiB but only 100.0 MiB"), "{err}");

    // An image header: a PNG claiming 5000² pixels (the f32 grid, 95 MiB, would fit; with the decoder's buffer it does not) (no pixel data) is refused from its header.
    let err =
        decode_heightmap(&png_header(5000, 5000), Path::new("big.png"), &ReadOptions::default()).unwrap_err();
    assert!(
        matches!(&err, Error::Format { message, .. } if message.contains("decoding this image would take")),
        "{err}"
    );

    // Erosion scratch: the 4097² map (64 MiB) fits, thermal erosion's 3 f64 buffers (384 MiB)
    // do not.
    let map = Heightmap::new(4097, 4097, 1.0).unwrap();
    let err = ThermalEroder::new(&map, ThermalParams::default()).unwrap_err().to_string();
    assert!(err.contains("thermal erosion's buffers would take 384.2 MiB"), "{err}");
    // The realism figures of the same map (48 bytes per cell: 768 MiB).
    let err = Realism::compute(&map, &RealismOptions::default()).unwrap_err().to_string();
    assert!(err.contains("the realism analysis would take 768.4 MiB but only 100.0 MiB"), "{err}");
    drop(map);

    // Within the limit everything works as before.
    // SAFETY: as above, the only test of this binary.
    unsafe { std::env::set_var("TERRASYNTH_MEMORY_LIMIT", "64G") };
    let map = Heightmap::new(4097, 4097, 1.0).unwrap();
    assert!(ThermalEroder::new(&map, ThermalParams::default()).is_ok());
    // SAFETY: as above.
    unsafe { std::env::remove_var("TERRASYNTH_MEMORY_LIMIT") };
}

/// A PNG signature, an IHDR chunk claiming `w × h` 16-bit gray pixels, and an empty IDAT (the
/// decoder reads up to the first IDAT before it reports the size).
fn png_header(w: u32, h: u32) -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[16, 0, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"IDAT", &[]);
    png
}

fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let body: Vec<u8> = kind.iter().chain(data).copied().collect();
    png.extend_from_slice(&body);
    let mut crc = 0xffff_ffffu32;
    for &b in &body {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    png.extend_from_slice(&(!crc).to_be_bytes());
}
