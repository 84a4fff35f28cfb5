//! terrasynth's bulk fill against peer noise crates, in one run on one machine.
//!
//! ```text
//! CARGO_TARGET_DIR=target-bench cargo bench -p terrasynth-noise --bench peers
//! TERRASYNTH_BENCH_SIZE=1024 TERRASYNTH_BENCH_RUNS=3 cargo bench -p terrasynth-noise   # quick
//! ```
//!
//! The last table (issue 11 part 7) times terrasynth alone on small fills: the same samples
//! as 16-row strips and as 513² windows, per sample, against one whole-map fill.
//!
//! Workloads (all on a `size × size` f32 map, default 4096):
//! - Perlin, one octave, one noise cell = 64 px;
//! - Perlin fBm, 8 octaves, lacunarity 2, gain 0.5, base cell 256 px;
//! - simplex fBm with the same settings (terrasynth's OpenSimplex2 against each peer's simplex or
//!   OpenSimplex).
//!
//! Each is timed single-threaded and with all threads. Peers without a parallel API are run with
//! rayon over rows (one row per task, the same split terrasynth uses); simdnoise is run per band
//! of rows through its offset builder. The table reports the median of `runs` timings (default 5)
//! in Msamples/s and the ratio to the fastest peer of the row. Single-threaded timings are the
//! CPU time of the one worker thread (robust to other processes on a shared machine); parallel
//! timings are wall time. `TERRASYNTH_BENCH_PEERS=0` (or `none`) times terrasynth alone (quick
//! checks).

use std::hint::black_box;
use std::time::Instant;

use rayon::prelude::*;
use terrasynth_noise::{FractalKind, Noise, NoiseKind, NoiseSpec, Region, Seed};

/// What is computed: kind of noise and fractal settings.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Work {
    Perlin1,
    PerlinFbm8,
    SimplexFbm8,
}

impl Work {
    fn label(self) -> &'static str {
        match self {
            Work::Perlin1 => "Perlin, 1 octave, cell 64 px",
            Work::PerlinFbm8 => "Perlin fBm 8 oct, cell 256 px",
            Work::SimplexFbm8 => "Simplex fBm 8 oct, cell 256 px",
        }
    }
    /// Name for `TERRASYNTH_BENCH_WORK`.
    fn key(self) -> &'static str {
        match self {
            Work::Perlin1 => "perlin1",
            Work::PerlinFbm8 => "perlin-fbm8",
            Work::SimplexFbm8 => "simplex-fbm8",
        }
    }
    /// Noise frequency in cycles per pixel.
    fn frequency(self) -> f64 {
        match self {
            Work::Perlin1 => 1.0 / 64.0,
            _ => 1.0 / 256.0,
        }
    }
    fn octaves(self) -> u32 {
        match self {
            Work::Perlin1 => 1,
            _ => 8,
        }
    }
    fn is_simplex(self) -> bool {
        self == Work::SimplexFbm8
    }
}

const SEED: u32 = 1337;
const LACUNARITY: f64 = 2.0;
const GAIN: f64 = 0.5;

/// Fills `out` (row-major, `size` columns) with one contender; `parallel` chooses all threads.
type FillFn = Box<dyn Fn(&mut [f32], usize, bool) + Send + Sync>;

/// Runs `fill_row(y, row)` over all rows, either in order or with rayon (one row per task).
fn by_rows<F>(out: &mut [f32], size: usize, parallel: bool, fill_row: F)
where
    F: Fn(usize, &mut [f32]) + Sync,
{
    if parallel {
        out.par_chunks_mut(size).enumerate().for_each(|(y, row)| fill_row(y, row));
    } else {
        out.chunks_mut(size).enumerate().for_each(|(y, row)| fill_row(y, row));
    }
}

fn terrasynth(work: Work) -> FillFn {
    let noise = spec_of(work);
    // Single-threaded timings run inside a 1-thread rayon pool (see `main`).
    Box::new(move |out, size, _parallel| {
        let region = Region { x0: 0.0, y0: 0.0, dx: 1.0, dy: 1.0, width: size, height: size };
        black_box(noise.fill(&region, out).expect("fill"));
    })
}

fn noise_rs(work: Work) -> FillFn {
    use noise::{Fbm, MultiFractal, NoiseFn, OpenSimplex, Perlin};
    let f = work.frequency();
    match work {
        Work::Perlin1 => {
            let n = Perlin::new(SEED);
            Box::new(move |out, size, par| {
                by_rows(out, size, par, |y, row| {
                    for (x, v) in row.iter_mut().enumerate() {
                        *v = n.get([x as f64 * f, y as f64 * f]) as f32;
                    }
                })
            })
        }
        Work::PerlinFbm8 => {
            let n = Fbm::<Perlin>::new(SEED)
                .set_octaves(8)
                .set_frequency(f)
                .set_lacunarity(LACUNARITY)
                .set_persistence(GAIN);
            Box::new(move |out, size, par| {
                by_rows(out, size, par, |y, row| {
                    for (x, v) in row.iter_mut().enumerate() {
                        *v = n.get([x as f64, y as f64]) as f32;
                    }
                })
            })
        }
        Work::SimplexFbm8 => {
            let n = Fbm::<OpenSimplex>::new(SEED)
                .set_octaves(8)
                .set_frequency(f)
                .set_lacunarity(LACUNARITY)
                .set_persistence(GAIN);
            Box::new(move |out, size, par| {
                by_rows(out, size, par, |y, row| {
                    for (x, v) in row.iter_mut().enumerate() {
                        *v = n.get([x as f64, y as f64]) as f32;
                    }
                })
            })
        }
    }
}

fn fastnoise_lite(work: Work) -> FillFn {
    use fastnoise_lite::{FastNoiseLite, FractalType, NoiseType};
    let mut n = FastNoiseLite::with_seed(SEED as i32);
    n.set_noise_type(Some(if work.is_simplex() { NoiseType::OpenSimplex2 } else { NoiseType::Perlin }));
    n.set_frequency(Some(work.frequency() as f32));
    if work.octaves() > 1 {
        n.set_fractal_type(Some(FractalType::FBm));
        n.set_fractal_octaves(Some(work.octaves() as i32));
        n.set_fractal_lacunarity(Some(LACUNARITY as f32));
        n.set_fractal_gain(Some(GAIN as f32));
    }
    Box::new(move |out, size, par| {
        by_rows(out, size, par, |y, row| {
            for (x, v) in row.iter_mut().enumerate() {
                *v = n.get_noise_2d(x as f32, y as f32);
            }
        })
    })
}

fn libnoise(work: Work) -> FillFn {
    use libnoise::{Generator, Source};
    let f = work.frequency();
    fn run<G: Generator<2> + Send + Sync + 'static>(g: G, scale: f64) -> FillFn {
        Box::new(move |out, size, par| {
            by_rows(out, size, par, |y, row| {
                for (x, v) in row.iter_mut().enumerate() {
                    *v = g.sample([x as f64 * scale, y as f64 * scale]) as f32;
                }
            })
        })
    }
    match work {
        Work::Perlin1 => run(Source::<2>::perlin(SEED as u64), f),
        Work::PerlinFbm8 => run(Source::<2>::perlin(SEED as u64).fbm(8, f, LACUNARITY, GAIN), 1.0),
        Work::SimplexFbm8 => run(Source::<2>::simplex(SEED as u64).fbm(8, f, LACUNARITY, GAIN), 1.0),
    }
}

fn bracket_noise(work: Work) -> FillFn {
    use bracket_noise::prelude::{FastNoise, FractalType, NoiseType};
    let mut n = FastNoise::seeded(SEED as u64);
    n.set_noise_type(match (work.is_simplex(), work.octaves() > 1) {
        (false, false) => NoiseType::Perlin,
        (false, true) => NoiseType::PerlinFractal,
        (true, _) => NoiseType::SimplexFractal,
    });
    n.set_frequency(work.frequency() as f32);
    n.set_fractal_type(FractalType::FBM);
    n.set_fractal_octaves(work.octaves() as i32);
    n.set_fractal_lacunarity(LACUNARITY as f32);
    n.set_fractal_gain(GAIN as f32);
    Box::new(move |out, size, par| {
        by_rows(out, size, par, |y, row| {
            for (x, v) in row.iter_mut().enumerate() {
                *v = n.get_noise(x as f32, y as f32);
            }
        })
    })
}

/// simdnoise has simplex only (no Perlin), so it appears only on the simplex row.
fn simdnoise(work: Work) -> Option<FillFn> {
    if !work.is_simplex() {
        return None;
    }
    let f = work.frequency() as f32;
    let band = move |y0: usize, rows: usize, size: usize| {
        simdnoise::NoiseBuilder::fbm_2d_offset(0.0, size, y0 as f32, rows)
            .with_freq(f)
            .with_octaves(8)
            .with_lacunarity(LACUNARITY as f32)
            .with_gain(GAIN as f32)
            .with_seed(SEED as i32)
            .generate()
            .0
    };
    Some(Box::new(move |out, size, par| {
        // Bands of 16 rows: enough tasks for every thread, big enough for its block API.
        const BAND: usize = 16;
        let fill = |(b, chunk): (usize, &mut [f32])| {
            let rows = chunk.len() / size;
            chunk.copy_from_slice(&band(b * BAND, rows, size));
        };
        if par {
            out.par_chunks_mut(size * BAND).enumerate().for_each(fill);
        } else {
            out.chunks_mut(size * BAND).enumerate().for_each(fill);
        }
    }))
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Median wall time of `runs` fills, in seconds (after one warm-up fill).
/// CPU time of the calling thread in seconds (Linux `/proc/thread-self/schedstat`, ns
/// resolution), or `None` where unavailable.
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 * 1e-9)
}

/// Median time of `runs` fills in seconds (after one warm-up fill). Single-threaded runs are
/// timed in CPU time of the (only) worker thread, so that other processes sharing the machine
/// do not count; parallel runs in wall time.
fn median_seconds(fill: &FillFn, out: &mut [f32], size: usize, parallel: bool, runs: usize) -> f64 {
    fill(out, size, parallel);
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let cpu = if parallel { None } else { thread_cpu_seconds() };
            let t = Instant::now();
            fill(out, size, parallel);
            black_box(&out[..]);
            match (cpu, thread_cpu_seconds()) {
                (Some(a), Some(b)) => b - a,
                _ => t.elapsed().as_secs_f64(),
            }
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn main() {
    let size = env_usize("TERRASYNTH_BENCH_SIZE", 4096);
    let runs = env_usize("TERRASYNTH_BENCH_RUNS", 5).max(1);
    let threads = rayon::current_num_threads();
    let mut out = vec![0.0f32; size * size];
    let samples = (size * size) as f64;

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "terrasynth bulk fill ({}) vs peers: {size}×{size} f32, median of {runs} runs, {threads} \
         threads; 1-thread rows timed in thread CPU time, all-thread rows in wall time; load \
         average at start: {}",
        Noise::bulk_simd_level(),
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    println!();
    println!(
        "| workload | threads | terrasynth | noise 0.9 | fastnoise-lite 1.1 | libnoise 1.2 | bracket-noise 0.8 | simdnoise 3.1 | terrasynth / fastest peer |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    // TERRASYNTH_BENCH_WORK=perlin1|perlin-fbm8|simplex-fbm8 runs one workload (profiling).
    let only = std::env::var("TERRASYNTH_BENCH_WORK").ok();
    for work in [Work::Perlin1, Work::PerlinFbm8, Work::SimplexFbm8] {
        if only.as_deref().is_some_and(|w| w != work.key()) {
            continue;
        }
        // TERRASYNTH_BENCH_PEERS=0 or =none: terrasynth alone.
        let with_peers =
            std::env::var("TERRASYNTH_BENCH_PEERS").map_or(true, |v| !matches!(v.trim(), "0" | "none"));
        let peers: Vec<Option<FillFn>> = if !with_peers {
            vec![None, None, None, None, None]
        } else {
            vec![
                Some(noise_rs(work)),
                Some(fastnoise_lite(work)),
                Some(libnoise(work)),
                Some(bracket_noise(work)),
                simdnoise(work),
            ]
        };
        let ours = terrasynth(work);
        let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
        for parallel in [false, true] {
            let mut measure = || {
                let rate = |f: &FillFn, out: &mut [f32]| {
                    samples / median_seconds(f, out, size, parallel, runs) / 1e6
                };
                let our_rate = rate(&ours, &mut out);
                let peer_rates: Vec<Option<f64>> =
                    peers.iter().map(|p| p.as_ref().map(|f| rate(f, &mut out))).collect();
                (our_rate, peer_rates)
            };
            // Single-threaded: everything (terrasynth's rayon bands too) runs on one thread.
            let (our_rate, peer_rates) = if parallel { measure() } else { one_thread.install(measure) };
            let best = peer_rates.iter().flatten().copied().fold(0.0, f64::max);
            let cells: Vec<String> =
                peer_rates.iter().map(|r| r.map_or("n/a".to_string(), |r| format!("{r:.1}"))).collect();
            println!(
                "| {} | {} | **{:.1}** | {} | {:.1}× |",
                work.label(),
                if parallel { threads } else { 1 },
                our_rate,
                cells.join(" | "),
                our_rate / best
            );
        }
    }
    println!();
    println!("Msamples/s (higher is better); `n/a`: the crate has no such noise.");
    scaling(size, runs, only.as_deref());
    small_regions(size, runs, only.as_deref());
}

/// terrasynth's noise for `work`.
fn spec_of(work: Work) -> Noise {
    NoiseSpec {
        kind: if work.is_simplex() { NoiseKind::OpenSimplex2 } else { NoiseKind::Perlin },
        seed: Seed::Number(u64::from(SEED)),
        frequency: work.frequency(),
        fractal: if work.octaves() > 1 { FractalKind::Fbm } else { FractalKind::None },
        octaves: work.octaves(),
        lacunarity: LACUNARITY,
        persistence: GAIN,
        ..NoiseSpec::default()
    }
    .build()
    .expect("valid bench spec")
}

/// Issue 11 part 7: the per-sample cost of small fills against one whole-map fill. The same
/// `size × size` samples are filled as one region, as `size / 16` strips of 16 rows, and as
/// windows of 513² cells (`fill_cells`, as a world streams chunks), with all threads (wall
/// time) and on one thread (CPU time); the table gives ns per sample (median of `runs`) and
/// the ratio to the whole map (goal ≤ 1.5×).
fn small_regions(size: usize, runs: usize, only: Option<&str>) {
    const STRIP: usize = 16;
    const WINDOW: usize = 513;
    let threads = rayon::current_num_threads();
    let samples = (size * size) as f64;
    let mut out = vec![0.0f32; size * size];
    let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
    println!();
    println!(
        "| small fills ({size}² samples in all) | threads | whole map, ns/sample | 16-row strips | ratio | 513² windows | ratio |"
    );
    println!("|---|---|---|---|---|---|---|");
    for work in [Work::Perlin1, Work::PerlinFbm8, Work::SimplexFbm8] {
        if only.is_some_and(|w| w != work.key()) {
            continue;
        }
        let noise = spec_of(work);
        let mut whole = |out: &mut [f32]| {
            let region = Region { x0: 0.0, y0: 0.0, dx: 1.0, dy: 1.0, width: size, height: size };
            black_box(noise.fill(&region, out).expect("fill"));
        };
        let mut strips = |out: &mut [f32]| {
            for (k, strip) in out.chunks_mut(size * STRIP).enumerate() {
                let rows = strip.len() / size;
                let region =
                    Region { x0: 0.0, y0: (k * STRIP) as f64, dx: 1.0, dy: 1.0, width: size, height: rows };
                black_box(noise.fill(&region, strip).expect("fill"));
            }
        };
        let mut window = vec![0.0f32; WINDOW * WINDOW];
        let mut windows = |_: &mut [f32]| {
            let n = (size * size).div_ceil(WINDOW * WINDOW);
            for k in 0..n {
                let cells = terrasynth_noise::CellRegion {
                    col0: (k * WINDOW) as i64,
                    row0: 0,
                    width: WINDOW,
                    height: WINDOW,
                    scale_x: 1.0,
                    scale_y: 1.0,
                    offset_x: 0.0,
                    offset_y: 0.0,
                };
                black_box(noise.fill_cells(&cells, &mut window).expect("fill"));
            }
        };
        let window_samples = ((size * size).div_ceil(WINDOW * WINDOW) * WINDOW * WINDOW) as f64;
        for parallel in [false, true] {
            let measure = |f: &mut dyn FnMut(&mut [f32]), out: &mut [f32]| {
                f(out);
                let mut times: Vec<f64> = (0..runs)
                    .map(|_| {
                        let cpu = if parallel { None } else { thread_cpu_seconds() };
                        let t = Instant::now();
                        f(out);
                        match (cpu, thread_cpu_seconds()) {
                            (Some(a), Some(b)) => b - a,
                            _ => t.elapsed().as_secs_f64(),
                        }
                    })
                    .collect();
                times.sort_by(f64::total_cmp);
                times[runs / 2]
            };
            let mut row = || {
                let w = measure(&mut whole, &mut out) / samples * 1e9;
                let s = measure(&mut strips, &mut out) / samples * 1e9;
                let v = measure(&mut windows, &mut out) / window_samples * 1e9;
                (w, s, v)
            };
            let (w, s, v) = if parallel { row() } else { one_thread.install(row) };
            println!(
                "| {} | {} | {w:.2} | {s:.2} | {:.2}× | {v:.2} | {:.2}× |",
                work.label(),
                if parallel { threads } else { 1 },
                s / w,
                v / w
            );
        }
    }
}

/// CPU time of every thread of this process, in seconds (sum of
/// `/proc/self/task/*/schedstat`).
fn process_cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return f64::NAN };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()))
        .map(|ns| ns as f64 * 1e-9)
        .sum()
}

/// terrasynth alone, 1 thread vs all threads, in wall time and in CPU time of all threads:
/// on a machine shared with other jobs the wall-time speed-up is capped by the CPU share we
/// get, while `CPU(1) / CPU(N)` shows whether the parallel split adds work.
fn scaling(size: usize, runs: usize, only: Option<&str>) {
    let threads = rayon::current_num_threads();
    let samples = (size * size) as f64;
    let mut out = vec![0.0f32; size * size];
    let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
    println!();
    println!(
        "| terrasynth workload | 1 thread, wall | {threads} threads, wall | wall speed-up | CPU s, 1 thread | CPU s, {threads} threads | CPU(1)/CPU({threads}) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for work in [Work::Perlin1, Work::PerlinFbm8, Work::SimplexFbm8] {
        if only.is_some_and(|w| w != work.key()) {
            continue;
        }
        let fill = terrasynth(work);
        // (median wall seconds, median CPU seconds of all threads)
        let time = |out: &mut [f32]| {
            fill(out, size, true);
            let mut walls = Vec::new();
            let mut cpus = Vec::new();
            for _ in 0..runs {
                let c = process_cpu_seconds();
                let t = Instant::now();
                fill(out, size, true);
                walls.push(t.elapsed().as_secs_f64());
                cpus.push(process_cpu_seconds() - c);
            }
            walls.sort_by(f64::total_cmp);
            cpus.sort_by(f64::total_cmp);
            (walls[runs / 2], cpus[runs / 2])
        };
        let (w1, c1) = one_thread.install(|| time(&mut out));
        let (wn, cn) = time(&mut out);
        println!(
            "| {} | {:.1} Ms/s | {:.1} Ms/s | {:.2}× | {:.3} | {:.3} | {:.2} |",
            work.label(),
            samples / w1 / 1e6,
            samples / wn / 1e6,
            w1 / wn,
            c1,
            cn,
            c1 / cn
        );
    }
}
