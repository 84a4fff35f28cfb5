//! Reference values: improved Perlin (3D) against Ken Perlin's reference implementation, its
//! 2D gradient set and the absence of zero lattice edges, and
//! perlin-table against a literal transcription of the tutorial's C function (seed 002).

use terrasynth_noise::perlin::REFERENCE_PERMUTATION;
use terrasynth_noise::rng::SplitMix64;
use terrasynth_noise::{NoiseFn, NoiseSpec};

fn build(text: &str) -> terrasynth_noise::Noise {
    NoiseSpec::from_inline_toml(text).unwrap().build().unwrap()
}

#[test]
#[allow(clippy::approx_constant)] // 3.14 is the reference input, not π
fn improved_perlin_matches_reference_implementation_in_f64() {
    let n = build(r#"kind = "perlin", seed = "reference", frequency = 1.0"#);
    assert_eq!(n.get3(3.14, 42.0, 7.0).unwrap(), 0.13691995878400012);
    assert_eq!(n.get3(0.5, 0.5, 0.5).unwrap(), -0.25);
    assert_eq!(n.get3(1.5, 2.5, 3.5).unwrap(), 0.125);
    // Further values of a direct f64 port (research/algorithms.md §7a).
    assert_eq!(n.get3(0.1, 0.2, 0.3).unwrap(), 0.35122924878110723);
    assert_eq!(n.get3(-0.5, -1.25, 2.75).unwrap(), -0.2264237403869629);
    assert_eq!(n.get3(123.456, 78.9, 0.123).unwrap(), -0.19135972397959355);
    assert_eq!(n.get3(0.25, 0.75, 0.0).unwrap(), -0.07763671875);
    assert_eq!(n.get3(17.0, -4.0, 9.0).unwrap(), 0.0);
}

/// 2D `perlin` transcribed independently: 16 unit gradients at `(k + ½)·22.5°` (libm cos and
/// sin), index `perm[perm[X] + Y] & 15`, quintic fade, bilinear interpolation.
fn improved2_transcribed(x: f64, y: f64) -> f64 {
    let p = |i: usize| usize::from(REFERENCE_PERMUTATION[i & 255]);
    let grad = |i: i64, j: i64, dx: f64, dy: f64| {
        let k = p(p((i & 255) as usize) + (j & 255) as usize) & 15;
        let a = (k as f64 + 0.5) * std::f64::consts::TAU / 16.0;
        a.cos() * dx + a.sin() * dy
    };
    let fade = |t: f64| t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
    let (i, j) = (x.floor() as i64, y.floor() as i64);
    let (fx, fy) = (x - x.floor(), y - y.floor());
    let (u, v) = (fade(fx), fade(fy));
    let n0 = grad(i, j, fx, fy) * (1.0 - u) + grad(i + 1, j, fx - 1.0, fy) * u;
    let n1 = grad(i, j + 1, fx, fy - 1.0) * (1.0 - u) + grad(i + 1, j + 1, fx - 1.0, fy - 1.0) * u;
    n0 * (1.0 - v) + n1 * v
}

#[test]
fn improved_perlin_2d_uses_16_gradients_uniform_on_the_circle() {
    let n = build(r#"kind = "perlin", seed = "reference", frequency = 1.0"#);
    let mut rng = SplitMix64::new(7);
    for _ in 0..2000 {
        let (x, y) = (rng.range_f64(-300.0, 300.0), rng.range_f64(-300.0, 300.0));
        let (got, want) = (n.get2(x, y), improved2_transcribed(x, y));
        assert!((got - want).abs() < 1e-12, "({x}, {y}): {got} vs {want}");
    }
    // At lattice points every gradient noise is 0; the 3D kind is unchanged (see above).
    assert_eq!(n.get2(3.0, -5.0), 0.0);
}

/// The largest |noise| on 15 points inside the lattice edge from `(i, j)` to `(i + 1, j)`
/// (`horizontal`) or to `(i, j + 1)`.
fn edge_max(f: impl Fn(f64, f64) -> f64, i: i64, j: i64, horizontal: bool) -> f64 {
    (1..16)
        .map(|s| {
            let t = s as f64 / 16.0;
            let (x, y) = if horizontal { (i as f64 + t, j as f64) } else { (i as f64, j as f64 + t) };
            f(x, y).abs()
        })
        .fold(0.0, f64::max)
}

/// The crease bug: on the z = 0 slice of the 3D noise, edges whose two end gradients are both
/// perpendicular to them are exactly 0. The 2D noise has no such edge, for the reference
/// permutation and seeded ones; the detector does find them on the slice.
#[test]
fn improved_perlin_2d_has_no_identically_zero_lattice_edge() {
    let reference = build(r#"kind = "perlin", seed = "reference", frequency = 1.0"#);
    let mut slice_zero_edges = 0;
    for i in 0..128 {
        for j in 0..128 {
            for horizontal in [true, false] {
                let slice = |x: f64, y: f64| reference.get3(x, y, 0.0).unwrap();
                if edge_max(slice, i, j, horizontal) == 0.0 {
                    slice_zero_edges += 1;
                }
            }
        }
    }
    assert!(slice_zero_edges > 1000, "{slice_zero_edges}");
    for spec in [r#"seed = "reference""#, "seed = 1", "seed = 99"] {
        let n = build(&format!(r#"kind = "perlin", frequency = 1.0, {spec}"#));
        let mut weakest: f64 = f64::INFINITY;
        for i in -128..128 {
            for j in -128..128 {
                for horizontal in [true, false] {
                    weakest = weakest.min(edge_max(|x, y| n.get2(x, y), i, j, horizontal));
                }
            }
        }
        // Each gradient has |gx|, |gy| ≥ sin 11.25°, so every edge reaches well above 0.
        assert!(weakest > 0.02, "{spec}: {weakest}");
    }
}

/// The tutorial's `Get2DPerlinNoiseValue` (seed 002), transcribed line by line, with `float`
/// replaced by `F` and the 256-entry `perm` read through the doubled table the tutorial
/// describes (its C listing indexes past 255 otherwise).
macro_rules! tutorial_fn {
    ($name:ident, $f:ty) => {
        #[allow(clippy::all)]
        fn $name(mut x: $f, mut y: $f, res: $f) -> $f {
            let temp_x: $f;
            let temp_y: $f;
            let (x0, y0, ii, jj, gi0, gi1, gi2, gi3): (i32, i32, i32, i32, usize, usize, usize, usize);
            let unit: $f = 1.0 / (2.0 as $f).sqrt();
            let (tmp, s, t, u, v, cx, cy, li1, li2): ($f, $f, $f, $f, $f, $f, $f, $f, $f);
            let gradient2: [[$f; 2]; 8] = [
                [unit, unit],
                [-unit, unit],
                [unit, -unit],
                [-unit, -unit],
                [1.0, 0.0],
                [-1.0, 0.0],
                [0.0, 1.0],
                [0.0, -1.0],
            ];
            let mut perm = [0usize; 512];
            for i in 0..512 {
                perm[i] = REFERENCE_PERMUTATION[i & 255] as usize;
            }

            // Adapter pour la résolution
            x /= res;
            y /= res;

            // On récupère les positions de la grille associée à (x,y)
            x0 = x as i32;
            y0 = y as i32;

            // Masquage
            ii = x0 & 255;
            jj = y0 & 255;
            let (ii, jj) = (ii as usize, jj as usize);

            // Pour récupérer les vecteurs
            gi0 = perm[ii + perm[jj]] % 8;
            gi1 = perm[ii + 1 + perm[jj]] % 8;
            gi2 = perm[ii + perm[jj + 1]] % 8;
            gi3 = perm[ii + 1 + perm[jj + 1]] % 8;

            // on récupère les vecteurs et on pondère
            let mut temp_x2 = x - x0 as $f;
            let mut temp_y2 = y - y0 as $f;
            s = gradient2[gi0][0] * temp_x2 + gradient2[gi0][1] * temp_y2;

            temp_x2 = x - (x0 + 1) as $f;
            temp_y2 = y - y0 as $f;
            t = gradient2[gi1][0] * temp_x2 + gradient2[gi1][1] * temp_y2;

            temp_x2 = x - x0 as $f;
            temp_y2 = y - (y0 + 1) as $f;
            u = gradient2[gi2][0] * temp_x2 + gradient2[gi2][1] * temp_y2;

            temp_x = x - (x0 + 1) as $f;
            temp_y = y - (y0 + 1) as $f;
            v = gradient2[gi3][0] * temp_x + gradient2[gi3][1] * temp_y;

            // Lissage
            tmp = x - x0 as $f;
            cx = 3.0 * tmp * tmp - 2.0 * tmp * tmp * tmp;

            li1 = s + cx * (t - s);
            li2 = u + cx * (v - u);

            let tmp = y - y0 as $f;
            cy = 3.0 * tmp * tmp - 2.0 * tmp * tmp * tmp;

            li1 + cy * (li2 - li1)
        }
    };
}

tutorial_fn!(tutorial_f64, f64);
tutorial_fn!(tutorial_f32, f32);

#[test]
fn perlin_table_equals_the_tutorial_function_exactly() {
    let mut rng = SplitMix64::new(2013);
    for res in [1.0, 10.0, 100.0, 500.0, 0.37] {
        let n = build(&format!(r#"kind = "perlin-table", seed = "reference", res = {res:?}"#));
        for _ in 0..2000 {
            let (x, y) = (rng.range_f64(0.0, 400.0), rng.range_f64(0.0, 400.0));
            assert_eq!(n.get2(x, y), tutorial_f64(x, y, res), "at ({x}, {y}), res {res}");
        }
        // Pixel centres of the tutorial's 400×400 picture.
        for py in (0..400).step_by(7) {
            for px in (0..400).step_by(7) {
                let (x, y) = (f64::from(px), f64::from(py));
                assert_eq!(n.get2(x, y), tutorial_f64(x, y, res));
            }
        }
    }
}

#[test]
fn perlin_table_matches_the_tutorial_in_f32_to_f32_precision() {
    let n = build(r#"kind = "perlin-table", res = 100.0"#);
    let mut rng = SplitMix64::new(5);
    for _ in 0..2000 {
        let (x, y) = (rng.range_f64(0.0, 400.0) as f32, rng.range_f64(0.0, 400.0) as f32);
        let ours = n.get2(f64::from(x), f64::from(y));
        let theirs = f64::from(tutorial_f32(x, y, 100.0));
        assert!((ours - theirs).abs() < 1e-5, "at ({x}, {y}): {ours} vs {theirs}");
    }
}

#[test]
fn perlin_table_uses_floor_for_negative_coordinates() {
    let n = build(r#"kind = "perlin-table""#);
    // The lattice continues below 0: the value at -0.25 is the value 256 cells up (period 256),
    // which truncation would not give.
    for (x, y) in [(-0.25, 0.5), (-3.75, -1.5), (-100.125, 7.5)] {
        assert_eq!(n.get2(x, y), n.get2(x + 256.0, y));
        assert_eq!(n.get2(x, y), n.get2(x, y + 256.0 * 4.0));
    }
}
