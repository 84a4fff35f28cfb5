#![no_main]
//! Fuzz target `import_r16`: see `terrasynth_fuzz::entries::import_r16` (fuzz/src/entries.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| terrasynth_fuzz::run_target("import_r16", data));
