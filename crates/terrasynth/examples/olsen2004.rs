//! Olsen 2004's erosion experiments, reproduced: the table of `docs/EROSION.md` ("Olsen 2004
//! reproduced").
//!
//! ```text
//! cargo run -p terrasynth --example olsen2004 -- [--size 512] [--seeds 1,2,3,4,5] [--wrap]
//! ```
//!
//! Edges: Olsen's maps are periodic and wrap; our base terrain is not periodic, so wrapping
//! it invents a cliff along the seam that dominates ε (base ε ≈ 1.96 wrapped against ≈ 0.6
//! closed at N = 512). The default is therefore closed edges for the erosions and for ε;
//! `--wrap` uses his wrapped edges for both.
//!
//! Per seed: Olsen's base terrain (the `olsen` preset: 2/3 smoothed diamond-square + 1/3
//! Voronoi (c1 = −1, c2 = 1), perturbed by 0.25, normalised to [0, 1]) at N × N, then, with
//! his conventions (heights in [0, 1], ε with his Von Neumann slope; edges: see above):
//! - his erosion algorithm, T = 16/N, Von Neumann, 50 and 500 iterations;
//! - thermal erosion, T = 4/N, 50 iterations: the reference (Moore, c = 0.5, difference map)
//!   against the optimised one (rotated Von Neumann, lowest neighbour, d_max/2);
//! - hydraulic erosion, 100 iterations, Kr = Ks = Kc = 0.01, Ke = 0.5: the reference (Moore,
//!   water and sediment maps) against the optimised one (Von Neumann, lowest neighbour,
//!   saturated water);
//!
//! each optimised form both with Olsen's in-place sweep (`sweep = "in-place"`) and with
//! terrasynth's coloured exchange passes (the default). Printed: ε of every output, the mean
//! absolute difference between reference and optimised outputs (Olsen's measure: 100% = all
//! 0 against all 1), and the means over the seeds, as Markdown.

use terrasynth::analyze::erosion_score;
use terrasynth::erode::{
    Eroder, HydraulicEroder, HydraulicOlsenEroder, HydraulicOlsenParams, HydraulicParams, OlsenEroder, Sweep,
    ThermalEroder, ThermalOlsenEroder, ThermalOlsenParams, ThermalParams,
};
use terrasynth::grid::{Boundary, Neighbourhood};
use terrasynth::recipe::{Pipeline, PipelineProgress, preset, registry};
use terrasynth::{Grid, Heightmap};

/// Edges of the erosions and of ε (closed unless `--wrap`).
static BOUNDARY: std::sync::OnceLock<Boundary> = std::sync::OnceLock::new();

/// ε with Olsen's slope.
fn eps(g: &Grid<f64>) -> f64 {
    erosion_score(g, *BOUNDARY.get().expect("set in main")).epsilon
}

/// Mean absolute difference of two surfaces (heights in [0, 1]).
fn diff(a: &Grid<f64>, b: &Grid<f64>) -> f64 {
    let s: f64 = a.as_slice().iter().zip(b.as_slice()).map(|(x, y)| (x - y).abs()).sum();
    s / a.len() as f64
}

/// Runs `n` iterations, finishes (hydraulic: deposits the load) and returns the surface.
fn run(mut e: Box<dyn Eroder>, n: usize) -> Grid<f64> {
    for _ in 0..n {
        e.run_one_step().expect("erosion step");
    }
    e.finish();
    e.surface().clone()
}

/// Olsen's base terrain at `n × n` with `seed`, in [0, 1].
fn base(n: usize, seed: u64) -> Heightmap {
    let mut recipe = preset("olsen").and_then(|p| p.recipe()).expect("the olsen preset");
    recipe.width = n;
    recipe.height = n;
    recipe.seed = seed;
    let out =
        Pipeline::new(recipe, &registry()).and_then(|p| p.run(&PipelineProgress::new())).expect("base run");
    let mut h = out.terrain.height;
    h.normalize();
    h
}

/// One seed's figures, in table order.
fn experiment(n: usize, seed: u64) -> Vec<f64> {
    let map = base(n, seed);
    let base_eps = eps(&map.map(|&v| v as f64));
    let wrap = *BOUNDARY.get().expect("set in main");
    let nf = n as f64;
    // Olsen's erosion algorithm: 50 iterations and, continuing, 500.
    let erosion = |sweep: Sweep| {
        let p =
            ThermalOlsenParams { talus: 16.0 / nf, neighbourhood: Neighbourhood::VonNeumann, boundary: wrap };
        let mut e = OlsenEroder::new(&map, p).unwrap().with_sweep(sweep);
        let mut at50 = 0.0;
        for i in 1..=500 {
            e.run_one_step().unwrap();
            if i == 50 {
                at50 = eps(e.surface());
            }
        }
        (at50, eps(e.surface()))
    };
    let (e50_in, e500_in) = erosion(Sweep::InPlace);
    let (e50_col, e500_col) = erosion(Sweep::Coloured);
    // Thermal: reference vs optimised, 50 iterations, T = 4/N.
    let talus = 4.0 / nf;
    let t_ref = run(
        Box::new(
            ThermalEroder::new(
                &map,
                ThermalParams { talus, c: 0.5, neighbourhood: Neighbourhood::Moore, boundary: wrap },
            )
            .unwrap(),
        ),
        50,
    );
    let t_opt = |sweep| {
        let p = ThermalOlsenParams { talus, neighbourhood: Neighbourhood::RotatedVonNeumann, boundary: wrap };
        run(Box::new(ThermalOlsenEroder::new(&map, p).unwrap().with_sweep(sweep)), 50)
    };
    let (t_in, t_col) = (t_opt(Sweep::InPlace), t_opt(Sweep::Coloured));
    // Hydraulic: reference vs optimised, 100 iterations, Olsen's constants.
    let h_ref = run(
        Box::new(
            HydraulicEroder::new(
                &map,
                HydraulicParams {
                    neighbourhood: Neighbourhood::Moore,
                    boundary: wrap,
                    ..HydraulicParams::default()
                },
            )
            .unwrap(),
        ),
        100,
    );
    let h_opt = |sweep| {
        let p = HydraulicOlsenParams {
            neighbourhood: Neighbourhood::VonNeumann,
            boundary: wrap,
            ..HydraulicOlsenParams::default()
        };
        run(Box::new(HydraulicOlsenEroder::new(&map, p).unwrap().with_sweep(sweep)), 100)
    };
    let (h_in, h_col) = (h_opt(Sweep::InPlace), h_opt(Sweep::Coloured));
    vec![
        base_eps,
        e50_in,
        e500_in,
        e50_col,
        e500_col,
        eps(&t_ref),
        eps(&t_in),
        eps(&t_col),
        100.0 * diff(&t_ref, &t_in),
        100.0 * diff(&t_ref, &t_col),
        eps(&h_ref),
        eps(&h_in),
        eps(&h_col),
        100.0 * diff(&h_ref, &h_in),
        100.0 * diff(&h_ref, &h_col),
    ]
}

const COLUMNS: [&str; 15] = [
    "base ε",
    "erosion 50 in-place",
    "erosion 500 in-place",
    "erosion 50 coloured",
    "erosion 500 coloured",
    "thermal ref 50",
    "thermal opt 50 in-place",
    "thermal opt 50 coloured",
    "thermal Δ% in-place",
    "thermal Δ% coloured",
    "hydraulic ref 100",
    "hydraulic opt 100 in-place",
    "hydraulic opt 100 coloured",
    "hydraulic Δ% in-place",
    "hydraulic Δ% coloured",
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let n: usize = value("--size").map(|s| s.parse().expect("--size: a number of cells")).unwrap_or(512);
    let seeds: Vec<u64> = value("--seeds")
        .unwrap_or_else(|| "1,2,3,4,5".into())
        .split(',')
        .map(|s| s.trim().parse().expect("--seeds: comma-separated integers"))
        .collect();
    let boundary = if args.iter().any(|a| a == "--wrap") { Boundary::Wrap } else { Boundary::Closed };
    BOUNDARY.set(boundary).expect("set once");
    println!("N = {n}, seeds {seeds:?}, edges {boundary:?}\n");
    println!("| seed | {} |", COLUMNS.join(" | "));
    println!("|---|{}", "---|".repeat(COLUMNS.len()));
    let mut sum = vec![0.0; COLUMNS.len()];
    for &seed in &seeds {
        let row = experiment(n, seed);
        for (s, v) in sum.iter_mut().zip(&row) {
            *s += v;
        }
        let cells: Vec<String> = row.iter().map(|v| format!("{v:.3}")).collect();
        println!("| {seed} | {} |", cells.join(" | "));
    }
    let cells: Vec<String> = sum.iter().map(|v| format!("**{:.3}**", v / seeds.len() as f64)).collect();
    println!("| mean | {} |", cells.join(" | "));
}
