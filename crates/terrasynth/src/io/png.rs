//! PNG (feature `png`, through the `image` crate): 16-bit grayscale heightmaps (Unreal's
//! preferred import), RGB8 colour maps, RGBA8 splat maps; a reader for 8/16-bit gray and RGB.

use std::io::Cursor;
use std::path::Path;

use image::codecs::png::PngEncoder;
use image::{DynamicImage, ImageBuffer, ImageDecoder, ImageFormat, ImageReader, Luma, Rgb, Rgba};

use super::{MAX_DECODE_BYTES, atomic, format_err, guard_decoder, quantize_map_u16};
use crate::{Error, Heightmap, Result};

fn dims_u32(width: usize, height: usize) -> Result<(u32, u32)> {
    match (u32::try_from(width), u32::try_from(height)) {
        (Ok(w), Ok(h)) => Ok((w, h)),
        _ => Err(Error::InvalidSize { width, height, reason: "PNG sides must fit in 32 bits".into() }),
    }
}

fn write_image(path: &Path, image: DynamicImage) -> Result<()> {
    atomic::write_atomic(path, |w| {
        image
            .write_with_encoder(PngEncoder::new(w))
            .map_err(|e| format_err(path, format!("PNG encoding failed: {e}")))
    })
}

/// Writes a 16-bit grayscale PNG: each height is mapped from `[lo, hi]` to 0..=65535 by
/// [`super::quantize_u16`] (`round((h − lo)/(hi − lo) · 65535)`, saturating outside the range,
/// NaN → 0). Use the same `lo`/`hi` for every tile of a world (never per-tile normalisation).
pub fn write_png16(path: impl AsRef<Path>, map: &Heightmap, lo: f32, hi: f32) -> Result<()> {
    let q = quantize_map_u16(map, lo, hi)?;
    let (w, h) = dims_u32(map.width(), map.height())?;
    let buf = ImageBuffer::<Luma<u16>, Vec<u16>>::from_raw(w, h, q).expect("buffer length is width * height");
    write_image(path.as_ref(), DynamicImage::ImageLuma16(buf))
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

/// Writes an 8-bit RGB PNG (a colour map or shaded relief) from `width × height × 3` bytes,
/// row-major.
pub fn write_rgb8(path: impl AsRef<Path>, width: usize, height: usize, rgb: &[u8]) -> Result<()> {
    let (w, h) = check_len(width, height, 3, rgb.len())?;
    let buf = ImageBuffer::<Rgb<u8>, Vec<u8>>::from_raw(w, h, rgb.to_vec()).expect("length checked");
    write_image(path.as_ref(), DynamicImage::ImageRgb8(buf))
}

/// Writes an 8-bit RGBA PNG (a splat map: four layer weights per cell) from
/// `width × height × 4` bytes, row-major.
pub fn write_rgba8(path: impl AsRef<Path>, width: usize, height: usize, rgba: &[u8]) -> Result<()> {
    let (w, h) = check_len(width, height, 4, rgba.len())?;
    let buf = ImageBuffer::<Rgba<u8>, Vec<u8>>::from_raw(w, h, rgba.to_vec()).expect("length checked");
    write_image(path.as_ref(), DynamicImage::ImageRgba8(buf))
}

/// Writes an 8-bit grayscale PNG (a hillshade or mask) from `width × height` bytes.
pub fn write_gray8(path: impl AsRef<Path>, width: usize, height: usize, gray: &[u8]) -> Result<()> {
    let (w, h) = check_len(width, height, 1, gray.len())?;
    let buf = ImageBuffer::<Luma<u8>, Vec<u8>>::from_raw(w, h, gray.to_vec()).expect("length checked");
    write_image(path.as_ref(), DynamicImage::ImageLuma8(buf))
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
        super::check_decode_size(path, w as usize, h as usize)?;
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
