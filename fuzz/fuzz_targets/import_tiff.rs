#![no_main]
//! Fuzz target `import_tiff`: see `terrasynth_fuzz::entries::import_tiff` (fuzz/src/entries.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| terrasynth_fuzz::run_target("import_tiff", data));
