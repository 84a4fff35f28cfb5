//! Benchmark against peer crates (being written).
fn main() {}
