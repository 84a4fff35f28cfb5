//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/*`) through the same entry
//! functions the cargo-fuzz targets call (`fuzz/src/entries.rs`, included here), on the stable
//! toolchain: every input any fuzz run kept, and every input that once failed
//! (`fuzz/corpus/<target>/regression-*`), must still return normally. CI runs this; the
//! fuzzers themselves run from `scripts/fuzz.sh` (nightly).

#[allow(dead_code)]
#[path = "../../../fuzz/src/entries.rs"]
mod entries;

// The fuzz targets' allocation guard: an input that asks for one allocation past 2 GiB aborts
// this test binary, as it crashes the fuzzer.
#[allow(dead_code)]
#[path = "../../../fuzz/src/alloc_limit.rs"]
mod alloc_limit;

#[global_allocator]
static ALLOC: alloc_limit::LimitedAlloc = alloc_limit::LimitedAlloc;

use std::path::PathBuf;

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus")
}

/// Every target has a non-empty corpus, and every file of it replays without a panic.
#[test]
fn every_corpus_file_replays_cleanly() {
    let mut total = 0;
    for target in entries::TARGETS {
        let dir = corpus_dir().join(target);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "fuzz/corpus/{target} is empty");
        for f in &files {
            let data = std::fs::read(f).unwrap();
            let outcome = std::panic::catch_unwind(|| entries::run_target(target, &data));
            assert!(
                outcome.is_ok(),
                "fuzz/corpus/{target}/{} panicked",
                f.file_name().unwrap().to_string_lossy()
            );
        }
        total += files.len();
    }
    assert!(total >= entries::TARGETS.len());
}

/// The fuzz targets listed in `entries::TARGETS` are exactly the files of `fuzz/fuzz_targets`.
#[test]
fn targets_list_matches_the_fuzz_targets_folder() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/fuzz_targets");
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = entries::TARGETS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

/// Regressions found by the fuzzers (issue 15; the files are in the corpus): small image
/// files whose header claims a huge image, or a TIFF tag claiming about a hundred million
/// values, made the decoders reserve gigabytes (the allocation guard above aborted). Now they
/// are refused from the header with a clear error.
#[test]
fn regression_small_files_claiming_huge_sizes_are_refused_from_the_header() {
    use std::path::Path;
    use terrasynth::io::{FileFormat, ReadOptions, decode_heightmap};
    let read = |target: &str, name: &str| std::fs::read(corpus_dir().join(target).join(name)).unwrap();
    for (target, name, format) in [
        ("import_png", "regression-huge-header-346-bytes", FileFormat::Png),
        ("import_exr", "regression-huge-header-687-bytes", FileFormat::Exr),
    ] {
        let bytes = read(target, name);
        let err = decode_heightmap(&bytes, Path::new(name), &ReadOptions { format, width: 0, height: 0 })
            .unwrap_err()
            .to_string();
        // On a machine with less memory the memory check refuses it first.
        let expected = format!("more than a {}-byte file can hold", bytes.len());
        assert!(
            err.contains(&expected) || err.contains("image too large: decoding this image would take"),
            "{err}"
        );
    }
    let bytes = read("import_tiff", "regression-huge-tag-733-bytes");
    let err = terrasynth::io::tiff::decode_geo_tags(&bytes, Path::new("t.tif")).unwrap_err().to_string();
    assert!(err.contains("GeoTIFF tag missing or unreadable"), "{err}");
}
