//! Hydrology benchmark (issue 4 §5), plain `main` (harness = false).
//!
//! ```text
//! cargo bench -p terrasynth --bench hydro -- write <dem.f32> <side>    # value-noise fBm DEM, raw f32 LE
//! cargo bench -p terrasynth --bench hydro -- run <dem.f32> <side> <filled.f32> [runs]
//! cargo bench -p terrasynth --bench hydro -- editor                   # 1025² tracer + brush dab timings
//! cargo bench -p terrasynth --bench hydro -- stream-power [side] [runs] # one stream-power step
//! ```
//! `stream-power` uses the base terrain of `benches/erode.rs` (diamond-square, normalised) and
//! times one `StreamPowerEroder` step after a warm-up step (median of `runs`, default 3), and
//! its routing (`StreamPowerRouter::compute`) alone.
//! `run` times fill (Priority-Flood+ε) + D8 + accumulation, median of `runs` (default 3), and
//! writes the exact (ε-free) fill for comparison with pysheds. `scripts/bench-hydro.sh` drives it.

use std::io::{Read, Write};
use std::time::Instant;

use terrasynth::erode::{Eroder, StreamPowerEroder, StreamPowerParams};
use terrasynth::generate::{DiamondSquare, Generator};
use terrasynth::hydro::{D8Router, DepressionFiller, RiverMode, RiverTracer, StreamPowerRouter};
use terrasynth::noise::rng::mix64;
use terrasynth::shape::brush::{Brush, BrushMode};
use terrasynth::{Heightmap, Progress};

/// Value noise: bilinear-smoothstep interpolation of hashed lattice values in [0, 1).
fn value_noise(x: f64, y: f64, seed: u64) -> f64 {
    let (x0, y0) = (x.floor(), y.floor());
    let (tx, ty) = (x - x0, y - y0);
    let (sx, sy) = (tx * tx * (3.0 - 2.0 * tx), ty * ty * (3.0 - 2.0 * ty));
    let h = |i: f64, j: f64| {
        let k =
            mix64(seed ^ mix64((i as i64 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (j as i64 as u64)));
        (k >> 11) as f64 / (1u64 << 53) as f64
    };
    let a = h(x0, y0) + (h(x0 + 1.0, y0) - h(x0, y0)) * sx;
    let b = h(x0, y0 + 1.0) + (h(x0 + 1.0, y0 + 1.0) - h(x0, y0 + 1.0)) * sx;
    a + (b - a) * sy
}

/// 6-octave fBm of value noise (lacunarity 2, gain 0.5), base period 256 cells, in metres 0..1000.
fn fbm_dem(side: usize) -> Heightmap {
    Heightmap::from_fn(side, side, 1.0, |x, y| {
        let (mut f, mut a, mut s) = (1.0 / 256.0, 1.0, 0.0);
        for o in 0..6 {
            s += a * value_noise(x as f64 * f, y as f64 * f, o);
            f *= 2.0;
            a *= 0.5;
        }
        (s / 1.96875 * 1000.0) as f32
    })
    .expect("valid size")
}

fn write_raw(path: &str, map: &Heightmap) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    for v in map.as_slice() {
        f.write_all(&v.to_le_bytes()).expect("write");
    }
}

fn read_raw(path: &str, side: usize) -> Heightmap {
    let mut bytes = Vec::new();
    std::fs::File::open(path).expect("open").read_to_end(&mut bytes).expect("read");
    let data = bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    Heightmap::from_vec(side, side, 1.0, data).expect("size")
}

/// CPU seconds used by this process so far (user + system, all threads), from
/// `/proc/self/stat` (10 ms ticks); the machine may be shared, so CPU time is reported beside
/// wall time. 0 where `/proc` is missing.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |k: usize| f.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 of stat are utime and stime; after the ")" they are at 11 and 12.
    (ticks(11) + ticks(12)) / 100.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    match args.first().map(String::as_str) {
        Some("write") => {
            let side: usize = args[2].parse().expect("side");
            write_raw(&args[1], &fbm_dem(side));
        }
        Some("run") => {
            let side: usize = args[2].parse().expect("side");
            let runs: usize = args.get(4).map_or(3, |r| r.parse().expect("runs"));
            let dem = read_raw(&args[1], side);
            let no_sea = f32::NEG_INFINITY;
            let (mut fill, mut d8, mut acc, mut total, mut cpu) = (vec![], vec![], vec![], vec![], vec![]);
            for _ in 0..runs {
                let c0 = cpu_seconds();
                let t0 = Instant::now();
                let filled = DepressionFiller::with_epsilon().fill(&dem, no_sea).expect("fill");
                let t1 = Instant::now();
                let flow = D8Router.d8(&filled, no_sea).expect("d8");
                let t2 = Instant::now();
                let a = flow.accumulate(None).expect("acc");
                let t3 = Instant::now();
                std::hint::black_box(a);
                fill.push((t1 - t0).as_secs_f64());
                d8.push((t2 - t1).as_secs_f64());
                acc.push((t3 - t2).as_secs_f64());
                total.push((t3 - t0).as_secs_f64());
                cpu.push(cpu_seconds() - c0);
            }
            let t0 = Instant::now();
            let exact = DepressionFiller::exact().fill(&dem, no_sea).expect("fill");
            let exact_s = t0.elapsed().as_secs_f64();
            write_raw(&args[3], &exact);
            println!(
                "terrasynth {side}x{side}: fill+eps {:.3} s, d8 {:.3} s, accumulation {:.3} s, total {:.3} s wall, \
                 {:.2} s CPU (median of {runs}); exact fill {:.3} s; {} threads",
                median(fill),
                median(d8),
                median(acc),
                median(total),
                median(cpu),
                exact_s,
                rayon::current_num_threads()
            );
        }
        Some("editor") => {
            let dem = fbm_dem(1025);
            let t0 = Instant::now();
            let tracer = RiverTracer::new(&dem, 300.0).expect("tracer");
            let build = t0.elapsed().as_secs_f64();
            let t0 = Instant::now();
            let mut cells = 0;
            for k in 0..100 {
                let r = tracer.trace((10 * k + 7, 1000 - 9 * k), RiverMode::Filled).expect("trace");
                cells += r.cells.len();
            }
            let trace = t0.elapsed().as_secs_f64() / 100.0;
            let mut map = dem.clone();
            let mut times = Vec::new();
            for (k, mode) in
                [BrushMode::Raise, BrushMode::Lower, BrushMode::Flatten, BrushMode::Smooth].iter().enumerate()
            {
                for j in 0..50 {
                    let b = Brush {
                        x: 100.0 + 15.0 * j as f64,
                        y: 200.0 + 150.0 * k as f64,
                        radius: 64.0,
                        strength: 0.5,
                        mode: *mode,
                    };
                    let t0 = Instant::now();
                    std::hint::black_box(b.apply(&mut map).expect("dab"));
                    times.push(t0.elapsed().as_secs_f64());
                }
            }
            println!(
                "editor 1025x1025: RiverTracer::new {:.1} ms, trace {:.3} ms/river ({} cells avg), brush dab r=64 median {:.3} ms",
                build * 1e3,
                trace * 1e3,
                cells / 100,
                median(times) * 1e3
            );
        }
        Some("stream-power") => {
            let side: usize = args.get(1).map_or(4096, |s| s.parse().expect("side"));
            let runs: usize = args.get(2).map_or(3, |r| r.parse().expect("runs"));
            let mut map =
                DiamondSquare::new(1.0, 1.0, 0).unwrap().generate(side, side, 42, &Progress::new()).unwrap();
            map.normalize();
            let mut e = StreamPowerEroder::new(&map, StreamPowerParams::default()).expect("eroder");
            e.run_one_step().expect("step");
            let (mut step, mut cpu, mut routing) = (vec![], vec![], vec![]);
            let base: Vec<bool> = (0..side * side)
                .map(|i| i % side == 0 || i / side == 0 || i % side + 1 == side || i / side + 1 == side)
                .collect();
            let mut flow = StreamPowerRouter::default();
            for _ in 0..runs {
                let c0 = cpu_seconds();
                let t0 = Instant::now();
                e.run_one_step().expect("step");
                step.push(t0.elapsed().as_secs_f64());
                cpu.push(cpu_seconds() - c0);
                let t0 = Instant::now();
                flow.compute(e.surface().as_slice(), side, side, 1.0, &base);
                routing.push(t0.elapsed().as_secs_f64());
            }
            // The same step with deposition (G = 1, Yuan et al. 2019; n = 1: the direct solve).
            let p = StreamPowerParams { g: 1.0, ..Default::default() };
            let mut e = StreamPowerEroder::new(&map, p).expect("eroder");
            e.run_one_step().expect("step");
            let mut deposition = vec![];
            for _ in 0..runs {
                let t0 = Instant::now();
                e.run_one_step().expect("step");
                deposition.push(t0.elapsed().as_secs_f64());
            }
            println!(
                "stream power {side}x{side}: one step {:.3} s wall, {:.2} s CPU; routing alone {:.3} s; \
                 a step with deposition (G = 1) {:.3} s (medians of {runs}); {} threads",
                median(step),
                median(cpu),
                median(routing),
                median(deposition),
                rayon::current_num_threads()
            );
        }
        _ => eprintln!(
            "usage: hydro write <dem.f32> <side> | run <dem.f32> <side> <filled.f32> [runs] | editor \
             | stream-power [side] [runs]"
        ),
    }
}
