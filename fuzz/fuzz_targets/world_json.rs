#![no_main]
//! Fuzz target `world_json`: see `terrasynth_fuzz::entries::world_json` (fuzz/src/entries.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| terrasynth_fuzz::run_target("world_json", data));
