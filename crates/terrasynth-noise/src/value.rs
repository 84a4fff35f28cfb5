//! White and value noise (seeds 003, 004 §4–§5).

use crate::hash::{cell, hash2, to_signed_unit, wrap};
use crate::perlin::smoothstep;

/// `white`: one uniform value in [−1, 1) per lattice cell, `hash2(seed, ⌊x⌋, ⌊y⌋)·2^-31 − 1`
/// (seed 004 §4's "regular" noise, signed). Sampling at spacing ≥ 1 gives independent values.
pub(crate) fn white2(seed: u32, x: f64, y: f64, period: Option<u32>) -> f64 {
    let i = wrap(cell(x.floor()), period);
    let j = wrap(cell(y.floor()), period);
    to_signed_unit(hash2(seed, i, j))
}

/// `value`: uniform random values in [−1, 1) at lattice points, bilinear interpolation with
/// smoothstep weights `3t² − 2t³` of the fractional parts (seed 004 §5): along x, then y.
/// Range [−1, 1).
pub(crate) fn value2(seed: u32, x: f64, y: f64, period: Option<u32>) -> f64 {
    let (xf, yf) = (x.floor(), y.floor());
    let (xi, yi) = (cell(xf), cell(yf));
    let (x0, x1, y0, y1) = (wrap(xi, period), wrap(xi + 1, period), wrap(yi, period), wrap(yi + 1, period));
    let v = |i: i64, j: i64| to_signed_unit(hash2(seed, i, j));
    let sx = smoothstep(x - xf);
    let sy = smoothstep(y - yf);
    let a = v(x0, y0) + sx * (v(x1, y0) - v(x0, y0));
    let b = v(x0, y1) + sx * (v(x1, y1) - v(x0, y1));
    a + sy * (b - a)
}
