//! OpenEXR (feature `exr`): one 32-bit float channel named `Y`, lossless RLE compression.
//! The preferred lossless height format of Godot Terrain3D and HTerrain; values are stored as
//! they are (no normalisation), so the round trip is bit-exact.
//!
//! Why RLE and not ZIP: both are lossless and read by every OpenEXR reader (OpenEXR itself in
//! Blender, tinyexr in Godot, the exr crate). Both split each block's sample bytes into even and
//! odd halves and delta-code them (OpenEXR's predictor), after which a smooth height field's
//! high bytes are long runs; RLE packs those runs and leaves the noisy low bytes raw, ZIP also
//! entropy-codes the low bytes. On `eroded-island` at 1025², seed 5, the file is 3.29 MB with
//! RLE against 3.23 MB with ZIP at zlib level 1 (4.20 MB raw), and writing it takes about 8 ms
//! instead of about 27 on one core (docs/EROSION.md, "Session 51").

use std::io::Cursor;
use std::path::Path;

use exr::compression::Compression;
use exr::prelude::{
    Encoding, FlatSamples, Image, Layer, LayerAttributes, ReadChannels, ReadLayers, SpecificChannels, Vec2,
    WritableImage,
};

use super::{atomic, format_err, guard_decoder};
use crate::{Heightmap, Result};

/// The encoding of the written layer: RLE over scan lines (one line a block, OpenEXR's
/// `RLE_COMPRESSION`), increasing y.
const ENCODING: Encoding = Encoding {
    compression: Compression::RLE,
    blocks: exr::prelude::Blocks::ScanLines,
    line_order: exr::prelude::LineOrder::Increasing,
};

/// Writes `map` as a single-layer EXR with one f32 channel `Y` (layer name `height`), RLE
/// compressed (lossless; one scan line a block, blocks compressed in parallel).
pub fn write(path: impl AsRef<Path>, map: &Heightmap) -> Result<()> {
    let path = path.as_ref();
    atomic::write_atomic_seekable(path, |w| write_blocks(w, map).map_err(|e| format_err(path, e)))
}

/// The EXR file of `map` into `out`, its blocks compressed on the caller's rayon pool
/// ([`rle_block`]). The header is the exr crate's own for this image (its image writer copies
/// every sample into per-block buffers and through several passes first, and its parallel mode
/// builds a thread pool per file; the test holds our bytes equal to its).
fn write_blocks(
    out: impl std::io::Write + std::io::Seek,
    map: &Heightmap,
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
    let fail = |e: exr::error::Error| format!("EXR encoding failed: {e}");
    exr::block::write(out, headers, true, |_, writer| {
        // A band of blocks at a time, so only one band's compressed bytes wait in memory.
        for (band, cells) in data.chunks(BAND_BLOCKS * w.max(1)).enumerate() {
            let chunks: Vec<Chunk> = cells
                .par_chunks(w.max(1))
                .enumerate()
                .map(|(b, row)| Chunk {
                    layer_index: 0,
                    compressed_block: CompressedBlock::ScanLine(CompressedScanLineBlock {
                        y_coordinate: (band * BAND_BLOCKS + b) as i32,
                        compressed_pixels_le: rle_block(row),
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

/// One block of OpenEXR's RLE compression (one scan line). A sample's little-endian bytes
/// `b0 b1 b2 b3` are two byte pairs, so its even bytes `b0 b2` go to the first half and its
/// odd bytes `b1 b3` to the second, in sample order; each byte but the first becomes its
/// difference to the one before it, plus 128 (OpenEXR's predictor, shared with ZIP). Then the
/// bytes are packed as runs and literals ([`pack_runs`]); a block that would not shrink is
/// stored raw, as OpenEXR readers expect.
fn rle_block(samples: &[f32]) -> Vec<u8> {
    let n = 4 * samples.len();
    let mut split = vec![0u8; n];
    let (even, odd) = split.split_at_mut(n / 2);
    for ((v, e), o) in samples.iter().zip(even.chunks_exact_mut(2)).zip(odd.chunks_exact_mut(2)) {
        let b = v.to_le_bytes();
        (e[0], e[1], o[0], o[1]) = (b[0], b[2], b[1], b[3]);
    }
    let mut prev = 0u8;
    for (i, b) in split.iter_mut().enumerate() {
        let here = *b;
        if i > 0 {
            *b = here.wrapping_sub(prev).wrapping_add(128);
        }
        prev = here;
    }
    let packed = pack_runs(&split);
    if packed.len() < n { packed } else { samples.iter().flat_map(|v| v.to_le_bytes()).collect() }
}

/// OpenEXR's RLE token stream: a run of 3 to 128 equal bytes is the signed count byte
/// `length − 1` (0..=127) and the byte; anything else goes out as literals, the count byte
/// `−length` (−1..=−127) and the bytes. A literal stretch ends where a run of 3 begins or at
/// 127 bytes, the rule of OpenEXR's own encoder, so the bytes equal those of other writers.
fn pack_runs(bytes: &[u8]) -> Vec<u8> {
    const MIN_RUN: usize = 3;
    const MAX_RUN: usize = 128;
    const MAX_LITERALS: usize = 127;
    let n = bytes.len();
    let run_at = |i: usize| {
        let limit = (i + MAX_RUN).min(n);
        let mut end = i + 1;
        while end < limit && bytes[end] == bytes[i] {
            end += 1;
        }
        end - i
    };
    let mut out = Vec::with_capacity(n + n / MAX_LITERALS + 1);
    let mut i = 0;
    while i < n {
        let run = run_at(i);
        if run >= MIN_RUN {
            out.extend_from_slice(&[(run - 1) as u8, bytes[i]]);
            i += run;
            continue;
        }
        let mut end = i + run;
        while end < n
            && end - i < MAX_LITERALS
            && !(end + 2 < n && bytes[end] == bytes[end + 1] && bytes[end + 1] == bytes[end + 2])
        {
            end += 1;
        }
        out.push((-((end - i) as i32)) as i8 as u8);
        out.extend_from_slice(&bytes[i..end]);
        i = end;
    }
    out
}

/// Blocks (scan lines) compressed in parallel before they are written.
const BAND_BLOCKS: usize = 1024;

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

    /// The file of the exr crate's own writer for `map` (RLE over scan lines, our
    /// [`ENCODING`]), built from a copied flat channel.
    fn crate_file(map: &Heightmap) -> Vec<u8> {
        let channel = AnyChannel::new("Y", FlatSamples::F32(map.as_slice().to_vec()));
        let layer = Layer::new(
            (map.width(), map.height()),
            LayerAttributes::named("height"),
            ENCODING,
            AnyChannels::sort(SmallVec::from_vec(vec![channel])),
        );
        let mut reference = Vec::new();
        Image::from_layer(layer).write().non_parallel().to_buffered(Cursor::new(&mut reference)).unwrap();
        reference
    }

    #[test]
    fn blocks_equal_the_crates_own_writer_and_round_trip() {
        let dir = std::env::temp_dir().join(format!("ts-exr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Smooth rows (runs in the high bytes), the noisy columns (literals), and a flat
        // stretch longer than one run of 128 bytes.
        let map = Heightmap::from_fn(131, 67, 2.0, |x, y| {
            let noise = ((x * 2_654_435_761usize) ^ (y * 40_503)) % 1_000_003;
            if x < 5 {
                noise as f32 * 1e-3
            } else if x > 60 && y % 3 == 0 {
                7.0
            } else {
                ((x * 31 + y * 17) % 101) as f32 * 0.37 - 9.0
            }
        })
        .unwrap();
        let mut ours = Vec::new();
        write_blocks(Cursor::new(&mut ours), &map).unwrap();
        assert!(ours == crate_file(&map), "EXR bytes differ from the exr crate's writer");
        // More lines than one band (1 100 of 1 024): the second band's blocks keep their
        // indices and rows.
        let tall = Heightmap::from_fn(7, 1100, 1.0, |x, y| (x as f32 - 3.0) * 0.25 + (y as f32 * 0.01).sin())
            .unwrap();
        let mut banded = Vec::new();
        write_blocks(Cursor::new(&mut banded), &tall).unwrap();
        assert!(banded == crate_file(&tall), "EXR bytes over two bands differ from the exr crate's writer");
        // A block of pure noise does not shrink: stored raw, as OpenEXR readers expect.
        let mut rng = terrasynth_noise::rng::SplitMix64::new(9);
        let noise =
            Heightmap::from_fn(64, 20, 1.0, |_, _| f32::from_bits(rng.next_u64() as u32 & 0x7f7f_ffff))
                .unwrap();
        let mut raw = Vec::new();
        write_blocks(Cursor::new(&mut raw), &noise).unwrap();
        assert!(raw == crate_file(&noise), "EXR bytes with raw blocks differ from the exr crate's writer");
        // Scan lines built from chosen predictor bytes: runs of 1 to 300 equal bytes and
        // literal stretches up to 300 bytes (over the 127-byte limit), with pairs and triples,
        // so every rule of the token stream is exercised; the file must shrink.
        let (w, h) = (300, 24);
        let mut samples = Vec::with_capacity(w * h);
        for _ in 0..h {
            let mut target = Vec::with_capacity(4 * w);
            while target.len() < 4 * w {
                let len = 1 + (rng.next_u64() % 300) as usize;
                let byte = (rng.next_u64() % 4) as u8 + 126;
                match rng.next_u64() % 3 {
                    0 => target.extend(std::iter::repeat_n(byte, len)),
                    1 => target.extend((0..len).map(|_| (rng.next_u64() % 256) as u8)),
                    _ => target.extend((0..len).map(|_| (rng.next_u64() % 2) as u8 + 127)),
                }
            }
            target.truncate(4 * w);
            // Undo the predictor, then the even/odd split.
            let mut split = target.clone();
            for i in 1..split.len() {
                split[i] = split[i - 1].wrapping_add(target[i]).wrapping_sub(128);
            }
            let (even, odd) = split.split_at(2 * w);
            samples.extend(
                (0..w)
                    .map(|k| f32::from_le_bytes([even[2 * k], odd[2 * k], even[2 * k + 1], odd[2 * k + 1]])),
            );
        }
        let built = Heightmap::from_vec(w, h, 1.0, samples).unwrap();
        let mut ours = Vec::new();
        write_blocks(Cursor::new(&mut ours), &built).unwrap();
        assert!(ours == crate_file(&built), "EXR bytes of built runs differ from the exr crate's writer");
        assert!(ours.len() < 4 * w * h, "the built runs did not shrink: {} bytes", ours.len());
        for m in [&map, &noise, &built] {
            let path = dir.join("a.exr");
            write(&path, m).unwrap();
            let back = read(&path).unwrap();
            assert_eq!((back.width(), back.height()), (m.width(), m.height()));
            assert!(back.as_slice().iter().zip(m.as_slice()).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
