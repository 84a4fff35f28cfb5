#![no_main]
//! Fuzz target `recipe_json`: see `terrasynth_fuzz::entries::recipe_json` (fuzz/src/entries.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| terrasynth_fuzz::run_target("recipe_json", data));
