#![no_main]
//! Fuzz target `project`: see `terrasynth_fuzz::entries::project` (fuzz/src/entries.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| terrasynth_fuzz::run_target("project", data));
