//! R16 / RAW: headerless little-endian unsigned 16-bit heights, row-major, row 0 first.
//!
//! This is Unreal's `.r16`, Unity's 16-bit RAW with byte order "Windows", and the `.r16/.raw`
//! of Godot Terrain3D/HTerrain (research/terrain-tools.md §4). The file stores neither size nor
//! height range: heights are mapped from `[lo, hi]` to 0..=65535 by [`super::quantize_u16`], so
//! keep `lo`/`hi` (e.g. in the file name) to scale the terrain back in the engine.

use std::path::Path;

use super::{atomic, format_err};
use crate::{Heightmap, Result};

/// Writes `map` as R16: each height mapped from `[lo, hi]` to 0..=65535 (see
/// [`super::quantize_u16`] for the rounding), two bytes per cell, little-endian, row 0 first.
pub fn write_r16(path: impl AsRef<Path>, map: &Heightmap, lo: f32, hi: f32) -> Result<()> {
    write_r16_with(path, map, lo, hi, R16Options::default())
}

/// Layout choices for [`write_r16_with`] (engine import dialogs differ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct R16Options {
    /// Write the last row first (Unity imports GDAL-style RAW "vertically inverted"; set this,
    /// or tick "Flip Vertically" in Unity's import dialog). Default false.
    pub flip_y: bool,
    /// Big-endian ("Mac" byte order in Unity, "Big" in HTerrain). Default false (little-endian,
    /// what Unreal, Terrain3D and Unity's "Windows" order expect).
    pub big_endian: bool,
}

/// Writes R16 with the given row order and byte order (see [`R16Options`]).
pub fn write_r16_with(
    path: impl AsRef<Path>,
    map: &Heightmap,
    lo: f32,
    hi: f32,
    opts: R16Options,
) -> Result<()> {
    let path = path.as_ref();
    super::check_range(lo, hi)?;
    let (w, h, data) = (map.width(), map.height(), map.as_slice());
    // Streamed band by band of rows (no whole-map buffer).
    atomic::write_atomic(path, |out| {
        super::write_row_bands(out, path, h, 2 * w, |y, row| {
            let src = if opts.flip_y { h - 1 - y } else { y };
            for (px, &v) in row.chunks_exact_mut(2).zip(&data[src * w..(src + 1) * w]) {
                let q = super::quantize_u16(v, lo, hi);
                px.copy_from_slice(&if opts.big_endian { q.to_be_bytes() } else { q.to_le_bytes() });
            }
            true
        })
        .map(|_| ())
    })
}

/// Reads an R16 file; see [`decode_r16`].
pub fn read_r16(path: impl AsRef<Path>, width: usize, height: usize) -> Result<Heightmap> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(atomic::io_err(path))?;
    decode_r16(&bytes, path, width, height)
}

/// Decodes R16 bytes into heights in [0, 1] (`value / 65535`).
///
/// Size: `width × height` if both are given; if only `width`, the height is `bytes / 2 / width`;
/// if neither, the file must be a square of `n × n` cells (`bytes = 2 n²`). A byte count that
/// does not match gives [`crate::Error::Format`] naming the expected and actual byte counts.
pub fn decode_r16(bytes: &[u8], path: &Path, width: usize, height: usize) -> Result<Heightmap> {
    let actual = bytes.len();
    if !actual.is_multiple_of(2) {
        return Err(format_err(
            path,
            format!("R16 file has an odd byte count ({actual}); 2 bytes per cell expected"),
        ));
    }
    let cells = actual / 2;
    let (w, h) = match (width, height) {
        (0, 0) => {
            let n = cells.isqrt();
            if n == 0 || n * n != cells {
                return Err(format_err(
                    path,
                    format!(
                        "cannot infer the size: {actual} bytes is not a square 16-bit map (n×n×2 bytes); give width and height"
                    ),
                ));
            }
            (n, n)
        }
        (w, 0) if cells.is_multiple_of(w) && cells > 0 => (w, cells / w),
        (0, h) if cells.is_multiple_of(h) && cells > 0 => (cells / h, h),
        (w, 0) => {
            return Err(format_err(path, format!("{actual} bytes is not a whole number of {w}-cell rows")));
        }
        (0, h) => {
            return Err(format_err(
                path,
                format!("{actual} bytes is not a whole number of {h}-cell columns"),
            ));
        }
        (w, h) => (w, h),
    };
    crate::grid::check_size::<f32>(w, h)?;
    let expected = (w as u64) * (h as u64) * 2;
    if expected != actual as u64 {
        return Err(format_err(
            path,
            format!("size mismatch: a {w}x{h} R16 map needs {expected} bytes but the file has {actual}"),
        ));
    }
    let data = bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]) as f32 / 65535.0).collect();
    Heightmap::from_vec(w, h, 1.0, data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    #[test]
    fn little_endian_layout() {
        let bytes = [0x00, 0x00, 0xff, 0xff, 0x00, 0x80, 0x01, 0x00];
        let m = decode_r16(&bytes, Path::new("t.r16"), 0, 0).unwrap();
        assert_eq!((m.width(), m.height()), (2, 2));
        assert_eq!(m.as_slice(), &[0.0, 1.0, 32768.0 / 65535.0, 1.0 / 65535.0]);
    }

    #[test]
    fn flip_and_big_endian_layouts() {
        let dir = std::env::temp_dir().join(format!("ts-r16-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let map = Heightmap::from_vec(1, 2, 1.0, vec![0.0, 1.0]).unwrap();
        let p = dir.join("a.r16");
        write_r16_with(&p, &map, 0.0, 1.0, R16Options { flip_y: true, big_endian: false }).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), vec![0xff, 0xff, 0, 0]);
        let map = Heightmap::from_vec(1, 1, 1.0, vec![1.0 / 65535.0]).unwrap();
        write_r16_with(&p, &map, 0.0, 1.0, R16Options { flip_y: false, big_endian: true }).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), vec![0, 1]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn size_mismatch_names_both_byte_counts() {
        let err = decode_r16(&[0; 10], Path::new("t.r16"), 2, 2).unwrap_err().to_string();
        assert!(err.contains("needs 8 bytes") && err.contains("has 10"), "{err}");
        let err = decode_r16(&[0; 12], Path::new("t.r16"), 0, 0).unwrap_err();
        assert!(matches!(err, Error::Format { .. }));
        let err = decode_r16(&[0; 7], Path::new("t.r16"), 0, 0).unwrap_err().to_string();
        assert!(err.contains("odd byte count"), "{err}");
        assert!(decode_r16(&[], Path::new("t.r16"), 0, 0).is_err());
        // Width only: height inferred.
        let m = decode_r16(&[0; 12], Path::new("t.r16"), 3, 0).unwrap();
        assert_eq!((m.width(), m.height()), (3, 2));
    }
}
