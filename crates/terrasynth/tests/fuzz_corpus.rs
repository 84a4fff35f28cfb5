//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/*`) through the same entry
//! functions the cargo-fuzz targets call (`fuzz/src/entries.rs`, included here), on the stable
//! toolchain: every input any fuzz run kept, and every input that once failed
//! (`fuzz/corpus/<target>/regression-*`), must still return normally. CI runs this; the
//! fuzzers themselves run from `scripts/fuzz.sh` (nightly).

#[allow(dead_code)]
#[path = "../../../fuzz/src/entries.rs"]
mod entries;

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
