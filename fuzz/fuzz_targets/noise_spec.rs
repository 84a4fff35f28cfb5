#![no_main]
//! Fuzz target `noise_spec`: see `terrasynth_fuzz::entries::noise_spec` (fuzz/src/entries.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| terrasynth_fuzz::run_target("noise_spec", data));
