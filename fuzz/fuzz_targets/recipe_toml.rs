#![no_main]
//! Fuzz target `recipe_toml`: see `terrasynth_fuzz::entries::recipe_toml` (fuzz/src/entries.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| terrasynth_fuzz::run_target("recipe_toml", data));
