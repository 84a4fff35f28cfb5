//! OpenEXR (feature `exr`): one 32-bit float channel named `Y`, lossless ZIP compression.
//! The preferred lossless height format of Godot Terrain3D and HTerrain; values are stored as
//! they are (no normalisation), so the round trip is bit-exact.

use std::io::Cursor;
use std::path::Path;

use exr::compression::Compression;
use exr::prelude::{
    Encoding, FlatSamples, Image, Layer, LayerAttributes, ReadChannels, ReadLayers, SpecificChannels, Vec2,
    WritableImage,
};

use super::{atomic, format_err, guard_decoder};
use crate::{Heightmap, Result};

/// Scan lines per block of OpenEXR's ZIP compression (`ZIP_COMPRESSION`, the exr crate's
/// `ZIP16`).
const ZIP_LINES: usize = 16;

/// zlib level of the written blocks. Level 1 makes `height.exr` about 2 % larger than the exr
/// crate's level 4 and compresses its blocks about 3.5× faster (1025² `rivers`: 2.13 against
/// 2.09 MB, 0.021 against 0.075 s of zlib on one core); any level reads back bit-exact.
const ZIP_LEVEL: u8 = 1;

/// Writes `map` as a single-layer EXR with one f32 channel `Y` (layer name `height`), ZIP
/// compressed (lossless; blocks of 16 scan lines, compressed in parallel).
pub fn write(path: impl AsRef<Path>, map: &Heightmap) -> Result<()> {
    let path = path.as_ref();
    atomic::write_atomic_seekable(path, |w| write_zip(w, map, ZIP_LEVEL).map_err(|e| format_err(path, e)))
}

/// The EXR file of `map` into `out`, its blocks compressed at zlib `level` on the caller's
/// rayon pool. The header is the exr crate's own for this image (the crate's writer only
/// compresses at one level, and its parallel mode builds a thread pool per file); the blocks
/// are OpenEXR's ZIP format: the block's little-endian samples, their bytes split into the even
/// and the odd ones, each byte replaced by its difference to the previous one plus 128, then
/// zlib; a block that would not shrink is stored raw.
fn write_zip(
    out: impl std::io::Write + std::io::Seek,
    map: &Heightmap,
    level: u8,
) -> std::result::Result<(), String> {
    use exr::block::chunk::{Chunk, CompressedBlock, CompressedScanLineBlock};
    use exr::block::writer::ChunksWriter;
    use rayon::prelude::*;

    let (w, data) = (map.width(), map.as_slice());
    // Only the header is taken from this image: its pixel function is never called.
    let channels = SpecificChannels::build().with_channel("Y").with_pixel_fn(|_: Vec2<usize>| (0.0f32,));
    let layer = Layer::new((map.width(), map.height()), LayerAttributes::named("height"), ENCODING, channels);
    let image = Image::from_layer(layer);
    let headers = image.write().infer_meta_data();
    let block = ZIP_LINES * w.max(1);
    let fail = |e: exr::error::Error| format!("EXR encoding failed: {e}");
    exr::block::write(out, headers, true, |_, writer| {
        // A band of blocks at a time, so only one band's compressed bytes wait in memory.
        for (band, cells) in data.chunks(BAND_BLOCKS * block).enumerate() {
            let chunks: Vec<Chunk> = cells
                .par_chunks(block)
                .enumerate()
                .map(|(b, rows)| Chunk {
                    layer_index: 0,
                    compressed_block: CompressedBlock::ScanLine(CompressedScanLineBlock {
                        y_coordinate: ((band * BAND_BLOCKS + b) * ZIP_LINES) as i32,
                        compressed_pixels_le: zip_block(rows, level),
                    }),
                })
                .collect();
            for (b, chunk) in chunks.into_iter().enumerate() {
                writer.write_chunk(band * BAND_BLOCKS + b, chunk)?;
            }
        }
        Ok(())
    })
    .map_err(fail)
}

/// Blocks compressed in parallel before they are written (1 024 scan lines).
const BAND_BLOCKS: usize = 64;

/// The encoding of the written layer (ZIP over [`ZIP_LINES`] scan lines, increasing y).
const ENCODING: Encoding = Encoding::SMALL_LOSSLESS;

/// One block of OpenEXR's ZIP compression (see [`write_zip`]). A sample's little-endian bytes
/// `b0 b1 b2 b3` are two byte pairs, so its even bytes `b0 b2` go to the first half and its
/// odd bytes `b1 b3` to the second, in sample order; then each byte but the first becomes its
/// difference to the one before it, plus 128.
fn zip_block(samples: &[f32], level: u8) -> Vec<u8> {
    let n = 4 * samples.len();
    let mut split = vec![0u8; n];
    let (even, odd) = split.split_at_mut(n / 2);
    for ((v, e), o) in samples.iter().zip(even.chunks_exact_mut(2)).zip(odd.chunks_exact_mut(2)) {
        let b = v.to_le_bytes();
        (e[0], e[1], o[0], o[1]) = (b[0], b[2], b[1], b[3]);
    }
    let mut delta = vec![0u8; n];
    if let (Some(d), Some(&s)) = (delta.first_mut(), split.first()) {
        *d = s;
    }
    for (d, (&here, &before)) in delta.iter_mut().skip(1).zip(split.iter().skip(1).zip(&split)) {
        *d = here.wrapping_sub(before).wrapping_add(128);
    }
    let packed = miniz_oxide::deflate::compress_to_vec_zlib(&delta, level);
    if packed.len() < n { packed } else { samples.iter().flat_map(|v| v.to_le_bytes()).collect() }
}

/// Reads an EXR heightmap; see [`decode`].
pub fn read(path: impl AsRef<Path>) -> Result<Heightmap> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(atomic::io_err(path))?;
    decode(&bytes, path)
}

/// Decodes EXR bytes: the first valid layer, its channel `Y` (else `R`, else the first
/// channel), f16/u32 samples converted to f32. The layer size is checked from the header
/// before the pixels are decoded.
pub fn decode(bytes: &[u8], path: &Path) -> Result<Heightmap> {
    let fail = |e: exr::error::Error| format_err(path, format!("not a readable EXR: {e}"));
    guard_decoder(path, "EXR", || {
        let meta = exr::meta::MetaData::read_from_buffered(Cursor::new(bytes), false).map_err(fail)?;
        for header in meta.headers.iter() {
            let size = header.layer_size;
            super::check_decode_size(path, size.0, size.1, bytes.len())?;
            // DWA is lossy (a DCT codec for colour images), wrong for heights, and the exr
            // crate's DWA decoder (1.74) panics with "capacity overflow" inside its own
            // worker threads on a 693-byte file the fuzzer made, which aborts the process
            // (fuzz/corpus/import_exr/regression-dwaa-block-capacity-overflow).
            let lossy = match header.compression {
                Compression::DWAA(_) => Some("DWAA"),
                Compression::DWAB(_) => Some("DWAB"),
                _ => None,
            };
            if let Some(name) = lossy {
                return Err(format_err(
                    path,
                    format!(
                        "EXR compression {name} is lossy and not read for heightmaps: allowed none, RLE, ZIP, PIZ, PXR24, B44 (save the file with ZIP or no compression)"
                    ),
                ));
            }
        }
        let image = exr::prelude::read()
            .no_deep_data()
            .largest_resolution_level()
            .all_channels()
            .first_valid_layer()
            .all_attributes()
            .from_buffered(Cursor::new(bytes))
            .map_err(fail)?;
        let layer = image.layer_data;
        let (w, h) = (layer.size.0, layer.size.1);
        let channels = &layer.channel_data.list;
        let pick = ["Y", "R"]
            .iter()
            .find_map(|name| channels.iter().find(|c| c.name.eq(name)))
            .or_else(|| channels.first())
            .ok_or_else(|| format_err(path, "EXR layer has no channel"))?;
        let data: Vec<f32> = match &pick.sample_data {
            FlatSamples::F32(v) => v.clone(),
            FlatSamples::F16(v) => v.iter().map(|s| s.to_f32()).collect(),
            FlatSamples::U32(v) => v.iter().map(|&s| s as f32).collect(),
        };
        Heightmap::from_vec(w, h, 1.0, data).map_err(|e| format_err(path, format!("EXR channel size: {e}")))
    })
}

#[cfg(test)]
mod tests {
    use exr::prelude::{AnyChannel, AnyChannels, SmallVec};

    use super::*;

    /// The file of the exr crate's own writer for `map` (ZIP at its level 4), built from a
    /// copied flat channel.
    fn crate_file(map: &Heightmap) -> Vec<u8> {
        let channel = AnyChannel::new("Y", FlatSamples::F32(map.as_slice().to_vec()));
        let layer = Layer::new(
            (map.width(), map.height()),
            LayerAttributes::named("height"),
            Encoding::SMALL_LOSSLESS,
            AnyChannels::sort(SmallVec::from_vec(vec![channel])),
        );
        let mut reference = Vec::new();
        Image::from_layer(layer).write().non_parallel().to_buffered(Cursor::new(&mut reference)).unwrap();
        reference
    }

    #[test]
    fn blocks_at_the_crates_level_equal_its_own_writer_and_every_level_round_trips() {
        let dir = std::env::temp_dir().join(format!("ts-exr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // 67 rows: four full blocks of 16 lines and a last one of 3; smooth rows compress,
        // the noisy columns keep some blocks near the raw size.
        let map = Heightmap::from_fn(131, 67, 2.0, |x, y| {
            let noise = ((x * 2_654_435_761usize) ^ (y * 40_503)) % 1_000_003;
            if x < 5 { noise as f32 * 1e-3 } else { ((x * 31 + y * 17) % 101) as f32 * 0.37 - 9.0 }
        })
        .unwrap();
        let mut ours = Vec::new();
        write_zip(Cursor::new(&mut ours), &map, 4).unwrap();
        assert!(ours == crate_file(&map), "EXR bytes at level 4 differ from the exr crate's writer");
        // More blocks than one band (69 blocks of 16 lines, the last of 12): the second band's
        // blocks keep their indices and rows.
        let tall = Heightmap::from_fn(7, 1100, 1.0, |x, y| (x as f32 - 3.0) * 0.25 + (y as f32 * 0.01).sin())
            .unwrap();
        let mut banded = Vec::new();
        write_zip(Cursor::new(&mut banded), &tall, 4).unwrap();
        assert!(banded == crate_file(&tall), "EXR bytes over two bands differ from the exr crate's writer");
        // A block of pure noise does not shrink: stored raw, as OpenEXR readers expect.
        let mut rng = terrasynth_noise::rng::SplitMix64::new(9);
        let noise =
            Heightmap::from_fn(64, 20, 1.0, |_, _| f32::from_bits(rng.next_u64() as u32 & 0x7f7f_ffff))
                .unwrap();
        let mut raw = Vec::new();
        write_zip(Cursor::new(&mut raw), &noise, 4).unwrap();
        assert!(raw == crate_file(&noise), "EXR bytes with raw blocks differ from the exr crate's writer");
        for m in [&map, &noise] {
            let path = dir.join("a.exr");
            write(&path, m).unwrap();
            let back = read(&path).unwrap();
            assert_eq!((back.width(), back.height()), (m.width(), m.height()));
            assert!(back.as_slice().iter().zip(m.as_slice()).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
