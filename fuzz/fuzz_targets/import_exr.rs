#![no_main]
//! Fuzz target `import_exr`: see `terrasynth_fuzz::entries::import_exr` (fuzz/src/entries.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| terrasynth_fuzz::run_target("import_exr", data));
