//! `worley`: cellular noise (Worley 1996, "A cellular texture basis function").
//!
//! One feature point per lattice cell `(i, j)`: with `h = hash2(seed, i, j)`,
//! `u = (h & 0xFFFF)/65536`, `v = (h >> 16)/65536`, the point is
//! `(i + ½ + jitter·(u − ½), j + ½ + jitter·(v − ½))`. F1 and F2 are the smallest and second
//! smallest distances from the sample to the feature points. The search covers the cells within
//! ±2 of the sample's cell (±3 for Manhattan), which is exact for every jitter in [0, 1]: a cell
//! 3 (4) away is at least 2 (3) units away, more than the largest possible F2 (1.803 Euclidean,
//! 2.5 Manhattan, see [`worley_range`]).

use crate::hash::{cell, hash2};
use crate::spec::{WorleyDistance, WorleyReturn};

/// Cells searched on each side of the sample's cell for `distance`.
pub(crate) fn search_radius(distance: WorleyDistance) -> i64 {
    match distance {
        WorleyDistance::Euclidean | WorleyDistance::Squared => 2,
        WorleyDistance::Manhattan => 3,
    }
}

/// The offset of cell `(i, j)`'s feature point from the cell's corner, each in [0, 1).
#[inline]
pub(crate) fn feature_point(seed: u32, i: i64, j: i64, jitter: f64) -> [f64; 2] {
    let h = hash2(seed, i, j);
    let u = f64::from(h & 0xFFFF) * (1.0 / 65536.0);
    let v = f64::from(h >> 16) * (1.0 / 65536.0);
    [0.5 + jitter * (u - 0.5), 0.5 + jitter * (v - 0.5)]
}

/// `worley` at `(x, y)`: F1, F2 or F2 − F1 for the chosen metric.
pub(crate) fn worley2(
    seed: u32,
    x: f64,
    y: f64,
    jitter: f64,
    distance: WorleyDistance,
    ret: WorleyReturn,
) -> f64 {
    let (xf, yf) = (x.floor(), y.floor());
    let (i, j) = (cell(xf), cell(yf));
    let (fx, fy) = (x - xf, y - yf);
    let r = search_radius(distance);
    let (mut f1, mut f2) = (f64::INFINITY, f64::INFINITY);
    for dj in -r..=r {
        for di in -r..=r {
            let p = feature_point(seed, i + di, j + dj, jitter);
            let dx = di as f64 + p[0] - fx;
            let dy = dj as f64 + p[1] - fy;
            let d = match distance {
                WorleyDistance::Euclidean | WorleyDistance::Squared => dx * dx + dy * dy,
                WorleyDistance::Manhattan => dx.abs() + dy.abs(),
            };
            if d < f1 {
                f2 = f1;
                f1 = d;
            } else if d < f2 {
                f2 = d;
            }
        }
    }
    if distance == WorleyDistance::Euclidean {
        f1 = f1.sqrt();
        f2 = f2.sqrt();
    }
    match ret {
        WorleyReturn::F1 => f1,
        WorleyReturn::F2 => f2,
        WorleyReturn::F2MinusF1 => f2 - f1,
    }
}

/// Documented bounds of Worley output: F1 ≤ √2·(½ + jitter/2)·… simplified to the jitter-1
/// worst case: Euclidean F1 ≤ √2, F2 ≤ √(1.5² + 1) ≈ 1.8028; squared: the squares;
/// Manhattan F1 ≤ 2, F2 ≤ 2.5. All ≥ 0; F2 − F1 shares F2's bound.
pub(crate) fn worley_range(distance: WorleyDistance, ret: WorleyReturn) -> (f64, f64) {
    let (f1, f2) = match distance {
        WorleyDistance::Euclidean => (std::f64::consts::SQRT_2, 3.25f64.sqrt()),
        WorleyDistance::Squared => (2.0, 3.25),
        WorleyDistance::Manhattan => (2.0, 2.5),
    };
    match ret {
        WorleyReturn::F1 => (0.0, f1),
        WorleyReturn::F2 | WorleyReturn::F2MinusF1 => (0.0, f2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// F1, F2 by brute force over ±5 cells.
    fn brute(seed: u32, x: f64, y: f64, jitter: f64, distance: WorleyDistance) -> (f64, f64) {
        let (i, j) = (x.floor() as i64, y.floor() as i64);
        let mut d = Vec::new();
        for ci in i - 5..=i + 5 {
            for cj in j - 5..=j + 5 {
                let p = feature_point(seed, ci, cj, jitter);
                let (dx, dy) = (ci as f64 + p[0] - x, cj as f64 + p[1] - y);
                d.push(match distance {
                    WorleyDistance::Euclidean => (dx * dx + dy * dy).sqrt(),
                    WorleyDistance::Squared => dx * dx + dy * dy,
                    WorleyDistance::Manhattan => dx.abs() + dy.abs(),
                });
            }
        }
        d.sort_by(f64::total_cmp);
        (d[0], d[1])
    }

    #[test]
    fn the_search_window_finds_the_true_f1_and_f2() {
        let mut rng = SplitMix64::new(8);
        for distance in [WorleyDistance::Euclidean, WorleyDistance::Squared, WorleyDistance::Manhattan] {
            for jitter in [0.0, 0.5, 1.0] {
                for _ in 0..2000 {
                    let (x, y) = (rng.range_f64(-30.0, 30.0), rng.range_f64(-30.0, 30.0));
                    let (f1, f2) = brute(21, x, y, jitter, distance);
                    let (lo, hi) = worley_range(distance, WorleyReturn::F2);
                    assert!(f2 >= lo && f2 <= hi);
                    let got1 = worley2(21, x, y, jitter, distance, WorleyReturn::F1);
                    let got2 = worley2(21, x, y, jitter, distance, WorleyReturn::F2);
                    let got3 = worley2(21, x, y, jitter, distance, WorleyReturn::F2MinusF1);
                    assert!((got1 - f1).abs() < 1e-12 && (got2 - f2).abs() < 1e-12, "{distance:?} {jitter}");
                    assert!((got3 - (f2 - f1)).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn zero_jitter_is_a_regular_grid_of_cell_centres() {
        assert_eq!(worley2(3, 0.5, 0.5, 0.0, WorleyDistance::Euclidean, WorleyReturn::F1), 0.0);
        let f1 = worley2(3, 1.0, 1.0, 0.0, WorleyDistance::Euclidean, WorleyReturn::F1);
        assert!((f1 - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-15);
        assert_eq!(worley2(3, 1.0, 1.0, 0.0, WorleyDistance::Manhattan, WorleyReturn::F2MinusF1), 0.0);
    }
}
