//! TIFF (feature `tiff`, through the `tiff` crate): f32 heightmaps with GeoTIFF tags, and a
//! reader for gray f32/f64, u16 and u8 TIFFs (the `image` crate cannot read float TIFFs).
//!
//! GeoTIFF georeferencing (GeoTIFF 1.0 tags, written as plain TIFF tags):
//! - `ModelPixelScaleTag` (33550) = `[cell_size, cell_size, 0]`: one pixel is one cell, in metres;
//! - `ModelTiepointTag` (33922) = `[0, 0, 0, X0, Y0, 0]`: the top-left corner of pixel (0, 0)
//!   sits at model coordinates `(X0, Y0)`; by default `X0 = 0`, `Y0 = height × cell_size`, so
//!   the map covers `x ∈ [0, W·cs]` eastwards and `y ∈ [0, H·cs]` northwards (row 0 is north);
//! - `GeoKeyDirectoryTag` (34735): model type *projected* (1024 = 1), raster type *PixelIsArea*
//!   (1025 = 1), a citation (1026, in `GeoAsciiParamsTag`), the projected CRS (3072) and linear
//!   units metre (3076 = 9001).
//!
//! CRS choice: a generated terrain is not anywhere on Earth, so by default the CRS is
//! *user-defined* (3072 = 32767): a local engineering grid in metres. GIS tools then show the
//! right pixel size and extent without pretending to a real place. Pass an EPSG code in
//! [`GeoTiffOptions::epsg`] (a projected CRS in metres, e.g. a UTM zone) to place the map.

use std::io::Cursor;
use std::path::Path;

use tiff::decoder::{Decoder, DecodingResult, Limits};
use tiff::encoder::{TiffEncoder, colortype};
use tiff::tags::Tag;

use super::{atomic, format_err, guard_decoder};
use crate::{Error, Heightmap, Result};

/// GeoKey id: model type (1 = projected).
pub const GEOKEY_MODEL_TYPE: u16 = 1024;
/// GeoKey id: raster type (1 = PixelIsArea).
pub const GEOKEY_RASTER_TYPE: u16 = 1025;
/// GeoKey id: citation (ASCII).
pub const GEOKEY_CITATION: u16 = 1026;
/// GeoKey id: projected CRS (EPSG code, or 32767 = user-defined).
pub const GEOKEY_PROJECTED_CRS: u16 = 3072;
/// GeoKey id: projected linear units (9001 = metre).
pub const GEOKEY_LINEAR_UNITS: u16 = 3076;
/// The GeoTIFF "user-defined" code.
pub const USER_DEFINED: u16 = 32767;

/// Georeferencing choices for [`write_geotiff`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GeoTiffOptions {
    /// EPSG code of a projected CRS in metres; `None` (default) writes a user-defined local
    /// engineering grid.
    pub epsg: Option<u16>,
    /// Model coordinates of the top-left corner of the map, metres; `None` (default) puts the
    /// bottom-left corner at (0, 0).
    pub origin: Option<[f64; 2]>,
}

/// The GeoTIFF tags of a file, as read back by [`read_geo_tags`].
#[derive(Clone, Debug, PartialEq)]
pub struct GeoTags {
    /// ModelPixelScaleTag values.
    pub pixel_scale: Vec<f64>,
    /// ModelTiepointTag values.
    pub tiepoint: Vec<f64>,
    /// GeoKeyDirectoryTag values (header of 4 shorts, then 4 shorts per key).
    pub geo_keys: Vec<u16>,
}

impl GeoTags {
    /// The value of one short-valued GeoKey (stored in the directory itself), if present.
    pub fn key(&self, id: u16) -> Option<u16> {
        self.geo_keys.get(4..)?.chunks_exact(4).find(|k| k[0] == id && k[1] == 0).map(|k| k[3])
    }
}

const CITATION: &str = "terrasynth local engineering grid, metres|";

/// Writes `map` as a gray f32 TIFF (uncompressed, row 0 first) with the GeoTIFF tags described
/// in the module docs. Heights are stored as they are, so the round trip is bit-exact.
pub fn write_geotiff(path: impl AsRef<Path>, map: &Heightmap, opts: &GeoTiffOptions) -> Result<()> {
    let path = path.as_ref();
    let (w, h) = match (u32::try_from(map.width()), u32::try_from(map.height())) {
        (Ok(w), Ok(h)) => (w, h),
        _ => {
            return Err(Error::InvalidSize {
                width: map.width(),
                height: map.height(),
                reason: "TIFF sides must fit in 32 bits".into(),
            });
        }
    };
    let cs = map.cell_size();
    let [x0, y0] = opts.origin.unwrap_or([0.0, map.height() as f64 * cs]);
    if !(x0.is_finite() && y0.is_finite()) {
        return Err(Error::param("origin", format!("[{x0}, {y0}]"), "finite coordinates in metres"));
    }
    let crs = opts.epsg.unwrap_or(USER_DEFINED);
    let keys: [u16; 24] = [
        1,
        1,
        0,
        5, // directory version 1, revision 1.0, 5 keys
        GEOKEY_MODEL_TYPE,
        0,
        1,
        1, // projected
        GEOKEY_RASTER_TYPE,
        0,
        1,
        1, // PixelIsArea
        GEOKEY_CITATION,
        34737,
        CITATION.len() as u16,
        0, // in GeoAsciiParamsTag
        GEOKEY_PROJECTED_CRS,
        0,
        1,
        crs, // EPSG or user-defined
        GEOKEY_LINEAR_UNITS,
        0,
        1,
        9001, // metre
    ];
    let fail = |e: tiff::TiffError| format_err(path, format!("TIFF encoding failed: {e}"));
    atomic::write_atomic_seekable(path, |out| {
        let mut enc = TiffEncoder::new(out).map_err(fail)?;
        let mut image = enc.new_image::<colortype::Gray32Float>(w, h).map_err(fail)?;
        let dir = image.encoder();
        dir.write_tag(Tag::ModelPixelScaleTag, &[cs, cs, 0.0][..]).map_err(fail)?;
        dir.write_tag(Tag::ModelTiepointTag, &[0.0, 0.0, 0.0, x0, y0, 0.0][..]).map_err(fail)?;
        dir.write_tag(Tag::GeoKeyDirectoryTag, &keys[..]).map_err(fail)?;
        dir.write_tag(Tag::GeoAsciiParamsTag, CITATION).map_err(fail)?;
        image.write_data(map.as_slice()).map_err(fail)
    })
}

/// A decoder of `bytes` with [`tag_limits`]; [`decode`] raises them to [`image_limits`] once
/// the image's size has been checked.
fn decoder<'a>(bytes: &'a [u8], path: &Path) -> Result<Decoder<Cursor<&'a [u8]>>> {
    Decoder::new(Cursor::new(bytes))
        .map(|d| d.with_limits(tag_limits(bytes.len())))
        .map_err(|e| format_err(path, format!("not a readable TIFF: {e}")))
}

/// Limits for reading the header and tags of a `file_bytes`-byte file. The `tiff` crate has one
/// buffer limit for both tags and pixels; a tag cannot hold more values than the file has
/// bytes, so up to 32 bytes (one decoded value) per file byte are allowed here. Found by
/// fuzzing: a 733-byte file whose tag claimed about a hundred million values made the decoder
/// reserve gigabytes under the pixel limit before it found the values missing.
fn tag_limits(file_bytes: usize) -> Limits {
    let mut limits = Limits::default();
    limits.decoding_buffer_size = file_bytes.saturating_mul(32).max(4096);
    limits
}

/// Limits for decoding the pixels: the decoded image up to [`super::MAX_DECODE_BYTES`] (its
/// size was checked from the header first).
fn image_limits() -> Limits {
    let mut limits = Limits::default();
    limits.decoding_buffer_size = usize::try_from(super::MAX_DECODE_BYTES).unwrap_or(usize::MAX);
    limits
}

/// Reads the GeoTIFF tags of a file (errors if one of the three is missing).
pub fn read_geo_tags(path: impl AsRef<Path>) -> Result<GeoTags> {
    let path = path.as_ref();
    let bytes = super::read_input_file(path, super::MAX_INPUT_FILE_BYTES)?;
    decode_geo_tags(&bytes, path)
}

/// Reads the GeoTIFF tags from TIFF bytes in memory (`path` names the file in errors); see
/// [`read_geo_tags`]. Corrupt tags give [`crate::Error::Format`], never a panic.
pub fn decode_geo_tags(bytes: &[u8], path: &Path) -> Result<GeoTags> {
    guard_decoder(path, "TIFF", || {
        let mut dec = decoder(bytes, path)?;
        let tag = |e: tiff::TiffError| format_err(path, format!("GeoTIFF tag missing or unreadable: {e}"));
        Ok(GeoTags {
            pixel_scale: dec.get_tag_f64_vec(Tag::ModelPixelScaleTag).map_err(tag)?,
            tiepoint: dec.get_tag_f64_vec(Tag::ModelTiepointTag).map_err(tag)?,
            geo_keys: dec.get_tag_u16_vec(Tag::GeoKeyDirectoryTag).map_err(tag)?,
        })
    })
}

/// Reads a TIFF heightmap; see [`decode`].
pub fn read(path: impl AsRef<Path>) -> Result<Heightmap> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(atomic::io_err(path))?;
    decode(&bytes, path)
}

/// Decodes the first image of a TIFF: single-channel gray, f32 or f64 (values kept), u16
/// (`v / 65535`) or u8 (`v / 255`). Other layouts (RGB, palette, several samples) are refused
/// with [`Error::Format`]. The size is checked from the header before decoding. The cell
/// size is taken from `ModelPixelScaleTag` when present and valid, else 1 m.
pub fn decode(bytes: &[u8], path: &Path) -> Result<Heightmap> {
    guard_decoder(path, "TIFF", || {
        let mut dec = decoder(bytes, path)?;
        let fail = |e: tiff::TiffError| format_err(path, format!("not a readable TIFF: {e}"));
        let (w, h) = dec.dimensions().map_err(fail)?;
        let (w, h) = (w as usize, h as usize);
        super::check_decode_size(path, w, h, bytes.len())?;
        let color = dec.colortype().map_err(fail)?;
        if !matches!(color, tiff::ColorType::Gray(8 | 16 | 32 | 64)) {
            return Err(format_err(
                path,
                format!("unsupported TIFF layout {color:?}: a single gray channel is needed"),
            ));
        }
        let cell = dec
            .get_tag_f64_vec(Tag::ModelPixelScaleTag)
            .ok()
            .and_then(|v| v.first().copied())
            .filter(|c| c.is_finite() && *c > 0.0)
            .unwrap_or(1.0);
        let mut dec = dec.with_limits(image_limits());
        let data: Vec<f32> = match dec.read_image().map_err(fail)? {
            DecodingResult::F32(v) => v,
            DecodingResult::F64(v) => v.into_iter().map(|x| x as f32).collect(),
            DecodingResult::U16(v) => v.into_iter().map(|x| x as f32 / 65535.0).collect(),
            DecodingResult::U8(v) => v.into_iter().map(|x| x as f32 / 255.0).collect(),
            _ => return Err(format_err(path, "unsupported TIFF sample type (need f32, f64, u16 or u8)")),
        };
        if data.len() != w * h {
            return Err(format_err(path, format!("TIFF holds {} samples, {w}x{h} expected", data.len())));
        }
        Heightmap::from_vec(w, h, cell, data)
    })
}
