//! File formats: one module per format, each behind its cargo feature.
//!
//! Writers (every write goes through [`atomic::write_atomic`]: temp file, fsync, rename):
//! - [`png`]: 16-bit grayscale heightmaps, RGB8 colour maps, RGBA8 splat maps (feature `png`);
//! - [`raw`]: R16/RAW, little-endian u16, no header (always available);
//! - [`exr`]: OpenEXR, one f32 channel `Y` (feature `exr`);
//! - [`tiff`]: f32 TIFF with GeoTIFF tags (feature `tiff`);
//! - [`gltf`]: binary glTF 2.0 (`.glb`) from a [`crate::render::mesh::Mesh`] (feature `gltf`);
//! - [`obj`]: Wavefront OBJ (+ optional MTL) from a mesh (always available).
//!
//! Readers, for the `import` step: [`read_heightmap`] (PNG 8/16-bit, R16/RAW, EXR, TIFF f32/u16/u8).
//! Integer formats are read as fractions in [0, 1] (value / 255 or value / 65535); float formats
//! keep their values. Corrupt, truncated or mismatched files give [`Error::Format`] naming the
//! file; sizes are checked with [`crate::grid::check_size`] before any pixel is decoded.
//!
//! Engine targets ([`engine`]): the heightmap sizes and import figures of Unreal, Unity and Godot.
//!
//! Row order everywhere: row 0 of the heightmap is the first row of the file (the top of an
//! image, "north"). Engines that want the other way round (Unity RAW import) offer a flip.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, Heightmap, Result};

pub mod atomic;
pub mod engine;
#[cfg(feature = "exr")]
pub mod exr;
pub mod geojson;
#[cfg(feature = "gltf")]
pub mod gltf;
pub mod import;
mod mesh_rows;
pub mod obj;
#[cfg(feature = "png")]
pub mod png;
pub mod raw;
#[cfg(feature = "tiff")]
pub mod tiff;

pub use atomic::{write_atomic, write_atomic_seekable};

/// Largest decoded image buffer the readers allow, in bytes (4 GiB); larger images are refused
/// from their header, before any pixel is decoded.
pub const MAX_DECODE_BYTES: u64 = 4 << 30;

/// A heightmap file format for reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileFormat {
    /// From the file extension, then from the first bytes (magic numbers); a file with no
    /// recognised magic and an `.r16`/`.raw` extension is read as R16.
    #[default]
    Auto,
    /// PNG, 8- or 16-bit gray (RGB is converted by luminance, see [`png::decode`]).
    Png,
    /// Headerless little-endian u16.
    R16,
    /// Same as R16 (Unity's 16-bit "Windows" RAW).
    Raw,
    /// OpenEXR, the first channel named `Y`, `R`, `G`, `B`, or the only channel.
    Exr,
    /// TIFF gray f32, u16 or u8.
    Tiff,
}

impl FileFormat {
    /// Names as written in a recipe.
    pub const NAMES: &'static [&'static str] = &["auto", "png", "r16", "raw", "exr", "tiff"];

    /// Parses a recipe name (see [`FileFormat::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "auto" => Self::Auto,
            "png" => Self::Png,
            "r16" => Self::R16,
            "raw" => Self::Raw,
            "exr" => Self::Exr,
            "tiff" | "tif" => Self::Tiff,
            _ => return None,
        })
    }

    /// Guesses from the extension, then from the magic bytes; `None` if neither matches.
    pub fn detect(path: &Path, bytes: &[u8]) -> Option<Self> {
        let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        let by_ext = match ext.as_deref() {
            Some("png") => Some(Self::Png),
            Some("r16") => Some(Self::R16),
            Some("raw") => Some(Self::Raw),
            Some("exr") => Some(Self::Exr),
            Some("tif" | "tiff") => Some(Self::Tiff),
            _ => None,
        };
        let by_magic = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Self::Png)
        } else if bytes.starts_with(&[0x76, 0x2f, 0x31, 0x01]) {
            Some(Self::Exr)
        } else if bytes.starts_with(b"II*\0") || bytes.starts_with(b"MM\0*") || bytes.starts_with(b"II+\0") {
            Some(Self::Tiff)
        } else {
            None
        };
        // The magic number wins over a misleading extension; raw files have no magic.
        by_magic.or(by_ext)
    }
}

/// How to read a heightmap file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadOptions {
    /// The format, or [`FileFormat::Auto`].
    pub format: FileFormat,
    /// Width of a headerless R16/RAW file in cells; 0 infers a square from the byte count.
    pub width: usize,
    /// Height of a headerless R16/RAW file in cells; 0 infers a square (or `bytes / 2 / width`
    /// when only the width is given).
    pub height: usize,
}

/// Largest input file read whole (heightmaps, recipes, projects), in bytes: the largest
/// decoded image, [`MAX_DECODE_BYTES`].
pub const MAX_INPUT_FILE_BYTES: u64 = MAX_DECODE_BYTES;

/// Reads a whole input file that came from a user (a heightmap, recipe or project), refusing
/// what is not a regular file (a folder, a FIFO, `/dev/zero`: reading those would block or
/// never end) or is larger than `max_bytes` or than the memory available
/// ([`crate::memory::check_alloc`]), before reading it. Errors name the file.
pub fn read_input_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    // `metadata` (stat) first: opening a FIFO would block until something writes to it.
    let meta = std::fs::metadata(path).map_err(atomic::io_err(path))?;
    if !meta.is_file() {
        return Err(format_err(
            path,
            "not a regular file (a folder, device or pipe cannot be read as input)",
        ));
    }
    let file = std::fs::File::open(path).map_err(atomic::io_err(path))?;
    let len = meta.len();
    if len > max_bytes {
        return Err(format_err(path, format!("file too large: {len} bytes, at most {max_bytes} allowed")));
    }
    crate::memory::check_alloc(0, 0, len, "reading this file")
        .map_err(|e| format_err(path, e.to_string()))?;
    let mut bytes = Vec::with_capacity(len as usize);
    // `take`: a file that grows while it is read stops at the limit.
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(atomic::io_err(path))?;
    if bytes.len() as u64 > max_bytes {
        return Err(format_err(path, format!("file too large: more than {max_bytes} bytes")));
    }
    Ok(bytes)
}

/// Reads a heightmap file (see the module docs for formats and value ranges). The cell size
/// of the result is 1 m. Only regular files are read ([`read_input_file`]).
pub fn read_heightmap(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<Heightmap> {
    let path = path.as_ref();
    let bytes = read_input_file(path, MAX_INPUT_FILE_BYTES)?;
    decode_heightmap(&bytes, path, opts)
}

/// Decodes a heightmap from bytes in memory; `path` is only used to detect the format by
/// extension and to name the file in errors.
pub fn decode_heightmap(bytes: &[u8], path: &Path, opts: &ReadOptions) -> Result<Heightmap> {
    let format = match opts.format {
        FileFormat::Auto => FileFormat::detect(path, bytes).ok_or_else(|| {
            format_err(
                path,
                "unknown file format: no PNG/EXR/TIFF signature and no .png/.r16/.raw/.exr/.tif extension",
            )
        })?,
        f => f,
    };
    match format {
        FileFormat::R16 | FileFormat::Raw | FileFormat::Auto => {
            raw::decode_r16(bytes, path, opts.width, opts.height)
        }
        #[cfg(feature = "png")]
        FileFormat::Png => png::decode(bytes, path),
        #[cfg(feature = "exr")]
        FileFormat::Exr => exr::decode(bytes, path),
        #[cfg(feature = "tiff")]
        FileFormat::Tiff => tiff::decode(bytes, path),
        #[allow(unreachable_patterns)]
        other => Err(format_err(path, format!("support for {other:?} was not compiled in (cargo feature)"))),
    }
}

/// A file name stem made from untrusted text (a recipe's `name`, used in engine file names):
/// ASCII letters, digits, `-` and `_` are kept, every other character becomes `_`, so the
/// stem can never name a folder (`/`, `\`), climb out of one (`..`) or hide a file (a
/// leading `.`); empty text gives `fallback`. At most 64 characters.
///
/// ```
/// use terrasynth::io::safe_file_stem;
/// assert_eq!(safe_file_stem("world-island", "world"), "world-island");
/// assert_eq!(safe_file_stem("../../etc/x", "world"), "______etc_x");
/// assert_eq!(safe_file_stem("", "world"), "world");
/// ```
pub fn safe_file_stem(name: &str, fallback: &str) -> String {
    let stem: String = name
        .chars()
        .take(64)
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    if stem.is_empty() { fallback.to_string() } else { stem }
}

/// Shorthand for [`Error::Format`].
pub(crate) fn format_err(path: &Path, message: impl Into<String>) -> Error {
    Error::Format { path: PathBuf::from(path), message: message.into() }
}

/// Runs a third-party decoder, turning a panic inside it (a bug of the decoder on hostile
/// input) into [`Error::Format`], so user files can never crash the program.
#[allow(dead_code)]
pub(crate) fn guard_decoder<T>(path: &Path, what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(format_err(path, format!("{what} decoder failed on this file (corrupt data)"))),
    }
}

/// Most cells one byte of an image file can decode to: no PNG, EXR or TIFF compression the
/// readers support expands more than 4096 times (deflate at most 1032:1, TIFF's 12-bit LZW at
/// most about 2700:1, RLE and PackBits far less), and no cell takes less than one bit (1-bit
/// gray PNG). A header claiming more cells than `file bytes ×` this is corrupt or truncated.
pub const MAX_CELLS_PER_FILE_BYTE: u64 = 8 * 4096;

/// Refuses, from its header, an image of `width × height` that would not fit: sides and
/// buffer checked by [`crate::grid::check_size`], the f32 result at most
/// [`MAX_DECODE_BYTES`], and at most [`MAX_CELLS_PER_FILE_BYTE`] cells per byte of the
/// `file_bytes`-byte file (found by fuzzing: a 346-byte PNG claiming 23041×31241 made the
/// decoder allocate gigabytes before finding the data missing).
#[cfg_attr(not(any(feature = "png", feature = "exr", feature = "tiff")), allow(dead_code))]
pub(crate) fn check_decode_size(path: &Path, width: usize, height: usize, file_bytes: usize) -> Result<()> {
    crate::grid::check_size::<f32>(width, height)
        .map_err(|e| format_err(path, format!("image too large: {e}")))?;
    let bytes = (width as u64) * (height as u64) * 4;
    if bytes > MAX_DECODE_BYTES {
        return Err(format_err(
            path,
            format!(
                "image too large: {width}x{height} needs {bytes} bytes as f32, at most {MAX_DECODE_BYTES} allowed"
            ),
        ));
    }
    // The decoder's pixel buffer (up to 8 bytes a pixel, RGBA16) and the f32 heights.
    crate::memory::check_cells(width, height, 12, "decoding this image")
        .map_err(|e| format_err(path, format!("image too large: {e}")))?;
    let cells = (width as u64) * (height as u64);
    if cells > (file_bytes as u64).saturating_mul(MAX_CELLS_PER_FILE_BYTE) {
        return Err(format_err(
            path,
            format!(
                "corrupt or truncated image: the header claims {width}x{height} cells, more than a \
                 {file_bytes}-byte file can hold (at most {} cells per byte)",
                MAX_CELLS_PER_FILE_BYTE
            ),
        ));
    }
    Ok(())
}

/// Bytes of rows computed at once by [`for_row_bands`] (about 4 MiB, at least one row; a few
/// hundred bytes in unit tests so that small maps cross band boundaries).
#[cfg(not(test))]
pub(crate) const BAND_BYTES: usize = 4 << 20;
#[cfg(test)]
pub(crate) const BAND_BYTES: usize = 700;

/// Produces `rows` rows of `row_bytes` bytes in order: bands of rows are filled in parallel by
/// `fill(row index, row bytes)` (each row on its own, so the bytes do not depend on the thread
/// count) and handed to `sink` band by band. Returns false if any `fill` returned false (every
/// row is still produced). Only one band is held at a time.
pub(crate) fn for_row_bands(
    rows: usize,
    row_bytes: usize,
    fill: impl Fn(usize, &mut [u8]) -> bool + Sync,
    mut sink: impl FnMut(&[u8]) -> Result<()>,
) -> Result<bool> {
    use rayon::prelude::*;
    if rows == 0 || row_bytes == 0 {
        return Ok(true);
    }
    let band = (BAND_BYTES / row_bytes).clamp(1, rows);
    // The thread's band buffer from its last call (no fresh pages to fault in for every file),
    // zeroed; in 4-byte words, so rows whose length is a multiple of 4 are aligned for f32s.
    let mut words = BAND.take();
    words.clear();
    words.resize((band * row_bytes).div_ceil(4), 0);
    let buf = &mut bytemuck::cast_slice_mut::<u32, u8>(&mut words)[..band * row_bytes];
    let mut ok = true;
    let mut done = Ok(());
    for start in (0..rows).step_by(band) {
        let n = band.min(rows - start);
        let part = &mut buf[..n * row_bytes];
        ok &= part
            .par_chunks_mut(row_bytes)
            .enumerate()
            .map(|(k, row)| fill(start + k, row))
            .reduce(|| true, |a, b| a && b);
        done = sink(part);
        if done.is_err() {
            break;
        }
    }
    BAND.set(words);
    done.map(|()| ok)
}

std::thread_local! {
    /// [`for_row_bands`]' buffer, kept by each thread between calls (a call made while another
    /// runs on the same thread, inside its parallel fill, takes a new one).
    static BAND: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Like [`for_row_bands`] for text of varying length: `line(row, text)` appends the text of
/// one row; bands of rows are formatted in parallel and handed to `sink` in row order.
pub(crate) fn for_text_bands(
    rows: usize,
    line: &(dyn Fn(usize, &mut String) + Sync),
    mut sink: impl FnMut(&str) -> Result<()>,
) -> Result<()> {
    use rayon::prelude::*;
    const BAND_ROWS: usize = 64;
    for start in (0..rows).step_by(BAND_ROWS) {
        let end = (start + BAND_ROWS).min(rows);
        let texts: Vec<String> = (start..end)
            .into_par_iter()
            .map(|r| {
                let mut s = String::new();
                line(r, &mut s);
                s
            })
            .collect();
        for t in &texts {
            sink(t)?;
        }
    }
    Ok(())
}

/// [`for_row_bands`] into a writer (`path` names the file in I/O errors).
pub(crate) fn write_row_bands(
    w: &mut dyn std::io::Write,
    path: &Path,
    rows: usize,
    row_bytes: usize,
    fill: impl Fn(usize, &mut [u8]) -> bool + Sync,
) -> Result<bool> {
    for_row_bands(rows, row_bytes, fill, |band| w.write_all(band).map_err(atomic::io_err(path)))
}

/// Checks an output height range `[lo, hi]` for the 16-bit writers.
pub(crate) fn check_range(lo: f32, hi: f32) -> Result<()> {
    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
        return Err(Error::param("height range", format!("[{lo}, {hi}]"), "finite bounds with lo < hi"));
    }
    Ok(())
}

/// Maps a height to 16 bits: `q = round((h − lo) / (hi − lo) × 65535)`, rounding half away
/// from zero, clamped to 0..=65535 (heights outside `[lo, hi]` saturate; NaN gives 0). The
/// round trip `lo + q / 65535 × (hi − lo)` is within half a step, `(hi − lo) / 131070`.
#[inline]
pub fn quantize_u16(h: f32, lo: f32, hi: f32) -> u16 {
    let t = (h as f64 - lo as f64) / (hi as f64 - lo as f64);
    crate::render::round_clamped(t * 65535.0, 65535.0) as u16
}

/// Quantises a whole heightmap with [`quantize_u16`], row-major.
pub fn quantize_map_u16(map: &Heightmap, lo: f32, hi: f32) -> Result<Vec<u16>> {
    check_range(lo, hi)?;
    Ok(map.as_slice().iter().map(|&h| quantize_u16(h, lo, hi)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantize_rounds_and_saturates() {
        assert_eq!(quantize_u16(0.0, 0.0, 1.0), 0);
        assert_eq!(quantize_u16(1.0, 0.0, 1.0), 65535);
        assert_eq!(quantize_u16(0.5, 0.0, 1.0), 32768); // 32767.5 rounds up
        assert_eq!(quantize_u16(-3.0, 0.0, 1.0), 0);
        assert_eq!(quantize_u16(7.0, 0.0, 1.0), 65535);
        assert_eq!(quantize_u16(f32::NAN, 0.0, 1.0), 0);
        assert_eq!(quantize_u16(150.0, 100.0, 200.0), 32768);
    }

    #[test]
    fn detect_prefers_magic_over_extension() {
        assert_eq!(FileFormat::detect(Path::new("a.r16"), b"\x89PNG\r\n\x1a\n...."), Some(FileFormat::Png));
        assert_eq!(FileFormat::detect(Path::new("a.r16"), &[1, 2, 3, 4]), Some(FileFormat::R16));
        assert_eq!(FileFormat::detect(Path::new("a.TIF"), &[1, 2]), Some(FileFormat::Tiff));
        assert_eq!(FileFormat::detect(Path::new("a.bin"), &[1, 2]), None);
        for name in FileFormat::NAMES {
            assert!(FileFormat::from_name(name).is_some(), "{name}");
        }
    }

    #[test]
    fn unknown_format_is_a_format_error() {
        let err = decode_heightmap(&[0; 8], Path::new("x.bin"), &ReadOptions::default()).unwrap_err();
        assert!(
            matches!(&err, Error::Format { message, .. } if message.contains("unknown file format")),
            "{err}"
        );
    }
}
