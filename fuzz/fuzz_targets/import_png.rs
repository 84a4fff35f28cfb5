#![no_main]
//! Fuzz target `import_png`: see `terrasynth_fuzz::entries::import_png` (fuzz/src/entries.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| terrasynth_fuzz::run_target("import_png", data));
