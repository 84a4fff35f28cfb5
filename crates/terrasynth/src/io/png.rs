//! PNG (feature `png`): 16-bit grayscale heightmaps (Unreal's preferred import), RGB8 colour
//! maps, RGBA8 splat maps, written row by row through the `png` crate's stream writer
//! ([`write_png_rows`]); a reader for 8/16-bit gray and RGB through the `image` crate.

use std::io::{Cursor, Write};
use std::path::Path;

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};

use super::{MAX_DECODE_BYTES, atomic, format_err, guard_decoder};
use crate::{Error, Heightmap, Result};

fn dims_u32(width: usize, height: usize) -> Result<(u32, u32)> {
    match (u32::try_from(width), u32::try_from(height)) {
        (Ok(w), Ok(h)) => Ok((w, h)),
        _ => Err(Error::InvalidSize { width, height, reason: "PNG sides must fit in 32 bits".into() }),
    }
}

/// Pixel layout of a PNG written by [`write_png_rows`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PngLayout {
    /// 8-bit grey, 1 byte per pixel.
    Gray8,
    /// 16-bit grey, 2 bytes per pixel, **big-endian** (PNG byte order).
    Gray16,
    /// 8-bit RGB, 3 bytes per pixel.
    Rgb8,
    /// 8-bit RGBA, 4 bytes per pixel.
    Rgba8,
}

impl PngLayout {
    /// Bytes per pixel.
    pub fn bytes_per_pixel(self) -> usize {
        match self {
            Self::Gray8 => 1,
            Self::Gray16 => 2,
            Self::Rgb8 => 3,
            Self::Rgba8 => 4,
        }
    }

    fn color_and_depth(self) -> (png::ColorType, png::BitDepth) {
        match self {
            Self::Gray8 => (png::ColorType::Grayscale, png::BitDepth::Eight),
            Self::Gray16 => (png::ColorType::Grayscale, png::BitDepth::Sixteen),
            Self::Rgb8 => (png::ColorType::Rgb, png::BitDepth::Eight),
            Self::Rgba8 => (png::ColorType::Rgba, png::BitDepth::Eight),
        }
    }
}

/// Size of the IDAT chunks of [`write_png_rows`] (1 MiB; the chunk overhead is 12 bytes).
pub const IDAT_CHUNK_BYTES: usize = 1 << 20;

/// Writes a PNG row by row, atomically, without holding the image: `fill(row, bytes)` writes
/// row `row` (`width × bytes_per_pixel` bytes, 16-bit samples big-endian). Rows are computed in
/// bands of about 4 MiB, the rows of a band in parallel, so `fill` must depend only on its row
/// (then the file does not depend on the thread count).
///
/// Encoding: the Paeth filter on every row and the `png` crate's fast deflate
/// (`Compression::Fast`, the `fdeflate` encoder); image data in [`IDAT_CHUNK_BYTES`] chunks.
/// Until session 39 the filter was the crate's adaptive choice per row (the smallest sum of
/// absolute differences of the five filters), which picks Paeth on nearly every row of our
/// images: Paeth alone makes the PNGs of `rivers` at 1025² 0.3 % larger in all (3.99 → 4.00
/// MB) and saves about 4 ms of their 80 on one thread. Measured at 4097² (docs/OUTPUTS.md, "Large maps"): zlib's
/// default level 6 would make the files 21–49 % smaller but its deflate alone takes 0.5–4 s
/// per image, against 0.2–1.3 s for the whole file now.
pub fn write_png_rows(
    path: impl AsRef<Path>,
    width: usize,
    height: usize,
    layout: PngLayout,
    fill: impl Fn(usize, &mut [u8]) + Sync,
) -> Result<()> {
    let path = path.as_ref();
    let (w, h) = dims_u32(width, height)?;
    if width == 0 || height == 0 {
        return Err(Error::InvalidSize { width, height, reason: "a PNG needs at least one pixel".into() });
    }
    let fail = |e: png::EncodingError| format_err(path, format!("PNG encoding failed: {e}"));
    atomic::write_atomic(path, |out| {
        let mut enc = png::Encoder::new(out, w, h);
        let (color, depth) = layout.color_and_depth();
        enc.set_color(color);
        enc.set_depth(depth);
        enc.set_compression(png::Compression::Fast);
        enc.set_filter(png::Filter::Paeth);
        let mut writer = enc.write_header().map_err(fail)?;
        let mut stream = writer.stream_writer_with_size(IDAT_CHUNK_BYTES).map_err(fail)?;
        let row_bytes = width * layout.bytes_per_pixel();
        super::for_row_bands(
            height,
            row_bytes,
            |y, row| {
                fill(y, row);
                true
            },
            |band| stream.write_all(band).map_err(|e| format_err(path, format!("PNG encoding failed: {e}"))),
        )?;
        stream.finish().map_err(fail)?;
        writer.finish().map_err(fail)
    })
}

/// Writes a 16-bit grayscale PNG: each height is mapped from `[lo, hi]` to 0..=65535 by
/// [`super::quantize_u16`] (`round((h − lo)/(hi − lo) · 65535)`, saturating outside the range,
/// NaN → 0). Use the same `lo`/`hi` for every tile of a world (never per-tile normalisation).
/// Streamed row by row (see [`write_png_rows`]).
pub fn write_png16(path: impl AsRef<Path>, map: &Heightmap, lo: f32, hi: f32) -> Result<()> {
    super::check_range(lo, hi)?;
    let w = map.width();
    write_png_rows(path, w, map.height(), PngLayout::Gray16, |y, row| {
        for (px, &v) in row.chunks_exact_mut(2).zip(&map.as_slice()[y * w..(y + 1) * w]) {
            px.copy_from_slice(&super::quantize_u16(v, lo, hi).to_be_bytes());
        }
    })
}

fn check_len(width: usize, height: usize, channels: usize, got: usize) -> Result<(u32, u32)> {
    let (w, h) = dims_u32(width, height)?;
    if width.checked_mul(height).and_then(|n| n.checked_mul(channels)) != Some(got) {
        return Err(Error::SizeMismatch {
            what: format!("{channels}-channel pixel buffer ({got} bytes)"),
            expected_w: width,
            expected_h: height,
            got_w: got / channels.max(1) / height.max(1),
            got_h: height,
        });
    }
    Ok((w, h))
}

/// Writes a whole pixel buffer with [`write_png_rows`] (no copy).
fn write_buffer(path: &Path, width: usize, height: usize, layout: PngLayout, bytes: &[u8]) -> Result<()> {
    check_len(width, height, layout.bytes_per_pixel(), bytes.len())?;
    let row = width * layout.bytes_per_pixel();
    write_png_rows(path, width, height, layout, |y, dst| dst.copy_from_slice(&bytes[y * row..(y + 1) * row]))
}

/// Writes an 8-bit RGB PNG (a colour map or shaded relief) from `width × height × 3` bytes,
/// row-major.
pub fn write_rgb8(path: impl AsRef<Path>, width: usize, height: usize, rgb: &[u8]) -> Result<()> {
    write_buffer(path.as_ref(), width, height, PngLayout::Rgb8, rgb)
}

/// Writes an 8-bit RGBA PNG (a splat map: four layer weights per cell) from
/// `width × height × 4` bytes, row-major.
pub fn write_rgba8(path: impl AsRef<Path>, width: usize, height: usize, rgba: &[u8]) -> Result<()> {
    write_buffer(path.as_ref(), width, height, PngLayout::Rgba8, rgba)
}

/// Writes an 8-bit grayscale PNG (a hillshade or mask) from `width × height` bytes.
pub fn write_gray8(path: impl AsRef<Path>, width: usize, height: usize, gray: &[u8]) -> Result<()> {
    write_buffer(path.as_ref(), width, height, PngLayout::Gray8, gray)
}

/// Reads a PNG heightmap; see [`decode`].
pub fn read_png(path: impl AsRef<Path>) -> Result<Heightmap> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(atomic::io_err(path))?;
    decode(&bytes, path)
}

/// Decodes PNG bytes into heights in [0, 1]:
/// - gray 8-bit: `v / 255`; gray 16-bit: `v / 65535` (alpha, if any, is ignored);
/// - RGB/RGBA: converted by Rec. 709 luminance `0.2126 R + 0.7152 G + 0.0722 B` at the file's bit
///   depth (so a gray image saved as RGB reads back exactly).
///
/// The size is checked from the header (sides ≤ [`crate::grid::MAX_SIDE`], decoded buffer ≤
/// [`MAX_DECODE_BYTES`]) before decoding. Errors are [`Error::Format`] naming the file.
pub fn decode(bytes: &[u8], path: &Path) -> Result<Heightmap> {
    let fail = |e: image::ImageError| format_err(path, format!("not a readable PNG: {e}"));
    guard_decoder(path, "PNG", || {
        let mut reader = ImageReader::with_format(Cursor::new(bytes), ImageFormat::Png);
        let mut limits = image::Limits::default();
        limits.max_image_width = Some(crate::grid::MAX_SIDE as u32);
        limits.max_image_height = Some(crate::grid::MAX_SIDE as u32);
        limits.max_alloc = Some(MAX_DECODE_BYTES);
        reader.limits(limits);
        let decoder = reader.into_decoder().map_err(fail)?;
        let (w, h) = decoder.dimensions();
        super::check_decode_size(path, w as usize, h as usize, bytes.len())?;
        let image = DynamicImage::from_decoder(decoder).map_err(fail)?;
        let (w, h) = (w as usize, h as usize);
        let data: Vec<f32> = match image {
            DynamicImage::ImageLuma8(b) => b.into_raw().into_iter().map(|v| v as f32 / 255.0).collect(),
            DynamicImage::ImageLumaA8(b) => b.pixels().map(|p| p.0[0] as f32 / 255.0).collect(),
            DynamicImage::ImageLuma16(b) => b.into_raw().into_iter().map(|v| v as f32 / 65535.0).collect(),
            DynamicImage::ImageLumaA16(b) => b.pixels().map(|p| p.0[0] as f32 / 65535.0).collect(),
            DynamicImage::ImageRgb16(_) | DynamicImage::ImageRgba16(_) => {
                image.to_rgb16().pixels().map(|p| luminance(p.0.map(|c| c as f32)) / 65535.0).collect()
            }
            other => other.to_rgb8().pixels().map(|p| luminance(p.0.map(|c| c as f32)) / 255.0).collect(),
        };
        Heightmap::from_vec(w, h, 1.0, data)
    })
}

/// Rec. 709 luminance of an RGB triple (same unit as the input).
fn luminance([r, g, b]: [f32; 3]) -> f32 {
    0.2126 * r + 0.7152 * g + 0.0722 * b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same pixels through the `image` crate's encoder (what the writers used before
    /// streaming), decoded.
    fn decode_pixels(bytes: &[u8]) -> (u32, u32, image::ColorType, Vec<u8>) {
        let img = image::load_from_memory_with_format(bytes, ImageFormat::Png).unwrap();
        (img.width(), img.height(), img.color(), img.as_bytes().to_vec())
    }

    #[test]
    fn streamed_pngs_decode_to_the_same_pixels_as_the_image_encoder() {
        use image::ImageEncoder;
        use image::codecs::png::PngEncoder;
        let dir = std::env::temp_dir().join(format!("ts-png-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // 97 × 61: with the unit-test band size (700 bytes) every layout crosses many bands.
        let (w, h) = (97usize, 61usize);
        let px = |x: usize, y: usize, c: usize| ((x * 7 + y * 13 + c * 29 + (x * y) % 17) % 256) as u8;
        for (layout, ext) in [
            (PngLayout::Gray8, image::ExtendedColorType::L8),
            (PngLayout::Rgb8, image::ExtendedColorType::Rgb8),
            (PngLayout::Rgba8, image::ExtendedColorType::Rgba8),
        ] {
            let n = layout.bytes_per_pixel();
            let buf: Vec<u8> = (0..w * h * n).map(|i| px((i / n) % w, i / n / w, i % n)).collect();
            let path = dir.join("s.png");
            write_buffer(&path, w, h, layout, &buf).unwrap();
            let mut reference = Vec::new();
            PngEncoder::new(&mut reference).write_image(&buf, w as u32, h as u32, ext).unwrap();
            let got = std::fs::read(&path).unwrap();
            assert_eq!(decode_pixels(&got), decode_pixels(&reference), "{layout:?}");
            assert_eq!(decode_pixels(&got).3, buf, "{layout:?}");
        }
        // 16-bit: heights quantised, compared with the image crate's 16-bit encoder.
        let map =
            Heightmap::from_fn(w, h, 1.0, |x, y| ((x as f32 * 0.3).sin() + (y as f32 * 0.2).cos()) * 40.0)
                .unwrap();
        let path = dir.join("h.png");
        write_png16(&path, &map, -80.0, 80.0).unwrap();
        let q = super::super::quantize_map_u16(&map, -80.0, 80.0).unwrap();
        let native: Vec<u8> = q.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let mut reference = Vec::new();
        PngEncoder::new(&mut reference)
            .write_image(&native, w as u32, h as u32, image::ExtendedColorType::L16)
            .unwrap();
        let got = std::fs::read(&path).unwrap();
        assert_eq!(decode_pixels(&got), decode_pixels(&reference));
        let back = read_png(&path).unwrap();
        for (a, &b) in back.as_slice().iter().zip(&q) {
            assert_eq!(*a, b as f32 / 65535.0);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn streamed_png_is_identical_on_1_and_2_threads() {
        let dir = std::env::temp_dir().join(format!("ts-png-threads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files: Vec<Vec<u8>> = [1, 2]
            .iter()
            .map(|&n| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
                let path = dir.join(format!("t{n}.png"));
                pool.install(|| {
                    write_png_rows(&path, 83, 71, PngLayout::Rgb8, |y, row| {
                        for (x, p) in row.iter_mut().enumerate() {
                            *p = ((x * y + y) % 251) as u8;
                        }
                    })
                })
                .unwrap();
                std::fs::read(&path).unwrap()
            })
            .collect();
        assert!(files[0] == files[1]);
        assert!(write_png_rows(dir.join("z.png"), 0, 5, PngLayout::Gray8, |_, _| {}).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn luminance_of_gray_is_gray() {
        assert!((luminance([100.0, 100.0, 100.0]) - 100.0).abs() < 1e-4);
    }

    #[test]
    fn garbage_and_truncated_bytes_are_format_errors() {
        let p = Path::new("bad.png");
        assert!(matches!(decode(b"not a png at all", p), Err(Error::Format { .. })));
        assert!(matches!(decode(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", p), Err(Error::Format { .. })));
        assert!(matches!(decode(&[], p), Err(Error::Format { .. })));
    }
}
