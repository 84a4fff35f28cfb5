//! Erosion benchmarks (plain harness, median of runs): `cargo bench -p terrasynth --bench erode`.
//!
//! Set `ERODE_BENCH_QUICK=1` to skip the 4096² cases, `ERODE_BENCH_ONLY=droplets` to run only
//! the droplet rows.

use std::time::Instant;

use terrasynth::erode::{
    DropletEroder, DropletParams, Eroder, HydraulicEroder, HydraulicOlsenEroder, HydraulicOlsenParams,
    HydraulicParams, OlsenEroder, StreamPowerEroder, StreamPowerParams, ThermalEroder, ThermalOlsenEroder,
    ThermalOlsenParams, ThermalParams,
};
use terrasynth::generate::{DiamondSquare, Generator};
use terrasynth::grid::{Boundary, Neighbourhood};
use terrasynth::{Heightmap, Progress};

/// Builds a fresh eroder for one timed run.
type MakeEroder<'a> = Box<dyn Fn() -> Box<dyn Eroder> + 'a>;

/// Diamond-square base terrain normalised to [0, 1] (Olsen's setup).
fn base(n: usize) -> Heightmap {
    let mut map = DiamondSquare::new(1.0, 1.0, 0).unwrap().generate(n, n, 42, &Progress::new()).unwrap();
    map.normalize();
    map
}

/// Median wall time in seconds of `runs` runs of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn steps(e: &mut dyn Eroder, n: usize) {
    for _ in 0..n {
        e.run_one_step().unwrap();
    }
}

/// Droplets per second at 1024², sequential (batch-size 1) and in parallel batches, each on 1
/// and 2 rayon threads (pools built here, so one run gives all four rows).
fn droplets() {
    let map = base(1024);
    let droplets = 200_000;
    // `ERODE_BENCH_DROPLETS=<batch-size>x<threads>` runs that one case (for `time`/`perf`).
    let only = std::env::var("ERODE_BENCH_DROPLETS").ok();
    for batch_size in [1, 16_384] {
        for threads in [1, 2] {
            if only.as_ref().is_some_and(|o| *o != format!("{batch_size}x{threads}")) {
                continue;
            }
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let t = pool.install(|| {
                median(5, || {
                    let p = DropletParams { droplets, batch_size, seed: 1, ..Default::default() };
                    let mut e = DropletEroder::new(&map, p).unwrap();
                    steps(&mut e, 1);
                })
            });
            println!(
                "| droplets, batch-size {batch_size}, {threads} thread(s) ({droplets} droplets) | 1024² | {:.0} droplets/s | none published |",
                droplets as f64 / t
            );
        }
    }
}

fn main() {
    let quick = std::env::var_os("ERODE_BENCH_QUICK").is_some();
    println!("threads: {}", rayon::current_num_threads());
    println!("| case | size | measured (median) | Olsen 2004 (Java, P4 2.4 GHz) |");
    println!("|---|---|---|---|");
    if std::env::var("ERODE_BENCH_ONLY").is_ok_and(|v| v == "droplets") {
        droplets();
        return;
    }

    // Olsen's full pipeline: base terrain + 50 iterations of his erosion (T = 16/N, Von
    // Neumann, wrapped edges as in the paper).
    for (n, runs, published) in [(512, 5, "< 2 s"), (1024, 3, "< 7 s")] {
        let t = median(runs, || {
            let map = base(n);
            let p = ThermalOlsenParams {
                talus: 16.0 / n as f64,
                neighbourhood: Neighbourhood::VonNeumann,
                boundary: Boundary::Wrap,
            };
            let mut e = OlsenEroder::new(&map, p).unwrap();
            steps(&mut e, 50);
        });
        println!("| diamond-square + 50 × olsen-erosion | {n}² | {:.3} s | {published} |", t);
    }

    // Per-iteration costs at 512², extrapolated to Olsen's 500 iterations.
    let map = base(512);
    let talus = 4.0 / 512.0;
    let per_iter = |mk: &dyn Fn() -> Box<dyn Eroder>, iters: usize| {
        median(3, || {
            let mut e = mk();
            steps(&mut *e, iters);
        }) / iters as f64
    };
    let cases: [(&str, MakeEroder, usize, &str); 5] = [
        (
            "thermal (reference, Moore, deferred)",
            Box::new(|| {
                Box::new(ThermalEroder::new(&map, ThermalParams { talus, ..Default::default() }).unwrap())
            }),
            20,
            "60 s",
        ),
        (
            "thermal-olsen",
            Box::new(|| {
                let p = ThermalOlsenParams { talus, ..Default::default() };
                Box::new(ThermalOlsenEroder::new(&map, p).unwrap())
            }),
            50,
            "10 s",
        ),
        (
            "olsen-erosion",
            Box::new(|| {
                let p = ThermalOlsenParams {
                    talus: 16.0 / 512.0,
                    neighbourhood: Neighbourhood::VonNeumann,
                    boundary: Boundary::Wrap,
                };
                Box::new(OlsenEroder::new(&map, p).unwrap())
            }),
            50,
            "≈ 10 s",
        ),
        (
            "hydraulic (reference)",
            Box::new(|| Box::new(HydraulicEroder::new(&map, HydraulicParams::default()).unwrap())),
            20,
            "148 s",
        ),
        (
            "hydraulic-olsen",
            Box::new(|| Box::new(HydraulicOlsenEroder::new(&map, HydraulicOlsenParams::default()).unwrap())),
            50,
            "27 s",
        ),
    ];
    for (name, mk, iters, published) in &cases {
        let t = per_iter(&**mk, *iters);
        println!(
            "| {name}, 500 iterations (from {iters}) | 512² | {:.2} s ({:.2} ms/iter) | {published} |",
            t * 500.0,
            t * 1e3
        );
    }

    droplets();

    if quick {
        return;
    }
    let map = base(4096);
    let t = median(3, || {
        let mut e =
            ThermalEroder::new(&map, ThermalParams { talus: 4.0 / 4096.0, ..Default::default() }).unwrap();
        steps(&mut e, 50);
    });
    println!("| thermal (reference), 50 iterations | 4096² | {t:.2} s | — |");
    let t = median(3, || {
        let p = ThermalOlsenParams { talus: 4.0 / 4096.0, ..Default::default() };
        let mut e = ThermalOlsenEroder::new(&map, p).unwrap();
        steps(&mut e, 50);
    });
    println!("| thermal-olsen, 50 iterations | 4096² | {t:.2} s | — |");
    // Stream power: heights scaled to metres-like relief, one step after a warm-up step.
    let mut e = StreamPowerEroder::new(&map, StreamPowerParams::default()).unwrap();
    e.run_one_step().unwrap();
    let t = median(3, || e.run_one_step().unwrap());
    println!("| stream-power, one step (routing + implicit solve + diffusion) | 4096² | {t:.2} s | — |");
}
