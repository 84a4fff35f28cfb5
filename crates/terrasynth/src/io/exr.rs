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

/// Writes `map` as a single-layer EXR with one f32 channel `Y` (layer name `height`). The
/// samples are read from the map as the encoder needs them (no copy of the map).
pub fn write(path: impl AsRef<Path>, map: &Heightmap) -> Result<()> {
    let path = path.as_ref();
    let (w, data) = (map.width(), map.as_slice());
    let channels = SpecificChannels::build()
        .with_channel("Y")
        .with_pixel_fn(|p: Vec2<usize>| (data[p.y() * w + p.x()],));
    let layer = Layer::new(
        (map.width(), map.height()),
        LayerAttributes::named("height"),
        Encoding::SMALL_LOSSLESS,
        channels,
    );
    let image = Image::from_layer(layer);
    // Compressed on this thread: the crate's parallel writer builds a thread pool of its own
    // (a thread per core) for every file, beside the caller's pool and `--threads`.
    atomic::write_atomic_seekable(path, |w| {
        image
            .write()
            .non_parallel()
            .to_buffered(w)
            .map_err(|e| format_err(path, format!("EXR encoding failed: {e}")))
    })
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

    #[test]
    fn written_from_the_map_equals_the_flat_channel_file_and_round_trips() {
        let dir = std::env::temp_dir().join(format!("ts-exr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let map =
            Heightmap::from_fn(131, 67, 2.0, |x, y| ((x * 31 + y * 17) % 101) as f32 * 0.37 - 9.0).unwrap();
        let path = dir.join("a.exr");
        write(&path, &map).unwrap();
        // The same image built from a copied flat channel (the writer before it read the map
        // in place).
        let channel = AnyChannel::new("Y", FlatSamples::F32(map.as_slice().to_vec()));
        let layer = Layer::new(
            (map.width(), map.height()),
            LayerAttributes::named("height"),
            Encoding::SMALL_LOSSLESS,
            AnyChannels::sort(SmallVec::from_vec(vec![channel])),
        );
        let mut reference = Vec::new();
        Image::from_layer(layer).write().to_buffered(Cursor::new(&mut reference)).unwrap();
        let got = std::fs::read(&path).unwrap();
        assert!(got == reference, "EXR bytes differ from the flat-channel writer");
        let back = read(&path).unwrap();
        assert_eq!(back.as_slice(), map.as_slice());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
