//! Each fractal against a sum written out by hand at a few points, from the plain noise and the
//! published per-octave offsets.

use terrasynth_noise::{Noise, NoiseFn, NoiseSpec, octave_offset};

fn build(text: &str) -> Noise {
    NoiseSpec::from_inline_toml(text).unwrap().build().unwrap()
}

/// The plain noise samples n_i = base(q·λ^i + o_i) for octaves 0..3 at q.
fn octave_samples(base: &Noise, seed: u64, lac: f64, q: [f64; 2]) -> [f64; 3] {
    [0u32, 1, 2].map(|i| {
        let o = octave_offset(seed, i);
        let s = lac.powi(i as i32);
        base.get2(q[0] * s + o[0], q[1] * s + o[1])
    })
}

const POINTS: [[f64; 2]; 4] = [[0.3, 0.7], [12.25, -3.5], [-100.9, 55.1], [1e5 + 0.5, 7.0]];

#[test]
fn fbm_is_the_normalised_weighted_sum() {
    let base = build(r#"kind = "value", seed = 42"#);
    let f = build(
        r#"kind = "value", seed = 42, fractal = "fbm", octaves = 3, lacunarity = 1.7, persistence = 0.377"#,
    );
    for q in POINTS {
        let [n0, n1, n2] = octave_samples(&base, 42, 1.7, q);
        let expected = (n0 + 0.377 * n1 + 0.377 * 0.377 * n2) / (1.0 + 0.377 + 0.377 * 0.377);
        assert!((f.get2(q[0], q[1]) - expected).abs() < 1e-15, "at {q:?}");
    }
}

#[test]
fn billow_sums_folded_octaves() {
    let base = build(r#"kind = "perlin", seed = 9"#);
    let f = build(r#"kind = "perlin", seed = 9, fractal = "billow", octaves = 3"#);
    for q in POINTS {
        let [n0, n1, n2] = octave_samples(&base, 9, 2.0, q);
        let fold = |n: f64| 2.0 * n.abs() - 1.0;
        let expected = (fold(n0) + 0.5 * fold(n1) + 0.25 * fold(n2)) / 1.75;
        assert!((f.get2(q[0], q[1]) - expected).abs() < 1e-15, "at {q:?}");
    }
}

#[test]
fn ridged_follows_musgrave() {
    // H = 1, offset = 1, gain = 2 (defaults), λ = 2: weights 1, 1/2, 1/4.
    let base = build(r#"kind = "opensimplex2", seed = 3"#);
    let f = build(r#"kind = "opensimplex2", seed = 3, fractal = "ridged", octaves = 3"#);
    for q in POINTS {
        let [n0, n1, n2] = octave_samples(&base, 3, 2.0, q);
        let s0 = (1.0 - n0.abs()).powi(2);
        let w1 = (s0 * 2.0).clamp(0.0, 1.0);
        let s1 = (1.0 - n1.abs()).powi(2) * w1;
        let w2 = (s1 * 2.0).clamp(0.0, 1.0);
        let s2 = (1.0 - n2.abs()).powi(2) * w2;
        let r = s0 + s1 * 0.5 + s2 * 0.25;
        // Normalised by max(offset², (M − offset)²)·Σw with M = 1: 1·1.75.
        assert!((f.get2(q[0], q[1]) - r / 1.75).abs() < 1e-15, "at {q:?}");
    }
}

#[test]
fn hybrid_follows_musgrave() {
    // H = 0.25, offset = 0.7 (defaults), λ = 2: weights 2^(−0.25 i).
    let base = build(r#"kind = "perlin-angle", seed = 5"#);
    let f = build(r#"kind = "perlin-angle", seed = 5, fractal = "hybrid", octaves = 3"#);
    let w = [1.0, 2f64.powf(-0.25), 4f64.powf(-0.25)];
    let m = std::f64::consts::FRAC_1_SQRT_2; // perlin-angle bound
    for q in POINTS {
        let [n0, n1, n2] = octave_samples(&base, 5, 2.0, q);
        let mut r = (n0 + 0.7) * w[0];
        let mut weight = r;
        for (n, wi) in [(n1, w[1]), (n2, w[2])] {
            weight = weight.min(1.0);
            let signal = (n + 0.7) * wi;
            r += weight * signal;
            weight *= signal;
        }
        let norm = (m + 0.7) * (w[0] + w[1] + w[2]);
        assert!((f.get2(q[0], q[1]) - r / norm).abs() < 1e-15, "at {q:?}");
    }
}

#[test]
fn warp_is_quilez_f_of_p_plus_k_q() {
    let plain = build(r#"kind = "perlin", seed = 11, fractal = "fbm", octaves = 4"#);
    let warped = build(
        r#"kind = "perlin", seed = 11, fractal = "fbm", octaves = 4, warp = 4.0, warp-frequency = 0.5"#,
    );
    for q in POINTS {
        let p = [q[0] * 0.5, q[1] * 0.5];
        let wx = plain.get2(p[0], p[1]);
        let wy = plain.get2(p[0] + 5.25, p[1] + 1.375);
        let expected = plain.get2(q[0] + 4.0 * wx, q[1] + 4.0 * wy);
        assert_eq!(warped.get2(q[0], q[1]), expected, "at {q:?}");
    }
}

#[test]
fn frequency_and_offset_map_to_the_lattice() {
    let base = build(r#"kind = "worley", seed = 1"#);
    let f = build(r#"kind = "worley", seed = 1, frequency = 0.25, offset = [3.5, -2.0]"#);
    for q in POINTS {
        assert_eq!(f.get2(q[0], q[1]), base.get2(q[0] * 0.25 + 3.5, q[1] * 0.25 - 2.0));
    }
}

#[test]
fn octave_offsets_are_seeded_quantised_and_distinct() {
    let a = octave_offset(42, 0);
    assert_eq!(a, octave_offset(42, 0));
    assert_ne!(a, octave_offset(42, 1));
    assert_ne!(a, octave_offset(43, 0));
    for i in 0..32 {
        for v in octave_offset(7, i) {
            assert!((-256.0..256.0).contains(&v));
            assert_eq!((v * 1024.0).fract(), 0.0);
        }
    }
}
