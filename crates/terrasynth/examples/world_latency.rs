//! Latency of one world window (issue 11 part 7): generates `RUNS` windows of `SIZE`² cells
//! of a world preset at different origins and prints the minimum and the median wall time of
//! the pipeline, and of each step. No files are written.
//!
//! usage: cargo run --release -p terrasynth --example world_latency [PRESET=world] [SIZE=513] [RUNS=15]

use std::time::Instant;

use terrasynth::recipe::{PipelineProgress, World};

fn main() -> terrasynth::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let preset = args.first().map_or("world", String::as_str);
    let size: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(513);
    let runs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(15).max(1);
    let world = World::from_preset(preset)?;
    let progress = PipelineProgress::new();
    let mut total = Vec::with_capacity(runs);
    let mut steps: Vec<(String, Vec<f64>)> = Vec::new();
    for i in 0..runs as i64 {
        let start = Instant::now();
        let out = world.run_window(i * 977 - 4000, 3000 - i * 613, size, size, &progress)?;
        total.push(start.elapsed().as_secs_f64());
        for (k, t) in out.timings.iter().enumerate() {
            if steps.len() <= k {
                steps.push((t.name.clone(), Vec::new()));
            }
            steps[k].1.push(t.seconds);
        }
    }
    let stats = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[0] * 1e3, v[v.len() / 2] * 1e3)
    };
    let (min, median) = stats(&mut total);
    println!("{preset} window {size}x{size}, {runs} runs: min {min:.1} ms, median {median:.1} ms");
    for (kind, v) in &mut steps {
        let (min, median) = stats(v);
        println!("  {kind:<14} min {min:.1} ms, median {median:.1} ms");
    }
    Ok(())
}
